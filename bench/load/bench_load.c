/*
 * bench_load.c — how fast storage/loader.c turns dbgen .tbl files into tables.
 *
 *   bench_load DIR [THREADS] [REPEAT]
 *
 * Loads each of the eight TPC-H tables found in DIR (DIR/<name>.tbl) into a
 * fresh table with THREADS parser threads (default: all cores), REPEAT times
 * (default 3), and prints per table the best time, rows/s and MB/s of input,
 * then the total. The schemas are TPC-H's (shared/tpch/schema.sql).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "storage/loader.h"
#include "storage/table.h"

/* "name TYPE[(n[,m])], ..." column lists (", " separates columns), NOT NULL
 * unless marked '?'. */
static const struct {
    const char *name;
    const char *cols;
} tpch_tables[] = {
    {"nation", "n_nationkey INTEGER, n_name CHAR(25), n_regionkey INTEGER, "
               "n_comment VARCHAR(152)?"},
    {"region", "r_regionkey INTEGER, r_name CHAR(25), r_comment VARCHAR(152)?"},
    {"part", "p_partkey INTEGER, p_name VARCHAR(55), p_mfgr CHAR(25), p_brand CHAR(10), "
             "p_type VARCHAR(25), p_size INTEGER, p_container CHAR(10), "
             "p_retailprice DECIMAL(15,2), p_comment VARCHAR(23)"},
    {"supplier", "s_suppkey INTEGER, s_name CHAR(25), s_address VARCHAR(40), "
                 "s_nationkey INTEGER, s_phone CHAR(15), s_acctbal DECIMAL(15,2), "
                 "s_comment VARCHAR(101)"},
    {"partsupp", "ps_partkey INTEGER, ps_suppkey INTEGER, ps_availqty INTEGER, "
                 "ps_supplycost DECIMAL(15,2), ps_comment VARCHAR(199)"},
    {"customer", "c_custkey INTEGER, c_name VARCHAR(25), c_address VARCHAR(40), "
                 "c_nationkey INTEGER, c_phone CHAR(15), c_acctbal DECIMAL(15,2), "
                 "c_mktsegment CHAR(10), c_comment VARCHAR(117)"},
    {"orders", "o_orderkey INTEGER, o_custkey INTEGER, o_orderstatus CHAR(1), "
               "o_totalprice DECIMAL(15,2), o_orderdate DATE, o_orderpriority CHAR(15), "
               "o_clerk CHAR(15), o_shippriority INTEGER, o_comment VARCHAR(79)"},
    {"lineitem", "l_orderkey INTEGER, l_partkey INTEGER, l_suppkey INTEGER, "
                 "l_linenumber INTEGER, l_quantity DECIMAL(15,2), "
                 "l_extendedprice DECIMAL(15,2), l_discount DECIMAL(15,2), "
                 "l_tax DECIMAL(15,2), l_returnflag CHAR(1), l_linestatus CHAR(1), "
                 "l_shipdate DATE, l_commitdate DATE, l_receiptdate DATE, "
                 "l_shipinstruct CHAR(25), l_shipmode CHAR(10), l_comment VARCHAR(44)"},
};

/* Builds a schema from a column list as above. */
static sto_status parse_cols(const char *spec, sto_schema **out)
{
    char buf[1024], *names[32];
    sto_type types[32];
    bool nn[32];
    uint32_t n = 0;
    snprintf(buf, sizeof(buf), "%s", spec);
    for (char *tok = buf, *next; tok && n < 32; tok = next) {
        next = strstr(tok, ", ");
        if (next) {
            *next = '\0';
            next += 2;
        }
        char *sp = strchr(tok, ' ');
        if (!sp) return sto_error(STO_SYNTAX_ERROR, "bad column spec \"%s\"", tok);
        *sp = '\0';
        char *ty = sp + 1;
        names[n] = tok;
        nn[n] = strchr(ty, '?') == NULL;
        int a = 0, b = 0;
        if (strncmp(ty, "INTEGER", 7) == 0)
            types[n] = sto_type_make(STO_TYPE_INTEGER);
        else if (strncmp(ty, "DATE", 4) == 0)
            types[n] = sto_type_make(STO_TYPE_DATE);
        else if (sscanf(ty, "DECIMAL(%d", &a) == 1)
            types[n] = sto_type_decimal(a, 2);
        else if (sscanf(ty, "CHAR(%d", &a) == 1)
            types[n] = sto_type_string(STO_TYPE_CHAR, (uint32_t)a);
        else if (sscanf(ty, "VARCHAR(%d", &b) == 1)
            types[n] = sto_type_string(STO_TYPE_VARCHAR, (uint32_t)b);
        else
            return sto_error(STO_SYNTAX_ERROR, "bad column spec \"%s\"", ty);
        n++;
    }
    return sto_schema_new(n, (const char *const *)names, types, nn, out);
}

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
    for (size_t i = 0; i < sizeof(tpch_tables) / sizeof(tpch_tables[0]); i++) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s.tbl", argv[1], tpch_tables[i].name);
        struct stat sb;
        if (stat(path, &sb) != 0) continue;
        sto_schema *schema;
        sto_status st = parse_cols(tpch_tables[i].cols, &schema);
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
            fprintf(stderr, "%s: ERROR %s: %s\n", tpch_tables[i].name, st->sqlstate, st->message);
            sto_status_free(st);
            return 1;
        }
        double mb = (double)sb.st_size / 1e6;
        printf("%-10s %10llu %9.4f %12.0f %9.1f\n", tpch_tables[i].name, (unsigned long long)rows,
               best, (double)rows / best, mb / best);
        total_s += best;
        total_mb += mb;
        total_rows += rows;
    }
    if (total_s > 0)
        printf("%-10s %10llu %9.4f %12.0f %9.1f\n", "total", (unsigned long long)total_rows,
               total_s, (double)total_rows / total_s, total_mb / total_s);
    return 0;
}
