/*
 * bench_memory.c — where the bytes of loaded TPC-H tables go.
 *
 *   bench_memory (--data DIR | --sf SF) [--threads N] [--columns]
 *
 * Fills the eight tables, from DIR/<name>.tbl with the loader or straight
 * from the generator, keeps them all, and prints per table what its data
 * needs (values, validity, long-string bytes) against what its chunks hold
 * (regions, heap blocks), and after each table the process's resident
 * memory split into anonymous and file-backed pages (/proc/self/status).
 * --columns adds one line per column. At the end the tables are freed and
 * the resident memory is printed again, to see what stays behind. Link it
 * with the allocator to be measured (LD_PRELOAD=libjemalloc.so.2 for the
 * allocator of the rackdb program).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "storage/footprint.h"
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

/* kB figures of /proc/self/status: resident anonymous, file, peak. */
static void resident(long *anon, long *file, long *peak)
{
    *anon = *file = *peak = 0;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return;
    char line[256];
    while (fgets(line, sizeof(line), f)) {
        sscanf(line, "RssAnon: %ld", anon);
        sscanf(line, "RssFile: %ld", file);
        sscanf(line, "VmHWM: %ld", peak);
    }
    fclose(f);
}

static double mb(uint64_t bytes)
{
    return (double)bytes / 1e6;
}

static void print_row(const char *name, const sto_footprint *f)
{
    printf("%-16s %10llu %9.1f %8.1f %9.1f %9.1f | %9.1f %9.1f\n", name,
           (unsigned long long)f->rows, mb(f->value_bytes), mb(f->validity_bytes),
           mb(f->string_bytes), mb(sto_footprint_needed(f)), mb(f->region_bytes),
           mb(f->heap_bytes));
}

int main(int argc, char **argv)
{
    const char *dir = NULL;
    double sf = 0;
    int threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    bool columns = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--data") && i + 1 < argc)
            dir = argv[++i];
        else if (!strcmp(argv[i], "--sf") && i + 1 < argc)
            sf = atof(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--columns"))
            columns = true;
        else {
            fprintf(stderr, "usage: %s (--data DIR | --sf SF) [--threads N] [--columns]\n",
                    argv[0]);
            return 2;
        }
    }
    if ((!dir) == (sf <= 0)) {
        fprintf(stderr, "%s: give --data DIR or --sf SF\n", argv[0]);
        return 2;
    }
    if (threads < 1) threads = 1;
    sto_table *tables[TPCH_TABLE_COUNT] = {0};
    sto_status st = STO_OK;
    for (int i = 0; i < TPCH_TABLE_COUNT && !st; i++) {
        sto_schema *schema = NULL;
        st = tpch_table_schema((tpch_table_id)i, &schema);
        if (!st) st = sto_table_new(schema, &tables[i]);
        sto_schema_free(schema);
    }
    printf("%-16s %10s %9s %8s %9s %9s | %9s %9s   MB\n", "table", "rows", "values", "valid",
           "strings", "needed", "regions", "heaps");
    double t0 = now();
    if (!st && sf > 0) {
        tpch_gen *g = NULL;
        st = tpch_gen_create(sf, threads, &g);
        if (!st) st = tpch_gen_tables(g, (1u << TPCH_TABLE_COUNT) - 1, 1, 1, threads, tables);
        tpch_gen_free(g);
    }
    sto_footprint total = {0};
    for (int i = 0; i < TPCH_TABLE_COUNT && !st; i++) {
        const char *name = tpch_table_info_get((tpch_table_id)i)->name;
        if (dir) {
            char path[4096];
            snprintf(path, sizeof(path), "%s/%s.tbl", dir, name);
            sto_load_options opt = {sto_text_format_tbl(), threads, 0, NULL};
            st = sto_load_file(tables[i], path, &opt, NULL);
            if (st) break;
        }
        sto_footprint f;
        sto_table_footprint(tables[i], &f);
        print_row(name, &f);
        for (uint32_t c = 0; columns && c < tables[i]->schema->ncols; c++) {
            sto_footprint cf;
            sto_column_footprint(tables[i], c, &cf);
            char label[64];
            snprintf(label, sizeof(label), "  %s", tables[i]->schema->cols[c].name);
            print_row(label, &cf);
        }
        total.chunks += f.chunks;
        total.rows += f.rows;
        total.value_bytes += f.value_bytes;
        total.validity_bytes += f.validity_bytes;
        total.string_bytes += f.string_bytes;
        total.region_bytes += f.region_bytes;
        total.heap_bytes += f.heap_bytes;
        long anon, file, peak;
        resident(&anon, &file, &peak);
        printf("%-16s resident anon %.1f MB, file %.1f MB, peak %.1f MB\n", "", anon / 1e3,
               file / 1e3, peak / 1e3);
    }
    double dt = now() - t0;
    if (!st) {
        print_row("total", &total);
        long anon, file, peak;
        resident(&anon, &file, &peak);
        printf("%.2f s; needed %.1f MB, held %.1f MB; resident anon %.1f MB (%.1f%% over "
               "needed), file %.1f MB, peak %.1f MB\n",
               dt, mb(sto_footprint_needed(&total)), mb(sto_footprint_held(&total)), anon / 1e3,
               100.0 * ((double)anon * 1e3 / (double)sto_footprint_needed(&total) - 1), file / 1e3,
               peak / 1e3);
    }
    for (int i = 0; i < TPCH_TABLE_COUNT; i++)
        sto_table_free(tables[i]);
    if (st) {
        fprintf(stderr, "ERROR %s: %s\n", st->sqlstate, st->message);
        sto_status_free(st);
        return 1;
    }
    long anon, file, peak;
    resident(&anon, &file, &peak);
    printf("after freeing the tables: resident anon %.1f MB, file %.1f MB\n", anon / 1e3,
           file / 1e3);
    return 0;
}
