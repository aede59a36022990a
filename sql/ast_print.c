/*
 * ast_print.c — the AST as an S-expression, for tests and debugging.
 *
 * The form is chosen so a test can state the expected tree in one readable
 * line: an operator or clause name, then its operands, e.g.
 *   (select (items a (as (sum b) total)) (from t) (where (> b 1)))
 * Absent clauses are left out. Strings print in SQL quoting ('it''s'), so
 * the output is unambiguous. The printer mallocs (not the arena) because
 * its result outlives nothing and is freed by the caller.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql/ast.h"

typedef struct printer {
    char *buf;
    size_t len, cap;
    bool oom;
} printer;

static void put(printer *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(printer *p, const char *fmt, ...)
{
    if (p->oom) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(p->buf + p->len, p->cap - p->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            p->oom = true;
            return;
        }
        if ((size_t)n < p->cap - p->len) {
            p->len += (size_t)n;
            return;
        }
        size_t ncap = p->cap * 2 + (size_t)n + 1;
        char *nb = realloc(p->buf, ncap);
        if (!nb) {
            p->oom = true;
            return;
        }
        p->buf = nb;
        p->cap = ncap;
    }
}

static bool printer_init(printer *p)
{
    p->len = 0;
    p->cap = 256;
    p->oom = false;
    p->buf = malloc(p->cap);
    if (!p->buf) return false;
    p->buf[0] = '\0';
    return true;
}

static char *printer_finish(printer *p)
{
    if (p->oom) {
        free(p->buf);
        return NULL;
    }
    return p->buf;
}

static void print_expr(printer *p, const sql_expr *e);
static void print_query(printer *p, const sql_query *q);
static void print_stmt(printer *p, const sql_stmt *s);

/* 'text' with quotes doubled. */
static void print_quoted(printer *p, const char *s)
{
    put(p, "'");
    for (; s && *s; s++) {
        if (*s == '\'') put(p, "'");
        put(p, "%c", *s);
    }
    put(p, "'");
}

/* A name as written back in SQL: bare when it is plain lowercase, else in
 * double quotes, so the output shows exactly which name it is. */
