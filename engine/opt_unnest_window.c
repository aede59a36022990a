/*
 * opt_unnest_window.c — a correlated aggregate over the outer query's own
 * join becomes an aggregate over that join, grouped by the correlation.
 *
 * TPC-H q17 and q02 compare each outer row with an aggregate of a subquery
 * that joins the same tables the outer query joins, minus the one the
 * correlation comes from:
 *
 *   q17  FROM lineitem, part WHERE p_partkey = l_partkey AND p_brand = ...
 *          AND l_quantity < (SELECT 0.2 * avg(l_quantity) FROM lineitem
 *                            WHERE l_partkey = p_partkey)
 *
 * Let X be the outer join with its other conjuncts. For an outer row whose
 * correlated columns F hold k, the subquery's rows are exactly the rows of X
 * with F = k, projected onto the subquery's tables, each repeated once per
 * row of the remaining tables E (here part) with F = k — provided that
 *
 *   - every table of the subquery is a table of the outer query (each table
 *     at most once on either side, so the correspondence is unique);
 *   - the subquery's conjuncts, with its columns read as the outer query's,
 *     are exactly the outer conjuncts that read those tables: the
 *     uncorrelated ones filter the same rows, and the correlated ones are
 *     equalities inner = f (f in F) that the outer query also states, so
 *     that they link the two parts through F alone;
 *   - the aggregates ignore how often each row repeats: AVG, MIN, MAX, and
 *     anything DISTINCT (not SUM or COUNT: E may hold several rows per k).
 *
 * Then the subquery's value for k is the aggregate over X grouped by F (the
 * "window" form of Zuzarte et al., "WinMagic", SIGMOD 2003), and the query
 * becomes
 *
 *   X ⋈_{F = F'} Γ_{F'; aggs}(X')       X' a copy of X under fresh ids
 *
 * An inner join is right: every row of X has its own group in Γ, and only
 * one. A NULL in F cannot occur in X: the correlated equalities reject it.
 * X sits under a projection of its own, so join ordering orders X and X'
 * alike (each a region of its own); the physical planner then finds them to
 * be the same tree and computes X once (physical_share.c), where the
 * semi-join-reduced plan would scan lineitem twice.
 */
#include <string.h>

#include "engine/opt_int.h"

#define MAX_LEAVES 16

typedef struct side {
    sql_lop *leaves[MAX_LEAVES]; /* the GETs */
    uint32_t n;
    eng_conj conj; /* join conditions and filters inside the tree */
} side;

/* The GETs and conjuncts of a tree of inner/cross joins and filters; false
 * for any other shape. */
static bool collect(sql_plan_ctx *ctx, sql_lop *op, side *s, bool *oom)
{
    switch (op->kind) {
    case SQL_LOP_GET:
        if (!op->get.table || s->n == MAX_LEAVES) return false;
        s->leaves[s->n++] = op;
        return true;
    case SQL_LOP_FILTER:
        if (!eng_conj_split(ctx, &s->conj, op->filter.pred)) break;
        return collect(ctx, op->left, s, oom);
    case SQL_LOP_JOIN:
        if (op->join.kind != SQL_JOINK_INNER && op->join.kind != SQL_JOINK_CROSS) return false;
        if (!eng_conj_split(ctx, &s->conj, op->join.cond)) break;
        return collect(ctx, op->left, s, oom) && collect(ctx, op->right, s, oom);
    default:
        return false;
    }
    *oom = true;
    return false;
}

static bool conj_equal(const sql_bexpr *a, const sql_bexpr *b)
{
    if (sql_bexpr_equal(a, b)) return true;
    return a->kind == SQL_BEXPR_OP && b->kind == SQL_BEXPR_OP && a->op.op == SQL_OP_EQ &&
           b->op.op == SQL_OP_EQ && sql_bexpr_equal(a->op.args[0], b->op.args[1]) &&
           sql_bexpr_equal(a->op.args[1], b->op.args[0]);
}

