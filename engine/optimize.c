/*
 * optimize.c — the optimizer's driver: runs the rules in their order and
 * prints optimized plans with their estimates for EXPLAIN.
 *
 * Order matters: folding first gives the later rules simple predicates;
 * unnesting before push-down lets the join conditions it creates travel
 * with the others; push-down before join ordering turns WHERE conjuncts
 * into the join graph's edges; pruning after ordering sees the final tree;
 * estimates and physical choices are computed last, on that tree.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/opt_int.h"

eng_opt_settings eng_opt_settings_default(void)
{
    eng_opt_settings s = {ENG_JOIN_ALGO_AUTO, 1, 0};
    return s;
}

eng_opt_settings eng_opt_settings_from(const eng_settings *s)
{
    eng_opt_settings o = eng_opt_settings_default();
    o.threads = s->threads > 0 ? s->threads : 1;
    switch (s->join_algorithm) {
    case ENG_JOIN_HASH:
        o.join_algorithm = ENG_JOIN_ALGO_HASH;
        break;
    case ENG_JOIN_RADIX:
        o.join_algorithm = ENG_JOIN_ALGO_RADIX;
        break;
    case ENG_JOIN_SORTMERGE:
        o.join_algorithm = ENG_JOIN_ALGO_SORTMERGE;
        break;
    default:
        o.join_algorithm = ENG_JOIN_ALGO_AUTO;
        break;
    }
    return o;
}

const char *eng_join_algo_name(eng_join_algo a)
{
    switch (a) {
    case ENG_JOIN_ALGO_AUTO:
        return "auto";
    case ENG_JOIN_ALGO_HASH:
        return "hash";
    case ENG_JOIN_ALGO_RADIX:
        return "radix";
    case ENG_JOIN_ALGO_SORTMERGE:
        return "sortmerge";
    case ENG_JOIN_ALGO_NESTED_LOOP:
        return "nested loop";
    }
    return "?";
}

static void clear_estimates(sql_lop *op)
{
    if (!op) return;
    op->est_rows = 0;
    op->phys.algorithm = 0;
    op->phys.build_left = false;
    clear_estimates(op->left);
    clear_estimates(op->right);
}

/* Subqueries that stay (they could not be unnested) still get their
 * filters pushed, their joins ordered and estimated, and algorithms chosen:
 * the executor runs them as plans of their own. */
typedef struct subplans {
    sql_plan_ctx *ctx;
    eng_card *card;
    const eng_opt_settings *s;
    bool oom;
} subplans;

static bool optimize_subplans(subplans *w, sql_lop *op);

static sql_walk subplan_fn(sql_bexpr **slot, void *arg)
{
    subplans *w = arg;
    if ((*slot)->kind != SQL_BEXPR_SUBQUERY) return SQL_WALK_CONTINUE;
    sql_lop **plan = &(*slot)->subquery.plan;
    bool ok = (w->s->disabled & ENG_OPT_NO_PUSHDOWN) || eng_opt_pushdown(w->ctx, plan);
    ok = ok && eng_card_add_tree(w->card, *plan);
    ok = ok && ((w->s->disabled & ENG_OPT_NO_JOINORDER) || eng_opt_joinorder(w->card, plan));
    if (ok && !(w->s->disabled & ENG_OPT_NO_PRUNE)) {
        /* The subplan keeps producing what it produced: the expression
         * reads its columns. */
        sql_lop *root = *plan;
        sql_plan sub = {w->ctx, root, root->nout, NULL, NULL};
        sub.cols = sql_arena_alloc(w->ctx->arena, (root->nout + 1) * sizeof(sql_colid));
        ok = sub.cols != NULL;
        if (ok) {
            memcpy(sub.cols, root->out, root->nout * sizeof(sql_colid));
            ok = eng_opt_prune(w->ctx, &sub);
            *plan = sub.root;
        }
    }
    if (ok) {
        eng_card_estimate(w->card, *plan);
        eng_opt_choose_physical(w->card, *plan, w->s);
        ok = optimize_subplans(w, *plan);
    }
    if (!ok) w->oom = true;
    return ok ? SQL_WALK_CONTINUE : SQL_WALK_STOP;
}

static void walk_expr(subplans *w, sql_bexpr *e)
{
    if (e && !w->oom) sql_bexpr_walk(&e, subplan_fn, w);
}

