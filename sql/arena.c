/*
 * arena.c — bump allocation in a chain of blocks.
 *
 * Blocks double in size from 4 KiB up to 64 KiB, so a small statement costs
 * one malloc and a large one a handful; a request bigger than a quarter of
 * the next block gets a block of its own so the bump pointer's block is not
 * wasted. Only whole blocks are ever freed, all at once.
 */
#include "sql/arena.h"

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_FIRST_BLOCK 4096
#define ARENA_MAX_BLOCK   65536
#define ARENA_ALIGN       alignof(max_align_t)

typedef struct arena_block {
    struct arena_block *next;
    size_t size; /* usable bytes in data */
    size_t used;
    alignas(max_align_t) unsigned char data[];
} arena_block;

struct sql_arena {
    arena_block *head; /* the block being bumped into; older ones follow */
    size_t next_size;
    size_t used;
    long fail_after; /* test hook, -1 = off */
    bool failed;
};

sql_arena *sql_arena_create(void)
{
    sql_arena *a = calloc(1, sizeof(*a));
    if (!a) return NULL;
    a->next_size = ARENA_FIRST_BLOCK;
    a->fail_after = -1;
    return a;
}

void sql_arena_destroy(sql_arena *a)
{
    if (!a) return;
    arena_block *b = a->head;
    while (b) {
        arena_block *next = b->next;
        free(b);
        b = next;
    }
    free(a);
}

static arena_block *new_block(size_t size)
{
    arena_block *b = malloc(sizeof(*b) + size);
    if (!b) return NULL;
    b->size = size;
    b->used = 0;
    return b;
}

void *sql_arena_alloc(sql_arena *a, size_t size)
{
    if (a->fail_after == 0) {
        a->failed = true;
        return NULL;
    }
    if (a->fail_after > 0) a->fail_after--;
    if (size == 0) size = 1;
    if (size > SIZE_MAX / 2) {
        a->failed = true;
        return NULL;
    }
    size = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);

    arena_block *b = a->head;
    if (!b || b->size - b->used < size) {
        if (size > a->next_size / 4) {
            /* A big request: its own block, kept behind the current one. */
            arena_block *big = new_block(size);
            if (!big) {
                a->failed = true;
                return NULL;
            }
            big->used = size;
            if (b) {
                big->next = b->next;
                b->next = big;
            } else {
                big->next = NULL;
                a->head = big;
            }
            a->used += size;
            memset(big->data, 0, size);
            return big->data;
        }
        b = new_block(a->next_size);
        if (!b) {
            a->failed = true;
            return NULL;
        }
        b->next = a->head;
        a->head = b;
        if (a->next_size < ARENA_MAX_BLOCK) a->next_size *= 2;
    }
    void *p = b->data + b->used;
    b->used += size;
    a->used += size;
    memset(p, 0, size);
    return p;
}

char *sql_arena_strndup(sql_arena *a, const char *s, size_t len)
{
    char *p = sql_arena_alloc(a, len + 1);
    if (!p) return NULL;
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

bool sql_arena_failed(const sql_arena *a)
{
    return a->failed;
}

size_t sql_arena_used(const sql_arena *a)
{
    return a->used;
}

void sql_arena_fail_after(sql_arena *a, long n)
{
    a->fail_after = n;
}
