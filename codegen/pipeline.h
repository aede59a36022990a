/*
 * pipeline.h — one pipeline of a query, compiled into one LLVM function.
 *
 * The physical planner (engine/physical.c) cuts a plan into pipelines: a
 * source that yields tuples, a chain of steps (filters, projections) and a
 * sink that consumes them (a hash-aggregation table, a row buffer for a sort
 * or the result). It describes each pipeline with a cg_pipeline_desc and this
 * module turns it into
 *
 *     int32_t pipeline(cg_error *err, void *query_state, void *worker_state,
 *                      uint64_t begin, uint64_t end)
 *
 * which processes tuples [begin, end) of its source: for a table scan these
 * are ENG_MORSEL_POS-style positions (chunk index in the high 32 bits, row
 * inside the chunk in the low 32), for a row buffer plain row numbers.
 *
 * Produce/consume: the source emits a loop, the steps and the sink emit their
 * code inside it, so a tuple stays in registers from the scan to the sink.
 * Columns are loaded only when an expression first needs them (cg_binding),
 * so a filter that fails early never touches the other columns; NOT NULL
 * columns never read a validity bitmap.
 *
 * codegen/ knows nothing of the engine: the description carries the
 * addresses of the engine's runtime helpers (row append, hash-table lookup)
 * and the offsets of what the generated code touches in the worker state.
 * The layouts it writes — the row format below and the aggregate states —
 * are defined here, once, and the engine's runtime reads the same layouts.
 *
 * Row format (materialized tuples between pipelines, and group keys): column
 * i occupies a 16-byte slot at i * 16 holding its value in its C type
 * (BOOLEAN uint8_t, INTEGER/DATE int32_t, BIGINT/DECIMAL int64_t, DOUBLE,
 * sto_str); after the slots one byte per column is 1 when the value is NULL.
 */
#ifndef RACKDB_CODEGEN_PIPELINE_H
#define RACKDB_CODEGEN_PIPELINE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "codegen/ir.h"
#include "codegen/jit.h"
#include "sql/plan.h"
#include "storage/chunk.h"
#include "storage/status.h"

/* --- the row format ----------------------------------------------------- */

#define CG_ROW_SLOT 16u

static inline uint32_t cg_row_bytes(uint32_t ncols)
{
    return (ncols * CG_ROW_SLOT + ncols + 15u) & ~15u;
}

/* The NULL byte of column i in a row of ncols columns. */
static inline uint32_t cg_row_null_offset(uint32_t ncols, uint32_t i)
{
    return ncols * CG_ROW_SLOT + i;
}

/* The value of an integer-like slot (BOOLEAN, INTEGER, DATE widened; the
 * 8-byte types as their bits), so INTEGER and BIGINT keys of equal value
 * agree wherever the runtime hashes, compares or orders them. */
static inline int64_t cg_row_slot_int(sto_type_id id, const uint8_t *p)
{
    if (id == STO_TYPE_BOOLEAN) return *p;
    if (id == STO_TYPE_INTEGER || id == STO_TYPE_DATE) {
        int32_t x;
        memcpy(&x, p, 4);
        return x;
    }
    int64_t x;
    memcpy(&x, p, 8);
    return x;
}

/* --- aggregate states ----------------------------------------------------
 * Each aggregate of a group owns cg_agg_state_bytes() bytes (a multiple of
 * 16) at its offset in the group's state area:
 *   COUNT(*), COUNT(x)      int64 count
 *   SUM, AVG of integers    __int128 sum at 0; SUM: uint8 "seen" at 16,
 *     and DECIMALs          AVG: int64 count at 16
 *   SUM, AVG of DOUBLE      double sum at 0; SUM: uint8 seen at 8, AVG:
 *                           int64 count at 8
 *   MIN, MAX                the value in its C type at 0, uint8 seen at 16
 *   any DISTINCT aggregate  a pointer to the runtime's set of the distinct
 *                           values at 0 (the engine computes the result
 *                           from the set when it finalizes) */

