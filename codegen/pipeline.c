/*
 * pipeline.c — produce/consume code generation for one pipeline.
 *
 * The source "produces": it opens a loop over its tuples (or, for VALUES,
 * emits each literal row in turn) and, for every tuple, lets the consumers
 * emit their code in place — the steps in order, then the sink. A filter that
 * fails jumps to the loop's "next tuple" block, so nothing after it runs.
 * Column values come from a cg_binding whose load callback emits the load
 * the first time an expression needs a column; the per-chunk array and
 * bitmap addresses are loaded once before the loop (in the preheader).
 * When the first step is a filter, the loop runs in batches: the filter
 * over a batch into a selection vector, then the rest for the selected
 * rows (produce_batched).
 */
#include "codegen/pipeline.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/expr.h"
#include "codegen/opt.h"

typedef struct gen {
    const cg_pipeline_desc *d;
    cg_fn *f;
    cg_module *m;
    cg_binding bind;
    LLVMBuilderRef pre;                      /* inserts into the preheader, before its branch */
    LLVMValueRef row;                        /* i64: row within the chunk / buffer */
    LLVMValueRef chunk;                      /* CHUNKS: the sto_chunk * */
    LLVMValueRef chunk_cols, chunk_validity; /* its arrays of arrays, loaded in pre */
    LLVMValueRef rows_base;
    LLVMValueRef wstate;
    LLVMValueRef *col_base; /* per source column: array base, loaded in pre */
    LLVMValueRef *col_valid;
    LLVMBasicBlockRef next; /* where a rejected tuple goes */
    cg_var agg_states;      /* AGG without keys: the one group's states */
    LLVMBasicBlockRef probe_done;
    LLVMValueRef *entries; /* per step: the join entry whose row is bound */
    int pretested;         /* the step whose key bitmap the batch tests, or -1 */
} gen;

static LLVMValueRef byte_ptr(gen *g, LLVMBuilderRef b, LLVMValueRef base, uint64_t off)
{
    if (!off) return base;
    LLVMValueRef idx = cg_const_i64(g->m, (int64_t)off);
    return LLVMBuildGEP2(b, cg_i8(g->m), base, &idx, 1, "");
}

/* arr[idx] (an array of pointers), loaded in the preheader. */
static LLVMValueRef pre_load_ptr(gen *g, LLVMValueRef arr, uint32_t idx)
{
    LLVMValueRef i = cg_const_i64(g->m, idx);
    LLVMValueRef p = LLVMBuildGEP2(g->pre, cg_ptr(g->m), arr, &i, 1, "");
    return LLVMBuildLoad2(g->pre, cg_ptr(g->m), p, "");
}

static int source_index(const cg_source *s, sql_colid id)
{
    for (uint32_t i = 0; i < s->ncols; i++)
        if (s->ids[i] == id) return (int)i;
    return -1;
}

/* A build column of a probe step whose entry is bound. */
static cg_val load_build_column(gen *g, cg_fn *f, sql_colid id, const sql_col_info *info)
{
    cg_module *m = g->m;
    LLVMTypeRef ty = cg_type(m, info->type.id);
    cg_val out = {LLVMGetUndef(ty), NULL};
    for (uint32_t k = g->d->nsteps; k-- > 0;) {
        const cg_probe *p = g->d->steps[k].probe;
        if (!p || !g->entries[k]) continue;
        for (uint32_t i = 0; i < p->nids; i++) {
            if (p->ids[i] != id) continue;
            LLVMValueRef row = byte_ptr(g, f->b, g->entries[k], p->entry_head);
            uint64_t off = p->layout ? p->layout->offset[i] : (uint64_t)i * CG_ROW_SLOT;
            uint64_t noff = p->layout ? p->layout->null_offset[i] : cg_row_null_offset(p->ncols, i);
            out.v = LLVMBuildLoad2(f->b, ty, byte_ptr(g, f->b, row, off), "");
            if (info->nullable) {
                LLVMValueRef nb = LLVMBuildLoad2(f->b, cg_i8(m), byte_ptr(g, f->b, row, noff), "");
                out.null = LLVMBuildICmp(f->b, LLVMIntNE, nb, LLVMConstInt(cg_i8(m), 0, 0), "");
            }
            return out;
        }
    }
    return out; /* not produced here: the planner checked that */
}

/* The load callback: column `id` of the current tuple. */
static cg_val load_column(void *arg, cg_fn *f, sql_colid id)
{
    gen *g = arg;
    cg_module *m = g->m;
    const cg_source *s = &g->d->source;
    const sql_col_info *info = sql_plan_col(g->d->ctx, id);
    LLVMTypeRef ty = cg_type(m, info->type.id);
    int i = source_index(s, id);
    cg_val out = {LLVMGetUndef(ty), NULL};
    if (i < 0) return load_build_column(g, f, id, info);

    if (s->kind == CG_SOURCE_ROWS) {
        LLVMValueRef rowp = LLVMBuildGEP2(
            f->b, cg_i8(m), g->rows_base,
            (LLVMValueRef[]){LLVMBuildMul(f->b, g->row, cg_const_i64(m, s->row_bytes), "")}, 1, "");
        out.v = LLVMBuildLoad2(f->b, ty, byte_ptr(g, f->b, rowp, (uint64_t)i * CG_ROW_SLOT), "");
        if (info->nullable) {
            LLVMValueRef nb = LLVMBuildLoad2(
                f->b, cg_i8(m), byte_ptr(g, f->b, rowp, cg_row_null_offset(s->ncols, (uint32_t)i)),
                "");
            out.null = LLVMBuildICmp(f->b, LLVMIntNE, nb, LLVMConstInt(cg_i8(m), 0, 0), "");
        }
        return out;
    }

    /* CHUNKS: the arrays' addresses are loaded once per call, before the loop. */
    if (!g->col_base[i]) {
        if (!g->chunk_cols)
            g->chunk_cols = LLVMBuildLoad2(
                g->pre, cg_ptr(m), byte_ptr(g, g->pre, g->chunk, offsetof(sto_chunk, cols)), "");
        g->col_base[i] = pre_load_ptr(g, g->chunk_cols, s->col_index[i]);
        if (!s->not_null[i]) {
            if (!g->chunk_validity)
                g->chunk_validity = LLVMBuildLoad2(
                    g->pre, cg_ptr(m), byte_ptr(g, g->pre, g->chunk, offsetof(sto_chunk, validity)),
                    "");
            g->col_valid[i] = pre_load_ptr(g, g->chunk_validity, s->col_index[i]);
        }
    }
    out.v = cg_load_elem(f, ty, g->col_base[i], g->row);
    if (g->col_valid[i]) {
        LLVMBuilderRef b = f->b;
        LLVMValueRef word = cg_load_elem(f, cg_i64(m), g->col_valid[i],
                                         LLVMBuildLShr(b, g->row, cg_const_i64(m, 6), ""));
        LLVMValueRef bit = LLVMBuildAnd(
            b, LLVMBuildLShr(b, word, LLVMBuildAnd(b, g->row, cg_const_i64(m, 63), ""), ""),
            cg_const_i64(m, 1), "");
        out.null = LLVMBuildICmp(b, LLVMIntEQ, bit, cg_const_i64(m, 0), "");
    }
    return out;
}

/* --- consumers ------------------------------------------------------------- */

/* Starts code that runs only when v is not NULL; returns the block to close
 * with end_if (NULL when v cannot be NULL). */
static LLVMBasicBlockRef if_not_null(gen *g, cg_val v)
{
    if (!v.null) return NULL;
    LLVMBasicBlockRef body = cg_block(g->f, "notnull");
    LLVMBasicBlockRef done = cg_block(g->f, "notnull.done");
    LLVMBuildCondBr(g->f->b, v.null, done, body);
    LLVMPositionBuilderAtEnd(g->f->b, body);
    return done;
}

static void end_if(gen *g, LLVMBasicBlockRef done)
{
    if (!done) return;
    LLVMBuildBr(g->f->b, done);
    LLVMPositionBuilderAtEnd(g->f->b, done);
}

static LLVMValueRef sink_state(gen *g)
{
    return byte_ptr(g, g->f->b, g->wstate, g->d->sink.state_offset);
}

/* Stores a row's values (slots, or packed by layout l) and then their NULL
 * bytes. The NULL bytes of NOT NULL values are constant zeros, and a run of
 * them at consecutive offsets goes out as one store of up to 8 bytes instead
 * of one store each: a wide build row of NOT NULL columns (q02's 19) had as
 * many one-byte stores and address computations as columns, all of which
 * the code generator had to select. */
static sto_status store_row(gen *g, LLVMValueRef row, uint32_t ncols, const cg_row_layout *l,
                            const cg_val *vals)
{
    LLVMBuilderRef b = g->f->b;
    LLVMTypeRef i8 = cg_i8(g->m);
    uint32_t *zeros = malloc((ncols ? ncols : 1) * sizeof(*zeros));
    if (!zeros) return sto_error_oom();
    uint32_t nz = 0;
    for (uint32_t i = 0; i < ncols; i++) {
        uint64_t off = l ? l->offset[i] : (uint64_t)i * CG_ROW_SLOT;
        LLVMBuildStore(b, vals[i].v, byte_ptr(g, b, row, off));
    }
    for (uint32_t i = 0; i < ncols; i++) {
        uint32_t noff = l ? l->null_offset[i] : cg_row_null_offset(ncols, i);
        if (vals[i].null)
            LLVMBuildStore(b, LLVMBuildZExt(b, vals[i].null, i8, ""), byte_ptr(g, b, row, noff));
        else
            zeros[nz++] = noff;
    }
    /* the zero bytes in offset order (insertion sort: rows are narrow) */
    for (uint32_t i = 1; i < nz; i++)
        for (uint32_t j = i; j > 0 && zeros[j - 1] > zeros[j]; j--) {
            uint32_t t = zeros[j];
            zeros[j] = zeros[j - 1];
            zeros[j - 1] = t;
        }
    for (uint32_t i = 0; i < nz;) {
        uint32_t run = 1;
        while (i + run < nz && run < 8 && zeros[i + run] == zeros[i] + run)
            run++;
        uint32_t width = run >= 8 ? 8 : run >= 4 ? 4 : run >= 2 ? 2 : 1;
        LLVMTypeRef t = LLVMIntTypeInContext(cg_module_context(g->m), 8 * width);
        LLVMValueRef st = LLVMBuildStore(b, LLVMConstNull(t), byte_ptr(g, b, row, zeros[i]));
        LLVMSetAlignment(st, 1);
        i += width;
    }
    free(zeros);
    return STO_OK;
}

static LLVMValueRef helper(gen *g, const char *name, void *addr, LLVMTypeRef *params, unsigned n,
                           sto_status *st)
{
    LLVMTypeRef fty = cg_fn_type(g->m, cg_i32(g->m), params, n);
    LLVMValueRef fn = NULL;
    *st = cg_extern(g->m, name, fty, addr, &fn);
    return fn;
}

