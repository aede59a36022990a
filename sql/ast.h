/*
 * ast.h — the abstract syntax tree the SQL parser produces.
 *
 * Flow: text → sql/token.c (tokens) → sql/grammar.y (lemon; actions call the
 * builders in sql/ast_build.h) → this tree → the binder (names, types) → a
 * logical plan. The tree says what was written, nothing more: names are not
 * resolved, types are not checked, ordinals in ORDER BY are just integer
 * literals. Every semantic check is the binder's.
 *
 * Conventions, for every node below:
 *  - All nodes, strings and lists live in the sql_arena passed to sql_parse
 *    and die with it; nothing here is freed on its own.
 *  - `pos` is where the construct was written: the 1-based character offset
 *    into the statement text, exactly what sto_error_at wants, so the binder
 *    reports `sto_error_at(STO_UNDEFINED_COLUMN, e->pos, ...)`. For operators
 *    it is the operator's own position (like PostgreSQL); for everything else
 *    the position of its first token.
 *  - Identifiers are lowercased unless they were "double quoted"; strings are
 *    NUL-terminated. A name pointer is NULL when the name was not written.
 *  - Lists are arrays in the arena: `items[0 .. count-1]`; count 0 means the
 *    clause was absent (SQL never allows an empty list where one is written).
 *  - Optional sub-nodes (WHERE, HAVING, LIMIT, ELSE, ...) are NULL when absent.
 */
#ifndef RACKDB_SQL_AST_H
#define RACKDB_SQL_AST_H

#include <stdbool.h>
#include <stdint.h>

#include "sql/arena.h"
#include "storage/types.h"

/* DECIMAL / NUMERIC written without a precision: a column is
 * DECIMAL(18, SQL_DECIMAL_DEFAULT_SCALE) (DuckDB's default; PostgreSQL's
 * unconstrained numeric has no fixed-point equivalent); a cast keeps the
 * scale its argument needs (sql_types_cast). The parser marks the type as
 * DECIMAL(0,0) until then. */
#define SQL_DECIMAL_DEFAULT_SCALE 3

typedef struct sql_expr sql_expr;
typedef struct sql_query sql_query;
typedef struct sql_table_ref sql_table_ref;
typedef struct sql_stmt sql_stmt;

/* ---------------------------------------------------------------- lists -- */

/* A list of T pointers. One macro so every list reads the same way. */
#define SQL_LIST_TYPE(list_name, T)                                                                \
    typedef struct list_name {                                                                     \
        int count;                                                                                 \
        int cap;                                                                                   \
        T **items;                                                                                 \
    } list_name;

/* A name as written, with where it was written (column lists, USING, ...). */
typedef struct sql_ident {
    const char *name;
    int pos;
} sql_ident;

SQL_LIST_TYPE(sql_ident_list, sql_ident)
SQL_LIST_TYPE(sql_expr_list, sql_expr)

/* ------------------------------------------------------------ operators -- */

/* Every unary and binary operator, once: id, SQL spelling, arity. The binder,
 * the code generator, the printer and the tests expand this list. Comparison
 * ops are EQ..GE (contiguous, so sql_op_is_comparison is a range check). */
#define SQL_OP_LIST(X)                                                                             \
    X(OR, "OR", 2)                                                                                 \
    X(AND, "AND", 2)                                                                               \
    X(NOT, "NOT", 1)                                                                               \
    X(EQ, "=", 2)                                                                                  \
    X(NE, "<>", 2)                                                                                 \
    X(LT, "<", 2)                                                                                  \
    X(LE, "<=", 2)                                                                                 \
    X(GT, ">", 2)                                                                                  \
    X(GE, ">=", 2)                                                                                 \
    X(CONCAT, "||", 2)                                                                             \
    X(ADD, "+", 2)                                                                                 \
    X(SUB, "-", 2)                                                                                 \
    X(MUL, "*", 2)                                                                                 \
    X(DIV, "/", 2)                                                                                 \
    X(MOD, "%", 2)                                                                                 \
    X(NEG, "-", 1)                                                                                 \
    X(PLUS, "+", 1)

