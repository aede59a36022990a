/*
 * join_check.h — what the join tests share: generated inputs, a naive
 * nested-loop reference built straight from SQL's definitions of the join
 * kinds, and a driver that runs a join with one of the three algorithms
 * (shared table, radix, sort-merge) on engine/sched the way the executor
 * does: materialize per worker, then each algorithm step as a pipeline of
 * slices, then the probe, then the unmatched-row scan.
 *
 * Rows are a plain struct (the runtime never looks inside a row); hashing,
 * key comparison, the residual predicate and the sort key are callbacks
 * here, as they are generated code in a query.
 */
#ifndef RACKDB_TESTS_ENGINE_JOIN_CHECK_H
#define RACKDB_TESTS_ENGINE_JOIN_CHECK_H

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/mem.h"
#include "engine/rt_hashtable.h"
#include "engine/rt_join.h"
#include "engine/rt_radix.h"
#include "engine/rt_sortmerge.h"
#include "engine/sched.h"
#include "storage/types.h"

/* --- inputs ------------------------------------------------------------------ */

typedef struct jrow {
    int64_t k1;
    sto_str k2;
    int64_t id, v;
    uint8_t null_k1, null_k2;
} jrow;

enum { JKEY_INT = 1, JKEY_STR = 2, JKEY_BOTH = 3 };

typedef struct jinput {
    jrow *build, *probe;
    uint64_t nb, np;
    int keys;      /* JKEY_ */
    bool residual; /* (probe.v + build.v) % 3 != 0 after key equality */
    bool bad_hash; /* a hash with 3 values: long chains of unequal keys */
    char **heap;   /* the bytes of the strings */
    uint64_t nheap, heapcap;
} jinput;

typedef enum jdist { JD_UNIFORM, JD_ZIPF, JD_HOT } jdist;

static inline uint64_t jrand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static inline uint64_t jmix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

static inline uint64_t jkey_value(uint64_t *s, jdist d, uint64_t domain)
{
    double u = (double)(jrand(s) >> 11) / 9007199254740992.0;
    switch (d) {
    case JD_ZIPF: /* density about 1/x over [1, domain] */
        return (uint64_t)floor(exp(u * log((double)domain)));
    case JD_HOT: /* 60% one key, the rest uniform */
        return u < 0.6 ? 1 : 1 + jrand(s) % domain;
    default:
        return 1 + jrand(s) % domain;
    }
}

/* The string key of number j: 11 to 14 bytes, so values sit on both sides
 * of the 12-byte inline limit; equal numbers give equal strings. */
static inline sto_str jstring(jinput *in, uint64_t j)
{
    unsigned len = 11 + (unsigned)(j % 4);
    char buf[32];
    snprintf(buf, sizeof(buf), "key%020llu", (unsigned long long)j);
    char *bytes = malloc(len);
    if (!bytes) abort();
    memcpy(bytes, buf + 23 - len, len); /* the last len characters */
    memcpy(bytes, "key", 3);
    if (in->nheap == in->heapcap) {
        in->heapcap = in->heapcap ? 2 * in->heapcap : 256;
        in->heap = realloc(in->heap, in->heapcap * sizeof(char *));
        if (!in->heap) abort();
    }
    in->heap[in->nheap++] = bytes;
    return sto_str_make(bytes, len);
}

static inline void jgen_side(jinput *in, jrow *rows, uint64_t n, uint64_t *seed, jdist d,
                             uint64_t domain, unsigned null_pct)
{
    for (uint64_t i = 0; i < n; i++) {
        jrow *r = &rows[i];
        memset(r, 0, sizeof(*r));
        uint64_t k = jkey_value(seed, d, domain);
        r->k1 = (int64_t)k - (int64_t)domain / 2;       /* negative keys too */
        r->k2 = jstring(in, k * 7 + (jrand(seed) % 2)); /* composite: 2 strings per int */
        r->id = (int64_t)i;
        r->v = (int64_t)(jrand(seed) % 100);
        r->null_k1 = jrand(seed) % 100 < null_pct;
        r->null_k2 = jrand(seed) % 100 < null_pct;
    }
}

static inline void jinput_make(jinput *in, uint64_t nb, uint64_t np, int keys, jdist db, jdist dp,
                               uint64_t domain, unsigned null_pct, uint64_t seed)
{
    memset(in, 0, sizeof(*in));
    in->nb = nb;
    in->np = np;
    in->keys = keys;
    in->build = calloc(nb ? nb : 1, sizeof(jrow));
    in->probe = calloc(np ? np : 1, sizeof(jrow));
    if (!in->build || !in->probe) abort();
    uint64_t s = seed * 2654435761u + 1;
    jgen_side(in, in->build, nb, &s, db, domain, null_pct);
    jgen_side(in, in->probe, np, &s, dp, domain, null_pct);
}

