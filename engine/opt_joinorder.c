/*
 * opt_joinorder.c — the order of inner joins, and each join's algorithm.
 *
 * A region is a maximal tree of INNER/CROSS joins; whatever sits below it
 * (scans with their filters, aggregates, outer/semi/anti/mark/single joins)
 * is a leaf. Non-inner joins are barriers: they are ordered inside their
 * own inputs but never moved across, which keeps their semantics without
 * further proof. The region's conditions, split into conjuncts, are the
 * edges of a query graph (a conjunct over three leaves is a hyperedge).
 *
 * Up to DP_MAX_LEAVES leaves the best bushy tree is found by dynamic
 * programming over subsets (every subset is split into two parts that a
 * predicate connects, so no cross product is considered while a connected
 * order exists; only a disconnected graph gets them). Beyond that, greedy
 * operator ordering (GOO) repeatedly joins the connected pair with the
 * smallest result. The cost is C_out: the sum of the estimated sizes of all
 * intermediate results. The smaller input of each join goes to the right.
 * Equalities implied by the written ones (equivalence classes, see
 * eqclass) are edges too, counted once per class in the estimates.
 *
 * Physical choice (eng_opt_choose_physical): a join with an equality
 * between its sides gets the forced algorithm or, in auto mode, one shared
 * hash table when the build side is at most
 * ENG_OPT_HASH_BUILD_ROWS_PER_THREAD × threads rows, radix partitioning
 * otherwise, and sort-merge when both inputs arrive sorted on the key.
 * Joins without an equality are nested loops. build_left says the left
 * input is the smaller estimated one (never for MARK and SINGLE joins:
 * their per-left-row answers need the whole right side in the table); the
 * physical planner builds on the left for INNER/CROSS joins and for SEMI/
 * ANTI joins (whose probe then flags the matched left rows, emitted after
 * it: q04 builds a quarter's orders, not 3.8M lineitems), on the right for
 * the outer kinds.
 */
#include <math.h>
#include <string.h>

#include "engine/opt_int.h"

#define DP_MAX_LEAVES 12
#define REGION_MAX    64
#define PRED_MAX      (4 * REGION_MAX * 8)
#define CLASS_MAX     64

/* An equivalence class of join columns: a.x = b.y AND b.y = c.z makes
 * {a.x, b.y, c.z} one class, so a and c may be joined directly on a.x =
 * c.z (TPC-H q05 joins customer with nation before it meets lineitem).
 * Only classes where each leaf has at most one member are kept: there one
 * equality per class and join suffices, as each side's members are
 * already equal. */
typedef struct eqclass {
    sql_colid root;
    uint64_t leaves;            /* leaves with a member */
    bool mixed;                 /* some leaf has two members: not kept */
    sql_bexpr *col[REGION_MAX]; /* per leaf: its member */
    double ndv[REGION_MAX];     /* per leaf: distinct values of its member */
} eqclass;

typedef struct region {
    eng_card *c;
    uint32_t n;
    sql_lop *leaves[REGION_MAX];
    double rows[REGION_MAX];
    eng_idset outs[REGION_MAX];
    eng_conj preds;
    uint64_t *masks; /* per predicate: the leaves it reads */
    double *sels;
    int *owner; /* per predicate: the semi/anti leaf whose condition it is, or -1 */
    /* Semi and anti joins: their right input is a leaf joined by its own
     * kind; need is the leaves its condition reads (itself included),
     * factor the share of rows it keeps. */
    sql_join_kind kind[REGION_MAX];
    uint64_t need[REGION_MAX];
    double factor[REGION_MAX];
    uint64_t semis;
    /* Per predicate: its equivalence class or -1. Predicates from norig on
     * are implied by a class (their sels are 1: card_of counts a class
     * once, see class_sel). */
    int *cls;
    uint32_t norig;
    eqclass *classes;
    uint32_t nclasses;
    bool oom;
} region;

static bool is_inner(const sql_lop *op)
{
    return op->kind == SQL_LOP_JOIN &&
           (op->join.kind == SQL_JOINK_INNER || op->join.kind == SQL_JOINK_CROSS);
}

static bool is_semi(const sql_lop *op)
{
    return op->kind == SQL_LOP_JOIN &&
           (op->join.kind == SQL_JOINK_SEMI || op->join.kind == SQL_JOINK_ANTI);
}

static bool reorder(eng_card *c, sql_lop **slot);