typedef enum sql_op {
#define SQL_OP_ENUM(id, spelling, arity) SQL_OP_##id,
    SQL_OP_LIST(SQL_OP_ENUM)
#undef SQL_OP_ENUM
        SQL_OP_COUNT
} sql_op;

/* "+", "AND", ... */
const char *sql_op_spelling(sql_op op);
/* 1 or 2. */
int sql_op_arity(sql_op op);
static inline bool sql_op_is_comparison(sql_op op)
{
    return op >= SQL_OP_EQ && op <= SQL_OP_GE;
}

/* Whether comparison op holds for the three-way result c of comparing its
 * left side with its right (negative, zero, positive); false for an op
 * that compares nothing. Constant folding and the aggregation's HAVING
 * test (engine/rt_agg_having.c) decide with it. */
static inline bool sql_op_compare_holds(sql_op op, int c)
{
    switch (op) {
    case SQL_OP_EQ:
        return c == 0;
    case SQL_OP_NE:
        return c != 0;
    case SQL_OP_LT:
        return c < 0;
    case SQL_OP_LE:
        return c <= 0;
    case SQL_OP_GT:
        return c > 0;
    case SQL_OP_GE:
        return c >= 0;
    default:
        return false;
    }
}

/* Date/time fields, shared by EXTRACT(field FROM x) and INTERVAL 'n' unit.
 * id and the lowercase name written in SQL (plural "days" is accepted too). */
#define SQL_DATE_FIELD_LIST(X)                                                                     \
    X(YEAR, "year")                                                                                \
    X(MONTH, "month")                                                                              \
    X(DAY, "day")                                                                                  \
    X(QUARTER, "quarter")                                                                          \
    X(WEEK, "week")                                                                                \
    X(DOW, "dow")                                                                                  \
    X(ISODOW, "isodow")                                                                            \
    X(DOY, "doy")                                                                                  \
    X(ISOYEAR, "isoyear")

typedef enum sql_date_field {
#define SQL_DATE_FIELD_ENUM(id, name) SQL_FIELD_##id,
    SQL_DATE_FIELD_LIST(SQL_DATE_FIELD_ENUM)
#undef SQL_DATE_FIELD_ENUM
        SQL_FIELD_COUNT
} sql_date_field;

const char *sql_date_field_name(sql_date_field f);

/* ------------------------------------------------------------- literals -- */

typedef enum sql_literal_kind {
    SQL_LIT_NULL,
    SQL_LIT_BOOL,     /* boolean */
    SQL_LIT_INTEGER,  /* digits only and fits int64: integer */
    SQL_LIT_DECIMAL,  /* digits with a '.', or an integer too big for int64:
                       * text (e.g. "0.06"); the binder picks precision/scale */
    SQL_LIT_FLOAT,    /* has an exponent (1e3, 2.5E-2): text */
    SQL_LIT_STRING,   /* 'it''s' → string "it's" (quotes undone) */
    SQL_LIT_DATE,     /* DATE '1998-12-01' → text "1998-12-01", unchecked */
    SQL_LIT_INTERVAL, /* INTERVAL '90' DAY → interval.count 90, unit DAY */
} sql_literal_kind;

typedef struct sql_literal {
    sql_literal_kind kind;
    bool boolean;     /* BOOL */
    int64_t integer;  /* INTEGER */
    const char *text; /* DECIMAL, FLOAT: as written; STRING: unquoted; DATE */
    struct {
        int64_t count;       /* may be negative: INTERVAL '-3' MONTH */
        sql_date_field unit; /* YEAR, MONTH or DAY */
    } interval;              /* INTERVAL */
} sql_literal;

/* ---------------------------------------------------------- expressions -- */

