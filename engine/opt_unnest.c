/*
 * opt_unnest.c — subqueries become joins.
 *
 * The binder leaves every subquery as a SUBQUERY expression over a bound
 * subplan; executed as written it would run once per outer row. Following
 * Neumann & Kemper, "Unnesting Arbitrary Queries" (BTW 2015), each one is
 * read as a dependent join between the operator's input (the outer side) and
 * the subplan, and the dependency is then removed so that an ordinary join
 * remains:
 *
 *   EXISTS          top-level conjunct: SEMI; under NOT: ANTI; elsewhere
 *                   (under OR, in a select list): MARK, the mark is the value
 *   x IN / cmp ANY  SEMI on x cmp col; elsewhere MARK (NULL-aware mark)
 *   NOT IN          ANTI when x and col can never be NULL, else MARK and
 *                   NOT mark, which gives SQL's NULL semantics
 *   cmp ALL         NOT (x negated-cmp ANY ...): ANTI or MARK as above
 *   scalar          SINGLE join (fails at run time on a second match); an
 *                   uncorrelated aggregate without GROUP BY has exactly one
 *                   row and becomes a plain CROSS join with it
 *
 * Removing the dependency. The free variables F of the subplan that the
 * outer side produces are pushed up, the paper's "the dependent join moves
 * down until nothing below depends on the outer side", done from the
 * predicates' end: every conjunct that reads F is lifted out of the subplan
 * through FILTER, PROJECT (which learns to pass the inner columns the
 * conjunct needs), SORT (dropped: a subquery has no order), DISTINCT and
 * inner joins, and becomes part of the join condition. An AGGREGATE on the
 * way may be crossed only by equalities f = x: x joins the GROUP BY
 * (the paper's Γ over D ⋈ R, with D's column replaced by the equal inner
 * column x — the "group by the correlation key and join" form, valid
 * because the join with the outer side on f = x keeps only groups whose key
 * is an outer value). A scalar aggregate without GROUP BY that gets grouped
 * this way is joined with LEFT instead of SINGLE and, for the count bug,
 * its value over an empty group (COUNT = 0, other aggregates NULL, pushed
 * through the projections above) is substituted when no group matched.
 *
 * When a correlated conjunct cannot be lifted (a non-equality under an
 * aggregate, correlation inside a LIMIT, a set operation, an outer join's
 * inner side), the magic set of the paper is used: D = DISTINCT(F) of the
 * outer side is joined into the subplan at its leaves that read F (see
 * magic_* below), the subplan then computes its result per D row and is
 * joined with the outer side on F = D (NULL-safe). What still cannot be
 * unnested (a LIMIT above a correlated part) stays a SUBQUERY expression.
 */
#include <string.h>

#include "engine/opt_int.h"

typedef struct unnester {
    sql_plan_ctx *ctx;
    bool oom;
    eng_padded *padded; /* where make_nullable records what it did */
} unnester;

static bool unnest_tree(unnester *u, sql_lop **slot);

/* ----------------------------------------------------------- lifting -- */

/* State of one lifting attempt over a subplan. */
typedef struct lift {
    unnester *u;
    const eng_idset *F; /* the outer ids to free the subplan from */
    bool apply;         /* false: only check that lifting is possible */
    sql_subquery_kind kind;
    eng_conj preds;      /* lifted conjuncts (apply mode) */
    eng_conj eq_outer;   /* below an aggregate: f of each lifted f = x ... */
    eng_conj eq_inner;   /* ... and x */
    bool regrouped;      /* an aggregate without GROUP BY got grouped */
    sql_colid group_key; /* a key added to that aggregate */
} lift;

static bool refs_of(unnester *u, const sql_bexpr *e, eng_idset *s)
{
    eng_idset_init(s);
    if (!eng_expr_refs(u->ctx, e, s)) {
        u->oom = true;
        return false;
    }
    return true;
}

static bool depends(unnester *u, const sql_lop *op, const eng_idset *F)
{
    eng_idset fr;
    eng_idset_init(&fr);
    if (!eng_lop_free(u->ctx, op, &fr)) {
        u->oom = true;
        return true;
    }
    return eng_idset_intersects(&fr, F);
}

/* For `f = x` with f reading only F and x only inner ids: the two sides. */
static bool split_equality(unnester *u, sql_bexpr *c, const eng_idset *F, sql_bexpr **outer,
                           sql_bexpr **inner)
{
    if (c->kind != SQL_BEXPR_OP || c->op.op != SQL_OP_EQ) return false;
    for (int side = 0; side < 2; side++) {
        sql_bexpr *o = c->op.args[side], *i = c->op.args[1 - side];
        eng_idset ro, ri;
        if (!refs_of(u, o, &ro) || !refs_of(u, i, &ri)) return false;
        if (!eng_idset_empty(&ro) && eng_idset_subset(&ro, F) && !eng_idset_empty(&ri) &&
            !eng_idset_intersects(&ri, F) && !eng_expr_has_subquery(i)) {
            *outer = o;
            *inner = i;
            return true;
        }
    }
    return false;
}

/* Lifts the correlated conjuncts out of pred (a filter's predicate or an
 * inner join's condition); the remaining conjunction goes to *rest. */
static bool lift_conjuncts(lift *L, sql_bexpr *pred, bool below_agg, sql_bexpr **rest)
{
    sql_plan_ctx *ctx = L->u->ctx;
    eng_conj all = {0}, keep = {0};
    if (!eng_conj_split(ctx, &all, pred)) return !(L->u->oom = true);
    for (uint32_t i = 0; i < all.count; i++) {
        sql_bexpr *c = all.items[i];
        eng_idset r;
        if (!refs_of(L->u, c, &r)) return false;
        if (!eng_idset_intersects(&r, L->F)) {
            if (L->apply && !eng_conj_push(ctx, &keep, c)) return !(L->u->oom = true);
            continue;
        }
        if (eng_expr_has_subquery(c)) return false;
        if (below_agg) {
            sql_bexpr *o, *x;
            if (!split_equality(L->u, c, L->F, &o, &x)) return false;
            if (L->apply &&
                (!eng_conj_push(ctx, &L->eq_outer, o) || !eng_conj_push(ctx, &L->eq_inner, x)))
                return !(L->u->oom = true);
        } else if (L->apply && !eng_conj_push(ctx, &L->preds, c)) {
            return !(L->u->oom = true);
        }
    }
    if (L->apply) {
        bool oom = false;
        *rest = eng_conj_and(ctx, &keep, &oom);
        if (oom) return !(L->u->oom = true);
    }
    return true;
}

/* Makes a PROJECT pass the inner ids the lifted conjuncts (and, below an
 * aggregate, the future group keys) read. */
