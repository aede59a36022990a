/*
 * bench_load.c — how fast storage/loader.c turns dbgen .tbl files into tables.
 *
 *   bench_load DIR [THREADS] [REPEAT]
 *
 * Loads each of the eight TPC-H tables found in DIR (DIR/<name>.tbl) into a
 * fresh table with THREADS parser threads (default: all cores), REPEAT times
 * (default 3), and prints per table the best time, rows/s and MB/s of input,
 * then the total. The schemas are the generator's (tpch/gen_table.h), so
 * the benchmark loads exactly the tables `CALL dbgen` creates.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "storage/loader.h"
#include "storage/table.h"
#include "tpch/gen.h"
#include "tpch/gen_table.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s DIR [THREADS] [REPEAT]\n", argv[0]);
        return 2;
    }
    int threads = argc > 2 ? atoi(argv[2]) : (int)sysconf(_SC_NPROCESSORS_ONLN);
    int repeat = argc > 3 ? atoi(argv[3]) : 3;
    if (threads < 1) threads = 1;
    if (repeat < 1) repeat = 1;
    sto_load_options opt = {sto_text_format_tbl(), threads, 0};
    double total_s = 0, total_mb = 0;
    uint64_t total_rows = 0;
    printf("%-10s %10s %9s %12s %9s   (%d threads, best of %d)\n", "table", "rows", "seconds",
           "rows/s", "MB/s", threads, repeat);
    for (int i = 0; i < TPCH_TABLE_COUNT; i++) {
        const char *name = tpch_table_info_get((tpch_table_id)i)->name;
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s.tbl", argv[1], name);
        struct stat sb;
        if (stat(path, &sb) != 0) continue;
        sto_schema *schema;
        sto_status st = tpch_table_schema((tpch_table_id)i, &schema);
        double best = 1e30;
        uint64_t rows = 0;
        for (int r = 0; r < repeat && !st; r++) {
            sto_table *t;
            st = sto_table_new(schema, &t);
            if (st) break;
            double t0 = now();
            st = sto_load_file(t, path, &opt, &rows);
            double dt = now() - t0;
            if (dt < best) best = dt;
            sto_table_free(t);
        }
        sto_schema_free(schema);
        if (st) {
            fprintf(stderr, "%s: ERROR %s: %s\n", name, st->sqlstate, st->message);
            sto_status_free(st);
            return 1;
        }
        double mb = (double)sb.st_size / 1e6;
        printf("%-10s %10llu %9.4f %12.0f %9.1f\n", name, (unsigned long long)rows, best,
               (double)rows / best, mb / best);
        total_s += best;
        total_mb += mb;
        total_rows += rows;
    }
    if (total_s > 0)
        printf("%-10s %10llu %9.4f %12.0f %9.1f\n", "total", (unsigned long long)total_rows,
               total_s, (double)total_rows / total_s, total_mb / total_s);
    return 0;
}