/* The kinds of expression node; the comment names the union member used. */
#define SQL_EXPR_KIND_LIST(X)                                                                      \
    X(LITERAL)     /* lit: a constant */                                                           \
    X(COLUMN)      /* column: a, t.a */                                                            \
    X(STAR)        /* star: * or t.* in a select list */                                           \
    X(PARAM)       /* param: $1, $2, ... (the wire protocol's parameters) */                       \
    X(UNARY)       /* unary: NOT a, -a, +a */                                                      \
    X(BINARY)      /* binary: a + b, a AND b, a = b, a || b, ... */                                \
    X(IS_NULL)     /* is_null: a IS [NOT] NULL */                                                  \
    X(BETWEEN)     /* between: a [NOT] BETWEEN low AND high */                                     \
    X(IN_LIST)     /* in_list: a [NOT] IN (e1, e2, ...) */                                         \
    X(IN_SUBQUERY) /* in_subquery: a [NOT] IN (SELECT ...) */                                      \
    X(LIKE)        /* like: a [NOT] LIKE|ILIKE p [ESCAPE e] */                                     \
    X(EXISTS)      /* subquery: EXISTS (SELECT ...) (NOT EXISTS: UNARY NOT) */                     \
    X(SUBQUERY)    /* subquery: (SELECT ...) as a scalar value */                                  \
    X(QUANTIFIED)  /* quantified: a op ANY|SOME|ALL (SELECT ...) */                                \
    X(CASE)        /* case_: CASE [operand] WHEN .. THEN .. [ELSE ..] END */                       \
    X(CAST)        /* cast: CAST(a AS type), a::type */                                            \
    X(FUNC)        /* func: f(args), count(*), sum(DISTINCT a), coalesce,   */                     \
                   /*   nullif, substring(s FROM a FOR b) → substring(s,a,b) */                  \
    X(EXTRACT)     /* extract: EXTRACT(YEAR FROM d) */

typedef enum sql_expr_kind {
#define SQL_EXPR_KIND_ENUM(id) SQL_EXPR_##id,
    SQL_EXPR_KIND_LIST(SQL_EXPR_KIND_ENUM)
#undef SQL_EXPR_KIND_ENUM
        SQL_EXPR_KIND_COUNT
} sql_expr_kind;

/* One WHEN cond THEN result arm of a CASE. For a simple CASE (CASE x WHEN v
 * ...), cond is the value v that x is compared with. */
typedef struct sql_when {
    sql_expr *cond;
    sql_expr *result;
    int pos; /* of WHEN */
} sql_when;
SQL_LIST_TYPE(sql_when_list, sql_when)

/* Limits that let later passes recurse over a tree without running out of
 * stack: sql_parse refuses (SQLSTATE 54001) an expression taller than
 * SQL_MAX_EXPR_HEIGHT, and any statement whose tree is deeper than
 * SQL_MAX_TREE_DEPTH, counting every statement, query, FROM item and
 * expression node on the way from the statement down to a leaf. */
#define SQL_MAX_EXPR_HEIGHT 1000
#define SQL_MAX_TREE_DEPTH  4000