static bool project_pass_needed(lift *L, sql_lop *p)
{
    sql_plan_ctx *ctx = L->u->ctx;
    eng_idset need, have, in;
    eng_idset_init(&need);
    eng_idset_init(&have);
    eng_idset_init(&in);
    for (uint32_t i = 0; i < L->preds.count; i++)
        if (!eng_expr_refs(ctx, L->preds.items[i], &need)) return !(L->u->oom = true);
    for (uint32_t i = 0; i < L->eq_inner.count; i++)
        if (!eng_expr_refs(ctx, L->eq_inner.items[i], &need)) return !(L->u->oom = true);
    if (!eng_idset_of_out(ctx, &have, p) || !eng_idset_of_out(ctx, &in, p->left))
        return !(L->u->oom = true);
    uint32_t add = 0;
    sql_colid *ids = sql_arena_alloc(ctx->arena, (p->left->nout + 1) * sizeof(sql_colid));
    if (!ids) return !(L->u->oom = true);
    for (uint32_t i = 0; i < p->left->nout; i++) {
        sql_colid id = p->left->out[i];
        if (eng_idset_has(&need, id) && !eng_idset_has(&have, id)) ids[add++] = id;
    }
    if (!add) return true;
    sql_proj_item *items =
        sql_arena_alloc(ctx->arena, (p->project.count + add) * sizeof(sql_proj_item));
    if (!items) return !(L->u->oom = true);
    if (p->project.count) memcpy(items, p->project.items, p->project.count * sizeof(sql_proj_item));
    for (uint32_t i = 0; i < add; i++) {
        items[p->project.count + i].id = ids[i];
        items[p->project.count + i].expr = sql_bexpr_column(ctx, ids[i], 0);
        if (!items[p->project.count + i].expr) return !(L->u->oom = true);
    }
    p->project.items = items;
    p->project.count += add;
    return eng_lop_recompute_out(ctx, p) || !(L->u->oom = true);
}

/* Adds the lifted equalities' inner sides to an aggregate's GROUP BY and
 * turns them into conjuncts f = key over the aggregate's output. */
static bool regroup(lift *L, sql_lop *agg)
{
    sql_plan_ctx *ctx = L->u->ctx;
    uint32_t n = L->eq_inner.count;
    sql_proj_item *groups =
        sql_arena_alloc(ctx->arena, (agg->aggregate.ngroups + n) * sizeof(sql_proj_item));
    if (!groups) return !(L->u->oom = true);
    if (agg->aggregate.ngroups)
        memcpy(groups, agg->aggregate.groups, agg->aggregate.ngroups * sizeof(sql_proj_item));
    if (agg->aggregate.ngroups == 0) L->regrouped = true;
    uint32_t ng = agg->aggregate.ngroups;
    for (uint32_t i = 0; i < n; i++) {
        sql_bexpr *x = L->eq_inner.items[i];
        sql_colid id = 0;
        for (uint32_t g = 0; g < ng; g++)
            if (sql_bexpr_equal(groups[g].expr, x)) id = groups[g].id;
        if (!id) {
            id = x->kind == SQL_BEXPR_COLUMN ? x->column
                                             : sql_plan_new_col(ctx, x->type, x->nullable, "key");
            if (!id) return !(L->u->oom = true);
            groups[ng].expr = x;
            groups[ng++].id = id;
        }
        if (!L->group_key) L->group_key = id;
        sql_bexpr *key = sql_bexpr_column(ctx, id, 0);
        sql_bexpr *o = sql_bexpr_copy(ctx, L->eq_outer.items[i]);
        sql_bexpr *eq = sql_bexpr_op(ctx, SQL_OP_EQ, sto_type_make(STO_TYPE_BOOLEAN), o, key, 0);
        if (!eq || !eng_conj_push(ctx, &L->preds, eq)) return !(L->u->oom = true);
    }
    agg->aggregate.groups = groups;
    agg->aggregate.ngroups = ng;
    L->eq_inner.count = L->eq_outer.count = 0;
    return eng_lop_recompute_out(ctx, agg) || !(L->u->oom = true);
}

/* Lifts every conjunct reading F out of the tree at *slot. In check mode
 * nothing changes and the answer says whether apply mode will succeed. */
static bool lift_rec(lift *L, sql_lop **slot, bool below_agg, bool seen_filter)
{
    sql_lop *op = *slot;
    if (!depends(L->u, op, L->F)) return !L->u->oom;
    sql_plan_ctx *ctx = L->u->ctx;
    switch (op->kind) {
    case SQL_LOP_FILTER: {
        if (!lift_rec(L, &op->left, below_agg, true)) return false;
        sql_bexpr *rest = NULL;
        if (!lift_conjuncts(L, op->filter.pred, below_agg, &rest)) return false;
        if (L->apply) {
            if (rest)
                op->filter.pred = rest;
            else
                *slot = op->left;
        }
        break;
    }
    case SQL_LOP_PROJECT:
        for (uint32_t i = 0; i < op->project.count; i++) {
            eng_idset r;
            if (!refs_of(L->u, op->project.items[i].expr, &r)) return false;
            if (eng_idset_intersects(&r, L->F)) return false;
        }
        if (!lift_rec(L, &op->left, below_agg, seen_filter)) return false;
        if (L->apply && !project_pass_needed(L, op)) return false;
        break;
    case SQL_LOP_SORT:
        if (!lift_rec(L, &op->left, below_agg, seen_filter)) return false;
        if (L->apply) *slot = op->left;
        return true;
    case SQL_LOP_DISTINCT:
        if (!lift_rec(L, &op->left, below_agg, seen_filter)) return false;
        break;
    case SQL_LOP_JOIN: {
        sql_join_kind k = op->join.kind;
        if (k == SQL_JOINK_INNER || k == SQL_JOINK_CROSS) {
            if (!lift_rec(L, &op->left, below_agg, seen_filter) ||
                !lift_rec(L, &op->right, below_agg, seen_filter))
                return false;
            if (op->join.cond) {
                sql_bexpr *rest = NULL;
                if (!lift_conjuncts(L, op->join.cond, below_agg, &rest)) return false;
                if (L->apply) op->join.cond = rest;
            }
        } else if (k == SQL_JOINK_FULL || k == SQL_JOINK_RIGHT) {
            return false;
        } else {
            eng_idset r;
            if (!refs_of(L->u, op->join.cond, &r)) return false;
            if (eng_idset_intersects(&r, L->F) || depends(L->u, op->right, L->F)) return false;
            if (!lift_rec(L, &op->left, below_agg, seen_filter)) return false;
        }
        break;
    }
    case SQL_LOP_AGGREGATE:
        /* Only a scalar subquery's aggregate, reached through projections
         * (a HAVING above a scalar aggregate would change the empty-group
         * value that the count-bug fix computes). */
        if (below_agg || L->kind != SQL_SUBQ_SCALAR) return false;
        if (op->aggregate.ngroups == 0 && seen_filter) return false;
        for (uint32_t i = 0; i < op->aggregate.ngroups; i++) {
            eng_idset r;
            if (!refs_of(L->u, op->aggregate.groups[i].expr, &r)) return false;
            if (eng_idset_intersects(&r, L->F)) return false;
        }
        for (uint32_t i = 0; i < op->aggregate.naggs; i++) {
            eng_idset r;
            if (!refs_of(L->u, op->aggregate.aggs[i].arg, &r)) return false;
            if (eng_idset_intersects(&r, L->F)) return false;
        }
        if (!lift_rec(L, &op->left, true, seen_filter)) return false;
        if (L->apply && !regroup(L, op)) return false;
        break;
    default:
        return false;
    }
    if (L->apply && !eng_lop_recompute_out(ctx, *slot)) return !(L->u->oom = true);
    return true;
}