static bool optimize_subplans(subplans *w, sql_lop *op)
{
    if (!op) return true;
    switch (op->kind) {
    case SQL_LOP_FILTER:
        walk_expr(w, op->filter.pred);
        break;
    case SQL_LOP_PROJECT:
        for (uint32_t i = 0; i < op->project.count; i++)
            walk_expr(w, op->project.items[i].expr);
        break;
    case SQL_LOP_JOIN:
        walk_expr(w, op->join.cond);
        break;
    case SQL_LOP_AGGREGATE:
        for (uint32_t i = 0; i < op->aggregate.ngroups; i++)
            walk_expr(w, op->aggregate.groups[i].expr);
        for (uint32_t i = 0; i < op->aggregate.naggs; i++)
            walk_expr(w, op->aggregate.aggs[i].arg);
        break;
    case SQL_LOP_SORT:
        for (uint32_t i = 0; i < op->sort.count; i++)
            walk_expr(w, op->sort.keys[i].expr);
        break;
    default:
        break;
    }
    return !w->oom && optimize_subplans(w, op->left) && optimize_subplans(w, op->right);
}

sto_status eng_optimize(sql_plan *plan, const eng_opt_settings *s)
{
    eng_opt_settings defaults = eng_opt_settings_default();
    if (!s) s = &defaults;
    sql_plan_ctx *ctx = plan->ctx;
    sql_arena *arena = ctx->arena;
    if (!(s->disabled & ENG_OPT_NO_FOLD)) eng_opt_fold_plan(ctx, &plan->root);
    eng_padded *padded = NULL;
    if (!(s->disabled & ENG_OPT_NO_UNNEST) && !eng_opt_unnest(ctx, &plan->root, &padded))
        return sto_error_oom();
    if (!(s->disabled & ENG_OPT_NO_PUSHDOWN) && !eng_opt_pushdown(ctx, &plan->root))
        return sto_error_oom();
    eng_opt_unpad(ctx, padded);
    if (!(s->disabled & ENG_OPT_NO_EAGER_AGG) && !eng_opt_eager_agg(ctx, &plan->root))
        return sto_error_oom();
    eng_card card;
    if (!eng_card_init(&card, ctx, plan->root)) return sto_error_oom();
    if (!(s->disabled & ENG_OPT_NO_JOINORDER) && !eng_opt_joinorder(&card, &plan->root))
        return sto_error_oom();
    if (!(s->disabled & ENG_OPT_NO_PRUNE) && !eng_opt_prune(ctx, plan)) return sto_error_oom();
    if (sql_arena_failed(arena)) return sto_error_oom();
    clear_estimates(plan->root);
    eng_card_estimate(&card, plan->root);
    eng_opt_choose_physical(&card, plan->root, s);
    subplans w = {ctx, &card, s, false};
    if (!optimize_subplans(&w, plan->root)) return sto_error_oom();
    return sql_arena_failed(arena) ? sto_error_oom() : STO_OK;
}

/* ------------------------------------------------------------ EXPLAIN -- */

typedef struct explain_buf {
    char *buf;
    size_t len, cap;
    bool oom;
} explain_buf;

static void put(explain_buf *b, const char *s, size_t n)
{
    if (b->oom) return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (b->len + n + 1 > cap)
            cap *= 2;
        char *nb = realloc(b->buf, cap);
        if (!nb) {
            b->oom = true;
            return;
        }
        b->buf = nb;
        b->cap = cap;
    }
    memcpy(b->buf + b->len, s, n);
    b->len += n;
    b->buf[b->len] = 0;
}

/* Lines of printed text; subtree_lines prints a tree to count them (the
 * operator alone, with its inputs cut off, gives its own lines: its line,
 * continuation lines of multi-line string constants, its subplans). 0 when
 * memory is short. */
static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static size_t subtree_lines(const sql_plan_ctx *ctx, const sql_lop *op)
{
    if (!op) return 0;
    char *s = sql_lop_to_string(ctx, op);
    if (!s) return 0;
    size_t n = count_lines(s);
    free(s);
    return n;
}

/* The subplans of op's expressions in the order the printer numbers them
 * (an ANY's left operand is printed before its subplan). */
typedef struct subplan_list {
    const sql_lop *items[64];
    size_t n;
    bool overflow;
} subplan_list;

static sql_walk collect_fn(sql_bexpr **slot, void *arg);

static void collect_expr(subplan_list *l, sql_bexpr *e)
{
    if (e) sql_bexpr_walk(&e, collect_fn, l);
}

