/*
 * bind_select.c — one SELECT, bottom up:
 *
 *   FROM tree → FILTER(where) → AGGREGATE → FILTER(having)
 *     → PROJECT(select list + hidden ORDER BY columns) → DISTINCT → SORT
 *     → LIMIT → PROJECT(visible columns, only when hidden ones exist)
 *
 * Aggregation. Aggregate calls met while binding the select list, HAVING
 * and ORDER BY were already replaced by references to their result ids
 * (bind_func.c). What remains is PostgreSQL's grouping rule: after the
 * expressions are bound, every subtree that equals a GROUP BY expression is
 * replaced by a reference to that group key's id, and any column of this
 * level's FROM still referenced outside an aggregate is an error. A group
 * key that is a plain column keeps the column's id, so correlated
 * subqueries that use a grouped column need no rewriting.
 */
#include <stdio.h>
#include <string.h>

#include "sql/bind_int.h"

/* ----------------------------------------------------------- grouping -- */

typedef struct grouping {
    uint32_t count;
    sql_proj_item *items; /* group exprs and their ids */
} grouping;

typedef struct group_walk {
    binder *b;
    const bind_scope *s;
    const grouping *g;
    sto_status st;
} group_walk;

static sql_walk replace_group_node(sql_bexpr **slot, void *arg)
{
    group_walk *w = arg;
    for (uint32_t i = 0; i < w->g->count; i++) {
        if (!sql_bexpr_equal(*slot, w->g->items[i].expr)) continue;
        sql_bexpr *ref = sql_bexpr_column(w->b->ctx, w->g->items[i].id, (*slot)->pos);
        if (!ref) {
            w->st = sto_error_oom();
            return SQL_WALK_STOP;
        }
        *slot = ref;
        return SQL_WALK_SKIP;
    }
    return SQL_WALK_CONTINUE;
}

/* Replaces every subtree of *e equal to a group key by a reference to the
 * key's id. */
static sto_status replace_groups(binder *b, const grouping *g, sql_bexpr **e)
{
    group_walk w = {b, NULL, g, STO_OK};
    sql_bexpr_walk(e, replace_group_node, &w);
    return w.st;
}

static bool is_group_id(const grouping *g, sql_colid id)
{
    for (uint32_t i = 0; i < g->count; i++) {
        if (g->items[i].id == id) return true;
    }
    return false;
}

static sto_status ungrouped(const bind_scope *s, sql_colid id, int pos)
{
    const bind_col *col;
    const bind_rel *rel = sql_bind_rel_of(s, id, &col);
    if (rel && rel->name)
        return sto_error_at(STO_GROUPING_ERROR, pos,
                            "column \"%s.%s\" must appear in the GROUP BY clause or be used in "
                            "an aggregate function",
                            rel->name, col->name);
    return sto_error_at(STO_GROUPING_ERROR, pos,
                        "column \"%s\" must appear in the GROUP BY clause or be used in an "
                        "aggregate function",
                        rel ? col->name : "?");
}

static sql_walk check_group_node(sql_bexpr **slot, void *arg)
{
    group_walk *w = arg;
    const sql_bexpr *x = *slot;
    /* (what a subplan uses of this level is checked through
     * bind_scope.inner_refs) */
    if (x->kind == SQL_BEXPR_COLUMN && !is_group_id(w->g, x->column) &&
        sql_bind_rel_of(w->s, x->column, NULL)) {
        w->st = ungrouped(w->s, x->column, x->pos);
        return SQL_WALK_STOP;
    }
    return SQL_WALK_CONTINUE;
}

/* Fails on the first column of this level's FROM used outside an aggregate
 * and not grouped. */
static sto_status check_grouped(const bind_scope *s, const grouping *g, sql_bexpr *x)
{
    group_walk w = {NULL, s, g, STO_OK};
    sql_bexpr_walk(&x, check_group_node, &w);
    return w.st;
}

/* ------------------------------------------------------------- SELECT -- */

