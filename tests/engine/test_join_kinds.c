/*
 * test_join_kinds.c — the join kinds (engine/rt_join_kinds.c) on their own
 * and through all three algorithms: mark-join NULL semantics, the SINGLE
 * join's 21000, the three algorithms agreeing with each other, and the
 * memory limit during the build.
 */
#include "join_check.h"
#include "test.h"

static eng_sched *pools[3];

/* --- the state machine alone ---------------------------------------------------- */

typedef struct sm_ctx {
    jinput in;
    jvec out;
} sm_ctx;

static bool sm_keys_eq(void *ctx, const uint8_t *p, const uint8_t *b)
{
    return jkeys_equal(&((sm_ctx *)ctx)->in, (const jrow *)p, (const jrow *)b);
}

static int32_t sm_emit(cg_error *err, void *ctx, const uint8_t *p, const uint8_t *b, int mark)
{
    (void)err;
    jvec_push(&((sm_ctx *)ctx)->out, p ? ((const jrow *)p)->id : -1, b ? ((const jrow *)b)->id : -1,
              mark);
    return 0;
}

/* Entries for build rows with keys k[0..n) (hash = the key). */
static uint8_t *entries(const int64_t *k, unsigned n)
{
    uint32_t stride = eng_join_entry_stride(sizeof(jrow));
    uint8_t *base = calloc(n ? n : 1, stride);
    for (unsigned i = 0; i < n; i++) {
        eng_join_entry *e = eng_join_entry_at(base, stride, i);
        e->hash = (uint64_t)k[i];
        e->next = i + 1 < n ? eng_join_entry_at(base, stride, i + 1) : NULL;
        jrow *r = (jrow *)eng_join_row(e);
        r->k1 = k[i];
        r->id = 100 + i;
    }
    return base;
}

static void test_state_machine(void)
{
    sm_ctx c = {0};
    c.in.keys = JKEY_INT;
    int64_t keys[] = {5, 7, 5};
    uint8_t *base = entries(keys, 3);
    eng_join_entry *chain = (eng_join_entry *)base;
    eng_join_build_info info = {3, 0};
    jrow probe = {.k1 = 5, .id = 1};
    cg_error err = cg_error_none();

    /* INNER: both 5s; LEFT without a match: one NULL-extended row. */
    eng_join_spec s = {ENG_JOIN_INNER, sm_keys_eq, NULL, sm_emit, &c};
    CHECK(eng_join_probe_chain(&err, &s, &info, 5, (uint8_t *)&probe, false, chain) == 0);
    CHECK_EQ_INT(c.out.n, 2);
    s.kind = ENG_JOIN_LEFT;
    probe.k1 = 6;
    c.out.n = 0;
    CHECK(eng_join_probe_chain(&err, &s, &info, 6, (uint8_t *)&probe, false, chain) == 0);
    CHECK_EQ_INT(c.out.n, 1);
    CHECK_EQ_INT(c.out.v[0].build, -1);

    /* SEMI stops at the first match: `done` is set and the rest is skipped. */
    eng_join_probe p;
    s.kind = ENG_JOIN_SEMI;
    probe.k1 = 5;
    c.out.n = 0;
    eng_join_probe_begin(&p, &s, 5, (uint8_t *)&probe, false);
    CHECK(eng_join_probe_candidate(&err, &p, chain) == 0);
    CHECK(p.done);
    CHECK(eng_join_probe_end(&err, &p, &info) == 0);
    CHECK_EQ_INT(c.out.n, 1);

    /* RIGHT sets match flags; the final scan emits only the 7. */
    s.kind = ENG_JOIN_RIGHT;
    c.out.n = 0;
    CHECK(eng_join_probe_chain(&err, &s, &info, 5, (uint8_t *)&probe, false, chain) == 0);
    CHECK_EQ_INT(c.out.n, 2);
    c.out.n = 0;
    CHECK(eng_join_emit_unmatched(&err, &s, base, eng_join_entry_stride(sizeof(jrow)), 3) == 0);
    CHECK_EQ_INT(c.out.n, 1);
    CHECK_EQ_INT(c.out.v[0].build, 101);
    CHECK_EQ_INT(c.out.v[0].probe, -1);

    /* SINGLE: a second match is 21000. */
    s.kind = ENG_JOIN_SINGLE;
    c.out.n = 0;
    int32_t rc = eng_join_probe_chain(&err, &s, &info, 5, (uint8_t *)&probe, false, chain);
    CHECK_EQ_INT(rc, CG_ERR_RUNTIME);
    REQUIRE(err.detail);
    CHECK_STREQ(err.detail->sqlstate, "21000");
    sto_status_free(err.detail);
    err = cg_error_none();
    probe.k1 = 7;
    CHECK(eng_join_probe_chain(&err, &s, &info, 7, (uint8_t *)&probe, false, chain) == 0);
    CHECK_EQ_INT(c.out.n, 1);
    CHECK_EQ_INT(c.out.v[0].build, 101);

    /* MARK: true / false / NULL (NULL probe key, NULL on the build side). */
    s.kind = ENG_JOIN_MARK;
    c.out.n = 0;
    CHECK(eng_join_probe_chain(&err, &s, &info, 7, (uint8_t *)&probe, false, chain) == 0);
    probe.k1 = 8;
    CHECK(eng_join_probe_chain(&err, &s, &info, 8, (uint8_t *)&probe, false, chain) == 0);
    CHECK(eng_join_probe_chain(&err, &s, &info, 0, (uint8_t *)&probe, true, chain) == 0);
    eng_join_build_info with_null = {4, 1};
    CHECK(eng_join_probe_chain(&err, &s, &with_null, 8, (uint8_t *)&probe, false, chain) == 0);
    eng_join_build_info empty = {0, 0};
    CHECK(eng_join_probe_chain(&err, &s, &empty, 0, (uint8_t *)&probe, true, NULL) == 0);
    REQUIRE(c.out.n == 5);
    CHECK_EQ_INT(c.out.v[0].mark, ENG_JOIN_MARK_TRUE);
    CHECK_EQ_INT(c.out.v[1].mark, ENG_JOIN_MARK_FALSE);
    CHECK_EQ_INT(c.out.v[2].mark, ENG_JOIN_MARK_NULL);
    CHECK_EQ_INT(c.out.v[3].mark, ENG_JOIN_MARK_NULL);
    CHECK_EQ_INT(c.out.v[4].mark, ENG_JOIN_MARK_FALSE);
    free(c.out.v);
    free(base);
}

