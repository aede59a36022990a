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

#include "fuzz_input.h"
#include "sql/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input in;
    if (!fuzz_input_open(&in, data, size)) return 0;
    sql_stmt_list *stmts = NULL;
    sto_status st = sql_parse(in.arena, in.text, &stmts);
    if (st) {
        fuzz_check_error(&in, st);
        sto_status_free(st);
    } else {
        if (!stmts) abort();
        for (int i = 0; i < stmts->count; i++) {
            const sql_stmt *s = stmts->items[i];
            if (s->text_start < 0 || s->text_end < s->text_start || s->text_end > (int)in.size)
                abort();
            free(sql_stmt_to_string(s));
        }
    }
    fuzz_input_close(&in);
    return 0;
}
