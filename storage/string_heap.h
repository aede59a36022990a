/*
 * string_heap.h — an arena for string bytes owned by a chunk.
 *
 * Strings longer than STO_STR_INLINE_MAX do not fit in their sto_str; their
 * bytes are copied here and the sto_str points at the copy. The heap is a
 * list of large blocks that only grows and is freed as a whole with its
 * chunk, so appending a string is a bump of a pointer and a memcpy.
 *
 * A heap may also keep alive bytes owned by someone else that its chunk's
 * strings point into without a copy (the TPC-H generator's comment text):
 * it holds one reference to their owner and drops it when freed.
 */
#ifndef RACKDB_STORAGE_STRING_HEAP_H
#define RACKDB_STORAGE_STRING_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sto_heap_block sto_heap_block;

typedef struct sto_string_heap {
    sto_heap_block *blocks;       /* newest first */
    char *cur, *end;              /* free space in the newest block */
    size_t next_size;             /* size of the next block, header included */
    size_t bytes_used;            /* string bytes stored */
    size_t bytes_reserved;        /* bytes of all blocks, headers included */
    void (*release)(void *owner); /* drops the kept reference; NULL: none */
    void *owner;
} sto_string_heap;

void sto_heap_init(sto_string_heap *h);
void sto_heap_free(sto_string_heap *h);

/* A copy of `len` bytes in the heap, or NULL when out of memory. */
const char *sto_heap_copy(sto_string_heap *h, const void *bytes, size_t len);

/* Starts a new block with room for `len` bytes and returns them (NULL when
 * out of memory): sto_heap_alloc's path when the newest block is full. */
char *sto_heap_alloc_block(sto_string_heap *h, size_t len);

/* `len` bytes of uninitialized space (for building a string in place);
 * inline because writers call it per string. */
static inline char *sto_heap_alloc(sto_string_heap *h, size_t len)
{
    if (!h->cur || (size_t)(h->end - h->cur) < len) return sto_heap_alloc_block(h, len);
    char *p = h->cur;
    h->cur += len;
    h->bytes_used += len;
    return p;
}

/* Hands the heap one reference to `owner`, dropped with release(owner) when
 * the heap is freed, so strings may point into bytes `owner` keeps. A heap
 * keeps one owner: true when it now keeps this one (a reference it already
 * kept is released at once), false when it keeps another (the caller still
 * holds its reference). */
bool sto_heap_keep(sto_string_heap *h, void (*release)(void *owner), void *owner);

#endif
