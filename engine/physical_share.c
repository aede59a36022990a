/*
 * physical_share.c — an aggregation that a plan computes twice runs once.
 *
 * Unnesting and views leave plans that aggregate the same input twice:
 * q15's view revenue0 is read by the query and by its scalar subquery
 * max(total_revenue); q11's HAVING compares each part's sum with the sum
 * over every part of the same join. The two copies carry different column
 * ids but are otherwise the same tree. The physical planner asks here
 * before it plans an aggregation:
 *
 *   - when an aggregation it already planned is the same tree up to column
 *     ids (same tables and columns, the same expressions over
 *     corresponding ids), the new one becomes a second reader of the first
 *     one's output: the reader's slots are named with the new ids, so the
 *     layers above need no change;
 *
 *   - when it is an aggregation without GROUP BY whose aggregates are SUM
 *     (of integers or decimals: exact), MIN or MAX, and the plan holds a
 *     grouped aggregation over the same input computing the same
 *     aggregates, it is computed from that one's groups (a sum of the
 *     groups' sums, a min of their mins), which are planned first if they
 *     are not yet. COUNT is left alone: over no rows it is 0, while the
 *     sum of no groups' counts would be NULL.
 *
 * The executor keeps a pipeline's output until its last reader has run.
 * Exchanges (distributed plans) are never shared: each names a stream.
 */
#include <string.h>

#include "engine/physical_int.h"

/* ------------------------------------------------- same tree up to ids -- */

/* map: an id of tree b → the corresponding id of tree a (0: none yet). */
typedef struct idmap {
    sql_colid *to;
    uint32_t n;
} idmap;

static bool bind_id(idmap *m, sql_colid b, sql_colid a)
{
    if (b >= m->n) return false;
    if (m->to[b] && m->to[b] != a) return false;
    m->to[b] = a;
    return true;
}

static bool mapped_col(sql_colid a, sql_colid b, const void *arg)
{
    const idmap *m = arg;
    return b < m->n && m->to[b] && m->to[b] == a;
}

/* a and b compute the same value when b's columns are read as a's. */
static bool expr_eq(const idmap *m, const sql_bexpr *a, const sql_bexpr *b)
{
    return sql_bexpr_equal_as(a, b, mapped_col, m);
}

/* Does tree b make the rows tree a makes, with other column ids? Fills m
 * with b's ids → a's. Below the top, b may keep fewer columns than a (the
 * pruner narrows each copy to what its reader needs): a GET or PROJECT of b
 * may have a subset of a's, an aggregation a subset of a's aggregates; the
 * rows are the same. At the top (exact), and below a DISTINCT, whose rows
 * depend on every column, the outputs correspond position by position. */
