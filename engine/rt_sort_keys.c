/*
 * rt_sort_keys.c — normalized keys for sorting a run (rt_sort_keys.h).
 *
 * Each row becomes an element of `words + 1` 64-bit words: its key bytes
 * read as big-endian words (so comparing words as unsigned numbers is
 * comparing the bytes), then the row's address. A stable bottom-up merge
 * sort over pointers to the elements orders them: insertion sort makes
 * runs of SMALL_RUN elements, then runs are merged pairwise between two
 * pointer arrays.
 */
#include "engine/rt_sort_keys.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/pipeline.h"

#define SMALL_RUN 16

enum key_kind { KEY_INT, KEY_DOUBLE, KEY_STR };

/* How one key is written into the normalized bytes. */
typedef struct key_shape {
    enum key_kind kind;
    bool nulls;                           /* a NULL byte comes first */
    uint32_t bytes;                       /* value bytes after it */
    uint64_t min, span;                   /* KEY_INT: offsets from min, at most span */
    uint32_t min_len, max_len, len_bytes; /* KEY_STR */
} key_shape;

static uint32_t bytes_for(uint64_t span)
{
    uint32_t b = 0;
    while (span) {
        b++;
        span >>= 8;
    }
    return b;
}

/* The shape of every key over the run; false when they need more than
 * ENG_SORT_KEY_BYTES. */
static bool shape_keys(const eng_sort_spec *s, const uint8_t *data, uint64_t n, uint32_t rb,
                       key_shape *shapes, uint32_t *total)
{
    *total = 0;
    for (uint32_t k = 0; k < s->nkeys; k++) {
        const eng_sort_key *key = &s->keys[k];
        key_shape *sh = &shapes[k];
        uint32_t no = cg_row_null_offset(s->ncols, key->slot);
        const uint8_t *col = data + key->slot * CG_ROW_SLOT;
        memset(sh, 0, sizeof(*sh));
        sh->kind = sto_type_is_string(key->type.id)  ? KEY_STR
                   : key->type.id == STO_TYPE_DOUBLE ? KEY_DOUBLE
                                                     : KEY_INT;
        uint64_t lo = UINT64_MAX, hi = 0;
        uint32_t min_len = UINT32_MAX, max_len = 0;
        for (uint64_t i = 0; i < n; i++) {
            const uint8_t *row = data + i * rb;
            if (row[no]) {
                sh->nulls = true;
                continue;
            }
            if (sh->kind == KEY_INT) {
                uint64_t v = eng_sort_int_image(key->type.id, col + i * rb);
                if (v < lo) lo = v;
                if (v > hi) hi = v;
            } else if (sh->kind == KEY_STR) {
                uint32_t len;
                memcpy(&len, col + i * rb, sizeof(len)); /* sto_str starts with len */
                if (len < min_len) min_len = len;
                if (len > max_len) max_len = len;
                if (max_len > ENG_SORT_KEY_BYTES) return false;
            }
        }
        if (sh->kind == KEY_INT) {
            sh->min = lo <= hi ? lo : 0;
            sh->span = lo <= hi ? hi - lo : 0;
            sh->bytes = bytes_for(sh->span);
        } else if (sh->kind == KEY_DOUBLE) {
            sh->bytes = 8;
        } else if (max_len) {
            sh->min_len = min_len;
            sh->max_len = max_len;
            sh->len_bytes = min_len == max_len ? 0 : bytes_for(max_len);
            sh->bytes = max_len + sh->len_bytes;
        }
        *total += sh->nulls + sh->bytes;
        if (*total > ENG_SORT_KEY_BYTES) return false;
    }
    return true;
}

