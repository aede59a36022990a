/*
 * test_gen.c — the generator's building blocks: random stream skip-ahead,
 * row ranges that start anywhere, the threaded text pool, and anchors taken
 * from dbgen's own output, and the .tbl files written past the page cache
 * equal those written through it (the SHA-1s against dbgen's are checked by
 * test_gen_sha1.sh, which takes the default, direct way).
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "tpch/gen.h"
#include "tpch/gen_files.h"
#include "tpch/rng.h"
#include "tpch/text.h"

/* Collects formatted rows of every table in memory. */
typedef struct capture {
    tpch_sink base;
    char *text[TPCH_TABLE_COUNT];
    size_t len[TPCH_TABLE_COUNT], cap[TPCH_TABLE_COUNT];
    int64_t rows[TPCH_TABLE_COUNT];
} capture;

static sto_status capture_row(tpch_sink *self, tpch_table_id t, const tpch_value *v)
{
    capture *c = (capture *)self;
    if (c->len[t] + TPCH_TBL_ROW_MAX > c->cap[t]) {
        size_t cap = c->cap[t] ? c->cap[t] * 2 : 1 << 16;
        char *p = realloc(c->text[t], cap);
        if (!p) return sto_error_oom();
        c->text[t] = p;
        c->cap[t] = cap;
    }
    c->len[t] += tpch_tbl_format_row(t, v, c->text[t] + c->len[t]);
    c->rows[t]++;
    return NULL;
}

static void capture_init(capture *c)
{
    memset(c, 0, sizeof(*c));
    c->base.row = capture_row;
}

static void capture_free(capture *c)
{
    for (int t = 0; t < TPCH_TABLE_COUNT; t++)
        free(c->text[t]);
}

static tpch_gen *gen; /* SF 0.01, shared by the tests below */

static void test_skip_equals_steps(void)
{
    int64_t seeds[] = {1, 46831694, 933588178, TPCH_RNG_MODULUS - 1};
    for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
        int64_t s = seeds[i];
        for (int64_t n = 0; n <= 5000; n++) {
            if (n == 0 || n == 1 || n == 92 || n == 4999 || n == 5000)
                CHECK_EQ_INT(tpch_rng_skip(seeds[i], n), s);
            s = tpch_rng_next(s);
        }
    }
    CHECK_EQ_INT(tpch_rng_power(0), 1);
    CHECK_EQ_INT(tpch_rng_power(1), TPCH_RNG_MULTIPLIER);
    /* the generator's period is 2^31 - 2: the multiplier to that power is 1 */
    CHECK_EQ_INT(tpch_rng_power(TPCH_RNG_MODULUS - 1), 1);
    /* Park and Miller's published check: seed 1 after 10000 steps */
    CHECK_EQ_INT(tpch_rng_skip(1, 10000), 1043618065);
}

/* The integer shortcut of a uniform draw gives dbgen's double result. */
static void test_uniform_matches_doubles(void)
{
    int64_t ranges[] = {1,      2,         3,          5,          7,          10,     50,
                        92,     121,       9999,       99901,      1099999,    150000, 1500000,
                        200000, 314572800, 2147483647, 4294967296, 15000000000};
    int bad = 0;
    int64_t seed = 12345;
    for (int i = 0; i < 500000; i++) {
        seed = tpch_rng_next(seed);
        for (size_t k = 0; k < sizeof(ranges) / sizeof(ranges[0]); k++) {
            int64_t lo = (int64_t)(k % 3) - 1;
            int64_t hi = lo + ranges[k] - 1;
            if (tpch_uniform(seed, lo, hi) != tpch_uniform_double(seed, lo, hi)) bad++;
        }
    }
    /* seeds whose quotient sits right at an integer: the slow path's cases */
    for (int64_t r = 1; r <= 64; r++) {
        for (int64_t s = 1; s < 200000; s++) {
            if (tpch_uniform(s, 0, r - 1) != tpch_uniform_double(s, 0, r - 1)) bad++;
            int64_t t = TPCH_RNG_MODULUS - s;
            if (tpch_uniform(t, 0, r - 1) != tpch_uniform_double(t, 0, r - 1)) bad++;
        }
    }
    CHECK_EQ_INT(bad, 0);
}

/* The folding multiply-mod equals the division it replaces. */
static void test_mulmod_matches_division(void)
{
    const int64_t m = TPCH_RNG_MODULUS;
    int64_t edges[] = {0, 1, 2, 16807, 46831694, m / 2, m - 2, m - 1};
    int bad = 0;
    for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
        for (size_t j = 0; j < sizeof(edges) / sizeof(edges[0]); j++)
            bad += tpch_rng_mulmod(edges[i], edges[j]) !=
                   (int64_t)(((uint64_t)edges[i] * (uint64_t)edges[j]) % (uint64_t)m);
    int64_t a = 933588178, b = 1095462486;
    for (int i = 0; i < 1000000; i++) {
        a = tpch_rng_next(a);
        b = tpch_rng_next(tpch_rng_next(b));
        bad += tpch_rng_mulmod(a, b) != (int64_t)(((uint64_t)a * (uint64_t)b) % (uint64_t)m);
    }
    CHECK_EQ_INT(bad, 0);
}