static sql_walk collect_fn(sql_bexpr **slot, void *arg)
{
    subplan_list *l = arg;
    if ((*slot)->kind != SQL_BEXPR_SUBQUERY) return SQL_WALK_CONTINUE;
    collect_expr(l, (*slot)->subquery.left);
    if (l->n < 64)
        l->items[l->n++] = (*slot)->subquery.plan;
    else
        l->overflow = true;
    return SQL_WALK_SKIP;
}

static void op_subplans(const sql_lop *op, subplan_list *l)
{
    switch (op->kind) {
    case SQL_LOP_FILTER:
        collect_expr(l, op->filter.pred);
        break;
    case SQL_LOP_PROJECT:
        for (uint32_t i = 0; i < op->project.count; i++)
            collect_expr(l, op->project.items[i].expr);
        break;
    case SQL_LOP_JOIN:
        collect_expr(l, op->join.cond);
        break;
    case SQL_LOP_AGGREGATE:
        for (uint32_t i = 0; i < op->aggregate.ngroups; i++)
            collect_expr(l, op->aggregate.groups[i].expr);
        for (uint32_t i = 0; i < op->aggregate.naggs; i++)
            collect_expr(l, op->aggregate.aggs[i].arg);
        break;
    case SQL_LOP_SORT:
        for (uint32_t i = 0; i < op->sort.count; i++)
            collect_expr(l, op->sort.keys[i].expr);
        break;
    case SQL_LOP_VALUES:
        for (uint32_t r = 0; r < op->values.nrows; r++)
            for (uint32_t i = 0; i < op->values.rows[r].count; i++)
                collect_expr(l, op->values.rows[r].items[i]);
        break;
    default:
        break;
    }
}

static void copy_lines(explain_buf *b, const char **text, size_t n, const char *note)
{
    for (size_t i = 0; i < n && **text; i++) {
        const char *end = strchr(*text, '\n');
        size_t len = end ? (size_t)(end - *text) : strlen(*text);
        put(b, *text, len);
        if (note && i + 1 == n) put(b, note, strlen(note));
        put(b, "\n", 1);
        *text += len + (end ? 1 : 0);
    }
}

/* Copies op's lines from *text with its estimate at the end of its own
 * text (which may span lines: a string constant with a newline), then its
 * subplans' and its inputs' lines, annotated the same way. */
static void explain_op(explain_buf *b, const sql_plan_ctx *ctx, const sql_lop *op,
                       const char **text)
{
    /* The operator printed without its inputs: its own lines. */
    sql_lop alone = *op;
    alone.left = alone.right = NULL;
    size_t own = subtree_lines(ctx, &alone);
    subplan_list subs = {.n = 0};
    op_subplans(op, &subs);
    size_t sub_lines = 0;
    for (size_t i = 0; i < subs.n; i++)
        sub_lines += 1 + subtree_lines(ctx, subs.items[i]);
    char note[128];
    int k = snprintf(note, sizeof(note), "  (est %.0f rows", op->est_rows);
    if (op->kind == SQL_LOP_JOIN && op->phys.algorithm)
        k += snprintf(note + k, sizeof(note) - (size_t)k, ", %s, build %s",
                      eng_join_algo_name((eng_join_algo)op->phys.algorithm),
                      op->phys.build_left ? "left" : "right");
    snprintf(note + k, sizeof(note) - (size_t)k, ")");
    if (subs.overflow || sub_lines >= own) {
        copy_lines(b, text, own, NULL); /* not understood: copied as printed */
    } else {
        copy_lines(b, text, own - sub_lines, note);
        for (size_t i = 0; i < subs.n; i++) {
            copy_lines(b, text, 1, NULL); /* "subplan n:" */
            explain_op(b, ctx, subs.items[i], text);
        }
    }
    if (op->left) explain_op(b, ctx, op->left, text);
    if (op->right) explain_op(b, ctx, op->right, text);
}

/* sql_plan_to_string prints the OUTPUT line, then the operators in
 * preorder; each operator's lines get its estimate on the first one. */
char *eng_plan_explain_logical(const sql_plan *plan)
{
    char *text = sql_plan_to_string(plan);
    if (!text) return NULL;
    explain_buf b = {0};
    const char *at = text;
    const char *end = strchr(at, '\n');
    size_t len = end ? (size_t)(end - at) + 1 : strlen(at);
    put(&b, at, len);
    at += len;
    explain_op(&b, plan->ctx, plan->root, &at);
    put(&b, at, strlen(at));
    free(text);
    if (b.oom) {
        free(b.buf);
        return NULL;
    }
    return b.buf;
}
