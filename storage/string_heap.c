/*
 * string_heap.c — a grow-only arena for long string bytes (see string_heap.h).
 *
 * Blocks double from 16 KiB to 1 MiB so a chunk holding a few short-lived
 * strings stays small while a full chunk of comments costs a couple of
 * allocations. A string bigger than a block gets a block of its own.
 */
#include "storage/string_heap.h"

#include <stdlib.h>
#include <string.h>

#define HEAP_FIRST_BLOCK (16u << 10)
#define HEAP_MAX_BLOCK   (1u << 20)

struct sto_heap_block {
    sto_heap_block *next;
    size_t size;
    char data[];
};

void sto_heap_init(sto_string_heap *h)
{
    memset(h, 0, sizeof(*h));
    h->next_size = HEAP_FIRST_BLOCK;
}

void sto_heap_free(sto_string_heap *h)
{
    if (h->release) h->release(h->owner);
    sto_heap_block *b = h->blocks;
    while (b) {
        sto_heap_block *next = b->next;
        free(b);
        b = next;
    }
    sto_heap_init(h);
}

char *sto_heap_alloc_block(sto_string_heap *h, size_t len)
{
    /* next_size is the whole allocation, header included, so a block is
     * exactly one of the allocator's size classes (16 KiB ... 1 MiB): with
     * the header on top, a 1 MiB block took jemalloc's 1.25 MiB class. */
    size_t total = h->next_size ? h->next_size : HEAP_FIRST_BLOCK;
    if (total < sizeof(sto_heap_block) + len) total = sizeof(sto_heap_block) + len;
    sto_heap_block *b = malloc(total);
    if (!b) return NULL;
    b->size = total - sizeof(*b);
    h->bytes_reserved += total;
    b->next = h->blocks;
    h->blocks = b;
    h->cur = b->data + len;
    h->end = b->data + b->size;
    h->bytes_used += len;
    if (h->next_size < HEAP_MAX_BLOCK) h->next_size *= 2;
    return b->data;
}

const char *sto_heap_copy(sto_string_heap *h, const void *bytes, size_t len)
{
    char *p = sto_heap_alloc(h, len);
    if (p && len) memcpy(p, bytes, len);
    return p;
}

bool sto_heap_keep(sto_string_heap *h, void (*release)(void *owner), void *owner)
{
    if (h->release) {
        if (h->release != release || h->owner != owner) return false;
        release(owner); /* one reference per heap is enough */
        return true;
    }
    h->release = release;
    h->owner = owner;
    return true;
}
