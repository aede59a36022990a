/*
 * rt_str.c — string helpers behind generated expressions: comparison and
 * hashing of long strings, substring search, the general LIKE matcher, and
 * the functions that build new strings (||, UPPER/LOWER, SUBSTRING, TRIM,
 * REPLACE, LEFT/RIGHT, casts that shorten) and STRPOS.
 */
#include <string.h>
#if defined(__AVX2__) || defined(__SSE2__)
#include <immintrin.h>
#endif

#include "codegen/rt.h"

/* A string result of len bytes at p: inline when short, else p itself
 * (which must outlive the result). */
static sto_str make_ref(const char *p, uint32_t len)
{
    return sto_str_make(p, len);
}

/* A new string of len bytes whose bytes are written into *bytes; long ones
 * get space in the arena. More than 1 GiB is an error. */
static int32_t new_str(cg_error *err, cg_rt_strings *arena, uint64_t len, sto_str *out,
                       char **bytes)
{
    if (len > 0x3FFFFFFF) {
        err->detail = sto_error(STO_DATA_EXCEPTION, "string of %llu bytes is too long",
                                (unsigned long long)len);
        return CG_ERR_RUNTIME;
    }
    memset(out, 0, sizeof(*out));
    out->len = (uint32_t)len;
    if (len <= STO_STR_INLINE_MAX) {
        *bytes = out->prefix;
        return CG_ERR_NONE;
    }
    char *p = cg_rt_strings_alloc(arena, len);
    if (!p) {
        err->detail = sto_error_oom();
        return CG_ERR_RUNTIME;
    }
    out->u.ptr = p;
    *bytes = p;
    return CG_ERR_NONE;
}

/* Long strings repeat their first bytes in prefix; call after filling. */
static void finish_str(sto_str *s)
{
    if (s->len > STO_STR_INLINE_MAX) memcpy(s->prefix, s->u.ptr, 4);
}

int32_t cg_rt_str_cmp(const sto_str *a, const sto_str *b)
{
    int c = sto_str_cmp(a, b);
    return (c > 0) - (c < 0);
}

int32_t cg_rt_mem_eq(const char *a, const char *b, uint64_t n)
{
    return memcmp(a, b, n) == 0;
}

/* Substring search for the short haystacks of LIKE '%x%': candidate
 * positions are those where both the needle's first and last bytes match,
 * found 32 (or 16) at a time with vector compares; only candidates are
 * compared in full. The last block overlaps the one before it instead of
 * falling back to a byte loop: positions checked twice were rejected the
 * first time, so the first match found is still the leftmost. On text this
 * beats memmem, whose setup costs more than searching 50 bytes. */
#ifdef __AVX2__
/* The first match starting in [i, i + 32), or -1. */
static int64_t find_block32(const char *hay, uint64_t i, const char *needle, uint64_t k,
                            __m256i first, __m256i final)
{
    __m256i a = _mm256_loadu_si256((const __m256i *)(hay + i));
    __m256i b = _mm256_loadu_si256((const __m256i *)(hay + i + k - 1));
    __m256i both = _mm256_and_si256(_mm256_cmpeq_epi8(a, first), _mm256_cmpeq_epi8(b, final));
    uint32_t mask = (uint32_t)_mm256_movemask_epi8(both);
    while (mask) {
        unsigned j = (unsigned)__builtin_ctz(mask);
        if (memcmp(hay + i + j + 1, needle + 1, k - 2) == 0) return (int64_t)(i + j);
        mask &= mask - 1;
    }
    return -1;
}
#endif

#ifdef __SSE2__
static int64_t find_block16(const char *hay, uint64_t i, const char *needle, uint64_t k,
                            __m128i first, __m128i final)
{
    __m128i a = _mm_loadu_si128((const __m128i *)(hay + i));
    __m128i b = _mm_loadu_si128((const __m128i *)(hay + i + k - 1));
    __m128i both = _mm_and_si128(_mm_cmpeq_epi8(a, first), _mm_cmpeq_epi8(b, final));
    uint32_t mask = (uint32_t)_mm_movemask_epi8(both);
    while (mask) {
        unsigned j = (unsigned)__builtin_ctz(mask);
        if (memcmp(hay + i + j + 1, needle + 1, k - 2) == 0) return (int64_t)(i + j);
        mask &= mask - 1;
    }
    return -1;
}
#endif

