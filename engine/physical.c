/*
 * physical.c — from logical operators to pipelines.
 *
 * open_pipe() walks the plan bottom-up and returns the pipeline that is
 * still open at an operator: its source and steps are set, its sink is not.
 * A breaker closes the pipeline below it by setting its sink and opens a new
 * one that reads the rows the sink will make. See physical.h.
 */
#include "engine/physical.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/optimize.h"
#include "engine/physical_int.h"
#include "engine/rt_hashtable.h"

typedef eng_phys_builder builder; /* physical_int.h */

static void *alloc(builder *b, size_t n, size_t size)
{
    return sql_arena_alloc(b->ctx->arena, (n ? n : 1) * size);
}

static sto_status new_pipe(builder *b, unsigned *id)
{
    if (b->n == b->cap) {
        unsigned cap = b->cap ? b->cap * 2 : 8;
        eng_pipe *p = realloc(b->pipes, cap * sizeof(*p));
        if (!p) return sto_error_oom();
        b->pipes = p;
        b->cap = cap;
    }
    memset(&b->pipes[b->n], 0, sizeof(b->pipes[b->n]));
    b->pipes[b->n].id = b->n;
    b->pipes[b->n].limit = -1;
    *id = b->n++;
    return STO_OK;
}

static sto_status add_step(builder *b, unsigned id, const sql_lop *op, cg_step step)
{
    eng_pipe *p = &b->pipes[id];
    cg_step *steps = alloc(b, p->nsteps + 1, sizeof(*steps));
    const sql_lop **ops = alloc(b, p->nsteps + 1, sizeof(*ops));
    if (!steps || !ops) return sto_error_oom();
    if (p->nsteps) {
        memcpy(steps, p->steps, p->nsteps * sizeof(*steps));
        memcpy(ops, p->step_ops, p->nsteps * sizeof(*ops));
    }
    steps[p->nsteps] = step;
    ops[p->nsteps] = op;
    p->steps = steps;
    p->step_ops = ops;
    p->nsteps++;
    return STO_OK;
}

/* Column references to ids[0..n), for sinks. */
static sto_status column_exprs(builder *b, const sql_colid *ids, uint32_t n, uint32_t extra,
                               const sql_bexpr ***out)
{
    const sql_bexpr **e = alloc(b, n + extra, sizeof(*e));
    if (!e) return sto_error_oom();
    for (uint32_t i = 0; i < n; i++)
        if (!(e[i] = sql_bexpr_column(b->ctx, ids[i], 0))) return sto_error_oom();
    *out = e;
    return STO_OK;
}

/* Opens the pipeline that reads the rows pipeline `input` makes. */
static sto_status open_reader(builder *b, unsigned input, bool ordered, unsigned *id)
{
    STO_TRY(new_pipe(b, id));
    eng_pipe *in = &b->pipes[input], *p = &b->pipes[*id];
    p->source = ENG_SOURCE_PIPE;
    p->input = input;
    p->ordered = ordered;
    uint32_t slots = in->sink == ENG_SINK_AGG ? in->agg.nkeys + in->agg.naggs : in->nexprs;
    p->nin = slots;
    p->in_ids = alloc(b, slots, sizeof(*p->in_ids));
    if (!p->in_ids) return sto_error_oom();
    memcpy(p->in_ids, in->out_ids, in->nout * sizeof(*p->in_ids)); /* extra slots: id 0 */
    p->est_rows = in->sink_op && in->sink_op->est_rows > 0 ? in->sink_op->est_rows : in->est_rows;
    return STO_OK;
}

static sto_status open_pipe(builder *b, const sql_lop *op, unsigned *id);

