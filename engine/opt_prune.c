/*
 * opt_prune.c — projection pruning: no operator produces a column nobody
 * above it reads.
 *
 * One pass from the root down carries the set of ids the parent needs. A
 * GET keeps only the needed table columns (at least one, the narrowest, so
 * that COUNT(*) still sees rows), a PROJECT only the needed items, an
 * AGGREGATE only the needed aggregates (all its group keys: they define the
 * groups); FILTER, JOIN and SORT add the ids their own expressions read.
 * DISTINCT and set operations compare whole rows, so below them everything
 * their input produces stays. On the way back up every operator's out list
 * is rebuilt, and projections that only pass on exactly their input's
 * columns are dropped.
 */
#include <string.h>

#include "engine/opt_int.h"

typedef struct pruner {
    sql_plan_ctx *ctx;
    bool oom;
} pruner;

static bool add_refs(pruner *p, eng_idset *s, const sql_bexpr *e)
{
    if (!eng_expr_refs(p->ctx, e, s)) return !(p->oom = true);
    return true;
}

static bool copy_set(pruner *p, eng_idset *dst, const eng_idset *src)
{
    eng_idset_init(dst);
    return eng_idset_add_all(p->ctx, dst, src) || !(p->oom = true);
}

static void prune_get(pruner *p, sql_lop *op, const eng_idset *need)
{
    uint32_t n = 0, narrow = 0;
    size_t best = SIZE_MAX;
    for (uint32_t i = 0; i < op->nout; i++) {
        size_t w = sto_type_width((sto_type_id)sql_plan_col(p->ctx, op->out[i])->type.id);
        if (w < best) {
            best = w;
            narrow = i;
        }
    }
    for (uint32_t i = 0; i < op->nout; i++) {
        if (!eng_idset_has(need, op->out[i])) continue;
        op->out[n] = op->out[i];
        op->get.columns[n++] = op->get.columns[i];
    }
    if (n == 0 && op->nout) {
        op->out[0] = op->out[narrow];
        op->get.columns[0] = op->get.columns[narrow];
        n = 1;
    }
    op->nout = n;
}

static bool is_passthrough(const sql_lop *op)
{
    if (op->kind != SQL_LOP_PROJECT || op->project.count != op->left->nout) return false;
    for (uint32_t i = 0; i < op->project.count; i++) {
        const sql_proj_item *it = &op->project.items[i];
        if (it->expr->kind != SQL_BEXPR_COLUMN || it->expr->column != it->id) return false;
        bool found = false;
        for (uint32_t k = 0; k < op->left->nout && !found; k++)
            found = op->left->out[k] == it->id;
        if (!found) return false;
    }
    return true;
}

/* Two PROJECTs in a row become one: when the lower one only passes
 * columns on, the upper reads them from below it; when the upper one only
 * selects columns, it takes over the lower one's items. */
static bool merge_projects(pruner *p, sql_lop *op)
{
    const sql_lop *below = op->left;
    bool below_renames = false;
    for (uint32_t k = 0; k < below->project.count; k++) {
        const sql_proj_item *it = &below->project.items[k];
        below_renames |= it->expr->kind != SQL_BEXPR_COLUMN || it->expr->column != it->id;
    }
    if (!below_renames) {
        /* The lower one only narrows: the upper reads the same ids below. */
        op->left = below->left;
        return true;
    }
    sql_proj_item *items = sql_arena_alloc(p->ctx->arena, (op->project.count + 1) * sizeof(*items));
    if (!items) return !(p->oom = true);
    for (uint32_t i = 0; i < op->project.count; i++) {
        const sql_proj_item *it = &op->project.items[i];
        if (it->expr->kind != SQL_BEXPR_COLUMN || it->expr->column != it->id) return true;
        bool found = false;
        for (uint32_t k = 0; k < below->project.count && !found; k++) {
            if (below->project.items[k].id != it->id) continue;
            items[i] = below->project.items[k];
            found = true;
        }
        if (!found) return true;
    }
    op->project.items = items;
    op->left = below->left;
    return true;
}

static bool prune(pruner *p, sql_lop **slot, const eng_idset *need, bool positional);

static bool prune_all(pruner *p, sql_lop **slot)
{
    eng_idset all;
    eng_idset_init(&all);
    if (!eng_idset_of_out(p->ctx, &all, *slot)) return !(p->oom = true);
    return prune(p, slot, &all, true);
}

/* need: the ids the parent reads; positional: the parent reads columns by
 * position (set operations), so the out list must keep its order. */