static inline void jinput_free(jinput *in)
{
    for (uint64_t i = 0; i < in->nheap; i++)
        free(in->heap[i]);
    free(in->heap);
    free(in->build);
    free(in->probe);
}

/* --- the callbacks generated code stands for ---------------------------------- */

static inline bool jkey_null(const jinput *in, const jrow *r)
{
    return ((in->keys & JKEY_INT) && r->null_k1) || ((in->keys & JKEY_STR) && r->null_k2);
}

static inline uint64_t jhash(const jinput *in, const jrow *r)
{
    uint64_t h = 0x9e3779b97f4a7c15ULL;
    if (in->keys & JKEY_INT) h = jmix(h ^ (uint64_t)r->k1);
    if (in->keys & JKEY_STR) {
        const char *p = sto_str_data(&r->k2);
        uint64_t f = 1469598103934665603ULL;
        for (uint32_t i = 0; i < r->k2.len; i++)
            f = (f ^ (uint8_t)p[i]) * 1099511628211ULL;
        h = jmix(h ^ f);
    }
    return in->bad_hash ? jmix(h % 3) : h;
}

static inline bool jkeys_equal(const jinput *in, const jrow *a, const jrow *b)
{
    if ((in->keys & JKEY_INT) && a->k1 != b->k1) return false;
    if ((in->keys & JKEY_STR) && !sto_str_eq(&a->k2, &b->k2)) return false;
    return true;
}

static inline bool jresidual(const jrow *p, const jrow *b)
{
    return (p->v + b->v) % 3 != 0;
}

/* --- outputs ------------------------------------------------------------------ */

typedef struct jout {
    int64_t probe, build; /* ids, -1 = none */
    int64_t mark;
} jout;

typedef struct jvec {
    jout *v;
    uint64_t n, cap;
} jvec;

static inline int jvec_push(jvec *o, int64_t p, int64_t b, int mark)
{
    if (o->n == o->cap) {
        uint64_t cap = o->cap ? o->cap * 2 : 256;
        jout *v = realloc(o->v, cap * sizeof(jout));
        if (!v) return -1;
        o->v = v;
        o->cap = cap;
    }
    o->v[o->n++] = (jout){p, b, mark};
    return 0;
}

static inline int jout_cmp(const void *a, const void *b)
{
    const jout *x = a, *y = b;
    if (x->probe != y->probe) return x->probe < y->probe ? -1 : 1;
    if (x->build != y->build) return x->build < y->build ? -1 : 1;
    return (x->mark > y->mark) - (x->mark < y->mark);
}

static inline void jvec_sort(jvec *o)
{
    if (o->n) qsort(o->v, o->n, sizeof(jout), jout_cmp);
}

static inline bool jvec_equal(const jvec *a, const jvec *b)
{
    return a->n == b->n && (a->n == 0 || memcmp(a->v, b->v, a->n * sizeof(jout)) == 0);
}

/* --- the reference: SQL's definitions, row by row ------------------------------ */

/* The comparison of a probe and a build row in three values: 1 true, 0
 * false, 2 unknown (a NULL key). */
static inline int jcompare3(const jinput *in, const jrow *p, const jrow *b)
{
    if (jkey_null(in, p) || jkey_null(in, b)) return 2;
    if (!jkeys_equal(in, p, b)) return 0;
    return !in->residual || jresidual(p, b);
}

/* 0, or -1 when a SINGLE join sees a second match (error 21000). */
static inline int jreference(const jinput *in, eng_join_kind kind, jvec *out)
{
    bool *hit = calloc(in->nb ? in->nb : 1, 1);
    if (!hit) abort();
    for (uint64_t i = 0; i < in->np; i++) {
        const jrow *p = &in->probe[i];
        uint64_t matches = 0;
        int64_t last = -1;
        bool unknown = false;
        for (uint64_t j = 0; j < in->nb; j++) {
            int c = jcompare3(in, p, &in->build[j]);
            if (c == 2) unknown = true;
            if (c != 1) continue;
            matches++;
            last = (int64_t)j;
            hit[j] = true;
            if (kind == ENG_JOIN_INNER || kind == ENG_JOIN_LEFT || kind == ENG_JOIN_RIGHT ||
                kind == ENG_JOIN_FULL)
                jvec_push(out, p->id, in->build[j].id, 0);
        }
        switch (kind) {
        case ENG_JOIN_LEFT:
        case ENG_JOIN_FULL:
            if (!matches) jvec_push(out, p->id, -1, 0);
            break;
        case ENG_JOIN_SEMI:
            if (matches) jvec_push(out, p->id, -1, 0);
            break;
        case ENG_JOIN_ANTI:
            if (!matches) jvec_push(out, p->id, -1, 0);
            break;
        case ENG_JOIN_MARK: /* OR over every comparison in three values */
            jvec_push(out, p->id, -1,
                      matches   ? ENG_JOIN_MARK_TRUE
                      : unknown ? ENG_JOIN_MARK_NULL
                                : ENG_JOIN_MARK_FALSE);
            break;
        case ENG_JOIN_SINGLE:
            if (matches > 1) {
                free(hit);
                return -1;
            }
            jvec_push(out, p->id, matches ? in->build[last].id : -1, 0);
            break;
        default:
            break;
        }
    }
    if (kind == ENG_JOIN_RIGHT || kind == ENG_JOIN_FULL)
        for (uint64_t j = 0; j < in->nb; j++)
            if (!hit[j]) jvec_push(out, -1, in->build[j].id, 0);
    free(hit);
    jvec_sort(out);
    return 0;
}

