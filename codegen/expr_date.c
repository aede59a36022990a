/*
 * expr_date.c — DATE arithmetic and EXTRACT, inline.
 *
 * A DATE is an i32 count of days since 1970-01-01. EXTRACT and month
 * arithmetic need the civil (year, month, day) form, computed here with the
 * same arithmetic storage/types.c uses (a year starting on March 1st, so the
 * leap day comes last and month lengths repeat every five months; 400-year
 * eras of 146097 days), in a dozen integer instructions and no call.
 *
 * Adding months keeps the day of the month unless the target month is
 * shorter, in which case it is its last day (PostgreSQL: 2023-01-31 + 1 month
 * = 2023-02-28). Results outside the int32 day range raise 22003 ("date out
 * of range"); PostgreSQL's narrower date range is not enforced.
 */
#include "codegen/expr_int.h"

/* floor(a / b) for b > 0 (i64). */
static LLVMValueRef floor_div(cg_x *x, LLVMValueRef a, int64_t b)
{
    LLVMBuilderRef bl = x->f->b;
    LLVMValueRef bc = cg_const_i64(x->m, b);
    LLVMValueRef q = LLVMBuildSDiv(bl, a, bc, "");
    LLVMValueRef r = LLVMBuildSRem(bl, a, bc, "");
    LLVMValueRef adjust = LLVMBuildICmp(bl, LLVMIntSLT, r, cg_const_i64(x->m, 0), "");
    return LLVMBuildSub(bl, q, LLVMBuildZExt(bl, adjust, cg_i64(x->m), ""), "");
}

static LLVMValueRef c64(cg_x *x, int64_t v)
{
    return cg_const_i64(x->m, v);
}

void cg_x_civil_from_days(cg_x *x, LLVMValueRef days, LLVMValueRef *y, LLVMValueRef *m,
                          LLVMValueRef *d)
{
    LLVMBuilderRef b = x->f->b;
    LLVMValueRef z = LLVMBuildAdd(b, LLVMBuildSExt(b, days, cg_i64(x->m), ""), c64(x, 719468), "");
    LLVMValueRef era = floor_div(x, z, 146097);
    LLVMValueRef doe = LLVMBuildSub(b, z, LLVMBuildMul(b, era, c64(x, 146097), ""), "");
    /* yoe = (doe - doe/1460 + doe/36524 - doe/146096) / 365 */
    LLVMValueRef t = LLVMBuildSub(b, doe, LLVMBuildUDiv(b, doe, c64(x, 1460), ""), "");
    t = LLVMBuildAdd(b, t, LLVMBuildUDiv(b, doe, c64(x, 36524), ""), "");
    t = LLVMBuildSub(b, t, LLVMBuildUDiv(b, doe, c64(x, 146096), ""), "");
    LLVMValueRef yoe = LLVMBuildUDiv(b, t, c64(x, 365), "");
    /* doy = doe - (365 yoe + yoe/4 - yoe/100) */
    LLVMValueRef s = LLVMBuildMul(b, yoe, c64(x, 365), "");
    s = LLVMBuildAdd(b, s, LLVMBuildUDiv(b, yoe, c64(x, 4), ""), "");
    s = LLVMBuildSub(b, s, LLVMBuildUDiv(b, yoe, c64(x, 100), ""), "");
    LLVMValueRef doy = LLVMBuildSub(b, doe, s, "");
    LLVMValueRef mp = LLVMBuildUDiv(
        b, LLVMBuildAdd(b, LLVMBuildMul(b, doy, c64(x, 5), ""), c64(x, 2), ""), c64(x, 153), "");
    LLVMValueRef day = LLVMBuildAdd(
        b,
        LLVMBuildSub(b, doy,
                     LLVMBuildUDiv(b,
                                   LLVMBuildAdd(b, LLVMBuildMul(b, mp, c64(x, 153), ""),
                                                c64(x, 2), ""),
                                   c64(x, 5), ""),
                     ""),
        c64(x, 1), "");
    LLVMValueRef early = LLVMBuildICmp(b, LLVMIntULT, mp, c64(x, 10), ""); /* Mar..Dec */
    LLVMValueRef month =
        LLVMBuildSelect(b, early, LLVMBuildAdd(b, mp, c64(x, 3), ""),
                        LLVMBuildSub(b, mp, c64(x, 9), ""), "");
    LLVMValueRef year = LLVMBuildAdd(b, yoe, LLVMBuildMul(b, era, c64(x, 400), ""), "");
    year = LLVMBuildAdd(b, year, LLVMBuildZExt(b, LLVMBuildNot(b, early, ""), cg_i64(x->m), ""),
                        "");
    LLVMTypeRef i32 = cg_i32(x->m);
    *y = LLVMBuildTrunc(b, year, i32, "");
    *m = LLVMBuildTrunc(b, month, i32, "");
    *d = LLVMBuildTrunc(b, day, i32, "");
}