static bool same_tree(idmap *m, const sql_lop *a, const sql_lop *b, bool exact)
{
    if (!a || !b) return a == b;
    if (a->kind != b->kind || (exact && a->nout != b->nout)) return false;
    bool below_exact = a->kind == SQL_LOP_DISTINCT;
    if (!same_tree(m, a->left, b->left, below_exact) ||
        !same_tree(m, a->right, b->right, below_exact))
        return false;
    switch (a->kind) {
    case SQL_LOP_GET:
        if (!a->get.table || a->get.table != b->get.table) return false;
        for (uint32_t i = 0; i < b->nout; i++) {
            uint32_t j = 0;
            while (j < a->nout && a->get.columns[j] != b->get.columns[i])
                j++;
            if (j == a->nout || !bind_id(m, b->out[i], a->out[j])) return false;
        }
        break;
    case SQL_LOP_FILTER:
        if (!expr_eq(m, a->filter.pred, b->filter.pred)) return false;
        break;
    case SQL_LOP_PROJECT:
        for (uint32_t i = 0; i < b->project.count; i++) {
            const sql_proj_item *y = &b->project.items[i];
            uint32_t j = 0;
            while (j < a->project.count && !expr_eq(m, a->project.items[j].expr, y->expr))
                j++;
            if (j == a->project.count || !bind_id(m, y->id, a->project.items[j].id)) return false;
        }
        break;
    case SQL_LOP_JOIN:
        if (a->join.kind != b->join.kind || !expr_eq(m, a->join.cond, b->join.cond)) return false;
        if (a->join.kind == SQL_JOINK_MARK && !bind_id(m, b->join.mark, a->join.mark)) return false;
        break;
    case SQL_LOP_AGGREGATE:
        if (a->aggregate.ngroups != b->aggregate.ngroups) return false;
        for (uint32_t i = 0; i < a->aggregate.ngroups; i++) {
            const sql_proj_item *x = &a->aggregate.groups[i], *y = &b->aggregate.groups[i];
            if (!expr_eq(m, x->expr, y->expr)) return false;
        }
        /* Group keys that are plain columns keep their input ids. */
        for (uint32_t i = 0; i < a->aggregate.ngroups; i++)
            if (!bind_id(m, b->aggregate.groups[i].id, a->aggregate.groups[i].id)) return false;
        for (uint32_t i = 0; i < b->aggregate.naggs; i++) {
            const sql_agg_item *y = &b->aggregate.aggs[i];
            uint32_t j = 0;
            for (; j < a->aggregate.naggs; j++) {
                const sql_agg_item *x = &a->aggregate.aggs[j];
                if (x->func == y->func && x->distinct == y->distinct && expr_eq(m, x->arg, y->arg))
                    break;
            }
            if (j == a->aggregate.naggs || !bind_id(m, y->id, a->aggregate.aggs[j].id))
                return false;
        }
        break;
    case SQL_LOP_DISTINCT:
        break;
    case SQL_LOP_SORT:
        if (a->sort.count != b->sort.count) return false;
        for (uint32_t i = 0; i < a->sort.count; i++) {
            const sql_sort_key *x = &a->sort.keys[i], *y = &b->sort.keys[i];
            if (x->desc != y->desc || x->nulls_first != y->nulls_first ||
                !expr_eq(m, x->expr, y->expr))
                return false;
        }
        break;
    case SQL_LOP_LIMIT:
        if (a->limit.limit != b->limit.limit || a->limit.offset != b->limit.offset) return false;
        break;
    default:
        return false; /* VALUES, SETOP, EXCHANGE: not shared */
    }
    if (!exact) return true;
    for (uint32_t i = 0; i < a->nout; i++)
        if (b->out[i] >= m->n || m->to[b->out[i]] != a->out[i]) return false;
    return true;
}

/* An empty map in the builder's scratch array: maps live until the next
 * new_map, except the one keep_map copies. */
static bool new_map(eng_phys_builder *b, idmap *m)
{
    m->n = b->ctx->ncols + 1;
    if (b->nscratch < m->n) {
        b->scratch = eng_phys_alloc(b, m->n, sizeof(*b->scratch));
        if (!b->scratch) return false;
        b->nscratch = m->n;
    }
    m->to = b->scratch;
    memset(m->to, 0, m->n * sizeof(*m->to));
    return true;
}

static bool keep_map(eng_phys_builder *b, idmap *m)
{
    sql_colid *to = eng_phys_alloc(b, m->n, sizeof(*to));
    if (!to) return false;
    memcpy(to, m->to, m->n * sizeof(*to));
    m->to = to;
    return true;
}

/* ------------------------------------------------------- the memo -- */

static sto_status remember(eng_phys_builder *b, const sql_lop *op, unsigned pipe)
{
    if (b->nshared == b->cap_shared) {
        unsigned cap = b->cap_shared ? 2 * b->cap_shared : 8;
        const sql_lop **ops = eng_phys_alloc(b, cap, sizeof(*ops));
        unsigned *pipes = eng_phys_alloc(b, cap, sizeof(*pipes));
        if (!ops || !pipes) return sto_error_oom();
        if (b->nshared) {
            memcpy(ops, b->shared_ops, b->nshared * sizeof(*ops));
            memcpy(pipes, b->shared_pipes, b->nshared * sizeof(*pipes));
        }
        b->shared_ops = ops;
        b->shared_pipes = pipes;
        b->cap_shared = cap;
    }
    b->shared_ops[b->nshared] = op;
    b->shared_pipes[b->nshared++] = pipe;
    return STO_OK;
}

