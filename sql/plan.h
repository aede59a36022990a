/*
 * plan.h — the logical plan: what the binder produces and the optimizer, the
 * physical planner and the code generator consume.
 *
 * Flow: AST (sql/ast.h) → binder (sql/bind.h) → this plan → engine/optimize
 * (unnesting, push-down, join order) → physical pipelines → LLVM.
 *
 * Column identity. Every column an operator produces is an "information unit"
 * with a plan-wide unique id (sql_colid, 1, 2, ...). The plan context keeps
 * each id's type, nullability and a debug name. Expressions name columns by
 * id, never by position, so operators can be reordered, predicates pushed
 * down and subqueries unnested without renumbering anything. A correlated
 * subquery simply refers to ids its own subplan does not produce (its free
 * variables); the binder lists them in the subquery expression.
 *
 * Which ids an operator produces is stated once, in sql_lop.out:
 *   GET        one id per scanned table column
 *   FILTER, SORT, LIMIT, DISTINCT   the input's ids, unchanged
 *   PROJECT    exactly its items' ids, in order (an item that is a plain
 *              column reference keeps that column's id: projections do not
 *              rename columns they merely pass on)
 *   JOIN       left's ids then right's; SEMI/ANTI: left's only; MARK:
 *              left's then the mark id
 *   AGGREGATE  group ids then aggregate ids (a group key that is a plain
 *              column keeps that column's id)
 *   SETOP, VALUES   fresh ids
 *   EXCHANGE   the input's ids, unchanged
 * Nullability is per id and conservative: an outer join marks the ids of its
 * padded side nullable for the whole plan.
 *
 * Expressions (sql_bexpr) are typed trees. Every operator's operands already
 * have the type the operator works on: the binder inserted CASTs for integer
 * widening and INTEGER/BIGINT → DECIMAL → DOUBLE, so a binary arithmetic or
 * comparison node has operands of one type id. Only the operands of
 * arithmetic (+ - * / %) may be DECIMALs of different scales (the node's own
 * type gives the result's precision/scale; a DECIMAL product is the exact
 * product, computed in 128 bits, rounded half away from zero to the node's
 * scale, which may be less than s1+s2); everywhere else — comparisons,
 * CASE arms, IN lists, function arguments, set-operation sides — values
 * already have the exact scale the consumer states (DECIMAL precision is
 * only an upper bound and may differ).
 *
 * Everything lives in the arena given to sql_plan_ctx_new and dies with it.
 */
#ifndef RACKDB_SQL_PLAN_H
#define RACKDB_SQL_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "sql/arena.h"
#include "sql/ast.h"
#include "sql/func.h"
#include "storage/column.h"
#include "storage/table.h"

typedef uint32_t sql_colid; /* 0 = no column */

typedef struct sql_bexpr sql_bexpr;
typedef struct sql_lop sql_lop;

/* ------------------------------------------------------------- context -- */

typedef struct sql_col_info {
    sto_type type;
    bool nullable;
    const char *name; /* for printing: "l_shipdate", "sum", "?column?" */
} sql_col_info;

typedef struct sql_plan_ctx {
    sql_arena *arena;
    uint32_t ncols; /* ids 1..ncols are in use */
    uint32_t cap;
    sql_col_info *cols;    /* indexed by id; cols[0] unused */
    uint32_t nparams;      /* highest $n seen */
    sto_type *param_types; /* [0..nparams-1]: $1's type at [0] */
} sql_plan_ctx;

/* A context allocating from arena; NULL when memory is short. */
sql_plan_ctx *sql_plan_ctx_new(sql_arena *arena);

/* A fresh column id; 0 when memory is short. name is borrowed (arena). */
sql_colid sql_plan_new_col(sql_plan_ctx *ctx, sto_type type, bool nullable, const char *name);

/* The description of an id (which must be valid). */
static inline sql_col_info *sql_plan_col(const sql_plan_ctx *ctx, sql_colid id)
{
    return &ctx->cols[id];
}

/* ---------------------------------------------------------- expressions -- */

