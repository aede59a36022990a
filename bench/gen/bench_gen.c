/*
 * bench_gen.c — how fast the TPC-H generator makes each table, as .tbl
 * files and straight into memory.
 *
 *   bench_gen [--sf SF] [--threads N[,N...]] [--out DIR] [--mode files|memory|both]
 *             [--buffered]
 *
 * Builds the generator once (the 300 MiB text pool, timed on its own), then
 * for each thread count: each table alone and all eight together, into DIR
 * (default: a temporary directory, files removed afterwards) and/or into
 * in-memory tables. Rows/s count the table's rows; MB/s count the bytes of
 * its .tbl text in both modes, so the two are comparable (memory-only runs
 * measure those bytes by formatting the rows once, untimed). The load
 * average is printed before and after: on a shared machine it says how far
 * to trust the figures. Prints a table for people and one JSON line per
 * thread count for scripts. Files are written as `rackdb tpch gen` writes
 * them (past the page cache where the file system allows, tpch/file_writer.h);
 * --buffered writes them through the page cache, for comparison.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
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

/* CPU seconds of all threads: on a busy machine wall time says little, the
 * CPU a run took still says how much work it was. */
static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* System seconds and page faults of the process so far: the memory path's
 * kernel share is the pages it gets fresh (zeroed and mapped), the file
 * path's the write() copies. Faults count every 4 KiB page the kernel
 * backs, populated ahead (MADV_POPULATE_WRITE) or faulted on touch. */
static void sys_now(double *sys, long *faults)
{
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    *sys = (double)r.ru_stime.tv_sec + (double)r.ru_stime.tv_usec * 1e-6;
    *faults = r.ru_minflt + r.ru_majflt;
}

static void print_load(const char *when)
{
    double l[3] = {0, 0, 0};
    if (getloadavg(l, 3) == 3) printf("load average %s: %.2f %.2f %.2f\n", when, l[0], l[1], l[2]);
}

static int fail(sto_status st)
{
    fprintf(stderr, "bench_gen: %s\n", st->message);
    sto_status_free(st);
    return 1;
}

/* .tbl bytes and rows of every table, counted by formatting (untimed). */
typedef struct count_sink {
    tpch_sink base;
    int64_t rows[TPCH_TABLE_COUNT], bytes[TPCH_TABLE_COUNT];
    char line[TPCH_TBL_ROW_MAX];
} count_sink;

static sto_status count_row(tpch_sink *self, tpch_table_id t, const tpch_value *v)
{
    count_sink *s = (count_sink *)self;
    s->rows[t]++;
    s->bytes[t] += (int64_t)tpch_tbl_format_row(t, v, s->line);
    return NULL;
}

static sto_status count_tables(const tpch_gen *g, count_sink *c)
{
    memset(c, 0, sizeof(*c));
    c->base.row = count_row;
    for (int u = 0; u < TPCH_TABLE_COUNT; u++) {
        unsigned mask = 0;
        for (int t = 0; t < TPCH_TABLE_COUNT; t++)
            if ((int)tpch_table_info_get((tpch_table_id)t)->unit_table == u) mask |= TPCH_BIT(t);
        if (mask) STO_TRY(tpch_gen_rows(g, mask, 0, tpch_gen_units(g, (tpch_table_id)u), &c->base));
    }
    return NULL;
}

static sto_status file_stats(const char *dir, tpch_table_id t, int64_t *rows, int64_t *bytes)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/%s.tbl", dir, tpch_table_info_get(t)->name);
    FILE *f = fopen(path, "r");
    if (!f) return sto_error(STO_IO_ERROR, "cannot read %s", path);
    static char buf[1 << 16];
    size_t n;
    *rows = *bytes = 0;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
        *bytes += (int64_t)n;
        for (size_t i = 0; i < n; i++)
            *rows += buf[i] == '\n';
    }
    fclose(f);
    return NULL;
}

static void remove_tables(const char *dir)
{
    for (int t = 0; t < TPCH_TABLE_COUNT; t++) {
        char path[4200];
        snprintf(path, sizeof(path), "%s/%s.tbl", dir, tpch_table_info_get((tpch_table_id)t)->name);
        unlink(path);
    }
}

typedef struct result {
    double s, cpu, sys;
    long faults;
    int64_t rows, bytes;
} result;

