/*
 * gen_files.c — parallel .tbl writer (see gen_files.h).
 */
#include "tpch/gen_files.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tpch/digits.h"
#include "tpch/file_writer.h"
#include "tpch/schema.h"

/* --- formatting ------------------------------------------------------------------ */

/* "00" "01" ... "99": two digits per step. */
static const char digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930"
    "31323334353637383940414243444546474849505152535455565758596061"
    "62636465666768697071727374757677787980818283848586878889909192"
    "93949596979899";

static inline __attribute__((always_inline)) int digits_of(uint64_t n)
{
    int d = 1;
    while (n >= 100) {
        n /= 100;
        d += 2;
    }
    return d + (n >= 10);
}

/* Digits of n < 10^8 (1 for 0) without a loop: the bit length times
 * log10(2) (1233 / 4096) is the digit count or one less, and one
 * comparison with a power of ten settles it (n | 1 counts 0 as a digit
 * and changes no other comparison: the powers past 1 are even). */
static inline __attribute__((always_inline)) int digits_of_small(uint32_t n)
{
    static const uint32_t pow10[9] = {1,      10,      100,      1000,     10000,
                                      100000, 1000000, 10000000, 100000000};
    int t = ((32 - __builtin_clz(n | 1)) * 1233) >> 12;
    return t + ((n | 1) >= pow10[t]);
}

/* n in decimal, without a branch on its length, which varies from row to
 * row (prices, part and supplier keys): numbers below 100 are one pair of
 * a table, those below 10^8 (every key and price below SF 10's order keys)
 * take their eight digits at once (tpch/digits.h) and drop the leading
 * zeros with a shift; stores up to TPCH_DIGITS_SLACK bytes past them. */
static inline __attribute__((always_inline)) char *put_uint(char *out, uint64_t n)
{
    if (n < 100) {
        /* line numbers, quantities, the units of discounts and taxes: the
         * pair "0n" from its second byte on when n < 10 */
        size_t one = n < 10;
        memcpy(out, digit_pairs + 2 * n + one, 2);
        return out + 2 - one;
    }
    if (n < 100000000) {
        int len = digits_of_small((uint32_t)n);
        uint64_t w = (tpch_digits8((uint32_t)n) | TPCH_ASCII_ZEROS) >> (8 * (8 - len));
        memcpy(out, &w, 8);
        return out + len;
    }
    int len = digits_of(n);
    char *p = out + len;
    while (n >= 100) {
        p -= 2;
        memcpy(p, digit_pairs + 2 * (n % 100), 2);
        n /= 100;
    }
    if (n >= 10)
        memcpy(p - 2, digit_pairs + 2 * n, 2);
    else
        p[-1] = (char)('0' + n);
    return out + len;
}

static inline __attribute__((always_inline)) char *put_int(char *out, int64_t n)
{
    if (n < 0) {
        *out++ = '-';
        return put_uint(out, (uint64_t)0 - (uint64_t)n);
    }
    return put_uint(out, (uint64_t)n);
}

static inline __attribute__((always_inline)) char *put_money(char *out, int64_t cents)
{
    uint64_t c = (uint64_t)cents;
    if (cents < 0) {
        *out++ = '-';
        c = (uint64_t)0 - c;
    }
    out = put_uint(out, c / 100);
    *out++ = '.';
    memcpy(out, digit_pairs + 2 * (c % 100), 2);
    return out + 2;
}

/* Days before each month, in common and leap years. */
static const int16_t month_start[2][13] = {
    {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365},
    {0, 31, 60, 91, 121, 152, 182, 213, 244, 274, 305, 335, 366},
};

