/*
 * rt_radix.c — the radix-partitioned hash join's steps (rt_radix.h).
 */
#include "engine/rt_radix.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

/* Above this much partitioned data the output does not stay in cache, so
 * full write-combine buffers bypass it. */
#define STREAM_MIN_BYTES ((uint64_t)32 << 20)

/* `bits` bits of the hash just below its top `above` bits. */
static inline uint64_t radix_of(uint64_t hash, unsigned above, unsigned bits)
{
    if (!bits) return 0;
    return (hash >> (64 - above - bits)) & (((uint64_t)1 << bits) - 1);
}

static sto_status side_init(eng_radix_join *rj, eng_radix_side *side, eng_join_mat *const *mats,
                            unsigned n)
{
    side->count = 0;
    side->stride = n ? mats[0]->stride : ENG_JOIN_ENTRY_HEAD;
    for (unsigned i = 0; i < n; i++)
        side->count += mats[i]->count;
    STO_TRY(eng_join_mat_spans(mats, n, false, &side->spans, &side->n_spans));
    size_t bytes = side->count * side->stride;
    STO_TRY(eng_mem_alloc(rj->mem, bytes, -1, (void **)&side->out));
    if (rj->bits2) STO_TRY(eng_mem_alloc(rj->mem, bytes, -1, (void **)&side->tmp));
    STO_TRY(eng_mem_alloc_zero(rj->mem, (size_t)rj->slices << rj->bits1 << 3, -1,
                               (void **)&side->hist));
    STO_TRY(
        eng_mem_alloc_zero(rj->mem, (rj->parts + 1) * sizeof(uint64_t), -1, (void **)&side->part));
    return STO_OK;
}

sto_status eng_radix_init(eng_radix_join *rj, eng_join_mat *const *build, unsigned n_build,
                          eng_join_mat *const *probe, unsigned n_probe, unsigned slices, int bits,
                          eng_mem *mem)
{
    memset(rj, 0, sizeof(*rj));
    rj->mem = mem;
    rj->slices = slices ? slices : 1;
    if (bits < 0) {
        uint64_t bytes = 0;
        for (unsigned i = 0; i < n_build; i++)
            bytes += build[i]->count * build[i]->stride;
        bits = 0;
        while (((uint64_t)ENG_RADIX_PART_BYTES << bits) < bytes && bits < 2 * ENG_RADIX_MAX_BITS)
            bits++;
    }
    if (bits > 2 * ENG_RADIX_MAX_BITS) bits = 2 * ENG_RADIX_MAX_BITS;
    rj->bits1 = bits < ENG_RADIX_MAX_BITS ? (unsigned)bits : ENG_RADIX_MAX_BITS;
    rj->bits2 = (unsigned)bits - rj->bits1;
    rj->parts = (uint64_t)1 << bits;
    sto_status st = side_init(rj, &rj->build, build, n_build);
    if (!st) st = side_init(rj, &rj->probe, probe, n_probe);
    if (!st)
        st = eng_mem_alloc_zero(mem, rj->parts * sizeof(eng_join_ht), -1, (void **)&rj->tables);
    if (st) {
        eng_radix_free(rj);
        return st;
    }
    rj->stream =
        rj->build.count * rj->build.stride + rj->probe.count * rj->probe.stride >= STREAM_MIN_BYTES;
    return STO_OK;
}

/* --- histogram and prefix sums ---------------------------------------------- */

typedef struct hist_arg {
    uint64_t *hist;
    uint32_t stride;
    unsigned bits;
} hist_arg;

static void hist_visit(void *arg, uint8_t *base, uint64_t lo, uint64_t hi)
{
    hist_arg *a = arg;
    for (uint64_t i = lo; i < hi; i++)
        a->hist[radix_of(eng_join_entry_at(base, a->stride, i)->hash, 0, a->bits)]++;
}

void eng_radix_histogram(eng_radix_join *rj, eng_radix_side *side, unsigned s)
{
    uint64_t begin, end;
    eng_join_slice(side->count, s, rj->slices, &begin, &end);
    hist_arg a = {side->hist + ((size_t)s << rj->bits1), side->stride, rj->bits1};
    eng_join_spans_visit(side->spans, side->n_spans, begin, end, hist_visit, &a);
}

