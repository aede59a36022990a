/*
 * fuzz_parse.c — libFuzzer target for the SQL parser.
 *
 * Any byte string goes through sql_parse; a success is printed back with the
 * AST printer (so every node the parser builds is visited), an error is
 * rendered with sql_format_error (so the caret code sees every position the
 * parser can produce). Inputs that start with byte 0x01 use their second
 * byte to make the arena fail after that many allocations, which drives the
 * out-of-memory paths too. Crashes, leaks (ASan), undefined behaviour (UBSan)
 * and hangs are what the fuzzer looks for; tests/sql/test_fuzz_parse.sh
 * builds and runs it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sql/error_format.h"
#include "sql/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    long fail_after = -1;
    if (size >= 2 && data[0] == 0x01) {
        fail_after = data[1];
        data += 2;
        size -= 2;
    }
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';

    sql_arena *arena = sql_arena_create();
    if (!arena) {
        free(text);
        return 0;
    }
    sql_arena_fail_after(arena, fail_after);
    sql_stmt_list *stmts = NULL;
    sto_status st = sql_parse(arena, text, &stmts);
    if (st) {
        char buf[512];
        size_t n = sql_format_error(text, st, buf, sizeof(buf));
        if (n < sizeof(buf) && strlen(buf) != n) abort();
        if (strcmp(st->sqlstate, STO_OUT_OF_MEMORY) == 0 && fail_after < 0) abort();
        sto_status_free(st);
    } else {
        if (!stmts) abort();
        for (int i = 0; i < stmts->count; i++) {
            const sql_stmt *s = stmts->items[i];
            if (s->text_start < 0 || s->text_end < s->text_start || s->text_end > (int)size)
                abort();
            free(sql_stmt_to_string(s));
        }
    }
    sql_arena_destroy(arena);
    free(text);
    return 0;
}
