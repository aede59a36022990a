/*
 * ast.c — building AST nodes for the grammar's actions.
 *
 * Each builder allocates one node in the arena and fills it from its
 * children and tokens. Children may be NULL only after an allocation failed
 * (the arena remembers that and the parse is reported as out of memory), so
 * builders copy NULL children along without looking into them. Checks that
 * need the text of a token — type names, interval units, numbers that do not
 * fit — happen here and record a positioned error in the sql_build context.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "sql/ast_build.h"

/* ------------------------------------------------------------- names -- */

static const char *const op_spellings[] = {
#define OP_SPELLING(id, spelling, arity) spelling,
    SQL_OP_LIST(OP_SPELLING)
#undef OP_SPELLING
};

static const int op_arities[] = {
#define OP_ARITY(id, spelling, arity) arity,
    SQL_OP_LIST(OP_ARITY)
#undef OP_ARITY
};

const char *sql_op_spelling(sql_op op)
{
    return op < SQL_OP_COUNT ? op_spellings[op] : "?";
}

int sql_op_arity(sql_op op)
{
    return op < SQL_OP_COUNT ? op_arities[op] : 0;
}

static const char *const date_field_names[] = {
#define FIELD_NAME(id, name) name,
    SQL_DATE_FIELD_LIST(FIELD_NAME)
#undef FIELD_NAME
};

const char *sql_date_field_name(sql_date_field f)
{
    return f < SQL_FIELD_COUNT ? date_field_names[f] : "?";
}

static const char *const stmt_kind_names[] = {
#define STMT_NAME(id, tag) tag,
    SQL_STMT_KIND_LIST(STMT_NAME)
#undef STMT_NAME
};

const char *sql_stmt_kind_name(sql_stmt_kind k)
{
    return k < SQL_STMT_KIND_COUNT ? stmt_kind_names[k] : "?";
}

/* ------------------------------------------------------------- helpers -- */

void sql_build_fail(sql_build *B, sto_status err)
{
    if (B->error)
        sto_status_free(err);
    else
        B->error = err;
}

static void *node(sql_build *B, size_t size)
{
    return sql_arena_alloc(B->arena, size);
}

static const char *ident(sql_build *B, const sql_token *t)
{
    return sql_token_ident(B->arena, B->text, t);
}

/* Sets e's height from an operand's and enforces SQL_MAX_EXPR_HEIGHT.
 * Left-associative chains (a + b + c ..., a::int::text ...) deepen the tree
 * without deepening lemon's stack, so the stack limit alone is not enough. */
static void grow(sql_build *B, sql_expr *e, const sql_expr *operand)
{
    if (!e || !operand || operand->height < e->height) return;
    e->height = operand->height + 1;
    if (e->height == SQL_MAX_EXPR_HEIGHT + 1)
        sql_build_fail(B, sto_error_at(STO_STATEMENT_TOO_COMPLEX, e->pos,
                                       "expression is nested too deeply (more than %d levels)",
                                       SQL_MAX_EXPR_HEIGHT));
}

/* Counts a join or set operation against SQL_MAX_CHAIN_NODES. */
static void count_chain(sql_build *B, int pos)
{
    if (++B->chain_nodes == SQL_MAX_CHAIN_NODES + 1)
        sql_build_fail(B, sto_error_at(STO_STATEMENT_TOO_COMPLEX, pos,
                                       "statement has too many joins or set operations"));
}

/* Appends item to a list of pointers, doubling its array in the arena. The
 * list types differ only in the item type, so one macro serves them all. */
#define LIST_APPEND(B, list, item)                                                                 \
    do {                                                                                           \
        if ((list)->count == (list)->cap) {                                                        \
            int ncap_ = (list)->cap ? (list)->cap * 2 : 4;                                         \
            void *n_ = node((B), (size_t)ncap_ * sizeof(*(list)->items));                          \
            if (!n_) break;                                                                        \
            if ((list)->count)                                                                     \
                memcpy(n_, (list)->items, (size_t)(list)->count * sizeof(*(list)->items));         \
            (list)->items = n_;                                                                    \
            (list)->cap = ncap_;                                                                   \
        }                                                                                          \
        (list)->items[(list)->count++] = (item);                                                   \
    } while (0)

/* The list-building builders share one shape: start a list when l is NULL,
 * then append. */
#define LIST_BUILDER(fn, list_type, item_type)                                                     \
    list_type *fn(sql_build *B, list_type *l, item_type *item)                                     \
    {                                                                                              \
        if (!l) l = node(B, sizeof(*l));                                                           \
        if (l) LIST_APPEND(B, l, item);                                                            \
        return l;                                                                                  \
    }

LIST_BUILDER(sql_build_expr_list, sql_expr_list, sql_expr)
LIST_BUILDER(sql_build_select_list, sql_select_list, sql_select_item)
LIST_BUILDER(sql_build_cte_list, sql_cte_list, sql_cte)
LIST_BUILDER(sql_build_from_list, sql_table_ref_list, sql_table_ref)
LIST_BUILDER(sql_build_order_list, sql_order_list, sql_order_item)
LIST_BUILDER(sql_build_option_list, sql_option_list, sql_option)