#define SQL_BEXPR_KIND_LIST(X)                                                                     \
    X(CONST)    /* value: a typed constant (NULL constants are typed too) */                       \
    X(COLUMN)   /* column: a reference to a column id */                                           \
    X(PARAM)    /* param: $n, type inferred from its context */                                    \
    X(OP)       /* op: an operator of SQL_OP_LIST, 1 or 2 args */                                  \
    X(FUNC)     /* func: a scalar function of SQL_FUNC_LIST */                                     \
    X(CASE)     /* case_: searched CASE (simple CASE is rewritten) */                              \
    X(CAST)     /* cast: arg converted to this node's type */                                      \
    X(IN_LIST)  /* in_list: arg [NOT] IN (list), list items typed as arg */                        \
    X(IS_NULL)  /* is_null: arg IS [NOT] NULL */                                                   \
    X(SUBQUERY) /* subquery: scalar / EXISTS / ANY / ALL over a subplan */

typedef enum sql_bexpr_kind {
#define SQL_BEXPR_KIND_ENUM(id) SQL_BEXPR_##id,
    SQL_BEXPR_KIND_LIST(SQL_BEXPR_KIND_ENUM)
#undef SQL_BEXPR_KIND_ENUM
        SQL_BEXPR_KIND_COUNT
} sql_bexpr_kind;

/* Subquery expressions, left in place for the optimizer to unnest:
 *   SCALAR  (SELECT x ...): the single value, NULL when no row; more than
 *           one row is a run-time error (21000).
 *   EXISTS  EXISTS (SELECT ...): true when the subplan yields a row.
 *   ANY     left cmp ANY (SELECT x ...); IN is ANY with cmp '='.
 *   ALL     left cmp ALL (SELECT x ...).
 * NOT IN / NOT EXISTS are a NOT operator above these. */
typedef enum sql_subquery_kind {
    SQL_SUBQ_SCALAR,
    SQL_SUBQ_EXISTS,
    SQL_SUBQ_ANY,
    SQL_SUBQ_ALL,
} sql_subquery_kind;

typedef struct sql_bexpr_list {
    uint32_t count;
    sql_bexpr **items;
} sql_bexpr_list;

struct sql_bexpr {
    sql_bexpr_kind kind;
    sto_type type;
    bool nullable;
    int pos; /* where it was written (1-based), 0 when made up */
    union {
        sto_value value; /* CONST: CHAR/VARCHAR bytes live in the arena */
        sql_colid column;
        int param; /* 1-based */
        struct {
            sql_op op;
            sql_bexpr *args[2]; /* args[1] NULL for unary ops */
        } op;
        struct {
            sql_func id;
            sql_bexpr_list args;
        } func;
        struct {
            sql_bexpr_list conds;   /* WHEN cond (BOOLEAN) ... */
            sql_bexpr_list results; /* ... THEN result, typed as the CASE */
            sql_bexpr *else_result; /* never NULL: a typed NULL constant */
        } case_;
        struct {
            sql_bexpr *arg;
        } cast;
        struct {
            sql_bexpr *arg;
            sql_bexpr_list list;
            bool negated;
        } in_list;
        struct {
            sql_bexpr *arg;
            bool negated;
        } is_null;
        struct {
            sql_subquery_kind kind;
            sql_op cmp;       /* ANY, ALL: the comparison */
            sql_bexpr *left;  /* ANY, ALL: the left operand, typed as col */
            sql_lop *plan;    /* the bound subquery */
            sql_colid col;    /* SCALAR, ANY, ALL: the subplan's column */
            uint32_t nouter;  /* outer ids the subplan refers to */
            sql_colid *outer; /*   (its free variables), sorted */
        } subquery;
    };
};

/* ------------------------------------------------------------ operators -- */

#define SQL_LOP_KIND_LIST(X)                                                                       \
    X(GET)       /* get: scan a base table */                                                      \
    X(FILTER)    /* filter: keep rows where pred is true */                                        \
    X(PROJECT)   /* project: compute exprs into ids */                                             \
    X(JOIN)      /* join: left ⋈ right on cond */                                                \
    X(AGGREGATE) /* aggregate: group by keys, compute aggregates */                                \
    X(SORT)      /* sort: order by keys */                                                         \
    X(LIMIT)     /* limit: skip offset rows, keep limit rows */                                    \
    X(DISTINCT)  /* (no fields): drop duplicate rows over all output ids */                        \
    X(SETOP)     /* setop: UNION / INTERSECT / EXCEPT [ALL] */                                     \
    X(VALUES)    /* values: literal rows */                                                        \
    X(EXCHANGE)  /* exchange: move rows between the servers of a cluster */