static inline bool cg_agg_is_distinct_set(sql_agg func, bool distinct)
{
    return distinct && func != SQL_AGG_MIN && func != SQL_AGG_MAX && func != SQL_AGG_COUNT_STAR;
}

static inline uint32_t cg_agg_state_bytes(sql_agg func, bool distinct, sto_type arg)
{
    if (cg_agg_is_distinct_set(func, distinct)) return 16;
    switch (func) {
    case SQL_AGG_SUM:
    case SQL_AGG_AVG:
        return arg.id == STO_TYPE_DOUBLE ? 16 : 32;
    case SQL_AGG_MIN:
    case SQL_AGG_MAX:
        return 32;
    default:
        return 16;
    }
}

/* --- runtime helpers the generated code calls ------------------------------
 * Each returns a cg_error_kind (0 = fine) and on failure leaves the error in
 * err->detail. `sink_state` is worker_state + the sink's state_offset. */

/* A new row of a row sink; *row points to row_bytes bytes to fill. */
typedef int32_t (*cg_rows_append_fn)(cg_error *err, void *sink_state, uint8_t **row);

/* The states of the group whose key row (the row format over the keys) is
 * `key` and whose hash is `hash`; a new group's states are zeroed. */
typedef int32_t (*cg_agg_find_fn)(cg_error *err, void *sink_state, uint64_t hash,
                                  const uint8_t *key, uint8_t **states);

/* Adds the non-NULL value in the 16-byte slot `value` to the distinct set of
 * aggregate `agg` whose state is at `state`. */
typedef int32_t (*cg_agg_distinct_fn)(cg_error *err, void *sink_state, uint8_t *state, uint32_t agg,
                                      const uint8_t *value);

/* Ordered runs (cg_sink.runs): the states of a new run of rows whose
 * integer group key is `key` (key_row and hash as for find), or NULL in
 * *states when the rows go to the table from now on. */
typedef int32_t (*cg_agg_run_next_fn)(cg_error *err, void *sink_state, uint64_t hash, int64_t key,
                                      const uint8_t *key_row, uint8_t **states);
/* Closes the open run when a call's rows are done. */
typedef int32_t (*cg_agg_run_end_fn)(cg_error *err, void *sink_state);

/* A build tuple whose join key has no NULL (hash of the key) or has one:
 * *row points to the row to fill (see engine/rt_join.h). */
typedef int32_t (*cg_join_append_fn)(cg_error *err, void *sink_state, uint64_t hash, uint8_t **row);
typedef int32_t (*cg_join_append_null_fn)(cg_error *err, void *sink_state, uint8_t **row);
/* The first build entry that may match a probe tuple with this hash, or
 * NULL (the rest follow through the entries' next pointers). */
typedef void *(*cg_join_lookup_fn)(void *cursor, uint64_t hash);
/* Sets err to the error of a probe row matching twice (SINGLE joins). */
typedef int32_t (*cg_join_error_fn)(cg_error *err);

/* --- the description ------------------------------------------------------- */

typedef enum cg_source_kind {
    CG_SOURCE_CHUNKS, /* a table's chunks; positions are (chunk << 32 | row) */
    CG_SOURCE_ROWS,   /* a row buffer filled by an earlier pipeline */
    CG_SOURCE_VALUES, /* literal rows (VALUES), all in one call */
} cg_source_kind;

typedef struct cg_source {
    cg_source_kind kind;
    uint32_t ncols;
    const sql_colid *ids; /* the columns the source yields */
    /* CHUNKS: the table's chunk array; ids[i] is schema column col_index[i];
     * not_null[i] says it has no validity bitmap. */
    sto_chunk *const *chunks;
    const uint32_t *col_index;
    const bool *not_null;
    /* ROWS: *rows_cell is the buffer's base (read when the code runs, so
     * the buffer may be filled after compiling); ids[i] is slot i. */
    uint8_t *const *rows_cell;
    uint32_t row_bytes;
    /* VALUES: nrows rows of ncols expressions, one per id. */
    uint32_t nrows;
    const sql_bexpr_list *rows;
} cg_source;