sql_ident_list *sql_build_name_list(sql_build *B, sql_ident_list *l, const sql_token *name)
{
    if (!l) l = node(B, sizeof(*l));
    sql_ident *id = node(B, sizeof(*id));
    if (!l || !id) return l;
    id->name = ident(B, name);
    id->pos = name->pos;
    LIST_APPEND(B, l, id);
    return l;
}

/* Copies an optional list pointer into a node's list field. */
#define TAKE_LIST(dst, src)                                                                        \
    do {                                                                                           \
        if (src) (dst) = *(src);                                                                   \
    } while (0)

/* -------------------------------------------------------------- errors -- */

void sql_build_syntax_error(sql_build *B, const sql_token *tok)
{
    if (tok->len == 0) {
        sql_build_fail(B, sto_error_at(STO_SYNTAX_ERROR, tok->pos, "syntax error at end of input"));
        return;
    }
    sql_build_fail(B, sto_error_at(STO_SYNTAX_ERROR, tok->pos, "syntax error at or near \"%.*s\"",
                                   tok->len, B->text + tok->offset));
}

void sql_build_too_deep(sql_build *B)
{
    sql_build_fail(
        B, sto_error(STO_STATEMENT_TOO_COMPLEX, "statement is too complex: nesting too deep"));
}

/* ---------------------------------------------------------- statements -- */

static sql_stmt *stmt(sql_build *B, const sql_token *t, sql_stmt_kind kind)
{
    sql_stmt *s = node(B, sizeof(*s));
    if (!s) return NULL;
    s->kind = kind;
    s->pos = t ? t->pos : 0;
    return s;
}

/* Trims blanks at both ends of text[start..end) and copies it. */
static const char *trimmed_copy(sql_build *B, int start, int end)
{
    while (start < end && isspace((unsigned char)B->text[start]))
        start++;
    while (end > start && isspace((unsigned char)B->text[end - 1]))
        end--;
    return sql_arena_strndup(B->arena, B->text + start, (size_t)(end - start));
}

static void set_text_range(sql_build *B, sql_stmt *s, int start, int end)
{
    s->text_start = start;
    s->text_end = end;
    if (s->kind == SQL_STMT_CREATE_VIEW)
        s->create_view.query_text = trimmed_copy(B, s->create_view.query_offset, end);
    if (s->kind == SQL_STMT_EXPLAIN && s->explain.stmt)
        set_text_range(B, s->explain.stmt, start, end);
}

void sql_build_add_stmt(sql_build *B, sql_stmt *s, const sql_token *semi)
{
    if (!s || !B->stmts) return;
    int k = B->stmts->count;
    if (3 * k + 2 < B->nbounds) {
        set_text_range(B, s, B->bounds[3 * k], B->bounds[3 * k + 1]);
        s->pos = B->bounds[3 * k + 2]; /* a set operation's node sits at UNION */
    }
    LIST_APPEND(B, B->stmts, s);
}

sql_stmt *sql_build_select_stmt(sql_build *B, sql_query *q)
{
    sql_stmt *s = node(B, sizeof(*s));
    if (!s) return NULL;
    s->kind = SQL_STMT_SELECT;
    s->pos = q ? q->pos : 0;
    s->query = q;
    return s;
}

sql_stmt *sql_build_create_table(sql_build *B, const sql_token *t, bool if_not_exists,
                                 const sql_token *name, sql_table_def *def, sql_query *q)
{
    sql_stmt *s = stmt(B, t, q ? SQL_STMT_CREATE_TABLE_AS : SQL_STMT_CREATE_TABLE);
    if (!s) return NULL;
    s->create_table.name = ident(B, name);
    s->create_table.name_pos = name->pos;
    s->create_table.if_not_exists = if_not_exists;
    s->create_table.query = q;
    if (def) {
        s->create_table.columns = def->columns;
        s->create_table.primary_key = def->primary_key;
    }
    return s;
}

sql_stmt *sql_build_drop(sql_build *B, const sql_token *t, sql_stmt_kind kind, bool if_exists,
                         const sql_token *name, bool cascade)
{
    sql_stmt *s = stmt(B, t, kind);
    if (!s) return NULL;
    s->drop.name = ident(B, name);
    s->drop.name_pos = name->pos;
    s->drop.if_exists = if_exists;
    s->drop.cascade = cascade;
    return s;
}

sql_stmt *sql_build_create_view(sql_build *B, const sql_token *t, const sql_token *name,
                                sql_ident_list *cols, const sql_token *as, sql_query *q)
{
    sql_stmt *s = stmt(B, t, SQL_STMT_CREATE_VIEW);
    if (!s) return NULL;
    s->create_view.name = ident(B, name);
    s->create_view.name_pos = name->pos;
    TAKE_LIST(s->create_view.columns, cols);
    s->create_view.query = q;
    s->create_view.query_offset = as->offset + as->len;
    return s;
}

sql_stmt *sql_build_insert(sql_build *B, const sql_token *t, const sql_token *table,
                           sql_ident_list *cols, sql_query *q)
{
    sql_stmt *s = stmt(B, t, SQL_STMT_INSERT);
    if (!s) return NULL;
    s->insert.table = ident(B, table);
    s->insert.table_pos = table->pos;
    TAKE_LIST(s->insert.columns, cols);
    s->insert.query = q;
    return s;
}

