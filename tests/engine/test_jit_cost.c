/*
 * test_jit_cost.c — the mode rule's view of real pipelines (engine/jit_cost.h):
 * plans of SF 0.01 queries, each pipeline's estimated per-row saving and
 * module size, and the mode they give for the row counts of SF 1 and SF 0.01.
 * Arithmetic over many rows is OPT; the same at SF 0.01, tiny inputs, and
 * rows that only probe a large table and count are FAST; a larger module
 * costs more; a filter that lets few rows through discounts what follows,
 * and so does a probe's key bitmap tested ahead of the probe.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/instance.h"
#include "engine/jit_cost.h"
#include "engine/optimize.h"
#include "engine/physical.h"
#include "rackdb.h"
#include "sql/bind.h"
#include "sql/parse.h"
#include "test.h"
#include "tpch_check.h"

static rackdb *db;
static rackdb_session *sess;

typedef struct planned {
    sql_arena *arena;
    eng_physical *ph;
} planned;

/* Plans sql as the executor would run it on two workers. */
static bool plan(const char *sql, planned *out)
{
    memset(out, 0, sizeof(*out));
    out->arena = sql_arena_create();
    if (!out->arena) return false;
    eng_catalog *cat = sess->db->catalog;
    eng_catalog_read_lock(cat);
    sql_stmt_list *list = NULL;
    sql_plan *p = NULL;
    sto_status st = sql_parse(out->arena, sql, &list);
    sql_catalog ci = eng_catalog_iface(cat);
    if (!st) st = sql_bind_query(out->arena, &ci, list->items[0]->query, &p);
    eng_opt_settings os = eng_opt_settings_default();
    os.threads = 2;
    if (!st) st = eng_optimize(p, &os);
    if (!st) st = eng_physical_build(p, &out->ph);
    eng_catalog_unlock(cat);
    if (st) {
        fprintf(stderr, "%s: %s\n", sql, st->message);
        sto_status_free(st);
        return false;
    }
    return true;
}

static void done(planned *p)
{
    sql_arena_destroy(p->arena);
}

/* The pipeline whose description starts with `name`, NULL if none. */
static const eng_pipe *find(const planned *p, const char *name)
{
    for (unsigned i = 0; i < p->ph->npipes; i++) {
        char buf[256];
        eng_pipe_describe(p->ph, &p->ph->pipes[i], buf, sizeof(buf));
        if (strncmp(buf, name, strlen(name)) == 0) return &p->ph->pipes[i];
    }
    fprintf(stderr, "no pipeline \"%s\"\n", name);
    return NULL;
}

#define SF1_LINEITEM   6001215.0
#define SF001_LINEITEM 60175.0

/* TPC-H Q1: checked DECIMAL products into eight aggregates. */
static const char *Q1 = "SELECT l_returnflag, l_linestatus, sum(l_quantity), sum(l_extendedprice), "
                        "sum(l_extendedprice * (1 - l_discount)), "
                        "sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)), avg(l_quantity), "
                        "avg(l_extendedprice), avg(l_discount), count(*) FROM lineitem "
                        "WHERE l_shipdate <= DATE '1998-09-02' GROUP BY l_returnflag, l_linestatus";

static void test_arithmetic(void)
{
    planned p;
    REQUIRE(plan(Q1, &p));
    const eng_pipe *agg = find(&p, "scan lineitem -> aggregate");
    REQUIRE(agg);
    eng_jit_cost c = eng_jit_cost_of(agg);
    /* each product, sum and key costs FAST code nanoseconds per row */
    CHECK(c.row_saving_ns > 15);
    /* the module was ~370 IR instructions when the weights were fitted */
    CHECK(c.ir_instructions > 250 && c.ir_instructions < 550);
    CHECK(eng_jit_mode(agg, SF1_LINEITEM, 2) == CG_MODE_OPT);
    CHECK(eng_jit_mode(agg, SF001_LINEITEM, 2) == CG_MODE_FAST);
    CHECK(eng_jit_mode(agg, SF001_LINEITEM, 1) == CG_MODE_FAST);
    /* the four result rows are sorted FAST */
    const eng_pipe *sort = find(&p, "rows of pipeline");
    REQUIRE(sort);
    CHECK(eng_jit_mode(sort, 4, 2) == CG_MODE_FAST);
    done(&p);
}

