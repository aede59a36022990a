/*
 * jit_cost.c — estimating what OPT buys a pipeline and what it costs
 * (jit_cost.h).
 *
 * Both sides are sums over the pipeline's parts. Each part has a size in IR
 * instructions (what the code generator's time grows with) and a saving in
 * nanoseconds of CPU per row that reaches it; a part behind a filter, a
 * join or a probe's key bitmap tested ahead sees the share of the rows the
 * planner expects to get there. The savings are what FAST code loses
 * against OPT code on such a part, from one-expression loops
 * (docs/codegen.md, "Measured"), checked on whole runs of the 22 TPC-H
 * queries; the sizes were checked against the modules'
 * instruction counts (RACKDB_JIT_STATS): correlation 0.96 over the
 * pipelines of 100 K rows or more at SF 1.
 */
#include "engine/jit_cost.h"

#include "engine/rt_join.h"
#include "sql/func.h"

/* Saving and size of one part. */
typedef struct part {
    double ns, ir;
} part;

/* A pipeline's frame: the row loop, morsel bounds, the error exit. */
static const part FRAME = {1.0, 40.0};
/* A column read from the source, per value (a NULL-able one tests its
 * validity bit too). */
static const part COLUMN = {0.15, 5.0};
static const part COLUMN_NULL = {0.3, 11.0};
/* A first filter over batches: the selection vector's second loop. */
static const part BATCHES = {0.0, 25.0};
/* A probe and each of its keys. A table larger than the caches makes the
 * row wait on memory in either mode: OPT saves only instructions. */
static const part PROBE_CACHED = {4.0, 50.0};
static const part PROBE_LARGE = {1.0, 50.0};
static const part PROBE_KEY = {0.5, 12.0};
static const part PROBE_COLUMN = {0.1, 5.0};
/* A probe tested first against its key bitmap in the batch loop
 * (cg_steps_pretest): every row pays only this branch-free test, and only
 * the rows whose bit is set go on to the probe proper, so the probe's
 * parts count for that share of the rows. The test waits on the column's
 * memory in either mode: FAST code of TPC-H Q8's and Q17's lineitem scans
 * took 1.5-3 ns more CPU per row than OPT code, frame, columns and the
 * probed rows included (Q9's 0-8 ns, noisy; docs/codegen.md, session 9). */
static const part PROBE_PRETEST = {0.5, 25.0};
/* A table up to this many bytes counts as cached (the L2 of the machine
 * the weights come from: 1 MiB per core). */
#define CACHED_TABLE_BYTES (1u << 20)
/* An aggregate sink: finding the group (hash, probe run, key equality),
 * per key, per aggregate update. */
static const part AGG = {1.5, 80.0};
static const part AGG_KEY = {1.0, 15.0};
static const part AGG_KEY_STRING = {3.0, 40.0};
static const part AGG_UPDATE = {1.2, 10.0};
/* A row sink (rows, a join's build, partitions) and each value it stores. */
static const part ROWS = {0.3, 12.0};
static const part ROWS_VALUE = {0.2, 4.0};
static const part ROWS_KEY = {0.5, 10.0};

static void add(part *sum, part p, double share)
{
    sum->ns += p.ns * share;
    sum->ir += p.ir;
}

/* One expression node, its arguments not included. */
static part node_part(const sql_bexpr *e)
{
    switch (e->kind) {
    case SQL_BEXPR_OP:
        switch (e->op.op) {
        case SQL_OP_AND:
        case SQL_OP_OR:
        case SQL_OP_NOT:
        case SQL_OP_PLUS:
            return (part){0.3, 2.0};
        case SQL_OP_CONCAT:
            return (part){5.0, 30.0};
        case SQL_OP_DIV:
        case SQL_OP_MOD:
            return (part){2.0, 15.0};
        case SQL_OP_ADD:
        case SQL_OP_SUB:
        case SQL_OP_MUL:
        case SQL_OP_NEG:
            /* checked: an overflow test, DECIMAL operands rescaled */
            return (part){1.2, 8.0};
        default: /* comparisons */
            return sto_type_is_string(e->op.args[0]->type.id) ? (part){3.0, 15.0}
                                                              : (part){0.6, 4.0};
        }
    case SQL_BEXPR_FUNC:
        if (sql_func_is_extract(e->func.id)) return (part){6.0, 25.0};
        switch (e->func.id) {
        case SQL_FUNC_LIKE:
        case SQL_FUNC_NOT_LIKE:
        case SQL_FUNC_ILIKE:
        case SQL_FUNC_NOT_ILIKE:
            return (part){4.0, 30.0};
        case SQL_FUNC_DATE_ADD_MONTHS:
            return (part){10.0, 40.0};
        default:
            return (part){3.0, 20.0};
        }
    case SQL_BEXPR_CASE:
        return (part){1.0, 6.0};
    case SQL_BEXPR_CAST:
        return (part){1.0, 10.0};
    case SQL_BEXPR_IN_LIST: {
        double per = sto_type_is_string(e->in_list.arg->type.id) ? 3.0 : 0.3;
        return (part){1.0 + per * e->in_list.list.count, 4.0 + 3.0 * e->in_list.list.count};
    }
    case SQL_BEXPR_IS_NULL:
        return (part){0.3, 2.0};
    default: /* constants, columns (counted where they are read), $n */
        return (part){0.0, 0.0};
    }
}