sql_stmt *sql_build_copy(sql_build *B, const sql_token *t, sql_stmt_kind kind,
                         const sql_token *table, sql_ident_list *cols, sql_query *q,
                         const sql_token *file, sql_option_list *options)
{
    sql_stmt *s = stmt(B, t, kind);
    if (!s) return NULL;
    if (table) {
        s->copy.table = ident(B, table);
        s->copy.table_pos = table->pos;
    }
    TAKE_LIST(s->copy.columns, cols);
    s->copy.query = q;
    if (file->type == TK_STRING) s->copy.file = sql_token_string(B->arena, B->text, file);
    s->copy.file_pos = file->pos;
    TAKE_LIST(s->copy.options, options);
    return s;
}

sql_stmt *sql_build_call(sql_build *B, const sql_token *t, const sql_token *name,
                         sql_option_list *args)
{
    sql_stmt *s = stmt(B, t, SQL_STMT_CALL);
    if (!s) return NULL;
    s->call.name = ident(B, name);
    TAKE_LIST(s->call.args, args);
    return s;
}

sql_stmt *sql_build_explain(sql_build *B, const sql_token *t, bool analyze, sql_stmt *inner)
{
    sql_stmt *s = stmt(B, t, SQL_STMT_EXPLAIN);
    if (!s) return NULL;
    s->explain.analyze = analyze;
    s->explain.stmt = inner;
    return s;
}

sql_stmt *sql_build_set(sql_build *B, const sql_token *t, const sql_token *name, sql_expr *v)
{
    sql_stmt *s = stmt(B, t, SQL_STMT_SET);
    if (!s) return NULL;
    s->set.name = ident(B, name);
    s->set.value = v;
    return s;
}

sql_stmt *sql_build_show(sql_build *B, const sql_token *t, const sql_token *name)
{
    sql_stmt *s = stmt(B, t, SQL_STMT_SHOW);
    if (!s) return NULL;
    if (name) s->show.name = ident(B, name);
    return s;
}

sql_stmt *sql_build_simple(sql_build *B, const sql_token *t, sql_stmt_kind kind)
{
    return stmt(B, t, kind);
}

sql_table_def *sql_build_table_elems(sql_build *B, sql_table_def *def, sql_table_elem e)
{
    if (!def) def = node(B, sizeof(*def));
    if (!def) return NULL;
    if (e.column) LIST_APPEND(B, &def->columns, e.column);
    if (e.primary_key && e.primary_key->count > 0) { /* count 0: out of memory */
        if (def->primary_key.count) {
            sql_build_fail(B, sto_error_at(STO_SYNTAX_ERROR, e.primary_key->items[0]->pos,
                                           "multiple primary keys for table are not allowed"));
            return def;
        }
        def->primary_key = *e.primary_key;
    }
    return def;
}

sql_table_elem sql_build_column_def(sql_build *B, const sql_token *name, sql_type_spec type,
                                    int constraints)
{
    sql_table_elem e = {NULL, NULL};
    sql_column_def *c = node(B, sizeof(*c));
    if (!c) return e;
    c->name = ident(B, name);
    c->pos = name->pos;
    c->type = type.type;
    if (c->type.id == STO_TYPE_DECIMAL && c->type.precision == 0)
        c->type = sto_type_decimal(STO_DECIMAL_MAX_PRECISION, SQL_DECIMAL_DEFAULT_SCALE);
    c->type_pos = type.pos;
    c->primary_key = (constraints & SQL_COLUMN_PRIMARY_KEY) != 0;
    c->not_null = (constraints & SQL_COLUMN_NOT_NULL) || c->primary_key;
    if ((constraints & SQL_COLUMN_NOT_NULL) && (constraints & SQL_COLUMN_NULL))
        sql_build_fail(B, sto_error_at(STO_SYNTAX_ERROR, name->pos,
                                       "conflicting NULL/NOT NULL declarations for column \"%s\"",
                                       c->name ? c->name : ""));
    e.column = c;
    return e;
}

sql_table_elem sql_build_primary_key(sql_ident_list *cols)
{
    sql_table_elem e = {NULL, cols};
    return e;
}

sql_option *sql_build_option(sql_build *B, const sql_token *name, sql_expr *value)
{
    sql_option *o = node(B, sizeof(*o));
    if (!o) return NULL;
    if (name) {
        o->name = ident(B, name);
        o->pos = name->pos;
    } else {
        o->pos = value ? value->pos : 0;
    }
    o->value = value;
    return o;
}

sql_option *sql_build_copy_word(sql_build *B, const sql_token *name, const sql_token *value)
{
    sql_option *o = sql_build_option(B, name, value ? sql_build_string(B, value) : NULL);
    if (!o || !o->name || value) return o;
    /* CSV and BINARY alone are formats; say so the way the new syntax does. */
    if (strcmp(o->name, "csv") == 0 || strcmp(o->name, "binary") == 0 ||
        strcmp(o->name, "text") == 0) {
        o->value = sql_build_word(B, name);
        o->name = "format";
    }
    return o;
}

/* ------------------------------------------------------------- queries -- */

static sql_query *query(sql_build *B, const sql_token *t, sql_query_kind kind)
{
    sql_query *q = node(B, sizeof(*q));
    if (!q) return NULL;
    q->kind = kind;
    q->pos = t ? t->pos : 0;
    return q;
}