static sto_status sink_rows(gen *g)
{
    const cg_sink *s = &g->d->sink;
    cg_module *m = g->m;
    LLVMTypeRef ptr = cg_ptr(m);
    sto_status st = STO_OK;
    LLVMValueRef fn = helper(g, "cg_pipeline_rows_append", (void *)s->append,
                             (LLVMTypeRef[]){ptr, ptr, ptr}, 3, &st);
    if (st) return st;
    /* Values first, so a failing expression appends no half row. */
    cg_val *vals = calloc(s->ncols ? s->ncols : 1, sizeof(*vals));
    if (!vals) return sto_error_oom();
    for (uint32_t i = 0; !st && i < s->ncols; i++)
        st = cg_expr_compile(g->f, g->d->ctx, s->exprs[i], &g->bind, &vals[i]);
    if (!st) {
        cg_var slot = cg_var_new(g->f, ptr, NULL, "row");
        cg_call_checked(g->f, fn, (LLVMValueRef[]){g->f->err, sink_state(g), slot.slot}, 3);
        st = store_row(g, cg_var_get(g->f, slot), s->ncols, NULL, vals);
    }
    free(vals);
    return st;
}

static bool is_int_sum(sto_type t)
{
    return t.id != STO_TYPE_DOUBLE;
}

/* Updates one aggregate's state at p with its argument's value. */
static sto_status agg_update(gen *g, const cg_agg_slot *a, uint32_t index, LLVMValueRef states,
                             LLVMValueRef distinct_fn)
{
    cg_fn *f = g->f;
    cg_module *m = g->m;
    LLVMBuilderRef b = f->b;
    LLVMValueRef p = byte_ptr(g, b, states, a->offset);
    if (a->func == SQL_AGG_COUNT_STAR) {
        LLVMValueRef c = LLVMBuildLoad2(b, cg_i64(m), p, "");
        LLVMBuildStore(b, LLVMBuildAdd(b, c, cg_const_i64(m, 1), ""), p);
        return STO_OK;
    }
    cg_val v;
    STO_TRY(cg_expr_compile(f, g->d->ctx, a->arg, &g->bind, &v));
    sto_type t = a->arg->type;
    LLVMBasicBlockRef done = if_not_null(g, v);
    if (cg_agg_is_distinct_set(a->func, a->distinct)) {
        cg_var tmp = cg_var_new(f, LLVMArrayType(cg_i8(m), CG_ROW_SLOT), NULL, "dval");
        LLVMSetAlignment(tmp.slot, 16);
        LLVMBuildStore(b, v.v, tmp.slot);
        cg_call_checked(
            f, distinct_fn,
            (LLVMValueRef[]){f->err, sink_state(g), p, cg_const_i32(m, (int32_t)index), tmp.slot},
            5);
        end_if(g, done);
        return STO_OK;
    }
    switch (a->func) {
    case SQL_AGG_COUNT: {
        LLVMValueRef c = LLVMBuildLoad2(b, cg_i64(m), p, "");
        LLVMBuildStore(b, LLVMBuildAdd(b, c, cg_const_i64(m, 1), ""), p);
        break;
    }
    case SQL_AGG_SUM:
    case SQL_AGG_AVG: {
        LLVMValueRef aux = byte_ptr(g, b, p, is_int_sum(t) ? 16 : 8);
        if (is_int_sum(t)) {
            LLVMValueRef x = t.id == STO_TYPE_BOOLEAN ? LLVMBuildZExt(b, v.v, cg_i128(m), "")
                                                      : LLVMBuildSExt(b, v.v, cg_i128(m), "");
            LLVMValueRef s = LLVMBuildLoad2(b, cg_i128(m), p, "");
            LLVMBuildStore(b, LLVMBuildAdd(b, s, x, ""), p);
        } else {
            LLVMValueRef s = LLVMBuildLoad2(b, cg_f64(m), p, "");
            LLVMBuildStore(b, LLVMBuildFAdd(b, s, v.v, ""), p);
        }
        if (a->func == SQL_AGG_SUM) {
            LLVMBuildStore(b, LLVMConstInt(cg_i8(m), 1, 0), aux);
        } else {
            LLVMValueRef c = LLVMBuildLoad2(b, cg_i64(m), aux, "");
            LLVMBuildStore(b, LLVMBuildAdd(b, c, cg_const_i64(m, 1), ""), aux);
        }
        break;
    }
    case SQL_AGG_MIN:
    case SQL_AGG_MAX: {
        LLVMTypeRef ty = cg_type(m, t.id);
        LLVMValueRef seenp = byte_ptr(g, b, p, 16);
        LLVMValueRef seen = LLVMBuildLoad2(b, cg_i8(m), seenp, "");
        cg_val cur = {LLVMBuildLoad2(b, ty, p, ""), NULL};
        cg_val nv = {v.v, NULL};
        LLVMValueRef cmp = cg_compare_vals(f, nv, cur, t, false, false);
        b = f->b;
        LLVMValueRef better = LLVMBuildICmp(b, a->func == SQL_AGG_MIN ? LLVMIntSLT : LLVMIntSGT,
                                            cmp, cg_const_i32(m, 0), "");
        LLVMValueRef take = LLVMBuildOr(
            b, better, LLVMBuildICmp(b, LLVMIntEQ, seen, LLVMConstInt(cg_i8(m), 0, 0), ""), "");
        LLVMBasicBlockRef set = cg_block(f, "minmax.set"), after = cg_block(f, "minmax.done");
        LLVMBuildCondBr(b, take, set, after);
        LLVMPositionBuilderAtEnd(b, set);
        LLVMBuildStore(b, v.v, p);
        LLVMBuildStore(b, LLVMConstInt(cg_i8(m), 1, 0), seenp);
        LLVMBuildBr(b, after);
        LLVMPositionBuilderAtEnd(b, after);
        break;
    }
    default:
        break;
    }
    end_if(g, done);
    return STO_OK;
}

/* i1: entry e's key row holds the key values vals (NULLs equal). */
static LLVMValueRef entry_keys_equal(gen *g, LLVMValueRef e, const cg_val *vals,
                                     const sto_type *types)
{
    const cg_sink *s = &g->d->sink;
    cg_fn *f = g->f;
    cg_module *m = g->m;
    LLVMBuilderRef b = f->b;
    uint32_t nk = s->nkeys;
    cg_val *ev = calloc(nk, sizeof(*ev));
    for (uint32_t i = 0; ev && i < nk; i++) {
        LLVMValueRef kp = byte_ptr(g, b, e, s->probe.key_offset + i * CG_ROW_SLOT);
        ev[i].v = LLVMBuildLoad2(b, cg_type(m, types[i].id), kp, "");
        if (vals[i].null) {
            LLVMValueRef nb = LLVMBuildLoad2(
                b, cg_i8(m), byte_ptr(g, b, e, s->probe.key_offset + cg_row_null_offset(nk, i)),
                "");
            ev[i].null = LLVMBuildICmp(b, LLVMIntNE, nb, LLVMConstInt(cg_i8(m), 0, 0), "");
        }
    }
    LLVMValueRef eq = ev ? cg_equal_vals(f, vals, ev, types, nk, true) : cg_const_bool(m, false);
    free(ev);
    return eq;
}

/* The inline look for the group (cg_sink.probe): along the group's run in
 * the worker's table, from its home slot; a new group goes into the empty
 * slot that ends the run while the table has room (key_row: the group's
 * key row), else find is called (it grows or spills the table). When the
 * group has its entry, stores the entry's states in `states` and jumps to
 * g->probe_done (made here); the builder is left where the slow path
 * (calling find) goes. */
static void probe(gen *g, LLVMValueRef hash, const cg_val *vals, const sto_type *types,
                  LLVMValueRef key_row, cg_var states)
{
    const cg_sink *s = &g->d->sink;
    cg_fn *f = g->f;
    cg_module *m = g->m;
    LLVMBuilderRef b = f->b;
    LLVMTypeRef ptr = cg_ptr(m), i64 = cg_i64(m), i8 = cg_i8(m);
    LLVMBasicBlockRef look = cg_block(f, "probe.look"), check = cg_block(f, "probe.check");
    LLVMBasicBlockRef keys = cg_block(f, "probe.keys"), hit = cg_block(f, "probe.hit");
    LLVMBasicBlockRef slow = cg_block(f, "probe.slow");
    g->probe_done = cg_block(f, "probe.done");

    LLVMValueRef st = sink_state(g);
    LLVMValueRef table = LLVMBuildLoad2(b, ptr, byte_ptr(g, b, st, s->probe.table_offset), "");
    LLVMBuildCondBr(b, LLVMBuildIsNull(b, table, ""), slow, look);

    /* linear probing, as the runtime's table: walk the run until the group
     * or an empty slot (a new group: find makes it) */
    LLVMBasicBlockRef walk = cg_block(f, "probe.walk"), step = cg_block(f, "probe.step");
    LLVMPositionBuilderAtEnd(b, look);
    LLVMValueRef mask = LLVMBuildLoad2(b, i64, byte_ptr(g, b, st, s->probe.mask_offset), "");
    LLVMValueRef pshift =
        LLVMBuildLoad2(b, i64, byte_ptr(g, b, st, s->probe.part_shift_offset), "");
    LLVMValueRef lmask = LLVMBuildLoad2(b, i64, byte_ptr(g, b, st, s->probe.low_mask_offset), "");
    LLVMValueRef part = LLVMBuildLShr(b, hash, cg_const_i64(m, 64 - s->probe.parts_log), "");
    LLVMValueRef idx0 =
        LLVMBuildOr(b, LLVMBuildShl(b, part, pshift, ""), LLVMBuildAnd(b, hash, lmask, ""), "");
    LLVMBuildBr(b, walk);

    LLVMPositionBuilderAtEnd(b, walk);
    LLVMValueRef idx = LLVMBuildPhi(b, i64, "idx");
    LLVMValueRef e = LLVMBuildGEP2(
        b, i8, table,
        (LLVMValueRef[]){LLVMBuildMul(b, idx, cg_const_i64(m, s->probe.entry_bytes), "")}, 1, "");
    LLVMValueRef used = LLVMBuildLoad2(b, i8, byte_ptr(g, b, e, s->probe.used_offset), "");
    LLVMBasicBlockRef empty = cg_block(f, "probe.empty"), add = cg_block(f, "probe.add");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, used, LLVMConstInt(i8, 0, 0), ""), empty, check);

    /* a new group: its entry is written here while the table has room */
    LLVMPositionBuilderAtEnd(b, empty);
    LLVMValueRef countp = byte_ptr(g, b, st, s->probe.count_offset);
    LLVMValueRef count = LLVMBuildLoad2(b, i64, countp, "");
    LLVMValueRef limit = LLVMBuildLoad2(b, i64, byte_ptr(g, b, st, s->probe.limit_offset), "");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntULT, count, limit, ""), add, slow);
    LLVMPositionBuilderAtEnd(b, add);
    uint32_t key_bytes = s->probe.states_offset - s->probe.key_offset;
    LLVMBuildMemSet(b, byte_ptr(g, b, e, s->probe.states_offset), LLVMConstInt(i8, 0, 0),
                    cg_const_i64(m, s->probe.entry_bytes - s->probe.states_offset), 8);
    LLVMBuildMemCpy(b, byte_ptr(g, b, e, s->probe.key_offset), 8, key_row, 16,
                    cg_const_i64(m, key_bytes));
    LLVMBuildStore(b, hash, e);
    LLVMBuildStore(b, LLVMConstInt(i8, 1, 0), byte_ptr(g, b, e, s->probe.used_offset));
    LLVMBuildStore(b, LLVMBuildAdd(b, count, cg_const_i64(m, 1), ""), countp);
    cg_var_set(f, states, byte_ptr(g, b, e, s->probe.states_offset));
    LLVMBuildBr(b, g->probe_done);

    LLVMPositionBuilderAtEnd(b, check);
    LLVMValueRef h = LLVMBuildLoad2(b, i64, e, "");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, h, hash, ""), keys, step);

    LLVMPositionBuilderAtEnd(b, keys);
    LLVMValueRef eq = entry_keys_equal(g, e, vals, types);
    b = f->b;
    LLVMBuildCondBr(b, eq, hit, step);

    LLVMPositionBuilderAtEnd(b, step);
    LLVMValueRef next = LLVMBuildAnd(b, LLVMBuildAdd(b, idx, cg_const_i64(m, 1), ""), mask, "");
    LLVMBuildBr(b, walk);
    LLVMValueRef in_vals[] = {idx0, next};
    LLVMBasicBlockRef in_blocks[] = {look, step};
    LLVMAddIncoming(idx, in_vals, in_blocks, 2);

    LLVMPositionBuilderAtEnd(b, hit);
    cg_var_set(f, states, byte_ptr(g, b, e, s->probe.states_offset));
    LLVMBuildBr(b, g->probe_done);
    LLVMPositionBuilderAtEnd(b, slow);
}

