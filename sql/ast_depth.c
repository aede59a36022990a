/*
 * ast_depth.c — bounds how deep a parsed tree may be.
 *
 * Every later pass (binder, printer, planner) walks the tree recursively, so
 * a statement nested deeply enough would overflow their stacks. Lemon's
 * bounded stack limits nesting written with parentheses, but left-assoc
 * chains (a + b + c ...) and subqueries nested inside such chains can still
 * multiply into a very deep tree. So after a successful parse the driver
 * measures the real depth once, with an explicit stack (this walk itself
 * never recurses), and refuses trees deeper than SQL_MAX_TREE_DEPTH.
 */
#include <stdlib.h>

#include "sql/ast_build.h"

typedef enum node_type { N_STMT, N_QUERY, N_TABLE, N_EXPR } node_type;

typedef struct frame {
    node_type type;
    int depth;
    const void *node;
} frame;

typedef struct walk {
    frame *stack;
    int len, cap;
    bool oom;
} walk;

static void push(walk *w, node_type type, const void *node, int depth)
{
    if (!node || w->oom) return;
    if (w->len == w->cap) {
        int ncap = w->cap ? w->cap * 2 : 256;
        frame *n = realloc(w->stack, (size_t)ncap * sizeof(*n));
        if (!n) {
            w->oom = true;
            return;
        }
        w->stack = n;
        w->cap = ncap;
    }
    w->stack[w->len++] = (frame){type, depth, node};
}

static void push_exprs(walk *w, const sql_expr_list *l, int depth)
{
    for (int i = 0; i < l->count; i++)
        push(w, N_EXPR, l->items[i], depth);
}

static void push_stmt_children(walk *w, const sql_stmt *s, int d)
{
    switch (s->kind) {
    case SQL_STMT_SELECT:
        push(w, N_QUERY, s->query, d);
        break;
    case SQL_STMT_CREATE_TABLE:
    case SQL_STMT_CREATE_TABLE_AS:
        push(w, N_QUERY, s->create_table.query, d);
        break;
    case SQL_STMT_CREATE_VIEW:
        push(w, N_QUERY, s->create_view.query, d);
        break;
    case SQL_STMT_INSERT:
        push(w, N_QUERY, s->insert.query, d);
        break;
    case SQL_STMT_COPY_FROM:
    case SQL_STMT_COPY_TO:
        push(w, N_QUERY, s->copy.query, d);
        break;
    case SQL_STMT_CALL:
        for (int i = 0; i < s->call.args.count; i++)
            if (s->call.args.items[i]) push(w, N_EXPR, s->call.args.items[i]->value, d);
        break;
    case SQL_STMT_EXPLAIN:
        push(w, N_STMT, s->explain.stmt, d);
        break;
    case SQL_STMT_SET:
        push(w, N_EXPR, s->set.value, d);
        break;
    default:
        break;
    }
}

static void push_query_children(walk *w, const sql_query *q, int d)
{
    for (int i = 0; i < q->with.count; i++)
        if (q->with.items[i]) push(w, N_QUERY, q->with.items[i]->query, d);
    for (int i = 0; i < q->select.count; i++)
        if (q->select.items[i]) push(w, N_EXPR, q->select.items[i]->expr, d);
    for (int i = 0; i < q->from.count; i++)
        push(w, N_TABLE, q->from.items[i], d);
    push(w, N_EXPR, q->where, d);
    push_exprs(w, &q->group_by, d);
    push(w, N_EXPR, q->having, d);
    for (int i = 0; i < q->values.count; i++)
        if (q->values.items[i]) push_exprs(w, q->values.items[i], d);
    push(w, N_QUERY, q->left, d);
    push(w, N_QUERY, q->right, d);
    for (int i = 0; i < q->order_by.count; i++)
        if (q->order_by.items[i]) push(w, N_EXPR, q->order_by.items[i]->expr, d);
    push(w, N_EXPR, q->limit, d);
    push(w, N_EXPR, q->offset, d);
}