static void test_stream_jumps_to_any_unit(void)
{
    for (int id = 0; id < TPCH_STREAM_COUNT; id++) {
        tpch_stream walk, jump;
        tpch_stream_init(&walk, (tpch_stream_id)id, 0);
        for (int u = 1; u <= 50; u++) {
            /* use a few draws of the unit, as a row would */
            for (int d = 0; d < u % 3; d++)
                tpch_draw(&walk, 0, 99);
            tpch_stream_next_unit(&walk);
            tpch_stream_init(&jump, (tpch_stream_id)id, u);
            CHECK_EQ_INT(walk.seed, jump.seed);
        }
    }
}

/* Rows of units [a, b) are the tail, from unit a on, of the rows of [0, b). */
static void check_range(unsigned tables, tpch_table_id t, int64_t a, int64_t b)
{
    capture whole, head, tail;
    capture_init(&whole);
    capture_init(&head);
    capture_init(&tail);
    REQUIRE(tpch_gen_rows(gen, tables, 0, b, &whole.base) == NULL);
    REQUIRE(tpch_gen_rows(gen, tables, 0, a, &head.base) == NULL);
    REQUIRE(tpch_gen_rows(gen, tables, a, b, &tail.base) == NULL);
    CHECK(tail.rows[t] > 0);
    CHECK_EQ_INT(head.rows[t] + tail.rows[t], whole.rows[t]);
    CHECK_EQ_INT(head.len[t] + tail.len[t], whole.len[t]);
    if (head.len[t] + tail.len[t] == whole.len[t]) {
        CHECK(memcmp(whole.text[t], head.text[t], head.len[t]) == 0);
        CHECK(memcmp(whole.text[t] + head.len[t], tail.text[t], tail.len[t]) == 0);
    }
    capture_free(&whole);
    capture_free(&head);
    capture_free(&tail);
}

static void test_ranges_start_anywhere(void)
{
    REQUIRE(gen);
    check_range(TPCH_BIT(TPCH_PART), TPCH_PART, 137, 411);
    check_range(TPCH_BIT(TPCH_PARTSUPP), TPCH_PARTSUPP, 1, 300);
    check_range(TPCH_BIT(TPCH_PART) | TPCH_BIT(TPCH_PARTSUPP), TPCH_PARTSUPP, 999, 2000);
    check_range(TPCH_BIT(TPCH_SUPPLIER), TPCH_SUPPLIER, 7, 100);
    check_range(TPCH_BIT(TPCH_CUSTOMER), TPCH_CUSTOMER, 500, 1234);
    check_range(TPCH_BIT(TPCH_ORDERS), TPCH_ORDERS, 33, 1000);
    check_range(TPCH_BIT(TPCH_LINEITEM), TPCH_LINEITEM, 5, 77);
    check_range(TPCH_BIT(TPCH_ORDERS) | TPCH_BIT(TPCH_LINEITEM), TPCH_LINEITEM, 2900, 3000);
    check_range(TPCH_BIT(TPCH_NATION), TPCH_NATION, 24, 25);
    check_range(TPCH_BIT(TPCH_REGION), TPCH_REGION, 2, 5);
}

