/*
 * bench_gen.c — how fast the TPC-H generator makes each table.
 *
 *   bench_gen [--sf SF] [--threads N] [--out DIR] [--memory]
 *
 * Builds the generator once (the 300 MiB text pool, timed on its own), then
 * writes each table alone into DIR (default: a temporary directory, files
 * removed afterwards) and reports rows/s and MB/s; then all eight tables in
 * one run, which is what `rackdb tpch gen` does after the pool. With
 * --memory it also times generation into in-memory tables. Prints a table
 * for people and one JSON line for scripts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tpch/gen.h"
#include "tpch/gen_files.h"
#include "tpch/gen_table.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int64_t file_size(const char *dir, tpch_table_id t, int64_t *lines)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/%s.tbl", dir, tpch_table_info_get(t)->name);
    struct stat sb;
    if (stat(path, &sb) != 0) return -1;
    *lines = 0;
    FILE *f = fopen(path, "r");
    if (f) {
        char buf[1 << 16];
        size_t n;
        while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
            for (size_t i = 0; i < n; i++)
                *lines += buf[i] == '\n';
        fclose(f);
    }
    return (int64_t)sb.st_size;
}

static void remove_tables(const char *dir)
{
    for (int t = 0; t < TPCH_TABLE_COUNT; t++) {
        char path[4200];
        snprintf(path, sizeof(path), "%s/%s.tbl", dir, tpch_table_info_get((tpch_table_id)t)->name);
        unlink(path);
    }
}

static int fail(sto_status st)
{
    fprintf(stderr, "bench_gen: %s\n", st->message);
    sto_status_free(st);
    return 1;
}

int main(int argc, char **argv)
{
    double sf = 1;
    int threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    const char *out = NULL;
    bool memory = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--sf") == 0 && i + 1 < argc)
            sf = atof(argv[++i]);
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
            out = argv[++i];
        else if (strcmp(argv[i], "--memory") == 0)
            memory = true;
        else {
            fprintf(stderr, "usage: bench_gen [--sf SF] [--threads N] [--out DIR] [--memory]\n");
            return 2;
        }
    }
    char tmp[] = "/tmp/bench_gen.XXXXXX";
    if (!out) {
        if (!mkdtemp(tmp)) {
            perror("mkdtemp");
            return 1;
        }
        out = tmp;
    }

    double t0 = now();
    tpch_gen *g;
    sto_status st = tpch_gen_create(sf, threads, &g);
    if (st) return fail(st);
    double pool_s = now() - t0;
    printf("TPC-H generator, SF %g, %d threads, into %s\n", sf, threads, out);
    printf("text pool (300 MiB): %.3f s\n\n", pool_s);
    printf("%-10s %10s %10s %8s %12s %9s\n", "table", "rows", "MB", "s", "rows/s", "MB/s");

    char json[4096];
    int jn = snprintf(json, sizeof(json), "{\"sf\":%g,\"threads\":%d,\"pool_s\":%.3f,\"tables\":{",
                      sf, threads, pool_s);
    int64_t all_bytes = 0;
    for (int t = 0; t < TPCH_TABLE_COUNT; t++) {
        tpch_files_options opt = {out, TPCH_BIT(t), 1, 1, threads, false};
        double s0 = now();
        st = tpch_gen_files(g, &opt);
        if (st) return fail(st);
        double s = now() - s0;
        int64_t rows = 0, bytes = file_size(out, (tpch_table_id)t, &rows);
        all_bytes += bytes;
        const char *name = tpch_table_info_get((tpch_table_id)t)->name;
        printf("%-10s %10lld %10.1f %8.3f %12.0f %9.1f\n", name, (long long)rows, bytes / 1e6, s,
               rows / s, bytes / 1e6 / s);
        jn += snprintf(json + jn, sizeof(json) - (size_t)jn,
                       "%s\"%s\":{\"rows\":%lld,\"bytes\":%lld,\"s\":%.3f}", t ? "," : "", name,
                       (long long)rows, (long long)bytes, s);
        remove_tables(out);
    }

    tpch_files_options opt = {out, TPCH_ALL_TABLES, 1, 1, threads, false};
    double a0 = now();
    st = tpch_gen_files(g, &opt);
    if (st) return fail(st);
    double all_s = now() - a0;
    remove_tables(out);
    printf("\nall tables: %.3f s (%.1f MB/s); with the text pool: %.3f s\n", all_s,
           all_bytes / 1e6 / all_s, all_s + pool_s);
    jn += snprintf(json + jn, sizeof(json) - (size_t)jn, "},\"all_s\":%.3f,\"total_s\":%.3f", all_s,
                   all_s + pool_s);

    if (memory) {
        sto_table *tables[TPCH_TABLE_COUNT] = {0};
        for (int t = 0; t < TPCH_TABLE_COUNT; t++) {
            sto_schema *s;
            if ((st = tpch_table_schema((tpch_table_id)t, &s))) return fail(st);
            st = sto_table_new(s, &tables[t]);
            sto_schema_free(s);
            if (st) return fail(st);
        }
        double m0 = now();
        st = tpch_gen_tables(g, TPCH_ALL_TABLES, 1, 1, threads, tables);
        if (st) return fail(st);
        double mem_s = now() - m0;
        printf("all tables into memory: %.3f s\n", mem_s);
        jn += snprintf(json + jn, sizeof(json) - (size_t)jn, ",\"memory_s\":%.3f", mem_s);
        for (int t = 0; t < TPCH_TABLE_COUNT; t++)
            sto_table_free(tables[t]);
    }
    printf("%s}\n", json);
    tpch_gen_free(g);
    if (out == tmp) rmdir(tmp);
    return 0;
}