static bool is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* YYYY-MM-DD of a day number (days since 1970-01-01), proleptic Gregorian. */
static char *put_date(char *out, int64_t days)
{
    int64_t y, doy;
    if (days >= 0 && days < 36524) {
        /* 1970..2069, all TPC-H dates: years by counting, no divisions */
        y = 1970 + days / 365;
        int64_t start = (y - 1970) * 365 + (y - 1969) / 4;
        if (start > days) {
            y--;
            start = (y - 1970) * 365 + (y - 1969) / 4;
        }
        doy = days - start;
    } else {
        /* civil-from-days over 400-year eras */
        int64_t z = days + 719468;
        int64_t era = (z >= 0 ? z : z - 146096) / 146097;
        int64_t doe = z - era * 146097;
        int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
        y = yoe + era * 400;
        int64_t doy_mar = doe - (365 * yoe + yoe / 4 - yoe / 100);
        /* doy_mar counts from March 1st; turn it into days since January 1st */
        if (doy_mar >= 306) {
            y++;
            doy = doy_mar - 306;
        } else {
            doy = doy_mar + 59 + is_leap(y);
        }
    }
    const int16_t *ms = month_start[is_leap(y)];
    int m = (int)(doy / 32); /* never past the right month */
    while (doy >= ms[m + 1])
        m++;
    int64_t d = doy - ms[m] + 1;
    m++;
    if (y < 0 || y > 9999) y = ((y % 10000) + 10000) % 10000; /* four digits, as %04d would not */
    memcpy(out, digit_pairs + 2 * (y / 100), 2);
    memcpy(out + 2, digit_pairs + 2 * (y % 100), 2);
    out[4] = '-';
    memcpy(out + 5, digit_pairs + 2 * m, 2);
    out[7] = '-';
    memcpy(out + 8, digit_pairs + 2 * d, 2);
    return out + 10;
}

/* Dates of the TPC-H window, formatted once per formatter. */
#define DATE_CACHE_FIRST 8035 /* 1992-01-01 */
#define DATE_CACHE_DAYS  2560

typedef struct formatter {
    char dates[DATE_CACHE_DAYS][10];
} formatter;

static void formatter_init(formatter *f)
{
    for (int i = 0; i < DATE_CACHE_DAYS; i++)
        put_date(f->dates[i], DATE_CACHE_FIRST + i);
}

static inline __attribute__((always_inline)) char *put_INT(char *p, const tpch_value *v,
                                                           const formatter *f, int max)
{
    (void)max;
    (void)f;
    return put_int(p, v->i);
}
static inline __attribute__((always_inline)) char *put_MONEY(char *p, const tpch_value *v,
                                                             const formatter *f, int max)
{
    (void)max;
    (void)f;
    return put_money(p, v->i);
}
static inline __attribute__((always_inline)) char *put_WHOLE(char *p, const tpch_value *v,
                                                             const formatter *f, int max)
{
    (void)max;
    (void)f;
    return put_int(p, v->i / 100);
}
static inline __attribute__((always_inline)) char *put_DATE(char *p, const tpch_value *v,
                                                            const formatter *f, int max)
{
    (void)max;
    uint64_t i = (uint64_t)(v->i - DATE_CACHE_FIRST);
    if (f && i < DATE_CACHE_DAYS) {
        memcpy(p, f->dates[i], 10);
        return p + 10;
    }
    return put_date(p, v->i);
}
static inline __attribute__((always_inline)) char *put_CHAR(char *p, const tpch_value *v,
                                                            const formatter *f, int max)
{
    (void)f;
    /* The copies are fixed-size blocks (see TPCH_STR_SLACK) chosen by the
     * column's declared length, so only the longest comments branch on
     * their length, which varies from row to row: up to 32 bytes, one
     * block; up to 64, the first 32 bytes and the last 32 of max(len, 32),
     * which overlap, or coincide when len <= 32 (the bytes read stay within
     * the string and the slack after it). */
    uint32_t len = v->len;
    if (max <= TPCH_STR_SLACK && len <= TPCH_STR_SLACK) {
        memcpy(p, v->s, TPCH_STR_SLACK);
    } else if (max <= 2 * TPCH_STR_SLACK || len <= 2 * TPCH_STR_SLACK) {
        uint32_t m = len > TPCH_STR_SLACK ? len : TPCH_STR_SLACK;
        memcpy(p, v->s, TPCH_STR_SLACK);
        memcpy(p + m - TPCH_STR_SLACK, v->s + m - TPCH_STR_SLACK, TPCH_STR_SLACK);
    } else {
        memcpy(p, v->s, len);
    }
    return p + len;
}
#define put_VARCHAR put_CHAR