/* First and last rows as dbgen 2.14.0 writes them at SF 0.01. */
static void test_rows_match_dbgen(void)
{
    REQUIRE(gen);
    static const struct {
        tpch_table_id t;
        int64_t unit;
        const char *row;
    } anchors[] = {
        {TPCH_NATION, 0, "0|ALGERIA|0| haggle. carefully final deposits detect slyly agai|\n"},
        {TPCH_REGION, 4,
         "4|MIDDLE EAST|uickly special accounts cajole carefully blithely close requests. "
         "carefully final asymptotes haggle furiousl|\n"},
        {TPCH_PART, 0,
         "1|goldenrod lavender spring chocolate lace|Manufacturer#1|Brand#13|PROMO BURNISHED "
         "COPPER|7|JUMBO PKG|901.00|ly. slyly ironi|\n"},
        {TPCH_SUPPLIER, 0,
         "1|Supplier#000000001| N kD4on9OM Ipw3,gf0JBoQDd7tgrzrddZ|17|27-918-335-1736|5755.94|"
         "each slyly above the careful|\n"},
        {TPCH_CUSTOMER, 0,
         "1|Customer#000000001|IVhzIApeRb ot,c,E|15|25-989-741-2988|711.56|BUILDING|to the "
         "even, regular platelets. regular, ironic epitaphs nag e|\n"},
        {TPCH_ORDERS, 0,
         "1|370|O|172799.49|1996-01-02|5-LOW|Clerk#000000951|0|nstructions sleep furiously "
         "among |\n"},
        {TPCH_LINEITEM, 0,
         "1|1552|93|1|17|24710.35|0.04|0.02|N|O|1996-03-13|1996-02-12|1996-03-22|DELIVER IN "
         "PERSON|TRUCK|egular courts above the|\n"},
    };
    for (size_t i = 0; i < sizeof(anchors) / sizeof(anchors[0]); i++) {
        capture c;
        capture_init(&c);
        tpch_table_id t = anchors[i].t;
        REQUIRE(tpch_gen_rows(gen, TPCH_BIT(t), anchors[i].unit, anchors[i].unit + 1, &c.base) ==
                NULL);
        size_t n = strlen(anchors[i].row);
        CHECK(c.len[t] >= n);
        if (c.len[t] >= n && memcmp(c.text[t], anchors[i].row, n) != 0)
            fprintf(stderr, "got:  %.*s\nwant: %s", (int)n, c.text[t], anchors[i].row);
        CHECK(c.len[t] >= n && memcmp(c.text[t], anchors[i].row, n) == 0);
        capture_free(&c);
    }
    CHECK_EQ_INT(tpch_gen_units(gen, TPCH_ORDERS), 15000);
    CHECK_EQ_INT(tpch_gen_rows_exact(gen, TPCH_PARTSUPP), 8000);
    CHECK_EQ_INT(tpch_gen_units(gen, TPCH_NATION), 25);
}

static void test_split_units_covers_all(void)
{
    int64_t units[] = {1, 2, 10, 15000, 15001, 1500000};
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        for (int parts = 1; parts <= 7; parts++) {
            int64_t next = 0;
            for (int p = 1; p <= parts; p++) {
                int64_t first, last;
                tpch_split_units(units[i], parts, p, &first, &last);
                CHECK_EQ_INT(first, next);
                CHECK(last >= first);
                next = last;
            }
            CHECK_EQ_INT(next, units[i]);
        }
    }
}

/* The threaded pool build joins its pieces into exactly the serial pool. */
static void test_threaded_pool_is_serial_pool(void)
{
    REQUIRE(gen);
    const int64_t n = 8 << 20;
    char *serial = malloc(n);
    REQUIRE(serial);
    tpch_text_pool_build_serial(serial, n);
    tpch_text_pool *p3 = NULL;
    REQUIRE(tpch_text_pool_build(3, &p3) == NULL);
    CHECK_EQ_INT(p3->size, TPCH_TEXT_POOL_SIZE);
    CHECK(memcmp(serial, p3->bytes, n) == 0);
    free(serial);
#ifndef RACKDB_SANITIZE
    /* whole pools from different thread counts agree (their joins differ) */
    tpch_text_pool *p2 = NULL;
    REQUIRE(tpch_text_pool_build(2, &p2) == NULL);
    CHECK(memcmp(p2->bytes, p3->bytes, TPCH_TEXT_POOL_SIZE) == 0);
    tpch_text_pool_free(p2);
#endif
    tpch_text_pool_free(p3);
}

/* --- .tbl files ------------------------------------------------------------------- */

/* Whole contents of a file (NULL if unreadable); *len its size. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 20, n = 0, got;
    char *bytes = malloc(cap);
    while (bytes && (got = fread(bytes + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *more = realloc(bytes, cap *= 2);
            if (!more) free(bytes);
            bytes = more;
        }
    }
    fclose(f);
    *len = n;
    return bytes;
}

/* Names in a directory, sorted, joined by spaces; removes them when asked. */
static void list_dir(const char *path, char *out, size_t size, bool remove)
{
    struct dirent **names = NULL;
    int n = scandir(path, &names, NULL, alphasort);
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0) {
            snprintf(out + strlen(out), size - strlen(out), "%s%s", out[0] ? " " : "", name);
            if (remove) {
                char file[1200];
                snprintf(file, sizeof(file), "%s/%s", path, name);
                unlink(file);
            }
        }
        free(names[i]);
    }
    free(names);
}

static char files_dir[512]; /* for the tests below */

/* The default writes past the page cache where the directory allows it;
 * every file equals the one written through the page cache. */