static sto_status close_agg(builder *b, unsigned id, const sql_lop *op)
{
    eng_pipe *p = &b->pipes[id];
    p->sink = ENG_SINK_AGG;
    p->sink_op = op;
    p->nout = op->nout;
    p->out_ids = op->out;
    eng_agg_layout *l = &p->agg;
    if (op->kind == SQL_LOP_DISTINCT) {
        l->nkeys = op->nout;
        STO_TRY(column_exprs(b, op->out, op->nout, 0, &p->agg_keys));
    } else {
        l->nkeys = op->aggregate.ngroups;
        l->naggs = op->aggregate.naggs;
        p->agg_keys = alloc(b, l->nkeys, sizeof(*p->agg_keys));
        if (!p->agg_keys) return sto_error_oom();
        for (uint32_t i = 0; i < l->nkeys; i++)
            p->agg_keys[i] = op->aggregate.groups[i].expr;
    }
    l->key_types = alloc(b, l->nkeys, sizeof(*l->key_types));
    l->aggs = alloc(b, l->naggs, sizeof(*l->aggs));
    p->agg_slots = alloc(b, l->naggs, sizeof(*p->agg_slots));
    if (!l->key_types || !l->aggs || !p->agg_slots) return sto_error_oom();
    for (uint32_t i = 0; i < l->nkeys; i++)
        l->key_types[i] = p->agg_keys[i]->type;
    for (uint32_t j = 0; j < l->naggs; j++) {
        const sql_agg_item *a = &op->aggregate.aggs[j];
        l->aggs[j].func = a->func;
        l->aggs[j].distinct = a->distinct;
        l->aggs[j].arg = a->arg ? a->arg->type : sto_type_make(STO_TYPE_BIGINT);
        l->aggs[j].result = sql_plan_col(b->ctx, a->id)->type;
    }
    eng_agg_layout_finish(l);
    l->runs = l->nkeys == 1 && eng_agg_runs_fit(l, p->agg_keys[0]->nullable, op->est_rows,
                                                op->left ? op->left->est_rows : 0);
    for (uint32_t j = 0; j < l->naggs; j++) {
        const sql_agg_item *a = &op->aggregate.aggs[j];
        p->agg_slots[j] = (cg_agg_slot){a->func, a->distinct, a->arg, l->aggs[j].offset};
    }
    return STO_OK;
}

/* SORT (with the LIMIT above it, if any) closes its input's pipeline. */
static sto_status close_sort(builder *b, unsigned id, const sql_lop *sort, const sql_lop *limit)
{
    uint32_t n = sort->nout, nk = sort->sort.count, extra = 0;
    const sql_bexpr **exprs;
    STO_TRY(column_exprs(b, sort->out, n, nk, &exprs));
    eng_sort_key *keys = alloc(b, nk, sizeof(*keys));
    if (!keys) return sto_error_oom();
    for (uint32_t k = 0; k < nk; k++) {
        const sql_sort_key *sk = &sort->sort.keys[k];
        int slot = -1;
        if (sk->expr->kind == SQL_BEXPR_COLUMN)
            for (uint32_t i = 0; i < n && slot < 0; i++)
                if (sort->out[i] == sk->expr->column) slot = (int)i;
        if (slot < 0) {
            slot = (int)(n + extra);
            exprs[n + extra++] = sk->expr;
        }
        keys[k] = (eng_sort_key){(uint32_t)slot, sk->expr->type, sk->desc, sk->nulls_first};
    }
    eng_pipe *p = &b->pipes[id];
    p->sink = ENG_SINK_SORT;
    p->sink_op = limit ? limit : sort;
    p->nout = n;
    p->out_ids = sort->out;
    p->nexprs = n + extra;
    p->exprs = exprs;
    p->sort_keys = keys;
    p->nsort_keys = nk;
    if (limit) {
        p->limit = limit->limit.limit;
        p->offset = limit->limit.offset;
    }
    return STO_OK;
}

/* Whether every column e refers to is one of ids[0..n). */
typedef struct cols_in {
    const sql_colid *ids;
    uint32_t n;
    bool all, any;
} cols_in;

static sql_walk check_col(sql_bexpr **slot, void *arg)
{
    cols_in *c = arg;
    if ((*slot)->kind != SQL_BEXPR_COLUMN) return SQL_WALK_CONTINUE;
    bool found = false;
    for (uint32_t i = 0; i < c->n && !found; i++)
        found = c->ids[i] == (*slot)->column;
    c->any = true;
    if (!found) c->all = false;
    return SQL_WALK_CONTINUE;
}

static bool only_cols(const sql_bexpr *e, const sql_lop *side)
{
    cols_in c = {side->out, side->nout, true, false};
    sql_bexpr_walk((sql_bexpr **)&e, check_col, &c);
    return c.all && c.any;
}

typedef struct join_split {
    uint32_t nkeys;
    const sql_bexpr **probe_keys, **build_keys;
    sql_bexpr *residual;
} join_split;

/* Splits a join condition's conjuncts into equi keys (probe side = build
 * side, same type) and the residual rest. */