/* Ordered runs (cg_sink.runs): a row whose key is the open run's updates
 * its states (jumping to `done` with them in `states`); one with another
 * key asks the runtime for a new run while runs are on. The builder is
 * left where the table's path goes: runs off, or next said NULL. */
static sto_status sink_agg_runs(gen *g, const cg_val *vals, const sto_type *types,
                                LLVMValueRef key_row, cg_var states, LLVMBasicBlockRef done)
{
    const cg_sink *s = &g->d->sink;
    cg_fn *f = g->f;
    cg_module *m = g->m;
    LLVMBuilderRef b = f->b;
    LLVMTypeRef ptr = cg_ptr(m), i64 = cg_i64(m), i8 = cg_i8(m);
    sto_status st = STO_OK;
    LLVMValueRef next = helper(g, "cg_pipeline_agg_run_next", (void *)s->runs.next,
                               (LLVMTypeRef[]){ptr, ptr, i64, i64, ptr, ptr}, 6, &st);
    if (st) return st;
    LLVMBasicBlockRef same = cg_block(f, "runs.same"), other = cg_block(f, "runs.other");
    LLVMBasicBlockRef open = cg_block(f, "runs.open"), table = cg_block(f, "runs.table");
    LLVMValueRef key = vals[0].v;
    if (LLVMGetIntTypeWidth(LLVMTypeOf(key)) < 64) key = LLVMBuildSExt(b, key, i64, "");
    LLVMValueRef sst = sink_state(g);
    LLVMValueRef rs = LLVMBuildLoad2(b, ptr, byte_ptr(g, b, sst, s->runs.states_offset), "");
    LLVMBuildCondBr(b, LLVMBuildIsNull(b, rs, ""), other, same);

    LLVMPositionBuilderAtEnd(b, same);
    LLVMValueRef rk = LLVMBuildLoad2(b, i64, byte_ptr(g, b, sst, s->runs.key_offset), "");
    LLVMBasicBlockRef hit = cg_block(f, "runs.hit");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, key, rk, ""), hit, other);
    LLVMPositionBuilderAtEnd(b, hit);
    cg_var_set(f, states, rs);
    LLVMBuildBr(b, done);

    LLVMPositionBuilderAtEnd(b, other);
    LLVMValueRef on = LLVMBuildLoad2(b, i8, byte_ptr(g, b, sst, s->runs.on_offset), "");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntNE, on, LLVMConstInt(i8, 0, 0), ""), open, table);

    LLVMPositionBuilderAtEnd(b, open);
    LLVMValueRef hash = cg_hash_vals(f, vals, types, 1);
    cg_call_checked(f, next, (LLVMValueRef[]){f->err, sst, hash, key, key_row, states.slot}, 6);
    b = f->b;
    LLVMValueRef ns = cg_var_get(f, states);
    LLVMBuildCondBr(b, LLVMBuildIsNull(b, ns, ""), table, done);
    LLVMPositionBuilderAtEnd(b, table);
    return STO_OK;
}

/* Ordered runs: the open run is closed before the code returns. */
static sto_status sink_agg_runs_end(gen *g)
{
    const cg_sink *s = &g->d->sink;
    if (s->kind != CG_SINK_AGG || !s->runs.enabled || s->nkeys != 1) return STO_OK;
    cg_fn *f = g->f;
    LLVMTypeRef ptr = cg_ptr(g->m);
    sto_status st = STO_OK;
    LLVMValueRef end = helper(g, "cg_pipeline_agg_run_end", (void *)s->runs.end,
                              (LLVMTypeRef[]){ptr, ptr}, 2, &st);
    if (st) return st;
    LLVMValueRef row = f->row;
    f->row = NULL; /* no row of the loop is current here */
    cg_call_checked(f, end, (LLVMValueRef[]){f->err, sink_state(g)}, 2);
    f->row = row;
    return STO_OK;
}

static sto_status sink_agg(gen *g)
{
    const cg_sink *s = &g->d->sink;
    cg_fn *f = g->f;
    cg_module *m = g->m;
    LLVMTypeRef ptr = cg_ptr(m);
    sto_status st = STO_OK;
    LLVMValueRef find = helper(g, "cg_pipeline_agg_find", (void *)s->find,
                               (LLVMTypeRef[]){ptr, ptr, cg_i64(m), ptr, ptr}, 5, &st);
    if (st) return st;
    LLVMValueRef distinct = NULL;
    for (uint32_t i = 0; i < s->naggs; i++)
        if (cg_agg_is_distinct_set(s->aggs[i].func, s->aggs[i].distinct) && !distinct) {
            distinct = helper(g, "cg_pipeline_agg_distinct", (void *)s->distinct,
                              (LLVMTypeRef[]){ptr, ptr, ptr, cg_i32(m), ptr}, 5, &st);
            if (st) return st;
        }

    uint32_t nk = s->nkeys;
    cg_val *vals = calloc(nk ? nk : 1, sizeof(*vals));
    sto_type *types = calloc(nk ? nk : 1, sizeof(*types));
    if (!vals || !types) {
        free(vals);
        free(types);
        return sto_error_oom();
    }
    for (uint32_t i = 0; !st && i < nk; i++) {
        st = cg_expr_compile(f, g->d->ctx, s->keys[i], &g->bind, &vals[i]);
        types[i] = s->keys[i]->type;
    }
    cg_var key = {NULL, NULL};
    if (!st) {
        key = cg_var_new(f, LLVMArrayType(cg_i8(m), cg_row_bytes(nk) ? cg_row_bytes(nk) : 16), NULL,
                         "key");
        LLVMSetAlignment(key.slot, 16); /* the runtime reads the slots in their C types */
        st = store_row(g, key.slot, nk, NULL, vals);
    }
    if (!st) {
        cg_var states = g->agg_states;
        if (!nk && states.slot) {
            /* found once before the loop */
        } else if (s->probe.enabled && nk) {
            states = cg_var_new(f, ptr, NULL, "states");
            LLVMBasicBlockRef runs_done = NULL;
            if (s->runs.enabled && nk == 1) {
                runs_done = cg_block(f, "runs.done");
                st = sink_agg_runs(g, vals, types, key.slot, states, runs_done);
            }
            LLVMValueRef hash = cg_hash_vals(f, vals, types, nk);
            probe(g, hash, vals, types, key.slot, states);
            cg_call_checked(
                f, find, (LLVMValueRef[]){f->err, sink_state(g), hash, key.slot, states.slot}, 5);
            LLVMBuildBr(f->b, g->probe_done);
            LLVMPositionBuilderAtEnd(f->b, g->probe_done);
            if (runs_done) {
                LLVMBuildBr(f->b, runs_done);
                LLVMPositionBuilderAtEnd(f->b, runs_done);
            }
        } else {
            LLVMValueRef hash = nk ? cg_hash_vals(f, vals, types, nk) : cg_const_i64(m, 0);
            states = cg_var_new(f, ptr, NULL, "states");
            cg_call_checked(
                f, find, (LLVMValueRef[]){f->err, sink_state(g), hash, key.slot, states.slot}, 5);
        }
        LLVMValueRef sp = cg_var_get(f, states);
        for (uint32_t i = 0; !st && i < s->naggs; i++)
            st = agg_update(g, &s->aggs[i], i, sp, distinct);
    }
    free(vals);
    free(types);
    return st;
}

/* The code for one tuple: the steps, then the sink. A rejected tuple
 * branches to g->next. */
/* EXPLAIN ANALYZE's counter i, plus one. */
static void count(gen *g, uint32_t i)
{
    if (!g->d->count_rows) return;
    LLVMBuilderRef b = g->f->b;
    LLVMValueRef p = byte_ptr(g, b, g->wstate, g->d->counters_offset + 8u * i);
    LLVMValueRef c = LLVMBuildLoad2(b, cg_i64(g->m), p, "");
    LLVMBuildStore(b, LLVMBuildAdd(b, c, cg_const_i64(g->m, 1), ""), p);
}

/* The semi-join filter test of engine/rt_hashtable.h (the same word and
 * bits as eng_join_filter_word / eng_join_filter_bits) before the directory load:
 * rows whose bits are all set go on (the builder is left there), the others
 * to the block returned. The filter's words stay in cache where the
 * directory does not, so most rows without a partner cost no miss. */