typedef enum cg_step_kind {
    CG_STEP_FILTER,  /* keep tuples where pred is true */
    CG_STEP_PROJECT, /* compute items[i].expr into column items[i].id */
    CG_STEP_PROBE,   /* probe a join's hash table (probe below) */
} cg_step_kind;

/* A join build row's packed layout (cg_probe.layout, cg_sink.join_layout):
 * column i's value at offset[i] in its C type's width (strings 16 bytes,
 * 8-byte types 8-aligned), its NULL byte (1 = NULL) at null_offset[i];
 * `bytes` in all, a multiple of 8. A build entry is what a probe reaches
 * through a cache miss: packed, an INTEGER takes 4 bytes of it, not 16. */
typedef struct cg_row_layout {
    uint32_t bytes;
    const uint32_t *offset, *null_offset;
} cg_row_layout;

/* How a probe turns matches into tuples (engine/rt_join.h has the rules). */
typedef enum cg_join_kind {
    CG_JOIN_INNER,  /* one tuple per match */
    CG_JOIN_LEFT,   /* ... or one with the build columns NULL */
    CG_JOIN_SEMI,   /* the probe tuple once, if it has a match */
    CG_JOIN_ANTI,   /* the probe tuple, if it has none */
    CG_JOIN_MARK,   /* the probe tuple with `mark` true / false / NULL */
    CG_JOIN_SINGLE, /* LEFT, but a second match is an error */
    CG_JOIN_FLAG,   /* no tuple: only flag every matching build entry (a
                     * SEMI/ANTI join that builds on its left input; the
                     * engine emits the flagged or unflagged entries after) */
} cg_join_kind;

/* A probe into a table of build entries: each entry is `entry_head` bytes
 * (a next pointer at 0, the 64-bit hash at 8) then a row of ncols columns
 * (slots, or packed by `layout`): the
 * build columns ids[0..nids) then the nkeys build-side key values. The
 * table is a power-of-two array of words (pointer in the low 48 bits, a tag
 * bit (hash >> 32 & 15) + 48 set per chain member); the words' address and
 * the mask are read at run time from table + dir_offset / mask_offset. A
 * probe without keys (nested loop) uses hash 0, which every entry has. */
typedef struct cg_probe {
    cg_join_kind kind;
    uint32_t nkeys;
    const sql_bexpr *const *keys; /* probe-side key expressions */
    uint32_t nids, ncols;
    const sql_colid *ids;
    const cg_row_layout *layout; /* of the entries' rows; NULL: the row format */
    const sql_bexpr *residual;   /* NULL: none */
    sql_colid mark;              /* MARK: the mark column */
    const void *table;
    /* table_in_state: the table's address is read from worker_state +
     * table_state_offset instead (a partitioned join: each morsel probes
     * one partition, whose table the engine puts there before the call). */
    bool table_in_state;
    uint32_t table_state_offset;
    /* lookup (optional, with table_in_state): the chain head comes from
     * lookup(worker_state + table_state_offset, hash) instead of the
     * table's words (a sort-merge join's cursor over a sorted run). */
    cg_join_lookup_fn lookup;
    uint32_t dir_offset, mask_offset, entry_head;
    /* filter: before the directory, test the table's semi-join filter,
     * words at table + filter_offset, word mask at filter_mask_offset
     * (engine/rt_hashtable.h has the rules); a row whose bits are not all
     * set has no chain. Ignored with table_in_state: a partitioned join
     * tests it in the probe side's sink instead (cg_sink.join_filter). */
    bool filter;
    uint32_t filter_offset, filter_mask_offset;
    /* keybits (not table_in_state): first test the exact bitmap of one
     * integer key column of the build side (engine/rt_join_keybits.h)
     * when the table has one (the words at table + kb_bits_offset, NULL:
     * none; first key at kb_base_offset, kb_span_offset bits; which key
     * column, one of the candidates in the mask kb_cols, the uint32 at
     * kb_col_offset says): a clear bit, a key outside the span or a NULL
     * key has no chain. keybits_decide (one key; SEMI, ANTI and FLAG
     * without a residual): a set bit is the match, the directory is never
     * read; FLAG sets the key's bit in the words at kb_hits_offset instead
     * of the entries' flags. */
    bool keybits, keybits_decide;
    uint32_t kb_cols;
    uint32_t kb_bits_offset, kb_hits_offset, kb_base_offset, kb_span_offset, kb_col_offset;
    /* keybits_unique (INNER, one key, no residual, every build column is
     * the build key): when the uint32 at table + kb_unique_offset is not 0
     * (no two build entries share a key) a set bit is the one match, the
     * directory is never read and the build columns take the probe key's
     * value; otherwise a set bit goes on to the directory. */
    bool keybits_unique;
    uint32_t kb_unique_offset;
    const uint64_t *build_rows, *build_null_rows; /* MARK: read at run time */
    /* RIGHT/FULL: a match sets the byte at entry + flag_offset to 1 (the
     * engine emits the entries it never set afterwards). */
    bool flag_matches;
    uint32_t flag_offset;
    cg_join_error_fn single_error;
} cg_probe;