static sto_status split_cond(builder *b, sql_bexpr *e, const sql_lop *probe, const sql_lop *build,
                             join_split *js)
{
    if (!e) return STO_OK;
    if (e->kind == SQL_BEXPR_OP && e->op.op == SQL_OP_AND) {
        STO_TRY(split_cond(b, e->op.args[0], probe, build, js));
        return split_cond(b, e->op.args[1], probe, build, js);
    }
    if (e->kind == SQL_BEXPR_OP && e->op.op == SQL_OP_EQ && e->op.args[1]) {
        sql_bexpr *l = e->op.args[0], *r = e->op.args[1];
        if (only_cols(r, probe) && only_cols(l, build)) {
            sql_bexpr *t = l;
            l = r;
            r = t;
        }
        if (only_cols(l, probe) && only_cols(r, build) && l->type.id == r->type.id &&
            l->type.scale == r->type.scale) {
            js->probe_keys[js->nkeys] = l;
            js->build_keys[js->nkeys++] = r;
            return STO_OK;
        }
    }
    if (!js->residual) {
        js->residual = e;
        return STO_OK;
    }
    js->residual =
        sql_bexpr_op(b->ctx, SQL_OP_AND, sto_type_make(STO_TYPE_BOOLEAN), js->residual, e, 0);
    return js->residual ? STO_OK : sto_error_oom();
}

static unsigned count_conjuncts(const sql_bexpr *e)
{
    if (!e) return 0;
    if (e->kind == SQL_BEXPR_OP && e->op.op == SQL_OP_AND)
        return count_conjuncts(e->op.args[0]) + count_conjuncts(e->op.args[1]);
    return 1;
}

/* A radix join's probe side: pipeline *id ends in a PARTITION sink over
 * the probe side's columns and keys; the pipeline that reads its partitions
 * (and will get the probe step) is the new *id. */
static sto_status open_partitioned(builder *b, unsigned bp, const sql_lop *op, const sql_lop *probe,
                                   const join_split *js, unsigned *id)
{
    unsigned in = *id;
    eng_pipe *p = &b->pipes[in];
    p->sink = ENG_SINK_PARTITION;
    p->sink_op = op;
    p->nout = probe->nout;
    p->out_ids = probe->out;
    p->nexprs = probe->nout + js->nkeys;
    STO_TRY(column_exprs(b, probe->out, probe->nout, js->nkeys, &p->exprs));
    for (uint32_t k = 0; k < js->nkeys; k++)
        p->exprs[probe->nout + k] = js->probe_keys[k];
    p->join_nkeys = js->nkeys;
    p->join_from = bp + 1;
    STO_TRY(open_reader(b, in, false, id));
    p = &b->pipes[*id];
    p->source = ENG_SOURCE_PARTS;
    p->parts_from = bp + 1;
    p->est_rows = probe->est_rows > 0 ? probe->est_rows : b->pipes[in].est_rows;
    return STO_OK;
}

/* A probe's batch pre-test (probe_pretests in codegen/pipeline.c) makes
 * its pipeline's IR a fifth to three quarters larger, which only many rows
 * repay: q20's 10K supplier rows waited 8 ms for code that saved nothing,
 * q22's 1.5M orders saved 1.3 ms of run time for 4 ms more compile, q08's
 * 6M lineitems gained a quarter. Below this many estimated probe rows it
 * is not asked for (2M against 1M: q03, q05, q07, q08 and q22 faster at
 * SF 1, three interleaved runs); RACKDB_PRETEST_MIN_ROWS in the
 * environment overrides it (tests, measurements). */
#define PRETEST_MIN_ROWS 2000000.0

static double pretest_min_rows(void)
{
    const char *e = getenv("RACKDB_PRETEST_MIN_ROWS");
    return e && *e ? strtod(e, NULL) : PRETEST_MIN_ROWS;
}

/* Whether a probe into the shared table tests the semi-join filter before
 * the directory (engine/rt_hashtable.h): when most probe rows are expected
 * to find no partner and the build side is big enough that its directory
 * (8 bytes a slot) crowds the L2 cache while the filter (1 byte an entry)
 * does not (ENG_JOIN_FILTER_MIN_ENTRIES). INNER, SEMI and ANTI joins say from their estimates how
 * many probe rows match; FLAG probes (SEMI/ANTI built on the left) use it
 * whenever the probe side is the bigger one; the other kinds never do. */
