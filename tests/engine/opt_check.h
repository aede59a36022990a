/*
 * opt_check.h — a validator for optimized plans, used by the optimizer
 * tests: whatever the rules did, the plan must still be well formed for the
 * physical planner.
 *
 *   - every column an operator's expressions read is produced by its inputs
 *     (a remaining subquery's free variables too);
 *   - every out list is what plan.h says it is for the operator's kind, with
 *     no id twice;
 *   - the tree is a tree (no operator reached twice);
 *   - every operator has an estimate, every join an algorithm;
 *   - the root produces exactly plan->cols.
 *
 * Header-only and static: each test program includes it once.
 */
#ifndef RACKDB_TESTS_ENGINE_OPT_CHECK_H
#define RACKDB_TESTS_ENGINE_OPT_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql/plan.h"

typedef struct ocheck {
    const sql_plan_ctx *ctx;
    const sql_lop **seen;
    size_t nseen, capseen;
    int errors;
    const char *what;
} ocheck;

static inline void ocheck_fail(ocheck *c, const sql_lop *op, const char *msg, sql_colid id)
{
    char *s = sql_lop_to_string(c->ctx, op);
    const char *nl = s ? strchr(s, '\n') : NULL;
    fprintf(stderr, "%s: %s (id %u) at: %.*s\n", c->what, msg, id,
            s ? (int)(nl ? nl - s : (long)strlen(s)) : 0, s ? s : "");
    free(s);
    c->errors++;
}

typedef struct ocheck_refs {
    const bool *avail;
    uint32_t n;
    sql_colid bad;
} ocheck_refs;

static inline sql_walk ocheck_ref_fn(sql_bexpr **slot, void *arg)
{
    ocheck_refs *r = arg;
    const sql_bexpr *e = *slot;
    if (e->kind == SQL_BEXPR_COLUMN && (e->column >= r->n || !r->avail[e->column]))
        r->bad = e->column;
    if (e->kind == SQL_BEXPR_SUBQUERY)
        for (uint32_t i = 0; i < e->subquery.nouter; i++)
            if (e->subquery.outer[i] >= r->n || !r->avail[e->subquery.outer[i]])
                r->bad = e->subquery.outer[i];
    return SQL_WALK_CONTINUE;
}

static inline void ocheck_expr(ocheck *c, const sql_lop *op, const sql_bexpr *e, const bool *avail)
{
    if (!e) return;
    ocheck_refs r = {avail, c->ctx->ncols + 1, 0};
    sql_bexpr *root = (sql_bexpr *)e;
    sql_bexpr_walk(&root, ocheck_ref_fn, &r);
    if (r.bad) ocheck_fail(c, op, "reads a column its inputs do not produce", r.bad);
}

static inline void ocheck_op(ocheck *c, const sql_lop *op)
{
    if (!op) return;
    for (size_t i = 0; i < c->nseen; i++)
        if (c->seen[i] == op) ocheck_fail(c, op, "operator reached twice", 0);
    if (c->nseen == c->capseen) {
        c->capseen = c->capseen ? c->capseen * 2 : 64;
        c->seen = realloc(c->seen, c->capseen * sizeof(*c->seen));
        if (!c->seen) {
            c->errors++;
            return;
        }
    }
    c->seen[c->nseen++] = op;
    ocheck_op(c, op->left);
    ocheck_op(c, op->right);

    uint32_t n = c->ctx->ncols + 1;
    bool *avail = calloc(n, sizeof(bool));
    sql_colid *want = calloc(n + op->nout + 1, sizeof(sql_colid));
    if (!avail || !want) {
        free(avail);
        free(want);
        c->errors++;
        return;
    }
    uint32_t nwant = 0;
    if (op->left)
        for (uint32_t i = 0; i < op->left->nout; i++)
            avail[op->left->out[i]] = true;
    if (op->right)
        for (uint32_t i = 0; i < op->right->nout; i++)
            avail[op->right->out[i]] = true;
    switch (op->kind) {
    case SQL_LOP_GET:
        nwant = op->nout;
        memcpy(want, op->out, op->nout * sizeof(sql_colid));
        break;
    case SQL_LOP_FILTER:
        ocheck_expr(c, op, op->filter.pred, avail);
        nwant = op->left->nout;
        memcpy(want, op->left->out, nwant * sizeof(sql_colid));
        break;
    case SQL_LOP_SORT:
        for (uint32_t i = 0; i < op->sort.count; i++)
            ocheck_expr(c, op, op->sort.keys[i].expr, avail);
        /* fall through */
    case SQL_LOP_LIMIT:
    case SQL_LOP_DISTINCT:
        nwant = op->left->nout;
        memcpy(want, op->left->out, nwant * sizeof(sql_colid));
        break;
    case SQL_LOP_PROJECT:
        for (uint32_t i = 0; i < op->project.count; i++) {
            ocheck_expr(c, op, op->project.items[i].expr, avail);
            want[nwant++] = op->project.items[i].id;
        }
        break;
    case SQL_LOP_AGGREGATE:
        for (uint32_t i = 0; i < op->aggregate.ngroups; i++) {
            ocheck_expr(c, op, op->aggregate.groups[i].expr, avail);
            want[nwant++] = op->aggregate.groups[i].id;
        }
        for (uint32_t i = 0; i < op->aggregate.naggs; i++) {
            ocheck_expr(c, op, op->aggregate.aggs[i].arg, avail);
            want[nwant++] = op->aggregate.aggs[i].id;
        }
        break;
    case SQL_LOP_JOIN: {
        sql_join_kind k = op->join.kind;
        ocheck_expr(c, op, op->join.cond, avail);
        memcpy(want, op->left->out, op->left->nout * sizeof(sql_colid));
        nwant = op->left->nout;
        if (k != SQL_JOINK_SEMI && k != SQL_JOINK_ANTI && k != SQL_JOINK_MARK) {
            memcpy(want + nwant, op->right->out, op->right->nout * sizeof(sql_colid));
            nwant += op->right->nout;
        }
        if (k == SQL_JOINK_MARK) want[nwant++] = op->join.mark;
        if (op->phys.algorithm == 0) ocheck_fail(c, op, "join without an algorithm", 0);
        break;
    }
    default:
        nwant = op->nout;
        memcpy(want, op->out, op->nout * sizeof(sql_colid));
        break;
    }
    if (nwant != op->nout || memcmp(want, op->out, nwant * sizeof(sql_colid)) != 0)
        ocheck_fail(c, op, "out list does not follow from the operator", 0);
    memset(avail, 0, n * sizeof(bool));
    for (uint32_t i = 0; i < op->nout; i++) {
        if (op->out[i] < n && avail[op->out[i]]) ocheck_fail(c, op, "id output twice", op->out[i]);
        if (op->out[i] < n) avail[op->out[i]] = true;
    }
    if (op->est_rows < 1) ocheck_fail(c, op, "no estimate", 0);
    free(avail);
    free(want);
}

/* Number of problems found (each printed to stderr). */
static inline int ocheck_plan(const sql_plan *p, const char *what)
{
    ocheck c = {p->ctx, NULL, 0, 0, 0, what};
    ocheck_op(&c, p->root);
    bool same = p->root->nout == p->ncols;
    for (uint32_t i = 0; same && i < p->ncols; i++)
        same = p->root->out[i] == p->cols[i];
    if (!same) ocheck_fail(&c, p->root, "root does not produce the plan's columns", 0);
    free(c.seen);
    return c.errors;
}

#endif
