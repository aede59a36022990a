/*
 * bind_int.h — the binder's private state, shared by its files:
 *   bind_query.c   entry point, query levels, VALUES, set operations
 *   bind_from.c    FROM items: tables, views, CTEs, derived tables, joins
 *   bind_select.c  one SELECT: WHERE, grouping, select list, projection
 *   bind_order.c   ORDER BY, LIMIT, OFFSET
 *   bind_expr.c    expressions, name lookup, subquery expressions
 *   bind_func.c    scalar functions and aggregates
 *   types_rules.c  implicit casts, common types, operator result types
 *   fold.c         constant folding
 *
 * Scopes. Every query level (a SELECT, including subqueries) has a scope:
 * the relations its FROM clause made visible (each a name and its columns'
 * names and ids) and a link to the enclosing level, so a name not found
 * here is looked up outward (a correlated reference). The ids found outward
 * are recorded as the level's outer references; they become the subquery
 * expression's free variables. A derived table in FROM sees the levels
 * above its query but not its sibling FROM items (no LATERAL):
 * parent_hidden says to skip the parent's relations.
 */
#ifndef RACKDB_SQL_BIND_INT_H
#define RACKDB_SQL_BIND_INT_H

#include "sql/bind.h"

/* A type id for "not known yet": NULL literals and parameters before their
 * context decides. Never left in a finished plan. */
#define BIND_TYPE_UNKNOWN STO_TYPE_COUNT

typedef struct bind_col {
    const char *name;
    sql_colid id;
    bool using_hidden; /* a USING column's duplicate: found only qualified */
} bind_col;

typedef struct bind_rel {
    const char *name; /* alias or table name; NULL for an unnamed join */
    uint32_t ncols;
    bind_col *cols;
} bind_rel;

/* Where an expression is being bound: decides whether aggregates may appear
 * and names the clause in error messages. */
typedef enum bind_clause {
    CLAUSE_FROM, /* nothing bound yet, or a FROM item */
    CLAUSE_SELECT,
    CLAUSE_WHERE,
    CLAUSE_JOIN,
    CLAUSE_GROUP_BY,
    CLAUSE_HAVING,
    CLAUSE_ORDER_BY,
    CLAUSE_VALUES,
    CLAUSE_LIMIT,
    CLAUSE_OFFSET,
} bind_clause;

/* A WITH entry visible to a query: the definition and the CTEs visible to
 * its own body (those defined before it). */
typedef struct bind_cte {
    const sql_cte *def;
    struct bind_cte *env; /* for binding the body */
    struct bind_cte *next;
} bind_cte;

typedef struct bind_scope {
    struct bind_scope *parent;
    bool parent_hidden;
    bind_rel **rels;
    uint32_t nrels, caprels;
    /* ids of enclosing levels that this level (or a level inside it) uses */
    sql_colid *outer;
    uint32_t nouter, capouter;
    /* aggregation of this level */
    bind_clause clause;
    bool in_agg_arg;
    sql_agg_item *aggs;
    uint32_t naggs, capaggs;
    /* this level's columns that subqueries of its select list, HAVING or
     * ORDER BY refer to, outside aggregates: the grouping rule applies to
     * them too, and an error points at the reference itself */
    struct bind_inner_ref {
        sql_colid id;
        int pos;
    } * inner_refs;
    uint32_t ninner, capinner;
    bind_cte *ctes;
} bind_scope;

typedef struct binder {
    sql_arena *arena;
    sql_plan_ctx *ctx;
    const sql_catalog *catalog;
    int view_depth;
    /* CTE and view references bound so far: each binds its body afresh, so
     * nested references multiply (bind_from.c caps the total). */
    int expansions;
} binder;

/* A bound query: its operator tree and the columns it exposes. */
typedef struct bound_query {
    sql_lop *root;
    uint32_t ncols;
    sql_colid *cols;
    const char **names;
} bound_query;

/* One select-list entry (stars expanded): the bound expression and its
 * output name. */
typedef struct bind_item {
    sql_bexpr *expr;
    const char *name;
    int pos;
} bind_item;

static inline bool bind_is_ordinal(const sql_expr *e)
{
    return e->kind == SQL_EXPR_LITERAL && e->lit.kind == SQL_LIT_INTEGER;
}

/* --- bind_query.c */
/* A new, empty scope; NULL when memory is short. */
bind_scope *sql_bind_new_scope(binder *b, bind_scope *parent, bool parent_hidden, bind_cte *ctes);
/* An operator of kind over input with the input's output ids. */
sql_lop *sql_bind_unary_op(binder *b, sql_lop_kind kind, sql_lop *input);
/* Binds q as a new level below parent; *scope_out (may be NULL) receives
 * that level's scope, whose outer references are the query's free
 * variables. */
sto_status sql_bind_level(binder *b, bind_scope *parent, bool parent_hidden, bind_cte *ctes,
                          const sql_query *q, bound_query *out, bind_scope **scope_out);

