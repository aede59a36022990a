/*
 * optimize.h — the logical optimizer: bound plan in, better bound plan out.
 *
 * The binder (sql/bind.h) hands over a plan of sql/plan.h that still reads
 * like the query text: comma joins as CROSS joins, WHERE as one FILTER on
 * top, subqueries as SUBQUERY expressions. eng_optimize rewrites it in place,
 * in this order:
 *
 *   fold        constant subexpressions, TRUE/FALSE conjuncts   (opt_fold.c)
 *   unnest      SUBQUERY expressions → SEMI/ANTI/MARK/SINGLE/... joins,
 *               correlated ones decorrelated (Neumann & Kemper) (opt_unnest.c)
 *   push-down   conjuncts as deep as their columns allow, comma joins into
 *               equi joins, implied constant predicates          (opt_pushdown.c)
 *   join order  DP over connected subgraphs, greedy beyond       (opt_joinorder.c)
 *   prune       every operator outputs only ids used above it    (opt_prune.c)
 *   estimate    est_rows on every operator; join algorithm and
 *               build side in phys                              (opt_cardinality.c)
 *
 * New operators and column ids come from plan->ctx (the plan's arena). The
 * physical planner reads est_rows and phys afterwards; EXPLAIN prints the
 * result with eng_plan_explain_logical. docs/optimizer.md explains the rules.
 */
#ifndef RACKDB_ENGINE_OPTIMIZE_H
#define RACKDB_ENGINE_OPTIMIZE_H

#include <stdint.h>

#include "engine/settings.h"
#include "sql/plan.h"
#include "storage/status.h"

/* Join algorithms, stored in sql_lop.phys.algorithm (0 = not chosen). As a
 * setting, ENG_JOIN_ALGO_AUTO lets the optimizer choose per join. */
typedef enum eng_join_algo {
    ENG_JOIN_ALGO_AUTO = 0,
    ENG_JOIN_ALGO_HASH = 1,        /* one shared, non-partitioned hash table */
    ENG_JOIN_ALGO_RADIX = 2,       /* radix-partitioned hash join */
    ENG_JOIN_ALGO_SORTMERGE = 3,   /* sort-merge join */
    ENG_JOIN_ALGO_NESTED_LOOP = 4, /* no equality key in the condition */
} eng_join_algo;

/* Rules that can be switched off (tests, EXPLAIN comparisons). */
#define ENG_OPT_NO_FOLD      (1u << 0)
#define ENG_OPT_NO_UNNEST    (1u << 1)
#define ENG_OPT_NO_PUSHDOWN  (1u << 2)
#define ENG_OPT_NO_JOINORDER (1u << 3)
#define ENG_OPT_NO_PRUNE     (1u << 4)
#define ENG_OPT_NO_EAGER_AGG (1u << 5)

/* In auto mode a join whose estimated build side has at most this many rows
 * per thread uses one shared hash table; bigger builds are radix-partitioned.
 * Measured in pipelines (docs/joins.md): lineitem ⋈ orders at SF 1 (1.5M
 * build rows, 6M probe rows, 2 threads) took the shared table 0.3-1.1 s and
 * radix 0.85-1.7 s, the radix join paying for materializing and copying the
 * probe side; so radix is kept for builds far beyond that. */
#define ENG_OPT_HASH_BUILD_ROWS_PER_THREAD 8000000.0

typedef struct eng_opt_settings {
    eng_join_algo join_algorithm; /* AUTO or a forced algorithm */
    int threads;                  /* workers the query runs on (>= 1) */
    unsigned disabled;            /* ENG_OPT_NO_* bits */
} eng_opt_settings;

/* Defaults: auto algorithm, 1 thread, every rule on. */
eng_opt_settings eng_opt_settings_default(void);

/* The optimizer's settings for a session's (SET threads / join_algorithm). */
eng_opt_settings eng_opt_settings_from(const eng_settings *s);

/* Optimizes plan in place (s NULL: defaults). Errors: out of memory. */
sto_status eng_optimize(sql_plan *plan, const eng_opt_settings *s);

/* The plan as sql_plan_to_string prints it, each operator line followed by
 * "(est N rows)" and, for joins, the chosen algorithm and build side.
 * malloc'd (caller frees); NULL when memory is short. */
char *eng_plan_explain_logical(const sql_plan *plan);

/* The name of a join algorithm: "hash", "radix", "sortmerge", ... */
const char *eng_join_algo_name(eng_join_algo a);

#endif