/* --- mark joins over every algorithm --------------------------------------------- */

/* rows with k1 = keys[i]; INT64_MIN = NULL. */
static void set_rows(jrow *rows, const int64_t *keys, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        memset(&rows[i], 0, sizeof(jrow));
        rows[i].k1 = keys[i] == INT64_MIN ? 0 : keys[i];
        rows[i].null_k1 = keys[i] == INT64_MIN;
        rows[i].id = i;
    }
}

static void check_marks(const int64_t *b, unsigned nb, const int64_t *p, unsigned np,
                        const int64_t *marks)
{
    jinput in = {0};
    in.keys = JKEY_INT;
    in.nb = nb;
    in.np = np;
    in.build = calloc(nb + 1, sizeof(jrow));
    in.probe = calloc(np + 1, sizeof(jrow));
    set_rows(in.build, b, nb);
    set_rows(in.probe, p, np);
    jvec ref = {0};
    CHECK(jreference(&in, ENG_JOIN_MARK, &ref) == 0);
    REQUIRE(ref.n == np);
    for (unsigned i = 0; i < np; i++)
        CHECK_EQ_INT(ref.v[i].mark, marks[i]);
    for (int a = 0; a < JALG_COUNT; a++)
        for (unsigned w = 0; w < 3; w++) {
            jopts o = {(jalg)a, ENG_JOIN_MARK, jworker_counts[w], 2, 3, 0};
            jvec got = {0};
            sto_status st = jrun(pools[w], &in, &o, &got);
            CHECK(st == STO_OK);
            sto_status_free(st);
            CHECK(jvec_equal(&ref, &got));
            free(got.v);
        }
    free(ref.v);
    free(in.build);
    free(in.probe);
}