/* Day number (i64) of year/month/day given as i64, month 1..12. */
static LLVMValueRef days_from_civil(cg_x *x, LLVMValueRef y, LLVMValueRef m, LLVMValueRef d)
{
    LLVMBuilderRef b = x->f->b;
    LLVMValueRef early = LLVMBuildICmp(b, LLVMIntSLE, m, c64(x, 2), ""); /* Jan, Feb */
    y = LLVMBuildSub(b, y, LLVMBuildZExt(b, early, cg_i64(x->m), ""), "");
    LLVMValueRef era = floor_div(x, y, 400);
    LLVMValueRef yoe = LLVMBuildSub(b, y, LLVMBuildMul(b, era, c64(x, 400), ""), "");
    LLVMValueRef mp = LLVMBuildSelect(b, early, LLVMBuildAdd(b, m, c64(x, 9), ""),
                                      LLVMBuildSub(b, m, c64(x, 3), ""), "");
    LLVMValueRef doy = LLVMBuildAdd(
        b,
        LLVMBuildUDiv(b, LLVMBuildAdd(b, LLVMBuildMul(b, mp, c64(x, 153), ""), c64(x, 2), ""),
                      c64(x, 5), ""),
        LLVMBuildSub(b, d, c64(x, 1), ""), "");
    LLVMValueRef doe = LLVMBuildMul(b, yoe, c64(x, 365), "");
    doe = LLVMBuildAdd(b, doe, LLVMBuildUDiv(b, yoe, c64(x, 4), ""), "");
    doe = LLVMBuildSub(b, doe, LLVMBuildUDiv(b, yoe, c64(x, 100), ""), "");
    doe = LLVMBuildAdd(b, doe, doy, "");
    LLVMValueRef r = LLVMBuildMul(b, era, c64(x, 146097), "");
    r = LLVMBuildAdd(b, r, doe, "");
    return LLVMBuildSub(b, r, c64(x, 719468), "");
}

/* Days in month m (1..12) of year y, both i64. */
static LLVMValueRef days_in_month(cg_x *x, LLVMValueRef y, LLVMValueRef m)
{
    LLVMBuilderRef b = x->f->b;
    /* 30 or 31 by (m + m/8) & 1, then February */
    LLVMValueRef odd = LLVMBuildAnd(
        b, LLVMBuildAdd(b, m, LLVMBuildLShr(b, m, c64(x, 3), ""), ""), c64(x, 1), "");
    LLVMValueRef len = LLVMBuildAdd(b, c64(x, 30), odd, "");
    LLVMValueRef by4 = LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildSRem(b, y, c64(x, 4), ""),
                                     c64(x, 0), "");
    LLVMValueRef by100 = LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildSRem(b, y, c64(x, 100), ""),
                                       c64(x, 0), "");
    LLVMValueRef by400 = LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildSRem(b, y, c64(x, 400), ""),
                                       c64(x, 0), "");
    LLVMValueRef leap =
        LLVMBuildOr(b, LLVMBuildAnd(b, by4, LLVMBuildNot(b, by100, ""), ""), by400, "");
    LLVMValueRef feb = LLVMBuildSelect(b, leap, c64(x, 29), c64(x, 28), "");
    return LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, m, c64(x, 2), ""), feb, len, "");
}

