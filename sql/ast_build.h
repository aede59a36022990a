/*
 * ast_build.h — the builders that grammar actions call to make AST nodes.
 *
 * This is the parser's side of sql/ast.h: sql/grammar.y calls exactly one of
 * these per rule, and sql/parse.c drives the grammar with a sql_build
 * context. Users of the tree need only sql/ast.h and sql/parse.h.
 *
 * Error handling is arranged so that actions stay one line:
 *  - Allocation failure: the builder returns NULL (or an empty value) and
 *    the arena records the failure; builders accept NULL children, so the
 *    parse runs on harmlessly until the driver sees sql_arena_failed and
 *    reports 53200.
 *  - A semantic-looking error found while parsing (unknown type name, two
 *    ORDER BY clauses, bad interval): the builder stores it in B->error
 *    (first error wins) and the driver stops at the next token.
 */
#ifndef RACKDB_SQL_AST_BUILD_H
#define RACKDB_SQL_AST_BUILD_H

#include "sql/ast.h"
#include "sql/token.h"

/* What the grammar's %extra_argument carries. */
typedef struct sql_build {
    sql_arena *arena;
    const char *text;     /* the whole input, for token values */
    sto_status error;     /* first error; the driver stops on it */
    sql_stmt_list *stmts; /* statements completed so far */
    /* Where the non-empty statements the driver has seen end lie, in
     * order: [3k] start and [3k+1] end (bytes), [3k+2] position of the
     * first token of statement k. */
    int *bounds;
    int nbounds, cap_bounds;
    /* Joins and set operations so far: their chains nest the tree without
     * nesting the parser, so they are bounded by count. */
    int chain_nodes;
} sql_build;

/* The most joins plus set operations one parse may contain. */
#define SQL_MAX_CHAIN_NODES 10000

/* A type as written, resolved to storage/types.h. */
typedef struct sql_type_spec {
    sto_type type;
    int pos;
} sql_type_spec;

/* [AS] name [(cols)] after a FROM item; present false when not written. */
typedef struct sql_alias {
    bool present;
    sql_token name;
    sql_ident_list *columns;
} sql_alias;

typedef struct sql_limit {
    sql_expr *limit, *offset;
} sql_limit;

/* CREATE TABLE's element list while it is being read. */
typedef struct sql_table_def {
    sql_column_def_list columns;
    sql_ident_list primary_key;
    int primary_key_pos; /* of a table PRIMARY KEY constraint, 0 if none */
} sql_table_def;

/* One element: a column definition, or a PRIMARY KEY (...) constraint. */
typedef struct sql_table_elem {
    sql_column_def *column;
    sql_ident_list *primary_key;
} sql_table_elem;

/* Column constraint bits. */
enum { SQL_COLUMN_NOT_NULL = 1, SQL_COLUMN_NULL = 2, SQL_COLUMN_PRIMARY_KEY = 4 };

/* 54001 when stmt is deeper than SQL_MAX_TREE_DEPTH (sql/ast_depth.c). */
sto_status sql_check_depth(const sql_stmt *stmt);

/* --- errors, called by the grammar and the driver --- */
void sql_build_syntax_error(sql_build *B, const sql_token *tok);
void sql_build_too_deep(sql_build *B);
/* Records err in B unless an error is there already (then err is freed). */
void sql_build_fail(sql_build *B, sto_status err);

/* --- statements --- */
void sql_build_add_stmt(sql_build *B, sql_stmt *s, const sql_token *semi);
sql_stmt *sql_build_select_stmt(sql_build *B, sql_query *q);
sql_stmt *sql_build_create_table(sql_build *B, const sql_token *t, bool if_not_exists,
                                 const sql_token *name, sql_table_def *def, sql_query *q);
sql_stmt *sql_build_drop(sql_build *B, const sql_token *t, sql_stmt_kind kind, bool if_exists,
                         const sql_token *name, bool cascade);
sql_stmt *sql_build_create_view(sql_build *B, const sql_token *t, const sql_token *name,
                                sql_ident_list *cols, const sql_token *as, sql_query *q);