struct sql_expr {
    sql_expr_kind kind;
    int pos;
    int height; /* 1 for a leaf, else 1 + the tallest operand's height
                 * (operands of operators, casts, IS, BETWEEN, IN and LIKE) */
    union {
        sql_literal lit;
        struct {
            const char *table; /* qualifier, NULL when unqualified */
            const char *name;
        } column;
        struct {
            const char *table; /* t in t.*, NULL for a bare * */
        } star;
        struct {
            int index; /* 1-based: $1 → 1 */
        } param;
        struct {
            sql_op op; /* NOT, NEG or PLUS */
            sql_expr *arg;
        } unary;
        struct {
            sql_op op; /* any binary op of SQL_OP_LIST */
            sql_expr *left, *right;
        } binary;
        struct {
            sql_expr *arg;
            bool negated; /* IS NOT NULL */
        } is_null;
        struct {
            sql_expr *arg, *low, *high;
            bool negated;
        } between;
        struct {
            sql_expr *arg;
            sql_expr_list list;
            bool negated;
        } in_list;
        struct {
            sql_expr *arg;
            sql_query *subquery;
            bool negated;
        } in_subquery;
        struct {
            sql_expr *arg, *pattern;
            sql_expr *escape; /* NULL: the default escape '\' */
            bool negated;
            bool case_insensitive; /* ILIKE */
        } like;
        struct {
            sql_query *query;
        } subquery; /* EXISTS, SUBQUERY */
        struct {
            sql_op op; /* a comparison */
            bool all;  /* ALL; false for ANY and SOME */
            sql_expr *arg;
            sql_query *subquery;
        } quantified;
        struct {
            sql_expr *operand; /* NULL for a searched CASE */
            sql_when_list whens;
            sql_expr *else_result; /* NULL: ELSE NULL */
        } case_;
        struct {
            sql_expr *arg;
            sto_type type; /* DECIMAL without (p,s): precision 0 = not written;
                            * VARCHAR/TEXT without (n): length 0 = unbounded */
        } cast;
        struct {
            const char *name; /* lowercased: "sum", "coalesce", "substring" */
            sql_expr_list args;
            bool distinct; /* f(DISTINCT ...) */
            bool star;     /* count(*): args is empty */
        } func;
        struct {
            sql_date_field field;
            sql_expr *arg;
        } extract;
    };
};

/* -------------------------------------------------------------- queries -- */

/* One entry of a select list: expr [AS alias]. A * or t.* is an expr of
 * kind STAR. */
typedef struct sql_select_item {
    sql_expr *expr;
    const char *alias; /* NULL when not written */
    int alias_pos;
} sql_select_item;
SQL_LIST_TYPE(sql_select_list, sql_select_item)

typedef enum sql_nulls_order {
    SQL_NULLS_DEFAULT, /* not written: NULLs sort as if larger than any value */
    SQL_NULLS_FIRST,
    SQL_NULLS_LAST,
} sql_nulls_order;

/* ORDER BY expr [ASC|DESC] [NULLS FIRST|LAST]. An integer literal expr is an
 * ordinal and a bare column name may name an output alias: the binder
 * decides. */
typedef struct sql_order_item {
    sql_expr *expr;
    bool desc;
    sql_nulls_order nulls;
} sql_order_item;
SQL_LIST_TYPE(sql_order_list, sql_order_item)

typedef enum sql_join_type {
    SQL_JOIN_INNER, /* JOIN, INNER JOIN */
    SQL_JOIN_LEFT,  /* LEFT [OUTER] JOIN */
    SQL_JOIN_RIGHT, /* RIGHT [OUTER] JOIN */
    SQL_JOIN_FULL,  /* FULL [OUTER] JOIN */
    SQL_JOIN_CROSS, /* CROSS JOIN (no ON/USING) */
} sql_join_type;

typedef enum sql_table_ref_kind {
    SQL_TABLE_NAMED,    /* a table, view or CTE name */
    SQL_TABLE_SUBQUERY, /* (SELECT ...) AS alias [(cols)] */
    SQL_TABLE_JOIN,     /* left JOIN right ON .. | USING (..) */
} sql_table_ref_kind;

/* One item of a FROM clause. Comma-separated items are separate entries of
 * sql_query.from (an implicit cross join the binder may reorder). */
struct sql_table_ref {
    sql_table_ref_kind kind;
    int pos;
    const char *name;       /* NAMED */
    sql_query *subquery;    /* SUBQUERY */
    const char *alias;      /* NAMED, SUBQUERY: NULL when not written */
    int alias_pos;          /*   (a SUBQUERY may lack one, as in PostgreSQL 16) */
    sql_ident_list columns; /* NAMED, SUBQUERY: alias (c1, c2) column aliases */
    /* JOIN */
    sql_join_type join_type;
    sql_table_ref *left, *right;
    sql_expr *on;         /* ON condition, or NULL */
    sql_ident_list using; /* USING (a, b); count 0 when ON or CROSS */
};
SQL_LIST_TYPE(sql_table_ref_list, sql_table_ref)