static bool add_preds(region *g, const sql_bexpr *cond, int owner)
{
    uint32_t first = g->preds.count;
    if (!eng_conj_split(g->c->ctx, &g->preds, (sql_bexpr *)cond)) return false;
    for (uint32_t p = first; p < g->preds.count; p++) {
        if (p >= PRED_MAX) return false;
        g->owner[p] = owner;
    }
    return true;
}

static bool collect(region *g, sql_lop *op)
{
    if (is_inner(op)) {
        if (!add_preds(g, op->join.cond, -1)) return false;
        return collect(g, op->left) && collect(g, op->right);
    }
    if (is_semi(op)) {
        if (!collect(g, op->left) || g->n == REGION_MAX) return false;
        int i = (int)g->n;
        g->kind[i] = op->join.kind;
        g->semis |= 1ull << i;
        g->leaves[g->n++] = op->right;
        return add_preds(g, op->join.cond, i);
    }
    if (g->n == REGION_MAX) return false;
    g->kind[g->n] = SQL_JOINK_INNER;
    g->leaves[g->n++] = op;
    return true;
}

static bool is_col_eq(const sql_bexpr *e)
{
    return e->kind == SQL_BEXPR_OP && e->op.op == SQL_OP_EQ &&
           e->op.args[0]->kind == SQL_BEXPR_COLUMN && e->op.args[1]->kind == SQL_BEXPR_COLUMN;
}

/* Selectivity of a conjunct in the graph; equalities of two columns use
 * the distinct counts at their leaves. */
static double pred_sel(region *g, const sql_bexpr *e, uint64_t mask)
{
    if (e->kind == SQL_BEXPR_OP && e->op.op == SQL_OP_EQ &&
        e->op.args[0]->kind == SQL_BEXPR_COLUMN && e->op.args[1]->kind == SQL_BEXPR_COLUMN) {
        double nd[2];
        for (int s = 0; s < 2; s++) {
            sql_colid id = e->op.args[s]->column;
            double rows = 1;
            for (uint32_t i = 0; i < g->n; i++)
                if ((mask >> i & 1) && eng_idset_has(&g->outs[i], id)) rows = g->rows[i];
            nd[s] = eng_card_ndv(g->c, id, rows);
        }
        return 1.0 / (nd[0] > nd[1] ? nd[0] : nd[1]);
    }
    double rows = 1;
    for (uint32_t i = 0; i < g->n; i++)
        if ((mask >> i & 1) && g->rows[i] > rows) rows = g->rows[i];
    return eng_card_selectivity(g->c, e, rows);
}

static bool connected(const region *g, uint64_t a, uint64_t b)
{
    for (uint32_t p = 0; p < g->preds.count; p++) {
        uint64_t m = g->masks[p];
        if ((m & a) && (m & b) && (m & ~(a | b)) == 0) return true;
    }
    /* A semi join without a condition (uncorrelated EXISTS) fits anywhere. */
    for (int side = 0; side < 2; side++) {
        uint64_t x = side ? b : a;
        if ((x & (x - 1)) == 0 && (x & g->semis) && g->need[__builtin_ctzll(x)] == x) return true;
    }
    return false;
}

/* The selectivity that class k adds to subset s beyond its written
 * equalities inside s: the leaves of s that those equalities leave in
 * separate groups are joined on the class as well, each group with the
 * distinct count of its most selective member, dividing by all but the
 * smallest (so a written chain keeps its estimate, and a pair linked only
 * through the class gets 1/max(ndv), as a written equality would). */
static double class_sel(const region *g, uint32_t k, uint64_t s)
{
    const eqclass *q = &g->classes[k];
    uint64_t in = q->leaves & s;
    if ((in & (in - 1)) == 0) return 1;
    uint8_t up[REGION_MAX];
    for (uint32_t i = 0; i < g->n; i++)
        up[i] = (uint8_t)i;
    for (uint32_t p = 0; p < g->norig; p++) {
        uint64_t m = g->masks[p];
        if (g->cls[p] != (int)k || (m & ~s) != 0) continue;
        uint32_t a = (uint32_t)__builtin_ctzll(m), b = 63 - (uint32_t)__builtin_clzll(m);
        while (up[a] != a)
            a = up[a];
        while (up[b] != b)
            b = up[b];
        up[a] = (uint8_t)b;
    }
    double ndv[REGION_MAX];
    uint32_t ngroups = 0;
    uint8_t group_of[REGION_MAX];
    for (uint32_t i = 0; i < g->n; i++) {
        if (!(in >> i & 1)) continue;
        uint32_t r = i;
        while (up[r] != r)
            r = up[r];
        if (r == i) {
            group_of[i] = (uint8_t)ngroups;
            ndv[ngroups++] = INFINITY;
        }
    }
    if (ngroups < 2) return 1;
    for (uint32_t i = 0; i < g->n; i++) {
        if (!(in >> i & 1)) continue;
        uint32_t r = i;
        while (up[r] != r)
            r = up[r];
        uint32_t grp = group_of[r];
        if (q->ndv[i] < ndv[grp]) ndv[grp] = q->ndv[i];
    }
    double smallest = ndv[0], sel = 1;
    for (uint32_t j = 0; j < ngroups; j++) {
        double d = ndv[j] < 1 ? 1 : ndv[j];
        sel /= d;
        if (ndv[j] < smallest) smallest = ndv[j];
    }
    return sel * (smallest < 1 ? 1 : smallest);
}