/* --- bind_from.c */
/* A relation named name over ids, columns named names[] (NULL: the ids'
 * names) unless renamed by aliases (more aliases than columns: 42P10). */
sto_status sql_bind_make_rel(binder *b, const char *name, uint32_t ncols, const sql_colid *ids,
                             const char *const *names, const sql_ident_list *aliases, int alias_pos,
                             bind_rel **out);
/* The FROM list as one operator tree (no FROM: one row, no columns). */
sto_status sql_bind_from(binder *b, bind_scope *s, const sql_table_ref_list *from, sql_lop **out);

/* --- bind_select.c */
sto_status sql_bind_select(binder *b, bind_scope *s, const sql_query *q, bound_query *out);

/* --- bind_order.c */
/* The resolved NULLS FIRST of an ORDER BY item. */
bool sql_bind_nulls_first(const sql_order_item *o);
/* Which of n outputs an ORDER BY item names by ordinal or name (-1: none);
 * items (may be NULL) tells same-named outputs that are one expression. */
sto_status sql_bind_order_output(const sql_expr *e, uint32_t n, const char *const *names,
                                 const bind_item *items, int *out);
/* Adds q's LIMIT/OFFSET above *input. */
sto_status sql_bind_add_limit(binder *b, bind_scope *parent, const sql_query *q, sql_lop **input);
/* ORDER BY and LIMIT of a VALUES or set operation, over its outputs. */
sto_status sql_bind_order_outputs(binder *b, bind_scope *parent, const sql_query *q,
                                  bound_query *bq);

/* --- bind_expr.c */
sto_status sql_bind_expr(binder *b, bind_scope *s, const sql_expr *e, sql_bexpr **out);
/* Binds a condition that must be BOOLEAN ("argument of WHERE must be type
 * boolean"); what names the clause. */
sto_status sql_bind_condition(binder *b, bind_scope *s, const sql_expr *e, const char *what,
                              sql_bexpr **out);
/* The rel whose column is id at level s, or NULL. */
const bind_rel *sql_bind_rel_of(const bind_scope *s, sql_colid id, const bind_col **col);
/* PostgreSQL's derived column name for a select-list expression. */
const char *sql_bind_derived_name(const sql_expr *e);
/* OOM status if the arena failed, else NULL. */
sto_status sql_bind_oom(binder *b);
sto_status sql_bind_add_rel(binder *b, bind_scope *s, bind_rel *r);
/* Adds an id to s's outer references (no duplicates). */
sto_status sql_bind_note_outer(binder *b, bind_scope *s, sql_colid id);
/* Allocates l->items for n expressions; false when memory is short. */
bool sql_bind_make_list(binder *b, sql_bexpr_list *l, uint32_t n);

/* --- bind_func.c */
sto_status sql_bind_func_call(binder *b, bind_scope *s, const sql_expr *e, sql_bexpr **out);
sto_status sql_bind_agg_call(binder *b, bind_scope *s, const sql_expr *e, sql_bexpr **out);
sto_status sql_bind_make_func(binder *b, sql_func f, sql_bexpr **args, uint32_t nargs, int pos,
                              sql_bexpr **out);

/* --- types_rules.c */
static inline bool type_is_numeric(uint8_t id)
{
    return id == STO_TYPE_INTEGER || id == STO_TYPE_BIGINT || id == STO_TYPE_DECIMAL ||
           id == STO_TYPE_DOUBLE;
}
static inline bool type_is_integer(uint8_t id)
{
    return id == STO_TYPE_INTEGER || id == STO_TYPE_BIGINT;
}
/* The type both a and b convert to implicitly; false when none. */
bool sql_types_common(sto_type a, sto_type b, sto_type *out);
/* Converts *e to type t implicitly (CAST node, folded for constants;
 * unknown-typed NULLs and parameters just take the type). */
sto_status sql_types_coerce(binder *b, sql_bexpr **e, sto_type t);
/* Explicit CAST: also allows narrowing, string ↔ anything, ... */
sto_status sql_types_cast(binder *b, sql_bexpr **e, sto_type t, int pos);
/* Brings both operands to a common type for a comparison / IN / CASE; what
 * and pos for the error ("operator does not exist: date = integer"). */
sto_status sql_types_unify(binder *b, sql_bexpr **l, sql_bexpr **r, const char *opname, int pos);
/* Binary arithmetic a op b with type rules; may make date functions. */
sto_status sql_types_arith(binder *b, sql_op op, sql_bexpr *l, sql_bexpr *r, int pos,
                           sql_bexpr **out);
/* An unknown type left at the end becomes VARCHAR (like PostgreSQL's text). */
sto_status sql_types_resolve_unknown(binder *b, sql_bexpr **e);
/* DECIMAL(p,0) an integer type widens to. */
sto_type sql_types_int_as_decimal(uint8_t id);

/* --- fold.c */
/* Folds e if all its inputs are constants; errors as PostgreSQL raises them
 * for constants (division by zero, overflow, bad date text). */
sto_status sql_fold_expr(binder *b, sql_bexpr **e);

#endif
