/*
 * test_mux_verbs.c — the device-independent parts of the verbs transport:
 * the registration cache, the work-request table, and the clear start-up
 * error on a machine without an RDMA device.
 */
#include "net/mux/pool.h"
#include "net/mux/transport.h"
#include "net/mux/verbs_regcache.h"
#include "net/mux/verbs_wr.h"
#include "test.h"
#include <infiniband/verbs.h>

typedef struct fake_dev {
    int regs, deregs;
    uint32_t next_key;
} fake_dev;

static void *fake_reg(void *ctx, void *addr, size_t len, uint32_t *lkey)
{
    fake_dev *d = ctx;
    d->regs++;
    *lkey = ++d->next_key;
    return addr; /* any non-NULL handle */
}

static void fake_dereg(void *ctx, void *handle)
{
    ((fake_dev *)ctx)->deregs++;
}

static void *failing_reg(void *ctx, void *addr, size_t len, uint32_t *lkey)
{
    return NULL;
}

static void regcache(void)
{
    fake_dev d = {0};
    mux_reg_ops ops = {&d, fake_reg, fake_dereg};
    mux_regcache *c;
    REQUIRE(mux_regcache_create(&ops, &c) == NULL);
    /* One buffer: [lo: 4096 registered][gap: 4096][hi: 4096 registered]. */
    static char big[3 * 4096];
    char *lo = big, *hi = big + 8192, *gap = big + 4096;
    size_t hilen = 4096, lolen = 4096;
    /* Insert out of address order; lookups must still find each. */
    REQUIRE(mux_regcache_add(c, hi, hilen) == NULL);
    REQUIRE(mux_regcache_add(c, lo, lolen) == NULL);
    CHECK_EQ_INT(d.regs, 2);
    /* Registering a covered range again costs nothing. */
    REQUIRE(mux_regcache_add(c, hi + 16, 100) == NULL);
    CHECK_EQ_INT(d.regs, 2);
    CHECK_EQ_INT(mux_regcache_count(c), 2);
    uint32_t k1 = 0, k2 = 0, k;
    CHECK(mux_regcache_lookup(c, hi, hilen, &k1));
    CHECK(mux_regcache_lookup(c, lo + lolen - 1, 1, &k2));
    CHECK(k1 == 1 && k2 == 2);
    CHECK(mux_regcache_lookup(c, hi + 100, 50, &k) && k == k1);
    /* Ranges that leave a region, or were never registered, have no key. */
    CHECK(!mux_regcache_lookup(c, hi + hilen - 10, 20, &k));
    CHECK(!mux_regcache_lookup(c, gap + 10, 10, &k));
    CHECK(!mux_regcache_lookup(c, hi - 1, 2, &k));
    CHECK(!mux_regcache_lookup(c, lo + lolen - 1, 2, &k));
    /* Partial overlap is refused, and nothing is registered for it. */
    sto_status st = mux_regcache_add(c, hi + hilen - 10, 100);
    CHECK(st != NULL);
    sto_status_free(st);
    CHECK_EQ_INT(d.regs, 2);
    /* Many regions: keys stay attached to the right ranges. */
    static char many[64][256];
    for (int i = 63; i >= 0; i--)
        REQUIRE(mux_regcache_add(c, many[i], 256) == NULL);
    for (int i = 0; i < 64; i++) {
        CHECK(mux_regcache_lookup(c, many[i] + 10, 200, &k));
        CHECK_EQ_INT(k, 2 + 64 - i); /* registered in reverse order */
    }
    mux_regcache_destroy(c);
    CHECK_EQ_INT(d.deregs, d.regs);

    mux_reg_ops bad = {&d, failing_reg, fake_dereg};
    REQUIRE(mux_regcache_create(&bad, &c) == NULL);
    st = mux_regcache_add(c, big, sizeof big);
    CHECK(st != NULL);
    sto_status_free(st);
    CHECK_EQ_INT(mux_regcache_count(c), 0);
    mux_regcache_destroy(c);
}

static void pool_slabs_register(void)
{
    fake_dev d = {0};
    mux_reg_ops ops = {&d, fake_reg, fake_dereg};
    mux_regcache *c;
    mux_pool *p;
    REQUIRE(mux_regcache_create(&ops, &c) == NULL);
    REQUIRE(mux_pool_create(8, 1000, -1, &p) == NULL);
    size_t bytes;
    void *slab = mux_pool_slab(p, &bytes);
    REQUIRE(mux_regcache_add(c, slab, bytes) == NULL);
    /* Every message, header room included, is covered by the slab's key. */
    mux_msg *m[8];
    for (int i = 0; i < 8; i++) {
        m[i] = mux_pool_try_get(p);
        uint32_t k = 0;
        CHECK(mux_regcache_lookup(c, m[i]->frame, 32 + m[i]->cap, &k) && k == 1);
    }
    for (int i = 0; i < 8; i++)
        mux_msg_release(m[i]);
    mux_regcache_destroy(c);
    mux_pool_destroy(p);
}

static void count_drained(void *arg, const mux_wr *wr)
{
    (*(int *)arg)++;
    if (wr->m) mux_msg_release(wr->m);
}