/* ------------------------------------------------------ count bug -- */

/* The value of the subplan's column `col` when its aggregate (without
 * GROUP BY) sees no rows: COUNT is 0, other aggregates NULL, carried
 * through the projections above the aggregate. NULL when not computable. */
static sql_bexpr *empty_group_value(unnester *u, const sql_lop *op, sql_colid col)
{
    sql_plan_ctx *ctx = u->ctx;
    sql_bexpr *e = sql_bexpr_column(ctx, col, 0);
    uint32_t nmap = ctx->ncols + 1;
    sql_bexpr **map = sql_arena_alloc(ctx->arena, nmap * sizeof(*map));
    if (!e || !map) return NULL;
    while (op && op->kind != SQL_LOP_AGGREGATE) {
        if (op->kind == SQL_LOP_PROJECT) {
            memset(map, 0, nmap * sizeof(*map));
            for (uint32_t i = 0; i < op->project.count; i++)
                if (op->project.items[i].id < nmap)
                    map[op->project.items[i].id] = op->project.items[i].expr;
            e = eng_expr_subst(ctx, e, map, nmap);
            if (!e) return NULL;
        } else if (op->kind != SQL_LOP_SORT && op->kind != SQL_LOP_DISTINCT) {
            return NULL;
        }
        op = op->left;
    }
    if (!op) return NULL;
    memset(map, 0, nmap * sizeof(*map));
    for (uint32_t i = 0; i < op->aggregate.naggs; i++) {
        const sql_agg_item *a = &op->aggregate.aggs[i];
        const sql_col_info *ci = sql_plan_col(ctx, a->id);
        sql_bexpr *v = sql_bexpr_null(ctx, ci->type, 0);
        if (!v) return NULL;
        if (a->func == SQL_AGG_COUNT || a->func == SQL_AGG_COUNT_STAR) {
            v->value.is_null = false;
            v->value.v.i64 = 0;
            v->nullable = false;
        }
        map[a->id] = v;
    }
    e = eng_expr_subst(ctx, e, map, nmap);
    return e ? eng_opt_fold_expr(ctx, e) : NULL;
}

/* CASE WHEN key IS NULL THEN empty ELSE col END. */
static sql_bexpr *count_bug_case(unnester *u, sql_colid key, sql_bexpr *empty, sql_colid col)
{
    sql_plan_ctx *ctx = u->ctx;
    const sql_col_info *ci = sql_plan_col(ctx, col);
    sql_bexpr *c = sql_bexpr_new(ctx, SQL_BEXPR_CASE, ci->type, true, 0);
    sql_bexpr **conds = sql_arena_alloc(ctx->arena, sizeof(sql_bexpr *));
    sql_bexpr **results = sql_arena_alloc(ctx->arena, sizeof(sql_bexpr *));
    if (!c || !conds || !results) return NULL;
    conds[0] = eng_expr_is_null(ctx, sql_bexpr_column(ctx, key, 0), false);
    results[0] = empty;
    c->case_.conds.count = c->case_.results.count = 1;
    c->case_.conds.items = conds;
    c->case_.results.items = results;
    c->case_.else_result = sql_bexpr_column(ctx, col, 0);
    if (!conds[0] || !c->case_.else_result) return NULL;
    return c;
}

/* ------------------------------------------------------- magic set -- */

/* The general case of the paper: the dependent join D ⋈ T is pushed down
 * through T. magic_push returns T' computing, for every row of D, T's rows
 * with F read from D's copy of the columns (map: outer id → D's id), T'
 * outputs D's ids besides T's. Supported operators: FILTER, PROJECT,
 * AGGREGATE, DISTINCT, SORT (dropped), inner and one-sided joins, set
 * operations (D pushed into both sides); a subtree
 * that does not depend on F is joined with D by a cross product. */
typedef struct magic {
    unnester *u;
    const eng_idset *F;
    uint32_t nf;
    sql_colid *outer_ids; /* f_i */
    sql_lop *D;           /* DISTINCT over the outer side, fresh ids d_i */
    sql_colid *d_ids;
    sql_bexpr **map; /* f id → COLUMN(d_i) */
    uint32_t nmap;
    sql_lop *outer;   /* the outer side D is computed from */
    bool copy_failed; /* the outer side could not be copied */
} magic;

static sql_lop *magic_copy_D(magic *m, sql_colid **ids);

/* Rewrites the free references to F in every expression of op to D's ids. */
static bool magic_subst_op(magic *m, sql_lop *op)
{
    sql_plan_ctx *ctx = m->u->ctx;
#define SUBST(slot)                                                                                \
    do {                                                                                           \
        if (slot) {                                                                                \
            sql_bexpr *n_ = eng_expr_subst(ctx, slot, m->map, m->nmap);                            \
            if (!n_) return !(m->u->oom = true);                                                   \
            slot = n_;                                                                             \
        }                                                                                          \
    } while (0)
    switch (op->kind) {
    case SQL_LOP_FILTER:
        SUBST(op->filter.pred);
        break;
    case SQL_LOP_PROJECT:
        for (uint32_t i = 0; i < op->project.count; i++)
            SUBST(op->project.items[i].expr);
        break;
    case SQL_LOP_JOIN:
        SUBST(op->join.cond);
        break;
    case SQL_LOP_AGGREGATE:
        for (uint32_t i = 0; i < op->aggregate.ngroups; i++)
            SUBST(op->aggregate.groups[i].expr);
        for (uint32_t i = 0; i < op->aggregate.naggs; i++)
            SUBST(op->aggregate.aggs[i].arg);
        break;
    default:
        break;
    }
#undef SUBST
    return true;
}

static bool magic_push(magic *m, sql_lop **slot);

/* Equality of two D copies' ids, NULL-safe when the column may be NULL. */
static sql_bexpr *d_equal(magic *m, sql_colid a, sql_colid b)
{
    sql_plan_ctx *ctx = m->u->ctx;
    sql_bexpr *ea = sql_bexpr_column(ctx, a, 0), *eb = sql_bexpr_column(ctx, b, 0);
    sql_bexpr *eq = sql_bexpr_op(ctx, SQL_OP_EQ, sto_type_make(STO_TYPE_BOOLEAN), ea, eb, 0);
    if (!eq || !sql_plan_col(ctx, a)->nullable) return eq;
    sql_bexpr *both_null =
        eng_expr_and(ctx, eng_expr_is_null(ctx, sql_bexpr_column(ctx, a, 0), false),
                     eng_expr_is_null(ctx, sql_bexpr_column(ctx, b, 0), false));
    return sql_bexpr_op(ctx, SQL_OP_OR, sto_type_make(STO_TYPE_BOOLEAN), eq, both_null, 0);
}

