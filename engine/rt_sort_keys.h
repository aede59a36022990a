/*
 * rt_sort_keys.h — sorting a run of rows by normalized keys.
 *
 * rows ─► one pass: per key, NULLs seen, integer range, string lengths
 *      ─► each row's ORDER BY keys written as one fixed-width byte string
 *         whose unsigned lexicographic order is the ORDER BY order
 *      ─► those strings (as big-endian 64-bit words) sorted with the row
 *         pointer beside them ─► the rows in order
 *
 * A comparison of two rows is then a loop over a few words in one array:
 * no NULL checks, no type switch, no string pointer followed. Each key
 * takes only the bytes its values need: a NULL byte only when the run has
 * NULLs in it, integers as the offset from the run's smallest value in as
 * few bytes as the range needs (none for a constant), strings padded to the
 * run's longest and followed by their length only when lengths differ.
 * DESC inverts the value's bytes; the NULL byte places NULLs first or last
 * whatever the direction. Runs whose keys would take more than
 * ENG_SORT_KEY_BYTES (long strings) are left to the comparison sort.
 */
#ifndef RACKDB_ENGINE_RT_SORT_KEYS_H
#define RACKDB_ENGINE_RT_SORT_KEYS_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "codegen/pipeline.h"
#include "engine/rt_sort.h"
#include "storage/status.h"

/* The most bytes a row's normalized key may take. */
#define ENG_SORT_KEY_BYTES 64u

/* An integer-like slot as an unsigned number of the same order. */
static inline uint64_t eng_sort_int_image(sto_type_id id, const uint8_t *p)
{
    return (uint64_t)cg_row_slot_int(id, p) ^ ((uint64_t)1 << 63);
}

/* A double slot as an unsigned number of the same order: NaN above all,
 * -0.0 equal to 0.0 (as eng_sort_compare orders them). */
static inline uint64_t eng_sort_double_image(const uint8_t *p)
{
    double x;
    memcpy(&x, p, 8);
    if (isnan(x)) x = NAN;
    if (x == 0) x = 0; /* -0.0 */
    uint64_t v;
    memcpy(&v, &x, 8);
    return (v >> 63) ? ~v : v ^ ((uint64_t)1 << 63);
}

/* Puts the n rows of row_bytes bytes at data in ORDER BY order: order[i]
 * is the i-th row. *done is false (and order untouched) when the keys do
 * not fit ENG_SORT_KEY_BYTES; the caller then sorts by comparison. */
sto_status eng_sort_keys_order(const eng_sort_spec *s, const uint8_t *data, uint64_t n,
                               uint32_t row_bytes, const uint8_t **order, bool *done);

#endif
