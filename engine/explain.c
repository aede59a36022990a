/*
 * explain.c — EXPLAIN and EXPLAIN ANALYZE: the physical plan as text.
 *
 * Pipelines print from the last (the one that makes the result) down to
 * the scans, each followed by its operators from sink to source, so the
 * text reads top-down like the logical plan:
 *
 *   PIPELINE 2: rows of pipeline 1 -> sort  (est 4 rows) [actual ...]
 *     SORT l_returnflag ASC, l_linestatus ASC
 *     SCAN rows of pipeline 1
 *   PIPELINE 1: scan lineitem -> aggregate  (est 60175 rows)
 *     AGGREGATE GROUP l_returnflag, l_linestatus  sum(...), ...
 *     FILTER (l_shipdate <= DATE '1998-09-02')
 *     SCAN lineitem l_returnflag, l_linestatus, ...
 *
 * With ANALYZE each pipeline line adds its input and output rows, its run
 * time, its compile time (what the query waited for the code; "work" is
 * how long compiling it took, on whichever thread) and mode, and the
 * workers that ran it, and every
 * operator line the rows it produced (counted by the generated code, which
 * is compiled with counters only for ANALYZE); the whole query's compile and
 * run time close the text. Operators fused into one pipeline run in the same
 * loop, so time is measured per pipeline.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/executor.h"
#include "engine/optimize.h"
#include "engine/rt_join.h"

typedef struct text {
    char *buf;
    size_t len, cap;
    bool failed;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...)
{
    if (t->failed) return;
    va_list ap;
    va_start(ap, fmt);
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    if (n < 0 || t->len + (size_t)n + 1 > t->cap) {
        size_t cap = (t->cap ? t->cap : 256);
        while (n >= 0 && t->len + (size_t)n + 1 > cap)
            cap *= 2;
        char *b = n < 0 ? NULL : realloc(t->buf, cap);
        if (!b) {
            t->failed = true;
            va_end(ap);
            return;
        }
        t->buf = b;
        t->cap = cap;
    }
    vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
    t->len += (size_t)n;
    va_end(ap);
}

/* An expression as text (the logical plan's printer). */
static void put_expr(text *t, const sql_plan_ctx *ctx, const sql_bexpr *e)
{
    char *s = sql_bexpr_to_string(ctx, e);
    if (!s) {
        t->failed = true;
        return;
    }
    put(t, "%s", s);
    free(s);
}

static void put_col(text *t, const sql_plan_ctx *ctx, sql_colid id)
{
    put(t, "%s", sql_plan_col(ctx, id)->name ? sql_plan_col(ctx, id)->name : "?");
}

/* The optimizer's estimate for an operator, when it made one. */
static void put_est(text *t, const sql_lop *op)
{
    if (op && op->est_rows > 0) put(t, "  (est %.0f rows)", op->est_rows);
}

static void put_actual(text *t, const eng_pipe_stats *s, uint32_t i)
{
    if (s && s->step_rows) put(t, "  (actual rows %llu)", (unsigned long long)s->step_rows[i]);
}