#define FILTER_MIN_BUILD_ROWS ((double)ENG_JOIN_FILTER_MIN_ENTRIES)
#define FILTER_MAX_MATCH      0.5

/* Whether most probe rows of an INNER, SEMI or ANTI join are expected to
 * find no partner (so a test before the directory drops most of them). */
static bool mostly_missed(cg_join_kind kind, const sql_lop *op, const sql_lop *probe)
{
    if (probe->est_rows < 1 || op->est_rows < 1) return false;
    double match = op->est_rows / probe->est_rows; /* probe rows with a partner */
    if (kind == CG_JOIN_ANTI) match = 1 - match;
    return match < FILTER_MAX_MATCH;
}

static bool join_filter_pays(cg_join_kind kind, const sql_lop *op, const sql_lop *probe,
                             const sql_lop *build, bool radix)
{
    /* A FLAG probe (SEMI/ANTI built on its smaller left input) does nothing
     * for a row without a partner, and its many probe rows mostly have none
     * (q21: 3.8M lineitems against the 157K of one nation's suppliers). */
    if (kind == CG_JOIN_FLAG) return probe->est_rows > build->est_rows;
    if (kind != CG_JOIN_INNER && kind != CG_JOIN_SEMI && kind != CG_JOIN_ANTI) return false;
    /* Radix and sort-merge test it in the probe side's PARTITION sink and
     * drop the rows that fail (never materialized, never partitioned): only
     * kinds that emit nothing for a probe row without a partner, at any
     * build size. */
    if (radix && kind == CG_JOIN_ANTI) return false;
    if (!radix && build->est_rows < FILTER_MIN_BUILD_ROWS) return false;
    return mostly_missed(kind, op, probe);
}

/* The key columns an exact bitmap may cover (engine/rt_join_keybits.h):
 * integers of one type (and scale) on both sides, as a mask. */
static uint32_t keybits_columns(const join_split *js)
{
    uint32_t mask = 0;
    for (uint32_t k = 0; k < js->nkeys && k < 32; k++) {
        sto_type a = js->probe_keys[k]->type, b = js->build_keys[k]->type;
        if (a.id != b.id || a.scale != b.scale) continue;
        if (a.id == STO_TYPE_INTEGER || a.id == STO_TYPE_BIGINT || a.id == STO_TYPE_DATE ||
            a.id == STO_TYPE_DECIMAL)
            mask |= (uint32_t)1 << k;
    }
    return mask;
}

/* Whether a probe into the shared table tests the exact bitmap of one key
 * column first (the run time makes one only when that column's build
 * values turn out dense): a SEMI/ANTI/FLAG join on one key without a
 * residual, which the bit decides (no directory, no entry), or a kind
 * that keeps nothing of a probe row without a partner where most rows are
 * expected to miss (q09's lineitems against the partsupp rows of green
 * parts: the bitmap of their partkeys). */
/* A SEMI/ANTI/FLAG join on one key without a residual: a set bit is the
 * whole answer. */
static bool keybits_decide(cg_join_kind kind, const join_split *js)
{
    return !js->residual && js->nkeys == 1 &&
           (kind == CG_JOIN_SEMI || kind == CG_JOIN_ANTI || kind == CG_JOIN_FLAG);
}

/* An INNER join on one key without a residual whose build side yields
 * nothing but its key column: when the run time finds the build keys
 * unique, a set bit is the one match and the build row, equal to the probe
 * key, need not be read (q03's orders probing the BUILDING customers: the
 * directory and an entry missed the caches for each of 147K matches). */
static bool keybits_unique(cg_join_kind kind, const join_split *js, const sql_lop *build)
{
    if (kind != CG_JOIN_INNER || js->residual || js->nkeys != 1 || keybits_columns(js) != 1)
        return false;
    const sql_bexpr *key = js->build_keys[0];
    if (key->kind != SQL_BEXPR_COLUMN) return false;
    for (uint32_t i = 0; i < build->nout; i++)
        if (build->out[i] != key->column) return false;
    return true;
}

static bool join_keybits_pays(cg_join_kind kind, const join_split *js, const sql_lop *op,
                              const sql_lop *probe, const sql_lop *build)
{
    if (!keybits_columns(js)) return false;
    if (keybits_decide(kind, js) || kind == CG_JOIN_FLAG || keybits_unique(kind, js, build))
        return true;
    if (kind != CG_JOIN_INNER && kind != CG_JOIN_SEMI && kind != CG_JOIN_ANTI) return false;
    return mostly_missed(kind, op, probe);
}

