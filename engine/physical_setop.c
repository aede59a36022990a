/*
 * physical_setop.c — UNION, INTERSECT and EXCEPT [ALL] as pipelines.
 *
 * Every set operation starts the same way: each side's pipeline ends in a
 * row sink over the output's columns, the left one first, and the right
 * one's rows are appended to the left one's (eng_pipe.concat_from), so one
 * pipeline reads both inputs as a single row buffer. What follows depends on
 * the operation:
 *
 *   UNION ALL   nothing: the appended rows are the result.
 *   UNION       a DISTINCT over them (hash aggregation on every column).
 *   INTERSECT,  each side also writes a tag column that is 1 on its own rows
 *   EXCEPT      and NULL on the other side's; a hash aggregation grouped by
 *     [ALL]     every output column counts the tags (COUNT skips NULLs), so
 *               each distinct row knows how often it occurs on each side, m
 *               left and n right. The executor then keeps each group's row
 *               (eng_pipe.count_setop, exec_setop.c):
 *                 INTERSECT      once when m > 0 and n > 0
 *                 INTERSECT ALL  min(m, n) times
 *                 EXCEPT         once when m > 0 and n = 0
 *                 EXCEPT ALL     max(m - n, 0) times
 *
 *   INTERSECT ALL      pipeline 3: rows of 2 → aggregate, keep by counts
 *     left             pipeline 1: left → rows (left_row = 1)
 *     right            pipeline 2: right → rows (right_row = 1), after 1's
 *
 * Grouping treats NULLs as equal, which is what set operations need (a NULL
 * row of the left side matches a NULL row of the right side), and the
 * aggregation is already parallel and partitioned, so no operator of its
 * own is needed. The plan's sides already have the output's types (the
 * binder projected casts below the SETOP), so both sides' rows have one
 * layout.
 */
#include <stdio.h>
#include <string.h>

#include "engine/physical_int.h"

static const char *setop_name(const sql_lop *op)
{
    switch (op->setop.op) {
    case SQL_SETOP_UNION:
        return op->setop.all ? "UNION ALL" : "UNION";
    case SQL_SETOP_INTERSECT:
        return op->setop.all ? "INTERSECT ALL" : "INTERSECT";
    case SQL_SETOP_EXCEPT:
        return op->setop.all ? "EXCEPT ALL" : "EXCEPT";
    }
    return "?";
}

/* A tag value: INTEGER 1, or an INTEGER NULL. */
static sql_bexpr *tag(sql_plan_ctx *ctx, bool one)
{
    sto_type t = sto_type_make(STO_TYPE_INTEGER);
    if (!one) return sql_bexpr_null(ctx, t, 0);
    sql_bexpr *e = sql_bexpr_new(ctx, SQL_BEXPR_CONST, t, false, 0);
    if (e) e->value.v.i64 = 1;
    return e;
}

/* Ends side's pipeline in a row sink writing the set operation's columns
 * (ids, width of them: the output's, then the tags when counted). */
static sto_status close_side(eng_phys_builder *b, const sql_lop *op, const sql_lop *side,
                             sql_colid *ids, uint32_t width, bool is_left, unsigned *pipe)
{
    uint32_t n = op->nout;
    if (side->nout < n)
        return sto_error(STO_INTERNAL_ERROR, "%s input has %u columns, not %u", setop_name(op),
                         side->nout, n);
    STO_TRY(eng_phys_open_pipe(b, side, pipe));
    const sql_bexpr **exprs;
    STO_TRY(eng_phys_column_exprs(b, side->out, n, width - n, &exprs));
    if (width > n) {
        exprs[n] = tag(b->ctx, is_left);
        exprs[n + 1] = tag(b->ctx, !is_left);
        if (!exprs[n] || !exprs[n + 1]) return sto_error_oom();
    }
    eng_pipe *p = &b->pipes[*pipe];
    p->sink = ENG_SINK_ROWS;
    p->sink_op = op;
    p->nout = p->nexprs = width;
    p->out_ids = ids;
    p->exprs = exprs;
    return STO_OK;
}

/* The aggregation that counts each distinct row's tags per side: groups
 * are the output columns (keeping their ids), then count(left_row) and
 * count(right_row). */