/* --- running a join on the scheduler ------------------------------------------- */

typedef enum jalg { JALG_SHARED, JALG_RADIX, JALG_SORTMERGE, JALG_COUNT } jalg;

static const char *const jalg_names[] = {"shared", "radix", "sortmerge"};

typedef struct jopts {
    jalg alg;
    eng_join_kind kind;
    unsigned workers;
    int radix_bits;     /* -1 = choose */
    uint64_t sm_ranges; /* 0 = choose */
    uint64_t mem_limit; /* 0 = none */
} jopts;

#define JMAXW   8
#define JSLICES 8u  /* first-pass slices of each side */
#define JUNITS  16u /* units of the per-partition steps */

typedef struct jctx jctx;

typedef struct jworker {
    jctx *c;
    eng_join_spec spec; /* ctx = this worker */
    jvec out;
} jworker;

struct jctx {
    const jinput *in;
    jopts o;
    eng_mem *mem;
    eng_join_mat build[JMAXW], probe[JMAXW];
    eng_join_mat *bp[JMAXW], *pp[JMAXW];
    jworker w[JMAXW];
    eng_join_build_info info;
    eng_join_ht ht;
    eng_radix_join rj;
    eng_sm_join sm;
    _Atomic(sto_status) err;
};

static inline int jfail(jctx *c, sto_status st)
{
    sto_status expected = NULL;
    if (!atomic_compare_exchange_strong(&c->err, &expected, st)) sto_status_free(st);
    return 1;
}

static inline int jfail_cg(jctx *c, cg_error *e, int32_t rc)
{
    return jfail(c, e->detail ? e->detail : sto_error(STO_INTERNAL_ERROR, "join step: %d", rc));
}

static inline sto_status jerror(void *ctx, void *state, int rc)
{
    (void)state;
    jctx *c = ctx;
    sto_status st = atomic_exchange(&c->err, NULL);
    return st ? st : sto_error(STO_INTERNAL_ERROR, "join pipeline failed (%d)", rc);
}

static inline bool jcb_keys_eq(void *ctx, const uint8_t *p, const uint8_t *b)
{
    jworker *w = ctx;
    return jkeys_equal(w->c->in, (const jrow *)p, (const jrow *)b);
}

static inline bool jcb_residual(void *ctx, const uint8_t *p, const uint8_t *b)
{
    (void)ctx;
    return jresidual((const jrow *)p, (const jrow *)b);
}

static inline int32_t jcb_emit(cg_error *err, void *ctx, const uint8_t *p, const uint8_t *b,
                               int mark)
{
    jworker *w = ctx;
    if (jvec_push(&w->out, p ? ((const jrow *)p)->id : -1, b ? ((const jrow *)b)->id : -1, mark)) {
        err->detail = sto_error_oom();
        return CG_ERR_RUNTIME;
    }
    return CG_ERR_NONE;
}

static inline uint64_t jcb_norm(void *ctx, const uint8_t *row)
{
    (void)ctx;
    return (uint64_t)((const jrow *)row)->k1 ^ ((uint64_t)1 << 63);
}

/* Per-worker state: the worker's id. */
static inline sto_status jstate_init(void *ctx, void *state, const eng_worker_info *wi)
{
    jctx *c = ctx;
    if (wi->id >= JMAXW) return sto_error(STO_INTERNAL_ERROR, "too many workers");
    *(unsigned *)state = wi->id;
    c->build[wi->id].mem.cache = wi->mem;
    c->probe[wi->id].mem.cache = wi->mem;
    return STO_OK;
}