typedef enum sql_lop_kind {
#define SQL_LOP_KIND_ENUM(id) SQL_LOP_##id,
    SQL_LOP_KIND_LIST(SQL_LOP_KIND_ENUM)
#undef SQL_LOP_KIND_ENUM
        SQL_LOP_KIND_COUNT
} sql_lop_kind;

/* Join kinds. SEMI/ANTI/MARK/SINGLE come from subqueries (the optimizer's
 * unnesting makes them; the binder itself only makes INNER/LEFT/RIGHT/FULL/
 * CROSS). MARK keeps every left row and adds a BOOLEAN mark column: true when
 * a match exists, false when none, NULL when only NULL comparisons happened.
 * SINGLE is a left join that fails at run time if a left row matches more
 * than once (scalar subqueries). */
#define SQL_JOIN_KIND_LIST(X)                                                                      \
    X(INNER, "INNER")                                                                              \
    X(LEFT, "LEFT")                                                                                \
    X(RIGHT, "RIGHT")                                                                              \
    X(FULL, "FULL")                                                                                \
    X(SEMI, "SEMI")                                                                                \
    X(ANTI, "ANTI")                                                                                \
    X(MARK, "MARK")                                                                                \
    X(SINGLE, "SINGLE")                                                                            \
    X(CROSS, "CROSS")

typedef enum sql_join_kind {
#define SQL_JOIN_KIND_ENUM(id, name) SQL_JOINK_##id,
    SQL_JOIN_KIND_LIST(SQL_JOIN_KIND_ENUM)
#undef SQL_JOIN_KIND_ENUM
        SQL_JOINK_COUNT
} sql_join_kind;

const char *sql_join_kind_name(sql_join_kind k);

/* How an EXCHANGE moves its input's rows (distributed plans only; the
 * optimizer's distribution pass inserts them):
 *   SHUFFLE    each row to server crc32(keys) mod n
 *   BROADCAST  every row to every server
 *   GATHER     every row to the coordinator */
typedef enum sql_exchange_kind {
    SQL_EXCH_SHUFFLE,
    SQL_EXCH_BROADCAST,
    SQL_EXCH_GATHER,
} sql_exchange_kind;

typedef struct sql_proj_item {
    sql_bexpr *expr;
    sql_colid id;
} sql_proj_item;

typedef struct sql_agg_item {
    sql_agg func;
    bool distinct;
    sql_bexpr *arg; /* NULL for COUNT_STAR */
    sql_colid id;   /* the result */
} sql_agg_item;

typedef struct sql_sort_key {
    sql_bexpr *expr;
    bool desc;
    bool nulls_first; /* resolved: PostgreSQL's default is NULLS LAST for
                       * ASC and NULLS FIRST for DESC */
} sql_sort_key;

struct sql_lop {
    sql_lop_kind kind;
    sql_lop *left, *right; /* inputs: left is the only input of unary ops */
    uint32_t nout;
    sql_colid *out; /* the ids this operator produces, in order */
    /* Set by the optimizer (engine/optimize), zero before it runs:
     * estimated output rows, and for joins the physical choices. */
    double est_rows;
    struct {
        int algorithm;   /* engine's join algorithm id; 0 = not chosen */
        bool build_left; /* the left input is the hash-build side */
    } phys;
    union {
        struct {
            sto_table *table; /* the data (NULL in tests whose catalog has none) */
            const char *table_name;
            const char *alias;             /* the name it was referred to by */
            uint32_t *columns;             /* schema column index of out[i] */
            uint64_t rows;                 /* catalog row count when bound */
            const sto_column_stats *stats; /* per schema column, or NULL */
        } get;
        struct {
            sql_bexpr *pred;
        } filter;
        struct {
            uint32_t count;
            sql_proj_item *items;
        } project;
        struct {
            sql_join_kind kind;
            sql_bexpr *cond; /* NULL: always true (CROSS) */
            sql_colid mark;  /* MARK: the mark column's id */
        } join;
        struct {
            uint32_t ngroups;
            sql_proj_item *groups; /* group key exprs over the input → ids */
            uint32_t naggs;
            sql_agg_item *aggs;
        } aggregate;
        struct {
            uint32_t count;
            sql_sort_key *keys;
        } sort;
        struct {
            int64_t limit;  /* -1: no limit */
            int64_t offset; /* 0: none */
        } limit;
        struct {
            sql_setop op;
            bool all;
            /* left->out[i] and right->out[i] feed out[i]; both sides have
             * the output's types already (casts are projected below). */
        } setop;
        struct {
            uint32_t nrows;
            sql_bexpr_list *rows; /* each has nout constants/exprs */
        } values;
        struct {
            sql_exchange_kind kind;
            uint32_t nkeys;
            sql_bexpr **keys; /* SHUFFLE: hashed to pick the server */
            uint32_t id;      /* 1, 2, ... within the query: names the stream */
        } exchange;
    };
};