static void prefix_side(eng_radix_join *rj, eng_radix_side *side)
{
    uint64_t at = 0, parts1 = (uint64_t)1 << rj->bits1;
    for (uint64_t p = 0; p < parts1; p++) {
        if (!rj->bits2) side->part[p] = at;
        for (unsigned s = 0; s < rj->slices; s++) {
            uint64_t *h = &side->hist[((size_t)s << rj->bits1) + p];
            uint64_t n = *h;
            *h = at;
            at += n;
        }
    }
    side->part[rj->parts] = at;
}

void eng_radix_prefix(eng_radix_join *rj)
{
    prefix_side(rj, &rj->build);
    prefix_side(rj, &rj->probe);
}

/* --- partitioning through write-combine buffers ------------------------------ */

/* A partition's write-combine buffer mirrors the cache lines of its output:
 * buf[0] is the byte at `base` (64-byte aligned), tuples are appended at
 * at - base, and once ENG_RADIX_WC_BYTES are in it those whole lines go
 * out at once. A flush never writes a partial line (a non-temporal store
 * to part of a line costs a read of the line or several bus writes), and
 * never a byte of a neighbouring region: the first flush of a region,
 * whose first line may be shared with the region before it, and the last
 * one use ordinary stores. */
typedef struct wc_part {
    uint64_t at;    /* output byte offset of the next tuple */
    uint64_t base;  /* output byte offset of buf[0], line-aligned */
    uint64_t start; /* output byte offset where this region begins */
} wc_part;

typedef struct scatter_arg {
    uint8_t *dst;
    uint32_t stride;
    unsigned bits;
    wc_part *part;
    uint8_t *wc; /* per partition buf_bytes, 64-byte aligned */
    size_t buf_bytes;
    bool direct; /* tuples too wide to combine: copied straight */
    bool stream;
} scatter_arg;

#define LINE 64u

/* Writes ENG_RADIX_WC_BYTES of whole lines (both sides line-aligned). */
static inline void flush_lines(uint8_t *dst, const uint8_t *src, bool stream)
{
#if defined(__x86_64__)
    if (stream) {
        for (unsigned i = 0; i < ENG_RADIX_WC_BYTES; i += 16)
            _mm_stream_si128((__m128i *)(void *)(dst + i),
                             _mm_load_si128((const __m128i *)(const void *)(src + i)));
        return;
    }
#else
    (void)stream;
#endif
    memcpy(dst, src, ENG_RADIX_WC_BYTES);
}

/* Entries are a few 8-byte words: a word loop beats a memcpy call. */
static inline void copy_entry(uint8_t *dst, const uint8_t *src, uint32_t stride)
{
    uint64_t *d = (uint64_t *)(void *)dst;
    const uint64_t *s = (const uint64_t *)(const void *)src;
    for (uint32_t w = 0; w < stride / 8; w++)
        d[w] = s[w];
}

static void scatter_visit(void *arg, uint8_t *base, uint64_t lo, uint64_t hi)
{
    scatter_arg *a = arg;
    const uint32_t st = a->stride;
    for (uint64_t i = lo; i < hi; i++) {
        const uint8_t *e = base + i * st;
        uint64_t p = radix_of(((const eng_join_entry *)(const void *)e)->hash, 0, a->bits);
        wc_part *w = &a->part[p];
        if (a->direct) {
            memcpy(a->dst + w->at, e, st);
            w->at += st;
            continue;
        }
        uint8_t *buf = a->wc + p * a->buf_bytes;
        copy_entry(buf + (w->at - w->base), e, st);
        w->at += st;
        if (w->at - w->base < ENG_RADIX_WC_BYTES) continue;
        if (w->base >= w->start) {
            flush_lines(a->dst + w->base, buf, a->stream);
        } else {
            uint64_t skip = w->start - w->base;
            memcpy(a->dst + w->start, buf + skip, ENG_RADIX_WC_BYTES - skip);
        }
        w->base += ENG_RADIX_WC_BYTES;
        /* the part of the last tuple beyond the flushed lines */
        if (w->at > w->base)
            copy_entry(buf, buf + ENG_RADIX_WC_BYTES, (uint32_t)(w->at - w->base + 7) & ~7u);
    }
}