/* More arithmetic per row saves more per row and makes a larger module. */
static void test_more_work(void)
{
    planned a, b;
    REQUIRE(plan("SELECT sum(l_extendedprice) FROM lineitem", &a));
    REQUIRE(plan("SELECT sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)), "
                 "sum(l_quantity * l_tax - l_discount) FROM lineitem",
                 &b));
    const eng_pipe *pa = find(&a, "scan lineitem -> aggregate");
    const eng_pipe *pb = find(&b, "scan lineitem -> aggregate");
    REQUIRE(pa && pb);
    eng_jit_cost ca = eng_jit_cost_of(pa), cb = eng_jit_cost_of(pb);
    CHECK(cb.row_saving_ns > ca.row_saving_ns + 5);
    CHECK(cb.ir_instructions > ca.ir_instructions + 40);
    done(&a);
    done(&b);
}

/* A probe of a table larger than the caches, then a count: the rows wait
 * on memory in either mode, so OPT saves little per row; at the size of
 * SF 1's orders scan it is FAST, where Q1's aggregation over as many rows
 * would be OPT. */
static void test_probe_bound(void)
{
    planned p, q1;
    REQUIRE(plan("SELECT count(*) FROM lineitem l1, lineitem l2 "
                 "WHERE l1.l_orderkey = l2.l_orderkey AND l1.l_linenumber = l2.l_linenumber",
                 &p));
    REQUIRE(plan(Q1, &q1));
    const eng_pipe *probe = NULL;
    for (unsigned i = 0; i < p.ph->npipes; i++)
        for (uint32_t k = 0; k < p.ph->pipes[i].nsteps; k++)
            if (p.ph->pipes[i].steps[k].kind == CG_STEP_PROBE) probe = &p.ph->pipes[i];
    REQUIRE(probe);
    const eng_pipe *agg = find(&q1, "scan lineitem -> aggregate");
    REQUIRE(agg);
    eng_jit_cost c = eng_jit_cost_of(probe);
    if (getenv("SHOW"))
        fprintf(stderr, "probe %.2f ns %.0f ir, q1 %.2f ns\n", c.row_saving_ns, c.ir_instructions,
                eng_jit_cost_of(agg).row_saving_ns);
    CHECK(c.row_saving_ns < eng_jit_cost_of(agg).row_saving_ns / 2);
    CHECK(eng_jit_mode(probe, 1.5e6, 2) == CG_MODE_FAST);
    CHECK(eng_jit_mode(agg, 1.5e6, 2) == CG_MODE_OPT);
    done(&p);
    done(&q1);
}

/* A filter that passes few rows discounts the work behind it: Q6's
 * aggregate sees 2 % of the rows, so its saving per row read is close to
 * that of the filter alone. */
static void test_selective_filter(void)
{
    planned sel, all;
    REQUIRE(plan("SELECT sum(l_extendedprice * l_discount) FROM lineitem "
                 "WHERE l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' "
                 "AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24",
                 &sel));
    REQUIRE(plan("SELECT sum(l_extendedprice * l_discount) FROM lineitem "
                 "WHERE l_shipdate >= DATE '1992-01-01'",
                 &all));
    const eng_pipe *ps = find(&sel, "scan lineitem -> aggregate");
    const eng_pipe *pa = find(&all, "scan lineitem -> aggregate");
    REQUIRE(ps && pa);
    double agg_share = eng_jit_cost_of(pa).row_saving_ns;
    double filter_heavy = eng_jit_cost_of(ps).row_saving_ns;
    if (getenv("SHOW")) fprintf(stderr, "q6 %.2f ns, all %.2f ns\n", filter_heavy, agg_share);
    /* five comparisons on every row, the product on 2 % of them */
    CHECK(filter_heavy > 2 && filter_heavy < 8);
    CHECK(agg_share > 2);
    /* the product and sum on every row cost more than on 2 % */
    planned none;
    REQUIRE(plan("SELECT sum(l_extendedprice * l_discount) FROM lineitem "
                 "WHERE l_shipdate >= DATE '2100-01-01'",
                 &none));
    const eng_pipe *pn = find(&none, "scan lineitem -> aggregate");
    REQUIRE(pn);
    if (getenv("SHOW")) fprintf(stderr, "none %.2f ns\n", eng_jit_cost_of(pn).row_saving_ns);
    CHECK(eng_jit_cost_of(pn).row_saving_ns < agg_share);
    done(&sel);
    done(&all);
    done(&none);
}