static double card_of(const region *g, uint64_t s)
{
    double r = 1;
    for (uint32_t i = 0; i < g->n; i++)
        if (s >> i & 1) r *= (g->semis >> i & 1) ? g->factor[i] : g->rows[i];
    for (uint32_t p = 0; p < g->preds.count; p++) {
        uint64_t m = g->masks[p];
        if (g->owner[p] < 0 && m && (m & ~s) == 0 && (m & (m - 1))) r *= g->sels[p];
    }
    for (uint32_t k = 0; k < g->nclasses; k++)
        if (!g->classes[k].mixed) r *= class_sel(g, k, s);
    return r < 1 ? 1 : r;
}

/* May a and b be joined? A semi/anti leaf joins only on its own, with a
 * side holding every leaf its condition reads. */
static bool split_ok(const region *g, uint64_t a, uint64_t b)
{
    for (int side = 0; side < 2; side++) {
        uint64_t x = side ? b : a, y = side ? a : b;
        if ((x & (x - 1)) == 0 && (x & g->semis)) {
            uint32_t i = (uint32_t)__builtin_ctzll(x);
            if ((g->need[i] & ~x & ~y) != 0) return false;
            if ((y & g->semis) && (y & (y - 1)) == 0) return false;
            return true;
        }
    }
    return true;
}

/* The join tree for subset s given the chosen split of every subset. */
typedef struct dp_entry {
    double cost, card;
    uint64_t left; /* 0: a leaf or not reached */
    bool done;
} dp_entry;

static sql_lop *build(region *g, uint64_t s, uint64_t (*split)(void *, uint64_t), void *arg)
{
    sql_plan_ctx *ctx = g->c->ctx;
    if ((s & (s - 1)) == 0) {
        uint32_t i = (uint32_t)__builtin_ctzll(s);
        return g->leaves[i];
    }
    uint64_t a = split(arg, s), b = s & ~a;
    /* A semi/anti leaf is always the right input of its own join. */
    int semi = -1;
    if ((a & (a - 1)) == 0 && (a & g->semis)) {
        uint64_t t = a;
        a = b;
        b = t;
    }
    if ((b & (b - 1)) == 0 && (b & g->semis)) semi = __builtin_ctzll(b);
    sql_lop *l = build(g, a, split, arg), *r = build(g, b, split, arg);
    if (!l || !r) return NULL;
    sql_bexpr *cond = NULL;
    if (semi >= 0) {
        for (uint32_t p = 0; p < g->preds.count; p++) {
            if (g->owner[p] != semi) continue;
            cond = eng_expr_and(ctx, cond, g->preds.items[p]);
            if (!cond) return NULL;
        }
        return eng_lop_join(ctx, g->kind[semi], l, r, cond);
    }
    if (card_of(g, a) < card_of(g, b)) {
        sql_lop *t = l;
        l = r;
        r = t;
    }
    uint64_t classes_used = 0;
    for (uint32_t p = 0; p < g->preds.count; p++) {
        uint64_t m = g->masks[p];
        if (g->owner[p] < 0 && (m & ~s) == 0 && (m & a) && (m & b)) {
            int k = g->cls[p];
            if (k >= 0) {
                /* One equality per class: each side's members are equal. */
                if (classes_used >> k & 1) continue;
                classes_used |= 1ull << k;
            }
            cond = eng_expr_and(ctx, cond, g->preds.items[p]);
            if (!cond) return NULL;
        }
    }
    return eng_lop_join(ctx, cond ? SQL_JOINK_INNER : SQL_JOINK_CROSS, l, r, cond);
}

static uint64_t dp_split(void *arg, uint64_t s)
{
    return ((dp_entry *)arg)[s].left;
}