sto_status eng_radix_scatter(eng_radix_join *rj, eng_radix_side *side, unsigned s)
{
    uint64_t begin, end;
    eng_join_slice(side->count, s, rj->slices, &begin, &end);
    if (begin == end) return STO_OK;
    uint64_t parts1 = (uint64_t)1 << rj->bits1;
    /* a buffer holds its lines and the tail of the tuple that filled them */
    size_t buf_bytes = (ENG_RADIX_WC_BYTES + side->stride + LINE - 1) & ~(size_t)(LINE - 1);
    bool direct = side->stride > ENG_RADIX_WC_BYTES / 2;
    size_t bytes = parts1 * sizeof(wc_part) + (direct ? 0 : parts1 * buf_bytes);
    uint8_t *mem;
    STO_TRY(eng_mem_alloc(rj->mem, bytes, -1, (void **)&mem));
    scatter_arg a = {
        .dst = rj->bits2 ? side->tmp : side->out,
        .stride = side->stride,
        .bits = rj->bits1,
        .wc = mem, /* eng_mem_alloc's blocks are 64-byte aligned */
        .buf_bytes = buf_bytes,
        .direct = direct,
        .stream = rj->stream,
    };
    a.part = (wc_part *)(void *)(mem + (direct ? 0 : parts1 * buf_bytes));
    const uint64_t *hist = side->hist + ((size_t)s << rj->bits1);
    for (uint64_t p = 0; p < parts1; p++) {
        uint64_t at = hist[p] * side->stride;
        a.part[p] = (wc_part){at, at & ~(uint64_t)(LINE - 1), at};
    }
    eng_join_spans_visit(side->spans, side->n_spans, begin, end, scatter_visit, &a);
    if (!direct)
        for (uint64_t p = 0; p < parts1; p++) {
            const wc_part *w = &a.part[p];
            uint64_t from = w->base > w->start ? w->base : w->start;
            if (w->at > from)
                memcpy(a.dst + from, a.wc + p * buf_bytes + (from - w->base), w->at - from);
        }
#if defined(__x86_64__)
    if (a.stream) _mm_sfence();
#endif
    eng_mem_free(rj->mem, mem, bytes);
    return STO_OK;
}

void eng_radix_refine(eng_radix_join *rj, eng_radix_side *side, uint64_t p1)
{
    if (!rj->bits2) return;
    uint64_t parts1 = (uint64_t)1 << rj->bits1, sub = (uint64_t)1 << rj->bits2;
    uint64_t begin = side->hist[p1];
    uint64_t end = p1 + 1 < parts1 ? side->hist[p1 + 1] : side->count;
    uint64_t pos[1u << ENG_RADIX_MAX_BITS];
    memset(pos, 0, sub * sizeof(uint64_t));
    uint32_t st = side->stride;
    for (uint64_t i = begin; i < end; i++)
        pos[radix_of(eng_join_entry_at(side->tmp, st, i)->hash, rj->bits1, rj->bits2)]++;
    uint64_t at = begin;
    for (uint64_t q = 0; q < sub; q++) {
        uint64_t n = pos[q];
        side->part[(p1 << rj->bits2) | q] = at;
        pos[q] = at;
        at += n;
    }
    for (uint64_t i = begin; i < end; i++) {
        uint8_t *e = side->tmp + i * st;
        uint64_t q = radix_of(((eng_join_entry *)(void *)e)->hash, rj->bits1, rj->bits2);
        copy_entry(side->out + pos[q]++ * st, e, st);
    }
}

/* --- build and probe ------------------------------------------------------ */