static LLVMBasicBlockRef probe_filter(gen *g, uint32_t words_offset, uint32_t mask_offset,
                                      LLVMValueRef table, LLVMValueRef hash)
{
    cg_fn *f = g->f;
    cg_module *m = g->m;
    LLVMBuilderRef b = f->b;
    LLVMTypeRef i64 = cg_i64(m);
    LLVMBasicBlockRef dir = cg_block(f, "probe.dir"), rejected = cg_block(f, "probe.filtered");
    LLVMBasicBlockRef test = cg_block(f, "probe.filter");
    /* no words: the run time found no use for the filter (a small build
     * side), and one predictable branch is all it costs */
    LLVMValueRef words = LLVMBuildLoad2(b, cg_ptr(m), byte_ptr(g, b, table, words_offset), "");
    LLVMBuildCondBr(b, LLVMBuildIsNull(b, words, ""), dir, test);
    LLVMPositionBuilderAtEnd(b, test);
    LLVMValueRef mask = LLVMBuildLoad2(b, i64, byte_ptr(g, b, table, mask_offset), "");
    LLVMValueRef idx = LLVMBuildAnd(
        b,
        LLVMBuildLShr(b, LLVMBuildMul(b, hash, cg_const_i64(m, (int64_t)0x9E3779B97F4A7C15ull), ""),
                      cg_const_i64(m, 40), ""),
        mask, "");
    LLVMValueRef bits = NULL;
    for (unsigned k = 0; k < 3; k++) {
        LLVMValueRef pos = LLVMBuildAnd(b, LLVMBuildLShr(b, hash, cg_const_i64(m, 36 + 6 * k), ""),
                                        cg_const_i64(m, 63), "");
        LLVMValueRef bit = LLVMBuildShl(b, cg_const_i64(m, 1), pos, "");
        bits = bits ? LLVMBuildOr(b, bits, bit, "") : bit;
    }
    LLVMValueRef w = cg_load_elem(f, i64, words, idx);
    LLVMValueRef pass = LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildAnd(b, w, bits, ""), bits, "");
    LLVMBuildCondBr(b, pass, dir, rejected);
    LLVMPositionBuilderAtEnd(b, dir);
    return rejected;
}

/* A join's build sink: the row, appended with the key's hash, or as a row
 * whose key has a NULL (which never matches). */
static sto_status sink_join(gen *g)
{
    const cg_sink *s = &g->d->sink;
    cg_fn *f = g->f;
    cg_module *m = g->m;
    LLVMTypeRef ptr = cg_ptr(m);
    sto_status st = STO_OK;
    LLVMValueRef append = helper(g, "cg_pipeline_join_append", (void *)s->join_append,
                                 (LLVMTypeRef[]){ptr, ptr, cg_i64(m), ptr}, 4, &st);
    if (st) return st;
    LLVMValueRef append_null =
        helper(g, "cg_pipeline_join_append_null", (void *)s->join_append_null,
               (LLVMTypeRef[]){ptr, ptr, ptr}, 3, &st);
    if (st) return st;
    uint32_t nk = s->join_nkeys, first = s->ncols - nk;
    cg_val *vals = calloc(s->ncols ? s->ncols : 1, sizeof(*vals));
    sto_type *types = calloc(nk ? nk : 1, sizeof(*types));
    if (!vals || !types) st = sto_error_oom();
    /* the key first: with a filter, a dropped row loads no other column */
    for (uint32_t i = first; !st && i < s->ncols; i++)
        st = cg_expr_compile(f, g->d->ctx, s->exprs[i], &g->bind, &vals[i]);
    LLVMValueRef anynull = NULL, hash = NULL;
    if (!st) {
        for (uint32_t k = 0; k < nk; k++) {
            types[k] = s->exprs[first + k]->type;
            if (vals[first + k].null)
                anynull = anynull ? LLVMBuildOr(f->b, anynull, vals[first + k].null, "")
                                  : vals[first + k].null;
        }
        hash = nk ? cg_hash_vals(f, vals + first, types, nk) : cg_const_i64(m, 0);
        if (s->join_filter && nk) {
            LLVMBasicBlockRef drop =
                probe_filter(g, s->join_filter_offset, s->join_filter_mask_offset,
                             cg_const_ptr(m, s->join_filter_table), hash);
            LLVMBasicBlockRef keep = LLVMGetInsertBlock(f->b);
            LLVMPositionBuilderAtEnd(f->b, drop);
            LLVMBuildBr(f->b, g->next);
            LLVMPositionBuilderAtEnd(f->b, keep);
        }
    }
    for (uint32_t i = 0; !st && i < first; i++)
        st = cg_expr_compile(f, g->d->ctx, s->exprs[i], &g->bind, &vals[i]);
    if (!st) {
        cg_var slot = cg_var_new(f, ptr, NULL, "row");
        LLVMBasicBlockRef store = cg_block(f, "build.store");
        if (anynull && s->join_null_keyed && s->join_filter) {
            /* a NULL key never matches: dropped like a filtered row */
            LLVMBasicBlockRef keyed = cg_block(f, "build.keyed");
            LLVMBuildCondBr(f->b, anynull, g->next, keyed);
            LLVMPositionBuilderAtEnd(f->b, keyed);
        } else if (anynull && s->join_null_keyed) {
            hash = LLVMBuildSelect(f->b, anynull, cg_const_i64(m, 0), hash, "");
        } else if (anynull) {
            LLVMBasicBlockRef keyed = cg_block(f, "build.keyed"), nulls = cg_block(f, "build.null");
            LLVMBuildCondBr(f->b, anynull, nulls, keyed);
            LLVMPositionBuilderAtEnd(f->b, nulls);
            cg_call_checked(f, append_null, (LLVMValueRef[]){f->err, sink_state(g), slot.slot}, 3);
            LLVMBuildBr(f->b, store);
            LLVMPositionBuilderAtEnd(f->b, keyed);
        }
        cg_call_checked(f, append, (LLVMValueRef[]){f->err, sink_state(g), hash, slot.slot}, 4);
        LLVMBuildBr(f->b, store);
        LLVMPositionBuilderAtEnd(f->b, store);
        st = store_row(g, cg_var_get(f, slot), s->ncols, s->join_layout, vals);
    }
    free(vals);
    free(types);
    return st;
}

static sto_status consume_from(gen *g, uint32_t first);

/* The binding's cached values, saved around code that runs in a loop body
 * or on one branch only (values loaded there do not dominate what follows). */
typedef struct snap {
    cg_val *vals;
    uint32_t nlog;
} snap;

static sto_status snap_take(gen *g, snap *s)
{
    size_t n = (size_t)g->bind.ncols + 1;
    s->vals = malloc(n * sizeof(*s->vals));
    if (!s->vals) return sto_error_oom();
    memcpy(s->vals, g->bind.vals, n * sizeof(*s->vals));
    s->nlog = g->bind.nlog;
    return STO_OK;
}

static void snap_restore(gen *g, snap *s)
{
    memcpy(g->bind.vals, s->vals, ((size_t)g->bind.ncols + 1) * sizeof(*s->vals));
    g->bind.nlog = s->nlog;
    free(s->vals);
    s->vals = NULL;
}

/* The exact key bitmap of engine/rt_join_keybits.h before the directory,
 * when the table has one: a NULL key, a key outside the span or a clear
 * bit goes to the block returned (no chain); with keybits_decide a set bit
 * goes to `decided` (FLAG first marks the key in the hit words), else on
 * to the directory, where the builder is left. Without a bitmap (the keys
 * were not dense) one load and a predictable branch lead there too. */
static LLVMBasicBlockRef probe_keybits(gen *g, const cg_probe *p, LLVMValueRef table,
                                       const cg_val *kv, LLVMBasicBlockRef decided)
{
    cg_fn *f = g->f;
    cg_module *m = g->m;
    LLVMBuilderRef b = f->b;
    LLVMTypeRef i64 = cg_i64(m);
    LLVMBasicBlockRef dir = cg_block(f, "probe.kb.dir"), test = cg_block(f, "probe.kb");
    LLVMBasicBlockRef look = cg_block(f, "probe.kb.look"), rejected = cg_block(f, "probe.kb.no");
    LLVMValueRef bits = LLVMBuildLoad2(b, cg_ptr(m), byte_ptr(g, b, table, p->kb_bits_offset), "");
    LLVMBuildCondBr(b, LLVMBuildIsNull(b, bits, ""), dir, test);
    LLVMPositionBuilderAtEnd(b, test);
    /* the key column the run time chose among the candidates */
    LLVMValueRef col = NULL, k = NULL, knull = NULL;
    if (p->kb_cols & (p->kb_cols - 1))
        col = LLVMBuildLoad2(b, cg_i32(m), byte_ptr(g, b, table, p->kb_col_offset), "");
    for (uint32_t c = 0; c < p->nkeys && c < 32; c++) {
        if (!(p->kb_cols >> c & 1)) continue;
        LLVMValueRef v = kv[c].v;
        if (LLVMGetIntTypeWidth(LLVMTypeOf(v)) < 64) v = LLVMBuildSExt(b, v, i64, "");
        LLVMValueRef n = kv[c].null ? kv[c].null : cg_const_bool(m, false);
        if (!k) {
            k = v;
            knull = n;
            continue;
        }
        LLVMValueRef is = LLVMBuildICmp(b, LLVMIntEQ, col, LLVMConstInt(cg_i32(m), c, 0), "");
        k = LLVMBuildSelect(b, is, v, k, "");
        knull = LLVMBuildSelect(b, is, n, knull, "");
    }
    const cg_val key_val = {k, knull}, *key = &key_val;
    LLVMValueRef base = LLVMBuildLoad2(b, i64, byte_ptr(g, b, table, p->kb_base_offset), "");
    LLVMValueRef span = LLVMBuildLoad2(b, i64, byte_ptr(g, b, table, p->kb_span_offset), "");
    LLVMValueRef d = LLVMBuildSub(b, k, base, "");
    LLVMValueRef ok = LLVMBuildICmp(b, LLVMIntULT, d, span, "");
    /* a select, not an and: a NULL key's value may be poison */
    if (key->null) ok = LLVMBuildSelect(b, key->null, cg_const_bool(m, false), ok, "");
    LLVMBuildCondBr(b, ok, look, rejected);
    LLVMPositionBuilderAtEnd(b, look);
    LLVMValueRef wi = LLVMBuildLShr(b, d, cg_const_i64(m, 6), "");
    LLVMValueRef bit =
        LLVMBuildShl(b, cg_const_i64(m, 1), LLVMBuildAnd(b, d, cg_const_i64(m, 63), ""), "");
    LLVMValueRef w = cg_load_elem(f, i64, bits, wi);
    LLVMValueRef set =
        LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, w, bit, ""), cg_const_i64(m, 0), "");
    if (p->keybits_unique) {
        /* build keys without duplicates: the set bit is the one match */
        LLVMBasicBlockRef once = cg_block(f, "probe.kb.once");
        LLVMBuildCondBr(b, set, once, rejected);
        LLVMPositionBuilderAtEnd(b, once);
        LLVMValueRef uniq =
            LLVMBuildLoad2(b, cg_i32(m), byte_ptr(g, b, table, p->kb_unique_offset), "");
        LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntNE, uniq, LLVMConstInt(cg_i32(m), 0, 0), ""),
                        decided, dir);
    } else if (!p->keybits_decide) {
        LLVMBuildCondBr(b, set, dir, rejected);
    } else if (p->kind != CG_JOIN_FLAG) {
        LLVMBuildCondBr(b, set, decided, rejected);
    } else {
        /* set the hit bit once: after the first probe row of a key its
         * word is only read, so workers do not pass its line around */
        LLVMBasicBlockRef hit = cg_block(f, "probe.kb.hit"), mark = cg_block(f, "probe.kb.mark");
        LLVMBuildCondBr(b, set, hit, rejected);
        LLVMPositionBuilderAtEnd(b, hit);
        LLVMValueRef hits =
            LLVMBuildLoad2(b, cg_ptr(m), byte_ptr(g, b, table, p->kb_hits_offset), "");
        LLVMValueRef hp = LLVMBuildGEP2(b, i64, hits, &wi, 1, "");
        LLVMValueRef hw = LLVMBuildLoad2(b, i64, hp, "");
        LLVMSetOrdering(hw, LLVMAtomicOrderingMonotonic);
        LLVMBuildCondBr(
            b, LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildAnd(b, hw, bit, ""), cg_const_i64(m, 0), ""),
            mark, decided);
        LLVMPositionBuilderAtEnd(b, mark);
        LLVMBuildAtomicRMW(b, LLVMAtomicRMWBinOpOr, hp, bit, LLVMAtomicOrderingMonotonic, 0);
        LLVMBuildBr(b, decided);
    }
    LLVMPositionBuilderAtEnd(b, dir);
    return rejected;
}