/* A set operation over D: D ⋈ (A op B) = (D ⋈ A) op (D ⋈ B) when D's
 * columns take part in the set comparison (D is distinct, so every d keeps
 * its own set). Each side gets its own copy of D (ids stay unique) and ends
 * in a projection that puts the copy's ids after its own columns, since
 * set-operation inputs are positional; the SETOP then outputs the ids the
 * layers above know. */
static bool magic_push_setop(magic *m, sql_lop *op)
{
    sql_plan_ctx *ctx = m->u->ctx;
    uint32_t n = op->nout;
    sql_colid *saved = m->d_ids;
    sql_lop *savedD = m->D;
    sql_lop **sides[2] = {&op->left, &op->right};
    bool ok = true;
    for (int s = 0; ok && s < 2; s++) {
        sql_colid *keep = sql_arena_alloc(ctx->arena, (n + 1) * sizeof(sql_colid));
        sql_colid *d = NULL;
        sql_lop *D = keep ? magic_copy_D(m, &d) : NULL;
        if (!D) {
            m->u->oom = m->u->oom || !keep;
            ok = false;
            break;
        }
        memcpy(keep, (*sides[s])->out, n * sizeof(sql_colid));
        m->D = D;
        m->d_ids = d;
        for (uint32_t i = 0; i < m->nf; i++)
            m->map[m->outer_ids[i]] = sql_bexpr_column(ctx, d[i], 0);
        if (!magic_push(m, sides[s])) {
            ok = false;
            break;
        }
        sql_lop *p = sql_lop_new(ctx, SQL_LOP_PROJECT, *sides[s], NULL, 0);
        sql_proj_item *items = sql_arena_alloc(ctx->arena, (n + m->nf) * sizeof(sql_proj_item));
        ok = p && items;
        for (uint32_t i = 0; ok && i < n + m->nf; i++) {
            items[i].id = i < n ? keep[i] : d[i - n];
            ok = (items[i].expr = sql_bexpr_column(ctx, items[i].id, 0)) != NULL;
        }
        if (ok) {
            p->project.count = n + m->nf;
            p->project.items = items;
            ok = eng_lop_recompute_out(ctx, p);
            *sides[s] = p;
        }
        if (!ok) m->u->oom = true;
    }
    m->D = savedD;
    m->d_ids = saved;
    for (uint32_t i = 0; i < m->nf; i++)
        m->map[m->outer_ids[i]] = sql_bexpr_column(ctx, saved[i], 0);
    if (!ok) return false;
    sql_colid *out = sql_arena_alloc(ctx->arena, (n + m->nf) * sizeof(sql_colid));
    if (!out) return !(m->u->oom = true);
    memcpy(out, op->out, n * sizeof(sql_colid));
    memcpy(out + n, saved, m->nf * sizeof(sql_colid));
    op->out = out;
    op->nout = n + m->nf;
    return true;
}

