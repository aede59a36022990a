/*
 * exec_query.c — the statements that run a query: SELECT, EXPLAIN
 * [ANALYZE], CREATE TABLE AS and INSERT ... SELECT.
 *
 * Each binds its query against the catalog into a fresh arena, cuts the
 * plan into pipelines (engine/physical.h), runs them (engine/executor.h)
 * and does something with the rows: copies them into the result, prints
 * the plan, or appends them to a table. SELECT and EXPLAIN hold the
 * catalog's read lock from binding to the last row copied; CREATE TABLE AS
 * and INSERT hold the write lock throughout, so the rows they read cannot
 * change before they are written.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/executor.h"
#include "engine/instance.h"
#include "engine/optimize.h"
#include "engine/persist.h"
#include "sql/bind.h"

typedef struct query {
    sql_arena *arena;
    sql_plan *plan;
    eng_physical *ph;
    eng_mem *mem;
    eng_exec_env env;
    eng_query_stats stats;
    eng_rowset rows;
    eng_exec_strings *strings;
} query;

static void query_free(query *q)
{
    eng_rowset_free(&q->rows);
    eng_exec_strings_free(q->strings);
    eng_query_stats_free(&q->stats);
    eng_mem_destroy(q->mem);
    sql_arena_destroy(q->arena);
    memset(q, 0, sizeof(*q));
}

/* Binds ast and optimizes the plan (the catalog lock is held by the caller). */
static sto_status query_prepare(eng_stmt_ctx *ctx, const sql_query *ast, query *q)
{
    memset(q, 0, sizeof(*q));
    q->arena = sql_arena_create();
    if (!q->arena) return sto_error_oom();
    sql_catalog cat = eng_catalog_iface(ctx->session->db->catalog);
    STO_TRY(sql_bind_query(q->arena, &cat, ast, &q->plan));
    const eng_settings *set = &ctx->session->settings;
    eng_opt_settings os = eng_opt_settings_default();
    os.threads = set->threads > 0 ? set->threads : 1;
    switch (set->join_algorithm) {
    case ENG_JOIN_HASH:
        os.join_algorithm = ENG_JOIN_ALGO_HASH;
        break;
    case ENG_JOIN_RADIX:
        os.join_algorithm = ENG_JOIN_ALGO_RADIX;
        break;
    case ENG_JOIN_SORTMERGE:
        os.join_algorithm = ENG_JOIN_ALGO_SORTMERGE;
        break;
    default:
        os.join_algorithm = ENG_JOIN_ALGO_AUTO;
        break;
    }
    return eng_optimize(q->plan, &os);
}

static sto_status query_plan(query *q)
{
    return eng_physical_build(q->plan, &q->ph);
}

static sto_status query_run(eng_stmt_ctx *ctx, query *q, bool analyze)
{
    eng_exec_shared *shared = NULL;
    STO_TRY(eng_exec_shared_get(ctx->session->db, &shared));
    const eng_settings *set = &ctx->session->settings;
    STO_TRY(eng_mem_create("query", set->memory_limit, shared->mem, &q->mem));
    unsigned threads = set->threads > 0 ? (unsigned)set->threads : 1;
    unsigned pool = eng_sched_threads(shared->sched);
    if (threads > pool) threads = pool;
    q->env = (eng_exec_env){shared, threads, q->mem, &ctx->session->cancel, analyze};
    q->env.serial_compile = !set->jit_compile_ahead;
    q->env.jit_cache = set->jit_cache;
    return eng_exec_physical(&q->env, q->ph, &q->stats, &q->rows, &q->strings);
}

/* A result shaped like the plan's output. Column names may repeat in a
 * query ("sum", "sum") but not in a schema, so the schema is made with
 * placeholder names that are then replaced. */