/* WITH name [(cols)] AS (query) */
typedef struct sql_cte {
    const char *name;
    int pos;
    sql_ident_list columns;
    sql_query *query;
} sql_cte;
SQL_LIST_TYPE(sql_cte_list, sql_cte)

SQL_LIST_TYPE(sql_row_list, sql_expr_list)

typedef enum sql_query_kind {
    SQL_QUERY_SELECT, /* SELECT ... FROM ... WHERE ... GROUP BY ... HAVING */
    SQL_QUERY_VALUES, /* VALUES (..), (..) */
    SQL_QUERY_SETOP,  /* left UNION|INTERSECT|EXCEPT [ALL] right */
} sql_query_kind;

typedef enum sql_setop {
    SQL_SETOP_UNION,
    SQL_SETOP_INTERSECT,
    SQL_SETOP_EXCEPT,
} sql_setop;

/* A query expression. WITH, ORDER BY, LIMIT and OFFSET belong to whichever
 * node they were written on: in `SELECT a FROM t UNION SELECT b FROM u ORDER
 * BY 1` they sit on the SETOP node; in `(SELECT .. LIMIT 1) UNION ...` on the
 * left SELECT. */
struct sql_query {
    sql_query_kind kind;
    int pos;
    sql_cte_list with;
    /* SELECT */
    bool distinct;
    sql_select_list select;
    sql_table_ref_list from; /* count 0: SELECT without FROM */
    sql_expr *where;
    sql_expr_list group_by;
    sql_expr *having;
    /* VALUES: rows, each a list of expressions */
    sql_row_list values;
    /* SETOP */
    sql_setop setop;
    bool all; /* UNION ALL etc.: keep duplicates */
    sql_query *left, *right;
    /* any kind */
    sql_order_list order_by;
    sql_expr *limit;  /* LIMIT n, FETCH FIRST n ROWS ONLY */
    sql_expr *offset; /* OFFSET n */
};

/* ----------------------------------------------------------- statements -- */

/* A column of CREATE TABLE: name type [NOT NULL | NULL] [PRIMARY KEY]. */
typedef struct sql_column_def {
    const char *name;
    int pos;
    sto_type type;
    int type_pos;
    bool not_null;    /* NOT NULL written, or PRIMARY KEY */
    bool primary_key; /* PRIMARY KEY on this column */
} sql_column_def;
SQL_LIST_TYPE(sql_column_def_list, sql_column_def)

/* name [= value]: a COPY option (DELIMITER '|', HEADER, FORMAT csv) or a CALL
 * argument (sf = 0.1). Bare words written as a value (FORMAT csv, SET x TO
 * on) become STRING literals; a value that was not written is NULL (HEADER
 * alone). name is NULL for a positional CALL argument. */
typedef struct sql_option {
    const char *name;
    int pos;
    sql_expr *value;
} sql_option;
SQL_LIST_TYPE(sql_option_list, sql_option)

#define SQL_STMT_KIND_LIST(X)                                                                      \
    X(SELECT, "SELECT")                   /* query */                                              \
    X(CREATE_TABLE, "CREATE TABLE")       /* create_table */                                       \
    X(CREATE_TABLE_AS, "CREATE TABLE AS") /* create_table (query set) */                           \
    X(DROP_TABLE, "DROP TABLE")           /* drop */                                               \
    X(CREATE_VIEW, "CREATE VIEW")         /* create_view */                                        \
    X(DROP_VIEW, "DROP VIEW")             /* drop */                                               \
    X(INSERT, "INSERT")                   /* insert */                                             \
    X(COPY_FROM, "COPY FROM")             /* copy: file → table */                               \
    X(COPY_TO, "COPY TO")                 /* copy: table or query → file */                      \
    X(CALL, "CALL")                       /* call */                                               \
    X(EXPLAIN, "EXPLAIN")                 /* explain */                                            \
    X(SET, "SET")                         /* set */                                                \
    X(SHOW, "SHOW")                       /* show */                                               \
    X(BEGIN, "BEGIN")                     /* (no fields) */                                        \
    X(COMMIT, "COMMIT")                   /* (no fields) */                                        \
    X(ROLLBACK, "ROLLBACK")               /* (no fields) */

