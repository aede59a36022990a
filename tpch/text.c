/*
 * text.c — builds the TPC-H comment text pool (see text.h for the grammar
 * and for how the threaded build joins its pieces).
 */
#include "tpch/text.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "tpch/backing.h"
#include "tpch/dists.h"

#define FORM_MAX_TOKENS 8  /* the most tokens of a sentence form */
#define FORM_MAX        8  /* the most forms of a list of forms */
#define PHRASE_WORDS    3  /* the most words of a noun or verb phrase */
#define WORD_MAX        64 /* the most words of a word list */
#define WORD_SLOT       32 /* bytes copied per word: any word and its tail fit */
#define TABLE_MAX       16 /* word tables: one per word list and tail */
#define SENTENCE_MAX                                                                               \
    512 /* generous bound on one sentence's bytes and the WORD_SLOT                                \
         * bytes written past them */

/*
 * Writing the pool is a walk over the grammar with one draw per choice:
 * ~12 draws and ~75 bytes per sentence, 4 million sentences. A draw is
 * cheap; the walk around it is what costs, so the grammar is turned into
 * tables first:
 *   - every word list becomes a word_table whose entries hold the word with
 *     the bytes that always follow it ("special, " in "J, J N", "about the "
 *     for a preposition, "sleep " otherwise), padded to WORD_SLOT bytes:
 *     writing a word is one 32-byte copy and one addition, with no branch
 *     on punctuation;
 *   - a phrase form is the list of its words' tables, and the writer falls
 *     through from the first to the last word (one jump per phrase, not a
 *     loop with a branch per word).
 * The bytes are exactly those of the plain walk (text.h); a table's padding
 * lands in the pool only to be overwritten by the next word.
 */

/* A weighted pick made constant-time: draw in 1..total -> index. */
typedef struct picker {
    int32_t total;
    uint8_t entry[TPCH_PICKER_MAX_WEIGHT + 1];
} picker;

typedef struct word_table {
    picker pick;
    tpch_dist_id id;
    char tail[8]; /* what follows every word: " ", ", ", " the " */
    uint8_t len[WORD_MAX];
    char text[WORD_MAX][WORD_SLOT];
} word_table;

/* A noun or verb phrase form, its words' tables right-aligned in word[]
 * (a two-word form uses word[1] and word[2]) so the writer can fall through
 * from its first word to the last. */
typedef struct phrase_form {
    int count;
    const word_table *word[PHRASE_WORDS];
} phrase_form;

typedef struct phrase_set {
    picker pick;
    phrase_form form[FORM_MAX];
} phrase_set;

typedef struct sentence_form {
    int count;
    char kind[FORM_MAX_TOKENS]; /* N (noun phrase), V (verb phrase), P, T */
} sentence_form;

typedef struct grammar {
    picker sentence_pick;
    sentence_form sentence[FORM_MAX];
    phrase_set np, vp;
    const word_table *prepositions, *terminators;
    int tables;
    word_table table[TABLE_MAX];
} grammar;

/* A sentence chain: the stream position and how many draws it has made. */
typedef struct chain {
    int64_t seed;
    int64_t draws;
} chain;

static void picker_init(picker *p, tpch_dist_id id)
{
    const tpch_dist *d = &tpch_dists[id];
    int32_t sum = 0;
    memset(p->entry, 0, sizeof(p->entry));
    for (int i = 0; i < d->count && i < WORD_MAX; i++) {
        int32_t next = sum + d->items[i].weight;
        for (int32_t j = sum + 1; j <= next && j <= TPCH_PICKER_MAX_WEIGHT; j++)
            p->entry[j] = (uint8_t)i;
        if (next > sum) sum = next;
    }
    p->total = sum < TPCH_PICKER_MAX_WEIGHT ? sum : TPCH_PICKER_MAX_WEIGHT;
}