/* Materializes rows [b, e) of one side into the worker's mat. */
static inline int jmaterialize(jctx *c, eng_join_mat *m, const jrow *rows, uint64_t b, uint64_t e)
{
    cg_error err = cg_error_none();
    for (uint64_t i = b; i < e; i++) {
        uint8_t *row;
        int32_t rc = jkey_null(c->in, &rows[i])
                         ? eng_rt_join_append_null(&err, m, &row)
                         : eng_rt_join_append(&err, m, jhash(c->in, &rows[i]), &row);
        if (rc) return jfail_cg(c, &err, rc);
        memcpy(row, &rows[i], sizeof(jrow));
    }
    return 0;
}

static inline int jm_build(void *ctx, void *state, uint64_t b, uint64_t e)
{
    jctx *c = ctx;
    return jmaterialize(c, &c->build[*(unsigned *)state], c->in->build, b, e);
}

static inline int jm_probe_mat(void *ctx, void *state, uint64_t b, uint64_t e)
{
    jctx *c = ctx;
    return jmaterialize(c, &c->probe[*(unsigned *)state], c->in->probe, b, e);
}

static inline jworker *jw(jctx *c, void *state)
{
    return &c->w[*(unsigned *)state];
}

/* shared table ------------------------------------------------------------------ */

static inline int jf_prepare(void *ctx, void *const *states, unsigned n, uint64_t pb, uint64_t pe)
{
    (void)states, (void)n, (void)pb, (void)pe;
    jctx *c = ctx;
    c->info = eng_join_mat_info(c->bp, c->o.workers);
    sto_status st = eng_join_ht_prepare(&c->ht, c->bp, c->o.workers, c->mem);
    return st ? jfail(c, st) : 0;
}

static inline int jm_insert(void *ctx, void *state, uint64_t b, uint64_t e)
{
    (void)state;
    jctx *c = ctx;
    for (uint64_t u = b; u < e; u++)
        eng_join_ht_insert_slice(&c->ht, u, JUNITS);
    return 0;
}

/* The in-pipeline probe: what generated code does per probe tuple. */
static inline int jm_probe_shared(void *ctx, void *state, uint64_t b, uint64_t e)
{
    jctx *c = ctx;
    jworker *w = jw(c, state);
    cg_error err = cg_error_none();
    for (uint64_t i = b; i < e; i++) {
        const jrow *r = &c->in->probe[i];
        bool null = jkey_null(c->in, r);
        uint64_t h = null ? 0 : jhash(c->in, r);
        eng_join_entry *chain = null ? NULL : eng_rt_join_ht_lookup(&c->ht, h);
        int32_t rc =
            eng_join_probe_chain(&err, &w->spec, &c->info, h, (const uint8_t *)r, null, chain);
        if (rc) return jfail_cg(c, &err, rc);
    }
    return 0;
}

static inline int jm_unmatched_shared(void *ctx, void *state, uint64_t b, uint64_t e)
{
    jctx *c = ctx;
    jworker *w = jw(c, state);
    cg_error err = cg_error_none();
    for (uint64_t u = b; u < e; u++) {
        int32_t rc = eng_join_ht_unmatched_slice(&err, &c->ht, &w->spec, u, JUNITS);
        if (!rc && u == 0) rc = eng_join_mat_emit_nulls(&err, &w->spec, c->bp, c->o.workers);
        if (rc) return jfail_cg(c, &err, rc);
    }
    return 0;
}

/* radix ------------------------------------------------------------------------- */

static inline int jm_radix_plan(void *ctx, void *state, uint64_t b, uint64_t e)
{
    (void)state, (void)b, (void)e;
    jctx *c = ctx;
    c->info = eng_join_mat_info(c->bp, c->o.workers);
    sto_status st = eng_radix_init(&c->rj, c->bp, c->o.workers, c->pp, c->o.workers, JSLICES,
                                   c->o.radix_bits, c->mem);
    return st ? jfail(c, st) : 0;
}

static inline int jm_radix_hist(void *ctx, void *state, uint64_t b, uint64_t e)
{
    (void)state;
    jctx *c = ctx;
    for (uint64_t u = b; u < e; u++)
        eng_radix_histogram(&c->rj, u < JSLICES ? &c->rj.build : &c->rj.probe,
                            (unsigned)(u % JSLICES));
    return 0;
}

static inline int jf_radix_prefix(void *ctx, void *const *states, unsigned n, uint64_t pb,
                                  uint64_t pe)
{
    (void)states, (void)n, (void)pb, (void)pe;
    eng_radix_prefix(&((jctx *)ctx)->rj);
    return 0;
}