static bool magic_push(magic *m, sql_lop **slot)
{
    sql_plan_ctx *ctx = m->u->ctx;
    sql_lop *op = *slot;
    if (!depends(m->u, op, m->F)) {
        if (m->u->oom) return false;
        sql_lop *j = eng_lop_join(ctx, SQL_JOINK_CROSS, m->D, op, NULL);
        if (!j) return !(m->u->oom = true);
        *slot = j;
        return true;
    }
    switch (op->kind) {
    case SQL_LOP_FILTER:
    case SQL_LOP_DISTINCT:
        if (!magic_push(m, &op->left)) return false;
        break;
    case SQL_LOP_SORT:
        if (!magic_push(m, &op->left)) return false;
        *slot = op->left;
        return true;
    case SQL_LOP_PROJECT: {
        if (!magic_push(m, &op->left)) return false;
        sql_proj_item *items =
            sql_arena_alloc(ctx->arena, (op->project.count + m->nf) * sizeof(sql_proj_item));
        if (!items) return !(m->u->oom = true);
        if (op->project.count)
            memcpy(items, op->project.items, op->project.count * sizeof(sql_proj_item));
        for (uint32_t i = 0; i < m->nf; i++) {
            items[op->project.count + i].id = m->d_ids[i];
            items[op->project.count + i].expr = sql_bexpr_column(ctx, m->d_ids[i], 0);
            if (!items[op->project.count + i].expr) return !(m->u->oom = true);
        }
        op->project.items = items;
        op->project.count += m->nf;
        break;
    }
    case SQL_LOP_AGGREGATE: {
        if (!magic_push(m, &op->left)) return false;
        bool scalar = op->aggregate.ngroups == 0;
        sql_proj_item *groups =
            sql_arena_alloc(ctx->arena, (op->aggregate.ngroups + m->nf) * sizeof(sql_proj_item));
        if (!groups) return !(m->u->oom = true);
        if (op->aggregate.ngroups)
            memcpy(groups, op->aggregate.groups, op->aggregate.ngroups * sizeof(sql_proj_item));
        for (uint32_t i = 0; i < m->nf; i++) {
            groups[op->aggregate.ngroups + i].id = m->d_ids[i];
            groups[op->aggregate.ngroups + i].expr = sql_bexpr_column(ctx, m->d_ids[i], 0);
            if (!groups[op->aggregate.ngroups + i].expr) return !(m->u->oom = true);
        }
        op->aggregate.groups = groups;
        op->aggregate.ngroups += m->nf;
        if (!magic_subst_op(m, op) || !eng_lop_recompute_out(ctx, op)) return false;
        if (scalar) {
            /* Count bug: every D row needs its group, empty or not. The
             * aggregate now outputs D's ids under fresh names; a LEFT join
             * from a fresh copy of D brings back the empty groups, whose
             * COUNTs are then 0. */
            sql_colid *dn;
            sql_lop *D2 = magic_copy_D(m, &dn);
            if (!D2) return false;
            sql_bexpr *cond = NULL;
            for (uint32_t i = 0; i < m->nf; i++) {
                cond = eng_expr_and(ctx, cond, d_equal(m, dn[i], m->d_ids[i]));
                if (!cond) return !(m->u->oom = true);
            }
            sql_lop *lj = eng_lop_join(ctx, SQL_JOINK_LEFT, D2, op, cond);
            if (!lj) return !(m->u->oom = true);
            uint32_t n = op->nout;
            sql_lop *p = sql_lop_new(ctx, SQL_LOP_PROJECT, lj, NULL, 0);
            sql_proj_item *items = sql_arena_alloc(ctx->arena, n * sizeof(sql_proj_item));
            if (!p || !items) return !(m->u->oom = true);
            for (uint32_t i = 0; i < n; i++) {
                sql_colid id = op->out[i];
                sql_bexpr *e = sql_bexpr_column(ctx, id, 0);
                for (uint32_t k = 0; k < m->nf; k++)
                    if (id == m->d_ids[k]) e = sql_bexpr_column(ctx, dn[k], 0);
                for (uint32_t a = 0; a < op->aggregate.naggs; a++) {
                    const sql_agg_item *ai = &op->aggregate.aggs[a];
                    if (ai->id != id) continue;
                    sql_plan_col(ctx, id)->nullable = true;
                    if (ai->func == SQL_AGG_COUNT || ai->func == SQL_AGG_COUNT_STAR) {
                        sql_bexpr *zero = sql_bexpr_null(ctx, sql_plan_col(ctx, id)->type, 0);
                        sql_bexpr *f = sql_bexpr_new(ctx, SQL_BEXPR_FUNC,
                                                     sql_plan_col(ctx, id)->type, false, 0);
                        sql_bexpr **args = sql_arena_alloc(ctx->arena, 2 * sizeof(sql_bexpr *));
                        if (!zero || !f || !args) return !(m->u->oom = true);
                        zero->value.is_null = false;
                        zero->value.v.i64 = 0;
                        zero->nullable = false;
                        args[0] = sql_bexpr_column(ctx, id, 0);
                        args[1] = zero;
                        f->func.id = SQL_FUNC_COALESCE;
                        f->func.args.count = 2;
                        f->func.args.items = args;
                        e = f;
                    }
                }
                /* The projection re-exposes D's columns under the ids the
                 * layers above know. */
                items[i].expr = e;
                items[i].id = id;
                if (!e) return !(m->u->oom = true);
            }
            /* The aggregate's own D output gets fresh ids so that ids stay
             * unique in the plan. */
            for (uint32_t k = 0; k < m->nf; k++) {
                sql_colid fresh = sql_plan_new_col(ctx, sql_plan_col(ctx, m->d_ids[k])->type,
                                                   sql_plan_col(ctx, m->d_ids[k])->nullable, "d");
                if (!fresh) return !(m->u->oom = true);
                op->aggregate.groups[op->aggregate.ngroups - m->nf + k].id = fresh;
                eng_expr_rename(cond, m->d_ids[k], fresh);
            }
            if (!eng_lop_recompute_out(ctx, op) || !eng_lop_recompute_out(ctx, lj))
                return !(m->u->oom = true);
            p->project.items = items;
            p->project.count = n;
            if (!eng_lop_recompute_out(ctx, p)) return !(m->u->oom = true);
            *slot = p;
            return true;
        }
        return true;
    }
    case SQL_LOP_JOIN: {
        sql_join_kind k = op->join.kind;
        bool ldep = depends(m->u, op->left, m->F), rdep = depends(m->u, op->right, m->F);
        if (k == SQL_JOINK_INNER || k == SQL_JOINK_CROSS) {
            if (ldep && rdep) {
                /* D joins both sides; the sides meet on D's columns. */
                if (!magic_push(m, &op->left)) return false;
                sql_colid *saved = m->d_ids;
                sql_colid *d2;
                sql_lop *savedD = m->D;
                sql_lop *D2 = magic_copy_D(m, &d2);
                if (!D2) return false;
                m->D = D2;
                m->d_ids = d2;
                for (uint32_t i = 0; i < m->nf; i++)
                    m->map[m->outer_ids[i]] = sql_bexpr_column(ctx, d2[i], 0);
                bool ok = magic_push(m, &op->right);
                sql_bexpr *cond = op->join.cond;
                for (uint32_t i = 0; ok && i < m->nf; i++)
                    cond = eng_expr_and(ctx, cond, d_equal(m, saved[i], d2[i]));
                m->D = savedD;
                m->d_ids = saved;
                for (uint32_t i = 0; i < m->nf; i++)
                    m->map[m->outer_ids[i]] = sql_bexpr_column(ctx, saved[i], 0);
                if (!ok) return false;
                if (!cond) return !(m->u->oom = true);
                op->join.cond = cond;
                op->join.kind = SQL_JOINK_INNER;
            } else if (ldep) {
                if (!magic_push(m, &op->left)) return false;
            } else {
                if (!magic_push(m, &op->right)) return false;
            }
        } else if (k == SQL_JOINK_LEFT || k == SQL_JOINK_SEMI || k == SQL_JOINK_ANTI ||
                   k == SQL_JOINK_MARK || k == SQL_JOINK_SINGLE) {
            /* The outer side keeps every row: D goes there (crossed with it
             * when only the condition reads F), never into the right. */
            if (rdep) return false;
            if (!magic_push(m, &op->left)) return false;
        } else {
            return false;
        }
        break;
    }
    case SQL_LOP_SETOP:
        return magic_push_setop(m, op);
    default:
        return false;
    }
    if (!magic_subst_op(m, op)) return false;
    return eng_lop_recompute_out(ctx, op) || !(m->u->oom = true);
}

/* Can magic_push handle the tree? (It changes the tree, so it is checked
 * first.) */
static bool magic_ok(magic *m, const sql_lop *op)
{
    if (!depends(m->u, op, m->F)) return true;
    switch (op->kind) {
    case SQL_LOP_FILTER:
    case SQL_LOP_DISTINCT:
    case SQL_LOP_SORT:
    case SQL_LOP_PROJECT:
    case SQL_LOP_AGGREGATE:
        return magic_ok(m, op->left);
    case SQL_LOP_SETOP:
        return magic_ok(m, op->left) && magic_ok(m, op->right);
    case SQL_LOP_JOIN:
        switch (op->join.kind) {
        case SQL_JOINK_INNER:
        case SQL_JOINK_CROSS:
            return magic_ok(m, op->left) && magic_ok(m, op->right);
        case SQL_JOINK_LEFT:
        case SQL_JOINK_SEMI:
        case SQL_JOINK_ANTI:
        case SQL_JOINK_MARK:
        case SQL_JOINK_SINGLE:
            return !depends(m->u, op->right, m->F) && magic_ok(m, op->left);
        default:
            return false;
        }
    default:
        return false;
    }
}

/* A fresh D: DISTINCT over the F columns of a fresh copy of the outer
 * side, under new ids. */
static sql_lop *magic_copy_D(magic *m, sql_colid **ids)
{
    sql_plan_ctx *ctx = m->u->ctx;
    uint32_t nmap = ctx->ncols + 1;
    sql_bexpr **map = sql_arena_alloc(ctx->arena, nmap * sizeof(sql_bexpr *));
    sql_proj_item *items = sql_arena_alloc(ctx->arena, m->nf * sizeof(sql_proj_item));
    sql_colid *d = sql_arena_alloc(ctx->arena, m->nf * sizeof(sql_colid));
    sql_lop *base = map && items && d ? eng_lop_copy_fresh(ctx, m->outer, map, nmap) : NULL;
    sql_lop *p = base ? sql_lop_new(ctx, SQL_LOP_PROJECT, base, NULL, 0) : NULL;
    if (!p) {
        m->u->oom = m->u->oom || sql_arena_failed(ctx->arena);
        m->copy_failed = true;
        return NULL;
    }
    for (uint32_t i = 0; i < m->nf; i++) {
        const sql_col_info *ci = sql_plan_col(ctx, m->outer_ids[i]);
        d[i] = sql_plan_new_col(ctx, ci->type, ci->nullable, ci->name);
        items[i].id = d[i];
        items[i].expr = sql_bexpr_copy(ctx, map[m->outer_ids[i]]);
        if (!d[i] || !items[i].expr) {
            m->u->oom = true;
            return NULL;
        }
    }
    p->project.count = m->nf;
    p->project.items = items;
    sql_lop *dist = sql_lop_new(ctx, SQL_LOP_DISTINCT, p, NULL, 0);
    if (!dist || !eng_lop_recompute_out(ctx, p) || !eng_lop_recompute_out(ctx, dist)) {
        m->u->oom = true;
        return NULL;
    }
    *ids = d;
    return dist;
}