static bool prune(pruner *p, sql_lop **slot, const eng_idset *need, bool positional)
{
    sql_lop *op = *slot;
    eng_idset child;
    switch (op->kind) {
    case SQL_LOP_GET:
        prune_get(p, op, need);
        return true;
    case SQL_LOP_VALUES:
        return true;
    case SQL_LOP_FILTER:
        if (!copy_set(p, &child, need) || !add_refs(p, &child, op->filter.pred)) return false;
        if (!prune(p, &op->left, &child, false)) return false;
        break;
    case SQL_LOP_PROJECT: {
        uint32_t n = 0;
        for (uint32_t i = 0; i < op->project.count; i++)
            if (positional || eng_idset_has(need, op->project.items[i].id))
                op->project.items[n++] = op->project.items[i];
        if (n == 0 && op->project.count) n = 1;
        op->project.count = n;
        eng_idset_init(&child);
        for (uint32_t i = 0; i < n; i++)
            if (!add_refs(p, &child, op->project.items[i].expr)) return false;
        if (!prune(p, &op->left, &child, false)) return false;
        break;
    }
    case SQL_LOP_JOIN:
        if (!copy_set(p, &child, need) || !add_refs(p, &child, op->join.cond)) return false;
        if (!prune(p, &op->left, &child, false) || !prune(p, &op->right, &child, false))
            return false;
        break;
    case SQL_LOP_AGGREGATE: {
        uint32_t n = 0;
        for (uint32_t i = 0; i < op->aggregate.naggs; i++)
            if (positional || eng_idset_has(need, op->aggregate.aggs[i].id))
                op->aggregate.aggs[n++] = op->aggregate.aggs[i];
        if (n == 0 && op->aggregate.ngroups == 0 && op->aggregate.naggs) n = 1;
        op->aggregate.naggs = n;
        eng_idset_init(&child);
        for (uint32_t i = 0; i < op->aggregate.ngroups; i++)
            if (!add_refs(p, &child, op->aggregate.groups[i].expr)) return false;
        for (uint32_t i = 0; i < op->aggregate.naggs; i++)
            if (!add_refs(p, &child, op->aggregate.aggs[i].arg)) return false;
        if (!prune(p, &op->left, &child, false)) return false;
        break;
    }
    case SQL_LOP_SORT:
        if (!copy_set(p, &child, need)) return false;
        for (uint32_t i = 0; i < op->sort.count; i++)
            if (!add_refs(p, &child, op->sort.keys[i].expr)) return false;
        if (!prune(p, &op->left, &child, positional)) return false;
        break;
    case SQL_LOP_LIMIT:
        if (!prune(p, &op->left, need, positional)) return false;
        break;
    case SQL_LOP_DISTINCT:
        if (!prune_all(p, &op->left)) return false;
        break;
    case SQL_LOP_SETOP:
        if (!prune_all(p, &op->left) || !prune_all(p, &op->right)) return false;
        return true;
    default:
        return true;
    }
    if (!eng_lop_recompute_out(p->ctx, op)) return !(p->oom = true);
    if (op->kind == SQL_LOP_PROJECT && op->left->kind == SQL_LOP_PROJECT && !merge_projects(p, op))
        return false;
    /* A projection that passes on exactly its input's columns is a no-op
     * (order only matters to positional readers). */
    if (op->left && op->left->kind == SQL_LOP_PROJECT && is_passthrough(op->left) &&
        op->kind != SQL_LOP_SETOP) {
        op->left = op->left->left;
        if (!eng_lop_recompute_out(p->ctx, op)) return !(p->oom = true);
    }
    if (op->right && op->right->kind == SQL_LOP_PROJECT && is_passthrough(op->right)) {
        op->right = op->right->left;
        if (!eng_lop_recompute_out(p->ctx, op)) return !(p->oom = true);
    }
    return true;
}

bool eng_opt_prune(sql_plan_ctx *ctx, sql_plan *plan)
{
    pruner p = {ctx, false};
    eng_idset need;
    eng_idset_init(&need);
    for (uint32_t i = 0; i < plan->ncols; i++)
        if (!eng_idset_add(ctx, &need, plan->cols[i])) return false;
    if (!prune(&p, &plan->root, &need, false)) return false;
    /* The client sees plan->cols in order: make the root produce exactly
     * that. */
    sql_lop *r = plan->root;
    bool same = r->nout == plan->ncols;
    for (uint32_t i = 0; same && i < r->nout; i++)
        same = r->out[i] == plan->cols[i];
    if (!same) {
        sql_lop *top = eng_lop_passthrough(ctx, r, plan->cols, plan->ncols);
        if (!top) return false;
        plan->root = top;
    }
    return !p.oom;
}