static void test_mark_nulls(void)
{
    const int64_t N = INT64_MIN, T = ENG_JOIN_MARK_TRUE, F = ENG_JOIN_MARK_FALSE,
                  U = ENG_JOIN_MARK_NULL;
    /* 1 IN (1, NULL) true; 2 IN (1, NULL) NULL; NULL IN (1, NULL) NULL. */
    check_marks((int64_t[]){1, N}, 2, (int64_t[]){1, 2, N}, 3, (int64_t[]){T, U, U});
    /* 2 IN (1) false; NULL IN (1) NULL. */
    check_marks((int64_t[]){1}, 1, (int64_t[]){2, N, 1}, 3, (int64_t[]){F, U, T});
    /* anything IN (empty) false, NULL included. */
    check_marks(NULL, 0, (int64_t[]){2, N}, 2, (int64_t[]){F, F});
    /* only NULLs on the build side. */
    check_marks((int64_t[]){N, N}, 2, (int64_t[]){3, N}, 2, (int64_t[]){U, U});
}

/* --- SINGLE ----------------------------------------------------------------------- */

static void test_single_error(void)
{
    jinput in = {0};
    in.keys = JKEY_INT;
    in.nb = 3;
    in.np = 2;
    in.build = calloc(3, sizeof(jrow));
    in.probe = calloc(2, sizeof(jrow));
    set_rows(in.build, (int64_t[]){4, 9, 4}, 3);
    set_rows(in.probe, (int64_t[]){9, 1}, 2);
    for (int a = 0; a < JALG_COUNT; a++) {
        jopts o = {(jalg)a, ENG_JOIN_SINGLE, 2, -1, 0, 0};
        jvec got = {0};
        sto_status st = jrun(pools[1], &in, &o, &got);
        CHECK(st == STO_OK);
        CHECK_EQ_INT(got.n, 2);
        sto_status_free(st);
        free(got.v);
        in.probe[1].k1 = 4; /* two matches now */
        got = (jvec){0};
        st = jrun(pools[1], &in, &o, &got);
        REQUIRE(st != STO_OK);
        CHECK_STREQ(st->sqlstate, "21000");
        CHECK_STREQ(st->message, "more than one row returned by a subquery used as an expression");
        sto_status_free(st);
        free(got.v);
        in.probe[1].k1 = 1;
    }
    free(in.build);
    free(in.probe);
}

/* --- the algorithms agree ------------------------------------------------------------ */

static void test_algorithms_agree(void)
{
    jinput in;
    jcase_make(&jcases[1], &in, 7); /* composite keys, residual, NULLs */
    for (int k = 0; k < ENG_JOIN_KIND_COUNT; k++) {
        jvec got[JALG_COUNT] = {{0}};
        sto_status st[JALG_COUNT];
        for (int a = 0; a < JALG_COUNT; a++) {
            jopts o = {(jalg)a, (eng_join_kind)k, 2, 3, 4, 0};
            st[a] = jrun(pools[1], &in, &o, &got[a]);
        }
        for (int a = 1; a < JALG_COUNT; a++) {
            CHECK((st[a] == STO_OK) == (st[0] == STO_OK));
            if (!st[a] && !st[0]) CHECK(jvec_equal(&got[0], &got[a]));
        }
        for (int a = 0; a < JALG_COUNT; a++) {
            sto_status_free(st[a]);
            free(got[a].v);
        }
    }
    jinput_free(&in);
}

/* --- memory limit ----------------------------------------------------------------------- */

static void test_memory_limit(void)
{
    jinput in;
    jinput_make(&in, 40000, 100, JKEY_INT, JD_UNIFORM, JD_UNIFORM, 1000, 0, 3);
    for (int a = 0; a < JALG_COUNT; a++)
        for (unsigned w = 0; w < 3; w++) {
            /* 40000 build tuples take about 3MB. */
            jopts o = {(jalg)a, ENG_JOIN_INNER, jworker_counts[w], -1, 0, 1 << 20};
            jvec got = {0};
            sto_status st = jrun(pools[w], &in, &o, &got);
            REQUIRE(st != STO_OK);
            CHECK_STREQ(st->sqlstate, "53200");
            sto_status_free(st);
            free(got.v);
            /* With room it runs. */
            o.mem_limit = 64 << 20;
            got = (jvec){0};
            st = jrun(pools[w], &in, &o, &got);
            CHECK(st == STO_OK);
            sto_status_free(st);
            CHECK(got.n > 0);
            free(got.v);
        }
    jinput_free(&in);
}

int main(void)
{
    jpools(pools);
    RUN(test_state_machine);
    RUN(test_mark_nulls);
    RUN(test_single_error);
    RUN(test_algorithms_agree);
    RUN(test_memory_limit);
    jpools_free(pools);
    return TEST_REPORT();
}