/* Decorrelates R against the outer side `outer` with the magic set. On
 * success R outputs D's ids too and *preds holds F = D (NULL-safe). D is
 * computed from a copy of the outer side under fresh ids: the plan stays a
 * tree, at the price of evaluating the outer side twice. */
static int magic_decorrelate(unnester *u, sql_lop *outer, sql_lop **R, const eng_idset *F,
                             eng_conj *preds)
{
    sql_plan_ctx *ctx = u->ctx;
    magic m = {u, F, 0, NULL, NULL, NULL, NULL, 0, outer, false};
    m.outer_ids = sql_arena_alloc(ctx->arena, (outer->nout + 1) * sizeof(sql_colid));
    m.nmap = ctx->ncols + 1;
    m.map = sql_arena_alloc(ctx->arena, (ctx->ncols + 1 + 64) * sizeof(sql_bexpr *));
    if (!m.outer_ids || !m.map) return -1;
    for (uint32_t i = 0; i < outer->nout; i++)
        if (eng_idset_has(F, outer->out[i])) m.outer_ids[m.nf++] = outer->out[i];
    if (!magic_ok(&m, *R)) return u->oom ? -1 : 0;
    sql_lop *D = magic_copy_D(&m, &m.d_ids);
    if (!D) return m.u->oom ? -1 : 0;
    m.D = D;
    for (uint32_t i = 0; i < m.nf; i++) {
        m.map[m.outer_ids[i]] = sql_bexpr_column(ctx, m.d_ids[i], 0);
        if (!m.map[m.outer_ids[i]]) return -1;
    }
    if (!magic_push(&m, R)) return u->oom ? -1 : 0;
    for (uint32_t i = 0; i < m.nf; i++)
        if (!eng_conj_push(ctx, preds, d_equal(&m, m.outer_ids[i], m.d_ids[i]))) return -1;
    return 1;
}

/* ------------------------------------------------- subquery → join -- */

typedef struct prepared {
    sql_lop *plan;
    eng_conj preds; /* the join condition's correlation part */
    bool correlated;
    bool has_free;  /* the subplan reads columns of some outer query */
    bool regrouped; /* scalar aggregate grouped by the correlation keys */
    sql_colid group_key;
    sql_bexpr *empty; /* regrouped: value over an empty group, NULL if NULL */
} prepared;

/* 1: prepared; 0: cannot be unnested (left in place); -1: out of memory. */
static int prepare(unnester *u, sql_lop *outer, sql_bexpr *sq, prepared *p)
{
    sql_plan_ctx *ctx = u->ctx;
    memset(p, 0, sizeof(*p));
    if (!unnest_tree(u, &sq->subquery.plan)) return -1;
    eng_idset fr, out, F;
    eng_idset_init(&fr);
    eng_idset_init(&out);
    eng_idset_init(&F);
    if (!eng_lop_free(ctx, sq->subquery.plan, &fr) || !eng_idset_of_out(ctx, &out, outer))
        return -1;
    for (uint32_t i = 0; i < outer->nout; i++)
        if (eng_idset_has(&fr, outer->out[i]) && !eng_idset_add(ctx, &F, outer->out[i])) return -1;
    p->plan = sq->subquery.plan;
    p->has_free = !eng_idset_empty(&fr);
    if (!p->has_free) return 1;
    /* Lift every correlated conjunct, also those reading a query further
     * out (they become part of this join's condition, where that query's
     * own unnesting finds them); failing that, those of this level. */
    for (int attempt = 0; attempt < 2; attempt++) {
        const eng_idset *vars = attempt == 0 ? &fr : &F;
        if (attempt == 1 && (eng_idset_empty(&F) || eng_idset_subset(&fr, &F))) break;
        lift L = {.u = u, .F = vars, .apply = false, .kind = sq->subquery.kind};
        bool can = lift_rec(&L, &p->plan, false, false);
        if (u->oom) return -1;
        if (!can) continue;
        /* The count-bug value is read before lifting reshapes the plan. */
        sql_bexpr *empty = NULL;
        if (sq->subquery.kind == SQL_SUBQ_SCALAR) {
            empty = empty_group_value(u, p->plan, sq->subquery.col);
            if (u->oom) return -1;
        }
        L.apply = true;
        if (!lift_rec(&L, &p->plan, false, false)) return u->oom ? -1 : 0;
        if (depends(u, p->plan, &F)) return u->oom ? -1 : 0;
        sq->subquery.plan = p->plan;
        p->preds = L.preds;
        p->regrouped = L.regrouped;
        p->group_key = L.group_key;
        p->correlated = L.preds.count > 0 || L.regrouped;
        if (empty && !(empty->kind == SQL_BEXPR_CONST && empty->value.is_null)) p->empty = empty;
        return 1;
    }
    /* Correlated only with a query further out: an ordinary join here. */
    if (eng_idset_empty(&F)) return 1;
    p->correlated = true;
    int r = magic_decorrelate(u, outer, &p->plan, &F, &p->preds);
    if (r == 1) sq->subquery.plan = p->plan;
    return r;
}

static sql_op negate_cmp(sql_op op)
{
    switch (op) {
    case SQL_OP_EQ:
        return SQL_OP_NE;
    case SQL_OP_NE:
        return SQL_OP_EQ;
    case SQL_OP_LT:
        return SQL_OP_GE;
    case SQL_OP_GE:
        return SQL_OP_LT;
    case SQL_OP_LE:
        return SQL_OP_GT;
    default:
        return SQL_OP_LE;
    }
}

static sql_bexpr *compare(unnester *u, const sql_bexpr *sq, sql_op cmp)
{
    sql_plan_ctx *ctx = u->ctx;
    sql_bexpr *l = sql_bexpr_copy(ctx, sq->subquery.left);
    sql_bexpr *r = sql_bexpr_column(ctx, sq->subquery.col, 0);
    return sql_bexpr_op(ctx, cmp, sto_type_make(STO_TYPE_BOOLEAN), l, r, 0);
}

/* The correlation conjuncts; for a MARK join NULL ones count as false
 * (COALESCE(p, FALSE)), so that only the quantified comparison itself can
 * make the mark NULL. */