static void push_table_children(walk *w, const sql_table_ref *t, int d)
{
    push(w, N_QUERY, t->subquery, d);
    push(w, N_TABLE, t->left, d);
    push(w, N_TABLE, t->right, d);
    push(w, N_EXPR, t->on, d);
}

static void push_expr_children(walk *w, const sql_expr *e, int d)
{
    switch (e->kind) {
    case SQL_EXPR_UNARY:
        push(w, N_EXPR, e->unary.arg, d);
        break;
    case SQL_EXPR_BINARY:
        push(w, N_EXPR, e->binary.left, d);
        push(w, N_EXPR, e->binary.right, d);
        break;
    case SQL_EXPR_IS_NULL:
        push(w, N_EXPR, e->is_null.arg, d);
        break;
    case SQL_EXPR_BETWEEN:
        push(w, N_EXPR, e->between.arg, d);
        push(w, N_EXPR, e->between.low, d);
        push(w, N_EXPR, e->between.high, d);
        break;
    case SQL_EXPR_IN_LIST:
        push(w, N_EXPR, e->in_list.arg, d);
        push_exprs(w, &e->in_list.list, d);
        break;
    case SQL_EXPR_IN_SUBQUERY:
        push(w, N_EXPR, e->in_subquery.arg, d);
        push(w, N_QUERY, e->in_subquery.subquery, d);
        break;
    case SQL_EXPR_LIKE:
        push(w, N_EXPR, e->like.arg, d);
        push(w, N_EXPR, e->like.pattern, d);
        push(w, N_EXPR, e->like.escape, d);
        break;
    case SQL_EXPR_EXISTS:
    case SQL_EXPR_SUBQUERY:
        push(w, N_QUERY, e->subquery.query, d);
        break;
    case SQL_EXPR_QUANTIFIED:
        push(w, N_EXPR, e->quantified.arg, d);
        push(w, N_QUERY, e->quantified.subquery, d);
        break;
    case SQL_EXPR_CASE:
        push(w, N_EXPR, e->case_.operand, d);
        for (int i = 0; i < e->case_.whens.count; i++) {
            const sql_when *wh = e->case_.whens.items[i];
            if (!wh) continue;
            push(w, N_EXPR, wh->cond, d);
            push(w, N_EXPR, wh->result, d);
        }
        push(w, N_EXPR, e->case_.else_result, d);
        break;
    case SQL_EXPR_CAST:
        push(w, N_EXPR, e->cast.arg, d);
        break;
    case SQL_EXPR_FUNC:
        push_exprs(w, &e->func.args, d);
        break;
    case SQL_EXPR_EXTRACT:
        push(w, N_EXPR, e->extract.arg, d);
        break;
    default:
        break;
    }
}

static int node_pos(const frame *f)
{
    switch (f->type) {
    case N_STMT:
        return ((const sql_stmt *)f->node)->pos;
    case N_QUERY:
        return ((const sql_query *)f->node)->pos;
    case N_TABLE:
        return ((const sql_table_ref *)f->node)->pos;
    default:
        return ((const sql_expr *)f->node)->pos;
    }
}

sto_status sql_check_depth(const sql_stmt *stmt)
{
    walk w = {NULL, 0, 0, false};
    sto_status st = STO_OK;
    push(&w, N_STMT, stmt, 1);
    while (w.len > 0 && !w.oom) {
        frame f = w.stack[--w.len];
        if (f.depth > SQL_MAX_TREE_DEPTH) {
            st = sto_error_at(STO_STATEMENT_TOO_COMPLEX, node_pos(&f),
                              "statement is nested too deeply (more than %d levels)",
                              SQL_MAX_TREE_DEPTH);
            break;
        }
        switch (f.type) {
        case N_STMT:
            push_stmt_children(&w, f.node, f.depth + 1);
            break;
        case N_QUERY:
            push_query_children(&w, f.node, f.depth + 1);
            break;
        case N_TABLE:
            push_table_children(&w, f.node, f.depth + 1);
            break;
        case N_EXPR:
            push_expr_children(&w, f.node, f.depth + 1);
            break;
        }
    }
    if (!st && w.oom) st = sto_error_oom();
    free(w.stack);
    return st;
}