/* A join: the build side's pipeline ends in a JOIN sink (and runs first);
 * the probe side's pipeline gets a probe step. */
static sto_status open_join(builder *b, const sql_lop *op, unsigned *id)
{
    cg_join_kind kind;
    switch (op->join.kind) {
    case SQL_JOINK_INNER:
    case SQL_JOINK_CROSS:
        kind = CG_JOIN_INNER;
        break;
    case SQL_JOINK_LEFT:
    case SQL_JOINK_FULL:
        kind = CG_JOIN_LEFT;
        break;
    case SQL_JOINK_RIGHT:
        kind = CG_JOIN_INNER;
        break;
    case SQL_JOINK_SEMI:
        kind = CG_JOIN_SEMI;
        break;
    case SQL_JOINK_ANTI:
        kind = CG_JOIN_ANTI;
        break;
    case SQL_JOINK_MARK:
        kind = CG_JOIN_MARK;
        break;
    case SQL_JOINK_SINGLE:
        kind = CG_JOIN_SINGLE;
        break;
    default:
        return sto_error(STO_FEATURE_NOT_SUPPORTED, "%s joins are not executable yet",
                         sql_join_kind_name(op->join.kind));
    }
    /* Inner joins may build on the left; so may SEMI and ANTI joins when
     * the left input is the smaller one: then the probe only flags the
     * build rows it matches, and the flagged (SEMI) or unflagged (ANTI)
     * ones are the join's rows, emitted after the probe like a RIGHT
     * join's unmatched rows. The other kinds keep or test every left row,
     * which the probe side does. */
    bool left_semi =
        (op->join.kind == SQL_JOINK_SEMI || op->join.kind == SQL_JOINK_ANTI) && op->phys.build_left;
    bool outer_build =
        op->join.kind == SQL_JOINK_RIGHT || op->join.kind == SQL_JOINK_FULL || left_semi;
    bool swap = (kind == CG_JOIN_INNER && !outer_build && op->phys.build_left) || left_semi;
    if (left_semi) kind = CG_JOIN_FLAG;
    const sql_lop *probe = swap ? op->right : op->left, *build = swap ? op->left : op->right;
    unsigned nc = count_conjuncts(op->join.cond);
    join_split js = {0, alloc(b, nc, sizeof(sql_bexpr *)), alloc(b, nc, sizeof(sql_bexpr *)), NULL};
    cg_probe *pr = alloc(b, 1, sizeof(*pr));
    if (!js.probe_keys || !js.build_keys || !pr) return sto_error_oom();
    STO_TRY(split_cond(b, op->join.cond, probe, build, &js));

    unsigned bp;
    STO_TRY(open_pipe(b, build, &bp));
    eng_pipe *p = &b->pipes[bp];
    p->sink = ENG_SINK_JOIN;
    p->sink_op = op;
    p->nout = build->nout;
    p->out_ids = build->out;
    p->nexprs = build->nout + js.nkeys;
    STO_TRY(column_exprs(b, build->out, build->nout, js.nkeys, &p->exprs));
    for (uint32_t k = 0; k < js.nkeys; k++)
        p->exprs[build->nout + k] = js.build_keys[k];
    p->join_nkeys = js.nkeys;
    /* Radix or sort-merge when the optimizer chose it and there is a key
     * to partition on (both partition the probe side in a pipeline of its
     * own); everything else runs on the shared table. */
    bool radix = js.nkeys > 0 && (op->phys.algorithm == ENG_JOIN_ALGO_RADIX ||
                                  op->phys.algorithm == ENG_JOIN_ALGO_SORTMERGE);
    p->join_algorithm = radix ? op->phys.algorithm : ENG_JOIN_ALGO_HASH;
    p->probe = pr;
    memset(pr, 0, sizeof(*pr));
    pr->kind = kind;
    pr->nkeys = js.nkeys;
    pr->keys = js.probe_keys;
    pr->nids = build->nout;
    pr->ncols = build->nout + js.nkeys;
    pr->ids = build->out;
    pr->residual = js.residual;
    pr->mark = op->join.mark;
    pr->dir_offset = offsetof(eng_join_ht, dir);
    pr->mask_offset = offsetof(eng_join_ht, mask);
    pr->entry_head = ENG_JOIN_ENTRY_HEAD;
    pr->single_error = eng_join_single_error;

    pr->flag_matches = outer_build;
    pr->flag_offset = offsetof(eng_join_entry, matched);
    pr->filter = js.nkeys > 0 && (radix || !outer_build || left_semi) &&
                 join_filter_pays(kind, op, probe, build, radix);
    pr->filter_offset = offsetof(eng_join_ht, filter);
    pr->filter_mask_offset = offsetof(eng_join_ht, filter_mask);
    /* not for RIGHT/FULL joins (INNER probes that flag entries) */
    pr->keybits =
        !radix && (!outer_build || left_semi) && join_keybits_pays(kind, &js, op, probe, build);
    pr->keybits_decide = pr->keybits && keybits_decide(kind, &js);
    pr->keybits_unique = pr->keybits && !outer_build && keybits_unique(kind, &js, build);
    pr->kb_unique_offset = offsetof(eng_join_ht, keys.unique);
    pr->kb_cols = keybits_columns(&js);
    pr->kb_col_offset = offsetof(eng_join_ht, keys.col);
    pr->kb_bits_offset = offsetof(eng_join_ht, keys.bits);
    pr->kb_hits_offset = offsetof(eng_join_ht, keys.hits);
    pr->kb_base_offset = offsetof(eng_join_ht, keys.base);
    pr->kb_span_offset = offsetof(eng_join_ht, keys.span);

    STO_TRY(open_pipe(b, probe, id));
    if (radix) STO_TRY(open_partitioned(b, bp, op, probe, &js, id));
    cg_step step = {CG_STEP_PROBE, NULL, 0, NULL, pr};
    if (probe->est_rows >= pretest_min_rows() && probe->est_rows > 0 && op->est_rows >= 0)
        step.pass_share = op->est_rows / probe->est_rows;
    STO_TRY(add_step(b, *id, op, step));
    if (!outer_build) return STO_OK;
    /* The build rows no probe matched come after the probe's rows: the join
     * is a breaker. */
    unsigned in = *id;
    p = &b->pipes[in];
    p->sink = ENG_SINK_ROWS;
    p->sink_op = op;
    p->nout = p->nexprs = op->nout;
    p->out_ids = op->out;
    p->unmatched_from = bp + 1;
    p->emit_matched = left_semi && op->join.kind == SQL_JOINK_SEMI;
    STO_TRY(column_exprs(b, op->out, op->nout, 0, &p->exprs));
    return open_reader(b, in, false, id);
}

