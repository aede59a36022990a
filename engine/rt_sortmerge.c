/*
 * rt_sortmerge.c — the sort-merge join's steps (rt_sortmerge.h).
 */
#include "engine/rt_sortmerge.h"

#include <stdlib.h>
#include <string.h>

#define PAIRS_PER_RANGE  65536u
#define MAX_RANGES       4096u
#define SAMPLE_PER_RANGE 32u
#define TASK_MIN         4096u
#define INSERTION_MAX    32u

static inline uint64_t sort_key(const eng_sm_join *sm, const eng_sm_side *side,
                                const eng_join_entry *e)
{
    return side->norm ? side->norm(sm->ctx, eng_join_row(e)) : e->hash;
}

/* The range of a key: how many splitters are <= key (binary search). */
static inline uint64_t range_of(const eng_sm_join *sm, uint64_t key)
{
    uint64_t lo = 0, hi = sm->ranges - 1;
    while (lo < hi) {
        uint64_t mid = (lo + hi) / 2;
        if (sm->splitters[mid] <= key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static sto_status side_init(eng_sm_join *sm, eng_sm_side *side, eng_join_mat *const *mats,
                            unsigned n, eng_join_norm_fn norm)
{
    side->norm = norm;
    side->stride = n ? mats[0]->stride : ENG_JOIN_ENTRY_HEAD;
    for (unsigned i = 0; i < n; i++)
        side->count += mats[i]->count;
    STO_TRY(eng_join_mat_spans(mats, n, false, &side->spans, &side->n_spans));
    size_t bytes = side->count * sizeof(eng_sm_pair);
    STO_TRY(eng_mem_alloc(sm->mem, bytes, -1, (void **)&side->pairs));
    STO_TRY(eng_mem_alloc(sm->mem, bytes, -1, (void **)&side->sorted));
    STO_TRY(eng_mem_alloc_zero(sm->mem, sm->slices * sm->ranges * sizeof(uint64_t), -1,
                               (void **)&side->hist));
    STO_TRY(eng_mem_alloc_zero(sm->mem, (sm->ranges + 1) * sizeof(uint64_t), -1,
                               (void **)&side->range));
    return STO_OK;
}

sto_status eng_sm_init(eng_sm_join *sm, eng_join_mat *const *build, unsigned n_build,
                       eng_join_mat *const *probe, unsigned n_probe, eng_join_norm_fn norm_build,
                       eng_join_norm_fn norm_probe, void *ctx, unsigned slices, uint64_t ranges,
                       eng_mem *mem)
{
    memset(sm, 0, sizeof(*sm));
    sm->mem = mem;
    sm->ctx = ctx;
    sm->slices = slices ? slices : 1;
    if (!ranges) {
        uint64_t total = 0;
        for (unsigned i = 0; i < n_build; i++)
            total += build[i]->count;
        for (unsigned i = 0; i < n_probe; i++)
            total += probe[i]->count;
        ranges = total / PAIRS_PER_RANGE + 1;
        if (ranges > MAX_RANGES) ranges = MAX_RANGES;
    }
    sm->ranges = ranges;
    sto_status st = eng_mem_alloc_zero(mem, ranges * sizeof(uint64_t), -1, (void **)&sm->splitters);
    if (!st) st = side_init(sm, &sm->build, build, n_build, norm_build);
    if (!st) st = side_init(sm, &sm->probe, probe, n_probe, norm_probe);
    if (st) eng_sm_free(sm);
    return st;
}

/* --- splitters --------------------------------------------------------------- */

typedef struct sample_arg {
    const eng_sm_join *sm;
    const eng_sm_side *side;
    uint64_t *out;
} sample_arg;

static void sample_visit(void *arg, uint8_t *base, uint64_t lo, uint64_t hi)
{
    sample_arg *a = arg;
    (void)hi;
    *a->out = sort_key(a->sm, a->side, eng_join_entry_at(base, a->side->stride, lo));
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Evenly spaced keys of a side (deterministic: the same input, the same
 * splitters, whatever the worker count). */
static void sample_side(const eng_sm_join *sm, const eng_sm_side *side, uint64_t want,
                        uint64_t *out, uint64_t *n)
{
    if (!side->count) return;
    if (want > side->count) want = side->count;
    for (uint64_t i = 0; i < want; i++) {
        uint64_t at = (uint64_t)((unsigned __int128)side->count * i / want);
        sample_arg a = {sm, side, &out[(*n)++]};
        eng_join_spans_visit(side->spans, side->n_spans, at, at + 1, sample_visit, &a);
    }
}

sto_status eng_sm_sample(eng_sm_join *sm)
{
    if (sm->ranges < 2) return STO_OK;
    uint64_t want = sm->ranges * SAMPLE_PER_RANGE;
    uint64_t *keys = malloc(2 * want * sizeof(uint64_t));
    if (!keys) return sto_error_oom();
    uint64_t n = 0;
    /* The build side decides the ranges when it has keys: its tuples are
     * the ones that must fit in cache while sorting. */
    sample_side(sm, sm->build.count ? &sm->build : &sm->probe, want, keys, &n);
    qsort(keys, n, sizeof(uint64_t), cmp_u64);
    for (uint64_t i = 1; i < sm->ranges; i++)
        sm->splitters[i - 1] =
            n ? keys[(uint64_t)((unsigned __int128)n * i / sm->ranges)] : UINT64_MAX;
    free(keys);
    return STO_OK;
}

/* --- range partitioning ---------------------------------------------------- */

typedef struct part_arg {
    const eng_sm_join *sm;
    const eng_sm_side *side;
    uint64_t *counts; /* histogram: this slice's row; scatter: next write index */
    eng_sm_pair *out; /* NULL = only count */
} part_arg;

static void part_visit(void *arg, uint8_t *base, uint64_t lo, uint64_t hi)
{
    part_arg *a = arg;
    for (uint64_t i = lo; i < hi; i++) {
        eng_join_entry *e = eng_join_entry_at(base, a->side->stride, i);
        uint64_t key = sort_key(a->sm, a->side, e);
        uint64_t r = range_of(a->sm, key);
        if (a->out)
            a->out[a->counts[r]++] = (eng_sm_pair){key, e};
        else
            a->counts[r]++;
    }
}

void eng_sm_histogram(eng_sm_join *sm, eng_sm_side *side, unsigned s)
{
    uint64_t begin, end;
    eng_join_slice(side->count, s, sm->slices, &begin, &end);
    part_arg a = {sm, side, side->hist + (uint64_t)s * sm->ranges, NULL};
    eng_join_spans_visit(side->spans, side->n_spans, begin, end, part_visit, &a);
}

static void prefix_side(eng_sm_join *sm, eng_sm_side *side)
{
    uint64_t at = 0;
    for (uint64_t r = 0; r < sm->ranges; r++) {
        side->range[r] = at;
        for (unsigned s = 0; s < sm->slices; s++) {
            uint64_t *h = &side->hist[(uint64_t)s * sm->ranges + r];
            uint64_t n = *h;
            *h = at;
            at += n;
        }
    }
    side->range[sm->ranges] = at;
}

void eng_sm_prefix(eng_sm_join *sm)
{
    prefix_side(sm, &sm->build);
    prefix_side(sm, &sm->probe);
}

sto_status eng_sm_scatter(eng_sm_join *sm, eng_sm_side *side, unsigned s)
{
    uint64_t begin, end;
    eng_join_slice(side->count, s, sm->slices, &begin, &end);
    if (begin == end) return STO_OK;
    /* Scatter advances the offsets; hist keeps the run starts for the sort. */
    uint64_t *pos = malloc(sm->ranges * sizeof(uint64_t));
    if (!pos) return sto_error_oom();
    memcpy(pos, side->hist + (uint64_t)s * sm->ranges, sm->ranges * sizeof(uint64_t));
    part_arg a = {sm, side, pos, side->pairs};
    eng_join_spans_visit(side->spans, side->n_spans, begin, end, part_visit, &a);
    free(pos);
    return STO_OK;
}

/* --- sorting a range ------------------------------------------------------- */

static void insertion_sort(eng_sm_pair *a, uint64_t n)
{
    for (uint64_t i = 1; i < n; i++) {
        eng_sm_pair x = a[i];
        uint64_t j = i;
        while (j > 0 && a[j - 1].key > x.key) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = x;
    }
}

/* LSD radix sort of src[0..n) on the key into dst[0..n); src is scratch.
 * One pass counts all eight 8-bit digits; a digit that is the same in
 * every key moves nothing and is skipped (the keys of a range share their
 * top bytes). */
static void radix_sort_to(eng_sm_pair *src, eng_sm_pair *dst, uint64_t n)
{
    if (n <= INSERTION_MAX) {
        memcpy(dst, src, n * sizeof(*src));
        insertion_sort(dst, n);
        return;
    }
    uint64_t count[8][256];
    memset(count, 0, sizeof(count));
    for (uint64_t i = 0; i < n; i++) {
        uint64_t k = src[i].key;
        for (unsigned d = 0; d < 8; d++)
            count[d][(k >> (8 * d)) & 255]++;
    }
    unsigned digits[8], passes = 0;
    for (unsigned d = 0; d < 8; d++)
        if (count[d][(src[0].key >> (8 * d)) & 255] != n) digits[passes++] = d;
    /* an even number of passes ends in src: one copy more */
    eng_sm_pair *from = src, *to = dst;
    for (unsigned p = 0; p < passes; p++) {
        unsigned d = digits[p], shift = 8 * d;
        uint64_t at = 0;
        for (unsigned v = 0; v < 256; v++) {
            uint64_t c = count[d][v];
            count[d][v] = at;
            at += c;
        }
        for (uint64_t i = 0; i < n; i++)
            to[count[d][(from[i].key >> shift) & 255]++] = from[i];
        eng_sm_pair *t = from;
        from = to;
        to = t;
    }
    if (from != dst) memcpy(dst, from, n * sizeof(*dst));
}

/* The range's pairs are its slices' runs back to back: one radix sort of
 * the whole range leaves it sorted in `sorted` (a sort per run and a k-way
 * heap merge of up to `slices` runs cost a branchy heap step per pair). */
sto_status eng_sm_sort_range(eng_sm_join *sm, eng_sm_side *side, uint64_t r)
{
    (void)sm;
    uint64_t begin = side->range[r], end = side->range[r + 1];
    if (begin < end) radix_sort_to(side->pairs + begin, side->sorted + begin, end - begin);
    return STO_OK;
}

/* --- merge join ------------------------------------------------------------ */

sto_status eng_sm_tasks(eng_sm_join *sm)
{
    uint64_t avg = (sm->probe.count + sm->ranges - 1) / sm->ranges;
    uint64_t chunk = 2 * avg < sm->probe.count / 64 ? 2 * avg : sm->probe.count / 64;
    if (chunk < TASK_MIN) chunk = TASK_MIN;
    uint64_t n = 0;
    const uint64_t *pr = sm->probe.range;
    for (uint64_t r = 0; r < sm->ranges; r++)
        n += (pr[r + 1] - pr[r] + chunk - 1) / chunk;
    if (n) STO_TRY(eng_mem_alloc(sm->mem, n * sizeof(eng_sm_task), -1, (void **)&sm->tasks));
    sm->n_tasks = 0;
    for (uint64_t r = 0; r < sm->ranges; r++)
        for (uint64_t b = pr[r]; b < pr[r + 1]; b += chunk)
            sm->tasks[sm->n_tasks++] =
                (eng_sm_task){r, b, b + chunk < pr[r + 1] ? b + chunk : pr[r + 1]};
    return STO_OK;
}

/* First index in [lo, hi) of a whose key is >= key. */
static uint64_t lower_bound(const eng_sm_pair *a, uint64_t lo, uint64_t hi, uint64_t key)
{
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (a[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int32_t eng_sm_join_task(cg_error *err, const eng_sm_join *sm, uint64_t t,
                         const eng_join_spec *spec, const eng_join_build_info *info)
{
    const eng_sm_task *task = &sm->tasks[t];
    const eng_sm_pair *pp = sm->probe.sorted, *bp = sm->build.sorted;
    uint64_t bend = sm->build.range[task->range + 1];
    uint64_t b = lower_bound(bp, sm->build.range[task->range], bend, pp[task->begin].key);
    for (uint64_t i = task->begin; i < task->end; i++) {
        uint64_t key = pp[i].key;
        while (b < bend && bp[b].key < key)
            b++;
        eng_join_probe p;
        eng_join_probe_begin(&p, spec, pp[i].e->hash, eng_join_row(pp[i].e), false);
        for (uint64_t j = b; j < bend && bp[j].key == key && !p.done; j++) {
            int32_t rc = eng_join_probe_candidate(err, &p, bp[j].e);
            if (rc) return rc;
        }
        int32_t rc = eng_join_probe_end(err, &p, info);
        if (rc) return rc;
    }
    return CG_ERR_NONE;
}

int32_t eng_sm_unmatched(cg_error *err, const eng_sm_join *sm, uint64_t r,
                         const eng_join_spec *spec)
{
    for (uint64_t i = sm->build.range[r]; i < sm->build.range[r + 1]; i++) {
        eng_join_entry *e = sm->build.sorted[i].e;
        if (__atomic_load_n(&e->matched, __ATOMIC_RELAXED)) continue;
        int32_t rc = spec->emit(err, spec->ctx, NULL, eng_join_row(e), 0);
        if (rc) return rc;
    }
    return CG_ERR_NONE;
}

static void side_free(eng_sm_join *sm, eng_sm_side *side)
{
    size_t bytes = side->count * sizeof(eng_sm_pair);
    if (side->pairs) eng_mem_free(sm->mem, side->pairs, bytes);
    if (side->sorted) eng_mem_free(sm->mem, side->sorted, bytes);
    if (side->hist) eng_mem_free(sm->mem, side->hist, sm->slices * sm->ranges * sizeof(uint64_t));
    if (side->range) eng_mem_free(sm->mem, side->range, (sm->ranges + 1) * sizeof(uint64_t));
    free(side->spans);
}

void eng_sm_free(eng_sm_join *sm)
{
    if (sm->splitters) eng_mem_free(sm->mem, sm->splitters, sm->ranges * sizeof(uint64_t));
    if (sm->tasks) eng_mem_free(sm->mem, sm->tasks, sm->n_tasks * sizeof(eng_sm_task));
    side_free(sm, &sm->build);
    side_free(sm, &sm->probe);
    memset(sm, 0, sizeof(*sm));
}

/* --- in compiled pipelines ---------------------------------------------------- */

void eng_sm_link_range(eng_sm_join *sm, uint64_t r)
{
    const eng_sm_pair *a = sm->build.sorted;
    uint64_t begin = sm->build.range[r], end = sm->build.range[r + 1];
    for (uint64_t i = begin; i < end; i++)
        a[i].e->next = i + 1 < end && a[i + 1].key == a[i].key ? a[i + 1].e : NULL;
}

void eng_sm_gather_range(eng_sm_join *sm, uint64_t r, uint8_t *dst)
{
    const eng_sm_pair *a = sm->probe.sorted;
    uint32_t stride = sm->probe.stride;
    for (uint64_t i = sm->probe.range[r]; i < sm->probe.range[r + 1]; i++)
        memcpy(dst + i * stride, a[i].e, stride);
}

void eng_sm_cursor_for(const eng_sm_join *sm, uint64_t t, eng_sm_cursor *c)
{
    const eng_sm_task *task = &sm->tasks[t];
    const eng_sm_pair *b = sm->build.sorted;
    if (!b) {
        c->begin = c->at = c->end = NULL;
        return;
    }
    c->begin = c->at = b + sm->build.range[task->range];
    c->end = b + sm->build.range[task->range + 1];
}

void *eng_rt_sm_lookup(void *cursor, uint64_t key)
{
    eng_sm_cursor *c = cursor;
    if (c->begin == c->end) return NULL;
    const eng_sm_pair *lo = c->at, *hi = c->end;
    if (lo > c->begin && lo[-1].key >= key) {
        lo = c->begin; /* behind the cursor: search the whole range */
    } else {
        /* gallop: the next keys are usually close */
        uint64_t step = 1;
        while (lo + step < hi && lo[step].key < key) {
            lo += step;
            step *= 2;
        }
        if (lo + step < hi) hi = lo + step + 1;
    }
    uint64_t at = lower_bound(c->begin, (uint64_t)(lo - c->begin), (uint64_t)(hi - c->begin), key);
    c->at = c->begin + at;
    return c->at < c->end && c->at->key == key ? c->at->e : NULL;
}