sql_query *sql_build_select(sql_build *B, const sql_token *t, bool distinct, sql_select_list *items,
                            sql_table_ref_list *from, sql_expr *where, sql_expr_list *group_by,
                            sql_expr *having)
{
    sql_query *q = query(B, t, SQL_QUERY_SELECT);
    if (!q) return NULL;
    q->distinct = distinct;
    TAKE_LIST(q->select, items);
    TAKE_LIST(q->from, from);
    q->where = where;
    TAKE_LIST(q->group_by, group_by);
    q->having = having;
    return q;
}

sql_query *sql_build_values(sql_build *B, const sql_token *t, sql_query *q, sql_expr_list *row)
{
    if (!q) q = t ? query(B, t, SQL_QUERY_VALUES) : NULL;
    if (!q || !row) return q;
    if (q->values.count && q->values.items[0] && row->count != q->values.items[0]->count) {
        int pos = row->count && row->items[0] ? row->items[0]->pos : q->pos;
        sql_build_fail(
            B, sto_error_at(STO_SYNTAX_ERROR, pos, "VALUES lists must all be the same length"));
        return q;
    }
    LIST_APPEND(B, &q->values, row);
    return q;
}

sql_query *sql_build_setop(sql_build *B, const sql_token *t, sql_setop op, bool all,
                           sql_query *left, sql_query *right)
{
    sql_query *q = query(B, t, SQL_QUERY_SETOP);
    if (!q) return NULL;
    count_chain(B, t->pos);
    q->setop = op;
    q->all = all;
    q->left = left;
    q->right = right;
    return q;
}

sql_query *sql_build_query_tail(sql_build *B, sql_cte_list *with, sql_query *q,
                                sql_order_list *order, const sql_limit *limit)
{
    if (!q) return NULL;
    if (with) {
        if (q->with.count) {
            sql_build_fail(B,
                           sto_error_at(STO_SYNTAX_ERROR, with->items[0] ? with->items[0]->pos : 0,
                                        "multiple WITH clauses not allowed"));
            return q;
        }
        q->with = *with;
    }
    if (order) {
        if (q->order_by.count) {
            int pos = order->items[0] && order->items[0]->expr ? order->items[0]->expr->pos : 0;
            sql_build_fail(
                B, sto_error_at(STO_SYNTAX_ERROR, pos, "multiple ORDER BY clauses not allowed"));
            return q;
        }
        q->order_by = *order;
    }
    if (limit && limit->limit) {
        if (q->limit) {
            sql_build_fail(B, sto_error_at(STO_SYNTAX_ERROR, limit->limit->pos,
                                           "multiple LIMIT clauses not allowed"));
            return q;
        }
        q->limit = limit->limit;
    }
    if (limit && limit->offset) {
        if (q->offset) {
            sql_build_fail(B, sto_error_at(STO_SYNTAX_ERROR, limit->offset->pos,
                                           "multiple OFFSET clauses not allowed"));
            return q;
        }
        q->offset = limit->offset;
    }
    return q;
}

sql_limit sql_build_limit(sql_expr *limit, sql_expr *offset)
{
    sql_limit l = {limit, offset};
    return l;
}

sql_select_item *sql_build_select_item(sql_build *B, sql_expr *e, const sql_token *alias)
{
    sql_select_item *i = node(B, sizeof(*i));
    if (!i) return NULL;
    i->expr = e;
    if (alias) {
        i->alias = ident(B, alias);
        i->alias_pos = alias->pos;
    }
    return i;
}

sql_select_item *sql_build_star_item(sql_build *B, const sql_token *t, const sql_token *table)
{
    sql_expr *e = node(B, sizeof(*e));
    if (!e) return NULL;
    e->kind = SQL_EXPR_STAR;
    e->pos = t->pos;
    if (table) e->star.table = ident(B, table);
    return sql_build_select_item(B, e, NULL);
}

sql_cte *sql_build_cte(sql_build *B, const sql_token *name, sql_ident_list *cols, sql_query *q)
{
    sql_cte *c = node(B, sizeof(*c));
    if (!c) return NULL;
    c->name = ident(B, name);
    c->pos = name->pos;
    TAKE_LIST(c->columns, cols);
    c->query = q;
    return c;
}

static void set_alias(sql_build *B, sql_table_ref *t, const sql_alias *alias)
{
    if (!alias || !alias->present) return;
    t->alias = ident(B, &alias->name);
    t->alias_pos = alias->name.pos;
    TAKE_LIST(t->columns, alias->columns);
}

sql_table_ref *sql_build_table_named(sql_build *B, const sql_token *name, const sql_alias *alias)
{
    sql_table_ref *t = node(B, sizeof(*t));
    if (!t) return NULL;
    t->kind = SQL_TABLE_NAMED;
    t->pos = name->pos;
    t->name = ident(B, name);
    set_alias(B, t, alias);
    return t;
}

sql_table_ref *sql_build_table_subquery(sql_build *B, sql_query *q, const sql_alias *alias)
{
    sql_table_ref *t = node(B, sizeof(*t));
    if (!t) return NULL;
    t->kind = SQL_TABLE_SUBQUERY;
    t->pos = q ? q->pos : 0;
    t->subquery = q;
    set_alias(B, t, alias);
    return t;
}

