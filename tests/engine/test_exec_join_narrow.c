/*
 * test_exec_join_narrow.c — a hash join's build rows keep only the columns
 * read after the join (engine/physical_narrow.c), end to end.
 *
 * Every query joins the probe side p to the build side b (and c) so that a
 * build column is read in exactly one place: only by a filter below the
 * build (dropped), only by the join's residual, only by the parent, only
 * by a later join's key, by the parent of a LEFT join (NULL for a probe
 * row without partner), as a string, or by a RIGHT / FULL join's output
 * (not narrowed: the unmatched build rows are emitted). The filtered
 * build side's keys are unique: the key bitmap alone decides its probe. The answers must
 * equal the counts made here in C from the same formulas, under
 * join_algorithm auto, hash, radix and sortmerge with 1 and 2 threads
 * (the build rows packed, cg_row_layout: strings, BIGINT and INTEGER
 * values, NULLs, the unmatched rows of a FULL join copied back into
 * slots); EXPLAIN ANALYZE shows the entry size the narrowed build stored.
 *
 * Data (inserted from the formulas below):
 *   b  3000 rows, j = 0..2999: bk = j % 1000 (NULL when j % 97 = 0: every
 *      key up to three times), bx = (j * 7) % 50 (NULL when j % 11 = 5),
 *      bs = 's' || (j % 17)
 *      (VARCHAR), bz = j * 1000003 (BIGINT), bf = j % 3
 *   p  5000 rows, i = 0..4999: pk = (i * 13) % 1500 - 100 (NULL when
 *      i % 89 = 0: keys below, inside and above b's), px = i % 50
 *   c    25 rows, ck = 0..24, cv = ck * 2
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_check.h"
#include "test.h"

#define NB 3000
#define NP 5000

static bool b_null(int j)
{
    return j % 97 == 0;
}
static int b_key(int j)
{
    return j % 1000;
}
static int b_x(int j)
{
    return (j * 7) % 50;
}
static bool b_x_null(int j)
{
    return j % 11 == 5;
}
static long long b_z(int j)
{
    return (long long)j * 1000003LL;
}
static bool p_null(int i)
{
    return i % 89 == 0;
}
static int p_key(int i)
{
    return (i * 13) % 1500 - 100;
}
static int p_x(int i)
{
    return i % 50;
}
static void b_s(int j, char *buf, size_t size)
{
    snprintf(buf, size, "s%d", j % 17);
}

static bool pair(int i, int j)
{
    return !p_null(i) && !b_null(j) && p_key(i) == b_key(j);
}

static bool insert_all(void)
{
    size_t cap = (size_t)NP * 48 + 64;
    char *sql = malloc(cap);
    if (!sql) return false;
    bool ok = true;
    size_t len = (size_t)snprintf(sql, cap, "INSERT INTO b VALUES ");
    for (int j = 0; j < NB; j++) {
        char s[8];
        b_s(j, s, sizeof(s));
        const char *sep = j ? "," : "";
        char k[16], x[16];
        snprintf(k, sizeof(k), b_null(j) ? "NULL" : "%d", b_key(j));
        snprintf(x, sizeof(x), b_x_null(j) ? "NULL" : "%d", b_x(j));
        len += (size_t)snprintf(sql + len, cap - len, "%s(%s, %s, '%s', %lld, %d)", sep, k, x, s,
                                b_z(j), j % 3);
    }
    ok = ok && strcmp(Q(sql), "INSERT 0 3000") == 0;
    len = (size_t)snprintf(sql, cap, "INSERT INTO p VALUES ");
    for (int i = 0; i < NP; i++) {
        const char *sep = i ? "," : "";
        if (p_null(i))
            len += (size_t)snprintf(sql + len, cap - len, "%s(NULL, %d)", sep, p_x(i));
        else
            len += (size_t)snprintf(sql + len, cap - len, "%s(%d, %d)", sep, p_key(i), p_x(i));
    }
    ok = ok && strcmp(Q(sql), "INSERT 0 5000") == 0;
    len = (size_t)snprintf(sql, cap, "INSERT INTO c VALUES ");
    for (int k = 0; k < 25; k++)
        len += (size_t)snprintf(sql + len, cap - len, "%s(%d, %d)", k ? "," : "", k, 2 * k);
    ok = ok && strcmp(Q(sql), "INSERT 0 25") == 0;
    free(sql);
    return ok;
}

static void setup(void)
{
    CHECK_STREQ(Q("CREATE TABLE b (bk INTEGER, bx INTEGER, bs VARCHAR(8), bz BIGINT, "
                  "bf INTEGER)"),
                "CREATE TABLE");
    CHECK_STREQ(Q("CREATE TABLE p (pk INTEGER, px INTEGER)"), "CREATE TABLE");
    CHECK_STREQ(Q("CREATE TABLE c (ck INTEGER, cv INTEGER)"), "CREATE TABLE");
    REQUIRE(insert_all());
}

/* The expected answers, counted over every (p, b) pair. */
typedef struct expect {
    char filtered[64]; /* count, sum(px) of pairs with bf = 0 */
    char residual[64]; /* count of pairs with bx > px */
    char parent[64];   /* count, sum(bz) of pairs */
    char next_key[64]; /* count, sum(cv) of pairs joined to c on bx */
    char left[64];     /* LEFT: count(*), count(bz), sum(bx) */
    char strings[64];  /* min(bs), max(bs), count of pairs with bs = 's3' */
    char right[64];    /* RIGHT: count(*), count(px), sum(bx) */
    char full[64];     /* FULL: count(*), count(px), count(bz) */
} expect;