/* What a batch's pre-test reads where the table has no word for the row
 * (no bitmap, a key outside the bitmap's span, a NULL key). */
static const uint64_t no_word[1];

/* Whether probe step s is also tested in a batch's selection loop
 * (produce_batched): a kind that emits nothing for a probe row without a
 * partner, a key bitmap to test, keys that are plain columns (loaded for
 * every row of the batch, which can fail nothing) and most rows expected
 * to miss. The probe itself runs unchanged for the rows that pass. Not a
 * semi-join filter alone: its hash would be computed twice for the rows
 * that pass, and the probe's own test of it is a branch that predicts
 * well when most rows miss (q05's 6M lineitems against 46K orders: 46 ms
 * one row at a time, 54 ms tested in batches). */
static bool probe_pretests(const cg_step *s)
{
    if (s->kind != CG_STEP_PROBE) return false;
    const cg_probe *p = s->probe;
    if (p->kind != CG_JOIN_INNER && p->kind != CG_JOIN_SEMI && p->kind != CG_JOIN_FLAG)
        return false;
    if (p->table_in_state || p->lookup || !p->nkeys) return false;
    if (!(p->keybits && p->kb_cols)) return false;
    if (!(s->pass_share > 0 && s->pass_share < CG_DENSE_FILTER_SHARE)) return false;
    for (uint32_t k = 0; k < p->nkeys; k++)
        if (p->keys[k]->kind != SQL_BEXPR_COLUMN) return false;
    return true;
}

bool cg_steps_pretest(const cg_step *steps, uint32_t nsteps, uint32_t i)
{
    uint32_t at = nsteps && steps[0].kind == CG_STEP_FILTER;
    return i == at && i < nsteps && probe_pretests(&steps[i]);
}

/* The pre-test of probe p for the current row, without a branch: false
 * when the row can have no partner — a NULL key or a clear bit of the key
 * bitmap, tested as probe_keybits tests them — and true when the run time
 * gave the table no bitmap. The keys are frozen: a NULL key's value may be
 * poison, and here it feeds an address. */
static sto_status probe_pretest(gen *g, const cg_probe *p, LLVMValueRef *out)
{
    cg_fn *f = g->f;
    cg_module *m = g->m;
    LLVMTypeRef ptr = cg_ptr(m), i64 = cg_i64(m);
    uint32_t nk = p->nkeys;
    cg_val *kv = calloc(nk, sizeof(*kv));
    sto_status st = kv ? STO_OK : sto_error_oom();
    for (uint32_t k = 0; !st && k < nk; k++)
        st = cg_expr_compile(f, g->d->ctx, p->keys[k], &g->bind, &kv[k]);
    if (st) goto out;
    LLVMBuilderRef b = f->b;
    LLVMValueRef anynull = cg_const_bool(m, false);
    for (uint32_t k = 0; k < nk; k++) {
        kv[k].v = LLVMBuildFreeze(b, kv[k].v, "");
        if (kv[k].null) anynull = LLVMBuildOr(b, anynull, kv[k].null, "");
    }
    LLVMValueRef table = cg_const_ptr(m, p->table), zero = cg_const_i64(m, 0);
    LLVMValueRef nowhere = cg_const_ptr(m, no_word);
    LLVMValueRef pass = cg_const_bool(m, true);
    if (p->keybits && p->kb_cols) {
        LLVMValueRef words =
            LLVMBuildLoad2(g->pre, ptr, byte_ptr(g, g->pre, table, p->kb_bits_offset), "");
        LLVMValueRef none = LLVMBuildIsNull(b, words, "");
        LLVMValueRef col = NULL, k = NULL;
        if (p->kb_cols & (p->kb_cols - 1))
            col =
                LLVMBuildLoad2(g->pre, cg_i32(m), byte_ptr(g, g->pre, table, p->kb_col_offset), "");
        for (uint32_t c = 0; c < nk && c < 32; c++) {
            if (!(p->kb_cols >> c & 1)) continue;
            LLVMValueRef v = kv[c].v;
            if (LLVMGetIntTypeWidth(LLVMTypeOf(v)) < 64) v = LLVMBuildSExt(b, v, i64, "");
            k = k ? LLVMBuildSelect(
                        b, LLVMBuildICmp(b, LLVMIntEQ, col, LLVMConstInt(cg_i32(m), c, 0), ""), v,
                        k, "")
                  : v;
        }
        LLVMValueRef base =
            LLVMBuildLoad2(g->pre, i64, byte_ptr(g, g->pre, table, p->kb_base_offset), "");
        LLVMValueRef span =
            LLVMBuildLoad2(g->pre, i64, byte_ptr(g, g->pre, table, p->kb_span_offset), "");
        LLVMValueRef d = LLVMBuildSub(b, k, base, "");
        LLVMValueRef in = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntULT, d, span, ""),
                                       LLVMBuildNot(b, none, ""), "");
        LLVMValueRef wi =
            LLVMBuildSelect(b, in, LLVMBuildLShr(b, d, cg_const_i64(m, 6), ""), zero, "");
        LLVMValueRef w = cg_load_elem(f, i64, LLVMBuildSelect(b, none, nowhere, words, ""), wi);
        LLVMValueRef bit =
            LLVMBuildShl(b, cg_const_i64(m, 1), LLVMBuildAnd(b, d, cg_const_i64(m, 63), ""), "");
        LLVMValueRef set = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, w, bit, ""), zero, "");
        pass = LLVMBuildSelect(b, none, pass, LLVMBuildAnd(b, in, set, ""), "");
    }
    *out = LLVMBuildAnd(b, pass, LLVMBuildNot(b, anynull, ""), "");
out:
    free(kv);
    return st;
}

/* Whether the run time gave probe p its key bitmap (the plan only asks
 * for one; a build too sparse gets none), read once per call. Without it,
 * a batch's pre-test would test and copy every row for nothing: q21's
 * lineitem against 6,923 orders took 51 instead of 18 ms. */
static LLVMValueRef probe_pretest_built(gen *g, const cg_probe *p)
{
    LLVMValueRef words =
        LLVMBuildLoad2(g->pre, cg_ptr(g->m),
                       byte_ptr(g, g->pre, cg_const_ptr(g->m, p->table), p->kb_bits_offset), "");
    return LLVMBuildIsNotNull(g->pre, words, "");
}

/* The steps after step i and the sink, for one tuple leaving step i, with
 * the build row of `entry` (NULL: the build columns are NULL); rejected
 * tuples and finished ones go to `next`. */
static sto_status emit_rest(gen *g, uint32_t i, LLVMValueRef entry, LLVMBasicBlockRef next)
{
    const cg_probe *p = g->d->steps[i].probe;
    snap sn = {NULL, 0};
    STO_TRY(snap_take(g, &sn));
    LLVMBasicBlockRef saved_next = g->next;
    LLVMValueRef saved_entry = g->entries[i];
    g->next = next;
    g->entries[i] = entry;
    if (!entry && (p->kind == CG_JOIN_LEFT || p->kind == CG_JOIN_SINGLE))
        for (uint32_t k = 0; k < p->nids; k++) {
            const sql_col_info *info = sql_plan_col(g->d->ctx, p->ids[k]);
            g->bind.vals[p->ids[k]] =
                (cg_val){LLVMGetUndef(cg_type(g->m, info->type.id)), cg_const_bool(g->m, true)};
        }
    count(g, i);
    sto_status st = consume_from(g, i + 1);
    if (!st) LLVMBuildBr(g->f->b, next);
    g->next = saved_next;
    g->entries[i] = saved_entry;
    snap_restore(g, &sn);
    return st;
}

/* A match of an INNER probe with cg_probe.keybits_unique, found in the
 * chain or decided by the bitmap: no entry is read; every build column is
 * the build key, equal to the probe key (non-NULL here: a NULL key has no
 * bit and no chain). */
static sto_status emit_key_match(gen *g, uint32_t i, const cg_val *kv, LLVMBasicBlockRef next)
{
    const cg_probe *p = g->d->steps[i].probe;
    snap sn = {NULL, 0};
    STO_TRY(snap_take(g, &sn));
    for (uint32_t k = 0; k < p->nids; k++)
        g->bind.vals[p->ids[k]] = (cg_val){kv[0].v, NULL};
    sto_status st = emit_rest(g, i, NULL, next);
    snap_restore(g, &sn);
    return st;
}

/* A probe step: hash the probe key, walk the chain of its slot, compare
 * hashes, keys and the residual, and emit tuples per the join kind. */