/* The same pipeline with its first probe's key bitmap switched on and
 * `share` of the probe rows expected to have a partner, as the planner
 * sets them for two million probe rows and more (SF 1's lineitem; at SF
 * 0.01 it does neither). The probe and the steps are copied into *probe
 * and steps[]; false when the first step is no probe. */
static bool with_keybits(const eng_pipe *p, double share, eng_pipe *out, cg_step *steps,
                         uint32_t max, cg_probe *probe)
{
    if (p->nsteps == 0 || p->nsteps > max || p->steps[0].kind != CG_STEP_PROBE) return false;
    *out = *p;
    memcpy(steps, p->steps, p->nsteps * sizeof(*steps));
    *probe = *steps[0].probe;
    probe->keybits = true;
    probe->kb_cols = 1;
    steps[0].probe = probe;
    steps[0].pass_share = share;
    out->steps = steps;
    return true;
}

/* A probe tested against its key bitmap in the batch loop (Q17's lineitem
 * scan probing the parts of one brand): every row pays only the
 * bitmap test, and the probe's own work counts for the rows whose bit is
 * set. Over SF 1's lineitem that is FAST, where the same probe without the
 * bitmap, or with a bitmap that most rows pass (a filter keeping nearly
 * all of part), is OPT. */
static void test_pretested_probe(void)
{
    planned few, most;
    REQUIRE(plan("SELECT sum(l_extendedprice), sum(l_quantity) FROM lineitem, part "
                 "WHERE p_partkey = l_partkey AND p_brand = 'Brand#23'",
                 &few));
    REQUIRE(plan("SELECT sum(l_extendedprice), sum(l_quantity) FROM lineitem, part "
                 "WHERE p_partkey = l_partkey AND p_size > 0",
                 &most));
    const eng_pipe *pf = find(&few, "scan lineitem");
    const eng_pipe *pm = find(&most, "scan lineitem");
    REQUIRE(pf && pm);
    eng_pipe bf, bm;
    cg_step sf[8], sm[8];
    cg_probe rf, rm;
    /* one brand of 25; nearly every size */
    REQUIRE(with_keybits(pf, 1.0 / 25, &bf, sf, 8, &rf));
    REQUIRE(with_keybits(pm, 0.95, &bm, sm, 8, &rm));
    /* few rows have a partner: the bitmap is tested in the batch loop */
    CHECK(cg_steps_pretest(bf.steps, bf.nsteps, 0));
    CHECK(!cg_steps_pretest(pf->steps, pf->nsteps, 0));
    CHECK(!cg_steps_pretest(bm.steps, bm.nsteps, 0));
    eng_jit_cost plain = eng_jit_cost_of(pf), tested = eng_jit_cost_of(&bf);
    eng_jit_cost dense = eng_jit_cost_of(&bm);
    if (getenv("SHOW"))
        fprintf(stderr, "probe %.2f ns %.0f ir; pretested %.2f ns %.0f ir; dense %.2f ns\n",
                plain.row_saving_ns, plain.ir_instructions, tested.row_saving_ns,
                tested.ir_instructions, dense.row_saving_ns);
    /* the probe of a small table (4 ns) no longer counts for every row */
    CHECK(tested.row_saving_ns < plain.row_saving_ns - 3);
    CHECK(tested.row_saving_ns > 0);
    /* the bitmap test adds to the module */
    CHECK(tested.ir_instructions > plain.ir_instructions);
    CHECK(dense.ir_instructions == eng_jit_cost_of(pm).ir_instructions);
    CHECK(eng_jit_mode(&bf, SF1_LINEITEM, 2) == CG_MODE_FAST);
    CHECK(eng_jit_mode(pf, SF1_LINEITEM, 2) == CG_MODE_OPT);
    CHECK(eng_jit_mode(&bm, SF1_LINEITEM, 2) == CG_MODE_OPT);
    done(&few);
    done(&most);
}

int main(void)
{
    if (!tc_open_sf001(&db, &sess)) return 1;
    RUN(test_arithmetic);
    RUN(test_more_work);
    RUN(test_probe_bound);
    RUN(test_selective_filter);
    RUN(test_pretested_probe);
    rackdb_session_close(sess);
    rackdb_close(db);
    return TEST_REPORT();
}