static inline int jm_radix_scatter(void *ctx, void *state, uint64_t b, uint64_t e)
{
    (void)state;
    jctx *c = ctx;
    for (uint64_t u = b; u < e; u++) {
        sto_status st = eng_radix_scatter(&c->rj, u < JSLICES ? &c->rj.build : &c->rj.probe,
                                          (unsigned)(u % JSLICES));
        if (st) return jfail(c, st);
    }
    return 0;
}

static inline int jm_radix_refine(void *ctx, void *state, uint64_t b, uint64_t e)
{
    (void)state;
    jctx *c = ctx;
    uint64_t parts1 = (uint64_t)1 << c->rj.bits1;
    for (uint64_t u = b; u < e; u++) {
        uint64_t lo, hi;
        eng_join_slice(parts1, u % JUNITS, JUNITS, &lo, &hi);
        for (uint64_t p = lo; p < hi; p++)
            eng_radix_refine(&c->rj, u < JUNITS ? &c->rj.build : &c->rj.probe, p);
    }
    return 0;
}

static inline int jm_radix_build(void *ctx, void *state, uint64_t b, uint64_t e)
{
    (void)state;
    jctx *c = ctx;
    for (uint64_t u = b; u < e; u++) {
        uint64_t lo, hi;
        eng_join_slice(c->rj.parts, u, JUNITS, &lo, &hi);
        for (uint64_t p = lo; p < hi; p++) {
            sto_status st = eng_radix_build(&c->rj, p);
            if (st) return jfail(c, st);
        }
    }
    return 0;
}

static inline int jf_radix_tasks(void *ctx, void *const *states, unsigned n, uint64_t pb,
                                 uint64_t pe)
{
    (void)states, (void)n, (void)pb, (void)pe;
    jctx *c = ctx;
    sto_status st = eng_radix_tasks(&c->rj);
    return st ? jfail(c, st) : 0;
}

static inline int jm_radix_probe(void *ctx, void *state, uint64_t b, uint64_t e)
{
    jctx *c = ctx;
    jworker *w = jw(c, state);
    cg_error err = cg_error_none();
    for (uint64_t u = b; u < e; u++) {
        uint64_t lo, hi;
        int32_t rc = 0;
        eng_join_slice(c->rj.n_tasks, u, JUNITS, &lo, &hi);
        for (uint64_t t = lo; t < hi && !rc; t++)
            rc = eng_radix_probe_task(&err, &c->rj, t, &w->spec, &c->info);
        if (!rc && u == 0)
            rc = eng_join_mat_probe_nulls(&err, &w->spec, &c->info, c->pp, c->o.workers);
        if (rc) return jfail_cg(c, &err, rc);
    }
    return 0;
}

static inline int jm_radix_unmatched(void *ctx, void *state, uint64_t b, uint64_t e)
{
    jctx *c = ctx;
    jworker *w = jw(c, state);
    cg_error err = cg_error_none();
    for (uint64_t u = b; u < e; u++) {
        uint64_t lo, hi;
        int32_t rc = 0;
        eng_join_slice(c->rj.parts, u, JUNITS, &lo, &hi);
        for (uint64_t p = lo; p < hi && !rc; p++)
            rc = eng_radix_unmatched(&err, &c->rj, p, &w->spec);
        if (!rc && u == 0) rc = eng_join_mat_emit_nulls(&err, &w->spec, c->bp, c->o.workers);
        if (rc) return jfail_cg(c, &err, rc);
    }
    return 0;
}

/* sort-merge ---------------------------------------------------------------------- */

static inline int jm_sm_plan(void *ctx, void *state, uint64_t b, uint64_t e)
{
    (void)state, (void)b, (void)e;
    jctx *c = ctx;
    c->info = eng_join_mat_info(c->bp, c->o.workers);
    eng_join_norm_fn norm = c->in->keys == JKEY_INT ? jcb_norm : NULL;
    sto_status st = eng_sm_init(&c->sm, c->bp, c->o.workers, c->pp, c->o.workers, norm, norm, c,
                                JSLICES, c->o.sm_ranges, c->mem);
    if (!st) st = eng_sm_sample(&c->sm);
    return st ? jfail(c, st) : 0;
}

static inline int jm_sm_hist(void *ctx, void *state, uint64_t b, uint64_t e)
{
    (void)state;
    jctx *c = ctx;
    for (uint64_t u = b; u < e; u++)
        eng_sm_histogram(&c->sm, u < JSLICES ? &c->sm.build : &c->sm.probe,
                         (unsigned)(u % JSLICES));
    return 0;
}