typedef enum sql_stmt_kind {
#define SQL_STMT_KIND_ENUM(id, tag) SQL_STMT_##id,
    SQL_STMT_KIND_LIST(SQL_STMT_KIND_ENUM)
#undef SQL_STMT_KIND_ENUM
        SQL_STMT_KIND_COUNT
} sql_stmt_kind;

/* "CREATE TABLE", ... (also a sensible command tag for clients). */
const char *sql_stmt_kind_name(sql_stmt_kind k);

struct sql_stmt {
    sql_stmt_kind kind;
    int pos;
    /* The statement's bytes in the text given to sql_parse: text[text_start ..
     * text_end), without the terminating ';' and surrounding blanks. */
    int text_start, text_end;
    union {
        sql_query *query; /* SELECT */
        struct {
            const char *name;
            int name_pos;
            bool if_not_exists;
            sql_column_def_list columns; /* CREATE TABLE */
            sql_ident_list primary_key;  /* table constraint PRIMARY KEY (..) */
            sql_query *query;            /* CREATE TABLE AS: columns empty */
        } create_table;
        struct {
            const char *name;
            int name_pos;
            bool if_exists;
            bool cascade; /* CASCADE: dependent views go too */
        } drop;           /* DROP TABLE, DROP VIEW */
        struct {
            const char *name;
            int name_pos;
            sql_ident_list columns; /* CREATE VIEW v (a, b): may be empty */
            sql_query *query;
            const char *query_text; /* the query as written, to store */
            int query_offset;       /* byte offset of query_text in the text */
        } create_view;
        struct {
            const char *table;
            int table_pos;
            sql_ident_list columns; /* empty: all columns in order */
            sql_query *query;       /* VALUES rows are a SQL_QUERY_VALUES */
        } insert;
        struct {
            const char *table; /* NULL for COPY (query) TO */
            int table_pos;
            sql_ident_list columns; /* may be empty */
            sql_query *query;       /* COPY (query) TO only */
            const char *file;       /* NULL: STDIN / STDOUT, the client's stream */
            int file_pos;
            sql_option_list options; /* names lowercased: delimiter, header,
                                      * format, ... (the engine checks them) */
        } copy;                      /* COPY_FROM, COPY_TO */
        struct {
            const char *name; /* procedure: "dbgen" */
            sql_option_list args;
        } call;
        struct {
            bool analyze;
            sql_stmt *stmt;
        } explain;
        struct {
            const char *name;
            sql_expr *value; /* a literal, or NEG of a number (SET x = -1);
                              * SET x TO DEFAULT: NULL */
        } set;
        struct {
            const char *name; /* NULL: SHOW ALL */
        } show;
    };
};
SQL_LIST_TYPE(sql_stmt_list, sql_stmt)

/* ------------------------------------------------------------- printing -- */

/* The tree as an S-expression, for tests and debugging, e.g.
 *   (select (items (as (sum l_quantity) sum_qty)) (from lineitem)
 *           (where (<= l_shipdate (- (date '1998-12-01') (interval 90 day)))))
 * malloc'd (caller frees); NULL when memory is short. */
char *sql_stmt_to_string(const sql_stmt *stmt);
char *sql_query_to_string(const sql_query *q);
char *sql_expr_to_string(const sql_expr *e);

#endif
