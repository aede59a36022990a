/*
 * opt_pushdown.c — predicates move down to where their columns appear.
 *
 * Every FILTER is split into conjuncts, and each conjunct travels down the
 * tree as far as the columns it reads allow:
 *
 *   PROJECT     through, with the projected expressions substituted
 *   AGGREGATE   through when it reads only group keys
 *   SORT, DISTINCT  through
 *   INNER/CROSS into the side that has all its columns; a conjunct that
 *               needs both sides becomes part of the join condition, so a
 *               comma join with WHERE a.x = b.y is an equi join and never a
 *               cross product
 *   LEFT        into the preserved side; conjuncts of the ON condition that
 *               read only the inner side go into it. A conjunct above that
 *               rejects NULLs of the inner side turns the join into INNER
 *   SEMI/ANTI/MARK/SINGLE  into the left side from above; ON conjuncts over
 *               the right side alone into the right side (for MARK only when
 *               they cannot be NULL, which would change the mark)
 *   FULL, LIMIT, SETOP  stop: the conjunct stays above
 *
 * At each inner join the conjuncts form equivalence classes of columns
 * (a.x = b.y); a comparison of one column with a constant is copied to the
 * other members of its class (a.x = b.y AND b.y = 5 adds a.x = 5), so that
 * both scans filter early. RIGHT joins are turned into LEFT joins first.
 */
#include <string.h>

#include "engine/opt_int.h"

typedef struct pusher {
    sql_plan_ctx *ctx;
    bool oom;
} pusher;

static bool push(pusher *p, sql_lop **slot, eng_conj *preds);

static bool refs_within(pusher *p, const sql_bexpr *e, const eng_idset *avail)
{
    eng_idset r;
    eng_idset_init(&r);
    if (!eng_expr_refs(p->ctx, e, &r)) {
        p->oom = true;
        return false;
    }
    return eng_idset_subset(&r, avail);
}

static bool out_set(pusher *p, const sql_lop *op, eng_idset *s)
{
    eng_idset_init(s);
    if (!eng_idset_of_out(p->ctx, s, op)) return !(p->oom = true);
    return true;
}

/* Places the conjuncts that could not go lower in a FILTER above *slot. */
static bool place(pusher *p, sql_lop **slot, eng_conj *stay)
{
    if (!stay->count) return true;
    bool oom = false;
    sql_bexpr *pred = eng_conj_and(p->ctx, stay, &oom);
    sql_lop *f = oom ? NULL : eng_lop_filter(p->ctx, *slot, pred);
    if (!f) return !(p->oom = true);
    *slot = f;
    return true;
}

/* ------------------------------------------- equivalence classes -- */

static sql_colid find(sql_colid *parent, sql_colid x)
{
    while (parent[x] != x)
        x = parent[x] = parent[parent[x]];
    return x;
}

static bool same_type(sto_type a, sto_type b)
{
    return a.id == b.id && a.scale == b.scale;
}

/* col cmp const (either order): the column and whether it is on the left. */
static bool column_vs_const(const sql_bexpr *c, const sql_bexpr **col, int *col_side)
{
    if (c->kind == SQL_BEXPR_OP && sql_op_is_comparison(c->op.op)) {
        for (int s = 0; s < 2; s++) {
            const sql_bexpr *a = c->op.args[s], *b = c->op.args[1 - s];
            if (a->kind == SQL_BEXPR_COLUMN && b->kind == SQL_BEXPR_CONST) {
                *col = a;
                *col_side = s;
                return true;
            }
        }
    }
    if (c->kind == SQL_BEXPR_IN_LIST && c->in_list.arg->kind == SQL_BEXPR_COLUMN) {
        for (uint32_t i = 0; i < c->in_list.list.count; i++)
            if (c->in_list.list.items[i]->kind != SQL_BEXPR_CONST) return false;
        *col = c->in_list.arg;
        *col_side = -1;
        return true;
    }
    return false;
}

static bool contains_equal(const eng_conj *l, const sql_bexpr *e)
{
    for (uint32_t i = 0; i < l->count; i++)
        if (sql_bexpr_equal(l->items[i], e)) return true;
    return false;
}