static inline int jf_sm_prefix(void *ctx, void *const *states, unsigned n, uint64_t pb, uint64_t pe)
{
    (void)states, (void)n, (void)pb, (void)pe;
    eng_sm_prefix(&((jctx *)ctx)->sm);
    return 0;
}

static inline int jm_sm_scatter(void *ctx, void *state, uint64_t b, uint64_t e)
{
    (void)state;
    jctx *c = ctx;
    for (uint64_t u = b; u < e; u++) {
        sto_status st = eng_sm_scatter(&c->sm, u < JSLICES ? &c->sm.build : &c->sm.probe,
                                       (unsigned)(u % JSLICES));
        if (st) return jfail(c, st);
    }
    return 0;
}

static inline int jm_sm_sort(void *ctx, void *state, uint64_t b, uint64_t e)
{
    (void)state;
    jctx *c = ctx;
    for (uint64_t u = b; u < e; u++) {
        uint64_t lo, hi;
        eng_join_slice(c->sm.ranges, u % JUNITS, JUNITS, &lo, &hi);
        for (uint64_t r = lo; r < hi; r++) {
            sto_status st = eng_sm_sort_range(&c->sm, u < JUNITS ? &c->sm.build : &c->sm.probe, r);
            if (st) return jfail(c, st);
        }
    }
    return 0;
}

static inline int jf_sm_tasks(void *ctx, void *const *states, unsigned n, uint64_t pb, uint64_t pe)
{
    (void)states, (void)n, (void)pb, (void)pe;
    jctx *c = ctx;
    sto_status st = eng_sm_tasks(&c->sm);
    return st ? jfail(c, st) : 0;
}

static inline int jm_sm_join(void *ctx, void *state, uint64_t b, uint64_t e)
{
    jctx *c = ctx;
    jworker *w = jw(c, state);
    cg_error err = cg_error_none();
    for (uint64_t u = b; u < e; u++) {
        uint64_t lo, hi;
        int32_t rc = 0;
        eng_join_slice(c->sm.n_tasks, u, JUNITS, &lo, &hi);
        for (uint64_t t = lo; t < hi && !rc; t++)
            rc = eng_sm_join_task(&err, &c->sm, t, &w->spec, &c->info);
        if (!rc && u == 0)
            rc = eng_join_mat_probe_nulls(&err, &w->spec, &c->info, c->pp, c->o.workers);
        if (rc) return jfail_cg(c, &err, rc);
    }
    return 0;
}

static inline int jm_sm_unmatched(void *ctx, void *state, uint64_t b, uint64_t e)
{
    jctx *c = ctx;
    jworker *w = jw(c, state);
    cg_error err = cg_error_none();
    for (uint64_t u = b; u < e; u++) {
        uint64_t lo, hi;
        int32_t rc = 0;
        eng_join_slice(c->sm.ranges, u, JUNITS, &lo, &hi);
        for (uint64_t r = lo; r < hi && !rc; r++)
            rc = eng_sm_unmatched(&err, &c->sm, r, &w->spec);
        if (!rc && u == 0) rc = eng_join_mat_emit_nulls(&err, &w->spec, c->bp, c->o.workers);
        if (rc) return jfail_cg(c, &err, rc);
    }
    return 0;
}

/* the driver -------------------------------------------------------------------- */

/* Adds a pipeline of `rows` units (one unit per morsel when unit = true)
 * depending on the pipeline `dep` (and dep2 when not ~0u). */
static inline sto_status jadd(eng_job *job, jctx *c, const char *name, eng_morsel_fn fn,
                              uint64_t rows, bool unit, eng_finalize_fn fin, unsigned dep,
                              unsigned dep2, unsigned *id)
{
    eng_pipeline p = {
        .name = name,
        .run = fn,
        .ctx = c,
        .rows = rows,
        .morsel_rows = unit ? 1 : 0,
        .state_size = sizeof(unsigned),
        .state_init = jstate_init,
        .finalize = fin,
        .error = jerror,
    };
    unsigned deps[2] = {dep, dep2};
    unsigned n = dep == ~0u ? 0 : dep2 == ~0u ? 1 : 2;
    return eng_job_add(job, &p, deps, n, id);
}