static sql_bexpr *corr_cond(unnester *u, const prepared *p, bool for_mark)
{
    sql_plan_ctx *ctx = u->ctx;
    sql_bexpr *c = NULL;
    for (uint32_t i = 0; i < p->preds.count; i++) {
        sql_bexpr *x = p->preds.items[i];
        eng_expr_refresh_nullable(ctx, x);
        if (for_mark && x->nullable) {
            sql_bexpr *f =
                sql_bexpr_new(ctx, SQL_BEXPR_FUNC, sto_type_make(STO_TYPE_BOOLEAN), false, 0);
            sql_bexpr **args = sql_arena_alloc(ctx->arena, 2 * sizeof(sql_bexpr *));
            if (!f || !args) return NULL;
            args[0] = x;
            args[1] = eng_bool_const(ctx, false);
            f->func.id = SQL_FUNC_COALESCE;
            f->func.args.count = 2;
            f->func.args.items = args;
            x = f;
        }
        c = eng_expr_and(ctx, c, x);
        if (!c) return NULL;
    }
    return c;
}

/* The right side of a SINGLE/LEFT join is padded with NULLs: its ids become
 * nullable (plan.h). The ids that were not are recorded with the join, so
 * that they can be made NOT NULL again if push-down turns it into an inner
 * join. */
static bool make_nullable(unnester *u, const sql_lop *join, const sql_lop *op)
{
    sql_plan_ctx *ctx = u->ctx;
    eng_padded *p = sql_arena_alloc(ctx->arena, sizeof(*p));
    sql_colid *ids = sql_arena_alloc(ctx->arena, (op->nout + 1) * sizeof(sql_colid));
    if (!p || !ids) return false;
    p->join = join;
    p->ids = ids;
    for (uint32_t i = 0; i < op->nout; i++) {
        sql_col_info *c = sql_plan_col(ctx, op->out[i]);
        if (!c->nullable) ids[p->nids++] = op->out[i];
        c->nullable = true;
    }
    p->next = u->padded;
    u->padded = p;
    return true;
}

/* True when the plan yields exactly one row: projections over an aggregate
 * without GROUP BY. */
static bool one_row(const sql_lop *op)
{
    while (op->kind == SQL_LOP_PROJECT)
        op = op->left;
    return op->kind == SQL_LOP_AGGREGATE && op->aggregate.ngroups == 0;
}

static sql_lop *limit_one(unnester *u, sql_lop *r)
{
    sql_lop *l = sql_lop_new(u->ctx, SQL_LOP_LIMIT, r, NULL, 0);
    if (!l) return NULL;
    l->limit.limit = 1;
    return eng_lop_recompute_out(u->ctx, l) ? l : NULL;
}

/* Joins the subquery sq into *cur. top: sq (or NOT sq when neg) is a
 * conjunct that must hold for the row to pass; then *value is set only
 * when a filter conjunct must remain (a MARK's NOT mark). Otherwise *value
 * is the expression that replaces sq. 1 done, 0 left alone, -1 OOM. */
static int attach(unnester *u, sql_lop **cur, sql_bexpr *sq, bool top, bool neg, sql_bexpr **value)
{
    sql_plan_ctx *ctx = u->ctx;
    prepared p;
    int r = prepare(u, *cur, sq, &p);
    if (r <= 0) return r;
    *value = NULL;
    sql_subquery_kind kind = sq->subquery.kind;
    sql_lop *R = p.plan;
    sql_lop *j = NULL;
    if (kind == SQL_SUBQ_SCALAR) {
        sql_bexpr *cond = corr_cond(u, &p, false);
        if (p.preds.count && !cond) return -1;
        sql_join_kind jk = !p.correlated ? (one_row(R) ? SQL_JOINK_CROSS : SQL_JOINK_SINGLE)
                           : p.regrouped ? SQL_JOINK_LEFT
                                         : SQL_JOINK_SINGLE;
        j = eng_lop_join(ctx, jk, *cur, R, cond);
        if (!j) return -1;
        if (jk != SQL_JOINK_CROSS && !make_nullable(u, j, R)) return -1;
        if (p.empty && p.group_key)
            *value = count_bug_case(u, p.group_key, p.empty, sq->subquery.col);
        else
            *value = sql_bexpr_column(ctx, sq->subquery.col, 0);
        if (!*value) return -1;
        *cur = j;
        return 1;
    }
    if (!p.has_free && kind == SQL_SUBQ_EXISTS) {
        R = limit_one(u, R);
        if (!R) return -1;
    }
    /* ALL is NOT (x negated-cmp ANY ...). */
    bool all = kind == SQL_SUBQ_ALL;
    if (all) neg = !neg;
    sql_bexpr *quant = NULL;
    if (kind != SQL_SUBQ_EXISTS) {
        quant = compare(u, sq, all ? negate_cmp(sq->subquery.cmp) : sq->subquery.cmp);
        if (!quant) return -1;
        eng_expr_refresh_nullable(ctx, quant);
    }
    if (top) {
        if (!neg || !quant || !quant->nullable) {
            sql_bexpr *cond = eng_expr_and(ctx, quant, corr_cond(u, &p, false));
            j = eng_lop_join(ctx, neg ? SQL_JOINK_ANTI : SQL_JOINK_SEMI, *cur, R, cond);
            if (!j) return -1;
            *cur = j;
            return 1;
        }
    }
    /* MARK join: the mark is the [NOT] EXISTS / ANY value. */
    sql_bexpr *corr = corr_cond(u, &p, true);
    if (p.preds.count && !corr) return -1;
    j = eng_lop_join(ctx, SQL_JOINK_MARK, *cur, R, eng_expr_and(ctx, quant, corr));
    if (!j) return -1;
    if (!quant) sql_plan_col(ctx, j->join.mark)->nullable = false;
    sql_bexpr *m = sql_bexpr_column(ctx, j->join.mark, 0);
    *value = neg ? eng_expr_not(ctx, m) : m;
    if (!*value) return -1;
    *cur = j;
    return 1;
}

typedef struct replace_walk {
    unnester *u;
    sql_lop **cur;
} replace_walk;

static sql_walk replace_fn(sql_bexpr **slot, void *arg)
{
    replace_walk *w = arg;
    if ((*slot)->kind != SQL_BEXPR_SUBQUERY) return SQL_WALK_CONTINUE;
    sql_bexpr *v = NULL;
    int r = attach(w->u, w->cur, *slot, false, false, &v);
    if (r < 0) {
        w->u->oom = true;
        return SQL_WALK_STOP;
    }
    if (r > 0) *slot = v;
    return SQL_WALK_SKIP;
}

/* Replaces every subquery inside *e by a value computed by a join added to
 * *cur. */
static bool replace_subqueries(unnester *u, sql_lop **cur, sql_bexpr **e)
{
    replace_walk w = {u, cur};
    sql_bexpr_walk(e, replace_fn, &w);
    return !u->oom;
}

static bool same_ids(const sql_lop *a, const sql_colid *out, uint32_t n)
{
    if (a->nout != n) return false;
    for (uint32_t i = 0; i < n; i++)
        if (a->out[i] != out[i]) return false;
    return true;
}