int64_t cg_rt_find(const char *hay, uint64_t hay_len, const char *needle, uint64_t needle_len)
{
    uint64_t k = needle_len;
    if (k == 0) return 0;
    if (k > hay_len) return -1;
    if (k == 1) {
        const char *p = memchr(hay, needle[0], hay_len);
        return p ? p - hay : -1;
    }
    uint64_t starts = hay_len - k + 1; /* positions a match may start at */
    int64_t r;
#ifdef __AVX2__
    if (starts >= 32) {
        const __m256i first = _mm256_set1_epi8(needle[0]);
        const __m256i final = _mm256_set1_epi8(needle[k - 1]);
        uint64_t i = 0;
        for (; i + 32 <= starts; i += 32)
            if ((r = find_block32(hay, i, needle, k, first, final)) >= 0) return r;
        if (i < starts && (r = find_block32(hay, starts - 32, needle, k, first, final)) >= 0)
            return r;
        return -1;
    }
#endif
#ifdef __SSE2__
    if (starts >= 16) {
        const __m128i first = _mm_set1_epi8(needle[0]);
        const __m128i final = _mm_set1_epi8(needle[k - 1]);
        uint64_t i = 0;
        for (; i + 16 <= starts; i += 16)
            if ((r = find_block16(hay, i, needle, k, first, final)) >= 0) return r;
        if (i < starts && (r = find_block16(hay, starts - 16, needle, k, first, final)) >= 0)
            return r;
        return -1;
    }
#endif
    /* fewer than 16 starts: let memchr (vectorized, page-safe) find the
     * candidates instead of a byte loop full of mispredicted branches */
    for (uint64_t i = 0; i < starts;) {
        const char *p = memchr(hay + i, needle[0], starts - i);
        if (!p) break;
        i = (uint64_t)(p - hay);
        if (hay[i + k - 1] == needle[k - 1] && memcmp(hay + i + 1, needle + 1, k - 2) == 0)
            return (int64_t)i;
        i++;
    }
    (void)r;
    return -1;
}

/* Word by word with a multiply-xorshift step; the generated code finishes
 * the hash with its own mixing, so this only needs to spread the bytes. */
uint64_t cg_rt_hash_bytes(const char *p, uint64_t len)
{
    uint64_t h = 0x243F6A8885A308D3ull ^ len;
    uint64_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 32;
    }
    if (i < len) {
        uint64_t w = 0;
        memcpy(&w, p + i, len - i);
        h = (h ^ w) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 32;
    }
    return h;
}

/* --- LIKE -------------------------------------------------------------------- */

static uint8_t fold(uint8_t c, bool ci)
{
    return ci && c >= 'A' && c <= 'Z' ? (uint8_t)(c - 'A' + 'a') : c;
}

/* The length of the UTF-8 character whose first byte is c (1 for ASCII and
 * for bytes that cannot start a character, so malformed text still moves
 * forward). */
static inline size_t char_len(uint8_t c)
{
    if (c < 0xC0) return 1;
    return c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
}

/* Matching with one backtrack point: after a '%', a mismatch retries the
 * rest of the pattern one character further on. That suffices because '%'
 * and '_' have no structure (a later '%' only ever needs the leftmost match
 * of what precedes it). Literal bytes compare as bytes, which is right for
 * UTF-8 since every position tried is a character boundary; only '_' and the
 * retry step need the length of a character. esc < 0: no escape character. */
static bool like_match(const uint8_t *s, size_t n, const uint8_t *p, size_t m, int esc, bool ci)
{
    size_t si = 0, pi = 0, star_p = SIZE_MAX, star_s = 0;
    while (si < n) {
        if (pi < m) {
            uint8_t c = p[pi];
            size_t step = 1;
            if (esc >= 0 && c == esc) {
                c = p[pi + 1];
                step = 2;
            } else if (c == '%') {
                star_p = ++pi;
                star_s = si;
                continue;
            } else if (c == '_') {
                pi++;
                si += char_len(s[si]);
                if (si > n) si = n; /* a cut-off last character */
                continue;
            }
            if (fold(c, ci) == fold(s[si], ci)) {
                pi += step;
                si++;
                continue;
            }
        }
        if (star_p == SIZE_MAX) return false;
        pi = star_p;
        star_s += char_len(s[star_s]);
        if (star_s > n) star_s = n;
        si = star_s;
    }
    while (pi < m && p[pi] == '%' && !(esc >= 0 && p[pi] == esc))
        pi++;
    return pi == m;
}