/* Runs the join; on success *out holds its rows, sorted. */
static inline sto_status jrun(eng_sched *pool, const jinput *in, const jopts *o, jvec *out)
{
    jctx *c = calloc(1, sizeof(*c));
    if (!c) return sto_error_oom();
    c->in = in;
    c->o = *o;
    eng_job *job = NULL;
    sto_status st = eng_mem_create("query", o->mem_limit, NULL, &c->mem);
    if (st) {
        free(c);
        return st;
    }
    for (unsigned i = 0; i < JMAXW; i++) {
        eng_rt_mem m = {c->mem, NULL, -1};
        eng_join_mat_init(&c->build[i], m, sizeof(jrow));
        eng_join_mat_init(&c->probe[i], m, sizeof(jrow));
        c->bp[i] = &c->build[i];
        c->pp[i] = &c->probe[i];
        c->w[i].c = c;
        c->w[i].spec = (eng_join_spec){o->kind, jcb_keys_eq, in->residual ? jcb_residual : NULL,
                                       jcb_emit, &c->w[i]};
    }
    bool flags = eng_join_kind_flags_build(o->kind);
    eng_job_options jo = {.threads = o->workers, .mem = c->mem};
    st = eng_job_create(&jo, &job);
    unsigned b = 0, p = 0, x = 0, none = ~0u;
    if (!st)
        st = jadd(job, c, "build", jm_build, in->nb, false,
                  o->alg == JALG_SHARED ? jf_prepare : NULL, none, none, &b);
    if (!st && o->alg == JALG_SHARED) {
        if (!st) st = jadd(job, c, "insert", jm_insert, JUNITS, true, NULL, b, none, &x);
        if (!st) st = jadd(job, c, "probe", jm_probe_shared, in->np, false, NULL, x, none, &x);
        if (!st && flags)
            st = jadd(job, c, "unmatched", jm_unmatched_shared, JUNITS, true, NULL, x, none, &x);
    } else if (!st && o->alg == JALG_RADIX) {
        st = jadd(job, c, "probe side", jm_probe_mat, in->np, false, NULL, none, none, &p);
        if (!st) st = jadd(job, c, "plan", jm_radix_plan, 1, true, NULL, b, p, &x);
        if (!st)
            st = jadd(job, c, "histogram", jm_radix_hist, 2 * JSLICES, true, jf_radix_prefix, x,
                      none, &x);
        if (!st)
            st = jadd(job, c, "partition", jm_radix_scatter, 2 * JSLICES, true, NULL, x, none, &x);
        if (!st) st = jadd(job, c, "refine", jm_radix_refine, 2 * JUNITS, true, NULL, x, none, &x);
        if (!st)
            st = jadd(job, c, "build parts", jm_radix_build, JUNITS, true, jf_radix_tasks, x, none,
                      &x);
        if (!st) st = jadd(job, c, "probe", jm_radix_probe, JUNITS, true, NULL, x, none, &x);
        if (!st && flags)
            st = jadd(job, c, "unmatched", jm_radix_unmatched, JUNITS, true, NULL, x, none, &x);
    } else if (!st) {
        st = jadd(job, c, "probe side", jm_probe_mat, in->np, false, NULL, none, none, &p);
        if (!st) st = jadd(job, c, "plan", jm_sm_plan, 1, true, NULL, b, p, &x);
        if (!st)
            st =
                jadd(job, c, "histogram", jm_sm_hist, 2 * JSLICES, true, jf_sm_prefix, x, none, &x);
        if (!st)
            st = jadd(job, c, "partition", jm_sm_scatter, 2 * JSLICES, true, NULL, x, none, &x);
        if (!st) st = jadd(job, c, "sort", jm_sm_sort, 2 * JUNITS, true, jf_sm_tasks, x, none, &x);
        if (!st) st = jadd(job, c, "merge join", jm_sm_join, JUNITS, true, NULL, x, none, &x);
        if (!st && flags)
            st = jadd(job, c, "unmatched", jm_sm_unmatched, JUNITS, true, NULL, x, none, &x);
    }
    if (!st) st = eng_sched_run(pool, job);
    eng_job_free(job);
    for (unsigned i = 0; i < JMAXW && !st; i++)
        for (uint64_t k = 0; k < c->w[i].out.n; k++) {
            jout *r = &c->w[i].out.v[k];
            jvec_push(out, r->probe, r->build, (int)r->mark);
        }
    for (unsigned i = 0; i < JMAXW; i++) {
        free(c->w[i].out.v);
        eng_join_mat_free(&c->build[i]);
        eng_join_mat_free(&c->probe[i]);
    }
    if (c->ht.dir || c->ht.spans) eng_join_ht_free(&c->ht);
    eng_radix_free(&c->rj);
    eng_sm_free(&c->sm);
    sto_status left = atomic_exchange(&c->err, NULL);
    sto_status_free(left);
    /* Everything the join reserved has been given back. */
    if (!st && eng_mem_used(c->mem) != 0)
        st = sto_error(STO_INTERNAL_ERROR, "join leaked %llu bytes",
                       (unsigned long long)eng_mem_used(c->mem));
    eng_mem_destroy(c->mem);
    free(c);
    jvec_sort(out);
    return st;
}