/* One straight-line formatter per table, from the column lists. */
#define PUT_COLUMN(name, kind, len)                                                                \
    p = put_##kind(p, v++, f, len);                                                                \
    *p++ = '|';
#define TABLE_FORMATTER(id, list)                                                                  \
    static size_t format_##id(const tpch_value *v, char *out, const formatter *f)                  \
    {                                                                                              \
        char *p = out;                                                                             \
        list(PUT_COLUMN) *p++ = '\n';                                                              \
        return (size_t)(p - out);                                                                  \
    }
TPCH_TABLE_COLUMNS(TABLE_FORMATTER)
#undef TABLE_FORMATTER

static size_t format_row(tpch_table_id t, const tpch_value *v, char *out, const formatter *f)
{
    switch (t) {
#define FORMAT_CASE(id, list)                                                                      \
    case TPCH_##id:                                                                                \
        return format_##id(v, out, f);
        TPCH_TABLE_COLUMNS(FORMAT_CASE)
#undef FORMAT_CASE
    default:
        return 0;
    }
}

size_t tpch_tbl_format_row(tpch_table_id t, const tpch_value *v, char *out)
{
    return format_row(t, v, out, NULL);
}

void tpch_tbl_file_name(tpch_table_id t, int parts, int part, char *buf, size_t size)
{
    const char *name = tpch_table_info_get(t)->name;
    if (parts > 1 && t != TPCH_NATION && t != TPCH_REGION)
        snprintf(buf, size, "%s.tbl.%d", name, part);
    else
        snprintf(buf, size, "%s.tbl", name);
}

/* --- the formatting sink ---------------------------------------------------------- */

typedef struct buffer {
    char *bytes;
    size_t len, cap;
} buffer;

/* One morsel's text, a buffer per table; kept for reuse across passes. */
typedef struct morsel_text {
    buffer out[TPCH_TABLE_COUNT];
    struct morsel_text *next; /* on the spare list */
} morsel_text;

static void morsel_text_free(morsel_text *t)
{
    while (t) {
        morsel_text *next = t->next;
        for (int i = 0; i < TPCH_TABLE_COUNT; i++)
            free(t->out[i].bytes);
        free(t);
        t = next;
    }
}

typedef struct tbl_sink {
    tpch_sink base;
    morsel_text *text; /* being filled */
    formatter fmt;
} tbl_sink;

static sto_status tbl_row(tpch_sink *self, tpch_table_id t, const tpch_value *values)
{
    tbl_sink *s = (tbl_sink *)self;
    buffer *b = &s->text->out[t];
    if (b->len + TPCH_TBL_ROW_MAX > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : (size_t)1 << 20;
        while (cap < b->len + TPCH_TBL_ROW_MAX)
            cap *= 2;
        char *bytes = realloc(b->bytes, cap);
        if (!bytes) return sto_error_oom();
        b->bytes = bytes;
        b->cap = cap;
    }
    b->len += format_row(t, values, b->bytes + b->len, &s->fmt);
    return NULL;
}

/* --- one pass over a unit table ---------------------------------------------------- */

/* Morsels finished ahead of the next one to append, at most: a worker
 * whose morsel is not next parks its text and goes on with another
 * instead of waiting its turn, so both cores stay busy when morsels take
 * uneven times; memory stays bounded (threads + PARKED texts). */
#define PARKED 8

