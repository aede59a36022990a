/*
 * rt_agg_having.c — the HAVING conjuncts an aggregation tests on each
 * group's output row before it keeps the row (eng_agg_having, rt_agg.h).
 * The planner moves only comparisons of one output slot with a constant
 * here (engine/physical_having.c); they compare as the generated code
 * compares the same values, so the rows kept are the rows the FILTER would
 * have let through.
 */
#include <math.h>
#include <string.h>

#include "engine/rt_agg.h"

/* <0, 0, >0 of the slot's value against the conjunct's constant. Doubles
 * order as PostgreSQL's float8 does (and codegen/expr.c): NaN equals NaN
 * and is above every number. */
static int slot_cmp(const eng_agg_having *h, const uint8_t *p)
{
    if (h->type.id == STO_TYPE_DOUBLE) {
        double x;
        memcpy(&x, p, 8);
        double y = h->value.d;
        if (isnan(x) || isnan(y)) return isnan(x) - isnan(y);
        return x < y ? -1 : x > y;
    }
    int64_t x = cg_row_slot_int(h->type.id, p), y = h->value.i;
    return x < y ? -1 : x > y;
}

bool eng_agg_having_pass(const eng_agg_layout *l, const uint8_t *row)
{
    uint32_t ncols = l->nkeys + l->naggs;
    for (uint32_t i = 0; i < l->nhaving; i++) {
        const eng_agg_having *h = &l->having[i];
        if (row[cg_row_null_offset(ncols, h->slot)]) return false; /* NULL: not true */
        if (!sql_op_compare_holds(h->op, slot_cmp(h, row + h->slot * CG_ROW_SLOT))) return false;
    }
    return true;
}