/* Adds, for every column-vs-constant conjunct, its copies over the columns
 * equal to that column. */
static bool propagate_constants(pusher *p, eng_conj *all)
{
    sql_plan_ctx *ctx = p->ctx;
    uint32_t n = ctx->ncols + 1;
    sql_colid *parent = NULL;
    for (uint32_t i = 0; i < all->count; i++) {
        const sql_bexpr *c = all->items[i];
        if (c->kind != SQL_BEXPR_OP || c->op.op != SQL_OP_EQ) continue;
        const sql_bexpr *a = c->op.args[0], *b = c->op.args[1];
        if (a->kind != SQL_BEXPR_COLUMN || b->kind != SQL_BEXPR_COLUMN) continue;
        if (!same_type(a->type, b->type)) continue;
        if (!parent) {
            parent = sql_arena_alloc(ctx->arena, n * sizeof(sql_colid));
            if (!parent) return !(p->oom = true);
            for (uint32_t k = 0; k < n; k++)
                parent[k] = k;
        }
        sql_colid ra = find(parent, a->column), rb = find(parent, b->column);
        if (ra != rb) parent[ra] = rb;
    }
    if (!parent) return true;
    uint32_t count = all->count;
    for (uint32_t i = 0; i < count; i++) {
        const sql_bexpr *col;
        int side;
        if (!column_vs_const(all->items[i], &col, &side)) continue;
        sql_colid root = find(parent, col->column);
        for (sql_colid other = 1; other < n; other++) {
            if (other == col->column || find(parent, other) != root) continue;
            if (!same_type(sql_plan_col(ctx, other)->type, col->type)) continue;
            sql_bexpr *copy = sql_bexpr_copy(ctx, all->items[i]);
            if (!copy) return !(p->oom = true);
            eng_expr_rename(copy, col->column, other);
            eng_expr_refresh_nullable(ctx, copy);
            if (!contains_equal(all, copy) && !eng_conj_push(ctx, all, copy))
                return !(p->oom = true);
        }
    }
    return true;
}

/* ------------------------------------------------- disjunctions -- */

static bool flatten(pusher *p, const sql_bexpr *e, sql_op op, eng_conj *out)
{
    if (e->kind == SQL_BEXPR_OP && e->op.op == op)
        return flatten(p, e->op.args[0], op, out) && flatten(p, e->op.args[1], op, out);
    return eng_conj_push(p->ctx, out, (sql_bexpr *)e) || !(p->oom = true);
}

/* (A AND B) OR (A AND C) is A AND (B OR C): a join key written inside
 * every branch of an OR (TPC-H q19) becomes a top-level conjunct again.
 * The parts are appended to out. */
static bool factor_or(pusher *p, sql_bexpr *e, eng_conj *out)
{
    sql_plan_ctx *ctx = p->ctx;
    eng_conj ors = {0};
    if (e->kind != SQL_BEXPR_OP || e->op.op != SQL_OP_OR)
        return eng_conj_push(ctx, out, e) || !(p->oom = true);
    if (!flatten(p, e, SQL_OP_OR, &ors)) return false;
    eng_conj *ands = sql_arena_alloc(ctx->arena, ors.count * sizeof(eng_conj));
    if (!ands) return !(p->oom = true);
    for (uint32_t i = 0; i < ors.count; i++)
        if (!flatten(p, ors.items[i], SQL_OP_AND, &ands[i])) return false;
    eng_conj common = {0};
    for (uint32_t k = 0; k < ands[0].count; k++) {
        sql_bexpr *c = ands[0].items[k];
        bool everywhere = true;
        for (uint32_t i = 1; i < ors.count && everywhere; i++)
            everywhere = contains_equal(&ands[i], c);
        if (everywhere && !contains_equal(&common, c) && !eng_conj_push(ctx, &common, c))
            return !(p->oom = true);
    }
    if (!common.count) return eng_conj_push(ctx, out, e) || !(p->oom = true);
    sql_bexpr *rest = NULL;
    bool always = false;
    for (uint32_t i = 0; i < ors.count; i++) {
        sql_bexpr *branch = NULL;
        for (uint32_t k = 0; k < ands[i].count; k++) {
            if (contains_equal(&common, ands[i].items[k])) continue;
            branch = eng_expr_and(ctx, branch, ands[i].items[k]);
            if (!branch) return !(p->oom = true);
        }
        if (!branch) always = true; /* a branch that is only the common part */
        rest = rest && branch
                   ? sql_bexpr_op(ctx, SQL_OP_OR, sto_type_make(STO_TYPE_BOOLEAN), rest, branch, 0)
                   : (rest ? rest : branch);
        if (branch && !rest) return !(p->oom = true);
    }
    for (uint32_t k = 0; k < common.count; k++)
        if (!eng_conj_push(ctx, out, common.items[k])) return !(p->oom = true);
    if (!always && rest) {
        eng_expr_refresh_nullable(ctx, rest);
        if (!eng_conj_push(ctx, out, rest)) return !(p->oom = true);
    }
    return true;
}

