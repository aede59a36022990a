/*
 * opt_cardinality.c — how many rows each operator will produce.
 *
 * Base tables bring their row counts (get.rows) and per-column statistics
 * (get.stats: HyperLogLog distinct counts, NULL counts, min/max). Column
 * statistics follow a column id through the plan: a projection or a group
 * key that passes a column on keeps its id and so its statistics. Distinct
 * counts are capped by the rows flowing at the point of use.
 *
 * Selectivities (the classic System R style, independence assumed):
 *   col = const        1/ndv                  (0.1 without statistics)
 *   col <> const       1 - 1/ndv
 *   col < const etc.   share of [min, max] below/above the constant; two
 *                      bounds on one column are combined into one range
 *                      (1/3 without min/max)
 *   col IN (n values)  n/ndv;  LIKE 'abc' like =, 'abc%' 0.05, else 0.1
 *   IS NULL            NULL fraction (0.05 without statistics)
 *   a.x = b.y          1/max(ndv(x), ndv(y))  (an equi join: |R||S|/max ndv)
 *   AND, OR, NOT       s1·s2, s1+s2−s1·s2, 1−s
 *   anything else      0.25
 * Several equalities between the same two inputs (a composite key) select
 * at least 1/max(|L|, |R|): the distinct key combinations on each side are
 * bounded by its rows.
 * Joins: INNER/CROSS |L||R|·sel; LEFT at least |L|; SEMI |L|·ndv_R/D,
 * D the larger unfiltered distinct count of the two key columns (the
 * domain both sides' keys come from); ANTI the rest (at least 5% of |L|); MARK and
 * SINGLE |L|. GROUP BY: min(input, product of the keys' ndv), where
 * EXTRACT(field FROM a date column) has at most the years the column's
 * range spans, or the field's values (12 months, 7 days of the week, ...).
 */
#include <math.h>
#include <string.h>

#include "engine/opt_int.h"

#define SEL_DEFAULT    0.25
#define SEL_EQ_UNKNOWN 0.1
#define SEL_RANGE      (1.0 / 3.0)
#define SEL_MIN        1e-7

/* Statistics of EXTRACT(field FROM date column): at most the fields the
 * column's [min, max] spans (q9's o_year: 7 years, not one per order).
 * Other computed values stay unknown: a function of a column may have far
 * fewer distinct values than the column (substring(c_phone, 1, 2)), so
 * the column's count would be no estimate of them. */
static void derive(eng_card *c, const sql_bexpr *e, eng_colstat *out)
{
    if (e->kind != SQL_BEXPR_FUNC || e->func.args.count != 1) return;
    const sql_bexpr *a = e->func.args.items[0];
    if (a->kind != SQL_BEXPR_COLUMN || a->column >= c->nstats || c->stats[a->column].ndv <= 0)
        return;
    const eng_colstat *s = &c->stats[a->column];
    double fields;
    switch (e->func.id) {
    case SQL_FUNC_EXTRACT_YEAR:
    case SQL_FUNC_EXTRACT_ISOYEAR:
        if (!s->has_minmax) return;
        fields = floor((s->max - s->min) / 365.0) + 2;
        break;
    case SQL_FUNC_EXTRACT_QUARTER:
        fields = 4;
        break;
    case SQL_FUNC_EXTRACT_MONTH:
        fields = 12;
        break;
    case SQL_FUNC_EXTRACT_WEEK:
        fields = 53;
        break;
    case SQL_FUNC_EXTRACT_DOW:
    case SQL_FUNC_EXTRACT_ISODOW:
        fields = 7;
        break;
    case SQL_FUNC_EXTRACT_DAY:
        fields = 31;
        break;
    case SQL_FUNC_EXTRACT_DOY:
        fields = 366;
        break;
    default:
        return;
    }
    memset(out, 0, sizeof(*out));
    out->ndv = fields < s->ndv ? fields : s->ndv;
    out->null_frac = s->null_frac;
}

