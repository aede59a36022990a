/*
 * physical_narrow.c — a hash join's build rows keep only the columns read
 * after the join.
 *
 * The logical plan leaves a join's build side at every column its input
 * gives: projection pruning (opt_prune.c) narrows scans and projections,
 * not filters and joins, so a column that only a filter below the build
 * reads (q03's c_mktsegment) rides along into every build entry, and each
 * join's key is stored twice (as a column and as the key slot the probe
 * compares). An entry is what a probe reaches through a cache miss and the
 * build writes through another: every 16-byte slot it does not need is
 * memory the join touches for nothing (q03's orders entries held 7 slots
 * where the lineitem probe read 2 and its key).
 *
 * Narrowing in the logical plan changes the trees that shared-subplan
 * detection (physical_share.c) and the plan tests compare, so it is done
 * here, on the finished pipelines, where what is read is explicit: a build
 * column is kept when the pipeline that probes the table reads it after
 * the probe step — in the join's residual, in a later step that is live,
 * or in the pipeline's sink (whose rows carry it on to later pipelines,
 * which therefore need no look). A column that a step reads only to make
 * a column nobody reads is not kept either (a backward liveness pass over
 * the steps). Pipelines are visited last to first, so the build sink at
 * the end of a probe pipeline is already narrowed when the joins probed in
 * it are looked at.
 *
 * The probe step and the build sink see the same row: the kept columns,
 * then the keys (cg_probe's columns), so only the two descriptions change.
 * The row is then packed (pack(), cg_row_layout): each value in its own
 * width rather than a 16-byte slot — q09's lineitem entries, five values
 * and the key, took 136 bytes in slots and take 72 packed.
 * A build whose probe pipeline keeps nothing but the key gets the unique
 * key bitmap when the join qualifies for one (rt_join_keybits.h): the
 * probe then reads no entry at all for a unique build side.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/optimize.h"
#include "engine/physical_int.h"

typedef struct live_set {
    bool *on; /* indexed by column id */
    uint32_t n;
} live_set;

static sql_walk mark_col(sql_bexpr **slot, void *arg)
{
    live_set *l = arg;
    if ((*slot)->kind == SQL_BEXPR_COLUMN && (*slot)->column < l->n) l->on[(*slot)->column] = true;
    return SQL_WALK_CONTINUE;
}

static void mark_expr(live_set *l, const sql_bexpr *e)
{
    if (e) sql_bexpr_walk((sql_bexpr **)&e, mark_col, l);
}

/* The columns the sink of p reads; false when it is not known (nothing is
 * narrowed then). */
static bool mark_sink(live_set *l, const eng_pipe *p)
{
    if (p->sink == ENG_SINK_AGG) {
        for (uint32_t k = 0; k < p->agg.nkeys; k++)
            mark_expr(l, p->agg_keys[k]);
        for (uint32_t j = 0; j < p->agg.naggs; j++)
            mark_expr(l, p->agg_slots[j].arg);
        return true;
    }
    if (!p->exprs && p->nexprs) return false;
    for (uint32_t i = 0; i < p->nexprs; i++)
        mark_expr(l, p->exprs[i]);
    return true;
}

/* The columns read after step `after` of p (its sink and the live steps
 * after it), into l. */
static bool mark_after(live_set *l, const eng_pipe *p, uint32_t after)
{
    if (!mark_sink(l, p)) return false;
    for (uint32_t i = p->nsteps; i-- > after + 1;) {
        const cg_step *s = &p->steps[i];
        switch (s->kind) {
        case CG_STEP_FILTER:
            mark_expr(l, s->pred);
            break;
        case CG_STEP_PROJECT:
            for (uint32_t k = 0; k < s->count; k++) {
                const sql_proj_item *it = &s->items[k];
                bool passed = it->expr->kind == SQL_BEXPR_COLUMN && it->expr->column == it->id;
                if (!passed && it->id < l->n && l->on[it->id]) mark_expr(l, it->expr);
            }
            break;
        case CG_STEP_PROBE:
            for (uint32_t k = 0; k < s->probe->nkeys; k++)
                mark_expr(l, s->probe->keys[k]);
            mark_expr(l, s->probe->residual);
            break;
        }
    }
    return true;
}

/* The pipeline and step that probe the table pipeline `bp` builds. */
static bool find_probe(const eng_physical *ph, unsigned bp, unsigned *pipe, uint32_t *step)
{
    const cg_probe *pr = ph->pipes[bp].probe;
    for (unsigned i = bp + 1; i < ph->npipes; i++)
        for (uint32_t s = 0; s < ph->pipes[i].nsteps; s++)
            if (ph->pipes[i].steps[s].kind == CG_STEP_PROBE && ph->pipes[i].steps[s].probe == pr) {
                *pipe = i;
                *step = s;
                return true;
            }
    return false;
}

/* An INNER probe of one integer key column, no residual, into a shared
 * table whose rows now hold nothing but that key: the unique key bitmap
 * can decide it (the same conditions as physical.c's keybits_unique). */