/* The table of list `id` with `tail` after each word, made on first use. */
static const word_table *table_of(grammar *g, tpch_dist_id id, const char *tail)
{
    for (int i = 0; i < g->tables; i++)
        if (g->table[i].id == id && strcmp(g->table[i].tail, tail) == 0) return &g->table[i];
    if (g->tables == TABLE_MAX) return &g->table[0]; /* never: the grammar needs 8 */
    word_table *w = &g->table[g->tables++];
    const tpch_dist *d = &tpch_dists[id];
    char own_tail[sizeof(w->tail)];
    snprintf(own_tail, sizeof(own_tail), "%s", tail);
    memset(w, 0, sizeof(*w));
    picker_init(&w->pick, id);
    w->id = id;
    memcpy(w->tail, own_tail, sizeof(own_tail));
    for (int i = 0; i < d->count && i < WORD_MAX; i++) {
        int n = snprintf(w->text[i], WORD_SLOT, "%s%s", d->items[i].text, own_tail);
        w->len[i] = (uint8_t)(n < WORD_SLOT ? n : WORD_SLOT - 1);
    }
    return w;
}

static tpch_dist_id list_of(char kind)
{
    switch (kind) {
    case 'A':
        return TPCH_DIST_ARTICLES;
    case 'J':
        return TPCH_DIST_ADJECTIVES;
    case 'D':
        return TPCH_DIST_ADVERBS;
    case 'V':
        return TPCH_DIST_VERBS;
    case 'X':
        return TPCH_DIST_AUXILLARIES;
    default:
        return TPCH_DIST_NOUNS;
    }
}

/* Phrase forms of list `id` ("J, J N"): each token is a word kind, maybe
 * followed by its punctuation. */
static void phrase_set_init(grammar *g, phrase_set *set, tpch_dist_id id)
{
    const tpch_dist *d = &tpch_dists[id];
    picker_init(&set->pick, id);
    for (int i = 0; i < d->count && i < FORM_MAX; i++) {
        const word_table *words[FORM_MAX_TOKENS];
        int n = 0;
        for (const char *c = d->items[i].text; *c;) {
            if (*c == ' ') {
                c++;
                continue;
            }
            char kind = *c++;
            char tail[3] = {' ', 0, 0};
            if (*c && *c != ' ') {
                tail[0] = *c++;
                tail[1] = ' ';
            }
            if (n < PHRASE_WORDS) words[n++] = table_of(g, list_of(kind), tail);
        }
        phrase_form *f = &set->form[i];
        f->count = n;
        for (int k = 0; k < n; k++)
            f->word[PHRASE_WORDS - n + k] = words[k];
    }
}

static void grammar_init(grammar *g)
{
    memset(g, 0, sizeof(*g));
    picker_init(&g->sentence_pick, TPCH_DIST_GRAMMAR);
    const tpch_dist *d = &tpch_dists[TPCH_DIST_GRAMMAR];
    for (int i = 0; i < d->count && i < FORM_MAX; i++) {
        sentence_form *f = &g->sentence[i];
        for (const char *c = d->items[i].text; *c; c++)
            if (*c != ' ' && f->count < FORM_MAX_TOKENS) f->kind[f->count++] = *c;
    }
    phrase_set_init(g, &g->np, TPCH_DIST_NP);
    phrase_set_init(g, &g->vp, TPCH_DIST_VP);
    g->prepositions = table_of(g, TPCH_DIST_PREPOSITIONS, " the ");
    g->terminators = table_of(g, TPCH_DIST_TERMINATORS, " ");
}

/* floor(x / (2^31 - 1)) for x < 2^60: x = q (2^31 - 1) + r is
 * q 2^31 + (r - q), so adding x >> 31 (q or q - 1) and 1 before shifting
 * gives q without a division. */
static inline uint64_t div_modulus(uint64_t x)
{
    return (x + (x >> 31) + 1) >> 31;
}

/* tpch_uniform(seed, 1, total) for the small totals of the grammar's lists
 * (the same rule: the double expression only near an integer). */
static inline int64_t uniform_small(int64_t seed, int32_t total)
{
    uint64_t x = (uint64_t)seed * (uint64_t)total;
    uint64_t q = div_modulus(x);
    uint64_t r = x - q * TPCH_RNG_MODULUS;
    if (__builtin_expect(r >= 4096 && r <= TPCH_RNG_MODULUS - 4096, 1)) return 1 + (int64_t)q;
    return tpch_uniform(seed, 1, total);
}

#define ALWAYS_INLINE static inline __attribute__((always_inline))

ALWAYS_INLINE int pick(const picker *p, chain *c)
{
    c->seed = tpch_rng_next(c->seed);
    c->draws++;
    return p->entry[uniform_small(c->seed, p->total)];
}