int32_t cg_rt_like(cg_error *err, const sto_str *s, const sto_str *pattern, const sto_str *escape,
                   int32_t case_insensitive, uint8_t *out)
{
    int esc = '\\';
    if (escape) {
        if (escape->len > 1) {
            err->detail = sto_error(STO_INVALID_ESCAPE_SEQUENCE, "invalid escape string");
            return CG_ERR_RUNTIME;
        }
        esc = escape->len ? (uint8_t)sto_str_data(escape)[0] : -1;
    }
    const uint8_t *p = (const uint8_t *)sto_str_data(pattern);
    size_t m = pattern->len;
    for (size_t i = 0; esc >= 0 && i < m; i++) {
        if (p[i] != esc) continue;
        if (i + 1 == m) {
            err->detail = sto_error(STO_INVALID_ESCAPE_SEQUENCE,
                                    "LIKE pattern must not end with escape character");
            return CG_ERR_RUNTIME;
        }
        i++;
    }
    *out = like_match((const uint8_t *)sto_str_data(s), s->len, p, m, esc, case_insensitive != 0);
    return CG_ERR_NONE;
}

/* --- new strings --------------------------------------------------------------- */

/* The byte offset of 0-based character k in p[0, n), or n when the text has
 * fewer characters. */
static uint32_t char_offset(const char *p, uint32_t n, int64_t k)
{
    uint32_t i = 0;
    for (; i < n && k > 0; k--)
        i += (uint32_t)char_len((uint8_t)p[i]);
    return i < n ? i : n;
}

/* 1 when the n bytes at p are all ASCII: 8 bytes per step. */
static bool all_ascii(const char *p, uint32_t n)
{
    uint32_t i = 0;
    uint64_t acc = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        acc |= w;
    }
    for (; i < n; i++)
        acc |= (uint8_t)p[i];
    return (acc & 0x8080808080808080ull) == 0;
}

int32_t cg_rt_substr(cg_error *err, const sto_str *s, int64_t start, int64_t count,
                     int32_t has_count, sto_str *out)
{
    if (has_count && count < 0) {
        err->detail = sto_error(STO_DATA_EXCEPTION, "negative substring length not allowed");
        return CG_ERR_RUNTIME;
    }
    /* 1-based [first, end) in characters: those before 1 count against the
     * length */
    int64_t first = start < 1 ? 1 : start;
    int64_t end = has_count ? (start > INT64_MAX - count ? INT64_MAX : start + count) : INT64_MAX;
    if (first >= end) {
        memset(out, 0, sizeof(*out));
        return CG_ERR_NONE;
    }
    const char *p = sto_str_data(s);
    uint32_t n = s->len;
    /* when the bytes before the end position are ASCII, characters are
     * bytes up to there (the usual case, and the only one for TPC-H) */
    uint32_t scan = end - 1 < (int64_t)n ? (uint32_t)(end - 1) : n;
    uint32_t from, to;
    if (all_ascii(p, scan)) {
        from = first - 1 < (int64_t)n ? (uint32_t)(first - 1) : n;
        to = end - 1 < (int64_t)n ? (uint32_t)(end - 1) : n;
    } else {
        from = char_offset(p, n, first - 1);
        to = from + char_offset(p + from, n - from, end - first);
    }
    if (from >= to) {
        memset(out, 0, sizeof(*out));
        return CG_ERR_NONE;
    }
    *out = make_ref(p + from, to - from);
    return CG_ERR_NONE;
}

/* The UTF-8 characters in p[0, bytes): the bytes that are not
 * continuation bytes. */
static int64_t chars_before(const char *p, uint32_t bytes)
{
    int64_t cont = 0;
    for (uint32_t i = 0; i < bytes; i++)
        cont += ((uint8_t)p[i] & 0xC0) == 0x80;
    return (int64_t)bytes - cont;
}

int32_t cg_rt_char_length(const sto_str *s)
{
    const char *p = sto_str_data(s);
    if (all_ascii(p, s->len)) return (int32_t)s->len;
    return (int32_t)chars_before(p, s->len);
}

int32_t cg_rt_concat(cg_error *err, cg_rt_strings *arena, const sto_str *a, const sto_str *b,
                     sto_str *out)
{
    char *p;
    sto_str r;
    int32_t kind = new_str(err, arena, (uint64_t)a->len + b->len, &r, &p);
    if (kind) return kind;
    memcpy(p, sto_str_data(a), a->len);
    memcpy(p + a->len, sto_str_data(b), b->len);
    finish_str(&r);
    *out = r;
    return CG_ERR_NONE;
}