static sql_lop *order_dp(region *g)
{
    uint64_t full = (g->n == 64) ? ~0ull : ((1ull << g->n) - 1);
    dp_entry *t = sql_arena_alloc(g->c->ctx->arena, (full + 1) * sizeof(dp_entry));
    if (!t) return NULL;
    for (int pass = 0; pass < 2 && !t[full].done; pass++) {
        bool allow_cross = pass == 1;
        for (uint64_t s = 1; s <= full; s++) {
            if ((s & (s - 1)) == 0) {
                t[s].done = true;
                t[s].card = card_of(g, s);
                continue;
            }
            if (t[s].done) continue;
            double card = card_of(g, s);
            uint64_t low = s & (~s + 1);
            for (uint64_t a = (s - 1) & s; a; a = (a - 1) & s) {
                if (!(a & low)) continue;
                uint64_t b = s & ~a;
                if (!t[a].done || !t[b].done || !split_ok(g, a, b)) continue;
                if (!allow_cross && !connected(g, a, b)) continue;
                double cost = card + t[a].cost + t[b].cost;
                if (!t[s].done || cost < t[s].cost) {
                    t[s].done = true;
                    t[s].cost = cost;
                    t[s].card = card;
                    t[s].left = a;
                }
            }
        }
    }
    if (!t[full].done) return NULL;
    return build(g, full, dp_split, t);
}

/* Greedy operator ordering: trees[] are the partial results. */
typedef struct goo_state {
    uint64_t masks[REGION_MAX * 2];
    uint64_t lefts[REGION_MAX * 2];
    uint32_t nm;
} goo_state;

static uint64_t goo_split(void *arg, uint64_t s)
{
    goo_state *st = arg;
    for (uint32_t i = 0; i < st->nm; i++)
        if (st->masks[i] == s) return st->lefts[i];
    return s & (~s + 1);
}

static sql_lop *order_goo(region *g)
{
    goo_state st = {0};
    uint64_t trees[REGION_MAX];
    uint32_t nt = g->n;
    for (uint32_t i = 0; i < nt; i++)
        trees[i] = 1ull << i;
    while (nt > 1) {
        int bi = -1, bj = -1;
        double best = 0;
        for (int pass = 0; pass < 2 && bi < 0; pass++) {
            for (uint32_t i = 0; i < nt; i++) {
                for (uint32_t j = i + 1; j < nt; j++) {
                    if (!split_ok(g, trees[i], trees[j])) continue;
                    if (pass == 0 && !connected(g, trees[i], trees[j])) continue;
                    double card = card_of(g, trees[i] | trees[j]);
                    if (bi < 0 || card < best) {
                        best = card;
                        bi = (int)i;
                        bj = (int)j;
                    }
                }
            }
        }
        if (bi < 0) return NULL;
        uint64_t m = trees[bi] | trees[bj];
        st.masks[st.nm] = m;
        st.lefts[st.nm++] = trees[bi];
        trees[bi] = m;
        trees[bj] = trees[--nt];
    }
    return build(g, trees[0], goo_split, &st);
}

/* The share of left rows a semi (or anti) leaf keeps: for the first key
 * ndv(right)/ndv(left), softened by the other conjuncts (as in the
 * cardinality estimator). */
static void semi_factor(region *g, uint32_t i)
{
    double key = 1, other = 1;
    bool keyed = false;
    for (uint32_t p = 0; p < g->preds.count; p++) {
        if (g->owner[p] != (int)i) continue;
        const sql_bexpr *e = g->preds.items[p];
        if (e->kind == SQL_BEXPR_OP && e->op.op == SQL_OP_EQ &&
            e->op.args[0]->kind == SQL_BEXPR_COLUMN && e->op.args[1]->kind == SQL_BEXPR_COLUMN) {
            sql_colid a = e->op.args[0]->column, b = e->op.args[1]->column;
            if (eng_idset_has(&g->outs[i], a)) {
                sql_colid t = a;
                a = b;
                b = t;
            }
            if (eng_idset_has(&g->outs[i], b) && !eng_idset_has(&g->outs[i], a)) {
                double lrows = 1;
                for (uint32_t j = 0; j < g->n; j++)
                    if (j != i && eng_idset_has(&g->outs[j], a)) lrows = g->rows[j];
                double f = eng_card_ndv(g->c, b, g->rows[i]) / eng_card_ndv(g->c, a, lrows);
                if (f > 1) f = 1;
                if (!keyed || f < key) key = f;
                keyed = true;
                continue;
            }
        }
        other *= eng_card_selectivity(g->c, e, g->rows[i]);
    }
    double match = key * (other < 1 ? sqrt(other) : 1);
    g->factor[i] = g->kind[i] == SQL_JOINK_SEMI ? match : (1 - match < 0.05 ? 0.05 : 1 - match);
}