ALWAYS_INLINE char *put_word(const word_table *w, chain *c, char *out)
{
    int i = pick(&w->pick, c);
    memcpy(out, w->text[i], WORD_SLOT);
    return out + w->len[i];
}

/* A noun or verb phrase, each word followed by its tail. */
ALWAYS_INLINE char *put_phrase(const phrase_set *set, chain *c, char *out)
{
    const phrase_form *f = &set->form[pick(&set->pick, c)];
    switch (f->count) {
    case 3:
        out = put_word(f->word[0], c, out);
        /* fall through */
    case 2:
        out = put_word(f->word[1], c, out);
        /* fall through */
    default:
        return put_word(f->word[2], c, out);
    }
}

/* One sentence and the space that separates it from the next; writes up to
 * WORD_SLOT bytes past its end. */
static char *put_sentence(const grammar *g, chain *cp, char *out)
{
    chain c = *cp;
    const sentence_form *f = &g->sentence[pick(&g->sentence_pick, &c)];
    for (int i = 0; i < f->count; i++) {
        switch (f->kind[i]) {
        case 'N':
            out = put_phrase(&g->np, &c, out);
            break;
        case 'V':
            out = put_phrase(&g->vp, &c, out);
            break;
        case 'P':
            out = put_word(g->prepositions, &c, out);
            out = put_phrase(&g->np, &c, out);
            break;
        case 'T':
            /* the terminator takes the place of the last word's space */
            out = put_word(g->terminators, &c, out - 1);
            break;
        }
    }
    *cp = c;
    return out;
}

/* The plain build, backing `out` ahead of it when `backing` is given. */
static void build_serial(char *out, int64_t size, tpch_backing *backing)
{
    grammar g;
    grammar_init(&g);
    chain c = {tpch_stream_seed(TPCH_STREAM_TEXT_POOL), 0};
    char sentence[SENTENCE_MAX];
    int64_t done = 0;
    while (done < size) {
        int64_t n = put_sentence(&g, &c, sentence) - sentence;
        if (n > size - done) n = size - done;
        if (backing) tpch_backing_ahead(backing, out + done + n);
        memcpy(out + done, sentence, (size_t)n);
        done += n;
    }
}

void tpch_text_pool_build_serial(char *out, int64_t size)
{
    build_serial(out, size, NULL);
}

/* --- threaded build ------------------------------------------------------ */

/* How many of a piece's first sentence starts are remembered for joining;
 * chains merge within a few dozen sentences, this is ample. */
#define JOIN_WINDOW 65536
#define JOIN_SLOTS  (JOIN_WINDOW * 2)

/* Each piece writes into its own slot of one mapping, slots 3% larger than
 * an equal share of the pool; joining then only moves pieces left, into
 * memory already touched, instead of copying 300 MiB to fresh pages. */
typedef struct piece {
    const grammar *g;
    char *buf; /* its slot in the mapping */
    size_t len, cap;
    char *ext; /* phase 2 output: the sentences leading into the next piece */
    size_t ext_len, ext_cap;
    tpch_backing backing; /* of its slot */
    chain c;              /* where the chain stands after the last sentence */
    int64_t draw_end;     /* phase 1 stops at the first sentence starting here or later */
    /* first sentence starts: seed -> byte offset, open addressing */
    int64_t *slot_seed;
    uint32_t *slot_offset;
    int starts;
    struct piece *next; /* phase 2 extends into this piece */
    size_t join_offset; /* where this piece becomes valid (set by the previous) */
    bool joined;        /* phase 2 found the join */
    bool failed;        /* ran out of room or memory */
} piece;

#define HUGE_PAGE ((size_t)2 << 20)

/* `size` bytes starting on a huge page boundary, asked for in huge pages:
 * comments are read from the pool at random offsets, which takes fewer
 * TLB misses in huge pages (the builders fall back to 4 KiB pages when
 * huge ones come dear, tpch/backing.h). */