static sto_status probe_step(gen *g, uint32_t i)
{
    const cg_probe *p = g->d->steps[i].probe;
    cg_fn *f = g->f;
    cg_module *m = g->m;
    LLVMBuilderRef b = f->b;
    LLVMTypeRef ptr = cg_ptr(m), i64 = cg_i64(m), i8 = cg_i8(m);
    uint32_t nk = p->nkeys, first = p->ncols - nk;
    sto_status st = STO_OK;
    LLVMValueRef single_error = NULL;
    if (p->kind == CG_JOIN_SINGLE) {
        single_error = helper(g, "cg_pipeline_join_single_error", (void *)p->single_error,
                              (LLVMTypeRef[]){ptr}, 1, &st);
        if (st) return st;
    }
    cg_val *kv = calloc(nk ? nk : 1, sizeof(*kv));
    cg_val *bv = calloc(nk ? nk : 1, sizeof(*bv));
    sto_type *types = calloc(nk ? nk : 1, sizeof(*types));
    if (!kv || !bv || !types) st = sto_error_oom();
    for (uint32_t k = 0; !st && k < nk; k++) {
        st = cg_expr_compile(f, g->d->ctx, p->keys[k], &g->bind, &kv[k]);
        types[k] = p->keys[k]->type;
    }
    if (st) goto out;
    b = f->b;
    LLVMValueRef anynull = NULL;
    for (uint32_t k = 0; k < nk; k++)
        if (kv[k].null) anynull = anynull ? LLVMBuildOr(b, anynull, kv[k].null, "") : kv[k].null;
    LLVMBasicBlockRef filtered = NULL;    /* where rows the filter rejects go */
    LLVMBasicBlockRef kb_rejected = NULL; /* and those the key bitmap rejects */
    /* SEMI/MARK: after the first match; keybits_decide: the bitmap's match */
    LLVMBasicBlockRef hit_once = cg_block(f, "chain.hit");
    /* the hash before the bitmap's branches: the chain, which a rejected
     * row enters empty, compares it (the optimizer sinks it where it can) */
    LLVMValueRef hash = nk ? cg_hash_vals(f, kv, types, nk) : cg_const_i64(m, 0);
    b = f->b;
    /* After the batch's pre-test the bitmap has nothing left to say unless
     * it decides the match: a row here either passed it or the table has
     * none, and both go on to the directory. */
    bool pretested = g->pretested == (int)i && !p->keybits_decide && !p->keybits_unique;
    if (p->keybits && p->kb_cols && !p->lookup && !p->table_in_state && !pretested)
        kb_rejected = probe_keybits(g, p, cg_const_ptr(m, p->table), kv, hit_once);
    b = f->b;
    LLVMValueRef head, has;
    if (p->lookup) {
        LLVMValueRef fn = NULL;
        st = cg_extern(m, "cg_pipeline_join_lookup",
                       cg_fn_type(m, ptr, (LLVMTypeRef[]){ptr, i64}, 2), (void *)p->lookup, &fn);
        if (st) goto out;
        head = cg_call(f, fn,
                       (LLVMValueRef[]){byte_ptr(g, b, g->wstate, p->table_state_offset), hash}, 2);
        b = f->b;
        has = LLVMBuildIsNotNull(b, head, "");
    } else {
        LLVMValueRef table =
            p->table_in_state
                ? LLVMBuildLoad2(b, ptr, byte_ptr(g, b, g->wstate, p->table_state_offset), "")
                : cg_const_ptr(m, p->table);
        if (p->filter && !p->table_in_state)
            filtered = probe_filter(g, p->filter_offset, p->filter_mask_offset, table, hash);
        b = f->b;
        LLVMValueRef dir = LLVMBuildLoad2(b, ptr, byte_ptr(g, b, table, p->dir_offset), "");
        LLVMValueRef mask = LLVMBuildLoad2(b, i64, byte_ptr(g, b, table, p->mask_offset), "");
        LLVMValueRef w = cg_load_elem(f, i64, dir, LLVMBuildAnd(b, hash, mask, ""));
        LLVMValueRef tag = LLVMBuildShl(
            b, cg_const_i64(m, 1),
            LLVMBuildAdd(b, cg_const_i64(m, 48),
                         LLVMBuildAnd(b, LLVMBuildLShr(b, hash, cg_const_i64(m, 32), ""),
                                      cg_const_i64(m, 15), ""),
                         ""),
            "");
        has = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, w, tag, ""), cg_const_i64(m, 0), "");
        head = LLVMBuildIntToPtr(b, LLVMBuildAnd(b, w, cg_const_i64(m, 0x0000FFFFFFFFFFFFLL), ""),
                                 ptr, "");
    }
    if (anynull) has = LLVMBuildAnd(b, has, LLVMBuildNot(b, anynull, ""), "");
    cg_var cur = cg_var_new(f, ptr, NULL, "entry");
    cg_var_set(f, cur, LLVMBuildSelect(b, has, head, LLVMConstNull(ptr), ""));
    if (filtered || kb_rejected) { /* a rejected row walks an empty chain */
        LLVMBasicBlockRef start = cg_block(f, "probe.start");
        LLVMBuildBr(b, start);
        LLVMBasicBlockRef rejected[2] = {filtered, kb_rejected};
        for (int r = 0; r < 2; r++) {
            if (!rejected[r]) continue;
            LLVMPositionBuilderAtEnd(b, rejected[r]);
            cg_var_set(f, cur, LLVMConstNull(ptr));
            LLVMBuildBr(b, start);
        }
        LLVMPositionBuilderAtEnd(b, start);
    }
    cg_var found = cg_var_new(f, ptr, NULL, "found"); /* LEFT, SINGLE, MARK */
    cg_var_set(f, found, LLVMConstNull(ptr));
    cg_var sawnull = cg_var_new(f, cg_i1(m), NULL, "sawnull"); /* MARK */
    cg_var_set(f, sawnull, cg_const_bool(m, false));

    /* keybits_unique: every build column is the key, so a match found in
     * the chain and one the bitmap decides bind the same values. The
     * bitmap's match walks a chain of one stand-in entry (no next, the
     * row's hash and key) instead of having its own copy of the steps
     * after the probe, which doubled everything downstream of q08's and
     * q11's probes. Through the loop's header, not into its body: a second
     * way into the loop would make it irreducible, and q03's lineitem
     * pipeline ran a fifth slower that way. */
    bool shared = p->kind == CG_JOIN_INNER && p->keybits_unique && !p->flag_matches;

    LLVMBasicBlockRef outer = g->next;
    LLVMBasicBlockRef loop = cg_block(f, "chain"), body = cg_block(f, "chain.body");
    LLVMBasicBlockRef keys = cg_block(f, "chain.keys"), advance = cg_block(f, "chain.next");
    LLVMBasicBlockRef end = cg_block(f, "chain.end");
    LLVMBuildBr(b, loop);
    LLVMPositionBuilderAtEnd(b, loop);
    LLVMValueRef e = cg_var_get(f, cur);
    LLVMBuildCondBr(b, LLVMBuildIsNull(b, e, ""), end, body);

    LLVMPositionBuilderAtEnd(b, body);
    LLVMValueRef eh = LLVMBuildLoad2(b, i64, byte_ptr(g, b, e, 8), "");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, eh, hash, ""), keys, advance);
    LLVMPositionBuilderAtEnd(b, keys);
    snap sn = {NULL, 0};
    st = snap_take(g, &sn);
    if (st) goto out;
    g->entries[i] = e;
    LLVMValueRef row = byte_ptr(g, b, e, p->entry_head);
    for (uint32_t k = 0; k < nk; k++) {
        uint64_t off =
            p->layout ? p->layout->offset[first + k] : (uint64_t)(first + k) * CG_ROW_SLOT;
        bv[k].v = LLVMBuildLoad2(b, cg_type(m, types[k].id), byte_ptr(g, b, row, off), "");
        /* a NULL build key never reaches the table */
    }
    LLVMValueRef eq = nk ? cg_equal_vals(f, kv, bv, types, nk, false) : cg_const_bool(m, true);
    b = f->b;
    if (p->residual) {
        LLVMBasicBlockRef res = cg_block(f, "chain.residual");
        LLVMBuildCondBr(b, eq, res, advance);
        LLVMPositionBuilderAtEnd(b, res);
        if (p->kind == CG_JOIN_MARK) {
            /* x op ANY (...): a NULL comparison makes the mark NULL unless
             * another row matches. */
            cg_val rv;
            st = cg_expr_compile(f, g->d->ctx, p->residual, &g->bind, &rv);
            b = f->b;
            if (!st) {
                eq = LLVMBuildICmp(b, LLVMIntNE, rv.v, LLVMConstInt(i8, 0, 0), "");
                if (rv.null) {
                    eq = LLVMBuildAnd(b, eq, LLVMBuildNot(b, rv.null, ""), "");
                    cg_var_set(f, sawnull, LLVMBuildOr(b, cg_var_get(f, sawnull), rv.null, ""));
                }
            }
        } else {
            st = cg_expr_compile_pred(f, g->d->ctx, p->residual, &g->bind, &eq);
        }
        b = f->b;
    }
    if (!st) {
        LLVMBasicBlockRef match = cg_block(f, "chain.match");
        LLVMBuildCondBr(b, eq, match, advance);
        LLVMPositionBuilderAtEnd(b, match);
        if (p->flag_matches) {
            /* Set once: a build row matched by many probe rows (q22: a
             * customer's orders) is then only read, so its cache line is
             * not written back and forth between the workers. */
            LLVMValueRef fp = byte_ptr(g, b, e, p->flag_offset);
            LLVMValueRef old = LLVMBuildLoad2(b, i8, fp, "");
            LLVMSetOrdering(old, LLVMAtomicOrderingMonotonic);
            LLVMBasicBlockRef set = cg_block(f, "chain.flag"), done = cg_block(f, "chain.flagged");
            LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, old, LLVMConstInt(i8, 0, 0), ""), set,
                            done);
            LLVMPositionBuilderAtEnd(b, set);
            LLVMValueRef fl = LLVMBuildStore(b, LLVMConstInt(i8, 1, 0), fp);
            LLVMSetOrdering(fl, LLVMAtomicOrderingMonotonic);
            LLVMBuildBr(b, done);
            LLVMPositionBuilderAtEnd(b, done);
        }
        switch (p->kind) {
        case CG_JOIN_INNER:
            st = shared ? emit_key_match(g, i, kv, advance) : emit_rest(g, i, e, advance);
            break;
        case CG_JOIN_FLAG: /* the flag is set; every match needs it */
            LLVMBuildBr(b, advance);
            break;
        case CG_JOIN_LEFT:
            cg_var_set(f, found, e);
            st = emit_rest(g, i, e, advance);
            break;
        case CG_JOIN_SEMI:
        case CG_JOIN_MARK:
            cg_var_set(f, found, e);
            LLVMBuildBr(b, hit_once);
            break;
        case CG_JOIN_ANTI:
            LLVMBuildBr(b, outer);
            break;
        case CG_JOIN_SINGLE: {
            LLVMBasicBlockRef dup = cg_block(f, "chain.dup"),
                              first_hit = cg_block(f, "chain.first");
            LLVMBuildCondBr(b, LLVMBuildIsNull(b, cg_var_get(f, found), ""), first_hit, dup);
            LLVMPositionBuilderAtEnd(b, dup);
            cg_call_checked(f, single_error, (LLVMValueRef[]){f->err}, 1);
            LLVMBuildBr(f->b, first_hit);
            LLVMPositionBuilderAtEnd(f->b, first_hit);
            cg_var_set(f, found, e);
            LLVMBuildBr(f->b, advance);
            break;
        }
        }
    }
    g->entries[i] = NULL;
    snap_restore(g, &sn);
    if (st) goto out;
    b = f->b;
    LLVMPositionBuilderAtEnd(b, advance);
    cg_var_set(f, cur, LLVMBuildLoad2(b, ptr, e, ""));
    LLVMBuildBr(b, loop);

    /* After the chain. */
    LLVMPositionBuilderAtEnd(b, end);
    switch (p->kind) {
    case CG_JOIN_INNER:
    case CG_JOIN_SEMI:
    case CG_JOIN_FLAG:
        LLVMBuildBr(b, outer);
        LLVMPositionBuilderAtEnd(b, hit_once);
        if (p->kind == CG_JOIN_SEMI) {
            st = emit_rest(g, i, NULL, outer);
        } else if (shared) {
            uint32_t row_bytes = p->layout ? p->layout->bytes : cg_row_bytes(p->ncols);
            cg_var one =
                cg_var_new(f, LLVMArrayType(i8, p->entry_head + row_bytes), NULL, "entry.one");
            LLVMSetAlignment(one.slot, 16);
            uint64_t off = p->entry_head +
                           (p->layout ? p->layout->offset[first] : (uint64_t)first * CG_ROW_SLOT);
            LLVMBuildStore(b, LLVMConstNull(ptr), one.slot);
            LLVMBuildStore(b, hash, byte_ptr(g, b, one.slot, 8));
            LLVMBuildStore(b, kv[0].v, byte_ptr(g, b, one.slot, off));
            cg_var_set(f, cur, one.slot);
            LLVMBuildBr(b, loop);
        } else
            LLVMBuildBr(b, outer);
        break;
    case CG_JOIN_ANTI:
        st = emit_rest(g, i, NULL, outer);
        LLVMPositionBuilderAtEnd(f->b, hit_once);
        LLVMBuildBr(f->b, outer);
        break;
    case CG_JOIN_LEFT:
    case CG_JOIN_SINGLE: {
        LLVMBasicBlockRef none = cg_block(f, "chain.none");
        LLVMValueRef fe = cg_var_get(f, found);
        LLVMBuildCondBr(b, LLVMBuildIsNull(b, fe, ""), none, hit_once);
        LLVMPositionBuilderAtEnd(b, hit_once);
        if (p->kind == CG_JOIN_SINGLE)
            st = emit_rest(g, i, fe, outer);
        else
            LLVMBuildBr(b, outer);
        if (!st) {
            LLVMPositionBuilderAtEnd(f->b, none);
            st = emit_rest(g, i, NULL, outer);
        }
        break;
    }
    case CG_JOIN_MARK: {
        /* No match: NULL when a NULL took part (the probe key over a
         * non-empty build side, or a NULL build key), else false. */
        LLVMValueRef rows = LLVMBuildLoad2(b, i64, cg_const_ptr(m, p->build_rows), "");
        LLVMValueRef nulls = LLVMBuildLoad2(b, i64, cg_const_ptr(m, p->build_null_rows), "");
        LLVMValueRef some = LLVMBuildICmp(b, LLVMIntNE, rows, cg_const_i64(m, 0), "");
        LLVMValueRef isnull = LLVMBuildICmp(b, LLVMIntNE, nulls, cg_const_i64(m, 0), "");
        if (anynull) isnull = LLVMBuildOr(b, isnull, anynull, "");
        isnull = LLVMBuildAnd(b, isnull, some, "");
        isnull = LLVMBuildOr(b, isnull, cg_var_get(f, sawnull), "");
        LLVMBasicBlockRef emit = cg_block(f, "mark.emit");
        cg_var mv = cg_var_new(f, i8, NULL, "mark");
        cg_var mn = cg_var_new(f, cg_i1(m), NULL, "mark.null");
        cg_var_set(f, mv, LLVMConstInt(i8, 0, 0));
        cg_var_set(f, mn, isnull);
        LLVMBuildBr(b, emit);
        LLVMPositionBuilderAtEnd(b, hit_once);
        cg_var_set(f, mv, LLVMConstInt(i8, 1, 0));
        cg_var_set(f, mn, cg_const_bool(m, false));
        LLVMBuildBr(b, emit);
        LLVMPositionBuilderAtEnd(b, emit);
        snap ms = {NULL, 0};
        st = snap_take(g, &ms);
        if (st) goto out;
        g->bind.vals[p->mark] = (cg_val){cg_var_get(f, mv), cg_var_get(f, mn)};
        st = emit_rest(g, i, NULL, outer);
        snap_restore(g, &ms);
        break;
    }
    }
    if (!st) LLVMPositionBuilderAtEnd(f->b, cg_block(f, "probe.after"));