sql_table_ref *sql_build_join(sql_build *B, const sql_token *tok, sql_join_type type,
                              sql_table_ref *left, sql_table_ref *right, sql_expr *on,
                              sql_ident_list *using_cols)
{
    sql_table_ref *t = node(B, sizeof(*t));
    if (!t) return NULL;
    t->kind = SQL_TABLE_JOIN;
    t->pos = tok->pos;
    count_chain(B, tok->pos);
    t->join_type = type;
    t->left = left;
    t->right = right;
    t->on = on;
    TAKE_LIST(t->using, using_cols);
    return t;
}

sql_alias sql_build_no_alias(void)
{
    sql_alias a;
    memset(&a, 0, sizeof(a));
    return a;
}

sql_alias sql_build_alias(const sql_token *name, sql_ident_list *cols)
{
    sql_alias a = {true, *name, cols};
    return a;
}

sql_order_item *sql_build_order_item(sql_build *B, sql_expr *e, bool desc, sql_nulls_order n)
{
    sql_order_item *i = node(B, sizeof(*i));
    if (!i) return NULL;
    i->expr = e;
    i->desc = desc;
    i->nulls = n;
    return i;
}

/* --------------------------------------------------------- expressions -- */

static sql_expr *expr(sql_build *B, const sql_token *t, sql_expr_kind kind)
{
    sql_expr *e = node(B, sizeof(*e));
    if (!e) return NULL;
    e->kind = kind;
    e->pos = t ? t->pos : 0;
    e->height = 1;
    return e;
}

sql_expr *sql_build_column(sql_build *B, const sql_token *table, const sql_token *name)
{
    sql_expr *e = expr(B, table ? table : name, SQL_EXPR_COLUMN);
    if (!e) return NULL;
    if (table) e->column.table = ident(B, table);
    e->column.name = ident(B, name);
    return e;
}

#define SQL_MAX_PARAM 65535

sql_expr *sql_build_param(sql_build *B, const sql_token *t)
{
    sql_expr *e = expr(B, t, SQL_EXPR_PARAM);
    if (!e) return NULL;
    long n = 0;
    for (int i = 1; i < t->len && n <= SQL_MAX_PARAM; i++)
        n = n * 10 + (B->text[t->offset + i] - '0');
    if (n < 1 || n > SQL_MAX_PARAM) {
        sql_build_fail(B, sto_error_at(STO_SYNTAX_ERROR, t->pos,
                                       "parameter number %.*s is out of range (1..%d)", t->len,
                                       B->text + t->offset, SQL_MAX_PARAM));
        return e;
    }
    e->param.index = (int)n;
    return e;
}

/* -2147483648 is an INTEGER and -9223372036854775808 a BIGINT, as in
 * PostgreSQL, which folds the minus into a numeric constant: the digits alone
 * would not fit. */
static bool negate_literal(sql_expr *arg, int pos)
{
    if (!arg || arg->kind != SQL_EXPR_LITERAL) return false;
    if (arg->lit.kind == SQL_LIT_INTEGER && arg->lit.integer != INT64_MIN) {
        arg->lit.integer = -arg->lit.integer;
    } else if (arg->lit.kind == SQL_LIT_DECIMAL &&
               strcmp(arg->lit.text, "9223372036854775808") == 0) {
        arg->lit.kind = SQL_LIT_INTEGER;
        arg->lit.integer = INT64_MIN;
    } else {
        return false;
    }
    arg->pos = pos;
    return true;
}

sql_expr *sql_build_unary(sql_build *B, const sql_token *op_tok, sql_op op, sql_expr *arg)
{
    if (op == SQL_OP_NEG && negate_literal(arg, op_tok->pos)) return arg;
    sql_expr *e = expr(B, op_tok, SQL_EXPR_UNARY);
    if (!e) return NULL;
    e->unary.op = op;
    e->unary.arg = arg;
    grow(B, e, arg);
    return e;
}

sql_expr *sql_build_binary(sql_build *B, const sql_token *op_tok, sql_op op, sql_expr *l,
                           sql_expr *r)
{
    sql_expr *e = expr(B, op_tok, SQL_EXPR_BINARY);
    if (!e) return NULL;
    e->binary.op = op;
    e->binary.left = l;
    e->binary.right = r;
    grow(B, e, l);
    grow(B, e, r);
    return e;
}

sql_expr *sql_build_is_null(sql_build *B, const sql_token *t, sql_expr *arg, bool negated)
{
    sql_expr *e = expr(B, t, SQL_EXPR_IS_NULL);
    if (!e) return NULL;
    e->is_null.arg = arg;
    e->is_null.negated = negated;
    grow(B, e, arg);
    return e;
}

sql_expr *sql_build_between(sql_build *B, const sql_token *t, sql_expr *arg, sql_expr *low,
                            sql_expr *high, bool negated)
{
    sql_expr *e = expr(B, t, SQL_EXPR_BETWEEN);
    if (!e) return NULL;
    e->between.arg = arg;
    e->between.low = low;
    e->between.high = high;
    e->between.negated = negated;
    grow(B, e, arg);
    grow(B, e, low);
    grow(B, e, high);
    return e;
}

