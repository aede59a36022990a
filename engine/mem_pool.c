/*
 * mem_pool.c — big blocks kept for reuse (mem_pool.h).
 */
#include "engine/mem_pool.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define POOL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define POOL_ASAN 1
#endif
#endif
#ifdef POOL_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n)   ASAN_POISON_MEMORY_REGION(p, n)
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define POISON(p, n)   ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define DEFAULT_CAP_MAX ((uint64_t)8 << 30)

/* Size classes: four between consecutive powers of two (class_index). */
#define CLASSES 256u

/* A kept block starts with its links (the pool needs no memory of its
 * own per block, so it can keep any number of them). */
typedef struct node {
    struct node *older, *newer; /* every kept block, by age */
    struct node *cprev, *cnext; /* the blocks of one class, newest first */
    size_t size;                /* its class */
} node;

#define NODE_BYTES ((sizeof(node) + 63) & ~(size_t)63)

struct eng_mem_pool {
    pthread_mutex_t lock;
    uint64_t cap, bytes;
    node *oldest, *newest;
    node *classes[CLASSES];
};

sto_status eng_mem_pool_create(uint64_t cap, eng_mem_pool **out)
{
    *out = NULL;
    const char *env = getenv("RACKDB_MEM_POOL_MB"); /* a cap for tests and A/B runs */
    if (!cap && env && *env) {
        cap = strtoull(env, NULL, 10) << 20;
    } else if (!cap) {
        long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        cap = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page / 4 : 0;
        if (cap > DEFAULT_CAP_MAX) cap = DEFAULT_CAP_MAX;
    }
    eng_mem_pool *p = calloc(1, sizeof(*p));
    if (!p) return sto_error_oom();
    if (pthread_mutex_init(&p->lock, NULL) != 0) {
        free(p);
        return sto_error_oom();
    }
    p->cap = cap; /* 0 (RACKDB_MEM_POOL_MB=0): keeps nothing */
    *out = p;
    return STO_OK;
}

static void release(node *n)
{
    UNPOISON(n, n->size);
    free(n);
}

void eng_mem_pool_destroy(eng_mem_pool *p)
{
    if (!p) return;
    for (node *n = p->oldest, *next; n; n = next) {
        next = n->newer;
        release(n);
    }
    pthread_mutex_destroy(&p->lock);
    free(p);
}

/* The distance between size classes around c: an eighth of the power of
 * two above. */
static size_t class_step(size_t c)
{
    if (c <= 64) return 8;
    unsigned top = 63u - (unsigned)__builtin_clzll((unsigned long long)(c - 1));
    return (size_t)1 << (top - 2);
}

size_t eng_mem_pool_class(size_t bytes)
{
    if (bytes < NODE_BYTES) bytes = NODE_BYTES;
    size_t step = class_step(bytes);
    size_t c = (bytes + step - 1) & ~(step - 1);
    return c < bytes ? bytes : c;
}

/* c = 2^top + k × 2^(top-2), k = 1..4 (top = floor(log2(c - 1))). */
static unsigned class_index(size_t c)
{
    unsigned top = 63u - (unsigned)__builtin_clzll((unsigned long long)(c - 1));
    return top * 4 + (unsigned)((c - 1 - ((size_t)1 << top)) >> (top - 2));
}

static void unlink_node(eng_mem_pool *p, node *n)
{
    if (n->older)
        n->older->newer = n->newer;
    else
        p->oldest = n->newer;
    if (n->newer)
        n->newer->older = n->older;
    else
        p->newest = n->older;
    if (n->cprev)
        n->cprev->cnext = n->cnext;
    else
        p->classes[class_index(n->size)] = n->cnext;
    if (n->cnext) n->cnext->cprev = n->cprev;
    p->bytes -= n->size;
}

void *eng_mem_pool_take(eng_mem_pool *p, size_t bytes)
{
    unsigned want = class_index(eng_mem_pool_class(bytes));
    node *n = NULL;
    pthread_mutex_lock(&p->lock);
    /* its class or the next two: a block little bigger than asked; the
     * newest, whose pages are likeliest still in the caches */
    for (unsigned i = want; i < want + 3 && i < CLASSES && !n; i++)
        n = p->classes[i];
    if (n) unlink_node(p, n);
    pthread_mutex_unlock(&p->lock);
    if (n) UNPOISON(n, n->size);
    return n;
}

bool eng_mem_pool_give(eng_mem_pool *p, void *block, size_t bytes)
{
    size_t size = eng_mem_pool_class(bytes);
    if (size > p->cap) return false;
    node *n = block, *out = NULL;
    pthread_mutex_lock(&p->lock);
    while (p->oldest && p->bytes + size > p->cap) {
        node *o = p->oldest;
        unlink_node(p, o);
        o->newer = out; /* freed after the lock: unmapping takes a while */
        out = o;
    }
    unsigned c = class_index(size);
    *n = (node){.older = p->newest, .cnext = p->classes[c], .size = size};
    if (p->newest)
        p->newest->newer = n;
    else
        p->oldest = n;
    p->newest = n;
    if (n->cnext) n->cnext->cprev = n;
    p->classes[c] = n;
    p->bytes += size;
    POISON((uint8_t *)n + NODE_BYTES, size - NODE_BYTES);
    pthread_mutex_unlock(&p->lock);
    while (out) {
        node *next = out->newer;
        release(out);
        out = next;
    }
    return true;
}

uint64_t eng_mem_pool_bytes(eng_mem_pool *p)
{
    pthread_mutex_lock(&p->lock);
    uint64_t b = p->bytes;
    pthread_mutex_unlock(&p->lock);
    return b;
}

uint64_t eng_mem_pool_cap(const eng_mem_pool *p)
{
    return p->cap;
}
