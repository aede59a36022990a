/*
 * call_dbgen.c — CALL dbgen(sf = X): the TPC-H tables, generated in memory.
 *
 * The eight tables get the schema of dbgen's DDL (embedded, parsed by the
 * ordinary parser), are filled by the TPC-H generator with all of the
 * session's threads, persisted when the instance has a directory, and only
 * then replace any tables of the same names in the catalog.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/exec_stmt.h"
#include "engine/literal.h"
#include "engine/persist.h"
#include "sql/parse.h"
#include "tpch/gen.h"
#include "tpch/gen_table.h"

#define NTABLES 8

/* A whole-number argument of CALL dbgen (part, parts). */
static sto_status int_arg(const sql_option *a, int64_t max, int *out)
{
    eng_const c;
    sto_value v;
    STO_TRY(eng_const_eval(a->value, &c));
    STO_TRY(eng_const_assign(&c, sto_type_make(STO_TYPE_BIGINT), a->name, &v));
    if (v.is_null || v.v.i64 < 1 || v.v.i64 > max)
        return sto_error_at(STO_INVALID_PARAMETER_VALUE, a->value->pos,
                            "dbgen's %s must be between 1 and %lld", a->name, (long long)max);
    *out = (int)v.v.i64;
    return STO_OK;
}

/* The arguments of CALL dbgen(sf = X [, part = P, parts = N]) or CALL
 * dbgen(X): the scale factor and which of dbgen's -C N -S P parts to make
 * (1 of 1 = everything). */
static sto_status dbgen_args(const sql_stmt *stmt, double *sf, int *part, int *parts)
{
    const sql_option_list *args = &stmt->call.args;
    const sql_option *found = NULL;
    *part = *parts = 1;
    for (int i = 0; i < args->count; i++) {
        const sql_option *a = args->items[i];
        if (!a->name ? i == 0 : strcasecmp(a->name, "sf") == 0) {
            found = a;
        } else if (a->name && a->value &&
                   (strcasecmp(a->name, "part") == 0 || strcasecmp(a->name, "parts") == 0)) {
            STO_TRY(int_arg(a, 1 << 20, strcasecmp(a->name, "part") == 0 ? part : parts));
        } else {
            return sto_error_at(STO_UNDEFINED_FUNCTION, a->pos,
                                "dbgen has no argument \"%s\" (it takes sf, part, parts)",
                                a->name ? a->name : "?");
        }
    }
    if (!found || !found->value)
        return sto_error_at(STO_UNDEFINED_FUNCTION, stmt->pos,
                            "dbgen needs a scale factor: CALL dbgen(sf = 0.1)");
    if (*part > *parts)
        return sto_error_at(STO_INVALID_PARAMETER_VALUE, stmt->pos,
                            "dbgen's part %d is not one of its %d parts", *part, *parts);
    eng_const c;
    STO_TRY(eng_const_eval(found->value, &c));
    sto_value v;
    STO_TRY(eng_const_assign(&c, sto_type_make(STO_TYPE_DOUBLE), "sf", &v));
    *sf = v.v.f64;
    sto_status st = tpch_scale_check(*sf);
    if (st && !st->position) st->position = found->value->pos;
    return st;
}

/* Empty tables with the TPC-H schema, in schema.sql's order. */
static sto_status make_tables(const char *names[NTABLES], sto_table *tables[NTABLES],
                              sql_arena *arena)
{
    sql_stmt_list *stmts;
    STO_TRY(sql_parse(arena, eng_tpch_schema_sql, &stmts));
    if (stmts->count != NTABLES)
        return sto_error(STO_INTERNAL_ERROR, "embedded TPC-H schema has %d tables", stmts->count);
    for (int i = 0; i < NTABLES; i++) {
        const sql_stmt *s = stmts->items[i];
        sto_schema *schema;
        STO_TRY(
            eng_schema_from_defs(&s->create_table.columns, &s->create_table.primary_key, &schema));
        sto_status st = sto_table_new(schema, &tables[i]);
        sto_schema_free(schema);
        if (st) return st;
        names[i] = s->create_table.name;
    }
    return STO_OK;
}

/* Fills the tables with the generator's rows, all eight in one call so
 * the generator can spread every table over the threads. Of a split into
 * parts, every part gets nation and region whole (dbgen does not split
 * them): the catalog marks them replicated, so a cluster joins them where
 * they are and counts them once (docs/cluster.md). */
static sto_status generate(double sf, int part, int parts, int threads, const char *names[NTABLES],
                           sto_table *tables[NTABLES], const atomic_int *cancel)
{
    sto_table *targets[TPCH_TABLE_COUNT] = {0};
    for (int i = 0; i < NTABLES; i++) {
        tpch_table_id id;
        if (!tpch_table_by_name(names[i], &id))
            return sto_error(STO_INTERNAL_ERROR, "\"%s\" is not a TPC-H table", names[i]);
        targets[id] = tables[i];
    }
    tpch_gen *g;
    STO_TRY(tpch_gen_create(sf, threads, &g));
    sto_status st =
        tpch_gen_tables_cancelable(g, TPCH_ALL_TABLES, parts, part, threads, targets, cancel);
    tpch_gen_free(g);
    return st;
}

sto_status eng_call_dbgen(eng_stmt_ctx *ctx, const sql_stmt *stmt, eng_result **out)
{
    double sf = 0;
    int part, parts;
    STO_TRY(dbgen_args(stmt, &sf, &part, &parts));
    sql_arena *arena = sql_arena_create();
    if (!arena) return sto_error_oom();
    const char *names[NTABLES] = {0};
    sto_table *tables[NTABLES] = {0};
    sto_status st = make_tables(names, tables, arena);
    if (!st)
        st = generate(sf, part, parts, ctx->session->settings.threads, names, tables,
                      &ctx->session->cancel);
    if (!st && eng_session_canceled(ctx->session)) st = eng_canceled_error();
    if (!st) {
        eng_catalog *c = ctx->session->db->catalog;
        eng_catalog_write_lock(c);
        for (int i = 0; !st && i < NTABLES; i++)
            if (eng_catalog_view(c, names[i]))
                st = sto_error_at(STO_DUPLICATE_TABLE, stmt->pos,
                                  "relation \"%s\" already exists as a view", names[i]);
        if (!st)
            st = eng_persist_tables(ctx->session->db->dir, c, NULL, NTABLES, names,
                                    (sto_table *const *)tables);
        for (int i = 0; !st && i < NTABLES; i++) {
            st = eng_catalog_replace_table(c, names[i], tables[i], stmt->pos);
            if (!st) tables[i] = NULL;
            if (!st && parts > 1 && (!strcmp(names[i], "nation") || !strcmp(names[i], "region")))
                st = eng_catalog_set_replicated(c, names[i], true);
        }
        if (!st) st = eng_persist_placement(ctx->session->db->dir, c);
        eng_catalog_unlock(c);
    }
    for (int i = 0; i < NTABLES; i++)
        sto_table_free(tables[i]);
    sql_arena_destroy(arena);
    if (st) return st;
    return eng_result_new_tag(out, "CALL");
}