typedef struct order_item {
    int output;      /* index into the select items, or -1 */
    sql_bexpr *expr; /* when output < 0 */
    bool desc, nulls_first;
} order_item;

static sto_status expand_star(binder *b, bind_scope *s, const sql_expr *e, bind_item *items,
                              uint32_t *n, uint32_t cap)
{
    if (!e->star.table && s->nrels == 0)
        return sto_error_at(STO_SYNTAX_ERROR, e->pos,
                            "SELECT * with no tables specified is not valid");
    bool found = false;
    for (uint32_t r = 0; r < s->nrels; r++) {
        const bind_rel *rel = s->rels[r];
        if (e->star.table && !(rel->name && strcmp(rel->name, e->star.table) == 0)) continue;
        found = true;
        for (uint32_t c = 0; c < rel->ncols; c++) {
            if (!e->star.table && rel->cols[c].using_hidden) continue;
            if (*n == cap) return sto_error(STO_TOO_MANY_ARGUMENTS, "too many columns");
            items[*n].expr = sql_bexpr_column(b->ctx, rel->cols[c].id, e->pos);
            if (!items[*n].expr) return sto_error_oom();
            items[*n].name = rel->cols[c].name;
            items[*n].pos = e->pos;
            (*n)++;
        }
        if (e->star.table) break;
    }
    if (!found)
        return sto_error_at(STO_UNDEFINED_TABLE, e->pos,
                            "missing FROM-clause entry for table \"%s\"", e->star.table);
    return STO_OK;
}

static uint32_t star_capacity(const bind_scope *s, const sql_select_list *sel)
{
    uint32_t total = 0;
    for (uint32_t r = 0; r < s->nrels; r++)
        total += s->rels[r]->ncols;
    return total * (uint32_t)sel->count + (uint32_t)sel->count;
}

/* GROUP BY item: an ordinal or output alias names a select item's
 * expression (input columns win over aliases, as in PostgreSQL). */
static sto_status resolve_group_item(bind_scope *s, const sql_query *q, const sql_expr *e,
                                     const sql_expr **out)
{
    *out = e;
    if (bind_is_ordinal(e)) {
        int64_t k = e->lit.integer;
        if (k < 1 || k > q->select.count || q->select.items[k - 1]->expr->kind == SQL_EXPR_STAR)
            return sto_error_at(STO_INVALID_COLUMN_REFERENCE, e->pos,
                                "GROUP BY position %lld is not in select list", (long long)k);
        *out = q->select.items[k - 1]->expr;
        return STO_OK;
    }
    if (e->kind != SQL_EXPR_COLUMN || e->column.table) return STO_OK;
    for (uint32_t r = 0; r < s->nrels; r++) {
        const bind_rel *rel = s->rels[r];
        for (uint32_t c = 0; c < rel->ncols; c++) {
            if (strcmp(rel->cols[c].name, e->column.name) == 0) return STO_OK;
        }
    }
    for (int i = 0; i < q->select.count; i++) {
        const sql_select_item *it = q->select.items[i];
        if (it->alias && strcmp(it->alias, e->column.name) == 0) {
            *out = it->expr;
            return STO_OK;
        }
    }
    return STO_OK;
}

/* One SELECT while it is being bound: what each step below reads and
 * leaves for the next. */
typedef struct select_state {
    binder *b;
    bind_scope *s;
    const sql_query *q;
    sql_lop *input;   /* the operator tree built so far */
    grouping g;       /* GROUP BY keys */
    bind_item *items; /* select list, stars expanded */
    uint32_t nitems;
    const char **names;
    sql_bexpr *having;
    order_item *order;
    uint32_t norder;
    uint32_t nhidden; /* ORDER BY expressions projected as extra columns */
    sql_lop *proj;    /* the select list's PROJECT */
} select_state;

static sto_status add_filter(select_state *st, sql_bexpr *pred)
{
    sql_lop *f = sql_bind_unary_op(st->b, SQL_LOP_FILTER, st->input);
    if (!f) return sto_error_oom();
    f->filter.pred = pred;
    st->input = f;
    return STO_OK;
}