static sto_status new_result(const sql_plan *plan, eng_result **out)
{
    uint32_t n = plan->ncols;
    const char **names = calloc(n ? n : 1, sizeof(*names));
    char(*tmp)[16] = calloc(n ? n : 1, sizeof(*tmp));
    sto_type *types = calloc(n ? n : 1, sizeof(*types));
    sto_schema *schema = NULL;
    sto_status st = (!names || !tmp || !types) ? sto_error_oom() : STO_OK;
    for (uint32_t i = 0; !st && i < n; i++) {
        snprintf(tmp[i], sizeof(tmp[i]), "c%u", i + 1);
        names[i] = tmp[i];
        types[i] = sql_plan_col(plan->ctx, plan->cols[i])->type;
    }
    if (!st) st = sto_schema_new(n, names, types, NULL, &schema);
    if (!st) st = eng_result_new_rows(schema, out);
    if (!st) {
        sto_schema *rs = (sto_schema *)eng_result_schema(*out);
        for (uint32_t i = 0; i < n && !st; i++) {
            char *name = strdup(plan->names[i] ? plan->names[i] : "?column?");
            if (!name) {
                st = sto_error_oom();
                break;
            }
            free(rs->cols[i].name);
            rs->cols[i].name = name;
        }
        if (st) {
            rackdb_result_free(*out);
            *out = NULL;
        }
    }
    sto_schema_free(schema);
    free(names);
    free(tmp);
    free(types);
    return st;
}

sto_status eng_plan_result(const sql_plan *plan, const eng_physical *ph, const eng_rowset *rows,
                           double compile_ms, atomic_int *cancel, eng_result **out)
{
    *out = NULL;
    sto_status st = new_result(plan, out);
    if (!st) st = eng_rowset_to_result(rows, plan->ncols, ph->result_slots, *out, cancel);
    if (!st) eng_result_set_compile_ms(*out, compile_ms);
    if (st && *out) {
        rackdb_result_free(*out);
        *out = NULL;
    }
    return st;
}

static sto_status run_select(eng_stmt_ctx *ctx, const sql_query *ast, eng_result **out)
{
    eng_catalog *c = ctx->session->db->catalog;
    eng_catalog_read_lock(c);
    query q;
    sto_status st = query_prepare(ctx, ast, &q);
    if (!st) st = query_plan(&q);
    if (!st) st = query_run(ctx, &q, false);
    if (!st)
        st = eng_plan_result(q.plan, q.ph, &q.rows, q.stats.compile_ms, &ctx->session->cancel, out);
    query_free(&q);
    eng_catalog_unlock(c);
    return st;
}

/* --- EXPLAIN ------------------------------------------------------------------------ */

static sto_status run_explain(eng_stmt_ctx *ctx, const sql_stmt *stmt, eng_result **out)
{
    const sql_stmt *inner = stmt->explain.stmt;
    if (inner->kind != SQL_STMT_SELECT)
        return sto_error_at(STO_FEATURE_NOT_SUPPORTED, inner->pos, "EXPLAIN of %s is not supported",
                            sql_stmt_kind_name(inner->kind));
    eng_catalog *c = ctx->session->db->catalog;
    eng_catalog_read_lock(c);
    query q;
    char *text = NULL;
    sto_schema *schema = NULL;
    sto_status st = query_prepare(ctx, inner->query, &q);
    if (!st) st = query_plan(&q);
    if (!st && stmt->explain.analyze) st = query_run(ctx, &q, true);
    if (!st) st = eng_explain_text(q.ph, stmt->explain.analyze ? &q.stats : NULL, &text);
    const char *name = "QUERY PLAN";
    sto_type vt = sto_type_string(STO_TYPE_VARCHAR, 0);
    if (!st) st = sto_schema_new(1, &name, &vt, NULL, &schema);
    if (!st) st = eng_result_new_rows(schema, out);
    for (char *line = text; !st && line && *line;) {
        char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        sto_value v;
        memset(&v, 0, sizeof(v));
        v.v.str = sto_str_make(line, (uint32_t)len);
        st = eng_result_append_row(*out, &v);
        line = nl ? nl + 1 : line + len;
    }
    if (!st) st = eng_result_set_tag(*out, "EXPLAIN");
    if (!st) eng_result_set_compile_ms(*out, q.stats.compile_ms);
    if (st && *out) {
        rackdb_result_free(*out);
        *out = NULL;
    }
    free(text);
    sto_schema_free(schema);
    query_free(&q);
    eng_catalog_unlock(c);
    return st;
}

/* --- writing rows into tables ---------------------------------------------------------- */

/* Appends the query's rows to t: table column i gets result column map[i]
 * (-1: NULL). All rows or none. */