static void count_expected(expect *x)
{
    long long filt = 0, filt_px = 0, res = 0, pairs = 0, sum_z = 0, nk = 0, nk_cv = 0, s3 = 0;
    long long left_rows = 0, left_bx = 0, right_rows = 0, right_bx = 0, full_rows = 0;
    char lo[8] = "", hi[8] = "";
    bool *b_hit = calloc(NB, sizeof(bool));
    REQUIRE(b_hit != NULL);
    for (int i = 0; i < NP; i++) {
        long long m = 0;
        for (int j = 0; j < NB; j++) {
            if (!pair(i, j)) continue;
            m++;
            b_hit[j] = true;
            pairs++;
            sum_z += b_z(j);
            if (!b_x_null(j)) left_bx += b_x(j);
            if (j % 3 == 0) {
                filt++;
                filt_px += p_x(i);
            }
            if (!b_x_null(j) && b_x(j) > p_x(i)) res++;
            if (!b_x_null(j) && b_x(j) < 25) {
                nk++;
                nk_cv += 2 * b_x(j);
            }
            char s[8];
            b_s(j, s, sizeof(s));
            if (!lo[0] || strcmp(s, lo) < 0) strcpy(lo, s);
            if (!hi[0] || strcmp(s, hi) > 0) strcpy(hi, s);
            s3 += strcmp(s, "s3") == 0;
        }
        left_rows += m ? m : 1;
    }
    long long unmatched_b = 0;
    for (int j = 0; j < NB; j++)
        if (!b_hit[j]) {
            unmatched_b++;
            if (!b_x_null(j)) right_bx += b_x(j);
        }
    free(b_hit);
    right_rows = pairs + unmatched_b;
    right_bx += left_bx;
    full_rows = left_rows + unmatched_b;
    snprintf(x->filtered, sizeof(x->filtered), "%lld|%lld", filt, filt_px);
    snprintf(x->residual, sizeof(x->residual), "%lld", res);
    snprintf(x->parent, sizeof(x->parent), "%lld|%lld", pairs, sum_z);
    snprintf(x->next_key, sizeof(x->next_key), "%lld|%lld", nk, nk_cv);
    snprintf(x->left, sizeof(x->left), "%lld|%lld|%lld", left_rows, pairs, left_bx);
    snprintf(x->strings, sizeof(x->strings), "%s|%s|%lld", lo, hi, s3);
    snprintf(x->right, sizeof(x->right), "%lld|%lld|%lld", right_rows, pairs, right_bx);
    snprintf(x->full, sizeof(x->full), "%lld|%lld|%lld", full_rows, left_rows, pairs + unmatched_b);
}