sql_stmt *sql_build_insert(sql_build *B, const sql_token *t, const sql_token *table,
                           sql_ident_list *cols, sql_query *q);
sql_stmt *sql_build_copy(sql_build *B, const sql_token *t, sql_stmt_kind kind,
                         const sql_token *table, sql_ident_list *cols, sql_query *q,
                         const sql_token *file, sql_option_list *options);
sql_stmt *sql_build_call(sql_build *B, const sql_token *t, const sql_token *name,
                         sql_option_list *args);
sql_stmt *sql_build_explain(sql_build *B, const sql_token *t, bool analyze, sql_stmt *s);
sql_stmt *sql_build_set(sql_build *B, const sql_token *t, const sql_token *name, sql_expr *v);
sql_stmt *sql_build_show(sql_build *B, const sql_token *t, const sql_token *name);
sql_stmt *sql_build_simple(sql_build *B, const sql_token *t, sql_stmt_kind kind);

sql_table_def *sql_build_table_elems(sql_build *B, sql_table_def *def, sql_table_elem e);
sql_table_elem sql_build_column_def(sql_build *B, const sql_token *name, sql_type_spec type,
                                    int constraints);
sql_table_elem sql_build_primary_key(sql_ident_list *cols);

sql_option_list *sql_build_option_list(sql_build *B, sql_option_list *l, sql_option *o);
sql_option *sql_build_option(sql_build *B, const sql_token *name, sql_expr *value);
/* An old-style COPY word: CSV → format 'csv', DELIMITER '|', HEADER, ... */
sql_option *sql_build_copy_word(sql_build *B, const sql_token *name, const sql_token *value);

/* --- queries --- */
sql_query *sql_build_select(sql_build *B, const sql_token *t, bool distinct, sql_select_list *items,
                            sql_table_ref_list *from, sql_expr *where, sql_expr_list *group_by,
                            sql_expr *having);
sql_query *sql_build_values(sql_build *B, const sql_token *t, sql_query *q, sql_expr_list *row);
sql_query *sql_build_setop(sql_build *B, const sql_token *t, sql_setop op, bool all,
                           sql_query *left, sql_query *right);
sql_query *sql_build_query_tail(sql_build *B, sql_cte_list *with, sql_query *q,
                                sql_order_list *order, const sql_limit *limit);
sql_limit sql_build_limit(sql_expr *limit, sql_expr *offset);
sql_select_list *sql_build_select_list(sql_build *B, sql_select_list *l, sql_select_item *i);
sql_select_item *sql_build_select_item(sql_build *B, sql_expr *e, const sql_token *alias);
sql_select_item *sql_build_star_item(sql_build *B, const sql_token *t, const sql_token *table);
sql_cte_list *sql_build_cte_list(sql_build *B, sql_cte_list *l, sql_cte *c);
sql_cte *sql_build_cte(sql_build *B, const sql_token *name, sql_ident_list *cols, sql_query *q);
sql_table_ref_list *sql_build_from_list(sql_build *B, sql_table_ref_list *l, sql_table_ref *t);
sql_table_ref *sql_build_table_named(sql_build *B, const sql_token *name, const sql_alias *alias);
sql_table_ref *sql_build_table_subquery(sql_build *B, sql_query *q, const sql_alias *alias);
sql_table_ref *sql_build_join(sql_build *B, const sql_token *t, sql_join_type type,
                              sql_table_ref *left, sql_table_ref *right, sql_expr *on,
                              sql_ident_list *using_cols);
sql_alias sql_build_no_alias(void);
sql_alias sql_build_alias(const sql_token *name, sql_ident_list *cols);
sql_ident_list *sql_build_name_list(sql_build *B, sql_ident_list *l, const sql_token *name);
sql_order_list *sql_build_order_list(sql_build *B, sql_order_list *l, sql_order_item *i);
sql_order_item *sql_build_order_item(sql_build *B, sql_expr *e, bool desc, sql_nulls_order n);

