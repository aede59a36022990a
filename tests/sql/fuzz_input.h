/*
 * fuzz_input.h — how the SQL front end's libFuzzer targets (fuzz_parse.c,
 * fuzz_bind.c) read one input and check an error they got back.
 *
 * An input that starts with byte 0x01 uses its second byte as the number of
 * allocations after which the arena fails, which drives the out-of-memory
 * paths; the rest is the SQL text, copied NUL-terminated. A finding is an
 * abort(), which libFuzzer reports with the input that caused it.
 */
#ifndef RACKDB_TESTS_SQL_FUZZ_INPUT_H
#define RACKDB_TESTS_SQL_FUZZ_INPUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sql/arena.h"
#include "sql/error_format.h"

typedef struct fuzz_input {
    char *text;      /* the SQL, NUL-terminated */
    size_t size;     /* its length */
    long fail_after; /* -1: the arena never fails */
    sql_arena *arena;
} fuzz_input;

/* False (nothing to free) when memory runs out before the target starts. */
static bool fuzz_input_open(fuzz_input *in, const uint8_t *data, size_t size)
{
    in->fail_after = -1;
    if (size >= 2 && data[0] == 0x01) {
        in->fail_after = data[1];
        data += 2;
        size -= 2;
    }
    in->size = size;
    in->text = malloc(size + 1);
    if (!in->text) return false;
    memcpy(in->text, data, size);
    in->text[size] = '\0';
    in->arena = sql_arena_create();
    if (!in->arena) {
        free(in->text);
        return false;
    }
    sql_arena_fail_after(in->arena, in->fail_after);
    return true;
}

static void fuzz_input_close(fuzz_input *in)
{
    sql_arena_destroy(in->arena);
    free(in->text);
}

/* Aborts unless st renders to the length sql_format_error reports and is an
 * out-of-memory error only when a failure was injected. */
static void fuzz_check_error(const fuzz_input *in, sto_status st)
{
    char buf[512];
    size_t n = sql_format_error(in->text, st, buf, sizeof(buf));
    if (n < sizeof(buf) && strlen(buf) != n) abort();
    if (strcmp(st->sqlstate, STO_OUT_OF_MEMORY) == 0 && in->fail_after < 0) abort();
}

#endif