/* Semi-join reduction of aggregates (sideways information passing). A
 * GROUP BY leaf joined on key = f with a much smaller leaf P keeps only
 * groups whose key P has, so its input may be semi-joined with a copy of P
 * first: Γ_x(R ⋉_{x=f} P) ⋈ P = Γ_x(R) ⋈ P, since the semi join removes
 * whole groups only. Unnested correlated aggregates (TPC-H q02, q17) then
 * aggregate the few rows that matter instead of the whole table. The copy
 * becomes part of the aggregate input's own join region, so its place there
 * is chosen by the same search. */
#define REDUCE_RATIO 4.0

static bool group_id(const sql_lop *leaf, const sql_lop *agg, sql_colid id, uint32_t *g)
{
    bool visible = false;
    for (uint32_t i = 0; i < leaf->nout && !visible; i++)
        visible = leaf->out[i] == id;
    for (uint32_t i = 0; visible && i < agg->aggregate.ngroups; i++) {
        if (agg->aggregate.groups[i].id == id) {
            *g = i;
            return true;
        }
    }
    return false;
}

static bool reduce_aggregates(region *g)
{
    sql_plan_ctx *ctx = g->c->ctx;
    for (uint32_t i = 0; i < g->n; i++) {
        if (g->semis >> i & 1) continue;
        sql_lop *agg = g->leaves[i];
        if (agg->kind == SQL_LOP_PROJECT) agg = agg->left;
        if (agg->kind != SQL_LOP_AGGREGATE || agg->aggregate.ngroups == 0) continue;
        double groups = eng_card_estimate(g->c, agg);
        for (uint32_t j = 0; j < g->n; j++) {
            if (j == i || (g->semis >> j & 1)) continue;
            eng_conj keys = {0}, fs = {0};
            for (uint32_t p = 0; p < g->preds.count; p++) {
                const sql_bexpr *e = g->preds.items[p];
                if (g->owner[p] >= 0 || !is_col_eq(e)) continue;
                for (int side = 0; side < 2; side++) {
                    sql_colid x = e->op.args[side]->column, f = e->op.args[1 - side]->column;
                    uint32_t k;
                    if (!group_id(g->leaves[i], agg, x, &k) || !eng_idset_has(&g->outs[j], f))
                        continue;
                    if (!eng_conj_push(ctx, &keys, agg->aggregate.groups[k].expr) ||
                        !eng_conj_push(ctx, &fs, e->op.args[1 - side]))
                        return false;
                    break;
                }
            }
            if (!keys.count) continue;
            /* P with the semi/anti joins that hang on it alone (q20:
             * partsupp ⋉ part). */
            sql_lop *P = g->leaves[j];
            for (uint32_t k = 0; k < g->n; k++) {
                if (!(g->semis >> k & 1) || g->need[k] != ((1ull << j) | (1ull << k))) continue;
                sql_bexpr *cond = NULL;
                for (uint32_t p = 0; p < g->preds.count; p++)
                    if (g->owner[p] == (int)k &&
                        !(cond = eng_expr_and(ctx, cond, g->preds.items[p])))
                        return false;
                P = eng_lop_join(ctx, g->kind[k], P, g->leaves[k], cond);
                if (!P) return false;
            }
            if (eng_card_estimate(g->c, P) * REDUCE_RATIO >= groups) continue;
            uint32_t nmap = ctx->ncols + 1;
            sql_bexpr **map = sql_arena_alloc(ctx->arena, nmap * sizeof(*map));
            if (!map) return false;
            sql_lop *copy = eng_lop_copy_fresh(ctx, P, map, nmap);
            if (!copy) {
                if (sql_arena_failed(ctx->arena)) return false;
                continue;
            }
            if (!eng_card_add_tree(g->c, copy)) return false;
            sql_bexpr *cond = NULL;
            for (uint32_t k = 0; k < keys.count; k++) {
                sql_bexpr *l = sql_bexpr_copy(ctx, keys.items[k]);
                sql_bexpr *r = fs.items[k]->column < nmap && map[fs.items[k]->column]
                                   ? sql_bexpr_copy(ctx, map[fs.items[k]->column])
                                   : NULL;
                cond = eng_expr_and(
                    ctx, cond,
                    sql_bexpr_op(ctx, SQL_OP_EQ, sto_type_make(STO_TYPE_BOOLEAN), l, r, 0));
                if (!cond) return false;
            }
            sql_lop *semi = eng_lop_join(ctx, SQL_JOINK_SEMI, agg->left, copy, cond);
            if (!semi) return false;
            agg->left = semi;
            break;
        }
    }
    return true;
}