/* --- expressions --- */
sql_expr_list *sql_build_expr_list(sql_build *B, sql_expr_list *l, sql_expr *e);
sql_expr *sql_build_column(sql_build *B, const sql_token *table, const sql_token *name);
sql_expr *sql_build_param(sql_build *B, const sql_token *t);
sql_expr *sql_build_unary(sql_build *B, const sql_token *op_tok, sql_op op, sql_expr *arg);
sql_expr *sql_build_binary(sql_build *B, const sql_token *op_tok, sql_op op, sql_expr *l,
                           sql_expr *r);
sql_expr *sql_build_is_null(sql_build *B, const sql_token *t, sql_expr *arg, bool negated);
sql_expr *sql_build_between(sql_build *B, const sql_token *t, sql_expr *arg, sql_expr *low,
                            sql_expr *high, bool negated);
sql_expr *sql_build_in_list(sql_build *B, const sql_token *t, sql_expr *arg, sql_expr_list *list,
                            bool negated);
sql_expr *sql_build_in_subquery(sql_build *B, const sql_token *t, sql_expr *arg, sql_query *q,
                                bool negated);
sql_expr *sql_build_like(sql_build *B, const sql_token *t, sql_expr *arg, sql_expr *pattern,
                         sql_expr *escape, bool negated, bool case_insensitive);
/* EXISTS (t is the EXISTS token) or a scalar SUBQUERY (t NULL). */
sql_expr *sql_build_subquery(sql_build *B, const sql_token *t, sql_expr_kind kind, sql_query *q);
sql_expr *sql_build_quantified(sql_build *B, const sql_token *t, sql_op op, bool all, sql_expr *arg,
                               sql_query *q);
sql_expr *sql_build_case(sql_build *B, const sql_token *t, sql_expr *operand, sql_when_list *whens,
                         sql_expr *else_result);
sql_when_list *sql_build_when(sql_build *B, sql_when_list *l, const sql_token *t, sql_expr *cond,
                              sql_expr *result);
sql_expr *sql_build_cast(sql_build *B, const sql_token *t, sql_expr *arg, sql_type_spec type);
sql_expr *sql_build_func(sql_build *B, const sql_token *name, sql_expr_list *args, bool distinct,
                         bool star);
sql_expr *sql_build_extract(sql_build *B, const sql_token *t, const sql_token *field,
                            sql_expr *arg);
sql_expr *sql_build_substring(sql_build *B, const sql_token *t, sql_expr *s, sql_expr *from,
                              sql_expr *for_len);
/* A call written with its own syntax (POSITION, TRIM): the function `name`
 * (a static string) of (a [, b]), positioned at t. */
sql_expr *sql_build_special_call(sql_build *B, const sql_token *t, const char *name, sql_expr *a,
                                 sql_expr *b);

/* --- literals --- */
sql_expr *sql_build_number(sql_build *B, const sql_token *t);
sql_expr *sql_build_integer_one(sql_build *B, const sql_token *t);
sql_expr *sql_build_string(sql_build *B, const sql_token *t);
/* A bare word used as a value (FORMAT csv, SET x TO on): a STRING literal. */
sql_expr *sql_build_word(sql_build *B, const sql_token *t);
sql_expr *sql_build_bool(sql_build *B, const sql_token *t, bool value);
sql_expr *sql_build_null(sql_build *B, const sql_token *t);
sql_expr *sql_build_date(sql_build *B, const sql_token *t, const sql_token *str);
sql_expr *sql_build_interval(sql_build *B, const sql_token *t, const sql_token *str,
                             const sql_token *unit);

/* --- types --- */
/* name [second word] [(a [, b])]; a, b are -1 when absent. */
sql_type_spec sql_build_type(sql_build *B, const sql_token *name, const sql_token *second, int a,
                             int b);
/* An INTEGER token as a type argument (-2 and an error when out of range). */
int sql_build_int_arg(sql_build *B, const sql_token *t);

#endif