static bool order_insensitive(const sql_agg_item *a)
{
    return a->distinct || a->func == SQL_AGG_AVG || a->func == SQL_AGG_MIN ||
           a->func == SQL_AGG_MAX;
}

typedef struct find_sq {
    sql_bexpr **slot;
    uint32_t n;
} find_sq;

static sql_walk find_fn(sql_bexpr **slot, void *arg)
{
    find_sq *f = arg;
    if ((*slot)->kind != SQL_BEXPR_SUBQUERY) return SQL_WALK_CONTINUE;
    f->slot = slot;
    f->n++;
    return SQL_WALK_SKIP;
}

typedef struct rewriter {
    sql_plan_ctx *ctx;
    bool oom;
    sql_bexpr **mu; /* subquery id → COLUMN(outer id) */
    uint32_t nmu;
} rewriter;

static bool refs(rewriter *w, const sql_bexpr *e, eng_idset *s)
{
    eng_idset_init(s);
    if (!eng_expr_refs(w->ctx, e, s)) return !(w->oom = true);
    return true;
}

/* Maps the subquery's tables onto the outer query's (mu). */
static bool map_tables(rewriter *w, const side *in, const side *out, eng_idset *image)
{
    for (uint32_t i = 0; i < in->n; i++) {
        const sql_lop *g = in->leaves[i], *o = NULL;
        for (uint32_t j = 0; j < in->n; j++)
            if (j != i && in->leaves[j]->get.table == g->get.table) return false;
        for (uint32_t j = 0; j < out->n; j++) {
            if (out->leaves[j]->get.table != g->get.table) continue;
            if (o) return false;
            o = out->leaves[j];
        }
        if (!o) return false;
        for (uint32_t k = 0; k < g->nout; k++) {
            uint32_t c = 0;
            while (c < o->nout && o->get.columns[c] != g->get.columns[k])
                c++;
            if (c == o->nout || g->out[k] >= w->nmu) return false;
            if (!(w->mu[g->out[k]] = sql_bexpr_column(w->ctx, o->out[c], 0)))
                return !(w->oom = true);
        }
        if (!eng_idset_of_out(w->ctx, image, o)) return !(w->oom = true);
    }
    return true;
}

