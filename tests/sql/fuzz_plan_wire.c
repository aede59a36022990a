/*
 * fuzz_plan_wire.c — libFuzzer target over sql_plan_decode: any byte string
 * is decoded (with a table lookup that finds nothing, as on a server
 * without the tables), and a plan that decodes is printed and encoded
 * again. Any crash, sanitizer report, leak or hang is a bug.
 *
 * Built with -DFUZZ_SEED_MAIN instead, it is a program that writes the
 * encoding of tests/sql/plan_wire_sample.h's plan into the file named by
 * its argument: the fuzzer's seed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "plan_wire_sample.h"
#include "sql/plan_wire.h"

#ifdef FUZZ_SEED_MAIN
int main(int argc, char **argv)
{
    sql_plan *plan = build();
    uint8_t *bytes = NULL;
    size_t len = 0;
    if (argc != 2 || !plan || sql_plan_encode(plan, &bytes, &len) != STO_OK) return 1;
    FILE *f = fopen(argv[1], "wb");
    if (!f || fwrite(bytes, 1, len, f) != len || fclose(f) != 0) return 1;
    free(bytes);
    sql_arena_destroy(arena);
    return 0;
}
#else
static sto_status no_tables(void *arg, const char *name, sto_table **table, uint64_t *rows,
                            const sto_column_stats **stats)
{
    (void)arg;
    (void)name;
    *table = NULL;
    *rows = 0;
    *stats = NULL;
    return STO_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sql_plan *p = NULL;
    sto_status st = sql_plan_decode(data, size, no_tables, NULL, &p);
    if (st) {
        sto_status_free(st);
        return 0;
    }
    free(sql_plan_to_string(p));
    uint8_t *bytes = NULL;
    size_t len = 0;
    sto_status_free(sql_plan_encode(p, &bytes, &len));
    free(bytes);
    sql_plan_decoded_free(p);
    return 0;
}
#endif
