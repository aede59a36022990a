/*
 * rt_strings.c — the per-worker arena for strings that generated code makes.
 *
 * A list of blocks that only grows between resets; a reset keeps the newest
 * block (the largest so far) so a worker that resets once per morsel reaches
 * a steady state without calling malloc again.
 */
#include <stdlib.h>

#include "codegen/rt.h"

struct cg_rt_block {
    cg_rt_block *next;
    size_t size; /* bytes of data[] */
    char data[];
};

enum { FIRST_BLOCK = 64 * 1024 };

void cg_rt_strings_init(cg_rt_strings *a)
{
    a->blocks = NULL;
    a->cur = a->end = NULL;
    a->used = 0;
}

void cg_rt_strings_reset(cg_rt_strings *a)
{
    if (!a->blocks) return;
    cg_rt_block *keep = a->blocks, *b = keep->next;
    while (b) {
        cg_rt_block *next = b->next;
        free(b);
        b = next;
    }
    keep->next = NULL;
    a->blocks = keep;
    a->cur = keep->data;
    a->end = keep->data + keep->size;
    a->used = 0;
}

void cg_rt_strings_free(cg_rt_strings *a)
{
    cg_rt_block *b = a->blocks;
    while (b) {
        cg_rt_block *next = b->next;
        free(b);
        b = next;
    }
    cg_rt_strings_init(a);
}

char *cg_rt_strings_alloc(cg_rt_strings *a, size_t n)
{
    if ((size_t)(a->end - a->cur) < n || !a->cur) {
        size_t size = a->blocks ? a->blocks->size * 2 : FIRST_BLOCK;
        while (size < n)
            size *= 2;
        cg_rt_block *b = malloc(sizeof(*b) + size);
        if (!b) return NULL;
        b->size = size;
        b->next = a->blocks;
        a->blocks = b;
        a->cur = b->data;
        a->end = b->data + size;
    }
    char *p = a->cur;
    a->cur += n;
    a->used += n;
    return p;
}