/* Starts timing a run; finish() fills in what it took. */
static void start(result *r)
{
    r->s = now();
    r->cpu = cpu_now();
    sys_now(&r->sys, &r->faults);
}

static void finish(result *r)
{
    double sys;
    long faults;
    sys_now(&sys, &faults);
    r->s = now() - r->s;
    r->cpu = cpu_now() - r->cpu;
    r->sys = sys - r->sys;
    r->faults = faults - r->faults;
}

/* One run of `tables` into memory, timed into *r; rows in *rows. */
static sto_status run_memory(const tpch_gen *g, unsigned tables, int threads, result *r,
                             int64_t rows[TPCH_TABLE_COUNT])
{
    sto_table *tab[TPCH_TABLE_COUNT] = {0};
    sto_status st = NULL;
    for (int t = 0; t < TPCH_TABLE_COUNT && !st; t++) {
        if (!(tables & TPCH_BIT(t))) continue;
        sto_schema *s;
        st = tpch_table_schema((tpch_table_id)t, &s);
        if (st) break;
        st = sto_table_new(s, &tab[t]);
        sto_schema_free(s);
    }
    if (!st) {
        start(r);
        st = tpch_gen_tables(g, tables, 1, 1, threads, tab);
        finish(r);
    }
    for (int t = 0; t < TPCH_TABLE_COUNT; t++) {
        if (tab[t]) rows[t] = (int64_t)sto_table_rows(tab[t]);
        sto_table_free(tab[t]);
    }
    return st;
}

static void print_row(const char *name, const result *r)
{
    printf("  %-10s %10lld %9.1f %8.3f %8.3f %7.3f %8ld %12.0f %9.1f\n", name, (long long)r->rows,
           r->bytes / 1e6, r->s, r->cpu, r->sys, r->faults, r->rows / r->s, r->bytes / 1e6 / r->s);
}

static int append_json(char *json, size_t size, int jn, const char *mode, const result *res,
                       const result *all)
{
    jn += snprintf(json + jn, size - (size_t)jn, ",\"%s\":{", mode);
    for (int t = 0; t <= TPCH_TABLE_COUNT; t++) {
        const result *r = t < TPCH_TABLE_COUNT ? &res[t] : all;
        const char *name =
            t < TPCH_TABLE_COUNT ? tpch_table_info_get((tpch_table_id)t)->name : "all";
        jn += snprintf(json + jn, size - (size_t)jn,
                       "%s\"%s\":{\"rows\":%lld,\"bytes\":%lld,\"s\":%.4f,\"cpu_s\":%.4f,"
                       "\"sys_s\":%.4f,\"faults\":%ld}",
                       t ? "," : "", name, (long long)r->rows, (long long)r->bytes, r->s, r->cpu,
                       r->sys, r->faults);
    }
    jn += snprintf(json + jn, size - (size_t)jn, "}");
    return jn;
}

static const char header[] =
    "  table            rows        MB   wall s    cpu s   sys s   faults       rows/s      MB/s\n";