int32_t cg_rt_change_case(cg_error *err, cg_rt_strings *arena, const sto_str *s, int32_t upper,
                          sto_str *out)
{
    char *p;
    sto_str r;
    int32_t kind = new_str(err, arena, s->len, &r, &p);
    if (kind) return kind;
    const char *in = sto_str_data(s);
    for (uint32_t i = 0; i < s->len; i++) {
        char c = in[i];
        if (upper && c >= 'a' && c <= 'z') c = (char)(c - 'a' + 'A');
        if (!upper && c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        p[i] = c;
    }
    finish_str(&r);
    *out = r;
    return CG_ERR_NONE;
}

int32_t cg_rt_strpos(const sto_str *s, const sto_str *sub)
{
    const char *p = sto_str_data(s);
    int64_t at = cg_rt_find(p, s->len, sto_str_data(sub), sub->len);
    return at < 0 ? 0 : (int32_t)(chars_before(p, (uint32_t)at) + 1);
}

/* True when the character of len bytes at c is one of the characters of
 * set[0, n). */
static bool in_char_set(const char *c, size_t len, const char *set, uint32_t n)
{
    for (uint32_t i = 0; i < n;) {
        size_t k = char_len((uint8_t)set[i]);
        if (k == len && i + k <= n && memcmp(set + i, c, len) == 0) return true;
        i += (uint32_t)k;
    }
    return false;
}

int32_t cg_rt_trim(cg_error *err, const sto_str *s, const sto_str *chars, int32_t sides,
                   sto_str *out)
{
    (void)err;
    const char *p = sto_str_data(s);
    const char *set = chars ? sto_str_data(chars) : " ";
    uint32_t nset = chars ? chars->len : 1;
    uint32_t from = 0, to = s->len;
    if (sides & CG_TRIM_LEADING) {
        while (from < to) {
            size_t k = char_len((uint8_t)p[from]);
            if (from + k > to || !in_char_set(p + from, k, set, nset)) break;
            from += (uint32_t)k;
        }
    }
    if (sides & CG_TRIM_TRAILING) {
        while (to > from) {
            uint32_t start = to - 1; /* back to the last character's first byte */
            while (start > from && ((uint8_t)p[start] & 0xC0) == 0x80)
                start--;
            if (!in_char_set(p + start, to - start, set, nset)) break;
            to = start;
        }
    }
    *out = make_ref(p + from, to - from);
    return CG_ERR_NONE;
}

int32_t cg_rt_replace(cg_error *err, cg_rt_strings *arena, const sto_str *s, const sto_str *from,
                      const sto_str *to, sto_str *out)
{
    const char *p = sto_str_data(s), *f = sto_str_data(from), *t = sto_str_data(to);
    uint32_t n = s->len, k = from->len;
    uint64_t hits = 0;
    for (int64_t at = 0; k > 0 && (uint64_t)at + k <= n;) {
        int64_t i = cg_rt_find(p + at, n - (uint64_t)at, f, k);
        if (i < 0) break;
        hits++;
        at += i + k;
    }
    if (hits == 0) {
        *out = make_ref(p, n);
        return CG_ERR_NONE;
    }
    char *d;
    sto_str r;
    int32_t kind = new_str(err, arena, n - hits * k + hits * to->len, &r, &d);
    if (kind) return kind;
    for (uint64_t at = 0; at < n;) {
        int64_t i = hits ? cg_rt_find(p + at, n - at, f, k) : -1;
        uint64_t keep = i < 0 ? n - at : (uint64_t)i;
        memcpy(d, p + at, keep);
        d += keep;
        at += keep;
        if (i < 0) break;
        memcpy(d, t, to->len);
        d += to->len;
        at += k;
        hits--;
    }
    finish_str(&r);
    *out = r;
    return CG_ERR_NONE;
}

int32_t cg_rt_left_right(cg_error *err, const sto_str *s, int64_t n, int32_t right, sto_str *out)
{
    (void)err;
    const char *p = sto_str_data(s);
    int64_t chars = cg_rt_char_length(s);
    /* the characters kept: n of them, or all but -n */
    int64_t keep = n >= 0 ? (n < chars ? n : chars) : (-n < chars ? chars + n : 0);
    uint32_t cut = char_offset(p, s->len, right ? chars - keep : keep);
    *out = right ? make_ref(p + cut, s->len - cut) : make_ref(p, cut);
    return CG_ERR_NONE;
}

void cg_rt_str_truncate(const sto_str *s, uint32_t max_chars, int32_t is_char, sto_str *out)
{
    const char *p = sto_str_data(s);
    uint32_t len = s->len, chars = 0, i = 0;
    if (max_chars) {
        for (; i < len; i++) {
            if (((uint8_t)p[i] & 0xC0) == 0x80) continue; /* UTF-8 continuation */
            if (chars == max_chars) break;
            chars++;
        }
        len = i;
    }
    if (is_char)
        while (len > 0 && p[len - 1] == ' ')
            len--;
    *out = make_ref(p, len);
}