out:
    free(kv);
    free(bv);
    free(types);
    return st;
}

/* One row through the steps from `first` on into the sink; rows a step
 * rejects and rows the sink took both go on at the block after it. */
static sto_status consume_row(gen *g, uint32_t first)
{
    g->next = cg_block(g->f, "next");
    STO_TRY(consume_from(g, first));
    LLVMBuildBr(g->f->b, g->next);
    LLVMPositionBuilderAtEnd(g->f->b, g->next);
    return STO_OK;
}

static sto_status consume_from(gen *g, uint32_t first)
{
    const cg_pipeline_desc *d = g->d;
    for (uint32_t i = first; i < d->nsteps; i++) {
        const cg_step *s = &d->steps[i];
        if (s->kind == CG_STEP_PROBE) return probe_step(g, i);
        if (s->kind == CG_STEP_FILTER) {
            LLVMValueRef pass;
            STO_TRY(cg_expr_compile_pred(g->f, d->ctx, s->pred, &g->bind, &pass));
            LLVMBasicBlockRef keep = cg_block(g->f, "pass");
            cg_br_combined(g->f, pass, keep, g->next);
            LLVMPositionBuilderAtEnd(g->f->b, keep);
            count(g, i);
            continue;
        }
        for (uint32_t k = 0; k < s->count; k++) {
            const sql_proj_item *it = &s->items[k];
            if (it->expr->kind == SQL_BEXPR_COLUMN && it->expr->column == it->id) continue;
            cg_val v;
            STO_TRY(cg_expr_compile(g->f, d->ctx, it->expr, &g->bind, &v));
            g->bind.vals[it->id] = v;
        }
        count(g, i);
    }
    count(g, d->nsteps);
    return d->sink.kind == CG_SINK_ROWS   ? sink_rows(g)
           : d->sink.kind == CG_SINK_JOIN ? sink_join(g)
                                          : sink_agg(g);
}

/* --- producers --------------------------------------------------------------- */

/* Rows per batch of a filtered scan: its selection vector (4 KiB of row
 * offsets) stays in L1 beside the batch's column values. */
#define BATCH_ROWS 1024

/* The loop of a pipeline whose first step is a filter, in two loops per
 * batch of BATCH_ROWS rows: the first evaluates the filter for every row,
 * with no branch on the result, and appends the offset of each row that
 * passes to a selection vector; the second runs the later steps and the
 * sink for the selected rows. In one loop, a row that passed took a branch
 * the predictor could not know and then loaded the columns only the later
 * steps need from cache lines no earlier row had touched: with few rows
 * passing (TPC-H Q6: 2 %) the core waited for one such miss at a time. The
 * second loop's iterations do not depend on each other's branches, so
 * their misses overlap. The filter's column values are loaded again in the
 * second loop (from L1: the binding forgets them between the loops). A
 * filter the planner expects to keep nearly every row (Q1's keeps 96 %)
 * stays in one loop: its branch is predictable and nothing is sparse, so
 * the selection vector would only add its store and reload per row.
 *
 * A probe that most rows miss — the first step, or the one after the first
 * filter — puts its key bitmap or semi-join filter test into the first
 * loop as well (probe_pretests), so the selection vector holds only the
 * rows that may have a partner: q08's 6M lineitems against a bitmap of
 * 1,451 parts went through the hash, three branches and the directory's
 * words one row at a time. `nfilter` is 1 when steps[0] is the filter
 * tested there, `pretest` the index of the pre-tested probe or -1. */
static sto_status produce_batched(gen *g, LLVMValueRef lo, LLVMValueRef hi, uint32_t nfilter,
                                  int pretest)
{
    cg_fn *f = g->f;
    cg_module *m = g->m;
    LLVMBuilderRef b = f->b;
    LLVMTypeRef i64 = cg_i64(m), i32 = cg_i32(m);
    LLVMValueRef zero = cg_const_i64(m, 0);
    LLVMValueRef outer_row = f->row;
    cg_var sel = cg_var_new(f, LLVMArrayType2(i32, BATCH_ROWS), NULL, "sel");
    /* Both loops test at their end, like cg_loop (ir.h): the batch loop
     * after a guard, the filter loop without one (a batch has a row). */
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(b);
    LLVMBasicBlockRef body = cg_block(f, "batch.body"), exit = cg_block(f, "batch.exit");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, lo, hi, ""), body, exit);
    LLVMPositionBuilderBefore(g->pre, LLVMGetBasicBlockTerminator(pre));

    LLVMPositionBuilderAtEnd(b, body);
    LLVMValueRef start = LLVMBuildPhi(b, i64, "batch");
    LLVMAddIncoming(start, &lo, &pre, 1);
    LLVMValueRef full = LLVMBuildNSWAdd(b, start, cg_const_i64(m, BATCH_ROWS), "");
    LLVMValueRef stop =
        LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, full, hi, ""), full, hi, "");

    /* the filter over the batch; a pre-test alone is skipped (every row
     * selected) when the run time built nothing for it to test */
    LLVMBasicBlockRef fbody = cg_block(f, "filter.body"), fdone = cg_block(f, "filter.done");
    LLVMValueRef built = pretest >= 0 ? probe_pretest_built(g, g->d->steps[pretest].probe) : NULL;
    g->pretested = pretest;
    LLVMBasicBlockRef fill = NULL, fill_end = NULL;
    LLVMValueRef fill_n = NULL;
    if (!nfilter) {
        fill = cg_block(f, "fill.body");
        LLVMBuildCondBr(b, built, fbody, fill);
        LLVMPositionBuilderAtEnd(b, fill);
        LLVMValueRef r = LLVMBuildPhi(b, i64, "fill");
        LLVMAddIncoming(r, &zero, &body, 1);
        LLVMValueRef at = LLVMBuildGEP2(b, sel.type, sel.slot, (LLVMValueRef[]){zero, r}, 2, "");
        LLVMBuildStore(b, LLVMBuildTrunc(b, r, i32, ""), at);
        LLVMValueRef r1 = LLVMBuildNUWAdd(b, r, cg_const_i64(m, 1), "");
        fill_end = LLVMGetInsertBlock(b);
        LLVMAddIncoming(r, &r1, &fill_end, 1);
        fill_n = LLVMBuildSub(b, stop, start, "");
        LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, r1, fill_n, ""), fill, fdone);
    } else {
        LLVMBuildBr(b, fbody);
    }
    LLVMPositionBuilderAtEnd(b, fbody);
    LLVMValueRef row = LLVMBuildPhi(b, i64, "row");
    LLVMValueRef n = LLVMBuildPhi(b, i64, "selected");
    LLVMAddIncoming(row, &start, &body, 1);
    LLVMAddIncoming(n, &zero, &body, 1);
    f->row = g->row = row;
    LLVMValueRef pass;
    if (nfilter)
        STO_TRY(cg_expr_compile_pred(f, g->d->ctx, g->d->steps[0].pred, &g->bind, &pass));
    else
        STO_TRY(probe_pretest(g, g->d->steps[pretest].probe, &pass));
    LLVMValueRef at = LLVMBuildGEP2(b, sel.type, sel.slot, (LLVMValueRef[]){zero, n}, 2, "");
    LLVMBuildStore(b, LLVMBuildTrunc(b, LLVMBuildSub(b, row, start, ""), i32, ""), at);
    LLVMValueRef n1 = LLVMBuildNUWAdd(b, n, LLVMBuildZExt(b, pass, i64, ""), "");
    LLVMValueRef row1 = LLVMBuildNSWAdd(b, row, cg_const_i64(m, 1), "");
    LLVMBasicBlockRef latch = LLVMGetInsertBlock(b);
    LLVMAddIncoming(row, &row1, &latch, 1);
    LLVMAddIncoming(n, &n1, &latch, 1);
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, row1, stop, ""), fbody, fdone);
    LLVMPositionBuilderAtEnd(b, fdone);
    LLVMValueRef selected = n1;
    if (fill) {
        selected = LLVMBuildPhi(b, i64, "selected");
        LLVMAddIncoming(selected, (LLVMValueRef[]){n1, fill_n},
                        (LLVMBasicBlockRef[]){latch, fill_end}, 2);
    }
    cg_binding_reset(&g->bind, false);

    /* After a filter, the probe's pre-test over the rows it kept, which
     * keeps those that pass at the front of the selection vector (the
     * filter's count for EXPLAIN ANALYZE is the rows it kept); skipped
     * when the run time built nothing to test. */
    bool compacted = nfilter && pretest >= 0;
    if (compacted) {
        if (g->d->count_rows) {
            LLVMValueRef cp = byte_ptr(g, b, g->wstate, g->d->counters_offset);
            LLVMBuildStore(b, LLVMBuildAdd(b, LLVMBuildLoad2(b, i64, cp, ""), n1, ""), cp);
        }
        LLVMBasicBlockRef from = LLVMGetInsertBlock(b);
        LLVMBasicBlockRef test = cg_block(f, "pretest"), tested = cg_block(f, "pretest.done");
        LLVMBuildCondBr(b, built, test, tested);
        LLVMPositionBuilderAtEnd(b, test);
        cg_var kept = cg_var_new(f, i64, NULL, "kept");
        cg_var_set(f, kept, zero);
        cg_loop tl;
        cg_loop_begin(f, &tl, zero, n1);
        at = LLVMBuildGEP2(b, sel.type, sel.slot, (LLVMValueRef[]){zero, tl.index}, 2, "");
        LLVMValueRef r = LLVMBuildLoad2(b, i32, at, "");
        f->row = g->row = LLVMBuildNSWAdd(b, start, LLVMBuildZExt(b, r, i64, ""), "");
        LLVMValueRef t;
        STO_TRY(probe_pretest(g, g->d->steps[pretest].probe, &t));
        LLVMValueRef k = cg_var_get(f, kept);
        LLVMBuildStore(b, r,
                       LLVMBuildGEP2(b, sel.type, sel.slot, (LLVMValueRef[]){zero, k}, 2, ""));
        cg_var_set(f, kept, LLVMBuildNUWAdd(b, k, LLVMBuildZExt(b, t, i64, ""), ""));
        cg_loop_end(f, &tl);
        cg_binding_reset(&g->bind, false);
        LLVMValueRef k_end = cg_var_get(f, kept);
        LLVMBasicBlockRef test_end = LLVMGetInsertBlock(b);
        LLVMBuildBr(b, tested);
        LLVMPositionBuilderAtEnd(b, tested);
        selected = LLVMBuildPhi(b, i64, "selected");
        LLVMAddIncoming(selected, (LLVMValueRef[]){k_end, n1},
                        (LLVMBasicBlockRef[]){test_end, from}, 2);
    }

    /* the rest of the pipeline over the selected rows */
    cg_loop loop;
    cg_loop_begin(f, &loop, zero, selected);
    at = LLVMBuildGEP2(b, sel.type, sel.slot, (LLVMValueRef[]){zero, loop.index}, 2, "");
    LLVMValueRef off = LLVMBuildZExt(b, LLVMBuildLoad2(b, i32, at, ""), i64, "");
    f->row = g->row = LLVMBuildNSWAdd(b, start, off, "");
    if (nfilter && !compacted) count(g, 0);
    STO_TRY(consume_row(g, nfilter));
    cg_loop_end(f, &loop);
    LLVMBasicBlockRef done = LLVMGetInsertBlock(b);
    LLVMAddIncoming(start, &full, &done, 1);
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, full, hi, ""), body, exit);
    LLVMPositionBuilderAtEnd(b, exit);
    f->row = outer_row;
    return STO_OK;
}