static void put_sink(text *t, const eng_physical *ph, const eng_pipe *p, const eng_pipe_stats *st)
{
    const sql_plan_ctx *ctx = ph->plan->ctx;
    char note[160];
    switch (p->sink) {
    case ENG_SINK_AGG:
        if (p->sink_op->kind == SQL_LOP_DISTINCT) {
            put(t, "    DISTINCT");
            break;
        }
        put(t, "    HASH AGGREGATE");
        if (p->agg.runs) put(t, " (ordered runs)");
        if (p->agg.nkeys) put(t, " GROUP");
        for (uint32_t i = 0; i < p->agg.nkeys; i++) {
            put(t, i ? ", " : " ");
            put_expr(t, ctx, p->agg_keys[i]);
        }
        for (uint32_t j = 0; j < p->agg.naggs; j++) {
            const sql_agg_item *a = &p->sink_op->aggregate.aggs[j];
            put(t, "%s%s(%s", j ? ", " : (p->agg.nkeys ? "  AGGS " : " AGGS "),
                sql_agg_name(a->func), a->distinct ? "DISTINCT " : "");
            if (a->arg)
                put_expr(t, ctx, a->arg);
            else
                put(t, "*");
            put(t, ")");
        }
        for (uint32_t h = 0; h < p->agg.nhaving; h++) {
            put(t, h ? " AND " : "  HAVING ");
            put_expr(t, ctx, p->agg_having[h]);
        }
        if (eng_phys_setop_note(p, note, sizeof(note))) put(t, "  %s", note);
        break;
    case ENG_SINK_SORT:
        put(t, "    %s", p->limit >= 0 ? "TOP-K SORT" : "SORT");
        for (uint32_t k = 0; k < p->nsort_keys; k++) {
            const sql_sort_key *sk =
                &((const sql_lop *)(p->sink_op->kind == SQL_LOP_LIMIT ? p->sink_op->left
                                                                      : p->sink_op))
                     ->sort.keys[k];
            put(t, k ? ", " : " ");
            put_expr(t, ctx, sk->expr);
            put(t, " %s NULLS %s", sk->desc ? "DESC" : "ASC", sk->nulls_first ? "FIRST" : "LAST");
        }
        if (p->limit >= 0) put(t, " LIMIT %lld", (long long)p->limit);
        if (p->offset > 0) put(t, " OFFSET %lld", (long long)p->offset);
        break;
    case ENG_SINK_JOIN:
        /* Say what runs and, when the optimizer asked for an algorithm the
         * pipelines cannot run for this join, what it asked for. */
        if (p->join_algorithm == ENG_JOIN_ALGO_RADIX)
            put(t, "    HASH JOIN BUILD (radix partitioned)");
        else if (p->join_algorithm == ENG_JOIN_ALGO_SORTMERGE)
            put(t, "    SORT-MERGE JOIN BUILD (range partitioned, sorted)");
        else
            put(t, "    HASH JOIN BUILD (shared table%s)",
                p->sink_op->phys.algorithm == ENG_JOIN_ALGO_NESTED_LOOP ? "; nested loop" : "");
        for (uint32_t k = 0; k < p->join_nkeys; k++) {
            put(t, k ? ", " : " KEYS ");
            put_expr(t, ctx, p->exprs[p->nout + k]);
        }
        if (st && p->join_algorithm == ENG_JOIN_ALGO_HASH)
            put(t, "  (table built in %.3f ms; %u-byte entries%s%s)", st->join_ms,
                eng_join_entry_stride(p->probe && p->probe->layout ? p->probe->layout->bytes
                                                                   : cg_row_bytes(p->nexprs)),
                st->join_filter ? "; semi-join filter" : "",
                st->join_unique    ? "; key bitmap, unique keys"
                : st->join_keybits ? "; key bitmap"
                                   : "");
        break;
    case ENG_SINK_PARTITION: {
        bool sm = ph->pipes[p->join_from - 1].join_algorithm == ENG_JOIN_ALGO_SORTMERGE;
        put(t, "    %s probe side and build side of pipeline %u",
            sm ? "SORT-MERGE JOIN RANGE PARTITION, SORT" : "RADIX JOIN PARTITION", p->join_from);
        for (uint32_t k = 0; k < p->join_nkeys; k++) {
            put(t, k ? ", " : " KEYS ");
            put_expr(t, ctx, p->exprs[p->nout + k]);
        }
        if (st && sm)
            put(t, "  (%llu range%s, partitioned and sorted in %.3f ms)",
                (unsigned long long)st->join_parts, st->join_parts == 1 ? "" : "s", st->join_ms);
        else if (st)
            put(t, "  (%llu partition%s, %u pass%s, partitioned and built in %.3f ms)",
                (unsigned long long)st->join_parts, st->join_parts == 1 ? "" : "s", st->join_passes,
                st->join_passes == 1 ? "" : "es", st->join_ms);
        break;
    }
    case ENG_SINK_EXCHANGE: {
        static const char *const kinds[] = {"SHUFFLE", "BROADCAST", "GATHER"};
        put(t, "    EXCHANGE %u %s", p->sink_op->exchange.id, kinds[p->sink_op->exchange.kind]);
        for (uint32_t k = 0; k < p->sink_op->exchange.nkeys; k++) {
            put(t, k ? ", " : " ON ");
            put_expr(t, ctx, p->sink_op->exchange.keys[k]);
        }
        break;
    }
    case ENG_SINK_ROWS:
        if (eng_phys_setop_note(p, note, sizeof(note))) {
            put(t, "    %s", note);
        } else if (p->unmatched_from) {
            put(t, "    ROWS, THEN THE BUILD ROWS OF PIPELINE %u %s PROBE MATCHED",
                p->unmatched_from, p->emit_matched ? "A" : "NO");
        } else if (p->sink_op && p->sink_op->kind == SQL_LOP_JOIN) {
            put(t, "    ROWS (read by more than one pipeline)");
        } else if (p->sink_op) {
            put(t, "    LIMIT");
            if (p->limit >= 0)
                put(t, " %lld", (long long)p->limit);
            else
                put(t, " ALL");
            if (p->offset > 0) put(t, " OFFSET %lld", (long long)p->offset);
        } else {
            put(t, "    RESULT");
            for (uint32_t i = 0; i < p->nout; i++) {
                put(t, i ? ", " : " ");
                put_col(t, ctx, p->out_ids[i]);
            }
        }
        break;
    }
    put_est(t, p->sink_op);
    if (st && st->step_rows)
        put(t, "  (actual rows in %llu, out %llu)", (unsigned long long)st->step_rows[p->nsteps],
            (unsigned long long)st->rows_out);
    put(t, "\n");
}