typedef struct pass {
    const tpch_gen *g;
    const tpch_files_options *opt;
    unsigned tables; /* the tables written in this pass */
    tpch_out *out[TPCH_TABLE_COUNT];
    int64_t first, last; /* units */
    int64_t morsel_units;
    int64_t morsels;
    int last_percent;
    const char *label;
    /* under lock: */
    int64_t next_morsel;
    int64_t written;             /* morsels appended so far */
    bool appending;              /* a worker is appending morsels in order */
    morsel_text *parked[PARKED]; /* morsel m, finished early, at m % PARKED */
    morsel_text **spare;         /* texts to reuse, the caller's */
    sto_status error;            /* first error; stops everyone */
    pthread_mutex_t lock;
    pthread_cond_t room; /* `written` moved on, or an error */
} pass;

static void fail_pass(pass *p, sto_status st)
{
    if (st && !p->error)
        p->error = st;
    else
        sto_status_free(st);
}

static sto_status append_text(pass *p, const morsel_text *t)
{
    for (int i = 0; i < TPCH_TABLE_COUNT; i++)
        if (p->tables & TPCH_BIT(i))
            STO_TRY(tpch_out_append(p->out[i], t->out[i].bytes, t->out[i].len));
    return NULL;
}

/* Appends t (morsel p->written) and then every parked morsel that follows
 * it, in order. Called and returns under lock, with p->appending set. */
static void append_in_order(pass *p, morsel_text *own)
{
    morsel_text *t = own;
    while (t) {
        pthread_mutex_unlock(&p->lock);
        sto_status st = append_text(p, t);
        pthread_mutex_lock(&p->lock);
        fail_pass(p, st);
        if (t != own) {
            t->next = *p->spare;
            *p->spare = t;
        }
        p->written++;
        if (p->opt->progress && !p->error) {
            int pct = (int)(100 * p->written / p->morsels);
            if (pct != p->last_percent) {
                p->last_percent = pct;
                fprintf(stderr, "\r%-16s %3d%%", p->label, pct);
            }
        }
        pthread_cond_broadcast(&p->room);
        if (p->error) break;
        t = p->parked[p->written % PARKED];
        p->parked[p->written % PARKED] = NULL;
    }
}

static void *pass_worker(void *arg)
{
    pass *p = arg;
    tbl_sink *sink = malloc(sizeof(*sink));
    if (!sink) {
        pthread_mutex_lock(&p->lock);
        fail_pass(p, sto_error_oom());
        pthread_cond_broadcast(&p->room);
        pthread_mutex_unlock(&p->lock);
        return NULL;
    }
    memset(sink, 0, sizeof(*sink));
    sink->base.row = tbl_row;
    formatter_init(&sink->fmt);
    for (;;) {
        pthread_mutex_lock(&p->lock);
        int64_t m = p->error ? p->morsels : p->next_morsel++;
        if (m < p->morsels && !sink->text && *p->spare) {
            sink->text = *p->spare;
            *p->spare = sink->text->next;
        }
        pthread_mutex_unlock(&p->lock);
        if (m >= p->morsels) break;
        if (!sink->text && !(sink->text = calloc(1, sizeof(*sink->text)))) {
            pthread_mutex_lock(&p->lock);
            fail_pass(p, sto_error_oom());
            pthread_cond_broadcast(&p->room);
            pthread_mutex_unlock(&p->lock);
            break;
        }
        for (int t = 0; t < TPCH_TABLE_COUNT; t++)
            sink->text->out[t].len = 0;
        int64_t first = p->first + m * p->morsel_units;
        int64_t last = first + p->morsel_units < p->last ? first + p->morsel_units : p->last;
        sto_status st = tpch_gen_rows(p->g, p->tables, first, last, &sink->base);

        pthread_mutex_lock(&p->lock);
        fail_pass(p, st);
        while (!p->error && m - p->written >= PARKED)
            pthread_cond_wait(&p->room, &p->lock);
        if (!p->error) {
            if (m == p->written && !p->appending) {
                p->appending = true;
                append_in_order(p, sink->text);
                p->appending = false;
            } else {
                /* whoever appends morsel m - 1 will find it */
                p->parked[m % PARKED] = sink->text;
                sink->text = NULL;
            }
        }
        if (p->error) pthread_cond_broadcast(&p->room);
        pthread_mutex_unlock(&p->lock);
    }
    if (sink->text) {
        pthread_mutex_lock(&p->lock);
        sink->text->next = *p->spare;
        *p->spare = sink->text;
        pthread_mutex_unlock(&p->lock);
    }
    free(sink);
    return NULL;
}

