/*
 * digits.h — decimal digits without a division per digit, for the
 * generator's zero-padded keys and phone numbers (tpch/gen.c: "Clerk#",
 * "Customer#", "Supplier#" keys, "CC-AAA-EEE-NNNN") and the .tbl writer's
 * numbers.
 *
 * tpch_digits8 turns n < 10^8 into its eight digits (leading zeros
 * included) in one 64-bit word, the most significant digit in the lowest
 * byte, so storing the word writes them in reading order: two steps split
 * n into 4-digit, then 2-digit, then 1-digit parts, each step dividing all
 * parts of the word at once by a multiplication and a shift (v / 100 =
 * v * 5243 >> 19 for v < 43699; v / 10 = v * 103 >> 10 for v < 179).
 * A writer stores all eight bytes; what lands past the number is
 * overwritten by the next field, so output buffers keep TPCH_DIGITS_SLACK
 * bytes of room. The .tbl writer (tpch/gen_files.c) uses it too for
 * numbers of 3 to 8 digits, whose length varies from row to row: a loop of
 * two-digit steps took fewer instructions but mispredicted its exit.
 */
#ifndef RACKDB_TPCH_DIGITS_H
#define RACKDB_TPCH_DIGITS_H

#include <stdint.h>
#include <string.h>

/* Bytes a writer may store past the digits it writes. */
#define TPCH_DIGITS_SLACK 8

#define TPCH_ASCII_ZEROS 0x3030303030303030ull

/* The eight digits of n < 10^8, each as its value 0..9. */
static inline uint64_t tpch_digits8(uint32_t n)
{
    uint64_t x = (uint64_t)(n / 10000) | ((uint64_t)(n % 10000) << 32);
    uint64_t h = ((x * 5243) >> 19) & 0x0000007F0000007Full; /* each 4-digit part / 100 */
    x = h | ((x - h * 100) << 16);
    uint64_t t = ((x * 103) >> 10) & 0x000F000F000F000Full; /* each 2-digit part / 10 */
    return t | ((x - t * 10) << 8);
}

/* n < 10^width as exactly `width` (1..8) digits, zero-padded. Stores
 * eight bytes. */
static inline void tpch_put_fixed(char *out, uint32_t n, int width)
{
    uint64_t w = (tpch_digits8(n) | TPCH_ASCII_ZEROS) >> (8 * (8 - width));
    memcpy(out, &w, 8);
}

#endif