static void gather(eng_card *c, const sql_lop *op)
{
    if (!op) return;
    gather(c, op->left);
    gather(c, op->right);
    if (op->kind == SQL_LOP_GET && op->get.stats) {
        for (uint32_t i = 0; i < op->nout; i++) {
            sql_colid id = op->out[i];
            if (id >= c->nstats) continue;
            const sto_column_stats *s = &op->get.stats[op->get.columns[i]];
            eng_colstat *d = &c->stats[id];
            if (s->rows == 0) continue;
            d->ndv = (double)(s->distinct ? s->distinct : 1);
            d->null_frac = (double)s->null_count / (double)s->rows;
            d->has_minmax = s->has_minmax;
            sto_type t = sql_plan_col(c->ctx, id)->type;
            if (t.id == STO_TYPE_DOUBLE) {
                d->min = s->min.d;
                d->max = s->max.d;
            } else {
                d->min = (double)s->min.i;
                d->max = (double)s->max.i;
            }
        }
    }
    /* Renaming projections and group keys copy their source's statistics. */
    const sql_proj_item *items = NULL;
    uint32_t n = 0;
    if (op->kind == SQL_LOP_PROJECT) {
        items = op->project.items;
        n = op->project.count;
    } else if (op->kind == SQL_LOP_AGGREGATE) {
        items = op->aggregate.groups;
        n = op->aggregate.ngroups;
    }
    for (uint32_t i = 0; i < n; i++) {
        const sql_bexpr *e = items[i].expr;
        if (e->kind == SQL_BEXPR_COLUMN && e->column != items[i].id && items[i].id < c->nstats &&
            e->column < c->nstats)
            c->stats[items[i].id] = c->stats[e->column];
        else if (e->kind != SQL_BEXPR_COLUMN && items[i].id < c->nstats)
            derive(c, e, &c->stats[items[i].id]);
    }
}

bool eng_card_add_tree(eng_card *c, const sql_lop *op)
{
    uint32_t n = c->ctx->ncols + 1;
    if (n > c->nstats) {
        eng_colstat *s = sql_arena_alloc(c->ctx->arena, n * sizeof(eng_colstat));
        if (!s) return false;
        if (c->nstats) memcpy(s, c->stats, c->nstats * sizeof(eng_colstat));
        c->stats = s;
        c->nstats = n;
    }
    gather(c, op);
    return true;
}

bool eng_card_init(eng_card *c, sql_plan_ctx *ctx, sql_lop *root)
{
    c->ctx = ctx;
    c->nstats = ctx->ncols + 1;
    c->stats = sql_arena_alloc(ctx->arena, c->nstats * sizeof(eng_colstat));
    if (!c->stats) return false;
    gather(c, root);
    return true;
}

double eng_card_ndv(eng_card *c, sql_colid id, double rows)
{
    double n = id < c->nstats && c->stats[id].ndv > 0 ? c->stats[id].ndv : rows;
    if (n > rows) n = rows;
    return n < 1 ? 1 : n;
}

static const eng_colstat *stat_of(eng_card *c, const sql_bexpr *e)
{
    if (e->kind != SQL_BEXPR_COLUMN || e->column >= c->nstats) return NULL;
    const eng_colstat *s = &c->stats[e->column];
    return s->ndv > 0 ? s : NULL;
}

/* The constant's value in the column's statistics domain. */
static bool const_value(const sql_bexpr *k, double *v)
{
    if (k->kind != SQL_BEXPR_CONST || k->value.is_null) return false;
    switch (k->type.id) {
    case STO_TYPE_INTEGER:
    case STO_TYPE_BIGINT:
    case STO_TYPE_DECIMAL:
    case STO_TYPE_DATE:
        *v = (double)k->value.v.i64;
        return true;
    case STO_TYPE_DOUBLE:
        *v = k->value.v.f64;
        return true;
    default:
        return false;
    }
}

static double eq_sel(eng_card *c, const sql_bexpr *col, double rows)
{
    const eng_colstat *s = stat_of(c, col);
    if (!s) return SEL_EQ_UNKNOWN;
    return 1.0 / eng_card_ndv(c, col->column, rows > 0 ? rows : s->ndv);
}

static double clamp01(double x)
{
    return x < 0 ? 0 : x > 1 ? 1 : x;
}

/* A range conjunct on a column with min/max: the share of [min, max] at or
 * below (upper) or above (lower) the constant. False when not such. */
