/*
 * arena.h — the bump allocator that owns a parsed statement's memory.
 *
 * The parser builds thousands of tiny nodes and the binder adds its own; all
 * of them live exactly as long as the statement does. So they come from an
 * arena: allocation is a pointer bump inside large blocks, and one
 * sql_arena_destroy frees everything at once — no per-node free, no leaks on
 * error paths.
 *
 * Allocation failure is sticky: after the first failed allocation the arena
 * remembers it (sql_arena_failed), so code that builds many nodes can check
 * once at the end instead of after every call. Every allocation still
 * returns NULL on failure and callers must not dereference it.
 */
#ifndef RACKDB_SQL_ARENA_H
#define RACKDB_SQL_ARENA_H

#include <stdbool.h>
#include <stddef.h>

typedef struct sql_arena sql_arena;

/* A new, empty arena; NULL when memory is short. */
sql_arena *sql_arena_create(void);

/* Frees the arena and everything allocated from it. NULL is ignored. */
void sql_arena_destroy(sql_arena *a);

/* size bytes aligned for any object, zero-filled; NULL (and the arena marked
 * failed) when memory is short. */
void *sql_arena_alloc(sql_arena *a, size_t size);

/* A NUL-terminated copy of len bytes of s; NULL when memory is short. */
char *sql_arena_strndup(sql_arena *a, const char *s, size_t len);

/* True once any allocation from this arena has failed. */
bool sql_arena_failed(const sql_arena *a);

/* Bytes handed out so far (for tests and statistics). */
size_t sql_arena_used(const sql_arena *a);

/* Test hook: the next n allocations succeed and every one after them fails;
 * -1 (the default) turns this off. Lets tests prove that every
 * out-of-memory path is handled. */
void sql_arena_fail_after(sql_arena *a, long n);

#endif