static sto_status bind_where(select_state *st)
{
    if (!st->q->where) return STO_OK;
    sql_bexpr *pred;
    st->s->clause = CLAUSE_WHERE;
    STO_TRY(sql_bind_condition(st->b, st->s, st->q->where, "WHERE", &pred));
    return add_filter(st, pred);
}

/* GROUP BY keys, duplicates dropped; a plain column keeps its id. */
static sto_status bind_group_keys(select_state *st)
{
    binder *b = st->b;
    const sql_query *q = st->q;
    grouping *g = &st->g;
    if (!q->group_by.count) return STO_OK;
    g->items = sql_arena_alloc(b->arena, (size_t)q->group_by.count * sizeof(*g->items));
    if (!g->items) return sto_error_oom();
    st->s->clause = CLAUSE_GROUP_BY;
    for (int i = 0; i < q->group_by.count; i++) {
        const sql_expr *ge;
        sql_bexpr *x;
        STO_TRY(resolve_group_item(st->s, q, q->group_by.items[i], &ge));
        STO_TRY(sql_bind_expr(b, st->s, ge, &x));
        STO_TRY(sql_types_resolve_unknown(b, &x));
        bool dup = false;
        for (uint32_t k = 0; k < g->count && !dup; k++)
            dup = sql_bexpr_equal(g->items[k].expr, x);
        if (dup) continue;
        g->items[g->count].expr = x;
        g->items[g->count].id =
            x->kind == SQL_BEXPR_COLUMN
                ? x->column
                : sql_plan_new_col(b->ctx, x->type, x->nullable, sql_bind_derived_name(ge));
        if (!g->items[g->count].id) return sto_error_oom();
        g->count++;
    }
    return STO_OK;
}

static sto_status bind_select_list(select_state *st)
{
    binder *b = st->b;
    const sql_query *q = st->q;
    uint32_t cap = star_capacity(st->s, &q->select);
    st->items = sql_arena_alloc(b->arena, (cap ? cap : 1) * sizeof(*st->items));
    if (!st->items) return sto_error_oom();
    st->s->clause = CLAUSE_SELECT;
    for (int i = 0; i < q->select.count; i++) {
        const sql_select_item *it = q->select.items[i];
        if (it->expr->kind == SQL_EXPR_STAR) {
            STO_TRY(expand_star(b, st->s, it->expr, st->items, &st->nitems, cap));
            continue;
        }
        bind_item *o = &st->items[st->nitems++];
        STO_TRY(sql_bind_expr(b, st->s, it->expr, &o->expr));
        STO_TRY(sql_types_resolve_unknown(b, &o->expr));
        o->name = it->alias ? it->alias : sql_bind_derived_name(it->expr);
        o->pos = it->expr->pos;
    }
    st->names = sql_arena_alloc(b->arena, (st->nitems ? st->nitems : 1) * sizeof(*st->names));
    if (!st->names) return sto_error_oom();
    for (uint32_t i = 0; i < st->nitems; i++)
        st->names[i] = st->items[i].name;
    if (st->q->having) {
        st->s->clause = CLAUSE_HAVING;
        STO_TRY(sql_bind_condition(b, st->s, st->q->having, "HAVING", &st->having));
    }
    return STO_OK;
}

/* ORDER BY: outputs by ordinal or name, else expressions over the input. */
static sto_status bind_order_items(select_state *st)
{
    binder *b = st->b;
    st->norder = (uint32_t)st->q->order_by.count;
    st->order = sql_arena_alloc(b->arena, (st->norder ? st->norder : 1) * sizeof(*st->order));
    if (!st->order) return sto_error_oom();
    st->s->clause = CLAUSE_ORDER_BY;
    for (uint32_t i = 0; i < st->norder; i++) {
        const sql_order_item *oi = st->q->order_by.items[i];
        order_item *o = &st->order[i];
        o->desc = oi->desc;
        o->nulls_first = sql_bind_nulls_first(oi);
        STO_TRY(sql_bind_order_output(oi->expr, st->nitems, st->names, st->items, &o->output));
        if (o->output < 0) {
            STO_TRY(sql_bind_expr(b, st->s, oi->expr, &o->expr));
            STO_TRY(sql_types_resolve_unknown(b, &o->expr));
        }
    }
    return STO_OK;
}