static sql_walk add_node(sql_bexpr **slot, void *arg)
{
    part *sum = arg;
    part p = node_part(*slot);
    sum->ns += p.ns;
    sum->ir += p.ir;
    return SQL_WALK_CONTINUE;
}

/* An expression tree's parts, for `share` of the rows. */
static void add_expr(part *sum, const sql_bexpr *e, double share)
{
    if (!e) return;
    part tree = {0, 0};
    sql_bexpr_walk((sql_bexpr **)&e, add_node, &tree);
    add(sum, tree, share);
}

/* The share of its input rows a step's operator passes on, from the
 * planner's estimates (1 when it has none). A join may pass on more rows
 * than come in; at most a few times as many are counted. */
static double step_ratio(const cg_step *s, const sql_lop *op)
{
    if (s->kind == CG_STEP_FILTER) return s->pass_share > 0 ? s->pass_share : 1.0;
    if (s->kind != CG_STEP_PROBE || !op || op->kind != SQL_LOP_JOIN) return 1.0;
    const sql_lop *probe = op->phys.build_left ? op->right : op->left;
    if (!probe || !(probe->est_rows > 0) || !(op->est_rows >= 0)) return 1.0;
    double r = op->est_rows / probe->est_rows;
    return r > 4.0 ? 4.0 : r;
}

/* Whether a probe's table fits the caches: a partitioned join's partitions
 * always do; a shared table when its estimated entries do. */
static bool probe_cached(const cg_step *s, const sql_lop *op)
{
    if (s->probe->table_in_state) return true;
    if (!op || op->kind != SQL_LOP_JOIN) return false;
    const sql_lop *build = op->phys.build_left ? op->left : op->right;
    if (!build || build->est_rows < 0) return false;
    double entry = ENG_JOIN_ENTRY_HEAD + 16.0 * s->probe->ncols;
    return build->est_rows * entry <= CACHED_TABLE_BYTES;
}

eng_jit_cost eng_jit_cost_of(const eng_pipe *p)
{
    part sum = FRAME;
    double share = 1.0; /* of the pipeline's rows reaching the current part */
    if (p->source == ENG_SOURCE_TABLE) {
        for (uint32_t i = 0; i < p->nin; i++)
            add(&sum, p->not_null && p->not_null[i] ? COLUMN : COLUMN_NULL, 1.0);
    } else {
        for (uint32_t i = 0; i < p->nin; i++)
            add(&sum, COLUMN, 1.0);
    }
    for (uint32_t i = 0; i < p->nsteps; i++) {
        const cg_step *s = &p->steps[i];
        const sql_lop *op = p->step_ops ? p->step_ops[i] : NULL;
        switch (s->kind) {
        case CG_STEP_FILTER:
            if (i == 0 && !(s->pass_share >= CG_DENSE_FILTER_SHARE)) add(&sum, BATCHES, share);
            add_expr(&sum, s->pred, share);
            break;
        case CG_STEP_PROJECT:
            for (uint32_t k = 0; k < s->count; k++)
                add_expr(&sum, s->items[k].expr, share);
            break;
        case CG_STEP_PROBE: {
            double probed = share;
            if (cg_steps_pretest(p->steps, p->nsteps, i)) {
                add(&sum, PROBE_PRETEST, share);
                probed *= s->pass_share; /* below 1: cg_steps_pretest checks */
            }
            add(&sum, probe_cached(s, op) ? PROBE_CACHED : PROBE_LARGE, probed);
            for (uint32_t k = 0; k < s->probe->nkeys; k++) {
                add(&sum, PROBE_KEY, probed);
                add_expr(&sum, s->probe->keys[k], probed);
            }
            share *= step_ratio(s, op);
            for (uint32_t k = 0; k < s->probe->nids; k++)
                add(&sum, PROBE_COLUMN, share);
            add_expr(&sum, s->probe->residual, share);
            continue;
        }
        }
        share *= step_ratio(s, op);
    }
    if (p->sink == ENG_SINK_AGG) {
        add(&sum, AGG, share);
        for (uint32_t k = 0; k < p->agg.nkeys; k++) {
            add(&sum, sto_type_is_string(p->agg.key_types[k].id) ? AGG_KEY_STRING : AGG_KEY, share);
            add_expr(&sum, p->agg_keys[k], share);
        }
        for (uint32_t k = 0; k < p->agg.naggs; k++) {
            add(&sum, AGG_UPDATE, share);
            add_expr(&sum, p->agg_slots[k].arg, share);
        }
    } else {
        add(&sum, ROWS, share);
        uint32_t nkeys =
            p->sink == ENG_SINK_JOIN || p->sink == ENG_SINK_PARTITION ? p->join_nkeys : 0;
        for (uint32_t k = 0; k < p->nexprs; k++) {
            add(&sum, k + nkeys >= p->nexprs ? ROWS_KEY : ROWS_VALUE, share);
            add_expr(&sum, p->exprs[k], share);
        }
    }
    return (eng_jit_cost){sum.ns, sum.ir};
}

cg_mode eng_jit_mode(const eng_pipe *p, double rows, unsigned threads)
{
    eng_jit_cost c = eng_jit_cost_of(p);
    cg_mode_work w = {rows, threads, c.row_saving_ns, c.ir_instructions};
    return cg_mode_choose(&w);
}