static sto_status append_rows(eng_stmt_ctx *ctx, query *q, sto_table *t, const int *map,
                              uint64_t *count)
{
    const sto_schema *s = sto_table_schema(t);
    sto_value *vals = calloc(s->ncols ? s->ncols : 1, sizeof(*vals));
    sto_appender *app = NULL;
    sto_status st = vals ? sto_appender_new(t, &app) : sto_error_oom();
    uint32_t ncols = q->plan->ncols;
    for (uint64_t r = 0; !st && r < q->rows.rows; r++) {
        const uint8_t *row = q->rows.data + r * q->rows.row_bytes;
        for (uint32_t i = 0; i < s->ncols; i++) {
            if (map[i] < 0) {
                memset(&vals[i], 0, sizeof(vals[i]));
                vals[i].is_null = true;
            } else {
                vals[i] = eng_row_value(row, ncols, q->ph->result_slots[map[i]], s->cols[i].type);
            }
        }
        st = sto_appender_row(app, vals);
        if (!st && (r & 4095) == 0 && eng_session_canceled(ctx->session)) st = eng_canceled_error();
    }
    if (!st) st = sto_appender_commit(app);
    if (!st) *count = q->rows.rows;
    sto_appender_free(app);
    free(vals);
    return st;
}

static bool numeric(sto_type_id t)
{
    return t == STO_TYPE_INTEGER || t == STO_TYPE_BIGINT || t == STO_TYPE_DECIMAL ||
           t == STO_TYPE_DOUBLE;
}

static bool stringy(sto_type_id t)
{
    return t == STO_TYPE_CHAR || t == STO_TYPE_VARCHAR;
}

/* True when output column id is a bare NULL in the plan's last projection:
 * an untyped NULL (SELECT NULL), which PostgreSQL lets take the target
 * column's type, so that NOT NULL fires (23502) instead of a type error. */
static bool output_is_null(const sql_plan *plan, sql_colid id)
{
    const sql_lop *root = plan->root;
    if (!root || root->kind != SQL_LOP_PROJECT) return false;
    for (uint32_t i = 0; i < root->project.count; i++) {
        const sql_bexpr *e = root->project.items[i].expr;
        if (root->project.items[i].id == id)
            return e && e->kind == SQL_BEXPR_CONST && e->value.is_null;
    }
    return false;
}

/* Puts a projection on top of the plan that casts output column k to the
 * type of the table column it goes to (strings keep their type: the
 * appender checks their length). */
static sto_status cast_outputs(query *q, const sto_schema *s, const int *map, int pos)
{
    sql_plan *plan = q->plan;
    sql_plan_ctx *ctx = plan->ctx;
    sql_lop *proj = sql_lop_new(ctx, SQL_LOP_PROJECT, plan->root, NULL, plan->ncols);
    sql_proj_item *items = sql_arena_alloc(ctx->arena, (plan->ncols + 1) * sizeof(*items));
    sql_colid *cols = sql_arena_alloc(ctx->arena, (plan->ncols + 1) * sizeof(*cols));
    if (!proj || !items || !cols) return sto_error_oom();
    for (uint32_t k = 0; k < plan->ncols; k++) {
        sql_colid id = plan->cols[k];
        const sql_col_info *info = sql_plan_col(ctx, id);
        sto_type from = info->type, to = from;
        const char *colname = "?";
        for (uint32_t i = 0; i < s->ncols; i++)
            if (map[i] == (int)k) {
                to = s->cols[i].type;
                colname = s->cols[i].name;
            }
        sql_bexpr *e = sql_bexpr_column(ctx, id, 0);
        if (!e) return sto_error_oom();
        bool same = from.id == to.id && (from.id != STO_TYPE_DECIMAL || from.scale == to.scale);
        if (!same && output_is_null(plan, id)) {
            e = sql_bexpr_null(ctx, to, 0);
            id = sql_plan_new_col(ctx, to, true, info->name);
            if (!e || !id) return sto_error_oom();
        } else if (!same && !(stringy(from.id) && stringy(to.id))) {
            bool ok = numeric(from.id) && numeric(to.id);
            if (!ok)
                return sto_error_at(STO_DATATYPE_MISMATCH, pos,
                                    "column \"%s\" is of type %s but expression is of type %s",
                                    colname, sql_type_pg_name(to), sql_type_pg_name(from));
            sql_bexpr *c = sql_bexpr_new(ctx, SQL_BEXPR_CAST, to, info->nullable, 0);
            if (!c) return sto_error_oom();
            c->cast.arg = e;
            e = c;
            id = sql_plan_new_col(ctx, to, info->nullable, info->name);
            if (!id) return sto_error_oom();
        }
        items[k] = (sql_proj_item){e, id};
        cols[k] = id;
        proj->out[k] = id;
    }
    proj->project.count = plan->ncols;
    proj->project.items = items;
    plan->root = proj;
    plan->cols = cols;
    return STO_OK;
}