static sql_colid class_find(sql_colid *parent, sql_colid x)
{
    while (parent[x] != x)
        x = parent[x] = parent[parent[x]];
    return x;
}

/* An equality of two columns of one type from two leaves: a class edge. */
static bool class_edge(const region *g, uint32_t p)
{
    const sql_bexpr *e = g->preds.items[p];
    uint64_t m = g->masks[p], rest = m & (m - 1);
    if (g->owner[p] >= 0 || !rest || (rest & (rest - 1)) || !is_col_eq(e)) return false;
    sto_type a = e->op.args[0]->type, b = e->op.args[1]->type;
    return a.id == b.id && a.scale == b.scale;
}

static int leaf_of(const region *g, uint64_t m, sql_colid id)
{
    for (uint32_t i = 0; i < g->n; i++)
        if ((m >> i & 1) && eng_idset_has(&g->outs[i], id)) return (int)i;
    return -1;
}

/* Finds the equivalence classes of the written equalities and adds the
 * equalities they imply between leaves that no written one links. */
static bool add_implied(region *g)
{
    sql_plan_ctx *ctx = g->c->ctx;
    g->norig = g->preds.count;
    g->nclasses = 0;
    for (uint32_t p = 0; p < g->preds.count; p++)
        g->cls[p] = -1;
    uint32_t n = ctx->ncols + 1;
    sql_colid *parent = NULL;
    for (uint32_t p = 0; p < g->norig; p++) {
        if (!class_edge(g, p)) continue;
        if (!parent) {
            parent = sql_arena_alloc(ctx->arena, n * sizeof(sql_colid));
            g->classes = sql_arena_alloc(ctx->arena, CLASS_MAX * sizeof(eqclass));
            if (!parent || !g->classes) return false;
            for (uint32_t k = 0; k < n; k++)
                parent[k] = k;
        }
        const sql_bexpr *e = g->preds.items[p];
        sql_colid ra = class_find(parent, e->op.args[0]->column);
        sql_colid rb = class_find(parent, e->op.args[1]->column);
        if (ra != rb) parent[ra] = rb;
    }
    if (!parent) return true;
    for (uint32_t p = 0; p < g->norig; p++) {
        if (!class_edge(g, p)) continue;
        const sql_bexpr *e = g->preds.items[p];
        sql_colid root = class_find(parent, e->op.args[0]->column);
        uint32_t k = 0;
        while (k < g->nclasses && g->classes[k].root != root)
            k++;
        if (k == g->nclasses) {
            if (k == CLASS_MAX) continue;
            memset(&g->classes[k], 0, sizeof(eqclass));
            g->classes[k].root = root;
            g->nclasses++;
        }
        eqclass *q = &g->classes[k];
        for (int side = 0; side < 2; side++) {
            sql_bexpr *col = e->op.args[side];
            int i = leaf_of(g, g->masks[p], col->column);
            if (i < 0) {
                q->mixed = true;
                continue;
            }
            if (q->leaves >> i & 1) {
                if (q->col[i]->column != col->column) q->mixed = true;
                continue;
            }
            q->leaves |= 1ull << i;
            q->col[i] = col;
            q->ndv[i] = eng_card_ndv(g->c, col->column, g->rows[i]);
        }
        g->cls[p] = (int)k;
    }
    for (uint32_t p = 0; p < g->norig; p++)
        if (g->cls[p] >= 0 && g->classes[g->cls[p]].mixed) g->cls[p] = -1;
    for (uint32_t k = 0; k < g->nclasses; k++) {
        eqclass *q = &g->classes[k];
        if (q->mixed) continue;
        for (uint32_t i = 0; i < g->n; i++) {
            for (uint32_t j = i + 1; j < g->n && (q->leaves >> i & 1); j++) {
                if (!(q->leaves >> j & 1)) continue;
                uint64_t m = 1ull << i | 1ull << j;
                bool linked = false;
                for (uint32_t p = 0; p < g->norig && !linked; p++)
                    linked = g->cls[p] == (int)k && g->masks[p] == m;
                if (linked || g->preds.count >= PRED_MAX) continue;
                sql_bexpr *a = sql_bexpr_copy(ctx, q->col[i]), *b = sql_bexpr_copy(ctx, q->col[j]);
                sql_bexpr *eq =
                    a && b ? sql_bexpr_op(ctx, SQL_OP_EQ, sto_type_make(STO_TYPE_BOOLEAN), a, b, 0)
                           : NULL;
                if (!eq) return false;
                eng_expr_refresh_nullable(ctx, eq);
                uint32_t p = g->preds.count;
                if (!eng_conj_push(ctx, &g->preds, eq)) return false;
                g->owner[p] = -1;
                g->cls[p] = (int)k;
                g->masks[p] = m;
                g->sels[p] = 1;
            }
        }
    }
    return true;
}

