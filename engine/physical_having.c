/*
 * physical_having.c — HAVING conjuncts tested by the aggregation as it
 * writes its groups, not by a FILTER over the rows it wrote.
 *
 * A FILTER above an AGGREGATE is the first step of the pipeline that reads
 * the aggregation's rows, so every group is written out (and the workers'
 * rows gathered into one array) before the filter drops most of them: q18's
 * `GROUP BY l_orderkey HAVING sum(l_quantity) > 300` wrote 1.5M rows of 48
 * bytes, twice, for 57 that pass, and the page faults of that memory were
 * a quarter of its profile. Here, on the finished pipelines, the filter's
 * conjuncts that compare one output column with a constant move into the
 * aggregation's layout (eng_agg_having, tested by the merge as it emits a
 * group: rt_agg_having.c); the rest stay in the FILTER, which disappears
 * when nothing is left.
 *
 * Only an aggregation with GROUP BY whose rows one pipeline reads: without
 * GROUP BY the row of no input (COUNT 0) is made after the merge, and the
 * rows of a shared aggregation (physical_share.c) are read by others that
 * need every group. Only integer-like and DOUBLE columns, against a
 * non-NULL constant of the same type (the binder has already cast one side
 * to the other's type; DECIMALs of equal scale), so the comparison is the
 * one the generated code makes.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/physical_int.h"

/* Whether values of type t compare here as the generated code compares
 * them: integer-like slots as int64, DOUBLE. */
static bool comparable(sto_type t)
{
    switch (t.id) {
    case STO_TYPE_BOOLEAN:
    case STO_TYPE_INTEGER:
    case STO_TYPE_BIGINT:
    case STO_TYPE_DECIMAL:
    case STO_TYPE_DATE:
    case STO_TYPE_DOUBLE:
        return true;
    default:
        return false;
    }
}

static bool same_type(sto_type a, sto_type b)
{
    return a.id == b.id && (a.id != STO_TYPE_DECIMAL || a.scale == b.scale);
}

/* `c op k` written as `k op' c`: the comparison with its sides swapped. */
static sql_op swapped(sql_op op)
{
    switch (op) {
    case SQL_OP_LT:
        return SQL_OP_GT;
    case SQL_OP_LE:
        return SQL_OP_GE;
    case SQL_OP_GT:
        return SQL_OP_LT;
    case SQL_OP_GE:
        return SQL_OP_LE;
    default:
        return op; /* EQ, NE */
    }
}

/* The slot of column id among the reader's input slots, or -1. */
static int64_t slot_of(const eng_pipe *reader, sql_colid id)
{
    for (uint32_t i = 0; i < reader->nin; i++)
        if (reader->in_ids[i] == id) return i;
    return -1;
}

/* Whether conjunct e is `column op constant` (either way round) over one
 * of the aggregation's output columns; *h says which and how. */
static bool as_having(const eng_pipe *reader, const sql_bexpr *e, eng_agg_having *h)
{
    if (e->kind != SQL_BEXPR_OP || !sql_op_is_comparison(e->op.op)) return false;
    const sql_bexpr *a = e->op.args[0], *k = e->op.args[1];
    sql_op op = e->op.op;
    if (a->kind == SQL_BEXPR_CONST && k->kind == SQL_BEXPR_COLUMN) {
        const sql_bexpr *t = a;
        a = k;
        k = t;
        op = swapped(op);
    }
    if (a->kind != SQL_BEXPR_COLUMN || k->kind != SQL_BEXPR_CONST || k->value.is_null) return false;
    if (!comparable(a->type) || !same_type(a->type, k->type)) return false;
    int64_t slot = slot_of(reader, a->column);
    if (slot < 0) return false;
    h->slot = (uint32_t)slot;
    h->op = op;
    h->type = a->type;
    if (a->type.id == STO_TYPE_DOUBLE)
        h->value.d = k->value.v.f64;
    else
        h->value.i = k->value.v.i64;
    return true;
}