static sto_status persist_and_tag(eng_stmt_ctx *ctx, sto_table *t, uint64_t before, uint64_t count,
                                  eng_result **out)
{
    eng_catalog *c = ctx->session->db->catalog;
    sto_status st = eng_persist_tables(ctx->session->db->dir, c, NULL, 0, NULL, NULL);
    if (st) {
        sto_table_truncate(t, before);
        return st;
    }
    return eng_result_new_tag(out, "INSERT 0 %" PRIu64, count);
}

static sto_status run_insert(eng_stmt_ctx *ctx, const sql_stmt *stmt, eng_result **out)
{
    eng_catalog *c = ctx->session->db->catalog;
    eng_catalog_write_lock(c);
    query q;
    memset(&q, 0, sizeof(q));
    int *map = NULL;
    sto_status st = STO_OK;
    sto_table *t = eng_catalog_table(c, stmt->insert.table);
    if (!t) {
        st = eng_catalog_view(c, stmt->insert.table)
                 ? sto_error_at(STO_WRONG_OBJECT_TYPE, stmt->insert.table_pos,
                                "cannot insert into view \"%s\"", stmt->insert.table)
                 : sto_error_at(STO_UNDEFINED_TABLE, stmt->insert.table_pos,
                                "relation \"%s\" does not exist", stmt->insert.table);
        goto out;
    }
    const sto_schema *s = sto_table_schema(t);
    st = query_prepare(ctx, stmt->insert.query, &q);
    if (st) goto out;
    map = malloc((s->ncols ? s->ncols : 1) * sizeof(*map));
    if (!map) {
        st = sto_error_oom();
        goto out;
    }
    const sql_ident_list *cols = &stmt->insert.columns;
    uint32_t width = q.plan->ncols;
    for (uint32_t i = 0; i < s->ncols; i++)
        map[i] = cols->count ? -1 : (i < width ? (int)i : -1);
    for (int k = 0; k < cols->count; k++) {
        int i = sto_schema_find(s, cols->items[k]->name);
        if (i < 0) {
            st = sto_error_at(STO_UNDEFINED_COLUMN, cols->items[k]->pos,
                              "column \"%s\" of relation \"%s\" does not exist",
                              cols->items[k]->name, stmt->insert.table);
            goto out;
        }
        if (map[i] >= 0) {
            st = sto_error_at(STO_DUPLICATE_COLUMN, cols->items[k]->pos,
                              "column \"%s\" specified more than once", cols->items[k]->name);
            goto out;
        }
        map[i] = k;
    }
    uint32_t targets = cols->count ? (uint32_t)cols->count : s->ncols;
    if (width != targets) {
        st = sto_error_at(STO_SYNTAX_ERROR, stmt->pos,
                          width > targets ? "INSERT has more expressions than target columns"
                                          : "INSERT has more target columns than expressions");
        goto out;
    }
    st = cast_outputs(&q, s, map, stmt->pos);
    if (!st) st = query_plan(&q);
    if (!st) st = query_run(ctx, &q, false);
    uint64_t before = sto_table_rows(t), count = 0;
    if (!st) st = append_rows(ctx, &q, t, map, &count);
    if (!st) st = persist_and_tag(ctx, t, before, count, out);
    if (!st) eng_result_set_compile_ms(*out, q.stats.compile_ms);
out:
    free(map);
    query_free(&q);
    eng_catalog_unlock(c);
    return st;
}

