/*
 * opt_catalog.h — the TPC-H schema (tests/sql/bind_catalog.h) with row
 * counts and column statistics of scale factor 1, for optimizer tests: the
 * tables hold no data, but the optimizer sees what a loaded SF 1 database
 * would tell it (distinct counts and min/max as dbgen produces them).
 *
 * Header-only and static: each test program includes it once.
 */
#ifndef RACKDB_TESTS_ENGINE_OPT_CATALOG_H
#define RACKDB_TESTS_ENGINE_OPT_CATALOG_H

#include "sql/bind_catalog.h"
#include "storage/stats.h"

typedef struct ocat_col {
    const char *name;
    double ndv;
    bool minmax;
    int64_t min, max; /* scaled decimals, days for dates */
} ocat_col;

/* SF 1 facts; columns not listed have as many distinct values as rows. */
static const struct {
    const char *table;
    uint64_t rows;
    ocat_col cols[16];
} ocat_facts[] = {
    {"region", 5, {{"r_regionkey", 5, true, 0, 4}, {"r_name", 5, false, 0, 0}}},
    {"nation",
     25,
     {{"n_nationkey", 25, true, 0, 24},
      {"n_name", 25, false, 0, 0},
      {"n_regionkey", 5, true, 0, 4}}},
    {"supplier",
     10000,
     {{"s_suppkey", 10000, true, 1, 10000},
      {"s_nationkey", 25, true, 0, 24},
      {"s_acctbal", 9955, true, -99999, 999999}}},
    {"customer",
     150000,
     {{"c_custkey", 150000, true, 1, 150000},
      {"c_nationkey", 25, true, 0, 24},
      {"c_acctbal", 140187, true, -99999, 999999},
      {"c_mktsegment", 5, false, 0, 0}}},
    {"part",
     200000,
     {{"p_partkey", 200000, true, 1, 200000},
      {"p_mfgr", 5, false, 0, 0},
      {"p_brand", 25, false, 0, 0},
      {"p_type", 150, false, 0, 0},
      {"p_size", 50, true, 1, 50},
      {"p_container", 40, false, 0, 0},
      {"p_retailprice", 20899, true, 90000, 209898}}},
    {"partsupp",
     800000,
     {{"ps_partkey", 200000, true, 1, 200000},
      {"ps_suppkey", 10000, true, 1, 10000},
      {"ps_availqty", 9999, true, 1, 9999},
      {"ps_supplycost", 99865, true, 100, 100000}}},
    {"orders",
     1500000,
     {{"o_orderkey", 1500000, true, 1, 6000000},
      {"o_custkey", 99996, true, 1, 149999},
      {"o_orderstatus", 3, false, 0, 0},
      {"o_totalprice", 1464556, true, 81136, 55441999},
      {"o_orderdate", 2406, true, 8035, 10440},
      {"o_orderpriority", 5, false, 0, 0},
      {"o_clerk", 1000, false, 0, 0},
      {"o_shippriority", 1, true, 0, 0}}},
    {"lineitem",
     6001215,
     {{"l_orderkey", 1500000, true, 1, 6000000},
      {"l_partkey", 200000, true, 1, 200000},
      {"l_suppkey", 10000, true, 1, 10000},
      {"l_linenumber", 7, true, 1, 7},
      {"l_quantity", 50, true, 100, 5000},
      {"l_extendedprice", 933900, true, 90100, 10494950},
      {"l_discount", 11, true, 0, 10},
      {"l_tax", 9, true, 0, 8},
      {"l_returnflag", 3, false, 0, 0},
      {"l_linestatus", 2, false, 0, 0},
      {"l_shipdate", 2526, true, 8036, 10561},
      {"l_commitdate", 2466, true, 8065, 10530},
      {"l_receiptdate", 2554, true, 8038, 10591},
      {"l_shipinstruct", 4, false, 0, 0},
      {"l_shipmode", 7, false, 0, 0}}},
};

#define OCAT_NTABLES (sizeof(ocat_facts) / sizeof(ocat_facts[0]))