/* The AGGREGATE (when there is grouping or an aggregate), then the
 * grouping rule over everything bound above it, then HAVING. */
static sto_status build_aggregate(select_state *st)
{
    binder *b = st->b;
    bind_scope *s = st->s;
    grouping *g = &st->g;
    if (!g->count && !s->naggs && !st->having) return STO_OK;
    sql_lop *agg = sql_lop_new(b->ctx, SQL_LOP_AGGREGATE, st->input, NULL, g->count + s->naggs);
    if (!agg) return sto_error_oom();
    agg->aggregate.ngroups = g->count;
    agg->aggregate.groups = g->items;
    agg->aggregate.naggs = s->naggs;
    agg->aggregate.aggs = s->aggs;
    for (uint32_t i = 0; i < g->count; i++)
        agg->out[i] = g->items[i].id;
    for (uint32_t i = 0; i < s->naggs; i++) {
        sql_agg_item *a = &s->aggs[i];
        agg->out[g->count + i] = a->id;
        /* Groups are never empty: only a scalar aggregate over no rows
         * yields NULL for a non-NULL argument. */
        if (g->count && a->func != SQL_AGG_COUNT && a->func != SQL_AGG_COUNT_STAR)
            sql_plan_col(b->ctx, a->id)->nullable = a->arg->nullable;
    }
    st->input = agg;
    for (uint32_t i = 0; i < st->nitems; i++) {
        STO_TRY(replace_groups(b, g, &st->items[i].expr));
        STO_TRY(check_grouped(s, g, st->items[i].expr));
    }
    if (st->having) {
        STO_TRY(replace_groups(b, g, &st->having));
        STO_TRY(check_grouped(s, g, st->having));
        STO_TRY(add_filter(st, st->having));
    }
    for (uint32_t i = 0; i < st->norder; i++) {
        if (st->order[i].output >= 0) continue;
        STO_TRY(replace_groups(b, g, &st->order[i].expr));
        STO_TRY(check_grouped(s, g, st->order[i].expr));
    }
    for (uint32_t i = 0; i < s->ninner; i++) {
        if (!is_group_id(g, s->inner_refs[i].id))
            return ungrouped(s, s->inner_refs[i].id, s->inner_refs[i].pos);
    }
    return STO_OK;
}

/* ORDER BY expressions that are select items use them; others become
 * hidden columns numbered after the select items. */
static sto_status place_order_items(select_state *st)
{
    for (uint32_t i = 0; i < st->norder; i++) {
        order_item *o = &st->order[i];
        if (o->output >= 0) continue;
        for (uint32_t k = 0; k < st->nitems && o->output < 0; k++) {
            if (sql_bexpr_equal(o->expr, st->items[k].expr)) o->output = (int)k;
        }
        if (o->output >= 0) continue;
        if (st->q->distinct)
            return sto_error_at(STO_INVALID_COLUMN_REFERENCE, o->expr->pos,
                                "for SELECT DISTINCT, ORDER BY expressions must appear in "
                                "select list");
        o->output = (int)(st->nitems + st->nhidden++);
    }
    return STO_OK;
}