static sql_lop *count_sides(sql_plan_ctx *ctx, const sql_lop *op, const sql_colid *tags)
{
    uint32_t n = op->nout;
    sql_lop *agg = sql_lop_new(ctx, SQL_LOP_AGGREGATE, NULL, NULL, n + 2);
    if (!agg) return NULL;
    agg->est_rows = op->est_rows;
    agg->aggregate.ngroups = n;
    agg->aggregate.groups = sql_arena_alloc(ctx->arena, (n ? n : 1) * sizeof(sql_proj_item));
    agg->aggregate.naggs = 2;
    agg->aggregate.aggs = sql_arena_alloc(ctx->arena, 2 * sizeof(sql_agg_item));
    if (!agg->aggregate.groups || !agg->aggregate.aggs) return NULL;
    for (uint32_t i = 0; i < n; i++) {
        sql_bexpr *c = sql_bexpr_column(ctx, op->out[i], 0);
        if (!c) return NULL;
        agg->aggregate.groups[i] = (sql_proj_item){c, op->out[i]};
        agg->out[i] = op->out[i];
    }
    static const char *const names[2] = {"left_rows", "right_rows"};
    for (uint32_t j = 0; j < 2; j++) {
        sql_bexpr *arg = sql_bexpr_column(ctx, tags[j], 0);
        sql_colid id = sql_plan_new_col(ctx, sto_type_make(STO_TYPE_BIGINT), false, names[j]);
        if (!arg || !id) return NULL;
        agg->aggregate.aggs[j] = (sql_agg_item){SQL_AGG_COUNT, false, arg, id};
        agg->out[n + j] = id;
    }
    return agg;
}

sto_status eng_phys_setop(eng_phys_builder *b, const sql_lop *op, unsigned *id)
{
    sql_plan_ctx *ctx = b->ctx;
    bool counted = op->setop.op != SQL_SETOP_UNION;
    uint32_t n = op->nout, width = n + (counted ? 2 : 0);
    sql_colid *ids = eng_phys_alloc(b, width, sizeof(*ids));
    if (!ids) return sto_error_oom();
    memcpy(ids, op->out, n * sizeof(*ids));
    if (counted) {
        sto_type t = sto_type_make(STO_TYPE_INTEGER);
        ids[n] = sql_plan_new_col(ctx, t, true, "left_row");
        ids[n + 1] = sql_plan_new_col(ctx, t, true, "right_row");
        if (!ids[n] || !ids[n + 1]) return sto_error_oom();
    }
    unsigned left, right;
    STO_TRY(close_side(b, op, op->left, ids, width, true, &left));
    STO_TRY(close_side(b, op, op->right, ids, width, false, &right));
    b->pipes[right].concat_from = left + 1;
    STO_TRY(eng_phys_open_reader(b, right, id));
    if (op->setop.op == SQL_SETOP_UNION && op->setop.all) return STO_OK;

    sql_lop *agg;
    if (!counted) {
        agg = sql_lop_new(ctx, SQL_LOP_DISTINCT, NULL, NULL, n);
        if (!agg) return sto_error_oom();
        memcpy(agg->out, op->out, n * sizeof(*agg->out));
        agg->est_rows = op->est_rows;
    } else if (!(agg = count_sides(ctx, op, ids + n))) {
        return sto_error_oom();
    }
    unsigned in = *id;
    STO_TRY(eng_phys_close_agg(b, in, agg));
    if (counted) b->pipes[in].count_setop = op;
    return eng_phys_open_reader(b, in, id);
}

bool eng_phys_setop_note(const eng_pipe *p, char *buf, size_t size)
{
    if (p->count_setop) {
        const sql_lop *op = p->count_setop;
        const char *keep = op->setop.op == SQL_SETOP_INTERSECT
                               ? (op->setop.all ? "min(left_rows, right_rows) times"
                                                : "once where left_rows > 0 and right_rows > 0")
                           : op->setop.all ? "left_rows - right_rows times"
                                           : "once where left_rows > 0 and right_rows = 0";
        snprintf(buf, size, "KEEP EACH GROUP %s (%s)", keep, setop_name(op));
        return true;
    }
    if (p->sink != ENG_SINK_ROWS || !p->sink_op || p->sink_op->kind != SQL_LOP_SETOP) return false;
    const sql_lop *op = p->sink_op;
    if (p->concat_from)
        snprintf(buf, size, "%s RIGHT INPUT, APPENDED TO THE ROWS OF PIPELINE %u%s", setop_name(op),
                 p->concat_from, p->nout > op->nout ? " (tagged right_row)" : "");
    else
        snprintf(buf, size, "%s LEFT INPUT%s", setop_name(op),
                 p->nout > op->nout ? " (tagged left_row)" : "");
    return true;
}