/* For an OR over both sides of a join: the OR of each branch's conjuncts
 * over `side` alone, an implied predicate that lets that side filter
 * early (NULL when some branch has none). The OR itself stays. */
static sql_bexpr *implied_or(pusher *p, sql_bexpr *e, const eng_idset *side)
{
    sql_plan_ctx *ctx = p->ctx;
    eng_conj ors = {0};
    if (e->kind != SQL_BEXPR_OP || e->op.op != SQL_OP_OR || eng_expr_has_subquery(e)) return NULL;
    if (!flatten(p, e, SQL_OP_OR, &ors)) return NULL;
    sql_bexpr *res = NULL;
    for (uint32_t i = 0; i < ors.count; i++) {
        eng_conj ands = {0};
        if (!flatten(p, ors.items[i], SQL_OP_AND, &ands)) return NULL;
        sql_bexpr *branch = NULL;
        for (uint32_t k = 0; k < ands.count; k++) {
            eng_idset r;
            eng_idset_init(&r);
            if (!eng_expr_refs(ctx, ands.items[k], &r)) return NULL;
            if (eng_idset_empty(&r) || !eng_idset_subset(&r, side)) continue;
            branch = eng_expr_and(ctx, branch, sql_bexpr_copy(ctx, ands.items[k]));
            if (!branch) return NULL;
        }
        if (!branch) return NULL;
        res = res ? sql_bexpr_op(ctx, SQL_OP_OR, sto_type_make(STO_TYPE_BOOLEAN), res, branch, 0)
                  : branch;
        if (!res) return NULL;
    }
    if (res) eng_expr_refresh_nullable(ctx, res);
    return res;
}

/* ---------------------------------------------------------- joins -- */

static bool swap_right_join(pusher *p, sql_lop *op)
{
    sql_lop *t = op->left;
    op->left = op->right;
    op->right = t;
    op->join.kind = SQL_JOINK_LEFT;
    return eng_lop_recompute_out(p->ctx, op) || !(p->oom = true);
}

/* Does a conjunct reject rows whose right-side columns are NULL? */
static bool rejects_nulls(pusher *p, const sql_bexpr *c, const eng_idset *right)
{
    if (!eng_expr_strict(c)) return false;
    eng_idset r;
    eng_idset_init(&r);
    if (!eng_expr_refs(p->ctx, c, &r)) {
        p->oom = true;
        return false;
    }
    return eng_idset_intersects(&r, right);
}