sql_expr *sql_build_in_list(sql_build *B, const sql_token *t, sql_expr *arg, sql_expr_list *list,
                            bool negated)
{
    sql_expr *e = expr(B, t, SQL_EXPR_IN_LIST);
    if (!e) return NULL;
    e->in_list.arg = arg;
    TAKE_LIST(e->in_list.list, list);
    e->in_list.negated = negated;
    grow(B, e, arg);
    return e;
}

sql_expr *sql_build_in_subquery(sql_build *B, const sql_token *t, sql_expr *arg, sql_query *q,
                                bool negated)
{
    sql_expr *e = expr(B, t, SQL_EXPR_IN_SUBQUERY);
    if (!e) return NULL;
    e->in_subquery.arg = arg;
    e->in_subquery.subquery = q;
    e->in_subquery.negated = negated;
    grow(B, e, arg);
    return e;
}

sql_expr *sql_build_like(sql_build *B, const sql_token *t, sql_expr *arg, sql_expr *pattern,
                         sql_expr *escape, bool negated, bool case_insensitive)
{
    sql_expr *e = expr(B, t, SQL_EXPR_LIKE);
    if (!e) return NULL;
    e->like.arg = arg;
    e->like.pattern = pattern;
    e->like.escape = escape;
    e->like.negated = negated;
    e->like.case_insensitive = case_insensitive;
    grow(B, e, arg);
    grow(B, e, pattern);
    grow(B, e, escape);
    return e;
}

sql_expr *sql_build_subquery(sql_build *B, const sql_token *t, sql_expr_kind kind, sql_query *q)
{
    sql_expr *e = expr(B, t, kind);
    if (!e) return NULL;
    if (!t && q) e->pos = q->pos;
    e->subquery.query = q;
    return e;
}

sql_expr *sql_build_quantified(sql_build *B, const sql_token *t, sql_op op, bool all, sql_expr *arg,
                               sql_query *q)
{
    sql_expr *e = expr(B, t, SQL_EXPR_QUANTIFIED);
    if (!e) return NULL;
    e->quantified.op = op;
    e->quantified.all = all;
    e->quantified.arg = arg;
    e->quantified.subquery = q;
    grow(B, e, arg);
    return e;
}

sql_expr *sql_build_case(sql_build *B, const sql_token *t, sql_expr *operand, sql_when_list *whens,
                         sql_expr *else_result)
{
    sql_expr *e = expr(B, t, SQL_EXPR_CASE);
    if (!e) return NULL;
    e->case_.operand = operand;
    TAKE_LIST(e->case_.whens, whens);
    e->case_.else_result = else_result;
    return e;
}

sql_when_list *sql_build_when(sql_build *B, sql_when_list *l, const sql_token *t, sql_expr *cond,
                              sql_expr *result)
{
    if (!l) l = node(B, sizeof(*l));
    sql_when *w = node(B, sizeof(*w));
    if (!l || !w) return l;
    w->cond = cond;
    w->result = result;
    w->pos = t->pos;
    LIST_APPEND(B, l, w);
    return l;
}

sql_expr *sql_build_cast(sql_build *B, const sql_token *t, sql_expr *arg, sql_type_spec type)
{
    sql_expr *e = expr(B, t, SQL_EXPR_CAST);
    if (!e) return NULL;
    e->cast.arg = arg;
    e->cast.type = type.type;
    grow(B, e, arg);
    return e;
}

sql_expr *sql_build_func(sql_build *B, const sql_token *name, sql_expr_list *args, bool distinct,
                         bool star)
{
    sql_expr *e = expr(B, name, SQL_EXPR_FUNC);
    if (!e) return NULL;
    e->func.name = ident(B, name);
    TAKE_LIST(e->func.args, args);
    e->func.distinct = distinct;
    e->func.star = star;
    return e;
}

/* The date field named by word (lowercase, singular or plural), or -1. */
static int date_field(const char *word)
{
    if (!word) return -1;
    for (int f = 0; f < SQL_FIELD_COUNT; f++) {
        size_t n = strlen(date_field_names[f]);
        if (strncmp(word, date_field_names[f], n) == 0 &&
            (word[n] == '\0' || (word[n] == 's' && word[n + 1] == '\0')))
            return f;
    }
    return -1;
}

sql_expr *sql_build_extract(sql_build *B, const sql_token *t, const sql_token *field, sql_expr *arg)
{
    sql_expr *e = expr(B, t, SQL_EXPR_EXTRACT);
    if (!e) return NULL;
    const char *word = ident(B, field);
    int f = date_field(word);
    if (word && f < 0) {
        sql_build_fail(B, sto_error_at(STO_FEATURE_NOT_SUPPORTED, field->pos,
                                       "EXTRACT field \"%s\" is not supported", word));
        return e;
    }
    e->extract.field = f < 0 ? SQL_FIELD_YEAR : (sql_date_field)f;
    e->extract.arg = arg;
    return e;
}

sql_expr *sql_build_substring(sql_build *B, const sql_token *t, sql_expr *s, sql_expr *from,
                              sql_expr *for_len)
{
    sql_expr_list *args = sql_build_expr_list(B, NULL, s);
    args = sql_build_expr_list(B, args, from);
    if (for_len) args = sql_build_expr_list(B, args, for_len);
    return sql_build_func(B, t, args, false, false);
}