/* 1: applied, 0: not applicable, -1: out of memory. See the top. */
static int apply(rewriter *w, sql_lop **cur, eng_conj *all, uint32_t ci)
{
    sql_plan_ctx *ctx = w->ctx;
    find_sq f = {NULL, 0};
    sql_bexpr_walk(&all->items[ci], find_fn, &f);
    if (f.n != 1) return 0;
    sql_bexpr *sq = *f.slot;
    if (sq->subquery.kind != SQL_SUBQ_SCALAR || sq->subquery.nouter == 0) return 0;
    for (uint32_t i = 0; i < all->count; i++)
        if (i != ci && eng_expr_has_subquery(all->items[i])) return 0;

    /* The subquery: projections over an aggregate without GROUP BY over a
     * join of tables. */
    sql_lop *top = sq->subquery.plan, *agg = top;
    while (agg->kind == SQL_LOP_PROJECT)
        agg = agg->left;
    if (agg->kind != SQL_LOP_AGGREGATE || agg->aggregate.ngroups != 0 || !agg->aggregate.naggs)
        return 0;
    for (uint32_t i = 0; i < agg->aggregate.naggs; i++)
        if (!order_insensitive(&agg->aggregate.aggs[i])) return 0;
    side in = {.n = 0}, out = {.n = 0};
    bool oom = false;
    if (!collect(ctx, agg->left, &in, &oom) || !collect(ctx, *cur, &out, &oom)) return oom ? -1 : 0;
    eng_idset F, inner, image, outer_ids;
    eng_idset_init(&F);
    eng_idset_init(&inner);
    eng_idset_init(&image);
    eng_idset_init(&outer_ids);
    for (uint32_t i = 0; i < sq->subquery.nouter; i++)
        if (!eng_idset_add(ctx, &F, sq->subquery.outer[i])) return -1;
    if (!eng_lop_produced(ctx, agg->left, &inner) || !eng_lop_produced(ctx, *cur, &outer_ids))
        return -1;
    if (!eng_idset_subset(&F, &outer_ids)) return 0;
    if (!map_tables(w, &in, &out, &image)) return w->oom ? -1 : 0;
    if (eng_idset_intersects(&F, &image)) return 0;
    /* The projections and aggregates read no outer column. */
    for (sql_lop *p = top; p != agg; p = p->left)
        for (uint32_t i = 0; i < p->project.count; i++) {
            eng_idset r;
            if (!refs(w, p->project.items[i].expr, &r)) return -1;
            if (eng_idset_intersects(&r, &F)) return 0;
        }
    for (uint32_t i = 0; i < agg->aggregate.naggs; i++) {
        eng_idset r;
        if (!refs(w, agg->aggregate.aggs[i].arg, &r)) return -1;
        if (!eng_idset_subset(&r, &inner)) return 0;
    }

    /* The outer conjuncts: the filter's (but the subquery's) and the
     * join tree's own. */
    eng_conj oc = out.conj;
    for (uint32_t i = 0; i < all->count; i++)
        if (i != ci && !eng_conj_push(ctx, &oc, all->items[i])) return -1;
    bool *matched = sql_arena_alloc(ctx->arena, (oc.count + 1) * sizeof(bool));
    if (!matched) return -1;
    memset(matched, 0, (oc.count + 1) * sizeof(bool));
    uint32_t ncorr = 0;
    for (uint32_t i = 0; i < in.conj.count; i++) {
        sql_bexpr *c = in.conj.items[i];
        eng_idset r;
        if (!refs(w, c, &r)) return -1;
        if (eng_expr_has_subquery(c)) return 0;
        if (eng_idset_intersects(&r, &F)) {
            /* inner = f */
            if (c->kind != SQL_BEXPR_OP || c->op.op != SQL_OP_EQ) return 0;
            bool ok = false;
            for (int s = 0; s < 2 && !ok; s++) {
                const sql_bexpr *fv = c->op.args[s], *iv = c->op.args[1 - s];
                eng_idset ri;
                if (!refs(w, iv, &ri)) return -1;
                ok = fv->kind == SQL_BEXPR_COLUMN && eng_idset_has(&F, fv->column) &&
                     !eng_idset_empty(&ri) && eng_idset_subset(&ri, &inner);
            }
            if (!ok) return 0;
            ncorr++;
        } else if (!eng_idset_subset(&r, &inner)) {
            return 0;
        }
        sql_bexpr *m = eng_expr_subst(ctx, c, w->mu, w->nmu);
        if (!m) return -1;
        bool found = false;
        for (uint32_t k = 0; k < oc.count && !found; k++)
            if (conj_equal(oc.items[k], m)) found = matched[k] = true;
        if (!found) return 0;
    }
    if (!ncorr) return 0;
    /* Nothing else of the outer query may narrow the subquery's tables. */
    for (uint32_t k = 0; k < oc.count; k++) {
        eng_idset r;
        if (!refs(w, oc.items[k], &r)) return -1;
        if (!matched[k] && eng_idset_intersects(&r, &image)) return 0;
        if (!eng_idset_subset(&r, &outer_ids)) return 0;
    }

    /* The projections above the aggregate, top first. */
    sql_lop *chain[16];
    uint32_t nchain = 0;
    for (sql_lop *p = top; p != agg; p = p->left) {
        if (nchain == 16) return 0;
        chain[nchain++] = p;
    }

    /* X: the outer side with its conjuncts; X' its copy. Nothing has
     * changed so far; from here on the rewrite only fails for memory. */
    eng_conj rest = {0};
    for (uint32_t i = 0; i < all->count; i++)
        if (i != ci && !eng_conj_push(ctx, &rest, all->items[i])) return -1;
    sql_lop *X = *cur;
    if (rest.count) {
        sql_bexpr *pred = eng_conj_and(ctx, &rest, &oom);
        if (oom || !(X = eng_lop_filter(ctx, X, pred))) return -1;
    }
    uint32_t nmap = ctx->ncols + 1;
    sql_bexpr **map = sql_arena_alloc(ctx->arena, nmap * sizeof(*map));
    if (!map) return -1;
    memset(map, 0, nmap * sizeof(*map));
    sql_lop *X2 = eng_lop_copy_fresh(ctx, X, map, nmap);
    if (!X2) return sql_arena_failed(ctx->arena) ? -1 : 0;

    /* Γ_{F'; aggs}(X'): the aggregate keeps its ids, so the projections
     * above it stay as they are and pass F' on. */
    uint32_t nf = sq->subquery.nouter;
    sql_proj_item *groups = sql_arena_alloc(ctx->arena, nf * sizeof(*groups));
    sql_bexpr *cond = NULL;
    if (!groups) return -1;
    for (uint32_t i = 0; i < nf; i++) {
        sql_colid fid = sq->subquery.outer[i];
        if (fid >= nmap || !map[fid]) return -1; /* F ⊆ X's ids: checked above */
        groups[i].expr = sql_bexpr_copy(ctx, map[fid]);
        groups[i].id = map[fid]->column;
        sql_bexpr *eq =
            sql_bexpr_op(ctx, SQL_OP_EQ, sto_type_make(STO_TYPE_BOOLEAN),
                         sql_bexpr_column(ctx, fid, 0), sql_bexpr_column(ctx, groups[i].id, 0), 0);
        if (!groups[i].expr || !(cond = eng_expr_and(ctx, cond, eq))) return -1;
    }
    for (uint32_t i = 0; i < agg->aggregate.naggs; i++) {
        sql_agg_item *a = &agg->aggregate.aggs[i];
        sql_bexpr *x = eng_expr_subst(ctx, a->arg, w->mu, w->nmu);
        if (!x || !(a->arg = eng_expr_subst(ctx, x, map, nmap))) return -1;
    }
    agg->left = X2;
    agg->aggregate.groups = groups;
    agg->aggregate.ngroups = nf;
    if (!eng_lop_recompute_out(ctx, agg)) return -1;
    /* The projections above pass the group keys on. */
    for (sql_lop *p = top; p != agg; p = p->left) {
        sql_proj_item *items =
            sql_arena_alloc(ctx->arena, (p->project.count + nf) * sizeof(sql_proj_item));
        if (!items) return -1;
        memcpy(items, p->project.items, p->project.count * sizeof(sql_proj_item));
        for (uint32_t i = 0; i < nf; i++) {
            items[p->project.count + i].id = groups[i].id;
            if (!(items[p->project.count + i].expr = sql_bexpr_column(ctx, groups[i].id, 0)))
                return -1;
        }
        p->project.items = items;
        p->project.count += nf;
    }
    /* Their outputs, bottom-up. */
    while (nchain)
        if (!eng_lop_recompute_out(ctx, chain[--nchain])) return -1;

    sql_lop *wrapped = eng_lop_passthrough(ctx, X, X->out, X->nout);
    sql_lop *j = eng_lop_join(ctx, SQL_JOINK_INNER, wrapped, top, cond);
    sql_bexpr *value = sql_bexpr_column(ctx, sq->subquery.col, 0);
    if (!j || !value) return -1;
    *f.slot = value;
    eng_expr_refresh_nullable(ctx, all->items[ci]);
    all->items[0] = all->items[ci];
    all->count = 1;
    *cur = j;
    return 1;
}

int eng_opt_unnest_window(sql_plan_ctx *ctx, sql_lop **cur, eng_conj *all, uint32_t ci)
{
    rewriter w = {ctx, false, NULL, ctx->ncols + 1};
    w.mu = sql_arena_alloc(ctx->arena, w.nmu * sizeof(*w.mu));
    if (!w.mu) return -1;
    memset(w.mu, 0, w.nmu * sizeof(*w.mu));
    int r = apply(&w, cur, all, ci);
    return w.oom ? -1 : r;
}