static bool order_region(eng_card *c, sql_lop **slot)
{
    sql_plan_ctx *ctx = c->ctx;
    region *g = sql_arena_alloc(ctx->arena, sizeof(region));
    if (!g) return false;
    g->c = c;
    g->owner = sql_arena_alloc(ctx->arena, PRED_MAX * sizeof(int));
    if (!g->owner) return false;
    if (!collect(g, *slot)) {
        if (sql_arena_failed(ctx->arena)) return false;
        /* Too many leaves for one region: leave the order as written. */
        sql_lop *op = *slot;
        return reorder(c, &op->left) && reorder(c, &op->right) && eng_lop_recompute_out(ctx, op);
    }
    for (uint32_t i = 0; i < g->n; i++) {
        eng_idset_init(&g->outs[i]);
        if (!eng_lop_produced(ctx, g->leaves[i], &g->outs[i])) return false;
        g->need[i] = 1ull << i;
    }
    for (uint32_t p = 0; p < g->preds.count; p++) {
        if (g->owner[p] < 0) continue;
        eng_idset r;
        eng_idset_init(&r);
        if (!eng_expr_refs(ctx, g->preds.items[p], &r)) return false;
        for (uint32_t i = 0; i < g->n; i++)
            if (eng_idset_intersects(&r, &g->outs[i])) g->need[g->owner[p]] |= 1ull << i;
    }
    if (!reduce_aggregates(g)) return false;
    for (uint32_t i = 0; i < g->n; i++) {
        if (!reorder(c, &g->leaves[i])) return false;
        g->rows[i] = eng_card_estimate(c, g->leaves[i]);
    }
    g->masks = sql_arena_alloc(ctx->arena, PRED_MAX * sizeof(uint64_t));
    g->sels = sql_arena_alloc(ctx->arena, PRED_MAX * sizeof(double));
    g->cls = sql_arena_alloc(ctx->arena, PRED_MAX * sizeof(int));
    if (!g->masks || !g->sels || !g->cls) return false;
    eng_conj leaf_preds[REGION_MAX];
    memset(leaf_preds, 0, sizeof(leaf_preds));
    for (uint32_t p = 0; p < g->preds.count; p++) {
        eng_idset r;
        eng_idset_init(&r);
        if (!eng_expr_refs(ctx, g->preds.items[p], &r)) return false;
        uint64_t m = 0;
        for (uint32_t i = 0; i < g->n; i++)
            if (eng_idset_intersects(&r, &g->outs[i])) m |= 1ull << i;
        if (g->owner[p] >= 0) {
            /* A semi/anti condition stays with its join. */
            g->need[g->owner[p]] |= m;
            g->masks[p] = m | 1ull << g->owner[p];
            g->sels[p] = 1;
            continue;
        }
        /* A conjunct over one leaf (push-down was off) filters that leaf; a
         * constant one goes to the leftmost leaf. */
        if ((m & (m - 1)) == 0) {
            uint32_t i = m ? (uint32_t)__builtin_ctzll(m) : 0;
            if (!eng_conj_push(ctx, &leaf_preds[i], g->preds.items[p])) return false;
            m = 0;
        }
        g->masks[p] = m;
        g->sels[p] = m ? pred_sel(g, g->preds.items[p], m) : 1;
    }
    for (uint32_t i = 0; i < g->n; i++) {
        if (!leaf_preds[i].count) continue;
        bool oom = false;
        sql_bexpr *pred = eng_conj_and(ctx, &leaf_preds[i], &oom);
        g->leaves[i] = oom ? NULL : eng_lop_filter(ctx, g->leaves[i], pred);
        if (!g->leaves[i]) return false;
        g->rows[i] = eng_card_estimate(c, g->leaves[i]);
    }
    /* Equalities between the same two leaves form a composite key: as in
     * the estimator, together they select at least 1/max(rows). */
    for (uint32_t p = 0; p < g->preds.count; p++) {
        uint64_t m = g->masks[p], rest = m & (m - 1);
        if (g->owner[p] >= 0 || !rest || (rest & (rest - 1)) || !is_col_eq(g->preds.items[p]))
            continue;
        double prod = g->sels[p];
        for (uint32_t q = p + 1; q < g->preds.count; q++) {
            if (g->owner[q] >= 0 || g->masks[q] != m || !is_col_eq(g->preds.items[q])) continue;
            prod *= g->sels[q];
            g->sels[q] = 1;
        }
        uint32_t a = (uint32_t)__builtin_ctzll(m), b = 63 - (uint32_t)__builtin_clzll(m);
        double big = g->rows[a] > g->rows[b] ? g->rows[a] : g->rows[b];
        g->sels[p] = prod < 1.0 / big ? 1.0 / big : prod;
    }
    if (!add_implied(g)) return false;
    for (uint32_t i = 0; i < g->n; i++)
        if (g->semis >> i & 1) semi_factor(g, i);
    sql_lop *t = g->n <= DP_MAX_LEAVES ? order_dp(g) : order_goo(g);
    if (!t) return !sql_arena_failed(ctx->arena);
    *slot = t;
    return true;
}