/* --- the matrix ------------------------------------------------------------------ */

static const unsigned jworker_counts[] = {1, 2, 4};

/* Runs every join kind with alg (radix bits / sort-merge ranges as given)
 * on 1, 2 and 4 workers and compares with the reference; returns the
 * number of mismatches. pools[i] has jworker_counts[i] threads. */
static inline int jcheck(eng_sched *const *pools, const jinput *in, const char *what, jalg alg,
                         int bits, uint64_t ranges)
{
    int bad = 0;
    for (int k = 0; k < ENG_JOIN_KIND_COUNT; k++) {
        jvec ref = {0};
        int rrc = jreference(in, (eng_join_kind)k, &ref);
        for (unsigned wi = 0; wi < 3; wi++) {
            jopts o = {alg, (eng_join_kind)k, jworker_counts[wi], bits, ranges, 0};
            jvec got = {0};
            sto_status st = jrun(pools[wi], in, &o, &got);
            bool ok;
            if (rrc < 0)
                ok = st && strcmp(st->sqlstate, "21000") == 0 &&
                     strcmp(st->message, "more than one row returned by a subquery used as an "
                                         "expression") == 0;
            else
                ok = !st && jvec_equal(&ref, &got);
            if (!ok) {
                fprintf(stderr,
                        "%s: %s join, %s (bits %d, ranges %llu), %u workers: %s; "
                        "%llu rows, expected %llu%s\n",
                        what, eng_join_kind_name((eng_join_kind)k), jalg_names[alg], bits,
                        (unsigned long long)ranges, jworker_counts[wi], st ? st->message : "ok",
                        (unsigned long long)got.n, (unsigned long long)ref.n,
                        rrc < 0 ? " (21000)" : "");
                bad++;
            }
            sto_status_free(st);
            free(got.v);
        }
        free(ref.v);
    }
    return bad;
}

/* The inputs every algorithm is checked on. */
typedef struct jcase {
    const char *name;
    uint64_t nb, np;
    int keys;
    jdist db, dp;
    uint64_t domain;
    unsigned null_pct;
    bool residual, bad_hash, unique_build;
} jcase;

static const jcase jcases[] = {
    {"int keys, duplicates, NULLs", 600, 900, JKEY_INT, JD_UNIFORM, JD_UNIFORM, 300, 5, false,
     false, false},
    {"int+string keys, residual", 500, 700, JKEY_BOTH, JD_UNIFORM, JD_UNIFORM, 200, 5, true, false,
     false},
    {"string keys, Zipf, colliding hash", 400, 500, JKEY_STR, JD_ZIPF, JD_ZIPF, 150, 3, false, true,
     false},
    {"empty build", 0, 300, JKEY_INT, JD_UNIFORM, JD_UNIFORM, 100, 5, false, false, false},
    {"empty probe", 300, 0, JKEY_BOTH, JD_UNIFORM, JD_UNIFORM, 100, 5, false, false, false},
    {"hot probe key", 300, 10000, JKEY_INT, JD_UNIFORM, JD_HOT, 800, 1, false, false, false},
    {"unique build keys", 300, 600, JKEY_INT, JD_UNIFORM, JD_UNIFORM, 400, 4, false, false, true},
};

static inline void jcase_make(const jcase *jc, jinput *in, uint64_t seed)
{
    jinput_make(in, jc->nb, jc->np, jc->keys, jc->db, jc->dp, jc->domain, jc->null_pct, seed);
    in->residual = jc->residual;
    in->bad_hash = jc->bad_hash;
    if (jc->unique_build)
        for (uint64_t i = 0; i < in->nb; i++)
            in->build[i].k1 = (int64_t)i * 3 - 200;
}

static inline void jpools(eng_sched **pools)
{
    for (unsigned i = 0; i < 3; i++) {
        eng_sched_options so = {.threads = jworker_counts[i], .no_pinning = 1};
        if (eng_sched_create(&so, &pools[i])) abort();
    }
}

static inline void jpools_free(eng_sched **pools)
{
    for (unsigned i = 0; i < 3; i++)
        eng_sched_destroy(pools[i]);
}

/* Every case with alg; returns mismatches. */
static inline int jcheck_cases(eng_sched *const *pools, jalg alg, int bits, uint64_t ranges)
{
    int bad = 0;
    for (size_t i = 0; i < sizeof(jcases) / sizeof(jcases[0]); i++) {
        jinput in;
        jcase_make(&jcases[i], &in, 100 + i);
        bad += jcheck(pools, &in, jcases[i].name, alg, bits, ranges);
        jinput_free(&in);
    }
    return bad;
}

#endif
