/*
 * opt_int.h — what the optimizer's rule files share: column id sets,
 * conjunct lists, expression helpers and the rule entry points.
 *
 * Internal to engine/opt_*.c and engine/optimize.c; the public contract is
 * engine/optimize.h. Everything is allocated from the plan's arena, so the
 * helpers never free: a failed allocation marks the arena failed and the
 * driver turns that into an out-of-memory status.
 */
#ifndef RACKDB_ENGINE_OPT_INT_H
#define RACKDB_ENGINE_OPT_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/optimize.h"
#include "sql/plan.h"

/* ------------------------------------------------------------ id sets -- */

/* A set of column ids as a bitmap that grows on demand. */
typedef struct eng_idset {
    uint32_t nwords;
    uint64_t *w;
} eng_idset;

void eng_idset_init(eng_idset *s);
bool eng_idset_add(sql_plan_ctx *ctx, eng_idset *s, sql_colid id);
bool eng_idset_has(const eng_idset *s, sql_colid id);
bool eng_idset_add_all(sql_plan_ctx *ctx, eng_idset *s, const eng_idset *from);
/* True when every id of a is in b. */
bool eng_idset_subset(const eng_idset *a, const eng_idset *b);
bool eng_idset_intersects(const eng_idset *a, const eng_idset *b);
bool eng_idset_empty(const eng_idset *s);
/* The ids an operator outputs. */
bool eng_idset_of_out(sql_plan_ctx *ctx, eng_idset *s, const sql_lop *op);

/* ------------------------------------------------------ expressions -- */

/* Adds every column id e reads (a SUBQUERY adds its free variables and its
 * left operand's ids) to s. */
bool eng_expr_refs(sql_plan_ctx *ctx, const sql_bexpr *e, eng_idset *s);
bool eng_expr_has_subquery(const sql_bexpr *e);

/* A growable list of conjuncts. */
typedef struct eng_conj {
    uint32_t count, cap;
    sql_bexpr **items;
} eng_conj;

bool eng_conj_push(sql_plan_ctx *ctx, eng_conj *l, sql_bexpr *e);
/* Appends the AND-separated parts of e (NULL adds nothing). */
bool eng_conj_split(sql_plan_ctx *ctx, eng_conj *l, sql_bexpr *e);
/* The conjunction of the list (NULL when empty; sets *oom on failure). */
sql_bexpr *eng_conj_and(sql_plan_ctx *ctx, const eng_conj *l, bool *oom);

sql_bexpr *eng_bool_const(sql_plan_ctx *ctx, bool v);
bool eng_expr_is_bool_const(const sql_bexpr *e, bool v);
sql_bexpr *eng_expr_not(sql_plan_ctx *ctx, sql_bexpr *e);
sql_bexpr *eng_expr_and(sql_plan_ctx *ctx, sql_bexpr *a, sql_bexpr *b);
sql_bexpr *eng_expr_is_null(sql_plan_ctx *ctx, sql_bexpr *e, bool negated);

/* A copy of e with every COLUMN whose id map[] names (map[id] != NULL,
 * ids < nmap) replaced by a copy of map[id]. */
sql_bexpr *eng_expr_subst(sql_plan_ctx *ctx, const sql_bexpr *e, sql_bexpr *const *map,
                          uint32_t nmap);
/* Replaces column ids in place: COLUMN from → to. */
void eng_expr_rename(sql_bexpr *e, sql_colid from, sql_colid to);

/* True when NULL in any column e reads makes e NULL (or false), so that a
 * filter on e rejects rows padded with NULLs. */
bool eng_expr_strict(const sql_bexpr *e);
/* Recomputes the nullable flags of e's nodes from the column table. */
void eng_expr_refresh_nullable(const sql_plan_ctx *ctx, sql_bexpr *e);

/* ------------------------------------------------------- operators -- */

/* Rebuilds op->out from its inputs (for the kinds whose outputs derive from
 * them) after an input changed. */