sto_status eng_phys_remember_agg(eng_phys_builder *b, const sql_lop *op, unsigned pipe)
{
    return remember(b, op, pipe);
}

/* op will read what another tree computes: the joins inside it are not
 * to be shared with anything (find_partner). */
static sto_status replace(eng_phys_builder *b, const sql_lop *op)
{
    if (b->nreplaced == b->cap_replaced) {
        unsigned cap = b->cap_replaced ? 2 * b->cap_replaced : 8;
        const sql_lop **r = eng_phys_alloc(b, cap, sizeof(*r));
        if (!r) return sto_error_oom();
        if (b->nreplaced) memcpy(r, b->replaced, b->nreplaced * sizeof(*r));
        b->replaced = r;
        b->cap_replaced = cap;
    }
    b->replaced[b->nreplaced++] = op;
    return STO_OK;
}

/* The aggregations of the tree at n that are op again: they will read op's
 * result, so they are replaced before op's input is planned. */
static sto_status replace_copies(eng_phys_builder *b, const sql_lop *n, const sql_lop *op)
{
    if (!n) return STO_OK;
    if (n != op && n->kind == op->kind) {
        idmap m;
        if (!new_map(b, &m)) return sto_error_oom();
        if (same_tree(&m, op, n, true)) return replace(b, n);
    }
    STO_TRY(replace_copies(b, n->left, op));
    return replace_copies(b, n->right, op);
}

/* A reader of pipeline `pipe` whose slots carry ids[0..n). */
static sto_status read_as(eng_phys_builder *b, unsigned pipe, const sql_colid *ids, uint32_t n,
                          unsigned *id)
{
    STO_TRY(eng_phys_open_reader(b, pipe, id));
    eng_pipe *p = &b->pipes[*id];
    if (n > p->nin) return sto_error(STO_INTERNAL_ERROR, "shared aggregation: slot count");
    memcpy(p->in_ids, ids, n * sizeof(*ids));
    return STO_OK;
}

/* Does every output of b (m: b's ids → a's) have a slot among a's? */
static bool outputs_covered(const idmap *m, const sql_lop *a, const sql_lop *b)
{
    for (uint32_t i = 0; i < b->nout; i++) {
        sql_colid to = b->out[i] < m->n ? m->to[b->out[i]] : 0;
        bool found = false;
        for (uint32_t k = 0; k < a->nout && !found; k++)
            found = to && a->out[k] == to;
        if (!found) return false;
    }
    return true;
}

/* A reader of the rows of a (pipeline `pipe`) as tree b: each slot carries
 * the id of b that corresponds to a's column there, or none. */
static sto_status read_mapped(eng_phys_builder *b, unsigned pipe, const sql_lop *a,
                              const sql_lop *op, const idmap *m, unsigned *id)
{
    STO_TRY(eng_phys_open_reader(b, pipe, id));
    eng_pipe *p = &b->pipes[*id];
    for (uint32_t k = 0; k < p->nin; k++)
        p->in_ids[k] = 0;
    for (uint32_t i = 0; i < op->nout; i++)
        for (uint32_t k = 0; k < a->nout && k < p->nin; k++)
            if (a->out[k] == m->to[op->out[i]]) p->in_ids[k] = op->out[i];
    return STO_OK;
}

/* ------------------------------------- a total from a grouped result -- */

static bool decomposable(const sql_plan_ctx *ctx, const sql_agg_item *a)
{
    if (a->distinct || !a->arg) return false;
    if (a->func == SQL_AGG_MIN || a->func == SQL_AGG_MAX) return true;
    sto_type_id t = sql_plan_col(ctx, a->id)->type.id;
    return a->func == SQL_AGG_SUM && (t == STO_TYPE_BIGINT || t == STO_TYPE_DECIMAL);
}

typedef struct grouped_match {
    const sql_lop *g;
    uint32_t *agg_of; /* per aggregate of the total: the group's aggregate */
} grouped_match;

/* Does grouped aggregation g compute every aggregate of total over the
 * same input? */