static bool range_bound(eng_card *c, const sql_bexpr *e, sql_colid *col, bool *upper, double *frac)
{
    if (e->kind != SQL_BEXPR_OP || !sql_op_is_comparison(e->op.op)) return false;
    sql_op op = e->op.op;
    if (op == SQL_OP_EQ || op == SQL_OP_NE) return false;
    const sql_bexpr *a = e->op.args[0], *b = e->op.args[1];
    if (a->kind != SQL_BEXPR_COLUMN) {
        const sql_bexpr *t = a;
        a = b;
        b = t;
        op = op == SQL_OP_LT   ? SQL_OP_GT
             : op == SQL_OP_LE ? SQL_OP_GE
             : op == SQL_OP_GT ? SQL_OP_LT
                               : SQL_OP_LE;
    }
    double v;
    const eng_colstat *s = stat_of(c, a);
    if (a->kind != SQL_BEXPR_COLUMN || !s || !s->has_minmax || !const_value(b, &v)) return false;
    if (a->type.id != b->type.id || a->type.scale != b->type.scale) return false;
    double span = s->max - s->min;
    double f = span > 0 ? (v - s->min) / span : (v >= s->min ? 1 : 0);
    *col = a->column;
    *upper = op == SQL_OP_LT || op == SQL_OP_LE;
    *frac = clamp01(f);
    return true;
}

static double like_sel(const sql_bexpr *pat)
{
    if (pat->kind != SQL_BEXPR_CONST || pat->value.is_null) return 0.1;
    const sto_str *s = &pat->value.v.str;
    const char *d = sto_str_data(s);
    if (s->len == 0) return 0.1;
    bool wild = memchr(d, '%', s->len) || memchr(d, '_', s->len);
    if (!wild) return SEL_EQ_UNKNOWN / 10;
    if (d[0] != '%' && d[0] != '_') return 0.05;
    return 0.1;
}

static double conj_sel(eng_card *c, const sql_bexpr *e, double rows);

static double sel(eng_card *c, const sql_bexpr *e, double rows)
{
    if (!e) return 1;
    switch (e->kind) {
    case SQL_BEXPR_CONST:
        if (e->value.is_null) return 0;
        return e->type.id == STO_TYPE_BOOLEAN ? (e->value.v.i64 ? 1 : 0) : 1;
    case SQL_BEXPR_COLUMN:
        return 0.5;
    case SQL_BEXPR_OP: {
        const sql_bexpr *a = e->op.args[0], *b = e->op.args[1];
        switch (e->op.op) {
        case SQL_OP_AND:
            return conj_sel(c, e, rows);
        case SQL_OP_OR: {
            double x = sel(c, a, rows), y = sel(c, b, rows);
            return x + y - x * y;
        }
        case SQL_OP_NOT:
            return 1 - sel(c, a, rows);
        case SQL_OP_EQ:
        case SQL_OP_NE: {
            double s;
            if (a->kind == SQL_BEXPR_COLUMN && b->kind == SQL_BEXPR_COLUMN) {
                double na = eng_card_ndv(c, a->column, rows), nb = eng_card_ndv(c, b->column, rows);
                s = 1.0 / (na > nb ? na : nb);
            } else if (a->kind == SQL_BEXPR_COLUMN && b->kind == SQL_BEXPR_CONST) {
                s = eq_sel(c, a, rows);
            } else if (b->kind == SQL_BEXPR_COLUMN && a->kind == SQL_BEXPR_CONST) {
                s = eq_sel(c, b, rows);
            } else {
                s = SEL_EQ_UNKNOWN;
            }
            return e->op.op == SQL_OP_EQ ? s : 1 - s;
        }
        case SQL_OP_LT:
        case SQL_OP_LE:
        case SQL_OP_GT:
        case SQL_OP_GE: {
            sql_colid col;
            bool upper;
            double f;
            if (range_bound(c, e, &col, &upper, &f)) {
                double s = upper ? f : 1 - f;
                return s < SEL_MIN ? SEL_MIN : s;
            }
            return SEL_RANGE;
        }
        default:
            return SEL_DEFAULT;
        }
    }
    case SQL_BEXPR_FUNC:
        switch (e->func.id) {
        case SQL_FUNC_LIKE:
        case SQL_FUNC_ILIKE:
            return like_sel(e->func.args.items[1]);
        case SQL_FUNC_NOT_LIKE:
        case SQL_FUNC_NOT_ILIKE:
            return 1 - like_sel(e->func.args.items[1]);
        default:
            return SEL_DEFAULT;
        }
    case SQL_BEXPR_IN_LIST: {
        double one = e->in_list.arg->kind == SQL_BEXPR_COLUMN ? eq_sel(c, e->in_list.arg, rows)
                                                              : SEL_EQ_UNKNOWN;
        double s = clamp01(one * e->in_list.list.count);
        return e->in_list.negated ? 1 - s : s;
    }
    case SQL_BEXPR_IS_NULL: {
        const eng_colstat *s = stat_of(c, e->is_null.arg);
        double f = s ? s->null_frac : (e->is_null.arg->nullable ? 0.05 : 0);
        return e->is_null.negated ? 1 - f : f;
    }
    default:
        return SEL_DEFAULT;
    }
}