static bool push_inner(pusher *p, sql_lop **slot, eng_conj *preds)
{
    sql_lop *op = *slot;
    eng_conj all = {0}, lp = {0}, rp = {0}, cond = {0}, stay = {0};
    eng_conj raw = {0};
    for (uint32_t i = 0; i < preds->count; i++)
        if (!eng_conj_push(p->ctx, &raw, preds->items[i])) return !(p->oom = true);
    if (!eng_conj_split(p->ctx, &raw, op->join.cond)) return !(p->oom = true);
    for (uint32_t i = 0; i < raw.count; i++)
        if (!factor_or(p, raw.items[i], &all)) return false;
    if (!propagate_constants(p, &all)) return false;
    eng_idset ls, rs, both;
    if (!out_set(p, op->left, &ls) || !out_set(p, op->right, &rs) || !out_set(p, op, &both))
        return false;
    if (!eng_idset_add_all(p->ctx, &both, &ls) || !eng_idset_add_all(p->ctx, &both, &rs))
        return !(p->oom = true);
    uint32_t n = all.count;
    for (uint32_t i = 0; i < n; i++) {
        if (refs_within(p, all.items[i], &ls) || refs_within(p, all.items[i], &rs)) continue;
        for (int side = 0; side < 2; side++) {
            sql_bexpr *imp = implied_or(p, all.items[i], side ? &rs : &ls);
            if (p->oom) return false;
            if (imp && !contains_equal(&all, imp) && !eng_conj_push(p->ctx, &all, imp))
                return !(p->oom = true);
        }
    }
    for (uint32_t i = 0; i < all.count; i++) {
        sql_bexpr *c = all.items[i];
        if (eng_expr_is_bool_const(c, true)) continue;
        eng_conj *to = eng_expr_has_subquery(c)   ? &stay
                       : refs_within(p, c, &ls)   ? &lp
                       : refs_within(p, c, &rs)   ? &rp
                       : refs_within(p, c, &both) ? &cond
                                                  : &stay;
        if (p->oom || !eng_conj_push(p->ctx, to, c)) return !(p->oom = true);
    }
    bool oom = false;
    op->join.cond = eng_conj_and(p->ctx, &cond, &oom);
    if (oom) return !(p->oom = true);
    op->join.kind = op->join.cond ? SQL_JOINK_INNER : SQL_JOINK_CROSS;
    if (!push(p, &op->left, &lp) || !push(p, &op->right, &rp)) return false;
    if (!eng_lop_recompute_out(p->ctx, op)) return !(p->oom = true);
    return place(p, slot, &stay);
}

static bool push_join(pusher *p, sql_lop **slot, eng_conj *preds)
{
    sql_lop *op = *slot;
    if (op->join.kind == SQL_JOINK_RIGHT && !swap_right_join(p, op)) return false;
    sql_join_kind k = op->join.kind;
    if (k == SQL_JOINK_INNER || k == SQL_JOINK_CROSS) return push_inner(p, slot, preds);
    eng_idset ls, rs;
    if (!out_set(p, op->left, &ls) || !out_set(p, op->right, &rs)) return false;
    if (k == SQL_JOINK_LEFT) {
        for (uint32_t i = 0; i < preds->count; i++) {
            if (rejects_nulls(p, preds->items[i], &rs)) {
                op->join.kind = SQL_JOINK_INNER;
                return push_inner(p, slot, preds);
            }
        }
    }
    eng_conj lp = {0}, rp = {0}, cond = {0}, stay = {0};
    if (k != SQL_JOINK_FULL) {
        for (uint32_t i = 0; i < preds->count; i++) {
            sql_bexpr *c = preds->items[i];
            bool to_left = !eng_expr_has_subquery(c) && refs_within(p, c, &ls);
            if (!eng_conj_push(p->ctx, to_left ? &lp : &stay, c)) return !(p->oom = true);
        }
        eng_conj on = {0};
        if (!eng_conj_split(p->ctx, &on, op->join.cond)) return !(p->oom = true);
        for (uint32_t i = 0; i < on.count; i++) {
            sql_bexpr *c = on.items[i];
            eng_conj *to = &cond;
            if (!eng_expr_has_subquery(c)) {
                eng_expr_refresh_nullable(p->ctx, c);
                if (refs_within(p, c, &rs) && (k != SQL_JOINK_MARK || !c->nullable))
                    to = &rp;
                else if (k == SQL_JOINK_SEMI && refs_within(p, c, &ls))
                    to = &lp;
            }
            if (!eng_conj_push(p->ctx, to, c)) return !(p->oom = true);
        }
        bool oom = false;
        op->join.cond = eng_conj_and(p->ctx, &cond, &oom);
        if (oom) return !(p->oom = true);
    } else {
        for (uint32_t i = 0; i < preds->count; i++)
            if (!eng_conj_push(p->ctx, &stay, preds->items[i])) return !(p->oom = true);
    }
    if (!push(p, &op->left, &lp) || !push(p, &op->right, &rp)) return false;
    if (!eng_lop_recompute_out(p->ctx, op)) return !(p->oom = true);
    return place(p, slot, &stay);
}