static void test_direct_files_equal_buffered(void)
{
    REQUIRE(gen);
    char direct_dir[600], buffered_dir[600];
    snprintf(direct_dir, sizeof(direct_dir), "%s/direct", files_dir);
    snprintf(buffered_dir, sizeof(buffered_dir), "%s/buffered", files_dir);
    tpch_writer_stats direct = {0, 0, 0}, buffered = {0, 0, 0};
    tpch_files_options opt = {direct_dir, TPCH_ALL_TABLES, 1, 1, 2, false, false, &direct};
    CHECK(tpch_gen_files(gen, &opt) == NULL);
    opt.dir = buffered_dir;
    opt.buffered = true;
    opt.stats = &buffered;
    CHECK(tpch_gen_files(gen, &opt) == NULL);

    /* a directory that takes O_DIRECT gets it */
    char probe[700];
    snprintf(probe, sizeof(probe), "%s/probe", files_dir);
    int fd = open(probe, O_WRONLY | O_CREAT | O_DIRECT, 0644);
    if (fd >= 0) {
        close(fd);
        unlink(probe);
        CHECK(direct.direct_bytes > direct.buffered_bytes);
    }
    CHECK_EQ_INT(buffered.direct_bytes, 0);
    CHECK(buffered.buffered_bytes > 0);
    CHECK_EQ_INT(direct.direct_bytes + direct.buffered_bytes, buffered.buffered_bytes);

    for (int t = 0; t < TPCH_TABLE_COUNT; t++) {
        char name[64], a_path[700], b_path[700];
        tpch_tbl_file_name((tpch_table_id)t, 1, 1, name, sizeof(name));
        snprintf(a_path, sizeof(a_path), "%s/%s", direct_dir, name);
        snprintf(b_path, sizeof(b_path), "%s/%s", buffered_dir, name);
        size_t a_len = 0, b_len = 0;
        char *a = slurp(a_path, &a_len), *b = slurp(b_path, &b_len);
        CHECK(a && b && a_len > 0 && a_len == b_len && memcmp(a, b, a_len) == 0);
        free(a);
        free(b);
    }
    char names[1024];
    list_dir(direct_dir, names, sizeof(names), true);
    CHECK_STREQ(names, "customer.tbl lineitem.tbl nation.tbl orders.tbl part.tbl partsupp.tbl "
                       "region.tbl supplier.tbl");
    list_dir(buffered_dir, names, sizeof(names), true);
    rmdir(direct_dir);
    rmdir(buffered_dir);
}

/* A write that fails part way (a file size limit here, a full disk alike)
 * fails the run with the cause and leaves no file, temporary or final.
 * In a child: the limit is the whole process's. */
static void test_failed_write_leaves_no_file(void)
{
    REQUIRE(gen);
    char out[600];
    snprintf(out, sizeof(out), "%s/limited", files_dir);
    fflush(NULL);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit lim = {300000, 300000}; /* part.tbl fits, partsupp.tbl does not */
        if (setrlimit(RLIMIT_FSIZE, &lim) != 0) _exit(3);
        tpch_files_options opt = {out, TPCH_ALL_TABLES, 1, 1, 2, false, false, NULL};
        sto_status st = tpch_gen_files(gen, &opt);
        bool ok = st && strstr(st->message, "File too large") && strstr(st->message, "partsupp");
        if (st && !ok) fprintf(stderr, "unexpected error: %s\n", st->message);
        sto_status_free(st);
        _exit(ok ? 0 : 4);
    }
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char names[1024];
    list_dir(out, names, sizeof(names), true);
    CHECK_STREQ(names, "");
    rmdir(out);
}

static void test_bad_scale_factors(void)
{
    double bad[] = {0, -1, 1.0 / 0.0, 0.0 / 0.0, 30000};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        tpch_gen *g = (tpch_gen *)1;
        sto_status st = tpch_gen_create(bad[i], 1, &g);
        CHECK(st != NULL);
        CHECK(g == NULL);
        sto_status_free(st);
    }
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(files_dir, sizeof(files_dir), "%s/test_gen.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(files_dir)) {
        perror("mkdtemp");
        return 1;
    }
    sto_status st = tpch_gen_create(0.01, 2, &gen);
    if (st) {
        fprintf(stderr, "tpch_gen_create: %s\n", st->message);
        sto_status_free(st);
    }
    RUN(test_skip_equals_steps);
    RUN(test_uniform_matches_doubles);
    RUN(test_mulmod_matches_division);
    RUN(test_stream_jumps_to_any_unit);
    RUN(test_ranges_start_anywhere);
    RUN(test_rows_match_dbgen);
    RUN(test_split_units_covers_all);
    RUN(test_threaded_pool_is_serial_pool);
    RUN(test_bad_scale_factors);
    RUN(test_direct_files_equal_buffered);
    RUN(test_failed_write_leaves_no_file);
    tpch_gen_free(gen);
    rmdir(files_dir);
    return TEST_REPORT();
}