sql_expr *sql_build_special_call(sql_build *B, const sql_token *t, const char *name, sql_expr *a,
                                 sql_expr *b)
{
    sql_expr_list *args = sql_build_expr_list(B, NULL, a);
    if (b) args = sql_build_expr_list(B, args, b);
    sql_expr *e = sql_build_func(B, t, args, false, false);
    if (e) e->func.name = name;
    return e;
}

/* ------------------------------------------------------------ literals -- */

static sql_expr *literal(sql_build *B, const sql_token *t, sql_literal_kind kind)
{
    sql_expr *e = expr(B, t, SQL_EXPR_LITERAL);
    if (!e) return NULL;
    e->lit.kind = kind;
    return e;
}

sql_expr *sql_build_number(sql_build *B, const sql_token *t)
{
    const char *s = B->text + t->offset;
    sql_expr *e = literal(B, t, SQL_LIT_INTEGER);
    if (!e) return NULL;
    if (t->type == TK_INTEGER) {
        int64_t v = 0;
        bool overflow = false;
        for (int i = 0; i < t->len && !overflow; i++)
            overflow =
                __builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, s[i] - '0', &v);
        if (!overflow) {
            e->lit.integer = v;
            return e;
        }
        e->lit.kind = SQL_LIT_DECIMAL;
    } else {
        e->lit.kind = memchr(s, 'e', (size_t)t->len) || memchr(s, 'E', (size_t)t->len)
                          ? SQL_LIT_FLOAT
                          : SQL_LIT_DECIMAL;
    }
    e->lit.text = sql_token_text(B->arena, B->text, t);
    return e;
}

sql_expr *sql_build_integer_one(sql_build *B, const sql_token *t)
{
    sql_expr *e = literal(B, t, SQL_LIT_INTEGER);
    if (e) e->lit.integer = 1;
    return e;
}

sql_expr *sql_build_string(sql_build *B, const sql_token *t)
{
    sql_expr *e = literal(B, t, SQL_LIT_STRING);
    if (e) e->lit.text = sql_token_string(B->arena, B->text, t);
    return e;
}

sql_expr *sql_build_word(sql_build *B, const sql_token *t)
{
    sql_expr *e = literal(B, t, SQL_LIT_STRING);
    if (e) e->lit.text = ident(B, t);
    return e;
}

sql_expr *sql_build_bool(sql_build *B, const sql_token *t, bool value)
{
    sql_expr *e = literal(B, t, SQL_LIT_BOOL);
    if (e) e->lit.boolean = value;
    return e;
}

sql_expr *sql_build_null(sql_build *B, const sql_token *t)
{
    return literal(B, t, SQL_LIT_NULL);
}

sql_expr *sql_build_date(sql_build *B, const sql_token *t, const sql_token *str)
{
    sql_expr *e = literal(B, t, SQL_LIT_DATE);
    if (e) e->lit.text = sql_token_string(B->arena, B->text, str);
    return e;
}

/* Parses "[blanks][+-]digits[blanks]" into *out; false when it is not that
 * or does not fit. */
static bool parse_interval_count(const char *s, int64_t *out)
{
    while (isspace((unsigned char)*s))
        s++;
    bool neg = *s == '-';
    if (*s == '-' || *s == '+') s++;
    if (!isdigit((unsigned char)*s)) return false;
    int64_t v = 0;
    while (isdigit((unsigned char)*s)) {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *s - '0', &v))
            return false;
        s++;
    }
    while (isspace((unsigned char)*s))
        s++;
    if (*s) return false;
    *out = neg ? -v : v;
    return true;
}

sql_expr *sql_build_interval(sql_build *B, const sql_token *t, const sql_token *str,
                             const sql_token *unit)
{
    sql_expr *e = literal(B, t, SQL_LIT_INTERVAL);
    if (!e) return NULL;
    const char *count = sql_token_string(B->arena, B->text, str);
    const char *word = ident(B, unit);
    if (!count || !word) return e;
    if (!parse_interval_count(count, &e->lit.interval.count)) {
        sql_build_fail(B, sto_error_at(STO_INVALID_DATETIME_FORMAT, str->pos,
                                       "invalid input syntax for type interval: \"%s\"", count));
        return e;
    }
    int f = date_field(word);
    if (f != SQL_FIELD_YEAR && f != SQL_FIELD_MONTH && f != SQL_FIELD_DAY) {
        sql_build_fail(B, sto_error_at(STO_FEATURE_NOT_SUPPORTED, unit->pos,
                                       "interval unit \"%s\" is not supported", word));
        return e;
    }
    e->lit.interval.unit = (sql_date_field)f;
    return e;
}

/* --------------------------------------------------------------- types -- */

/* The most characters a CHAR/VARCHAR may declare (PostgreSQL's limit). */
#define SQL_MAX_STRING_LENGTH 10485760

int sql_build_int_arg(sql_build *B, const sql_token *t)
{
    long v = 0;
    for (int i = 0; i < t->len; i++) {
        v = v * 10 + (B->text[t->offset + i] - '0');
        if (v > SQL_MAX_STRING_LENGTH) {
            sql_build_fail(B, sto_error_at(STO_NUMERIC_VALUE_OUT_OF_RANGE, t->pos,
                                           "type modifier %.*s is too large", t->len,
                                           B->text + t->offset));
            return -2;
        }
    }
    return (int)v;
}

