/*
 * opt_eager_agg.c — counts over a left join's null-supplying side are
 * computed before the join, one row per join key.
 *
 * TPC-H q13 counts each customer's orders:
 *
 *   Γ_{c_custkey; count(o_orderkey)}(customer ⟕_{c_custkey = o_custkey} σ(orders))
 *
 * The join makes ~15 rows per customer only for the aggregate to fold them
 * back into one. Counting first shrinks what the join builds and emits to
 * one row per key (Yan and Larson, "Eager Aggregation and Lazy
 * Aggregation", VLDB 1995):
 *
 *   P = Γ_{k'; n = count(x)}(R)                    k' the join keys of R
 *   Γ_{G; sum(coalesce(n, 0))}(L ⟕_{l = k'} P)
 *
 * Why it is equal, for any L (no uniqueness is assumed):
 *   - P holds one row per distinct key tuple, so every L row matches at
 *     most one P row, and the rows of R it matched in the original join are
 *     exactly the rows of R in that P row's group. A NULL key matches
 *     nothing under '=' in either form.
 *   - count(x) over the rows an L row contributed is n when it matched and
 *     0 when it did not (the padded row has x NULL: x must be NULL whenever
 *     R's columns are, which strictness guarantees). coalesce(n, 0) is that
 *     count, and the group's count is the sum of its rows' counts. A group
 *     is never empty, so the sum is never NULL.
 *   - R-only conjuncts of the ON clause decide which R rows can match; as
 *     a filter under P they remove the same rows.
 *
 * The rule fires only for that shape: the join condition is equalities
 * between columns of L and columns of R plus conjuncts over R alone, the
 * group keys read only L, and every aggregate is a plain COUNT of a strict
 * expression over R. COUNT(*) counts padded rows too and is left alone.
 */
#include <string.h>

#include "engine/opt_int.h"

#define MAX_KEYS 8

typedef struct keys {
    uint32_t n;
    sql_colid l[MAX_KEYS], r[MAX_KEYS];
} keys;

static bool col_in(const sql_lop *op, sql_colid id)
{
    for (uint32_t i = 0; i < op->nout; i++)
        if (op->out[i] == id) return true;
    return false;
}

/* Sorts the join condition's conjuncts into key pairs and R-only filters;
 * 0 when the shape does not fit, -1 out of memory. */
static int split_cond(sql_plan_ctx *ctx, const sql_lop *join, keys *k, eng_conj *rfilt)
{
    eng_conj all = {0};
    if (!eng_conj_split(ctx, &all, join->join.cond)) return -1;
    const sql_lop *l = join->left, *r = join->right;
    for (uint32_t i = 0; i < all.count; i++) {
        sql_bexpr *c = all.items[i];
        if (c->kind == SQL_BEXPR_OP && c->op.op == SQL_OP_EQ &&
            c->op.args[0]->kind == SQL_BEXPR_COLUMN && c->op.args[1]->kind == SQL_BEXPR_COLUMN) {
            sql_colid a = c->op.args[0]->column, b = c->op.args[1]->column;
            if (col_in(r, a) && col_in(l, b)) {
                sql_colid t = a;
                a = b;
                b = t;
            }
            if (col_in(l, a) && col_in(r, b)) {
                if (k->n == MAX_KEYS) return 0;
                k->l[k->n] = a;
                k->r[k->n++] = b;
                continue;
            }
        }
        eng_idset refs, rout;
        eng_idset_init(&refs);
        eng_idset_init(&rout);
        if (!eng_expr_refs(ctx, c, &refs) || !eng_idset_of_out(ctx, &rout, r)) return -1;
        if (eng_expr_has_subquery(c) || !eng_idset_subset(&refs, &rout)) return 0;
        if (!eng_conj_push(ctx, rfilt, c)) return -1;
    }
    return k->n > 0;
}

/* True when e reads only ids of op's output (and at least one when
 * nonempty is asked). -1 out of memory. */
static int reads_only(sql_plan_ctx *ctx, const sql_bexpr *e, const sql_lop *op, bool nonempty)
{
    eng_idset refs, out;
    eng_idset_init(&refs);
    eng_idset_init(&out);
    if (!eng_expr_refs(ctx, e, &refs) || !eng_idset_of_out(ctx, &out, op)) return -1;
    if (eng_expr_has_subquery(e)) return 0;
    if (nonempty && eng_idset_empty(&refs)) return 0;
    return eng_idset_subset(&refs, &out);
}

static int fits(sql_plan_ctx *ctx, const sql_lop *agg, keys *k, eng_conj *rfilt)
{
    const sql_lop *j = agg->left;
    if (!j || j->kind != SQL_LOP_JOIN || j->join.kind != SQL_JOINK_LEFT || !j->join.cond ||
        agg->aggregate.naggs == 0)
        return 0;
    for (uint32_t i = 0; i < agg->aggregate.naggs; i++) {
        const sql_agg_item *a = &agg->aggregate.aggs[i];
        if (a->func != SQL_AGG_COUNT || a->distinct || !a->arg || !eng_expr_strict(a->arg))
            return 0;
        int r = reads_only(ctx, a->arg, j->right, true);
        if (r <= 0) return r;
    }
    for (uint32_t i = 0; i < agg->aggregate.ngroups; i++) {
        int r = reads_only(ctx, agg->aggregate.groups[i].expr, j->left, false);
        if (r <= 0) return r;
    }
    return split_cond(ctx, j, k, rfilt);
}