static char *map_bytes(size_t size, void **mapping, size_t *mapped)
{
    *mapped = size + HUGE_PAGE;
    void *m = mmap(NULL, *mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return NULL;
    *mapping = m;
    char *bytes = (char *)(((uintptr_t)m + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
#ifdef MADV_HUGEPAGE
    madvise(bytes, size, MADV_HUGEPAGE);
#endif
    return bytes;
}

static size_t slot_of(int64_t seed)
{
    return (size_t)(((uint64_t)seed * 0x9E3779B97F4A7C15ull) >> 47) % JOIN_SLOTS;
}

static void remember_start(piece *p, int64_t seed, size_t offset)
{
    size_t s = slot_of(seed);
    while (p->slot_seed[s])
        s = (s + 1) % JOIN_SLOTS;
    p->slot_seed[s] = seed;
    p->slot_offset[s] = (uint32_t)offset;
    p->starts++;
}

static bool find_start(const piece *p, int64_t seed, size_t *offset)
{
    for (size_t s = slot_of(seed); p->slot_seed[s]; s = (s + 1) % JOIN_SLOTS) {
        if (p->slot_seed[s] == seed) {
            *offset = p->slot_offset[s];
            return true;
        }
    }
    return false;
}

static void *phase1(void *arg)
{
    piece *p = arg;
    while (p->c.draws < p->draw_end) {
        if (p->len + SENTENCE_MAX > p->cap) {
            p->failed = true;
            return NULL;
        }
        if (p->starts < JOIN_WINDOW) remember_start(p, p->c.seed, p->len);
        tpch_backing_ahead(&p->backing, p->buf + p->len + SENTENCE_MAX);
        p->len = (size_t)(put_sentence(p->g, &p->c, p->buf + p->len) - p->buf);
    }
    return NULL;
}

/* Runs this piece's chain on into the next piece's range until a sentence
 * starts where one of the next piece's remembered sentences starts. */
static void *phase2(void *arg)
{
    piece *p = arg;
    for (int i = 0; i <= JOIN_WINDOW; i++) {
        size_t offset;
        if (find_start(p->next, p->c.seed, &offset)) {
            p->next->join_offset = offset;
            p->joined = true;
            return NULL;
        }
        if (p->ext_len + SENTENCE_MAX > p->ext_cap) {
            size_t cap = p->ext_cap ? p->ext_cap * 2 : 64 * 1024;
            char *e = realloc(p->ext, cap);
            if (!e) {
                p->failed = true;
                return NULL;
            }
            p->ext = e;
            p->ext_cap = cap;
        }
        p->ext_len = (size_t)(put_sentence(p->g, &p->c, p->ext + p->ext_len) - p->ext);
    }
    return NULL;
}

static void run_all(piece *pieces, int n, void *(*fn)(void *))
{
    pthread_t tid[64];
    bool started[64] = {false};
    for (int i = 1; i < n; i++)
        started[i] = pthread_create(&tid[i], NULL, fn, &pieces[i]) == 0;
    if (n > 0) fn(&pieces[0]);
    for (int i = 1; i < n; i++) {
        if (started[i])
            pthread_join(tid[i], NULL);
        else
            fn(&pieces[i]);
    }
}

/* Moves the valid part of every piece (and the sentences that lead into the
 * next) to its final place; false if some piece outgrew its slot. */
static bool join_pieces(piece *pieces, int n, char *pool, int64_t size, int *last)
{
    int64_t filled = 0;
    for (int i = 0; i < n && filled < size; i++) {
        piece *p = &pieces[i];
        size_t from = i == 0 ? 0 : p->join_offset;
        if (pool + filled > p->buf + from) return false;
        int64_t m = (int64_t)(p->len - from);
        if (m > size - filled) m = size - filled;
        memmove(pool + filled, p->buf + from, (size_t)m);
        filled += m;
        m = (int64_t)p->ext_len;
        if (m > size - filled) m = size - filled;
        if (i + 1 < n && pool + filled + m > pieces[i + 1].buf + pieces[i + 1].join_offset)
            return false;
        if (m > 0) memcpy(pool + filled, p->ext, (size_t)m);
        filled += m;
        *last = i;
    }
    if (filled < size) {
        /* the estimate fell short: the last chain carries on */
        chain c = pieces[*last].c;
        char sentence[SENTENCE_MAX];
        while (filled < size) {
            int64_t m = put_sentence(pieces[0].g, &c, sentence) - sentence;
            if (m > size - filled) m = size - filled;
            memcpy(pool + filled, sentence, (size_t)m);
            filled += m;
        }
    }
    return true;
}

sto_status tpch_text_pool_build(int threads, tpch_text_pool **out)
{
    *out = NULL;
    if (threads < 1) threads = 1;
    if (threads > 64) threads = 64;
    const size_t slot =
        ((size_t)TPCH_TEXT_POOL_SIZE / (size_t)threads / 100 * 103 + 4095) & ~(size_t)4095;
    tpch_text_pool *pool = calloc(1, sizeof(*pool));
    grammar *g = malloc(sizeof(*g));
    piece *pieces = calloc((size_t)threads, sizeof(*pieces));
    sto_status st = NULL;
    if (pool) atomic_init(&pool->refs, 1);
    if (!pool || !g || !pieces) goto oom;
    pool->size = TPCH_TEXT_POOL_SIZE;
    pool->mapped = slot * (size_t)threads + ((size_t)1 << 20);
    pool->bytes = map_bytes(pool->mapped, &pool->mapping, &pool->mapping_size);
    if (!pool->bytes) goto oom;
    grammar_init(g);
    for (int i = 0; i < threads; i++) {
        piece *p = &pieces[i];
        p->buf = pool->bytes + slot * (size_t)i;
        p->cap = i + 1 < threads ? slot : pool->mapped - slot * (size_t)i;
        tpch_backing_init(&p->backing, p->buf, p->buf + p->cap, TPCH_BACKING_DEAR_NS);
    }
    if (threads == 1) goto serial;

    /* Estimate how many draws the whole pool takes from its first MiB, and
     * give each thread an equal share of them. */
    int64_t probe_size = 1 << 20;
    chain probe = {tpch_stream_seed(TPCH_STREAM_TEXT_POOL), 0};
    {
        char *c = pool->bytes, *end = pool->bytes + probe_size;
        tpch_backing_ahead(&pieces[0].backing, end + SENTENCE_MAX);
        while (c < end)
            c = put_sentence(g, &probe, c);
        probe_size = c - pool->bytes;
    }
    int64_t total_draws =
        (int64_t)((double)probe.draws * (double)TPCH_TEXT_POOL_SIZE / (double)probe_size);
    int64_t share = total_draws / threads + 1;

    for (int i = 0; i < threads; i++) {
        piece *p = &pieces[i];
        p->g = g;
        p->c.seed = tpch_rng_skip(tpch_stream_seed(TPCH_STREAM_TEXT_POOL), share * i);
        p->c.draws = share * i;
        p->draw_end = share * (i + 1);
        p->next = i + 1 < threads ? &pieces[i + 1] : NULL;
        p->slot_seed = calloc(JOIN_SLOTS, sizeof(int64_t));
        p->slot_offset = calloc(JOIN_SLOTS, sizeof(uint32_t));
        if (!p->slot_seed || !p->slot_offset) goto oom;
    }
    run_all(pieces, threads, phase1);
    run_all(pieces, threads - 1, phase2);
    int last = 0;
    bool ok = true;
    for (int i = 0; i < threads; i++)
        ok = ok && !pieces[i].failed && (i + 1 == threads || pieces[i].joined);
    if (ok && join_pieces(pieces, threads, pool->bytes, pool->size, &last)) goto done;
serial:
    /* one thread, or (never seen) a piece that outgrew its room */
    tpch_backing_init(&pieces[0].backing, pool->bytes, pool->bytes + pool->mapped,
                      TPCH_BACKING_DEAR_NS);
    build_serial(pool->bytes, pool->size, &pieces[0].backing);
    goto done;

oom:
    st = sto_error(STO_OUT_OF_MEMORY, "out of memory building the TPC-H text pool");
done:
    if (pieces && pool)
        for (int i = 0; i < threads; i++)
            pool->huge_bytes += pieces[i].backing.huge_bytes;
    if (pieces) {
        for (int i = 0; i < threads; i++) {
            free(pieces[i].ext);
            free(pieces[i].slot_seed);
            free(pieces[i].slot_offset);
        }
        free(pieces);
    }
    free(g);
    if (st) {
        tpch_text_pool_free(pool);
        return st;
    }
    *out = pool;
    return NULL;
}

void tpch_text_pool_retain(tpch_text_pool *pool)
{
    atomic_fetch_add_explicit(&pool->refs, 1, memory_order_relaxed);
}

void tpch_text_pool_free(tpch_text_pool *pool)
{
    if (!pool) return;
    /* the last reference sees every other holder's writes before freeing */
    if (atomic_fetch_sub_explicit(&pool->refs, 1, memory_order_acq_rel) != 1) return;
    if (pool->mapping) munmap(pool->mapping, pool->mapping_size);
    free(pool);
}