static sto_status open_pipe(builder *b, const sql_lop *op, unsigned *id)
{
    switch (op->kind) {
    case SQL_LOP_GET: {
        const sto_table *t = op->get.table;
        if (!t) {
            /* A server of a cluster that has no such table (sql/plan_wire.h)
             * holds none of its rows: it scans nothing. */
            sql_lop *none = sql_lop_new(b->ctx, SQL_LOP_VALUES, NULL, NULL, 0);
            if (!none) return sto_error_oom();
            none->nout = op->nout;
            none->out = op->out;
            return open_pipe(b, none, id);
        }
        STO_TRY(new_pipe(b, id));
        eng_pipe *p = &b->pipes[*id];
        p->source = ENG_SOURCE_TABLE;
        p->source_op = op;
        p->nin = op->nout;
        p->in_ids = op->out;
        p->col_index = op->get.columns;
        p->not_null = alloc(b, op->nout, sizeof(*p->not_null));
        if (!p->not_null) return sto_error_oom();
        for (uint32_t i = 0; i < op->nout; i++)
            p->not_null[i] = t->schema->cols[op->get.columns[i]].not_null;
        p->est_rows = (double)sto_table_rows(t);
        return STO_OK;
    }
    case SQL_LOP_VALUES: {
        STO_TRY(new_pipe(b, id));
        eng_pipe *p = &b->pipes[*id];
        p->source = ENG_SOURCE_VALUES;
        p->source_op = op;
        p->nin = op->nout;
        p->in_ids = op->out;
        p->est_rows = op->values.nrows;
        return STO_OK;
    }
    case SQL_LOP_FILTER: {
        STO_TRY(open_pipe(b, op->left, id));
        cg_step step = {CG_STEP_FILTER, op->filter.pred, 0, NULL, NULL, 0};
        if (op->left->est_rows > 0 && op->est_rows >= 0)
            step.pass_share = op->est_rows / op->left->est_rows;
        return add_step(b, *id, op, step);
    }
    case SQL_LOP_PROJECT:
        STO_TRY(open_pipe(b, op->left, id));
        return add_step(b, *id, op,
                        (cg_step){CG_STEP_PROJECT, NULL, op->project.count, op->project.items});
    case SQL_LOP_AGGREGATE:
    case SQL_LOP_DISTINCT: {
        bool shared;
        STO_TRY(eng_phys_share_agg(b, op, id, &shared));
        if (shared) return STO_OK;
        unsigned in;
        STO_TRY(open_pipe(b, op->left, &in));
        STO_TRY(close_agg(b, in, op));
        STO_TRY(eng_phys_remember_agg(b, op, in));
        return open_reader(b, in, false, id);
    }
    case SQL_LOP_SORT: {
        unsigned in;
        STO_TRY(open_pipe(b, op->left, &in));
        STO_TRY(close_sort(b, in, op, NULL));
        return open_reader(b, in, true, id);
    }
    case SQL_LOP_LIMIT: {
        unsigned in;
        if (op->left->kind == SQL_LOP_SORT) {
            STO_TRY(open_pipe(b, op->left->left, &in));
            STO_TRY(close_sort(b, in, op->left, op));
            return open_reader(b, in, true, id);
        }
        STO_TRY(open_pipe(b, op->left, &in));
        eng_pipe *p = &b->pipes[in];
        bool ordered = p->source == ENG_SOURCE_PIPE && p->ordered;
        p->sink = ENG_SINK_ROWS;
        p->sink_op = op;
        p->nout = p->nexprs = op->nout;
        p->out_ids = op->out;
        p->limit = op->limit.limit;
        p->offset = op->limit.offset;
        STO_TRY(column_exprs(b, op->out, op->nout, 0, &p->exprs));
        return open_reader(b, in, ordered, id);
    }
    case SQL_LOP_JOIN: {
        bool shared;
        STO_TRY(eng_phys_share_rows(b, op, id, &shared));
        return shared ? STO_OK : open_join(b, op, id);
    }
    case SQL_LOP_EXCHANGE: {
        /* the rows below are materialized and sent; the pipeline above
         * reads the received rows: the op's columns only */
        unsigned in;
        STO_TRY(open_pipe(b, op->left, &in));
        eng_pipe *p = &b->pipes[in];
        uint32_t nk = op->exchange.nkeys;
        p->sink = ENG_SINK_EXCHANGE;
        p->sink_op = op;
        p->nout = op->nout;
        p->out_ids = op->out;
        p->nexprs = op->nout + nk;
        STO_TRY(column_exprs(b, op->out, op->nout, nk, &p->exprs));
        for (uint32_t k = 0; k < nk; k++)
            p->exprs[op->nout + k] = op->exchange.keys[k];
        STO_TRY(open_reader(b, in, false, id));
        b->pipes[*id].nin = op->nout;
        b->pipes[*id].est_rows = op->est_rows;
        return STO_OK;
    }
    case SQL_LOP_SETOP:
        return eng_phys_setop(b, op, id);
    default:
        return sto_error(STO_INTERNAL_ERROR, "unknown plan operator %d", (int)op->kind);
    }
}