/* How a type name may be written. */
typedef enum type_args { ARGS_NONE, ARGS_LENGTH, ARGS_PRECISION } type_args;

typedef struct type_name {
    const char *name;
    sto_type_id id;
    type_args args;
} type_name;

static const type_name type_names[] = {
    {"boolean", STO_TYPE_BOOLEAN, ARGS_NONE},
    {"bool", STO_TYPE_BOOLEAN, ARGS_NONE},
    {"integer", STO_TYPE_INTEGER, ARGS_NONE},
    {"int", STO_TYPE_INTEGER, ARGS_NONE},
    {"int4", STO_TYPE_INTEGER, ARGS_NONE},
    {"smallint", STO_TYPE_INTEGER, ARGS_NONE},
    {"int2", STO_TYPE_INTEGER, ARGS_NONE},
    {"bigint", STO_TYPE_BIGINT, ARGS_NONE},
    {"int8", STO_TYPE_BIGINT, ARGS_NONE},
    {"decimal", STO_TYPE_DECIMAL, ARGS_PRECISION},
    {"numeric", STO_TYPE_DECIMAL, ARGS_PRECISION},
    {"double", STO_TYPE_DOUBLE, ARGS_NONE},
    {"float", STO_TYPE_DOUBLE, ARGS_LENGTH},
    {"float8", STO_TYPE_DOUBLE, ARGS_NONE},
    {"real", STO_TYPE_DOUBLE, ARGS_NONE},
    {"float4", STO_TYPE_DOUBLE, ARGS_NONE},
    {"date", STO_TYPE_DATE, ARGS_NONE},
    {"char", STO_TYPE_CHAR, ARGS_LENGTH},
    {"character", STO_TYPE_CHAR, ARGS_LENGTH},
    {"bpchar", STO_TYPE_CHAR, ARGS_LENGTH},
    {"varchar", STO_TYPE_VARCHAR, ARGS_LENGTH},
    {"text", STO_TYPE_VARCHAR, ARGS_NONE},
};

static const type_name *find_type(const char *word)
{
    for (size_t i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++)
        if (strcmp(word, type_names[i].name) == 0) return &type_names[i];
    return NULL;
}

sql_type_spec sql_build_type(sql_build *B, const sql_token *name, const sql_token *second, int a,
                             int b)
{
    sql_type_spec spec;
    memset(&spec, 0, sizeof(spec));
    spec.pos = name->pos;
    spec.type = sto_type_make(STO_TYPE_INTEGER);
    if (a == -2 || b == -2) return spec; /* an argument was already reported */
    const char *word = ident(B, name);
    if (!word) return spec;

    const type_name *tn = find_type(word);
    if (!tn) {
        sql_build_fail(
            B, sto_error_at(STO_UNDEFINED_OBJECT, name->pos, "type \"%s\" does not exist", word));
        return spec;
    }
    if (second) {
        /* DOUBLE PRECISION and CHARACTER VARYING / CHAR VARYING only. */
        bool varying = B->text[second->offset] == 'v' || B->text[second->offset] == 'V';
        if (varying ? tn->id != STO_TYPE_CHAR : strcmp(word, "double") != 0) {
            sql_build_fail(B, sto_error_at(STO_SYNTAX_ERROR, second->pos,
                                           "syntax error at or near \"%.*s\"", second->len,
                                           B->text + second->offset));
            return spec;
        }
        if (varying) tn = find_type("varchar");
    }
    if ((tn->args == ARGS_NONE && a >= 0) || (tn->args == ARGS_LENGTH && b >= 0)) {
        sql_build_fail(B, sto_error_at(STO_SYNTAX_ERROR, name->pos,
                                       "type modifier is not allowed for type \"%s\"", word));
        return spec;
    }
    switch (tn->id) {
    case STO_TYPE_DECIMAL:
        if (a < 0) {
            /* precision not written: a column gets DECIMAL(18,3), a cast
             * keeps what its argument needs (sql_types_cast) */
            spec.type = sto_type_decimal(0, 0);
            break;
        }
        if (a < 1 || a > STO_DECIMAL_MAX_PRECISION) {
            sql_build_fail(B, sto_error_at(STO_FEATURE_NOT_SUPPORTED, name->pos,
                                           "DECIMAL precision %d is not supported (1 to %d)", a,
                                           STO_DECIMAL_MAX_PRECISION));
            break;
        }
        if (b > a) {
            sql_build_fail(B, sto_error_at(STO_INVALID_PARAMETER_VALUE, name->pos,
                                           "DECIMAL scale %d must be between 0 and precision %d", b,
                                           a));
            break;
        }
        spec.type = sto_type_decimal(a, b < 0 ? 0 : b);
        break;
    case STO_TYPE_CHAR:
    case STO_TYPE_VARCHAR:
        if (a == 0) {
            sql_build_fail(B, sto_error_at(STO_INVALID_PARAMETER_VALUE, name->pos,
                                           "length for type %s must be at least 1", word));
            break;
        }
        /* CHAR alone is CHAR(1), as the standard says; VARCHAR alone is
         * unbounded (length 0). */
        spec.type = sto_type_string(tn->id, a > 0 ? (uint32_t)a : tn->id == STO_TYPE_CHAR ? 1 : 0);
        break;
    default:
        spec.type = sto_type_make(tn->id);
        break;
    }
    return spec;
}
