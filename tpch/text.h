/*
 * text.h — the TPC-H comment text pool (clause 4.2.2.10, dbgen 2.14).
 *
 * Every comment column is a substring of one 300 MiB pool of pseudo-English
 * sentences. The pool is produced once from the grammar in tpch/dists.c with
 * its own random stream (TEXT_POOL): a sentence form is picked ("N V T",
 * "N P V N T", ...), each noun/verb phrase picks its form and words, a
 * prepositional phrase is "<preposition> the <noun phrase>", and the
 * terminator replaces the space after the last word. Sentences are joined
 * by one space and the pool is cut at exactly 300 MiB.
 *
 * A comment then costs two draws on its column's stream: an offset in
 * [0, pool size - max] and a length in [min, max]; its bytes are the pool's
 * bytes there, so comments point into the pool and are never copied.
 *
 * Building the pool is the generator's largest fixed cost, so it is built by
 * several threads: each starts a sentence chain at a different position of
 * the random stream; a chain that overruns into the next thread's range
 * keeps going until one of its sentences starts on the same draw as one of
 * the next chain's sentences. From there on both chains are identical, so
 * the pieces are joined at that point (chains on a common stream merge after
 * a few sentences, like the Kruskal count card trick).
 */
#ifndef RACKDB_TPCH_TEXT_H
#define RACKDB_TPCH_TEXT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "storage/status.h"
#include "tpch/rng.h"

#define TPCH_TEXT_POOL_SIZE (300 * 1024 * 1024)

typedef struct tpch_text_pool {
    char *bytes; /* TPCH_TEXT_POOL_SIZE bytes, not NUL-terminated */
    int64_t size;
    size_t mapped; /* bytes usable from `bytes` on */
    void *mapping; /* the mapping that holds them, and its size */
    size_t mapping_size;
    size_t huge_bytes; /* of them, backed in huge pages (tpch/backing.h) */
    atomic_int refs;   /* the generator's, and one per chunk pointing into it */
} tpch_text_pool;

/* Builds the pool with up to `threads` threads (>= 1), holding one
 * reference. */
sto_status tpch_text_pool_build(int threads, tpch_text_pool **out);

/* Another reference, for whatever keeps pointers into the bytes. */
void tpch_text_pool_retain(tpch_text_pool *pool);

/* Drops a reference; the last one frees the pool. */
void tpch_text_pool_free(tpch_text_pool *pool);

/* Builds the first `size` bytes of the pool one sentence after another, the
 * plain way; for testing the threaded build. `out` must hold size bytes. */
void tpch_text_pool_build_serial(char *out, int64_t size);

/* A comment of min..max bytes drawn from stream s (two draws). */
static inline const char *tpch_text(const tpch_text_pool *pool, tpch_stream *s, int min, int max,
                                    uint32_t *len)
{
    int64_t offset = tpch_draw(s, 0, pool->size - max);
    *len = (uint32_t)tpch_draw(s, min, max);
    return pool->bytes + offset;
}

#endif