/* A conjunction: the product of its parts, except that the lower and upper
 * bounds on one column make one range. */
static double conj_sel(eng_card *c, const sql_bexpr *e, double rows)
{
    eng_conj l = {0};
    if (!eng_conj_split(c->ctx, &l, (sql_bexpr *)e)) return SEL_DEFAULT;
    double s = 1;
    bool *used = sql_arena_alloc(c->ctx->arena, (l.count + 1) * sizeof(bool));
    if (!used) return SEL_DEFAULT;
    for (uint32_t i = 0; i < l.count; i++) {
        if (used[i]) continue;
        sql_colid col;
        bool upper;
        double f;
        if (!range_bound(c, l.items[i], &col, &upper, &f)) {
            s *= sel(c, l.items[i], rows);
            continue;
        }
        double lo = upper ? 0 : f, hi = upper ? f : 1;
        for (uint32_t k = i + 1; k < l.count; k++) {
            sql_colid col2;
            bool up2;
            double f2;
            if (used[k] || !range_bound(c, l.items[k], &col2, &up2, &f2) || col2 != col) continue;
            used[k] = true;
            if (up2 && f2 < hi) hi = f2;
            if (!up2 && f2 > lo) lo = f2;
        }
        double r = hi - lo;
        s *= r < SEL_MIN ? SEL_MIN : r;
    }
    return s;
}

double eng_card_selectivity(eng_card *c, const sql_bexpr *pred, double rows)
{
    double s = sel(c, pred, rows);
    return s < SEL_MIN ? SEL_MIN : s > 1 ? 1 : s;
}

static double group_ndv(eng_card *c, const sql_bexpr *e, double rows)
{
    if (e->kind == SQL_BEXPR_COLUMN) return eng_card_ndv(c, e->column, rows);
    eng_colstat d = {0};
    derive(c, e, &d);
    if (d.ndv > 0) return d.ndv < rows ? d.ndv : rows;
    eng_idset r;
    eng_idset_init(&r);
    if (!eng_expr_refs(c->ctx, e, &r)) return rows;
    double n = 1;
    for (uint32_t w = 0; w < r.nwords; w++)
        for (uint64_t b = r.w[w]; b; b &= b - 1)
            n *= eng_card_ndv(c, w * 64 + (uint32_t)__builtin_ctzll(b), rows);
    return n;
}

/* The key columns of a join condition: pairs (left id, right id) of
 * equalities between the sides; the rest's selectivity goes to *other. */
static double join_selectivity(eng_card *c, const sql_lop *op, double l, double r, double *key_frac,
                               double *other)
{
    eng_idset ls, rs;
    eng_idset_init(&ls);
    eng_idset_init(&rs);
    *key_frac = 1;
    *other = 1;
    if (!eng_idset_of_out(c->ctx, &ls, op->left) || !eng_idset_of_out(c->ctx, &rs, op->right))
        return 1;
    eng_conj l_conj = {0};
    if (!eng_conj_split(c->ctx, &l_conj, op->join.cond)) return 1;
    double s = 1;
    bool keys = false;
    for (uint32_t i = 0; i < l_conj.count; i++) {
        const sql_bexpr *e = l_conj.items[i];
        if (e->kind == SQL_BEXPR_OP && e->op.op == SQL_OP_EQ &&
            e->op.args[0]->kind == SQL_BEXPR_COLUMN && e->op.args[1]->kind == SQL_BEXPR_COLUMN) {
            sql_colid a = e->op.args[0]->column, b = e->op.args[1]->column;
            if (eng_idset_has(&rs, a) && eng_idset_has(&ls, b)) {
                sql_colid t = a;
                a = b;
                b = t;
            }
            if (eng_idset_has(&ls, a) && eng_idset_has(&rs, b)) {
                double na = eng_card_ndv(c, a, l), nb = eng_card_ndv(c, b, r);
                s /= na > nb ? na : nb;
                /* A left key finds a partner with the chance that it is one
                 * of the right side's nb keys out of the domain both draw
                 * from: the larger of the columns' unfiltered distinct
                 * counts. A filter on the left (q22's country codes) keeps
                 * keys of the whole domain, not only those on the right:
                 * nb / na would say every left key matches. */
                double dom = na;
                if (a < c->nstats && c->stats[a].ndv > dom) dom = c->stats[a].ndv;
                if (b < c->nstats && c->stats[b].ndv > dom) dom = c->stats[b].ndv;
                double f = nb / dom;
                if (!keys || f < *key_frac) *key_frac = f > 1 ? 1 : f;
                keys = true;
                continue;
            }
        }
        *other *= eng_card_selectivity(c, e, l > r ? l : r);
    }
    /* Composite keys: the distinct combinations on a side cannot exceed its
     * rows, so the keys together select at least 1/max(|L|, |R|). */
    double floor = 1.0 / (l > r ? l : r);
    if (keys && s < floor) s = floor;
    return s * *other;
}