static bool rewrite_filter(unnester *u, sql_lop **slot)
{
    sql_plan_ctx *ctx = u->ctx;
    sql_lop *op = *slot;
    const sql_colid *orig = op->out;
    uint32_t norig = op->nout;
    eng_conj all = {0}, rest = {0};
    if (!eng_conj_split(ctx, &all, op->filter.pred)) return !(u->oom = true);
    sql_lop *cur = op->left;
    for (uint32_t i = 0; i < all.count; i++) {
        if (!eng_expr_has_subquery(all.items[i])) continue;
        if (eng_opt_unnest_window(ctx, &cur, &all, i) < 0) return !(u->oom = true);
        break;
    }
    for (uint32_t i = 0; i < all.count; i++) {
        sql_bexpr *c = all.items[i];
        if (!eng_expr_has_subquery(c)) {
            if (!eng_conj_push(ctx, &rest, c)) return !(u->oom = true);
            continue;
        }
        bool neg = false;
        sql_bexpr *x = c;
        if (x->kind == SQL_BEXPR_OP && x->op.op == SQL_OP_NOT) {
            neg = true;
            x = x->op.args[0];
        }
        if (x->kind == SQL_BEXPR_SUBQUERY && x->subquery.kind != SQL_SUBQ_SCALAR &&
            !eng_expr_has_subquery(x->subquery.left)) {
            sql_bexpr *v = NULL;
            int r = attach(u, &cur, x, true, neg, &v);
            if (r < 0) return !(u->oom = true);
            if (r > 0) {
                if (v && !eng_conj_push(ctx, &rest, v)) return !(u->oom = true);
                continue;
            }
        }
        if (!replace_subqueries(u, &cur, &c)) return false;
        if (!eng_conj_push(ctx, &rest, c)) return !(u->oom = true);
    }
    bool oom = false;
    sql_bexpr *pred = eng_conj_and(ctx, &rest, &oom);
    if (oom) return !(u->oom = true);
    sql_lop *res = cur;
    if (pred) {
        eng_expr_refresh_nullable(ctx, pred);
        res = eng_lop_filter(ctx, cur, pred);
        if (!res) return !(u->oom = true);
    }
    if (!same_ids(res, orig, norig)) {
        res = eng_lop_passthrough(ctx, res, orig, norig);
        if (!res) return !(u->oom = true);
    }
    *slot = res;
    return true;
}

static bool rewrite_project(unnester *u, sql_lop *op)
{
    for (uint32_t i = 0; i < op->project.count; i++) {
        if (!eng_expr_has_subquery(op->project.items[i].expr)) continue;
        if (!replace_subqueries(u, &op->left, &op->project.items[i].expr)) return false;
        eng_expr_refresh_nullable(u->ctx, op->project.items[i].expr);
    }
    return true;
}

typedef struct sub_walk {
    unnester *u;
} sub_walk;

static sql_walk unnest_inside_fn(sql_bexpr **slot, void *arg)
{
    sub_walk *w = arg;
    if ((*slot)->kind == SQL_BEXPR_SUBQUERY && !unnest_tree(w->u, &(*slot)->subquery.plan))
        return SQL_WALK_STOP;
    return SQL_WALK_CONTINUE;
}

/* Subqueries where no join can take them (aggregate arguments, sort keys,
 * outer join conditions) keep their SUBQUERY, but their own plans are
 * still unnested. */
static bool unnest_inside(unnester *u, sql_bexpr *e)
{
    if (!e) return true;
    sub_walk w = {u};
    sql_bexpr_walk(&e, unnest_inside_fn, &w);
    return !u->oom;
}

static bool unnest_tree(unnester *u, sql_lop **slot)
{
    sql_lop *op = *slot;
    if (op->left && !unnest_tree(u, &op->left)) return false;
    if (op->right && !unnest_tree(u, &op->right)) return false;
    switch (op->kind) {
    case SQL_LOP_FILTER:
        if (eng_expr_has_subquery(op->filter.pred)) return rewrite_filter(u, slot);
        return true;
    case SQL_LOP_PROJECT:
        return rewrite_project(u, op);
    case SQL_LOP_JOIN:
        if (!eng_expr_has_subquery(op->join.cond)) return true;
        if (op->join.kind == SQL_JOINK_INNER || op->join.kind == SQL_JOINK_CROSS) {
            /* ON conditions of inner joins are filters above the join. */
            sql_lop *f = eng_lop_filter(u->ctx, op, op->join.cond);
            if (!f) return !(u->oom = true);
            op->join.cond = NULL;
            op->join.kind = SQL_JOINK_CROSS;
            *slot = f;
            return rewrite_filter(u, slot);
        }
        return unnest_inside(u, op->join.cond);
    case SQL_LOP_AGGREGATE:
        /* Group keys and aggregate arguments are per input row: the joins
         * go below the aggregate, whose outputs do not change. */
        for (uint32_t i = 0; i < op->aggregate.ngroups; i++)
            if (eng_expr_has_subquery(op->aggregate.groups[i].expr) &&
                !replace_subqueries(u, &op->left, &op->aggregate.groups[i].expr))
                return false;
        for (uint32_t i = 0; i < op->aggregate.naggs; i++)
            if (eng_expr_has_subquery(op->aggregate.aggs[i].arg) &&
                !replace_subqueries(u, &op->left, &op->aggregate.aggs[i].arg))
                return false;
        return true;
    case SQL_LOP_SORT: {
        /* Sort keys too; the sort then passes the joined columns on, so a
         * projection restores its outputs. */
        bool any = false;
        for (uint32_t i = 0; i < op->sort.count; i++) {
            if (!eng_expr_has_subquery(op->sort.keys[i].expr)) continue;
            if (!replace_subqueries(u, &op->left, &op->sort.keys[i].expr)) return false;
            any = true;
        }
        if (!any) return true;
        uint32_t norig = op->nout;
        sql_colid *orig = sql_arena_alloc(u->ctx->arena, (norig + 1) * sizeof(sql_colid));
        if (!orig) return !(u->oom = true);
        memcpy(orig, op->out, norig * sizeof(sql_colid));
        if (!eng_lop_recompute_out(u->ctx, op)) return !(u->oom = true);
        if (!same_ids(op, orig, norig)) {
            sql_lop *p = eng_lop_passthrough(u->ctx, op, orig, norig);
            if (!p) return !(u->oom = true);
            *slot = p;
        }
        return true;
    }
    default:
        return true;
    }
}

bool eng_opt_unnest(sql_plan_ctx *ctx, sql_lop **root, eng_padded **padded)
{
    unnester u = {ctx, false, NULL};
    bool ok = unnest_tree(&u, root) && !u.oom;
    *padded = u.padded;
    return ok;
}

void eng_opt_unpad(sql_plan_ctx *ctx, const eng_padded *padded)
{
    for (const eng_padded *p = padded; p; p = p->next) {
        if (p->join->join.kind != SQL_JOINK_INNER && p->join->join.kind != SQL_JOINK_CROSS)
            continue;
        for (uint32_t i = 0; i < p->nids; i++)
            sql_plan_col(ctx, p->ids[i])->nullable = false;
    }
}