static bool covers(eng_phys_builder *b, const sql_lop *g, const sql_lop *total, uint32_t *agg_of,
                   bool *oom)
{
    if (g->kind != SQL_LOP_AGGREGATE || g->aggregate.ngroups == 0 || g == total) return false;
    idmap m;
    if (!new_map(b, &m)) {
        *oom = true;
        return false;
    }
    if (!same_tree(&m, g->left, total->left, false)) return false;
    for (uint32_t i = 0; i < total->aggregate.naggs; i++) {
        const sql_agg_item *t = &total->aggregate.aggs[i];
        bool found = false;
        for (uint32_t j = 0; j < g->aggregate.naggs && !found; j++) {
            const sql_agg_item *x = &g->aggregate.aggs[j];
            if (x->func == t->func && !x->distinct && expr_eq(&m, x->arg, t->arg)) {
                agg_of[i] = j;
                found = true;
            }
        }
        if (!found) return false;
    }
    return true;
}

static bool find_grouped(eng_phys_builder *b, const sql_lop *op, const sql_lop *total,
                         grouped_match *gm, bool *oom)
{
    if (!op || *oom) return false;
    if (covers(b, op, total, gm->agg_of, oom)) {
        gm->g = op;
        return true;
    }
    return find_grouped(b, op->left, total, gm, oom) || find_grouped(b, op->right, total, gm, oom);
}

/* The total computed from g's output: an aggregation without GROUP BY
 * whose aggregates read g's (SUM of sums, MIN of mins, MAX of maxes), with
 * total's output ids. */
static sql_lop *total_over(eng_phys_builder *b, const sql_lop *total, const grouped_match *gm)
{
    sql_plan_ctx *ctx = b->ctx;
    uint32_t n = total->aggregate.naggs;
    sql_lop *t = sql_lop_new(ctx, SQL_LOP_AGGREGATE, NULL, NULL, total->nout);
    sql_agg_item *aggs = eng_phys_alloc(b, n, sizeof(*aggs));
    if (!t || !aggs) return NULL;
    memcpy(t->out, total->out, total->nout * sizeof(*t->out));
    for (uint32_t i = 0; i < n; i++) {
        const sql_agg_item *x = &gm->g->aggregate.aggs[gm->agg_of[i]];
        aggs[i] = total->aggregate.aggs[i];
        aggs[i].arg = sql_bexpr_column(ctx, x->id, 0);
        if (!aggs[i].arg) return NULL;
    }
    t->aggregate.naggs = n;
    t->aggregate.aggs = aggs;
    t->est_rows = 1;
    return t;
}

/* The pipeline whose output is g's groups: planned now if not yet. */
static sto_status grouped_pipe(eng_phys_builder *b, const sql_lop *g, unsigned *pipe)
{
    for (unsigned i = 0; i < b->nshared; i++)
        if (b->shared_ops[i] == g) {
            *pipe = b->shared_pipes[i];
            return STO_OK;
        }
    STO_TRY(eng_phys_open_pipe(b, g->left, pipe));
    STO_TRY(eng_phys_close_agg(b, *pipe, g));
    return remember(b, g, *pipe);
}

/* ----------------------------------------------------------- entry -- */

sto_status eng_phys_share_agg(eng_phys_builder *b, const sql_lop *op, unsigned *id, bool *done)
{
    *done = false;
    for (unsigned i = 0; i < b->nshared; i++) {
        const sql_lop *a = b->shared_ops[i];
        idmap m;
        if (a != op && !new_map(b, &m)) return sto_error_oom();
        if (a == op || same_tree(&m, a, op, true)) {
            *done = true;
            return read_as(b, b->shared_pipes[i], op->out, op->nout, id);
        }
    }
    if (op->kind != SQL_LOP_AGGREGATE || op->aggregate.ngroups != 0 || op->aggregate.naggs == 0)
        return replace_copies(b, b->plan->root, op);
    for (uint32_t i = 0; i < op->aggregate.naggs; i++)
        if (!decomposable(b->ctx, &op->aggregate.aggs[i]))
            return replace_copies(b, b->plan->root, op);
    grouped_match gm = {NULL, eng_phys_alloc(b, op->aggregate.naggs, sizeof(uint32_t))};
    bool oom = !gm.agg_of;
    if (!oom && !find_grouped(b, b->plan->root, op, &gm, &oom))
        return oom ? sto_error_oom() : replace_copies(b, b->plan->root, op);
    if (oom) return sto_error_oom();
    STO_TRY(replace(b, op));
    sql_lop *t = total_over(b, op, &gm);
    if (!t) return sto_error_oom();
    unsigned g, in;
    STO_TRY(grouped_pipe(b, gm.g, &g));
    STO_TRY(eng_phys_open_reader(b, g, &in));
    STO_TRY(eng_phys_close_agg(b, in, t));
    /* The total is itself an aggregation a later copy may read. */
    STO_TRY(remember(b, op, in));
    *done = true;
    return eng_phys_open_reader(b, in, id);
}