static void print_name(printer *p, const char *name)
{
    if (!name) {
        put(p, "?");
        return;
    }
    bool plain = *name && !(*name >= '0' && *name <= '9');
    for (const char *c = name; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_' || *c == '$'))
            plain = false;
    if (plain) {
        put(p, "%s", name);
        return;
    }
    put(p, "\"");
    for (const char *c = name; *c; c++) {
        if (*c == '"') put(p, "\"");
        put(p, "%c", *c);
    }
    put(p, "\"");
}

static void print_idents(printer *p, const char *tag, const sql_ident_list *l)
{
    if (!l->count) return;
    put(p, " (%s", tag);
    for (int i = 0; i < l->count; i++)
        put(p, " %s", l->items[i]->name);
    put(p, ")");
}

static void print_exprs(printer *p, const sql_expr_list *l)
{
    for (int i = 0; i < l->count; i++) {
        put(p, " ");
        print_expr(p, l->items[i]);
    }
}

static const char *const type_names[] = {
#define TYPE_NAME(id, name, ctype, bytes, oid, pgname) name,
    STO_TYPE_LIST(TYPE_NAME)
#undef TYPE_NAME
};

static void print_type(printer *p, sto_type t)
{
    put(p, "%s", t.id < STO_TYPE_COUNT ? type_names[t.id] : "?");
    if (t.id == STO_TYPE_DECIMAL && t.precision) put(p, "(%d,%d)", t.precision, t.scale);
    if ((t.id == STO_TYPE_CHAR || t.id == STO_TYPE_VARCHAR) && t.length)
        put(p, "(%u)", (unsigned)t.length);
}

static void print_literal(printer *p, const sql_literal *l)
{
    switch (l->kind) {
    case SQL_LIT_NULL:
        put(p, "null");
        break;
    case SQL_LIT_BOOL:
        put(p, l->boolean ? "true" : "false");
        break;
    case SQL_LIT_INTEGER:
        put(p, "%lld", (long long)l->integer);
        break;
    case SQL_LIT_DECIMAL:
    case SQL_LIT_FLOAT:
        put(p, "%s", l->text);
        break;
    case SQL_LIT_STRING:
        print_quoted(p, l->text);
        break;
    case SQL_LIT_DATE:
        put(p, "(date ");
        print_quoted(p, l->text);
        put(p, ")");
        break;
    case SQL_LIT_INTERVAL:
        put(p, "(interval %lld %s)", (long long)l->interval.count,
            sql_date_field_name(l->interval.unit));
        break;
    }
}

/* Lowercase spelling of an operator: "and", "+", ... */
static void print_op(printer *p, sql_op op)
{
    const char *s = sql_op_spelling(op);
    for (; *s; s++)
        put(p, "%c", (*s >= 'A' && *s <= 'Z') ? *s - 'A' + 'a' : *s);
}

static void print_expr(printer *p, const sql_expr *e)
{
    if (!e) {
        put(p, "?");
        return;
    }
    switch (e->kind) {
    case SQL_EXPR_LITERAL:
        print_literal(p, &e->lit);
        break;
    case SQL_EXPR_COLUMN:
        if (e->column.table) {
            print_name(p, e->column.table);
            put(p, ".");
        }
        print_name(p, e->column.name);
        break;
    case SQL_EXPR_STAR:
        if (e->star.table) {
            print_name(p, e->star.table);
            put(p, ".");
        }
        put(p, "*");
        break;
    case SQL_EXPR_PARAM:
        put(p, "$%d", e->param.index);
        break;
    case SQL_EXPR_UNARY:
        put(p, "(");
        print_op(p, e->unary.op);
        put(p, " ");
        print_expr(p, e->unary.arg);
        put(p, ")");
        break;
    case SQL_EXPR_BINARY:
        put(p, "(");
        print_op(p, e->binary.op);
        put(p, " ");
        print_expr(p, e->binary.left);
        put(p, " ");
        print_expr(p, e->binary.right);
        put(p, ")");
        break;
    case SQL_EXPR_IS_NULL:
        put(p, e->is_null.negated ? "(is-not-null " : "(is-null ");
        print_expr(p, e->is_null.arg);
        put(p, ")");
        break;
    case SQL_EXPR_BETWEEN:
        put(p, e->between.negated ? "(not-between " : "(between ");
        print_expr(p, e->between.arg);
        put(p, " ");
        print_expr(p, e->between.low);
        put(p, " ");
        print_expr(p, e->between.high);
        put(p, ")");
        break;
    case SQL_EXPR_IN_LIST:
        put(p, e->in_list.negated ? "(not-in " : "(in ");
        print_expr(p, e->in_list.arg);
        put(p, " (list");
        print_exprs(p, &e->in_list.list);
        put(p, "))");
        break;
    case SQL_EXPR_IN_SUBQUERY:
        put(p, e->in_subquery.negated ? "(not-in " : "(in ");
        print_expr(p, e->in_subquery.arg);
        put(p, " ");
        print_query(p, e->in_subquery.subquery);
        put(p, ")");
        break;
    case SQL_EXPR_LIKE:
        put(p, "(%s%s ", e->like.negated ? "not-" : "",
            e->like.case_insensitive ? "ilike" : "like");
        print_expr(p, e->like.arg);
        put(p, " ");
        print_expr(p, e->like.pattern);
        if (e->like.escape) {
            put(p, " (escape ");
            print_expr(p, e->like.escape);
            put(p, ")");
        }
        put(p, ")");
        break;
    case SQL_EXPR_EXISTS:
    case SQL_EXPR_SUBQUERY:
        put(p, e->kind == SQL_EXPR_EXISTS ? "(exists " : "(subquery ");
        print_query(p, e->subquery.query);
        put(p, ")");
        break;
    case SQL_EXPR_QUANTIFIED:
        put(p, "(");
        print_op(p, e->quantified.op);
        put(p, " %s ", e->quantified.all ? "all" : "any");
        print_expr(p, e->quantified.arg);
        put(p, " ");
        print_query(p, e->quantified.subquery);
        put(p, ")");
        break;
    case SQL_EXPR_CASE:
        put(p, "(case");
        if (e->case_.operand) {
            put(p, " ");
            print_expr(p, e->case_.operand);
        }
        for (int i = 0; i < e->case_.whens.count; i++) {
            const sql_when *w = e->case_.whens.items[i];
            put(p, " (when ");
            print_expr(p, w->cond);
            put(p, " ");
            print_expr(p, w->result);
            put(p, ")");
        }
        if (e->case_.else_result) {
            put(p, " (else ");
            print_expr(p, e->case_.else_result);
            put(p, ")");
        }
        put(p, ")");
        break;
    case SQL_EXPR_CAST:
        put(p, "(cast ");
        print_expr(p, e->cast.arg);
        put(p, " ");
        print_type(p, e->cast.type);
        put(p, ")");
        break;
    case SQL_EXPR_FUNC:
        put(p, "(%s", e->func.name);
        if (e->func.distinct) put(p, " distinct");
        if (e->func.star) put(p, " *");
        print_exprs(p, &e->func.args);
        put(p, ")");
        break;
    case SQL_EXPR_EXTRACT:
        put(p, "(extract %s ", sql_date_field_name(e->extract.field));
        print_expr(p, e->extract.arg);
        put(p, ")");
        break;
    default:
        put(p, "?");
        break;
    }
}

static const char *const join_names[] = {
    [SQL_JOIN_INNER] = "join",     [SQL_JOIN_LEFT] = "left-join",   [SQL_JOIN_RIGHT] = "right-join",
    [SQL_JOIN_FULL] = "full-join", [SQL_JOIN_CROSS] = "cross-join",
};

static void print_table_ref(printer *p, const sql_table_ref *t)
{
    if (!t) {
        put(p, "?");
        return;
    }
    if (t->kind == SQL_TABLE_JOIN) {
        put(p, "(%s ", join_names[t->join_type]);
        print_table_ref(p, t->left);
        put(p, " ");
        print_table_ref(p, t->right);
        if (t->on) {
            put(p, " (on ");
            print_expr(p, t->on);
            put(p, ")");
        }
        print_idents(p, "using", &t->using);
        put(p, ")");
        return;
    }
    if (t->alias) put(p, "(as ");
    if (t->kind == SQL_TABLE_NAMED)
        print_name(p, t->name);
    else
        print_query(p, t->subquery);
    if (t->alias) {
        put(p, " ");
        print_name(p, t->alias);
        if (t->columns.count) {
            put(p, " (");
            for (int i = 0; i < t->columns.count; i++)
                put(p, "%s%s", i ? " " : "", t->columns.items[i]->name);
            put(p, ")");
        }
        put(p, ")");
    }
}

static void print_query_tail(printer *p, const sql_query *q)
{
    if (q->order_by.count) {
        put(p, " (order-by");
        for (int i = 0; i < q->order_by.count; i++) {
            const sql_order_item *o = q->order_by.items[i];
            bool plain = !o->desc && o->nulls == SQL_NULLS_DEFAULT;
            put(p, " ");
            if (!plain) put(p, "(%s ", o->desc ? "desc" : "asc");
            print_expr(p, o->expr);
            if (o->nulls != SQL_NULLS_DEFAULT)
                put(p, o->nulls == SQL_NULLS_FIRST ? " nulls-first" : " nulls-last");
            if (!plain) put(p, ")");
        }
        put(p, ")");
    }
    if (q->limit) {
        put(p, " (limit ");
        print_expr(p, q->limit);
        put(p, ")");
    }
    if (q->offset) {
        put(p, " (offset ");
        print_expr(p, q->offset);
        put(p, ")");
    }
}

static void print_with(printer *p, const sql_query *q)
{
    if (!q->with.count) return;
    put(p, " (with");
    for (int i = 0; i < q->with.count; i++) {
        const sql_cte *c = q->with.items[i];
        put(p, " (%s", c->name);
        print_idents(p, "columns", &c->columns);
        put(p, " ");
        print_query(p, c->query);
        put(p, ")");
    }
    put(p, ")");
}

static const char *const setop_names[] = {[SQL_SETOP_UNION] = "union",
                                          [SQL_SETOP_INTERSECT] = "intersect",
                                          [SQL_SETOP_EXCEPT] = "except"};

static void print_query(printer *p, const sql_query *q)
{
    if (!q) {
        put(p, "?");
        return;
    }
    switch (q->kind) {
    case SQL_QUERY_SELECT:
        put(p, "(select");
        print_with(p, q);
        if (q->distinct) put(p, " distinct");
        put(p, " (items");
        for (int i = 0; i < q->select.count; i++) {
            const sql_select_item *it = q->select.items[i];
            put(p, " ");
            if (it->alias) put(p, "(as ");
            print_expr(p, it->expr);
            if (it->alias) {
                put(p, " ");
                print_name(p, it->alias);
                put(p, ")");
            }
        }
        put(p, ")");
        if (q->from.count) {
            put(p, " (from");
            for (int i = 0; i < q->from.count; i++) {
                put(p, " ");
                print_table_ref(p, q->from.items[i]);
            }
            put(p, ")");
        }
        if (q->where) {
            put(p, " (where ");
            print_expr(p, q->where);
            put(p, ")");
        }
        if (q->group_by.count) {
            put(p, " (group-by");
            print_exprs(p, &q->group_by);
            put(p, ")");
        }
        if (q->having) {
            put(p, " (having ");
            print_expr(p, q->having);
            put(p, ")");
        }
        break;
    case SQL_QUERY_VALUES:
        put(p, "(values");
        print_with(p, q);
        for (int i = 0; i < q->values.count; i++) {
            put(p, " (");
            const sql_expr_list *row = q->values.items[i];
            for (int j = 0; j < row->count; j++) {
                if (j) put(p, " ");
                print_expr(p, row->items[j]);
            }
            put(p, ")");
        }
        break;
    case SQL_QUERY_SETOP:
        put(p, "(%s%s", setop_names[q->setop], q->all ? "-all" : "");
        print_with(p, q);
        put(p, " ");
        print_query(p, q->left);
        put(p, " ");
        print_query(p, q->right);
        break;
    }
    print_query_tail(p, q);
    put(p, ")");
}

static void print_options(printer *p, const char *tag, const sql_option_list *l)
{
    if (!l->count) return;
    if (tag) put(p, " (%s", tag);
    for (int i = 0; i < l->count; i++) {
        const sql_option *o = l->items[i];
        if (!o->name) {
            put(p, " ");
            print_expr(p, o->value);
            continue;
        }
        put(p, " (%s", o->name);
        if (o->value) {
            put(p, " ");
            print_expr(p, o->value);
        }
        put(p, ")");
    }
    if (tag) put(p, ")");
}

static void print_stmt(printer *p, const sql_stmt *s)
{
    if (!s) {
        put(p, "?");
        return;
    }
    switch (s->kind) {
    case SQL_STMT_SELECT:
        print_query(p, s->query);
        break;
    case SQL_STMT_CREATE_TABLE:
    case SQL_STMT_CREATE_TABLE_AS:
        put(p, "(%s %s", s->kind == SQL_STMT_CREATE_TABLE ? "create-table" : "create-table-as",
            s->create_table.name);
        if (s->create_table.if_not_exists) put(p, " if-not-exists");
        if (s->kind == SQL_STMT_CREATE_TABLE_AS) {
            put(p, " ");
            print_query(p, s->create_table.query);
        }
        if (s->create_table.columns.count) {
            put(p, " (columns");
            for (int i = 0; i < s->create_table.columns.count; i++) {
                const sql_column_def *c = s->create_table.columns.items[i];
                put(p, " (%s ", c->name);
                print_type(p, c->type);
                if (c->not_null) put(p, " not-null");
                if (c->primary_key) put(p, " primary-key");
                put(p, ")");
            }
            put(p, ")");
        }
        print_idents(p, "primary-key", &s->create_table.primary_key);
        put(p, ")");
        break;
    case SQL_STMT_DROP_TABLE:
    case SQL_STMT_DROP_VIEW:
        put(p, "(%s %s%s%s)", s->kind == SQL_STMT_DROP_TABLE ? "drop-table" : "drop-view",
            s->drop.name, s->drop.if_exists ? " if-exists" : "", s->drop.cascade ? " cascade" : "");
        break;
    case SQL_STMT_CREATE_VIEW:
        put(p, "(create-view %s", s->create_view.name);
        print_idents(p, "columns", &s->create_view.columns);
        put(p, " ");
        print_query(p, s->create_view.query);
        put(p, ")");
        break;
    case SQL_STMT_INSERT:
        put(p, "(insert %s", s->insert.table);
        print_idents(p, "columns", &s->insert.columns);
        put(p, " ");
        print_query(p, s->insert.query);
        put(p, ")");
        break;
    case SQL_STMT_COPY_FROM:
    case SQL_STMT_COPY_TO:
        put(p, "(%s ", s->kind == SQL_STMT_COPY_FROM ? "copy-from" : "copy-to");
        if (s->copy.table)
            put(p, "%s", s->copy.table);
        else
            print_query(p, s->copy.query);
        print_idents(p, "columns", &s->copy.columns);
        put(p, " ");
        if (s->copy.file)
            print_quoted(p, s->copy.file);
        else
            put(p, s->kind == SQL_STMT_COPY_FROM ? "stdin" : "stdout");
        print_options(p, "options", &s->copy.options);
        put(p, ")");
        break;
    case SQL_STMT_CALL:
        put(p, "(call %s", s->call.name);
        print_options(p, NULL, &s->call.args);
        put(p, ")");
        break;
    case SQL_STMT_EXPLAIN:
        put(p, "(explain%s ", s->explain.analyze ? " analyze" : "");
        print_stmt(p, s->explain.stmt);
        put(p, ")");
        break;
    case SQL_STMT_SET:
        put(p, "(set %s ", s->set.name);
        if (s->set.value)
            print_expr(p, s->set.value);
        else
            put(p, "default");
        put(p, ")");
        break;
    case SQL_STMT_SHOW:
        put(p, "(show %s)", s->show.name ? s->show.name : "all");
        break;
    case SQL_STMT_BEGIN:
        put(p, "(begin)");
        break;
    case SQL_STMT_COMMIT:
        put(p, "(commit)");
        break;
    case SQL_STMT_ROLLBACK:
        put(p, "(rollback)");
        break;
    default:
        put(p, "?");
        break;
    }
}

char *sql_stmt_to_string(const sql_stmt *s)
{
    printer p;
    if (!printer_init(&p)) return NULL;
    print_stmt(&p, s);
    return printer_finish(&p);
}

char *sql_query_to_string(const sql_query *q)
{
    printer p;
    if (!printer_init(&p)) return NULL;
    print_query(&p, q);
    return printer_finish(&p);
}

char *sql_expr_to_string(const sql_expr *e)
{
    printer p;
    if (!printer_init(&p)) return NULL;
    print_expr(&p, e);
    return printer_finish(&p);
}