/* physical_int.h: the steps above, for operators planned in other files. */
void *eng_phys_alloc(builder *b, size_t n, size_t size)
{
    return alloc(b, n, size);
}

sto_status eng_phys_open_pipe(builder *b, const sql_lop *op, unsigned *id)
{
    return open_pipe(b, op, id);
}

sto_status eng_phys_open_join(builder *b, const sql_lop *op, unsigned *id)
{
    return open_join(b, op, id);
}

sto_status eng_phys_open_reader(builder *b, unsigned input, unsigned *id)
{
    return open_reader(b, input, false, id);
}

sto_status eng_phys_close_agg(builder *b, unsigned id, const sql_lop *op)
{
    return close_agg(b, id, op);
}

sto_status eng_phys_column_exprs(builder *b, const sql_colid *ids, uint32_t n, uint32_t extra,
                                 const sql_bexpr ***out)
{
    return column_exprs(b, ids, n, extra, out);
}

/* Subqueries left in expressions need the optimizer's unnesting. */
static sql_walk find_subquery(sql_bexpr **slot, void *arg)
{
    if ((*slot)->kind != SQL_BEXPR_SUBQUERY) return SQL_WALK_CONTINUE;
    *(bool *)arg = true;
    return SQL_WALK_STOP;
}

static bool has_subquery(const eng_pipe *p)
{
    bool found = false;
    for (uint32_t i = 0; i < p->nsteps && !found; i++) {
        const cg_step *s = &p->steps[i];
        if (s->kind == CG_STEP_FILTER)
            sql_bexpr_walk((sql_bexpr **)&s->pred, find_subquery, &found);
        for (uint32_t k = 0; k < s->count && !found; k++)
            sql_bexpr_walk(&((sql_proj_item *)s->items)[k].expr, find_subquery, &found);
    }
    return found;
}