static sto_status run_pass(pass *p, int threads)
{
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->room, NULL);
    pthread_t tid[256];
    int started = 0;
    if (threads > 256) threads = 256;
    if (threads > p->morsels) threads = p->morsels > 0 ? (int)p->morsels : 1;
    for (int i = 1; i < threads; i++) {
        if (pthread_create(&tid[started], NULL, pass_worker, p) != 0) break;
        started++;
    }
    pass_worker(p);
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    /* after an error, texts parked for morsels never appended */
    for (int i = 0; i < PARKED; i++) {
        if (!p->parked[i]) continue;
        p->parked[i]->next = *p->spare;
        *p->spare = p->parked[i];
        p->parked[i] = NULL;
    }
    pthread_cond_destroy(&p->room);
    pthread_mutex_destroy(&p->lock);
    if (p->opt->progress && !p->error) fprintf(stderr, "\r%-16s done\n", p->label);
    return p->error;
}

/* --- files ----------------------------------------------------------------------------- */

typedef struct out_file {
    char final_path[4096];
    char temp_path[4096];
    tpch_out *out; /* NULL once closed */
} out_file;

static sto_status open_temp(const tpch_files_options *opt, tpch_writer *w, tpch_table_id t,
                            out_file *f)
{
    char name[64];
    tpch_tbl_file_name(t, opt->parts, opt->part, name, sizeof(name));
    if (strlen(opt->dir) + sizeof(name) + 8 > sizeof(f->final_path))
        return sto_error(STO_INVALID_PARAMETER_VALUE, "output directory name is too long");
    snprintf(f->final_path, sizeof(f->final_path), "%s/%s", opt->dir, name);
    snprintf(f->temp_path, sizeof(f->temp_path), "%s/%s.tmp", opt->dir, name);
    return tpch_writer_open(w, f->temp_path, &f->out);
}

/* Closes an open file, keeping the first error in *st. */
static void close_out(out_file *f, sto_status *st)
{
    if (!f->out) return;
    sto_status c = tpch_out_close(f->out);
    f->out = NULL;
    if (c && !*st)
        *st = c;
    else
        sto_status_free(c);
}

/* Morsel sizes aim at about 1 MB of text per morsel. */
static int64_t morsel_units(tpch_table_id unit_table)
{
    switch (unit_table) {
    case TPCH_PART:
        return 1000;
    case TPCH_ORDERS:
        return 2000;
    default:
        return 5000;
    }
}

sto_status tpch_make_dir(const char *dir)
{
    char path[4096];
    size_t n = strlen(dir);
    if (n == 0) return sto_error(STO_INVALID_PARAMETER_VALUE, "output directory name is empty");
    if (n >= sizeof(path))
        return sto_error(STO_INVALID_PARAMETER_VALUE, "output directory name is too long");
    memcpy(path, dir, n + 1);
    /* each prefix ending before a '/', then the whole path */
    for (size_t i = 1; i <= n; i++) {
        if (i < n && path[i] != '/') continue;
        if (path[i - 1] == '/') continue; /* "a//b", or a trailing '/' */
        char saved = path[i];
        path[i] = '\0';
        int failed = mkdir(path, 0777) != 0 && errno != EEXIST;
        int err = errno;
        path[i] = saved;
        if (failed) {
            path[i] = '\0';
            return sto_error(err == ENOSPC ? STO_DISK_FULL : STO_IO_ERROR,
                             "cannot create directory %s: %s", path, strerror(err));
        }
    }
    struct stat sb;
    if (stat(dir, &sb) != 0)
        return sto_error(STO_IO_ERROR, "cannot write to %s: %s", dir, strerror(errno));
    if (!S_ISDIR(sb.st_mode))
        return sto_error(STO_IO_ERROR, "cannot write to %s: not a directory", dir);
    return NULL;
}