/* ------------------------------------------------ shared join rows -- */

/* The rows of join t, materialized by a pipeline of their own. */
static sto_status materialize(eng_phys_builder *b, const sql_lop *t, unsigned *pipe)
{
    STO_TRY(eng_phys_open_join(b, t, pipe));
    eng_pipe *p = &b->pipes[*pipe];
    p->sink = ENG_SINK_ROWS;
    p->sink_op = t;
    p->nout = p->nexprs = t->nout;
    p->out_ids = t->out;
    STO_TRY(eng_phys_column_exprs(b, t->out, t->nout, 0, &b->pipes[*pipe].exprs));
    return remember(b, t, *pipe);
}

typedef struct partner {
    const sql_lop *op, *found;
    bool op_covers; /* op has every column found needs */
    idmap m;        /* the narrower tree's ids → the wider one's */
    bool oom;
} partner;

static bool find_partner(eng_phys_builder *b, const sql_lop *n, partner *pt)
{
    if (!n || pt->oom) return false;
    /* A copy that will read shared rows is never planned: its joins are
     * nobody's partners. */
    for (unsigned i = 0; i < b->nreplaced; i++)
        if (b->replaced[i] == n) return false;
    if (n != pt->op && n->kind == SQL_LOP_JOIN) {
        for (int dir = 0; dir < 2; dir++) {
            const sql_lop *wide = dir ? n : pt->op, *narrow = dir ? pt->op : n;
            if (!new_map(b, &pt->m)) {
                pt->oom = true;
                return false;
            }
            if (same_tree(&pt->m, wide, narrow, false) && outputs_covered(&pt->m, wide, narrow)) {
                if (!keep_map(b, &pt->m)) {
                    pt->oom = true;
                    return false;
                }
                pt->found = n;
                pt->op_covers = !dir;
                return true;
            }
        }
    }
    return find_partner(b, n->left, pt) || find_partner(b, n->right, pt);
}

sto_status eng_phys_share_rows(eng_phys_builder *b, const sql_lop *op, unsigned *id, bool *done)
{
    *done = false;
    for (unsigned i = 0; i < b->nshared; i++) {
        const sql_lop *a = b->shared_ops[i];
        if (a->kind != SQL_LOP_JOIN) continue;
        idmap m;
        if (a == op) {
            *done = true;
            return read_as(b, b->shared_pipes[i], op->out, op->nout, id);
        }
        if (!new_map(b, &m)) return sto_error_oom();
        if (same_tree(&m, a, op, false) && outputs_covered(&m, a, op)) {
            *done = true;
            return read_mapped(b, b->shared_pipes[i], a, op, &m, id);
        }
    }
    partner pt = {op, NULL, false, {NULL, 0}, false};
    if (!find_partner(b, b->plan->root, &pt)) return pt.oom ? sto_error_oom() : STO_OK;
    unsigned pipe;
    *done = true;
    STO_TRY(replace(b, pt.op_covers ? pt.found : op));
    if (pt.op_covers) {
        STO_TRY(materialize(b, op, &pipe));
        return read_as(b, pipe, op->out, op->nout, id);
    }
    STO_TRY(materialize(b, pt.found, &pipe));
    return read_mapped(b, pipe, pt.found, op, &pt.m, id);
}