static void ask_unique_bitmap(eng_pipe *bp, cg_probe *pr)
{
    if (pr->kind != CG_JOIN_INNER || pr->residual || pr->nkeys != 1 || pr->flag_matches ||
        pr->kb_cols != 1 || bp->join_algorithm != ENG_JOIN_ALGO_HASH)
        return;
    const sql_bexpr *key = bp->exprs[bp->nout];
    if (key->kind != SQL_BEXPR_COLUMN) return;
    for (uint32_t i = 0; i < pr->nids; i++)
        if (pr->ids[i] != key->column) return;
    pr->keybits = true;
    pr->keybits_unique = true;
}

/* Narrows the build of join pipeline bp to the columns in l. */
static sto_status narrow(eng_phys_builder *b, eng_pipe *bp, const live_set *l)
{
    cg_probe *pr = bp->probe;
    uint32_t keep = 0, nk = bp->join_nkeys;
    for (uint32_t i = 0; i < bp->nout; i++)
        keep += l->on[bp->out_ids[i]];
    /* a join without a key keeps a column: its rows are never empty */
    bool first_only = keep == 0 && nk == 0 && bp->nout;
    if (first_only) keep = 1;
    if (keep == bp->nout) return STO_OK;
    sql_colid *ids = eng_phys_alloc(b, keep, sizeof(*ids));
    const sql_bexpr **exprs = eng_phys_alloc(b, keep + nk, sizeof(*exprs));
    if (!ids || !exprs) return sto_error_oom();
    uint32_t n = 0;
    for (uint32_t i = 0; i < bp->nout && n < keep; i++)
        if (l->on[bp->out_ids[i]] || first_only) {
            ids[n] = bp->out_ids[i];
            exprs[n++] = bp->exprs[i];
        }
    for (uint32_t k = 0; k < nk; k++)
        exprs[keep + k] = bp->exprs[bp->nout + k];
    bp->nout = keep;
    bp->out_ids = ids;
    bp->nexprs = keep + nk;
    bp->exprs = exprs;
    pr->nids = keep;
    pr->ids = ids;
    pr->ncols = keep + nk;
    ask_unique_bitmap(bp, pr);
    return STO_OK;
}

/* The packed layout of a build row (codegen/pipeline.h cg_row_layout):
 * the widest values first, so each sits at a multiple of its width (the
 * row starts 8-aligned after the entry's head), then a NULL byte per
 * column. */
static sto_status pack(eng_phys_builder *b, eng_pipe *bp)
{
    uint32_t n = bp->nexprs;
    for (uint32_t i = 0; i < n; i++) {
        size_t w = sto_type_width(bp->exprs[i]->type.id);
        if (w != 1 && w != 2 && w != 4 && w != 8 && w != 16) return STO_OK; /* slots, then */
    }
    cg_row_layout *l = eng_phys_alloc(b, 1, sizeof(*l));
    uint32_t *off = eng_phys_alloc(b, n, sizeof(*off));
    uint32_t *null_off = eng_phys_alloc(b, n, sizeof(*null_off));
    if (!l || !off || !null_off) return sto_error_oom();
    uint32_t at = 0;
    static const size_t widths[] = {16, 8, 4, 2, 1};
    for (size_t w = 0; w < sizeof(widths) / sizeof(widths[0]); w++)
        for (uint32_t i = 0; i < n; i++) {
            size_t width = sto_type_width(bp->exprs[i]->type.id);
            if (width == widths[w]) {
                off[i] = at;
                at += (uint32_t)width;
            }
        }
    for (uint32_t i = 0; i < n; i++)
        null_off[i] = at++;
    l->bytes = (at + 7u) & ~7u;
    l->offset = off;
    l->null_offset = null_off;
    bp->probe->layout = l;
    return STO_OK;
}

sto_status eng_phys_narrow_builds(eng_phys_builder *b, eng_physical *ph)
{
    live_set l = {calloc((size_t)b->ctx->ncols + 1, sizeof(bool)), b->ctx->ncols + 1};
    if (!l.on) return sto_error_oom();
    sto_status st = STO_OK;
    for (unsigned i = ph->npipes; !st && i-- > 0;) {
        eng_pipe *bp = &ph->pipes[i];
        unsigned pipe;
        uint32_t step;
        if (bp->sink != ENG_SINK_JOIN || !bp->probe || !find_probe(ph, i, &pipe, &step)) continue;
        /* the ids of the build's rows must be the probe's (they are, as
         * physical.c makes them; anything else is left alone) */
        if (bp->probe->ids != bp->out_ids || bp->probe->nids != bp->nout) continue;
        memset(l.on, 0, l.n * sizeof(bool));
        if (mark_after(&l, &ph->pipes[pipe], step)) {
            mark_expr(&l, bp->probe->residual);
            st = narrow(b, bp, &l);
        }
        if (!st) st = pack(b, bp);
    }
    free(l.on);
    return st;
}