sto_status tpch_gen_files(const tpch_gen *g, const tpch_files_options *opt)
{
    out_file files[TPCH_TABLE_COUNT];
    bool opened[TPCH_TABLE_COUNT] = {false};
    sto_status st = NULL;
    int parts = opt->parts > 0 ? opt->parts : 1;
    int part = opt->part > 0 ? opt->part : 1;
    if (part > parts)
        return sto_error(STO_INVALID_PARAMETER_VALUE, "part %d is outside 1..%d", part, parts);

    STO_TRY(tpch_make_dir(opt->dir));
    tpch_writer *w = NULL;
    STO_TRY(tpch_writer_create(!opt->buffered, &w));
    morsel_text *spare = NULL; /* formatting buffers, reused by every pass */
    for (int t = 0; t < TPCH_TABLE_COUNT; t++)
        files[t].out = NULL;
    /* open every temp file first: a bad directory fails before any work */
    for (int t = 0; t < TPCH_TABLE_COUNT && !st; t++) {
        if (!(opt->tables & TPCH_BIT(t))) continue;
        st = open_temp(opt, w, (tpch_table_id)t, &files[t]);
        opened[t] = st == NULL;
    }

    /* one pass per unit table, each writing the tables that share it */
    for (int u = 0; u < TPCH_TABLE_COUNT && !st; u++) {
        unsigned tables = 0;
        for (int t = 0; t < TPCH_TABLE_COUNT; t++)
            if ((opt->tables & TPCH_BIT(t)) && (int)tpch_table_info_get(t)->unit_table == u)
                tables |= TPCH_BIT(t);
        if (!tables) continue;
        pass p;
        memset(&p, 0, sizeof(p));
        p.g = g;
        p.opt = opt;
        p.tables = tables;
        p.spare = &spare;
        for (int t = 0; t < TPCH_TABLE_COUNT; t++)
            p.out[t] = opened[t] ? files[t].out : NULL;
        int64_t units = tpch_gen_units(g, (tpch_table_id)u);
        if (u == TPCH_NATION || u == TPCH_REGION) {
            p.first = 0;
            p.last = units;
        } else {
            tpch_split_units(units, parts, part, &p.first, &p.last);
        }
        p.morsel_units = morsel_units((tpch_table_id)u);
        p.morsels = (p.last - p.first + p.morsel_units - 1) / p.morsel_units;
        p.last_percent = -1;
        char label[64] = "";
        for (int t = 0; t < TPCH_TABLE_COUNT; t++)
            if (tables & TPCH_BIT(t))
                snprintf(label + strlen(label), sizeof(label) - strlen(label), "%s%s",
                         label[0] ? "+" : "", tpch_table_info_get((tpch_table_id)t)->name);
        p.label = label;
        /* A pass's files stay open until every pass is done: closing one
         * waits for the disk to take its last stages, and the next pass's
         * workers would sit idle meanwhile (each open file keeps one
         * partly filled stage, 4 MiB). */
        st = run_pass(&p, opt->threads);
    }

    for (int t = 0; t < TPCH_TABLE_COUNT; t++)
        if (opened[t]) close_out(&files[t], &st);
    if (opt->stats) *opt->stats = tpch_writer_stats_get(w);
    tpch_writer_free(w);
    morsel_text_free(spare);
    for (int t = 0; t < TPCH_TABLE_COUNT; t++) {
        if (!opened[t]) continue;
        if (!st && rename(files[t].temp_path, files[t].final_path) != 0)
            st = sto_error(STO_IO_ERROR, "could not rename %s: %s", files[t].temp_path,
                           strerror(errno));
    }
    if (st) {
        for (int t = 0; t < TPCH_TABLE_COUNT; t++)
            if (opened[t]) unlink(files[t].temp_path);
    }
    return st;
}