static bool reorder(eng_card *c, sql_lop **slot)
{
    sql_lop *op = *slot;
    if (is_inner(op) || is_semi(op)) return order_region(c, slot);
    if (op->left && !reorder(c, &op->left)) return false;
    if (op->right && !reorder(c, &op->right)) return false;
    return eng_lop_recompute_out(c->ctx, op);
}

bool eng_opt_joinorder(eng_card *c, sql_lop **root)
{
    return reorder(c, root);
}

/* ------------------------------------------------ physical choice -- */

/* The first equality between the two sides: its column on each side. */
static bool equi_key(eng_card *c, const sql_lop *op, sql_colid *lk, sql_colid *rk)
{
    eng_idset ls, rs;
    eng_idset_init(&ls);
    eng_idset_init(&rs);
    eng_conj l = {0};
    if (!eng_idset_of_out(c->ctx, &ls, op->left) || !eng_idset_of_out(c->ctx, &rs, op->right) ||
        !eng_conj_split(c->ctx, &l, op->join.cond))
        return false;
    for (uint32_t i = 0; i < l.count; i++) {
        const sql_bexpr *e = l.items[i];
        if (e->kind != SQL_BEXPR_OP || e->op.op != SQL_OP_EQ) continue;
        for (int s = 0; s < 2; s++) {
            eng_idset a, b;
            eng_idset_init(&a);
            eng_idset_init(&b);
            if (!eng_expr_refs(c->ctx, e->op.args[s], &a) ||
                !eng_expr_refs(c->ctx, e->op.args[1 - s], &b))
                return false;
            if (!eng_idset_empty(&a) && !eng_idset_empty(&b) && eng_idset_subset(&a, &ls) &&
                eng_idset_subset(&b, &rs)) {
                *lk = e->op.args[s]->kind == SQL_BEXPR_COLUMN ? e->op.args[s]->column : 0;
                *rk = e->op.args[1 - s]->kind == SQL_BEXPR_COLUMN ? e->op.args[1 - s]->column : 0;
                return true;
            }
        }
    }
    return false;
}

static bool sorted_on(const sql_lop *op, sql_colid key)
{
    return key && op->kind == SQL_LOP_SORT && op->sort.count > 0 &&
           op->sort.keys[0].expr->kind == SQL_BEXPR_COLUMN && op->sort.keys[0].expr->column == key;
}

void eng_opt_choose_physical(eng_card *c, sql_lop *op, const eng_opt_settings *s)
{
    if (!op) return;
    eng_opt_choose_physical(c, op->left, s);
    eng_opt_choose_physical(c, op->right, s);
    if (op->kind != SQL_LOP_JOIN) return;
    sql_join_kind k = op->join.kind;
    double l = op->left->est_rows, r = op->right->est_rows;
    bool right_builds = k == SQL_JOINK_MARK || k == SQL_JOINK_SINGLE;
    op->phys.build_left = !right_builds && l < r;
    double build = op->phys.build_left ? l : r;
    sql_colid lk = 0, rk = 0;
    if (!equi_key(c, op, &lk, &rk)) {
        op->phys.algorithm = ENG_JOIN_ALGO_NESTED_LOOP;
        return;
    }
    if (s->join_algorithm != ENG_JOIN_ALGO_AUTO) {
        op->phys.algorithm = (int)s->join_algorithm;
        return;
    }
    int threads = s->threads > 0 ? s->threads : 1;
    if (sorted_on(op->left, lk) && sorted_on(op->right, rk))
        op->phys.algorithm = ENG_JOIN_ALGO_SORTMERGE;
    else if (build <= ENG_OPT_HASH_BUILD_ROWS_PER_THREAD * threads)
        op->phys.algorithm = ENG_JOIN_ALGO_HASH;
    else
        op->phys.algorithm = ENG_JOIN_ALGO_RADIX;
}