typedef struct cg_step {
    cg_step_kind kind;
    const sql_bexpr *pred;
    uint32_t count;
    const sql_proj_item *items;
    cg_probe *probe; /* PROBE */
    /* FILTER: the planner's estimate of the share of rows that pass, or 0
     * when there is none. A pipeline's first filter runs over batches of
     * rows into a selection vector unless at least CG_DENSE_FILTER_SHARE
     * of them pass (then the one loop costs less: see pipeline.c).
     * PROBE: the estimated output rows per probe row; a probe that tests a
     * key bitmap or semi-join filter first, as the first step or after a
     * first filter, tests it in the batch's selection loop too when fewer
     * than CG_DENSE_FILTER_SHARE are expected (INNER, SEMI, FLAG, keys
     * that are columns). */
    double pass_share;
} cg_step;

#define CG_DENSE_FILTER_SHARE 0.9

/* Whether steps[i] is a probe whose key bitmap or semi-join filter is
 * tested in the batch loop (see pass_share; EXPLAIN shows it): the first
 * step, or the one after a first filter. */
bool cg_steps_pretest(const cg_step *steps, uint32_t nsteps, uint32_t i);

typedef enum cg_sink_kind {
    CG_SINK_ROWS, /* append exprs as one row (row format over ncols) */
    CG_SINK_AGG,  /* find the group of keys, update the aggregates */
    CG_SINK_JOIN, /* a join's build: ROWS whose last join_nkeys exprs are the
                   * key, appended with its hash (or as a NULL key) */
} cg_sink_kind;

typedef struct cg_agg_slot {
    sql_agg func;
    bool distinct;
    const sql_bexpr *arg; /* NULL for COUNT(*) */
    uint32_t offset;      /* in the group's state area */
} cg_agg_slot;