sto_status eng_physical_build(const sql_plan *plan, eng_physical **out)
{
    *out = NULL;
    builder b = {plan, plan->ctx, NULL, 0, 0, NULL, NULL, 0, 0, NULL, 0, 0, NULL, 0};
    unsigned last = 0;
    sto_status st = open_pipe(&b, plan->root, &last);
    eng_physical *ph = NULL;
    if (!st) {
        eng_pipe *p = &b.pipes[last];
        p->sink = ENG_SINK_ROWS;
        p->nout = p->nexprs = plan->ncols;
        p->out_ids = plan->cols;
        st = column_exprs(&b, plan->cols, plan->ncols, 0, &p->exprs);
    }
    for (unsigned i = 0; !st && i < b.n; i++)
        if (has_subquery(&b.pipes[i]))
            st = sto_error(STO_FEATURE_NOT_SUPPORTED, "subqueries are not executable yet");
    if (!st) {
        ph = alloc(&b, 1, sizeof(*ph));
        eng_pipe *pipes = alloc(&b, b.n, sizeof(*pipes));
        uint32_t *slots = alloc(&b, plan->ncols, sizeof(*slots));
        if (!ph || !pipes || !slots) {
            st = sto_error_oom();
        } else {
            memcpy(pipes, b.pipes, b.n * sizeof(*pipes));
            for (uint32_t i = 0; i < plan->ncols; i++)
                slots[i] = i;
            ph->plan = plan;
            ph->npipes = b.n;
            ph->pipes = pipes;
            ph->result_slots = slots;
            st = eng_phys_narrow_builds(&b, ph);
            if (!st) st = eng_phys_agg_having(&b, ph);
        }
    }
    free(b.pipes);
    if (!st) *out = ph;
    return st;
}

void eng_pipe_describe(const eng_physical *ph, const eng_pipe *p, char *buf, size_t size)
{
    (void)ph;
    const char *src = p->source == ENG_SOURCE_TABLE    ? "scan "
                      : p->source == ENG_SOURCE_VALUES ? "values"
                      : p->source == ENG_SOURCE_PARTS  ? "partitions of pipeline "
                                                       : "rows of pipeline ";
    char from[160];
    if (p->source == ENG_SOURCE_TABLE)
        snprintf(from, sizeof(from), "%s%s", src, p->source_op->get.table_name);
    else if (p->source == ENG_SOURCE_PIPE || p->source == ENG_SOURCE_PARTS)
        snprintf(from, sizeof(from), "%s%u", src, p->input + 1);
    else
        snprintf(from, sizeof(from), "%s", src);
    bool setop_input = p->sink_op && p->sink_op->kind == SQL_LOP_SETOP;
    const char *to =
        p->sink == ENG_SINK_AGG
            ? (p->sink_op && p->sink_op->kind == SQL_LOP_DISTINCT ? "distinct" : "aggregate")
        : p->sink == ENG_SINK_SORT      ? (p->limit >= 0 ? "top-k sort" : "sort")
        : p->sink == ENG_SINK_JOIN      ? "join build"
        : p->sink == ENG_SINK_PARTITION ? "join partition"
        : p->sink == ENG_SINK_EXCHANGE
            ? (p->sink_op->exchange.kind == SQL_EXCH_SHUFFLE     ? "shuffle"
               : p->sink_op->exchange.kind == SQL_EXCH_BROADCAST ? "broadcast"
                                                                 : "gather")
        : p->unmatched_from                              ? "rows, unmatched build rows"
        : setop_input                                    ? "set operation input"
        : p->sink_op && p->sink_op->kind == SQL_LOP_JOIN ? "rows"
        : p->sink_op                                     ? "limit"
                                                         : "result";
    snprintf(buf, size, "%s -> %s", from, to);
}