#define FILTERED_Q                                                                                 \
    "SELECT count(*), sum(px) FROM p JOIN (SELECT * FROM b WHERE bf = 0) f ON pk = bk"
#define RESIDUAL_Q "SELECT count(*) FROM p JOIN b ON pk = bk AND bx > px"
#define PARENT_Q   "SELECT count(*), sum(bz) FROM p JOIN b ON pk = bk"
#define NEXT_KEY_Q "SELECT count(*), sum(cv) FROM p JOIN b ON pk = bk JOIN c ON ck = bx"
#define LEFT_Q     "SELECT count(*), count(bz), sum(bx) FROM p LEFT JOIN b ON pk = bk"
#define STRINGS_Q                                                                                  \
    "SELECT min(bs), max(bs), sum(CASE WHEN bs = 's3' THEN 1 ELSE 0 END) FROM p JOIN b ON pk = bk"
#define RIGHT_Q "SELECT count(*), count(px), sum(bx) FROM p RIGHT JOIN b ON pk = bk"
#define FULL_Q  "SELECT count(*), count(px), count(bz) FROM p FULL JOIN b ON pk = bk"

static void test_answers(void)
{
    expect x;
    count_expected(&x);
    static const char *const algos[] = {"auto", "hash", "radix", "sortmerge"};
    for (int t = 1; t <= 2; t++)
        for (size_t a = 0; a < sizeof(algos) / sizeof(algos[0]); a++) {
            REQUIRE(exec_set_run(t, algos[a]));
            CHECK_STREQ(Q(FILTERED_Q), x.filtered);
            CHECK_STREQ(Q(RESIDUAL_Q), x.residual);
            CHECK_STREQ(Q(PARENT_Q), x.parent);
            CHECK_STREQ(Q(NEXT_KEY_Q), x.next_key);
            CHECK_STREQ(Q(LEFT_Q), x.left);
            CHECK_STREQ(Q(STRINGS_Q), x.strings);
            CHECK_STREQ(Q(RIGHT_Q), x.right);
            CHECK_STREQ(Q(FULL_Q), x.full);
        }
}

/* The entry a build stores: 24 bytes of head, then the row packed
 * (codegen/pipeline.h cg_row_layout): each stored column in its own width,
 * the key one of them, a NULL byte each, rounded up to 8. */
static void test_entry_sizes(void)
{
    REQUIRE(exec_set_run(2, "hash"));
    /* b's scan gives bk and bf; bf is read only by the filter below the
     * build: the row holds the key alone (24 + 4 + 1, rounded) */
    CHECK(analyzes(FILTERED_Q, "32-byte entries"));
    /* and its keys (3m % 1000) are unique: the bitmap alone decides */
    CHECK(explains(FILTERED_Q, "(key bitmap decides if unique)"));
    CHECK(analyzes(FILTERED_Q, "key bitmap, unique keys"));
    /* bx for the residual: bx and the key (24 + 4 + 4 + 2) */
    CHECK(analyzes(RESIDUAL_Q, "40-byte entries"));
    /* bz for the parent (24 + 8 + 4 + 2) */
    CHECK(analyzes(PARENT_Q, "40-byte entries"));
    /* a string for the parent (24 + 16 + 4 + 2) */
    CHECK(analyzes(STRINGS_Q, "48-byte entries"));
    /* bx is read by the probe into c, inside the pipeline that builds b:
     * b's rows hold c's cv and b's key (40), not bk, bx, ck, cv and the
     * key (56) */
    CHECK(!analyzes(NEXT_KEY_Q, "56-byte entries"));
    CHECK(analyzes(NEXT_KEY_Q, "40-byte entries"));
    /* the RIGHT join probes with b (a LEFT join building p: px and the
     * key); FULL builds b and keeps every column its scan gives, the
     * unmatched build rows being emitted (bz, bk and the key: 24 + 19) */
    CHECK(analyzes(RIGHT_Q, "40-byte entries"));
    CHECK(analyzes(FULL_Q, "48-byte entries"));
}

int main(void)
{
    if (!exec_open()) return 1;
    setup();
    RUN(test_answers);
    RUN(test_entry_sizes);
    exec_close();
    return TEST_REPORT();
}