static void wr_table(void)
{
    mux_wrtab *t;
    REQUIRE(mux_wrtab_create(6, 3, 2, &t) == NULL);
    uint64_t id[8];
    mux_wr w = {.peer = 1, .kind = MUX_WR_SEND};
    CHECK(mux_wrtab_post(t, &w, &id[0]));
    CHECK(mux_wrtab_post(t, &w, &id[1]));
    CHECK(!mux_wrtab_post(t, &w, &id[2])); /* queue pair depth 2 reached */
    CHECK_EQ_INT(mux_wrtab_outstanding(t, 1), 2);
    w.peer = 2;
    CHECK(mux_wrtab_post(t, &w, &id[2]));
    mux_wr r = {.peer = -1, .kind = MUX_WR_RECV};
    CHECK(mux_wrtab_post(t, &r, &id[3]));
    CHECK(mux_wrtab_post(t, &r, &id[4]));
    CHECK(mux_wrtab_post(t, &r, &id[5]));
    CHECK(!mux_wrtab_post(t, &r, &id[6])); /* all six slots used */
    w.peer = 3;
    CHECK(!mux_wrtab_post(t, &w, &id[6])); /* no such peer */
    /* Completion returns what was posted, once. */
    mux_wr out;
    CHECK(mux_wrtab_complete(t, id[0], &out) && out.peer == 1 && out.kind == MUX_WR_SEND);
    CHECK(!mux_wrtab_complete(t, id[0], &out)); /* duplicate */
    CHECK_EQ_INT(mux_wrtab_outstanding(t, 1), 1);
    /* The freed slot is reused under a new generation: the old id stays dead. */
    w.peer = 1;
    CHECK(mux_wrtab_post(t, &w, &id[6]));
    CHECK((uint32_t)id[6] == (uint32_t)id[0] && id[6] != id[0]);
    CHECK(!mux_wrtab_complete(t, id[0], &out));
    CHECK(!mux_wrtab_complete(t, 0xffffffffull, &out)); /* corrupt id */
    CHECK(mux_wrtab_complete(t, id[6], &out));
    /* Unpost undoes a post whose ibv_post_* failed. */
    CHECK(mux_wrtab_post(t, &w, &id[7]));
    CHECK_EQ_INT(mux_wrtab_outstanding(t, 1), 2);
    mux_wrtab_unpost(t, id[7]);
    CHECK_EQ_INT(mux_wrtab_outstanding(t, 1), 1);
    /* A failed peer's sends are drained, the others stay. */
    int drained = 0;
    CHECK_EQ_INT(mux_wrtab_drain(t, 1, count_drained, &drained), 1);
    CHECK_EQ_INT(drained, 1);
    CHECK_EQ_INT(mux_wrtab_outstanding(t, 1), 0);
    CHECK(!mux_wrtab_complete(t, id[1], &out));
    CHECK(mux_wrtab_complete(t, id[2], &out) && out.peer == 2);
    CHECK_EQ_INT(mux_wrtab_drain(t, -1, NULL, NULL), 3); /* the receives */
    mux_wrtab_destroy(t);
}

static void wr_table_holds_messages(void)
{
    mux_pool *p;
    mux_wrtab *t;
    REQUIRE(mux_pool_create(4, 64, -1, &p) == NULL);
    REQUIRE(mux_wrtab_create(16, 2, 8, &t) == NULL);
    for (int i = 0; i < 4; i++) {
        mux_wr w = {.peer = i % 2, .kind = MUX_WR_SEND, .m = mux_pool_try_get(p)};
        uint64_t id;
        CHECK(mux_wrtab_post(t, &w, &id));
    }
    CHECK_EQ_INT(mux_pool_free_count(p), 0);
    int n = 0;
    mux_wrtab_drain(t, 0, count_drained, &n);
    mux_wrtab_drain(t, 1, count_drained, &n);
    CHECK_EQ_INT(n, 4);
    CHECK_EQ_INT(mux_pool_free_count(p), 4); /* every message went back */
    mux_wrtab_destroy(t);
    mux_pool_destroy(p);
}

static void no_device_error(void)
{
    int ndev = 0;
    struct ibv_device **devs = ibv_get_device_list(&ndev);
    if (devs) ibv_free_device_list(devs);
    if (ndev > 0) {
        printf("skipped no_device_error: this machine has %d RDMA device(s)\n", ndev);
        return;
    }
    mux_cluster c;
    REQUIRE(mux_cluster_parse("127.0.0.1:9\n127.0.0.1:10\n", &c) == NULL);
    mux_transport_cfg cfg = {.cluster = &c, .rank = 0, .max_data = 1024};
    mux_transport_sink sink = {0};
    mux_transport *t = (mux_transport *)1;
    sto_status st = mux_verbs_open(&cfg, &sink, &t);
    REQUIRE(st != NULL);
    CHECK_STREQ(st->message, "no RDMA device found; use --transport tcp");
    CHECK_STREQ(st->sqlstate, STO_CONNECTION_FAILURE);
    CHECK(t == NULL);
    sto_status_free(st);
    mux_cluster_free(&c);
}

int main(void)
{
    RUN(regcache);
    RUN(pool_slabs_register);
    RUN(wr_table);
    RUN(wr_table_holds_messages);
    RUN(no_device_error);
    return TEST_REPORT();
}