static sql_bexpr *coalesce_zero(sql_plan_ctx *ctx, sql_colid id)
{
    sto_type bigint = sto_type_make(STO_TYPE_BIGINT);
    sql_bexpr *c = sql_bexpr_column(ctx, id, 0);
    sql_bexpr *zero = sql_bexpr_new(ctx, SQL_BEXPR_CONST, bigint, false, 0);
    sql_bexpr *f = sql_bexpr_new(ctx, SQL_BEXPR_FUNC, bigint, false, 0);
    sql_bexpr **args = sql_arena_alloc(ctx->arena, 2 * sizeof(*args));
    if (!c || !zero || !f || !args) return NULL;
    memset(&zero->value, 0, sizeof(zero->value));
    args[0] = c;
    args[1] = zero;
    f->func.id = SQL_FUNC_COALESCE;
    f->func.args = (sql_bexpr_list){2, args};
    return f;
}

/* Rewrites agg (the shape fits): its input becomes L ⟕ P and each COUNT a
 * SUM of P's counts. False when memory is short. */
static bool rewrite(sql_plan_ctx *ctx, sql_lop *agg, const keys *k, const eng_conj *rfilt)
{
    sql_lop *j = agg->left;
    sql_lop *r = j->right;
    if (rfilt->count) {
        bool oom = false;
        sql_bexpr *pred = eng_conj_and(ctx, rfilt, &oom);
        if (oom || !(r = eng_lop_filter(ctx, r, pred))) return false;
    }
    uint32_t na = agg->aggregate.naggs;
    sql_lop *p = sql_lop_new(ctx, SQL_LOP_AGGREGATE, r, NULL, k->n + na);
    if (!p) return false;
    p->aggregate.ngroups = k->n;
    p->aggregate.naggs = na;
    p->aggregate.groups = sql_arena_alloc(ctx->arena, k->n * sizeof(sql_proj_item));
    p->aggregate.aggs = sql_arena_alloc(ctx->arena, na * sizeof(sql_agg_item));
    if (!p->aggregate.groups || !p->aggregate.aggs) return false;
    eng_conj on = {0};
    for (uint32_t i = 0; i < k->n; i++) {
        const sql_col_info *ci = sql_plan_col(ctx, k->r[i]);
        sql_colid id = sql_plan_new_col(ctx, ci->type, true, ci->name);
        sql_bexpr *e = sql_bexpr_column(ctx, k->r[i], 0);
        if (!id || !e) return false;
        p->aggregate.groups[i] = (sql_proj_item){e, id};
        p->out[i] = id;
        sql_bexpr *lc = sql_bexpr_column(ctx, k->l[i], 0), *pc = sql_bexpr_column(ctx, id, 0);
        sql_bexpr *eq =
            lc && pc ? sql_bexpr_op(ctx, SQL_OP_EQ, sto_type_make(STO_TYPE_BOOLEAN), lc, pc, 0)
                     : NULL;
        if (!eq) return false;
        eq->nullable = true;
        if (!eng_conj_push(ctx, &on, eq)) return false;
    }
    for (uint32_t i = 0; i < na; i++) {
        sql_agg_item *a = &agg->aggregate.aggs[i];
        /* NULL after the join where a key found no group */
        sql_colid id = sql_plan_new_col(ctx, sto_type_make(STO_TYPE_BIGINT), true, "count");
        if (!id) return false;
        p->aggregate.aggs[i] = (sql_agg_item){SQL_AGG_COUNT, false, a->arg, id};
        p->out[k->n + i] = id;
    }
    bool oom = false;
    sql_bexpr *cond = eng_conj_and(ctx, &on, &oom);
    if (oom) return false;
    sql_lop *nj = eng_lop_join(ctx, SQL_JOINK_LEFT, j->left, p, cond);
    if (!nj) return false;
    for (uint32_t i = 0; i < na; i++) {
        sql_agg_item *a = &agg->aggregate.aggs[i];
        sql_bexpr *arg = coalesce_zero(ctx, p->out[k->n + i]);
        if (!arg) return false;
        a->func = SQL_AGG_SUM;
        a->arg = arg;
    }
    agg->left = nj;
    return true;
}

static bool walk(sql_plan_ctx *ctx, sql_lop *op)
{
    if (!op) return true;
    if (!walk(ctx, op->left) || !walk(ctx, op->right)) return false;
    if (op->kind != SQL_LOP_AGGREGATE) return true;
    keys k = {0};
    eng_conj rfilt = {0};
    int f = fits(ctx, op, &k, &rfilt);
    if (f < 0) return false;
    return f == 0 || rewrite(ctx, op, &k, &rfilt);
}

bool eng_opt_eager_agg(sql_plan_ctx *ctx, sql_lop **root)
{
    return walk(ctx, *root) && !sql_arena_failed(ctx->arena);
}