/* An i64 day number as a DATE, or 22003. */
static LLVMValueRef to_date(cg_x *x, LLVMValueRef days)
{
    return cg_narrow(x->f, days, cg_i32(x->m), STO_TYPE_DATE);
}

/* date (i32) + months (i64). */
static LLVMValueRef add_months(cg_x *x, LLVMValueRef date, LLVMValueRef months)
{
    LLVMBuilderRef b = x->f->b;
    LLVMTypeRef i64 = cg_i64(x->m);
    LLVMValueRef y, m, d;
    cg_x_civil_from_days(x, date, &y, &m, &d);
    /* months since year 0, shifted */
    LLVMValueRef total = LLVMBuildAdd(b, LLVMBuildMul(b, LLVMBuildSExt(b, y, i64, ""), c64(x, 12), ""),
                                      LLVMBuildSub(b, LLVMBuildSExt(b, m, i64, ""), c64(x, 1), ""),
                                      "");
    total = LLVMBuildAdd(b, total, months, "");
    LLVMValueRef ny = floor_div(x, total, 12);
    LLVMValueRef nm =
        LLVMBuildAdd(b, LLVMBuildSub(b, total, LLVMBuildMul(b, ny, c64(x, 12), ""), ""),
                     c64(x, 1), "");
    LLVMValueRef dim = days_in_month(x, ny, nm);
    LLVMValueRef d64 = LLVMBuildSExt(b, d, i64, "");
    LLVMValueRef nd =
        LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSGT, d64, dim, ""), dim, d64, "");
    return to_date(x, days_from_civil(x, ny, nm, nd));
}

sto_status cg_x_date_func(cg_x *x, const sql_bexpr *e, cg_val *out)
{
    LLVMBuilderRef b = x->f->b;
    cg_val a, n = {NULL, NULL};
    STO_TRY(cg_x_expr(x, e->func.args.items[0], &a));
    if (e->func.args.count > 1) STO_TRY(cg_x_expr(x, e->func.args.items[1], &n));
    out->null = cg_x_null_or(x, a.null, n.null);
    LLVMValueRef zero = cg_const_i32(x->m, 0);
    LLVMValueRef va = cg_x_sanitize(x, a.v, out->null, zero);
    LLVMValueRef vn = n.v ? cg_x_sanitize(x, n.v, out->null, LLVMConstNull(LLVMTypeOf(n.v))) : NULL;
    if (vn && e->func.id != SQL_FUNC_DATE_DIFF_DAYS)
        vn = LLVMBuildSExt(b, vn, cg_i64(x->m), ""); /* INTEGER days or months */
    LLVMValueRef y, m, d;
    switch (e->func.id) {
    case SQL_FUNC_EXTRACT_YEAR:
    case SQL_FUNC_EXTRACT_MONTH:
    case SQL_FUNC_EXTRACT_DAY:
        cg_x_civil_from_days(x, va, &y, &m, &d);
        out->v = e->func.id == SQL_FUNC_EXTRACT_YEAR    ? y
                 : e->func.id == SQL_FUNC_EXTRACT_MONTH ? m
                                                        : d;
        return STO_OK;
    case SQL_FUNC_DATE_ADD_DAYS:
    case SQL_FUNC_DATE_SUB_DAYS: {
        LLVMValueRef wide = LLVMBuildSExt(b, va, cg_i64(x->m), "");
        wide = e->func.id == SQL_FUNC_DATE_ADD_DAYS ? LLVMBuildAdd(b, wide, vn, "")
                                                    : LLVMBuildSub(b, wide, vn, "");
        out->v = to_date(x, wide);
        return STO_OK;
    }
    case SQL_FUNC_DATE_ADD_MONTHS:
        out->v = add_months(x, va, vn);
        return STO_OK;
    case SQL_FUNC_DATE_DIFF_DAYS:
        out->v = cg_sub(x->f, va, vn, STO_TYPE_INTEGER);
        return STO_OK;
    default:
        return sto_error(STO_INTERNAL_ERROR, "codegen: %s is not a date function",
                         sql_func_name(e->func.id));
    }
}