static double estimate(eng_card *c, sql_lop *op)
{
    double rows = 1;
    switch (op->kind) {
    case SQL_LOP_GET:
        rows = op->get.rows ? (double)op->get.rows : 1;
        break;
    case SQL_LOP_FILTER: {
        double in = estimate(c, op->left);
        rows = in * eng_card_selectivity(c, op->filter.pred, in);
        break;
    }
    case SQL_LOP_PROJECT:
    case SQL_LOP_SORT:
        rows = estimate(c, op->left);
        break;
    case SQL_LOP_LIMIT:
        rows = estimate(c, op->left);
        if (op->limit.limit >= 0 && (double)op->limit.limit < rows) rows = (double)op->limit.limit;
        break;
    case SQL_LOP_DISTINCT: {
        double in = estimate(c, op->left), n = 1;
        for (uint32_t i = 0; i < op->nout && n < in; i++)
            n *= eng_card_ndv(c, op->out[i], in);
        rows = n < in ? n : in;
        break;
    }
    case SQL_LOP_AGGREGATE: {
        double in = estimate(c, op->left), n = 1;
        for (uint32_t i = 0; i < op->aggregate.ngroups && n < in; i++)
            n *= group_ndv(c, op->aggregate.groups[i].expr, in);
        rows = op->aggregate.ngroups ? (n < in ? n : in) : 1;
        break;
    }
    case SQL_LOP_JOIN: {
        double l = estimate(c, op->left), r = estimate(c, op->right);
        double key_frac, other;
        double inner = l * r * join_selectivity(c, op, l, r, &key_frac, &other);
        switch (op->join.kind) {
        case SQL_JOINK_INNER:
        case SQL_JOINK_CROSS:
            rows = inner;
            break;
        case SQL_JOINK_LEFT:
            rows = inner > l ? inner : l;
            break;
        case SQL_JOINK_RIGHT:
            rows = inner > r ? inner : r;
            break;
        case SQL_JOINK_FULL:
            rows = inner > l + r ? inner : l + r;
            break;
        case SQL_JOINK_SEMI:
        case SQL_JOINK_ANTI: {
            double match = key_frac * (other < 1 ? sqrt(other) : 1);
            double semi = l * match;
            rows = op->join.kind == SQL_JOINK_SEMI ? semi : l - semi;
            if (op->join.kind == SQL_JOINK_ANTI && rows < 0.05 * l) rows = 0.05 * l;
            break;
        }
        default:
            rows = l;
            break;
        }
        break;
    }
    case SQL_LOP_SETOP: {
        double l = estimate(c, op->left), r = estimate(c, op->right);
        rows = op->setop.op == SQL_SETOP_UNION       ? l + r
               : op->setop.op == SQL_SETOP_INTERSECT ? (l < r ? l : r)
                                                     : l;
        break;
    }
    case SQL_LOP_VALUES:
        rows = op->values.nrows;
        break;
    default:
        break;
    }
    if (rows < 1) rows = 1;
    op->est_rows = rows;
    return rows;
}

double eng_card_estimate(eng_card *c, sql_lop *op)
{
    return estimate(c, op);
}