static void put_steps(text *t, const eng_physical *ph, const eng_pipe *p, const eng_pipe_stats *st)
{
    const sql_plan_ctx *ctx = ph->plan->ctx;
    for (uint32_t i = p->nsteps; i-- > 0;) {
        const cg_step *s = &p->steps[i];
        if (s->kind == CG_STEP_FILTER) {
            put(t, "    FILTER ");
            put_expr(t, ctx, s->pred);
        } else if (s->kind == CG_STEP_PROBE) {
            const cg_probe *pr = s->probe;
            bool merge = i == 0 && p->source == ENG_SOURCE_PARTS &&
                         ph->pipes[p->parts_from - 1].join_algorithm == ENG_JOIN_ALGO_SORTMERGE;
            put(t, "    %s JOIN %s PROBE%s", merge ? "MERGE" : "HASH",
                sql_join_kind_name(p->step_ops[i]->join.kind),
                pr->kind == CG_JOIN_FLAG ? " (build side left: flags its matches)" : "");
            if (pr->filter) put(t, " (semi-join filter)");
            if (pr->keybits)
                put(t, pr->keybits_decide   ? " (key bitmap decides)"
                       : pr->keybits_unique ? " (key bitmap decides if unique)"
                                            : " (key bitmap)");
            if (p->source != ENG_SOURCE_PARTS && cg_steps_pretest(p->steps, p->nsteps, i))
                put(t, " (tested in batches)");
            for (uint32_t k = 0; k < pr->nkeys; k++) {
                put(t, k ? ", " : " ");
                put_expr(t, ctx, pr->keys[k]);
            }
            if (!pr->nkeys) put(t, " (nested loop)");
            if (pr->residual) {
                put(t, "  RESIDUAL ");
                put_expr(t, ctx, pr->residual);
            }
        } else {
            put(t, "    PROJECT");
            for (uint32_t k = 0; k < s->count; k++) {
                put(t, k ? ", " : " ");
                put_expr(t, ctx, s->items[k].expr);
            }
        }
        put_est(t, p->step_ops[i]);
        put_actual(t, st, i);
        put(t, "\n");
    }
}

static void put_source(text *t, const eng_physical *ph, const eng_pipe *p, const eng_pipe_stats *st)
{
    const sql_plan_ctx *ctx = ph->plan->ctx;
    switch (p->source) {
    case ENG_SOURCE_TABLE:
        put(t, "    SCAN %s", p->source_op->get.table_name);
        for (uint32_t i = 0; i < p->nin; i++) {
            put(t, i ? ", " : " ");
            put_col(t, ctx, p->in_ids[i]);
        }
        break;
    case ENG_SOURCE_VALUES:
        put(t, "    VALUES %u rows", p->source_op->values.nrows);
        break;
    case ENG_SOURCE_PIPE:
        put(t, "    READ pipeline %u%s", p->input + 1, p->ordered ? " (in order)" : "");
        break;
    case ENG_SOURCE_PARTS:
        put(t, "    READ %s of pipeline %u, a probe task per morsel",
            ph->pipes[p->parts_from - 1].join_algorithm == ENG_JOIN_ALGO_SORTMERGE ? "sorted ranges"
                                                                                   : "partitions",
            p->input + 1);
        break;
    }
    put_est(t, p->source_op);
    if (st) put(t, "  (actual rows %llu)", (unsigned long long)st->rows_in);
    put(t, "\n");
}

sto_status eng_explain_text(const eng_physical *ph, const eng_query_stats *stats, char **out)
{
    text t = {NULL, 0, 0, false};
    for (unsigned i = ph->npipes; i-- > 0;) {
        const eng_pipe *p = &ph->pipes[i];
        char name[256];
        eng_pipe_describe(ph, p, name, sizeof(name));
        put(&t, "PIPELINE %u: %s  (est %.0f rows)", i + 1, name, p->est_rows);
        if (stats && i < stats->npipes) {
            const eng_pipe_stats *s = &stats->pipes[i];
            put(&t,
                "  (actual rows in %llu, out %llu, time %.3f ms, compile %.3f ms %s (work %.3f "
                "ms), %u workers, %llu morsels)",
                (unsigned long long)s->rows_in, (unsigned long long)s->rows_out, s->run_ms,
                s->compile_ms, cg_mode_name(s->mode), s->compile_work_ms, s->workers,
                (unsigned long long)s->morsels);
            if (s->fast_morsels || s->switched)
                put(&t, "  (started fast: %llu morsels, then %s)",
                    (unsigned long long)s->fast_morsels, s->switched ? "opt" : "fast to the end");
        }
        put(&t, "\n");
        const eng_pipe_stats *st = stats && i < stats->npipes ? &stats->pipes[i] : NULL;
        put_sink(&t, ph, p, st);
        put_steps(&t, ph, p, st);
        put_source(&t, ph, p, st);
    }
    if (stats)
        put(&t, "Total: run %.3f ms, compile %.3f ms (work %.3f ms)\n", stats->run_ms,
            stats->compile_ms, stats->compile_work_ms);
    if (t.failed || !t.buf) {
        free(t.buf);
        return sto_error_oom();
    }
    *out = t.buf;
    return STO_OK;
}