typedef struct cg_sink {
    cg_sink_kind kind;
    uint32_t state_offset; /* of the sink's state in the worker state */
    /* ROWS */
    uint32_t ncols;
    const sql_bexpr *const *exprs;
    cg_rows_append_fn append;
    /* JOIN */
    uint32_t join_nkeys;
    const cg_row_layout *join_layout; /* NULL: the row format */
    cg_join_append_fn join_append;
    cg_join_append_null_fn join_append_null;
    /* a partitioned join's probe side: rows with a NULL key are appended
     * with hash 0 like the others (the probe finds they match nothing) */
    bool join_null_keyed;
    /* with join_null_keyed, optional: rows whose hash fails the build
     * side's semi-join filter (the words at join_filter_table +
     * filter_offset, mask at filter_mask_offset; engine/rt_hashtable.h has
     * the rules) or whose key has a NULL are dropped, not appended: the
     * join emits nothing for a probe row without a partner (INNER, SEMI) */
    bool join_filter;
    const void *join_filter_table;
    uint32_t join_filter_offset, join_filter_mask_offset;
    /* AGG */
    uint32_t nkeys;
    const sql_bexpr *const *keys;
    uint32_t naggs;
    const cg_agg_slot *aggs;
    cg_agg_find_fn find;
    cg_agg_distinct_fn distinct;
    /* AGG, optional (probe.enabled): the layout of the worker's table, so
     * the generated code can walk the group's run (linear probing) itself
     * and call find only when the table does not hold the group. At
     * sink_state: the table (uint8_t *, NULL before the first find) at
     * table_offset, uint64_t words at mask_offset (slots - 1),
     * part_shift_offset and low_mask_offset (the home slot of a hash is
     * ((hash >> (64 - parts_log)) << part_shift) | (hash & low_mask)),
     * and the groups in the table at count_offset: while they are fewer
     * than the uint64_t at limit_offset, the code puts a new group in the
     * empty slot it met itself. Entries of entry_bytes lie in the slots: the hash at 0, 1 in
     * the byte at used_offset when the slot is taken (0 when free), the
     * key row at key_offset and the states (zero for a new group) at
     * states_offset, to the entry's end. */
    struct {
        bool enabled;
        uint32_t table_offset, mask_offset, part_shift_offset, low_mask_offset;
        uint32_t count_offset, limit_offset;
        uint32_t parts_log, entry_bytes, used_offset, key_offset, states_offset;
    } probe;
    /* AGG with one integer key that may not be NULL, optional
     * (runs.enabled): rows whose key equals the previous row's update the
     * same states without a look in the table. At sink_state: the open
     * run's states (uint8_t *, NULL when none) at states_offset, its key
     * (int64_t) at key_offset, and a byte at on_offset: while it is not 0,
     * a row with another key calls next, which opens its run (or answers
     * NULL: the table's path). The code calls end before it returns. */
    struct {
        bool enabled;
        uint32_t states_offset, key_offset, on_offset;
        cg_agg_run_next_fn next;
        cg_agg_run_end_fn end;
    } runs;
} cg_sink;

typedef struct cg_pipeline_desc {
    const char *name; /* of the module; NULL: "p<id>" */
    unsigned id;      /* the pipeline's number in its query, as EXPLAIN shows it */
    const sql_plan_ctx *ctx;
    cg_source source;
    uint32_t nsteps;
    const cg_step *steps; /* in tuple order: steps[0] sees the source's tuples */
    cg_sink sink;
    uint32_t strings_offset; /* of the worker's cg_rt_strings in its state */
    /* EXPLAIN ANALYZE: when count_rows, the code adds 1 to the uint64_t at
     * worker_state + counters_offset + 8 * i for every tuple that leaves
     * step i, and at index nsteps for every tuple the sink consumes. */
    bool count_rows;
    uint32_t counters_offset;
    const sto_value *params; /* $1.. values, or NULL */
    bool cache;              /* take code compiled before from the same IR (jit.h) */
} cg_pipeline_desc;

typedef int32_t (*cg_pipeline_fn)(cg_error *err, void *query_state, void *worker_state,
                                  uint64_t begin, uint64_t end);

typedef struct cg_pipeline_code {
    cg_code *code;
    cg_pipeline_fn fn;
    int64_t build_us;   /* building the IR */
    int64_t compile_us; /* building + cg_jit_compile */
    cg_mode mode;
    bool cache_hit; /* the code came from the JIT's cache */
} cg_pipeline_code;

/* Builds and compiles the pipeline in `mode`. */
sto_status cg_pipeline_compile(cg_jit *jit, const cg_pipeline_desc *d, cg_mode mode,
                               cg_pipeline_code *out);

/* Frees the machine code (NULL-safe on an unset out). */
void cg_pipeline_code_free(cg_pipeline_code *pc);

#endif