/* The low `bytes` bytes of v, most significant first. */
static void put_be(uint8_t *out, uint64_t v, uint32_t bytes)
{
    for (uint32_t i = 0; i < bytes; i++)
        out[i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
}

/* Writes row's normalized key at out (zeroed, room for every key). */
static void write_key(const eng_sort_spec *s, const key_shape *shapes, const uint8_t *row,
                      uint8_t *out)
{
    for (uint32_t k = 0; k < s->nkeys; k++) {
        const eng_sort_key *key = &s->keys[k];
        const key_shape *sh = &shapes[k];
        bool null = row[cg_row_null_offset(s->ncols, key->slot)] != 0;
        if (sh->nulls) *out++ = null ? (key->nulls_first ? 0 : 2) : 1;
        if (null) {
            out += sh->bytes; /* the NULL byte decided */
            continue;
        }
        const uint8_t *p = row + key->slot * CG_ROW_SLOT;
        if (sh->kind == KEY_INT) {
            uint64_t v = eng_sort_int_image(key->type.id, p) - sh->min;
            put_be(out, key->desc ? sh->span - v : v, sh->bytes);
        } else if (sh->kind == KEY_DOUBLE) {
            uint64_t v = eng_sort_double_image(p);
            put_be(out, key->desc ? ~v : v, 8);
        } else if (sh->bytes) {
            sto_str str;
            memcpy(&str, p, sizeof(str));             /* row slots are packed */
            memcpy(out, sto_str_data(&str), str.len); /* padded with the zeros there */
            put_be(out + sh->max_len, str.len, sh->len_bytes);
            if (key->desc)
                for (uint32_t i = 0; i < sh->bytes; i++)
                    out[i] = (uint8_t)~out[i];
        }
        out += sh->bytes;
    }
}

static inline uint64_t load_be64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return __builtin_bswap64(v);
}

/* a before b: the first `words` words compared as unsigned numbers. */
static inline bool elem_less(const uint64_t *a, const uint64_t *b, uint32_t words)
{
    for (uint32_t i = 0; i < words; i++)
        if (a[i] != b[i]) return a[i] < b[i];
    return false;
}

static void insertion_sort(const uint64_t **p, uint64_t n, uint32_t words)
{
    for (uint64_t i = 1; i < n; i++) {
        const uint64_t *x = p[i];
        uint64_t j = i;
        for (; j > 0 && elem_less(x, p[j - 1], words); j--)
            p[j] = p[j - 1];
        p[j] = x;
    }
}

/* Sorts p[0, n) (tmp: room for n more); the result is in p. */
static void merge_sort(const uint64_t **p, const uint64_t **tmp, uint64_t n, uint32_t words)
{
    for (uint64_t i = 0; i < n; i += SMALL_RUN)
        insertion_sort(p + i, n - i < SMALL_RUN ? n - i : SMALL_RUN, words);
    const uint64_t **from = p, **to = tmp;
    for (uint64_t width = SMALL_RUN; width < n; width *= 2) {
        for (uint64_t lo = 0; lo < n; lo += 2 * width) {
            uint64_t mid = lo + width < n ? lo + width : n;
            uint64_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            uint64_t a = lo, b = mid, o = lo;
            while (a < mid && b < hi)
                to[o++] = elem_less(from[b], from[a], words) ? from[b++] : from[a++];
            while (a < mid)
                to[o++] = from[a++];
            while (b < hi)
                to[o++] = from[b++];
        }
        const uint64_t **t = from;
        from = to;
        to = t;
    }
    if (from != p) memcpy(p, from, n * sizeof(*p));
}

sto_status eng_sort_keys_order(const eng_sort_spec *s, const uint8_t *data, uint64_t n,
                               uint32_t row_bytes, const uint8_t **order, bool *done)
{
    *done = false;
    key_shape *shapes = malloc((s->nkeys ? s->nkeys : 1) * sizeof(*shapes));
    if (!shapes) return sto_error_oom();
    uint32_t total = 0;
    if (!shape_keys(s, data, n, row_bytes, shapes, &total)) {
        free(shapes);
        return STO_OK;
    }
    uint32_t words = (total + 7) / 8, stride = words + 1;
    uint64_t *elems = malloc((n ? n : 1) * stride * sizeof(*elems));
    const uint64_t **p = malloc((n ? n : 1) * 2 * sizeof(*p));
    if (!elems || !p) {
        free(elems);
        free(p);
        free(shapes);
        return sto_error_oom();
    }
    uint8_t buf[ENG_SORT_KEY_BYTES + 8];
    for (uint64_t i = 0; i < n; i++) {
        const uint8_t *row = data + i * row_bytes;
        uint64_t *e = elems + i * stride;
        memset(buf, 0, words * 8);
        write_key(s, shapes, row, buf);
        for (uint32_t w = 0; w < words; w++)
            e[w] = load_be64(buf + 8 * w);
        e[words] = (uint64_t)(uintptr_t)row;
        p[i] = e;
    }
    merge_sort(p, p + n, n, words);
    for (uint64_t i = 0; i < n; i++)
        order[i] = (const uint8_t *)(uintptr_t)p[i][words];
    free(p);
    free(elems);
    free(shapes);
    *done = true;
    return STO_OK;
}