/* The conjuncts of e (an AND tree), appended to list[*n]; cap is enough
 * when it counts e's nodes. */
static void conjuncts(const sql_bexpr *e, const sql_bexpr **list, uint32_t *n)
{
    if (e->kind == SQL_BEXPR_OP && e->op.op == SQL_OP_AND) {
        conjuncts(e->op.args[0], list, n);
        conjuncts(e->op.args[1], list, n);
        return;
    }
    list[(*n)++] = e;
}

static uint32_t count_nodes(const sql_bexpr *e)
{
    if (e->kind == SQL_BEXPR_OP && e->op.op == SQL_OP_AND)
        return count_nodes(e->op.args[0]) + count_nodes(e->op.args[1]);
    return 1;
}

/* How many pipelines read the rows of pipeline `id`. */
static unsigned readers(const eng_physical *ph, unsigned id)
{
    unsigned n = 0;
    for (unsigned i = 0; i < ph->npipes; i++)
        n += ph->pipes[i].source == ENG_SOURCE_PIPE && ph->pipes[i].input == id;
    return n;
}

/* Moves what it can of reader's first step, a FILTER, into agg. */
static sto_status move_filter(eng_phys_builder *b, eng_pipe *agg, eng_pipe *reader)
{
    const cg_step *f = &reader->steps[0];
    uint32_t cap = count_nodes(f->pred), n = 0, nh = 0, nrest = 0;
    const sql_bexpr **all = eng_phys_alloc(b, cap, sizeof(*all));
    const sql_bexpr **moved = eng_phys_alloc(b, cap, sizeof(*moved));
    eng_agg_having *having = eng_phys_alloc(b, cap, sizeof(*having));
    if (!all || !moved || !having) return sto_error_oom();
    conjuncts(f->pred, all, &n);
    sql_bexpr *rest = NULL;
    for (uint32_t i = 0; i < n; i++) {
        if (as_having(reader, all[i], &having[nh])) {
            moved[nh++] = all[i];
            continue;
        }
        nrest++;
        rest = rest ? sql_bexpr_op(b->ctx, SQL_OP_AND, sto_type_make(STO_TYPE_BOOLEAN), rest,
                                   (sql_bexpr *)all[i], 0)
                    : (sql_bexpr *)all[i];
        if (!rest) return sto_error_oom();
    }
    if (!nh) return STO_OK;
    agg->agg.having = having;
    agg->agg.nhaving = nh;
    agg->agg_having = moved;
    if (nrest) {
        reader->steps[0].pred = rest;
        return STO_OK;
    }
    /* nothing is left of the filter: the reader reads what passed */
    const sql_lop *fop = reader->step_ops[0];
    if (fop && fop->est_rows > 0) reader->est_rows = fop->est_rows;
    reader->nsteps--;
    memmove(reader->steps, reader->steps + 1, reader->nsteps * sizeof(*reader->steps));
    memmove(reader->step_ops, reader->step_ops + 1, reader->nsteps * sizeof(*reader->step_ops));
    return STO_OK;
}

sto_status eng_phys_agg_having(eng_phys_builder *b, eng_physical *ph)
{
    for (unsigned i = 0; i < ph->npipes; i++) {
        eng_pipe *r = &ph->pipes[i];
        if (r->source != ENG_SOURCE_PIPE || !r->nsteps || r->steps[0].kind != CG_STEP_FILTER)
            continue;
        eng_pipe *agg = &ph->pipes[r->input];
        if (agg->sink != ENG_SINK_AGG || !agg->sink_op || agg->sink_op->kind != SQL_LOP_AGGREGATE ||
            !agg->agg.nkeys || agg->count_setop || agg->agg.nhaving || readers(ph, r->input) != 1)
            continue;
        STO_TRY(move_filter(b, agg, r));
    }
    return STO_OK;
}