typedef struct opt_catalog {
    test_catalog base;
    sto_column_stats *stats[OCAT_NTABLES];
} opt_catalog;

static inline bool ocat_lookup_table(void *ctx, const char *name, sql_table_info *out)
{
    opt_catalog *c = ctx;
    if (!tcat_lookup_table(&c->base, name, out)) return false;
    for (size_t t = 0; t < OCAT_NTABLES; t++) {
        if (strcmp(ocat_facts[t].table, name) != 0) continue;
        out->rows = ocat_facts[t].rows;
        out->stats = c->stats[t];
    }
    return true;
}

static inline bool ocat_lookup_view(void *ctx, const char *name, sql_view_info *out)
{
    opt_catalog *c = ctx;
    return tcat_lookup_view(&c->base, name, out);
}

static inline sql_catalog ocat_iface(opt_catalog *c)
{
    sql_catalog cat = {c, ocat_lookup_table, ocat_lookup_view};
    return cat;
}

/* The text of TPC-H query file qNN.sql (malloc'd), or NULL (reported). */
static inline char *ocat_query_text(int q)
{
    return tcat_read_tpch(test_shared_dir(), "queries/q%02d.sql", q);
}

/* Parses the text of one TPC-H query (q15: CREATE VIEW; SELECT; DROP VIEW),
 * keeping c's views up to date, and binds its SELECT through iface (NULL:
 * ocat_iface(c); a test that attaches storage to the tables passes its own). */
static inline sto_status ocat_bind_text(opt_catalog *c, const sql_catalog *iface, sql_arena *a,
                                        const char *sql, sql_plan **plan)
{
    sql_stmt_list *l;
    sql_catalog own = ocat_iface(c);
    if (!iface) iface = &own;
    *plan = NULL;
    STO_TRY(sql_parse(a, sql, &l));
    for (int i = 0; i < l->count; i++) {
        const sql_stmt *s = l->items[i];
        if (s->kind == SQL_STMT_CREATE_VIEW) tcat_add_view(&c->base, s);
        if (s->kind == SQL_STMT_DROP_VIEW) tcat_drop_view(&c->base, s->drop.name);
        if (s->kind == SQL_STMT_SELECT) STO_TRY(sql_bind_query(a, iface, s->query, plan));
    }
    return STO_OK;
}

/* The schema of table `name` in the base catalog, or NULL. */
static inline const sto_schema *ocat_schema(opt_catalog *c, const char *name)
{
    for (int i = 0; i < c->base.ntables; i++)
        if (strcmp(c->base.table_names[i], name) == 0) return c->base.schemas[i];
    return NULL;
}

static inline bool ocat_init(opt_catalog *c)
{
    memset(c, 0, sizeof(*c));
    if (!tcat_init(&c->base)) return false;
    for (size_t t = 0; t < OCAT_NTABLES; t++) {
        const sto_schema *s = ocat_schema(c, ocat_facts[t].table);
        if (!s) return false;
        c->stats[t] = calloc(s->ncols, sizeof(sto_column_stats));
        if (!c->stats[t]) return false;
        for (uint32_t k = 0; k < s->ncols; k++) {
            sto_column_stats *st = &c->stats[t][k];
            st->rows = ocat_facts[t].rows;
            st->distinct = ocat_facts[t].rows;
            for (int f = 0; f < 16 && ocat_facts[t].cols[f].name; f++) {
                const ocat_col *fc = &ocat_facts[t].cols[f];
                if (strcmp(fc->name, s->cols[k].name) != 0) continue;
                st->distinct = (uint64_t)fc->ndv;
                st->has_minmax = fc->minmax;
                st->min.i = fc->min;
                st->max.i = fc->max;
            }
        }
    }
    return true;
}

static inline void ocat_free(opt_catalog *c)
{
    for (size_t t = 0; t < OCAT_NTABLES; t++)
        free(c->stats[t]);
    tcat_free(&c->base);
}

#endif
