/*
 * text.c — builds the TPC-H comment text pool (see text.h for the grammar
 * and for how the threaded build joins its pieces).
 */
#include "tpch/text.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "tpch/dists.h"

#define FORM_MAX_TOKENS 8
#define FORM_MAX        8
#define SENTENCE_MAX    512 /* generous bound on one sentence's bytes */

/* A word list; its picker keeps the words zero-padded, so copying one is a
 * single 16-byte move (the output always has room; words are shorter). */
typedef struct word_list {
    tpch_picker pick;
} word_list;

typedef struct form_token {
    const word_list *words; /* NULL for sentence-level tokens */
    char kind;              /* sentence level: N V P T; phrase level: A J D N V X */
    char punct;             /* written right after the word, 0 if none */
} form_token;

typedef struct form {
    int count;
    form_token tok[FORM_MAX_TOKENS];
} form;

typedef struct grammar {
    tpch_picker sentence_pick, np_pick, vp_pick;
    word_list nouns, verbs, adjectives, adverbs, auxillaries, articles, prepositions, terminators;
    form sentence[FORM_MAX], np[FORM_MAX], vp[FORM_MAX];
} grammar;

/* A sentence chain: the stream position and how many draws it has made. */
typedef struct chain {
    int64_t seed;
    int64_t draws;
} chain;

static const word_list *words_of(const grammar *g, char kind)
{
    switch (kind) {
    case 'A':
        return &g->articles;
    case 'J':
        return &g->adjectives;
    case 'D':
        return &g->adverbs;
    case 'N':
        return &g->nouns;
    case 'V':
        return &g->verbs;
    case 'X':
        return &g->auxillaries;
    default:
        return NULL;
    }
}

/* Splits each form of list `id` ("J, J N") into tokens. */
static void parse_forms(const grammar *g, tpch_dist_id id, form *forms, bool phrase)
{
    const tpch_dist *d = &tpch_dists[id];
    for (int i = 0; i < d->count && i < FORM_MAX; i++) {
        form *f = &forms[i];
        f->count = 0;
        for (const char *c = d->items[i].text; *c;) {
            if (*c == ' ') {
                c++;
                continue;
            }
            form_token t = {phrase ? words_of(g, *c) : NULL, *c, 0};
            c++;
            if (*c && *c != ' ') t.punct = *c++;
            if (f->count < FORM_MAX_TOKENS) f->tok[f->count++] = t;
        }
    }
}

static void words_init(word_list *w, tpch_dist_id id)
{
    tpch_picker_init(&w->pick, id);
}

static void grammar_init(grammar *g)
{
    tpch_picker_init(&g->sentence_pick, TPCH_DIST_GRAMMAR);
    tpch_picker_init(&g->np_pick, TPCH_DIST_NP);
    tpch_picker_init(&g->vp_pick, TPCH_DIST_VP);
    words_init(&g->nouns, TPCH_DIST_NOUNS);
    words_init(&g->verbs, TPCH_DIST_VERBS);
    words_init(&g->adjectives, TPCH_DIST_ADJECTIVES);
    words_init(&g->adverbs, TPCH_DIST_ADVERBS);
    words_init(&g->auxillaries, TPCH_DIST_AUXILLARIES);
    words_init(&g->articles, TPCH_DIST_ARTICLES);
    words_init(&g->prepositions, TPCH_DIST_PREPOSITIONS);
    words_init(&g->terminators, TPCH_DIST_TERMINATORS);
    parse_forms(g, TPCH_DIST_GRAMMAR, g->sentence, false);
    parse_forms(g, TPCH_DIST_NP, g->np, true);
    parse_forms(g, TPCH_DIST_VP, g->vp, true);
}

static inline int pick(const tpch_picker *p, chain *c)
{
    c->seed = tpch_rng_next(c->seed);
    c->draws++;
    return p->entry[tpch_uniform(c->seed, 1, p->total)];
}

static char *put_word(const word_list *w, chain *c, char *out)
{
    int i = pick(&w->pick, c);
    memcpy(out, w->pick.pad[i], 16);
    return out + w->pick.len[i];
}

/* A noun or verb phrase: each word followed by its punctuation and a space. */
static char *put_phrase(const tpch_picker *forms_pick, const form *forms, chain *c, char *out)
{
    const form *f = &forms[pick(forms_pick, c)];
    for (int i = 0; i < f->count; i++) {
        out = put_word(f->tok[i].words, c, out);
        if (f->tok[i].punct) *out++ = f->tok[i].punct;
        *out++ = ' ';
    }
    return out;
}

/* One sentence and the space that separates it from the next. */
static char *put_sentence(const grammar *g, chain *c, char *out)
{
    const form *f = &g->sentence[pick(&g->sentence_pick, c)];
    for (int i = 0; i < f->count; i++) {
        switch (f->tok[i].kind) {
        case 'N':
            out = put_phrase(&g->np_pick, g->np, c, out);
            break;
        case 'V':
            out = put_phrase(&g->vp_pick, g->vp, c, out);
            break;
        case 'P':
            out = put_word(&g->prepositions, c, out);
            memcpy(out, " the ", 5);
            out = put_phrase(&g->np_pick, g->np, c, out + 5);
            break;
        case 'T':
            /* the terminator abuts the last word */
            out = put_word(&g->terminators, c, out - 1);
            *out++ = ' ';
            break;
        }
    }
    return out;
}

void tpch_text_pool_build_serial(char *out, int64_t size)
{
    grammar g;
    grammar_init(&g);
    chain c = {tpch_stream_seed(TPCH_STREAM_TEXT_POOL), 0};
    char sentence[SENTENCE_MAX];
    int64_t done = 0;
    while (done < size) {
        int64_t n = put_sentence(&g, &c, sentence) - sentence;
        if (n > size - done) n = size - done;
        memcpy(out + done, sentence, (size_t)n);
        done += n;
    }
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
    chain c;          /* where the chain stands after the last sentence */
    int64_t draw_end; /* phase 1 stops at the first sentence starting here or later */
    /* first sentence starts: seed -> byte offset, open addressing */
    int64_t *slot_seed;
    uint32_t *slot_offset;
    int starts;
    struct piece *next; /* phase 2 extends into this piece */
    size_t join_offset; /* where this piece becomes valid (set by the previous) */
    bool joined;        /* phase 2 found the join */
    bool failed;        /* ran out of room or memory */
} piece;

static char *map_bytes(size_t size)
{
    void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return NULL;
#ifdef MADV_HUGEPAGE
    madvise(m, size, MADV_HUGEPAGE); /* fewer page faults on 300 MiB */
#endif
    return m;
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
    pool->bytes = map_bytes(pool->mapped);
    if (!pool->bytes) goto oom;
    grammar_init(g);
    if (threads == 1) goto serial;

    /* Estimate how many draws the whole pool takes from its first MiB, and
     * give each thread an equal share of them. */
    int64_t probe_size = 1 << 20;
    chain probe = {tpch_stream_seed(TPCH_STREAM_TEXT_POOL), 0};
    {
        char *c = pool->bytes, *end = pool->bytes + probe_size;
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
        p->buf = pool->bytes + slot * (size_t)i;
        p->cap = i + 1 < threads ? slot : pool->mapped - slot * (size_t)i;
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
    tpch_text_pool_build_serial(pool->bytes, pool->size);
    goto done;

oom:
    st = sto_error(STO_OUT_OF_MEMORY, "out of memory building the TPC-H text pool");
done:
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
    if (pool->bytes) munmap(pool->bytes, pool->mapped);
    free(pool);
}
