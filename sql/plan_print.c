/*
 * plan_print.c — logical plans as indented text (tests, EXPLAIN).
 *
 * One operator per line, children indented two spaces below their parent.
 * Columns print as name#id; output lists add the type and a '?' when the
 * column may be NULL. A subquery expression prints as SUBPLAN n inside the
 * expression and its plan follows the operator line, labelled "subplan n:".
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql/plan.h"

static const char *const op_spellings[SQL_OP_COUNT] = {
#define SQL_OP_SPELL(id, spelling, arity) spelling,
    SQL_OP_LIST(SQL_OP_SPELL)
#undef SQL_OP_SPELL
};

typedef struct printer {
    const sql_plan_ctx *ctx;
    char *buf;
    size_t len, cap;
    bool oom;
    int next_subplan;
    /* Subplans met while printing the current operator line, printed after
     * it. */
    const sql_lop **pending;
    int *pending_no;
    int npending, cap_pending;
} printer;

static void put(printer *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(printer *p, const char *fmt, ...)
{
    if (p->oom) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        p->oom = true;
        return;
    }
    if (p->len + (size_t)n + 1 > p->cap) {
        size_t cap = p->cap ? p->cap : 1024;
        while (p->len + (size_t)n + 1 > cap)
            cap *= 2;
        char *b = realloc(p->buf, cap);
        if (!b) {
            p->oom = true;
            return;
        }
        p->buf = b;
        p->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(p->buf + p->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    p->len += (size_t)n;
}

static void put_type(printer *p, sto_type t)
{
    char buf[48];
    sto_type_format(t, buf, sizeof(buf));
    put(p, "%s", buf);
}

static void put_col(printer *p, sql_colid id)
{
    put(p, "%s#%" PRIu32, sql_plan_col(p->ctx, id)->name, id);
}

/* #id name:TYPE[?] */
static void put_col_decl(printer *p, sql_colid id)
{
    const sql_col_info *c = sql_plan_col(p->ctx, id);
    put(p, "%s#%" PRIu32 ":", c->name, id);
    put_type(p, c->type);
    if (c->nullable) put(p, "?");
}

static void put_value(printer *p, sto_type t, const sto_value *v)
{
    char buf[32];
    if (v->is_null) {
        put(p, "NULL::");
        put_type(p, t);
        return;
    }
    switch ((sto_type_id)t.id) {
    case STO_TYPE_BOOLEAN:
        put(p, "%s", v->v.i64 ? "true" : "false");
        break;
    case STO_TYPE_INTEGER:
    case STO_TYPE_BIGINT:
        put(p, "%" PRId64, v->v.i64);
        break;
    case STO_TYPE_DECIMAL:
        sto_decimal_format(v->v.i64, t.scale, buf);
        put(p, "%s", buf);
        break;
    case STO_TYPE_DOUBLE:
        /* The shortest text that reads back as the same double. */
        snprintf(buf, sizeof(buf), "%.15g", v->v.f64);
        if (strtod(buf, NULL) != v->v.f64) snprintf(buf, sizeof(buf), "%.17g", v->v.f64);
        put(p, "%s::DOUBLE", buf);
        break;
    case STO_TYPE_DATE:
        sto_date_format((int32_t)v->v.i64, buf);
        put(p, "DATE '%s'", buf);
        break;
    case STO_TYPE_CHAR:
    case STO_TYPE_VARCHAR:
        put(p, "'%.*s'", (int)v->v.str.len, sto_str_data(&v->v.str));
        break;
    default:
        put(p, "?");
    }
}

static void put_expr(printer *p, const sql_bexpr *e);

static void put_list(printer *p, const sql_bexpr_list *l)
{
    for (uint32_t i = 0; i < l->count; i++) {
        if (i) put(p, ", ");
        put_expr(p, l->items[i]);
    }
}

static int note_subplan(printer *p, const sql_lop *plan)
{
    int no = p->next_subplan++;
    if (p->npending == p->cap_pending) {
        int cap = p->cap_pending ? p->cap_pending * 2 : 8;
        const sql_lop **pend = realloc(p->pending, (size_t)cap * sizeof(*pend));
        if (pend) p->pending = pend;
        int *nos = realloc(p->pending_no, (size_t)cap * sizeof(*nos));
        if (nos) p->pending_no = nos;
        if (!pend || !nos) {
            p->oom = true;
            return no;
        }
        p->cap_pending = cap;
    }
    p->pending[p->npending] = plan;
    p->pending_no[p->npending] = no;
    p->npending++;
    return no;
}

static void put_expr(printer *p, const sql_bexpr *e)
{
    if (!e) {
        put(p, "<null>");
        return;
    }
    switch (e->kind) {
    case SQL_BEXPR_CONST:
        put_value(p, e->type, &e->value);
        break;
    case SQL_BEXPR_COLUMN:
        put_col(p, e->column);
        break;
    case SQL_BEXPR_PARAM:
        put(p, "$%d", e->param);
        break;
    case SQL_BEXPR_OP:
        if (!e->op.args[1]) {
            put(p, "(%s ", op_spellings[e->op.op]);
            put_expr(p, e->op.args[0]);
            put(p, ")");
        } else {
            put(p, "(");
            put_expr(p, e->op.args[0]);
            put(p, " %s ", op_spellings[e->op.op]);
            put_expr(p, e->op.args[1]);
            put(p, ")");
        }
        break;
    case SQL_BEXPR_FUNC:
        put(p, "%s(", sql_func_name(e->func.id));
        put_list(p, &e->func.args);
        put(p, ")");
        break;
    case SQL_BEXPR_CASE:
        put(p, "CASE");
        for (uint32_t i = 0; i < e->case_.conds.count; i++) {
            put(p, " WHEN ");
            put_expr(p, e->case_.conds.items[i]);
            put(p, " THEN ");
            put_expr(p, e->case_.results.items[i]);
        }
        put(p, " ELSE ");
        put_expr(p, e->case_.else_result);
        put(p, " END");
        break;
    case SQL_BEXPR_CAST:
        put(p, "CAST(");
        put_expr(p, e->cast.arg);
        put(p, " AS ");
        put_type(p, e->type);
        put(p, ")");
        break;
    case SQL_BEXPR_IN_LIST:
        put(p, "(");
        put_expr(p, e->in_list.arg);
        put(p, e->in_list.negated ? " NOT IN (" : " IN (");
        put_list(p, &e->in_list.list);
        put(p, "))");
        break;
    case SQL_BEXPR_IS_NULL:
        put(p, "(");
        put_expr(p, e->is_null.arg);
        put(p, e->is_null.negated ? " IS NOT NULL)" : " IS NULL)");
        break;
    case SQL_BEXPR_SUBQUERY: {
        int no = note_subplan(p, e->subquery.plan);
        switch (e->subquery.kind) {
        case SQL_SUBQ_SCALAR:
            put(p, "SUBPLAN %d(", no);
            put_col(p, e->subquery.col);
            put(p, ")");
            break;
        case SQL_SUBQ_EXISTS:
            put(p, "EXISTS(SUBPLAN %d)", no);
            break;
        case SQL_SUBQ_ANY:
        case SQL_SUBQ_ALL:
            put(p, "(");
            put_expr(p, e->subquery.left);
            put(p, " %s %s(SUBPLAN %d(", op_spellings[e->subquery.cmp],
                e->subquery.kind == SQL_SUBQ_ANY ? "ANY" : "ALL", no);
            put_col(p, e->subquery.col);
            put(p, ")))");
            break;
        }
        if (e->subquery.nouter) {
            put(p, "[outer ");
            for (uint32_t i = 0; i < e->subquery.nouter; i++) {
                if (i) put(p, ", ");
                put_col(p, e->subquery.outer[i]);
            }
            put(p, "]");
        }
        break;
    }
    case SQL_BEXPR_KIND_COUNT:
        break;
    }
}

static void put_out_list(printer *p, const sql_lop *op)
{
    for (uint32_t i = 0; i < op->nout; i++) {
        put(p, i ? ", " : " ");
        put_col_decl(p, op->out[i]);
    }
}

static void put_item(printer *p, const sql_proj_item *it)
{
    if (it->expr->kind == SQL_BEXPR_COLUMN && it->expr->column == it->id) {
        put_col_decl(p, it->id);
        return;
    }
    put_col_decl(p, it->id);
    put(p, " = ");
    put_expr(p, it->expr);
}

static void put_lop(printer *p, const sql_lop *op, int depth);

static void put_line_head(printer *p, int depth)
{
    for (int i = 0; i < depth; i++)
        put(p, "  ");
}

static void put_lop_line(printer *p, const sql_lop *op)
{
    switch (op->kind) {
    case SQL_LOP_GET:
        put(p, "GET %s", op->get.table_name);
        if (op->get.alias && strcmp(op->get.alias, op->get.table_name) != 0)
            put(p, " AS %s", op->get.alias);
        put_out_list(p, op);
        break;
    case SQL_LOP_FILTER:
        put(p, "FILTER ");
        put_expr(p, op->filter.pred);
        break;
    case SQL_LOP_PROJECT:
        put(p, "PROJECT");
        for (uint32_t i = 0; i < op->project.count; i++) {
            put(p, i ? ", " : " ");
            put_item(p, &op->project.items[i]);
        }
        break;
    case SQL_LOP_JOIN:
        put(p, "JOIN %s", sql_join_kind_name(op->join.kind));
        if (op->join.cond) {
            put(p, " ");
            put_expr(p, op->join.cond);
        }
        if (op->join.kind == SQL_JOINK_MARK) {
            put(p, " MARK ");
            put_col_decl(p, op->join.mark);
        }
        break;
    case SQL_LOP_AGGREGATE:
        put(p, "AGGREGATE");
        if (op->aggregate.ngroups) put(p, " GROUP");
        for (uint32_t i = 0; i < op->aggregate.ngroups; i++) {
            put(p, i ? ", " : " ");
            put_item(p, &op->aggregate.groups[i]);
        }
        if (op->aggregate.naggs) put(p, " AGGS");
        for (uint32_t i = 0; i < op->aggregate.naggs; i++) {
            const sql_agg_item *a = &op->aggregate.aggs[i];
            put(p, i ? ", " : " ");
            put_col_decl(p, a->id);
            put(p, " = %s(%s", sql_agg_name(a->func), a->distinct ? "DISTINCT " : "");
            if (a->arg)
                put_expr(p, a->arg);
            else
                put(p, "*");
            put(p, ")");
        }
        break;
    case SQL_LOP_SORT:
        put(p, "SORT");
        for (uint32_t i = 0; i < op->sort.count; i++) {
            const sql_sort_key *k = &op->sort.keys[i];
            put(p, i ? ", " : " ");
            put_expr(p, k->expr);
            put(p, " %s NULLS %s", k->desc ? "DESC" : "ASC", k->nulls_first ? "FIRST" : "LAST");
        }
        break;
    case SQL_LOP_LIMIT:
        put(p, "LIMIT");
        if (op->limit.limit >= 0) put(p, " %" PRId64, op->limit.limit);
        if (op->limit.offset) put(p, " OFFSET %" PRId64, op->limit.offset);
        break;
    case SQL_LOP_DISTINCT:
        put(p, "DISTINCT");
        break;
    case SQL_LOP_SETOP: {
        static const char *const names[] = {"UNION", "INTERSECT", "EXCEPT"};
        put(p, "SETOP %s%s", names[op->setop.op], op->setop.all ? " ALL" : "");
        put_out_list(p, op);
        break;
    }
    case SQL_LOP_VALUES:
        put(p, "VALUES");
        put_out_list(p, op);
        for (uint32_t r = 0; r < op->values.nrows; r++) {
            put(p, r ? ", (" : " ROWS (");
            put_list(p, &op->values.rows[r]);
            put(p, ")");
        }
        break;
    case SQL_LOP_EXCHANGE: {
        static const char *const kinds[] = {"SHUFFLE", "BROADCAST", "GATHER"};
        put(p, "EXCHANGE %u %s", op->exchange.id, kinds[op->exchange.kind]);
        for (uint32_t i = 0; i < op->exchange.nkeys; i++) {
            put(p, i ? ", " : " ON ");
            put_expr(p, op->exchange.keys[i]);
        }
        break;
    }
    case SQL_LOP_KIND_COUNT:
        break;
    }
    put(p, "\n");
}

static void put_lop(printer *p, const sql_lop *op, int depth)
{
    put_line_head(p, depth);
    p->npending = 0;
    put_lop_line(p, op);
    /* Take the list: printing a subplan starts a new one. */
    int n = p->npending;
    const sql_lop **subs = p->pending;
    int *nos = p->pending_no;
    p->pending = NULL;
    p->pending_no = NULL;
    p->npending = p->cap_pending = 0;
    for (int i = 0; i < n; i++) {
        put_line_head(p, depth + 2);
        put(p, "subplan %d:\n", nos[i]);
        put_lop(p, subs[i], depth + 3);
    }
    free(subs);
    free(nos);
    if (op->left) put_lop(p, op->left, depth + 1);
    if (op->right) put_lop(p, op->right, depth + 1);
}

static char *finish(printer *p)
{
    free(p->pending);
    free(p->pending_no);
    if (p->oom || !p->buf) {
        free(p->buf);
        return NULL;
    }
    return p->buf;
}

char *sql_plan_to_string(const sql_plan *plan)
{
    printer p = {.ctx = plan->ctx, .next_subplan = 1};
    put(&p, "OUTPUT");
    for (uint32_t i = 0; i < plan->ncols; i++) {
        put(&p, i ? ", " : " ");
        put(&p, "%s=", plan->names[i]);
        put_col_decl(&p, plan->cols[i]);
    }
    put(&p, "\n");
    put_lop(&p, plan->root, 1);
    return finish(&p);
}

char *sql_lop_to_string(const sql_plan_ctx *ctx, const sql_lop *op)
{
    printer p = {.ctx = ctx, .next_subplan = 1};
    put_lop(&p, op, 0);
    return finish(&p);
}

char *sql_bexpr_to_string(const sql_plan_ctx *ctx, const sql_bexpr *e)
{
    printer p = {.ctx = ctx, .next_subplan = 1};
    put_expr(&p, e);
    put(&p, "%s", "");
    return finish(&p);
}