bool eng_lop_recompute_out(sql_plan_ctx *ctx, sql_lop *op);
/* A PROJECT passing exactly the ids out[0..n) of input through. */
sql_lop *eng_lop_passthrough(sql_plan_ctx *ctx, sql_lop *input, const sql_colid *out, uint32_t n);
sql_lop *eng_lop_filter(sql_plan_ctx *ctx, sql_lop *input, sql_bexpr *pred);
sql_lop *eng_lop_join(sql_plan_ctx *ctx, sql_join_kind kind, sql_lop *l, sql_lop *r,
                      sql_bexpr *cond);
/* Every id produced anywhere in the tree (subplans excluded). */
bool eng_lop_produced(sql_plan_ctx *ctx, const sql_lop *op, eng_idset *s);
/* Every id read anywhere in the tree (subplans: their free variables). */
bool eng_lop_refs(sql_plan_ctx *ctx, const sql_lop *op, eng_idset *s);
/* A copy of the tree under fresh column ids; map (indexed by old id, nmap
 * entries, zeroed by the caller) receives old id → COLUMN(new id). NULL when
 * memory is short or the tree holds a SUBQUERY expression. */
sql_lop *eng_lop_copy_fresh(sql_plan_ctx *ctx, const sql_lop *op, sql_bexpr **map, uint32_t nmap);
/* refs − produced: the tree's free variables. */
bool eng_lop_free(sql_plan_ctx *ctx, const sql_lop *op, eng_idset *s);

/* ------------------------------------------------------------ rules -- */

void eng_opt_fold_plan(sql_plan_ctx *ctx, sql_lop **slot);
sql_bexpr *eng_opt_fold_expr(sql_plan_ctx *ctx, sql_bexpr *e);
/* The ids a SINGLE/LEFT join made by unnesting turned nullable. */
typedef struct eng_padded {
    const sql_lop *join;
    sql_colid *ids;
    uint32_t nids;
    struct eng_padded *next;
} eng_padded;

bool eng_opt_unnest(sql_plan_ctx *ctx, sql_lop **root, eng_padded **padded);
/* The filter conjunct all->items[ci] compares with a correlated aggregate
 * over the outer side's own tables (q17, q02): *cur becomes the outer side,
 * filtered by the other conjuncts, joined with that aggregate grouped by
 * the correlation, and all holds only the conjunct, which now reads the
 * aggregate's column (opt_unnest_window.c). 1 done, 0 not applicable (nothing
 * changed), -1 out of memory. */
int eng_opt_unnest_window(sql_plan_ctx *ctx, sql_lop **cur, eng_conj *all, uint32_t ci);
/* Makes the ids NOT NULL again where the join became an inner join. */
void eng_opt_unpad(sql_plan_ctx *ctx, const eng_padded *padded);
bool eng_opt_pushdown(sql_plan_ctx *ctx, sql_lop **root);
/* COUNTs over a left join's null-supplying side are counted per join key
 * below the join, then summed (opt_eager_agg.c). False: out of memory. */
bool eng_opt_eager_agg(sql_plan_ctx *ctx, sql_lop **root);
bool eng_opt_prune(sql_plan_ctx *ctx, sql_plan *plan);

/* Cardinality: per-column statistics gathered from the GETs, and the
 * estimate of a subtree (which fills est_rows below it). */
typedef struct eng_colstat {
    double ndv;       /* distinct non-NULL values; 0 = unknown */
    double null_frac; /* fraction of NULLs */
    bool has_minmax;
    double min, max; /* in the column's own domain (scaled decimals) */
} eng_colstat;

typedef struct eng_card {
    sql_plan_ctx *ctx;
    uint32_t nstats;
    eng_colstat *stats; /* indexed by column id */
} eng_card;

bool eng_card_init(eng_card *c, sql_plan_ctx *ctx, sql_lop *root);
/* Gathers the statistics of a tree built after eng_card_init (new ids). */
bool eng_card_add_tree(eng_card *c, const sql_lop *op);
double eng_card_estimate(eng_card *c, sql_lop *op);
double eng_card_selectivity(eng_card *c, const sql_bexpr *pred, double rows);
/* Distinct values of a column at a point where rows rows flow. */
double eng_card_ndv(eng_card *c, sql_colid id, double rows);

bool eng_opt_joinorder(eng_card *c, sql_lop **root);
void eng_opt_choose_physical(eng_card *c, sql_lop *op, const eng_opt_settings *s);

#endif