sto_status eng_radix_build(eng_radix_join *rj, uint64_t p)
{
    uint64_t begin = rj->build.part[p], end = rj->build.part[p + 1];
    if (begin == end) return STO_OK;
    STO_TRY(eng_join_ht_init(&rj->tables[p], end - begin, rj->mem, -1));
    eng_join_ht_insert_local(&rj->tables[p], rj->build.out + begin * rj->build.stride,
                             rj->build.stride, end - begin);
    return STO_OK;
}

sto_status eng_radix_tasks(eng_radix_join *rj)
{
    uint64_t avg = (rj->probe.count + rj->parts - 1) / rj->parts;
    /* at most twice the average (a hot partition is shared), a 64th of the
     * probe side (few partitions still make work for every worker) */
    uint64_t chunk = 2 * avg < ENG_RADIX_TASK_MAX ? 2 * avg : ENG_RADIX_TASK_MAX;
    if (chunk > rj->probe.count / 64) chunk = rj->probe.count / 64;
    if (chunk < ENG_RADIX_TASK_MIN) chunk = ENG_RADIX_TASK_MIN;
    uint64_t n = 0;
    for (uint64_t p = 0; p < rj->parts; p++)
        n += (rj->probe.part[p + 1] - rj->probe.part[p] + chunk - 1) / chunk;
    if (n) STO_TRY(eng_mem_alloc(rj->mem, n * sizeof(eng_radix_task), -1, (void **)&rj->tasks));
    rj->n_tasks = 0;
    for (uint64_t p = 0; p < rj->parts; p++)
        for (uint64_t b = rj->probe.part[p]; b < rj->probe.part[p + 1]; b += chunk) {
            uint64_t e = b + chunk < rj->probe.part[p + 1] ? b + chunk : rj->probe.part[p + 1];
            rj->tasks[rj->n_tasks++] = (eng_radix_task){p, b, e};
        }
    return STO_OK;
}

int32_t eng_radix_probe_task(cg_error *err, const eng_radix_join *rj, uint64_t t,
                             const eng_join_spec *spec, const eng_join_build_info *info)
{
    const eng_radix_task *task = &rj->tasks[t];
    const eng_join_ht *ht = &rj->tables[task->part];
    for (uint64_t i = task->begin; i < task->end; i++) {
        eng_join_entry *e = eng_join_entry_at(rj->probe.out, rj->probe.stride, i);
        eng_join_entry *chain = ht->dir ? eng_join_ht_lookup(ht, e->hash) : NULL;
        int32_t rc = eng_join_probe_chain(err, spec, info, e->hash, eng_join_row(e), false, chain);
        if (rc) return rc;
    }
    return CG_ERR_NONE;
}

int32_t eng_radix_unmatched(cg_error *err, const eng_radix_join *rj, uint64_t p,
                            const eng_join_spec *spec)
{
    uint64_t begin = rj->build.part[p], end = rj->build.part[p + 1];
    return eng_join_emit_unmatched(err, spec, rj->build.out + begin * rj->build.stride,
                                   rj->build.stride, end - begin);
}

static void side_free(eng_radix_join *rj, eng_radix_side *side)
{
    size_t bytes = side->count * side->stride;
    if (side->out) eng_mem_free(rj->mem, side->out, bytes);
    if (side->tmp) eng_mem_free(rj->mem, side->tmp, bytes);
    if (side->hist) eng_mem_free(rj->mem, side->hist, (size_t)rj->slices << rj->bits1 << 3);
    if (side->part) eng_mem_free(rj->mem, side->part, (rj->parts + 1) * sizeof(uint64_t));
    free(side->spans);
}

void eng_radix_free(eng_radix_join *rj)
{
    if (rj->tables) {
        for (uint64_t p = 0; p < rj->parts; p++)
            eng_join_ht_free(&rj->tables[p]);
        eng_mem_free(rj->mem, rj->tables, rj->parts * sizeof(eng_join_ht));
    }
    if (rj->tasks) eng_mem_free(rj->mem, rj->tasks, rj->n_tasks * sizeof(eng_radix_task));
    side_free(rj, &rj->build);
    side_free(rj, &rj->probe);
    memset(rj, 0, sizeof(*rj));
}