/* A bound query: the operator tree and the columns a client sees. */
typedef struct sql_plan {
    sql_plan_ctx *ctx;
    sql_lop *root;
    uint32_t ncols;
    sql_colid *cols;    /* output ids in order (a subset of root->out) */
    const char **names; /* output column names: alias or derived name */
} sql_plan;

/* ---------------------------------------------------------- constructors -- */
/* Each returns NULL when memory is short (the arena is then marked failed). */

sql_bexpr *sql_bexpr_new(sql_plan_ctx *ctx, sql_bexpr_kind kind, sto_type type, bool nullable,
                         int pos);
sql_bexpr *sql_bexpr_column(sql_plan_ctx *ctx, sql_colid id, int pos);
sql_bexpr *sql_bexpr_op(sql_plan_ctx *ctx, sql_op op, sto_type type, sql_bexpr *a, sql_bexpr *b,
                        int pos);
/* A typed NULL constant. */
sql_bexpr *sql_bexpr_null(sql_plan_ctx *ctx, sto_type type, int pos);
/* Deep copy (subplans are shared, not copied). */
sql_bexpr *sql_bexpr_copy(sql_plan_ctx *ctx, const sql_bexpr *e);
/* Structural equality (positions ignored): GROUP BY matching, dedup. */
bool sql_bexpr_equal(const sql_bexpr *a, const sql_bexpr *b);
/* The same, with columns matched by same_col(a's id, b's id, arg) instead
 * of by id: two copies of one subplan carry different ids (the physical
 * planner's compute-once matching). */
bool sql_bexpr_equal_as(const sql_bexpr *a, const sql_bexpr *b,
                        bool (*same_col)(sql_colid a, sql_colid b, const void *arg),
                        const void *arg);

/* What a walk callback tells sql_bexpr_walk to do next. */
typedef enum sql_walk {
    SQL_WALK_CONTINUE, /* visit this node's children */
    SQL_WALK_SKIP,     /* do not visit its children, go on with the rest */
    SQL_WALK_STOP,     /* end the walk */
} sql_walk;

/* Calls fn on every node of *e, parents before children, passing the slot
 * that holds the node so fn may replace it (the walk then goes on into the
 * replacement's children unless fn says SKIP). A SUBQUERY's only child is its
 * left operand: its plan is operators, not an expression (its free variables
 * are in subquery.outer). False when fn stopped the walk. */
bool sql_bexpr_walk(sql_bexpr **e, sql_walk (*fn)(sql_bexpr **slot, void *arg), void *arg);

/* A new operator of kind with nout output slots (out zeroed). */
sql_lop *sql_lop_new(sql_plan_ctx *ctx, sql_lop_kind kind, sql_lop *left, sql_lop *right,
                     uint32_t nout);

/* ------------------------------------------------------------- printing -- */

/* The plan as an indented tree, one operator per line, children indented
 * below their parent. Columns print as name#id, declarations add :TYPE and a
 * '?' when the column may be NULL:
 *   OUTPUT l_returnflag=l_returnflag#9:CHAR(1), sum_qty=sum#17:DECIMAL(18,2)
 *     SORT l_returnflag#9 ASC NULLS LAST
 *       PROJECT l_returnflag#9:CHAR(1), sum#17:DECIMAL(18,2)
 *         AGGREGATE GROUP l_returnflag#9:CHAR(1) AGGS sum#17:DECIMAL(18,2) = sum(l_quantity#5)
 *           FILTER (l_shipdate#11 <= DATE '1998-09-02')
 *             GET lineitem l_orderkey#1:INTEGER, ...
 * A subquery expression prints as SUBPLAN n(col) / EXISTS(SUBPLAN n) with its
 * free variables as [outer ...]; its plan follows the operator's line under
 * "subplan n:". malloc'd (caller frees); NULL when memory is short. */
char *sql_plan_to_string(const sql_plan *plan);
char *sql_lop_to_string(const sql_plan_ctx *ctx, const sql_lop *op);
char *sql_bexpr_to_string(const sql_plan_ctx *ctx, const sql_bexpr *e);

#endif
