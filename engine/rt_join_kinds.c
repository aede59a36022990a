/*
 * rt_join_kinds.c — what a probe row turns into, per join kind.
 *
 * Every algorithm finds candidates its own way (a chain of the shared
 * table, a partition's chain, a run of equal keys in a sorted array) and
 * feeds them to the same small state machine, so the semantics of the eight
 * join kinds (rt_join.h) live here once. Generated code that inlines a probe
 * follows the same rules.
 */
#include "engine/rt_join.h"

#include <string.h>

void eng_join_probe_begin(eng_join_probe *p, const eng_join_spec *spec, uint64_t hash,
                          const uint8_t *row, bool key_null)
{
    p->spec = spec;
    p->row = row;
    p->hash = hash;
    p->key_null = key_null;
    p->done = key_null; /* a NULL key matches nothing */
    p->matches = 0;
    p->single = NULL;
}

int32_t eng_join_single_error(cg_error *err)
{
    err->detail = sto_error(STO_CARDINALITY_VIOLATION,
                            "more than one row returned by a subquery used as an expression");
    return err->detail ? CG_ERR_RUNTIME : CG_ERR_NONE;
}

static void set_matched(eng_join_entry *e)
{
    /* Read first: once set, the line is not written again by every probe. */
    if (!__atomic_load_n(&e->matched, __ATOMIC_RELAXED))
        __atomic_store_n(&e->matched, 1, __ATOMIC_RELAXED);
}

int32_t eng_join_probe_candidate(cg_error *err, eng_join_probe *p, eng_join_entry *e)
{
    const eng_join_spec *s = p->spec;
    if (p->done || e->hash != p->hash) return CG_ERR_NONE;
    const uint8_t *build = eng_join_row(e);
    if (!s->keys_eq(s->ctx, p->row, build)) return CG_ERR_NONE;
    if (s->residual && !s->residual(s->ctx, p->row, build)) return CG_ERR_NONE;
    p->matches++;
    switch (s->kind) {
    case ENG_JOIN_INNER:
    case ENG_JOIN_LEFT:
        return s->emit(err, s->ctx, p->row, build, 0);
    case ENG_JOIN_RIGHT:
    case ENG_JOIN_FULL:
        set_matched(e);
        return s->emit(err, s->ctx, p->row, build, 0);
    case ENG_JOIN_SEMI:
        p->done = true;
        return s->emit(err, s->ctx, p->row, NULL, 0);
    case ENG_JOIN_ANTI:
    case ENG_JOIN_MARK:
        p->done = true;
        return CG_ERR_NONE;
    case ENG_JOIN_SINGLE:
        if (p->matches > 1) return eng_join_single_error(err);
        p->single = build;
        return CG_ERR_NONE;
    default:
        return CG_ERR_RUNTIME;
    }
}

int32_t eng_join_probe_end(cg_error *err, eng_join_probe *p, const eng_join_build_info *build)
{
    const eng_join_spec *s = p->spec;
    switch (s->kind) {
    case ENG_JOIN_LEFT:
    case ENG_JOIN_FULL:
    case ENG_JOIN_ANTI:
        return p->matches ? CG_ERR_NONE : s->emit(err, s->ctx, p->row, NULL, 0);
    case ENG_JOIN_SINGLE:
        return s->emit(err, s->ctx, p->row, p->single, 0);
    case ENG_JOIN_MARK: {
        int mark = ENG_JOIN_MARK_FALSE;
        if (p->matches)
            mark = ENG_JOIN_MARK_TRUE;
        else if (build->rows && (p->key_null || build->null_rows))
            mark = ENG_JOIN_MARK_NULL;
        return s->emit(err, s->ctx, p->row, NULL, mark);
    }
    default:
        return CG_ERR_NONE;
    }
}

int32_t eng_join_probe_chain(cg_error *err, const eng_join_spec *spec,
                             const eng_join_build_info *build, uint64_t hash, const uint8_t *row,
                             bool key_null, eng_join_entry *chain)
{
    eng_join_probe p;
    eng_join_probe_begin(&p, spec, hash, row, key_null);
    for (eng_join_entry *e = chain; e && !p.done; e = e->next) {
        int32_t rc = eng_join_probe_candidate(err, &p, e);
        if (rc) return rc;
    }
    return eng_join_probe_end(err, &p, build);
}

int32_t eng_join_emit_unmatched(cg_error *err, const eng_join_spec *spec, uint8_t *base,
                                uint32_t stride, uint64_t count)
{
    for (uint64_t i = 0; i < count; i++) {
        eng_join_entry *e = eng_join_entry_at(base, stride, i);
        if (__atomic_load_n(&e->matched, __ATOMIC_RELAXED)) continue;
        int32_t rc = spec->emit(err, spec->ctx, NULL, eng_join_row(e), 0);
        if (rc) return rc;
    }
    return CG_ERR_NONE;
}