/* A new table holding the query's rows, its columns named and typed as
 * the query's output (all nullable). */
static sto_status rows_to_new_table(eng_stmt_ctx *ctx, query *q, sto_table **out)
{
    *out = NULL;
    uint32_t n = q->plan->ncols;
    const char **names = calloc(n ? n : 1, sizeof(*names));
    sto_type *types = calloc(n ? n : 1, sizeof(*types));
    int *map = calloc(n ? n : 1, sizeof(*map));
    sto_schema *schema = NULL;
    sto_table *t = NULL;
    sto_status st = (!names || !types || !map) ? sto_error_oom() : STO_OK;
    for (uint32_t i = 0; !st && i < n; i++) {
        names[i] = q->plan->names[i];
        types[i] = sql_plan_col(q->plan->ctx, q->plan->cols[i])->type;
        map[i] = (int)i;
    }
    if (!st) st = sto_schema_new(n, names, types, NULL, &schema);
    if (!st) st = sto_table_new(schema, &t);
    uint64_t count = 0;
    if (!st) st = append_rows(ctx, q, t, map, &count);
    if (st)
        sto_table_free(t);
    else
        *out = t;
    sto_schema_free(schema);
    free(names);
    free(types);
    free(map);
    return st;
}

sto_status eng_query_to_table(eng_stmt_ctx *ctx, const sql_query *ast, sto_table **out)
{
    *out = NULL;
    eng_catalog *c = ctx->session->db->catalog;
    eng_catalog_read_lock(c);
    query q;
    sto_status st = query_prepare(ctx, ast, &q);
    if (!st) st = query_plan(&q);
    if (!st) st = query_run(ctx, &q, false);
    if (!st) st = rows_to_new_table(ctx, &q, out);
    query_free(&q);
    eng_catalog_unlock(c);
    return st;
}

static sto_status run_ctas(eng_stmt_ctx *ctx, const sql_stmt *stmt, eng_result **out)
{
    eng_catalog *c = ctx->session->db->catalog;
    const char *name = stmt->create_table.name;
    int pos = stmt->create_table.name_pos;
    eng_catalog_write_lock(c);
    query q;
    memset(&q, 0, sizeof(q));
    sto_table *t = NULL;
    sto_status st = STO_OK;
    if (eng_catalog_table(c, name) || eng_catalog_view(c, name)) {
        if (stmt->create_table.if_not_exists)
            st = eng_result_new_tag(out, "CREATE TABLE AS");
        else
            st = sto_error_at(STO_DUPLICATE_TABLE, pos, "relation \"%s\" already exists", name);
        goto out;
    }
    st = query_prepare(ctx, stmt->create_table.query, &q);
    if (!st) st = query_plan(&q);
    if (!st) st = query_run(ctx, &q, false);
    if (!st) st = rows_to_new_table(ctx, &q, &t);
    uint64_t count = t ? sto_table_rows(t) : 0;
    if (!st) st = eng_persist_tables(ctx->session->db->dir, c, NULL, 1, &name, &t);
    if (!st) st = eng_catalog_create_table(c, name, t, false, pos, NULL);
    if (!st) {
        t = NULL;
        st = eng_result_new_tag(out, "SELECT %" PRIu64, count);
        if (!st) eng_result_set_compile_ms(*out, q.stats.compile_ms);
    }
out:
    sto_table_free(t);
    query_free(&q);
    eng_catalog_unlock(c);
    return st;
}

sto_status eng_exec_query(eng_stmt_ctx *ctx, const sql_stmt *stmt, eng_result **out)
{
    switch (stmt->kind) {
    case SQL_STMT_SELECT:
        return run_select(ctx, stmt->query, out);
    case SQL_STMT_EXPLAIN:
        return run_explain(ctx, stmt, out);
    case SQL_STMT_CREATE_TABLE:
    case SQL_STMT_CREATE_TABLE_AS:
        return run_ctas(ctx, stmt, out);
    case SQL_STMT_INSERT:
        return run_insert(ctx, stmt, out);
    default:
        return sto_error_at(STO_FEATURE_NOT_SUPPORTED, stmt->pos, "%s is not executable yet",
                            sql_stmt_kind_name(stmt->kind));
    }
}