int main(int argc, char **argv)
{
    double sf = 1;
    int thread_list[16], nthreads = 0;
    const char *out = NULL, *mode = "both";
    bool buffered = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--sf") == 0 && i + 1 < argc) {
            sf = atof(argv[++i]);
        } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            for (char *p = argv[++i]; *p && nthreads < 16;) {
                thread_list[nthreads++] = (int)strtol(p, &p, 10);
                if (*p == ',')
                    p++;
                else if (*p)
                    break;
            }
        } else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
            out = argv[++i];
        } else if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc) {
            mode = argv[++i];
        } else if (strcmp(argv[i], "--buffered") == 0) {
            buffered = true;
        } else {
            fprintf(stderr, "usage: bench_gen [--sf SF] [--threads N[,N...]] [--out DIR] "
                            "[--mode files|memory|both] [--buffered]\n");
            return 2;
        }
    }
    bool files = strcmp(mode, "memory") != 0, memory = strcmp(mode, "files") != 0;
    int max_threads = 1;
    if (nthreads == 0) thread_list[nthreads++] = (int)sysconf(_SC_NPROCESSORS_ONLN);
    for (int i = 0; i < nthreads; i++) {
        if (thread_list[i] < 1) thread_list[i] = 1;
        if (thread_list[i] > max_threads) max_threads = thread_list[i];
    }
    char tmp[] = "/tmp/bench_gen.XXXXXX";
    if (files && !out) {
        if (!mkdtemp(tmp)) {
            perror("mkdtemp");
            return 1;
        }
        out = tmp;
    }

    print_load("at start");
    double t0 = now(), c0 = cpu_now();
    tpch_gen *g;
    sto_status st = tpch_gen_create(sf, max_threads, &g);
    if (st) return fail(st);
    double pool_s = now() - t0, pool_cpu = cpu_now() - c0;
    printf("TPC-H generator, SF %g%s%s%s\n", sf, files ? ", files into " : "", files ? out : "",
           files && buffered ? " (through the page cache)" : "");
    printf("text pool (300 MiB, %d threads): %.3f s wall, %.3f s cpu\n", max_threads, pool_s,
           pool_cpu);

    /* .tbl bytes per table, for MB/s of memory-only runs */
    count_sink *counts = NULL;
    if (!files) {
        counts = malloc(sizeof(*counts));
        if (!counts) return fail(sto_error_oom());
        if ((st = count_tables(g, counts))) return fail(st);
    }

    for (int ti = 0; ti < nthreads; ti++) {
        int threads = thread_list[ti];
        char json[8192];
        int jn = snprintf(json, sizeof(json), "{\"sf\":%g,\"threads\":%d,\"pool_s\":%.3f", sf,
                          threads, pool_s);
        result fres[TPCH_TABLE_COUNT] = {{0}}, fall = {0};
        if (files) {
            printf("\nfiles, %d thread%s\n%s", threads, threads > 1 ? "s" : "", header);
            for (int t = 0; t < TPCH_TABLE_COUNT; t++) {
                tpch_files_options opt = {out, TPCH_BIT(t), 1, 1, threads, false, buffered, NULL};
                start(&fres[t]);
                if ((st = tpch_gen_files(g, &opt))) return fail(st);
                finish(&fres[t]);
                if ((st = file_stats(out, (tpch_table_id)t, &fres[t].rows, &fres[t].bytes)))
                    return fail(st);
                remove_tables(out);
                print_row(tpch_table_info_get((tpch_table_id)t)->name, &fres[t]);
                fall.rows += fres[t].rows;
                fall.bytes += fres[t].bytes;
            }
            tpch_writer_stats ws;
            tpch_files_options opt = {out, TPCH_ALL_TABLES, 1, 1, threads, false, buffered, &ws};
            start(&fall);
            if ((st = tpch_gen_files(g, &opt))) return fail(st);
            finish(&fall);
            remove_tables(out);
            print_row("all", &fall);
            printf("  all: %.1f MB past the page cache, %.1f MB through it, %.3f s waiting for "
                   "the disk\n",
                   (double)ws.direct_bytes / 1e6, (double)ws.buffered_bytes / 1e6, ws.disk_wait_s);
            jn = append_json(json, sizeof(json), jn, "files", fres, &fall);
        }
        if (memory) {
            result mres[TPCH_TABLE_COUNT] = {{0}}, mall = {0};
            printf("\nmemory, %d thread%s\n%s", threads, threads > 1 ? "s" : "", header);
            for (int t = 0; t < TPCH_TABLE_COUNT; t++) {
                int64_t rows[TPCH_TABLE_COUNT] = {0};
                if ((st = run_memory(g, TPCH_BIT(t), threads, &mres[t], rows))) return fail(st);
                mres[t].rows = rows[t];
                mres[t].bytes = files ? fres[t].bytes : counts->bytes[t];
                print_row(tpch_table_info_get((tpch_table_id)t)->name, &mres[t]);
                mall.rows += mres[t].rows;
                mall.bytes += mres[t].bytes;
            }
            int64_t rows[TPCH_TABLE_COUNT];
            if ((st = run_memory(g, TPCH_ALL_TABLES, threads, &mall, rows))) return fail(st);
            print_row("all", &mall);
            jn = append_json(json, sizeof(json), jn, "memory", mres, &mall);
        }
        double l[3] = {0, 0, 0};
        getloadavg(l, 3);
        snprintf(json + jn, sizeof(json) - (size_t)jn, ",\"load1\":%.2f}", l[0]);
        printf("%s\n", json);
    }
    print_load("at end");
    free(counts);
    tpch_gen_free(g);
    if (out == tmp) rmdir(tmp);
    return 0;
}