/* ------------------------------------------- projections, groups -- */

/* Pushes through an operator whose outputs are defined by items (PROJECT
 * items or AGGREGATE groups): conjuncts over those outputs only are
 * rewritten over the input. */
static bool push_through_items(pusher *p, sql_lop **slot, eng_conj *preds,
                               const sql_proj_item *items, uint32_t nitems)
{
    sql_lop *op = *slot;
    sql_plan_ctx *ctx = p->ctx;
    uint32_t nmap = ctx->ncols + 1;
    sql_bexpr **map = sql_arena_alloc(ctx->arena, nmap * sizeof(*map));
    if (!map) return !(p->oom = true);
    eng_idset avail;
    eng_idset_init(&avail);
    for (uint32_t i = 0; i < nitems; i++) {
        if (eng_expr_has_subquery(items[i].expr)) continue;
        map[items[i].id] = items[i].expr;
        if (!eng_idset_add(ctx, &avail, items[i].id)) return !(p->oom = true);
    }
    eng_conj down = {0}, stay = {0};
    for (uint32_t i = 0; i < preds->count; i++) {
        sql_bexpr *c = preds->items[i];
        eng_idset r;
        eng_idset_init(&r);
        if (!eng_expr_refs(ctx, c, &r)) return !(p->oom = true);
        bool ok = !eng_expr_has_subquery(c) && eng_idset_subset(&r, &avail) &&
                  (op->kind != SQL_LOP_AGGREGATE || !eng_idset_empty(&r));
        if (ok) {
            c = eng_expr_subst(ctx, c, map, nmap);
            if (!c) return !(p->oom = true);
        }
        if (!eng_conj_push(ctx, ok ? &down : &stay, c)) return !(p->oom = true);
    }
    if (!push(p, &op->left, &down)) return false;
    return place(p, slot, &stay);
}

/* Pushes preds (conjuncts over *slot's output) into the tree at *slot. */
static bool push(pusher *p, sql_lop **slot, eng_conj *preds)
{
    sql_lop *op = *slot;
    switch (op->kind) {
    case SQL_LOP_FILTER: {
        eng_conj all = {0};
        for (uint32_t i = 0; i < preds->count; i++)
            if (!eng_conj_push(p->ctx, &all, preds->items[i])) return !(p->oom = true);
        if (!eng_conj_split(p->ctx, &all, op->filter.pred)) return !(p->oom = true);
        *slot = op->left;
        return push(p, slot, &all);
    }
    case SQL_LOP_PROJECT:
        return push_through_items(p, slot, preds, op->project.items, op->project.count);
    case SQL_LOP_AGGREGATE:
        if (op->aggregate.ngroups)
            return push_through_items(p, slot, preds, op->aggregate.groups, op->aggregate.ngroups);
        break;
    case SQL_LOP_JOIN:
        return push_join(p, slot, preds);
    case SQL_LOP_SORT:
    case SQL_LOP_DISTINCT: {
        eng_conj down = {0}, stay = {0};
        for (uint32_t i = 0; i < preds->count; i++)
            if (!eng_conj_push(p->ctx, eng_expr_has_subquery(preds->items[i]) ? &stay : &down,
                               preds->items[i]))
                return !(p->oom = true);
        if (!push(p, &op->left, &down)) return false;
        return place(p, slot, &stay);
    }
    default:
        break;
    }
    /* Stop here: the conjuncts stay above; the inputs start afresh. */
    eng_conj none = {0};
    if (op->left && !push(p, &op->left, &none)) return false;
    if (op->right && !push(p, &op->right, &none)) return false;
    eng_conj stay = {0};
    for (uint32_t i = 0; i < preds->count; i++)
        if (!eng_expr_is_bool_const(preds->items[i], true) &&
            !eng_conj_push(p->ctx, &stay, preds->items[i]))
            return !(p->oom = true);
    return place(p, slot, &stay);
}

bool eng_opt_pushdown(sql_plan_ctx *ctx, sql_lop **root)
{
    pusher p = {ctx, false};
    eng_conj none = {0};
    return push(&p, root, &none) && !p.oom;
}