/* The PROJECT of the select list and the hidden ORDER BY columns. */
static sto_status build_projection(select_state *st)
{
    binder *b = st->b;
    uint32_t n = st->nitems + st->nhidden;
    sql_lop *proj = sql_lop_new(b->ctx, SQL_LOP_PROJECT, st->input, NULL, n);
    if (!proj) return sto_error_oom();
    proj->project.count = n;
    proj->project.items = sql_arena_alloc(b->arena, (n ? n : 1) * sizeof(sql_proj_item));
    if (!proj->project.items) return sto_error_oom();
    for (uint32_t i = 0; i < n; i++) {
        sql_bexpr *x = NULL;
        const char *name = "?order?";
        if (i < st->nitems) {
            x = st->items[i].expr;
            name = st->items[i].name;
        }
        for (uint32_t k = 0; k < st->norder && !x; k++) {
            if (st->order[k].output == (int)i) x = st->order[k].expr;
        }
        /* A column passed on keeps its id, unless already projected. */
        sql_colid id = x->kind == SQL_BEXPR_COLUMN ? x->column : 0;
        for (uint32_t k = 0; k < i && id; k++) {
            if (proj->out[k] == id) id = 0;
        }
        if (!id) id = sql_plan_new_col(b->ctx, x->type, x->nullable, name);
        if (!id) return sto_error_oom();
        proj->project.items[i].expr = x;
        proj->project.items[i].id = proj->out[i] = id;
    }
    st->proj = st->input = proj;
    return STO_OK;
}

static sto_status build_sort(select_state *st)
{
    binder *b = st->b;
    if (!st->norder) return STO_OK;
    sql_lop *sort = sql_bind_unary_op(b, SQL_LOP_SORT, st->input);
    if (!sort) return sto_error_oom();
    sort->sort.count = st->norder;
    sort->sort.keys = sql_arena_alloc(b->arena, st->norder * sizeof(sql_sort_key));
    if (!sort->sort.keys) return sto_error_oom();
    for (uint32_t i = 0; i < st->norder; i++) {
        sql_sort_key *k = &sort->sort.keys[i];
        k->expr = sql_bexpr_column(b->ctx, st->proj->out[st->order[i].output],
                                   st->q->order_by.items[i]->expr->pos);
        if (!k->expr) return sto_error_oom();
        k->desc = st->order[i].desc;
        k->nulls_first = st->order[i].nulls_first;
    }
    st->input = sort;
    return STO_OK;
}

/* A last PROJECT keeps the select list's columns only. */
static sto_status drop_hidden(select_state *st)
{
    binder *b = st->b;
    uint32_t n = st->nitems;
    if (!st->nhidden) return STO_OK;
    sql_lop *p = sql_lop_new(b->ctx, SQL_LOP_PROJECT, st->input, NULL, n);
    if (!p) return sto_error_oom();
    p->project.count = n;
    p->project.items = sql_arena_alloc(b->arena, (n ? n : 1) * sizeof(sql_proj_item));
    if (!p->project.items) return sto_error_oom();
    for (uint32_t i = 0; i < n; i++) {
        p->project.items[i].id = p->out[i] = st->proj->out[i];
        p->project.items[i].expr = sql_bexpr_column(b->ctx, st->proj->out[i], 0);
        if (!p->project.items[i].expr) return sto_error_oom();
    }
    st->input = p;
    return STO_OK;
}

/* SELECT, step by step in the order of the file comment. The select list,
 * HAVING and ORDER BY are bound before the AGGREGATE is built because they
 * are what tells whether there is one (their aggregate calls). */
sto_status sql_bind_select(binder *b, bind_scope *s, const sql_query *q, bound_query *out)
{
    select_state st = {.b = b, .s = s, .q = q};
    STO_TRY(sql_bind_from(b, s, &q->from, &st.input));
    STO_TRY(bind_where(&st));
    STO_TRY(bind_group_keys(&st));
    STO_TRY(bind_select_list(&st));
    STO_TRY(bind_order_items(&st));
    STO_TRY(build_aggregate(&st));
    STO_TRY(place_order_items(&st));
    STO_TRY(build_projection(&st));
    if (q->distinct) {
        st.input = sql_bind_unary_op(b, SQL_LOP_DISTINCT, st.input);
        if (!st.input) return sto_error_oom();
    }
    STO_TRY(build_sort(&st));
    STO_TRY(sql_bind_add_limit(b, s->parent, q, &st.input));
    STO_TRY(drop_hidden(&st));
    out->root = st.input;
    out->ncols = st.nitems;
    out->cols = st.proj->out;
    out->names = st.names;
    return STO_OK;
}