static sto_status produce_loop(gen *g)
{
    const cg_source *s = &g->d->source;
    cg_fn *f = g->f;
    cg_module *m = g->m;
    LLVMBuilderRef b = f->b;
    LLVMValueRef begin = cg_fn_param(f, 2), end = cg_fn_param(f, 3);
    LLVMValueRef lo = begin, hi = end;
    if (s->kind == CG_SOURCE_CHUNKS) {
        LLVMValueRef idx = LLVMBuildLShr(b, begin, cg_const_i64(m, 32), "");
        /* an empty table has no chunk array; its pipeline never runs a
         * morsel, but a load from a null constant is undefined behaviour
         * the IR passes may turn into "unreachable": read a real array */
        static sto_chunk *const no_chunks[1] = {NULL};
        const void *chunks = s->chunks ? (const void *)s->chunks : (const void *)no_chunks;
        g->chunk = cg_load_elem(f, cg_ptr(m), cg_const_ptr(m, chunks), idx);
        LLVMValueRef mask = cg_const_i64(m, 0xffffffffLL);
        lo = LLVMBuildAnd(b, begin, mask, "");
        hi = LLVMBuildAnd(b, end, mask, "");
    } else {
        g->rows_base = LLVMBuildLoad2(b, cg_ptr(m), cg_const_ptr(m, s->rows_cell), "");
    }
    const cg_sink *k = &g->d->sink;
    if (k->kind == CG_SINK_AGG && k->nkeys == 0) {
        /* One group: find its states once per call, not per tuple. */
        LLVMTypeRef ptr = cg_ptr(m);
        sto_status st = STO_OK;
        LLVMValueRef find = helper(g, "cg_pipeline_agg_find", (void *)k->find,
                                   (LLVMTypeRef[]){ptr, ptr, cg_i64(m), ptr, ptr}, 5, &st);
        if (st) return st;
        cg_var key = cg_var_new(f, LLVMArrayType(cg_i8(m), 16), NULL, "key0");
        LLVMSetAlignment(key.slot, 16);
        g->agg_states = cg_var_new(f, ptr, NULL, "states0");
        cg_call_checked(f, find,
                        (LLVMValueRef[]){f->err, sink_state(g), cg_const_i64(m, 0), key.slot,
                                         g->agg_states.slot},
                        5);
        b = f->b;
    }
    const cg_step *first = g->d->nsteps ? &g->d->steps[0] : NULL;
    uint32_t nfilter = first && first->kind == CG_STEP_FILTER;
    int pretest = cg_steps_pretest(g->d->steps, g->d->nsteps, nfilter) ? (int)nfilter : -1;
    if ((nfilter && first->pass_share < CG_DENSE_FILTER_SHARE) || pretest >= 0)
        return produce_batched(g, lo, hi, nfilter, pretest);
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(b);
    cg_loop loop;
    cg_loop_begin(f, &loop, lo, hi);
    LLVMPositionBuilderBefore(g->pre, LLVMGetBasicBlockTerminator(pre));
    g->row = loop.index;
    STO_TRY(consume_row(g, 0));
    cg_loop_end(f, &loop);
    return STO_OK;
}

static sto_status produce_values(gen *g)
{
    const cg_source *s = &g->d->source;
    cg_fn *f = g->f;
    for (uint32_t r = 0; r < s->nrows; r++) {
        cg_binding_reset(&g->bind, false);
        f->row = cg_const_i64(g->m, r);
        const sql_bexpr_list *row = &s->rows[r];
        for (uint32_t i = 0; i < s->ncols && i < row->count; i++) {
            cg_val v;
            STO_TRY(cg_expr_compile(f, g->d->ctx, row->items[i], &g->bind, &v));
            g->bind.vals[s->ids[i]] = v;
        }
        STO_TRY(consume_row(g, 0));
    }
    return STO_OK;
}

/* --- compiling ----------------------------------------------------------------- */

static sto_status build(const cg_pipeline_desc *d, cg_module *m)
{
    LLVMTypeRef ptr = cg_ptr(m);
    LLVMTypeRef params[] = {ptr, ptr, cg_i64(m), cg_i64(m)};
    cg_fn f;
    STO_TRY(cg_fn_begin(&f, m, "pipeline", params, 4));
    gen g;
    memset(&g, 0, sizeof(g));
    g.pretested = -1;
    g.d = d;
    g.f = &f;
    g.m = m;
    g.wstate = cg_fn_param(&f, 1);
    g.pre = LLVMCreateBuilderInContext(cg_module_context(m));
    uint32_t n = d->source.ncols ? d->source.ncols : 1;
    g.col_base = calloc(n, sizeof(*g.col_base));
    g.col_valid = calloc(n, sizeof(*g.col_valid));
    g.entries = calloc(d->nsteps ? d->nsteps : 1, sizeof(*g.entries));
    sto_status st =
        (!g.pre || !g.col_base || !g.col_valid || !g.entries) ? sto_error_oom() : STO_OK;
    if (!st) st = cg_binding_init(&g.bind, d->ctx, load_column, &g);
    if (!st) {
        if (d->params) g.bind.params = cg_const_ptr(m, d->params);
        g.bind.strings = byte_ptr(&g, f.b, g.wstate, d->strings_offset);
        st = d->source.kind == CG_SOURCE_VALUES ? produce_values(&g) : produce_loop(&g);
        if (!st) st = sink_agg_runs_end(&g);
        if (!st) cg_fn_return_ok(&f);
        cg_binding_free(&g.bind);
    }
    if (g.pre) LLVMDisposeBuilder(g.pre);
    free(g.col_base);
    free(g.col_valid);
    free(g.entries);
    sto_status end = cg_fn_end(&f);
    if (st) {
        sto_status_free(end);
        return st;
    }
    return end;
}

sto_status cg_pipeline_compile(cg_jit *jit, const cg_pipeline_desc *d, cg_mode mode,
                               cg_pipeline_code *out)
{
    memset(out, 0, sizeof(*out));
    int64_t t0 = cg_clock_us();
    cg_module *m = NULL;
    char name[32];
    snprintf(name, sizeof(name), "p%u", d->id);
    STO_TRY(cg_module_create(jit, d->name ? d->name : name, &m));
    sto_status st = build(d, m);
    if (st) {
        cg_module_destroy(m);
        return st;
    }
    out->build_us = cg_clock_us() - t0;
    if (d->cache)
        STO_TRY(cg_jit_compile_cached(jit, m, mode, &out->code, &out->cache_hit));
    else
        STO_TRY(cg_jit_compile(jit, m, mode, &out->code));
    out->fn = (cg_pipeline_fn)cg_code_fn(out->code, "pipeline");
    out->compile_us = cg_clock_us() - t0;
    out->mode = mode;
    if (!out->fn) {
        cg_pipeline_code_free(out);
        return sto_error(STO_INTERNAL_ERROR, "compiled pipeline has no entry point");
    }
    return STO_OK;
}

void cg_pipeline_code_free(cg_pipeline_code *pc)
{
    if (pc->code) sto_status_free(cg_code_free(pc->code));
    pc->code = NULL;
    pc->fn = NULL;
}
