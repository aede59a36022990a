/*
 * expr_date.c — DATE arithmetic and EXTRACT (year, quarter, month, week, day,
 * day of week and of year, ISO year), inline.
 *
 * A DATE is an i32 count of days since 1970-01-01. EXTRACT and month
 * arithmetic need the civil (year, month, day) form, computed here with the
 * same arithmetic storage/types.c uses (a year starting on March 1st, so the
 * leap day comes last and month lengths repeat every five months; 400-year
 * eras of 146097 days), in a dozen integer instructions and no call.
 *
 * Adding months keeps the day of the month unless the target month is
 * shorter, in which case it is its last day (PostgreSQL: 2023-01-31 + 1 month
 * = 2023-02-28). Results outside PostgreSQL's date range (4713 BC to
 * 5874897 AD) raise 22003 ("date out of range").
 */
#include "codegen/expr_int.h"

static LLVMValueRef c64(cg_x *x, int64_t v)
{
    return cg_const_i64(x->m, v);
}

static LLVMValueRef c32(cg_x *x, int64_t v)
{
    return LLVMConstInt(cg_i32(x->m), (uint64_t)v, 0);
}

/* All in 32-bit unsigned arithmetic, which vectorizes well: shifting the
 * day number by 14694 eras (and 0000-03-01 to 0) makes it non-negative and
 * keeps it below 2^32, so the era is a plain unsigned division. That holds
 * for every int32 day except the lowest 14862 (around year -5,877,000), far
 * below what date arithmetic here can produce (PostgreSQL's range, 4713 BC
 * to 5874897 AD). */
enum { ERA_DAYS = 146097, ERA_SHIFT = 14694, EPOCH_SHIFT = 719468 };

void cg_x_civil_from_days(cg_x *x, LLVMValueRef days, LLVMValueRef *y, LLVMValueRef *m,
                          LLVMValueRef *d)
{
    LLVMBuilderRef b = x->f->b;
    LLVMValueRef z = LLVMBuildAdd(b, days, c32(x, EPOCH_SHIFT + (int64_t)ERA_DAYS * ERA_SHIFT), "");
    LLVMValueRef era = LLVMBuildUDiv(b, z, c32(x, ERA_DAYS), "");
    LLVMValueRef doe = LLVMBuildSub(b, z, LLVMBuildMul(b, era, c32(x, ERA_DAYS), ""), "");
    /* yoe = (doe - doe/1460 + doe/36524 - doe/146096) / 365 */
    LLVMValueRef t = LLVMBuildSub(b, doe, LLVMBuildUDiv(b, doe, c32(x, 1460), ""), "");
    t = LLVMBuildAdd(b, t, LLVMBuildUDiv(b, doe, c32(x, 36524), ""), "");
    t = LLVMBuildSub(b, t, LLVMBuildUDiv(b, doe, c32(x, 146096), ""), "");
    LLVMValueRef yoe = LLVMBuildUDiv(b, t, c32(x, 365), "");
    /* doy = doe - (365 yoe + yoe/4 - yoe/100) */
    LLVMValueRef s = LLVMBuildMul(b, yoe, c32(x, 365), "");
    s = LLVMBuildAdd(b, s, LLVMBuildUDiv(b, yoe, c32(x, 4), ""), "");
    s = LLVMBuildSub(b, s, LLVMBuildUDiv(b, yoe, c32(x, 100), ""), "");
    LLVMValueRef doy = LLVMBuildSub(b, doe, s, "");
    /* mp: months since March */
    LLVMValueRef mp = LLVMBuildUDiv(
        b, LLVMBuildAdd(b, LLVMBuildMul(b, doy, c32(x, 5), ""), c32(x, 2), ""), c32(x, 153), "");
    LLVMValueRef month_start = LLVMBuildUDiv(
        b, LLVMBuildAdd(b, LLVMBuildMul(b, mp, c32(x, 153), ""), c32(x, 2), ""), c32(x, 5), "");
    *d = LLVMBuildAdd(b, LLVMBuildSub(b, doy, month_start, ""), c32(x, 1), "");
    LLVMValueRef early = LLVMBuildICmp(b, LLVMIntULT, mp, c32(x, 10), ""); /* Mar..Dec */
    *m = LLVMBuildSelect(b, early, LLVMBuildAdd(b, mp, c32(x, 3), ""),
                         LLVMBuildSub(b, mp, c32(x, 9), ""), "");
    LLVMValueRef era400 =
        LLVMBuildMul(b, LLVMBuildSub(b, era, c32(x, ERA_SHIFT), ""), c32(x, 400), "");
    LLVMValueRef year = LLVMBuildAdd(b, yoe, era400, "");
    *y = LLVMBuildAdd(b, year, LLVMBuildZExt(b, LLVMBuildNot(b, early, ""), cg_i32(x->m), ""), "");
}

/* Years are shifted by 4800 (a multiple of 400, so leap years stay leap
 * years) to be non-negative in the unsigned arithmetic below. */
enum { YEAR_SHIFT = 4800, YEAR_MIN = -4713, YEAR_MAX = 5874897 };

/* Day number (i32) of a civil date: yu = year + YEAR_SHIFT, m 1..12, d,
 * all i32 (the algorithm of cg_x_civil_from_days backwards). */
static LLVMValueRef days_from_civil(cg_x *x, LLVMValueRef yu, LLVMValueRef m, LLVMValueRef d)
{
    LLVMBuilderRef b = x->f->b;
    LLVMValueRef early = LLVMBuildICmp(b, LLVMIntULE, m, c32(x, 2), ""); /* Jan, Feb */
    yu = LLVMBuildSub(b, yu, LLVMBuildZExt(b, early, cg_i32(x->m), ""), "");
    LLVMValueRef era = LLVMBuildUDiv(b, yu, c32(x, 400), "");
    LLVMValueRef yoe = LLVMBuildSub(b, yu, LLVMBuildMul(b, era, c32(x, 400), ""), "");
    LLVMValueRef mp = LLVMBuildSelect(b, early, LLVMBuildAdd(b, m, c32(x, 9), ""),
                                      LLVMBuildSub(b, m, c32(x, 3), ""), "");
    LLVMValueRef doy = LLVMBuildAdd(
        b,
        LLVMBuildUDiv(b, LLVMBuildAdd(b, LLVMBuildMul(b, mp, c32(x, 153), ""), c32(x, 2), ""),
                      c32(x, 5), ""),
        LLVMBuildSub(b, d, c32(x, 1), ""), "");
    LLVMValueRef doe = LLVMBuildMul(b, yoe, c32(x, 365), "");
    doe = LLVMBuildAdd(b, doe, LLVMBuildUDiv(b, yoe, c32(x, 4), ""), "");
    doe = LLVMBuildSub(b, doe, LLVMBuildUDiv(b, yoe, c32(x, 100), ""), "");
    doe = LLVMBuildAdd(b, doe, doy, "");
    LLVMValueRef signed_era = LLVMBuildSub(b, era, c32(x, YEAR_SHIFT / 400), "");
    LLVMValueRef r = LLVMBuildAdd(b, LLVMBuildMul(b, signed_era, c32(x, ERA_DAYS), ""), doe, "");
    return LLVMBuildSub(b, r, c32(x, EPOCH_SHIFT), "");
}

/* Days in month m (1..12) of shifted year yu, both i32. */
static LLVMValueRef days_in_month(cg_x *x, LLVMValueRef yu, LLVMValueRef m)
{
    LLVMBuilderRef b = x->f->b;
    /* 30 or 31 by (m + m/8) & 1, then February */
    LLVMValueRef odd =
        LLVMBuildAnd(b, LLVMBuildAdd(b, m, LLVMBuildLShr(b, m, c32(x, 3), ""), ""), c32(x, 1), "");
    LLVMValueRef len = LLVMBuildAdd(b, c32(x, 30), odd, "");
    LLVMValueRef by4 =
        LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildAnd(b, yu, c32(x, 3), ""), c32(x, 0), "");
    LLVMValueRef by100 =
        LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildURem(b, yu, c32(x, 100), ""), c32(x, 0), "");
    LLVMValueRef by400 =
        LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildURem(b, yu, c32(x, 400), ""), c32(x, 0), "");
    LLVMValueRef leap =
        LLVMBuildOr(b, LLVMBuildAnd(b, by4, LLVMBuildNot(b, by100, ""), ""), by400, "");
    LLVMValueRef feb = LLVMBuildSelect(b, leap, c32(x, 29), c32(x, 28), "");
    return LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, m, c32(x, 2), ""), feb, len, "");
}

/* PostgreSQL's date range in days since 1970-01-01: 4714-11-24 BC (Julian
 * day 0) to 5874897-12-31. */
#define DATE_MIN_DAYS (-2440588LL)
#define DATE_MAX_DAYS 2145042905LL

/* An i64 day number as a DATE; outside PostgreSQL's range 22003 ("date out
 * of range"). */
static LLVMValueRef to_date(cg_x *x, LLVMValueRef days)
{
    LLVMBuilderRef b = x->f->b;
    LLVMValueRef off = LLVMBuildSub(b, days, c64(x, DATE_MIN_DAYS), "");
    LLVMValueRef bad = LLVMBuildICmp(b, LLVMIntUGT, off, c64(x, DATE_MAX_DAYS - DATE_MIN_DAYS), "");
    cg_fail_if(x->f, bad, CG_ERR_OVERFLOW, STO_TYPE_DATE);
    return LLVMBuildTrunc(b, days, cg_i32(x->m), "");
}

/* date (i32) + months (i64). The month count since the shifted year 0 is
 * range-checked in i64 first (a year outside PostgreSQL's range cannot give
 * a valid date); everything after fits 32 bits. */
static LLVMValueRef add_months(cg_x *x, LLVMValueRef date, LLVMValueRef months)
{
    LLVMBuilderRef b = x->f->b;
    LLVMTypeRef i32 = cg_i32(x->m), i64 = cg_i64(x->m);
    LLVMValueRef y, m, d;
    cg_x_civil_from_days(x, date, &y, &m, &d);
    LLVMValueRef yu = LLVMBuildAdd(b, y, c32(x, YEAR_SHIFT), "");
    LLVMValueRef total = LLVMBuildMul(b, LLVMBuildSExt(b, yu, i64, ""), c64(x, 12), "");
    total =
        LLVMBuildAdd(b, total, LLVMBuildSExt(b, LLVMBuildSub(b, m, c32(x, 1), ""), i64, ""), "");
    total = LLVMBuildAdd(b, total, months, "");
    int64_t lo = (int64_t)(YEAR_MIN + YEAR_SHIFT) * 12,
            hi = (int64_t)(YEAR_MAX + YEAR_SHIFT) * 12 + 11;
    LLVMValueRef bad =
        LLVMBuildICmp(b, LLVMIntUGT, LLVMBuildSub(b, total, c64(x, lo), ""), c64(x, hi - lo), "");
    cg_fail_if(x->f, bad, CG_ERR_OVERFLOW, STO_TYPE_DATE);
    LLVMValueRef t32 = LLVMBuildTrunc(b, total, i32, "");
    LLVMValueRef nyu = LLVMBuildUDiv(b, t32, c32(x, 12), "");
    LLVMValueRef nm = LLVMBuildAdd(
        b, LLVMBuildSub(b, t32, LLVMBuildMul(b, nyu, c32(x, 12), ""), ""), c32(x, 1), "");
    LLVMValueRef dim = days_in_month(x, nyu, nm);
    LLVMValueRef nd = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntUGT, d, dim, ""), dim, d, "");
    return to_date(x, LLVMBuildSExt(b, days_from_civil(x, nyu, nm, nd), i64, ""));
}

/* Day of the week of an i32 day number: 0 = Sunday .. 6 (1970-01-01 was a
 * Thursday). */
static LLVMValueRef day_of_week(cg_x *x, LLVMValueRef days)
{
    LLVMBuilderRef b = x->f->b;
    LLVMValueRef r = LLVMBuildSRem(b, LLVMBuildAdd(b, days, c32(x, 4), ""), c32(x, 7), "");
    LLVMValueRef neg = LLVMBuildICmp(b, LLVMIntSLT, r, c32(x, 0), "");
    return LLVMBuildSelect(b, neg, LLVMBuildAdd(b, r, c32(x, 7), ""), r, "");
}

/* The day number of January 1st of year y (i32). */
static LLVMValueRef new_year(cg_x *x, LLVMValueRef y)
{
    return days_from_civil(x, LLVMBuildAdd(x->f->b, y, c32(x, YEAR_SHIFT), ""), c32(x, 1),
                           c32(x, 1));
}

/* EXTRACT(field FROM days). ISO 8601 weeks start on Monday, and week 1 is
 * the one holding the year's first Thursday: the ISO year and week of a day
 * are those of the Thursday of its week. */
static LLVMValueRef extract(cg_x *x, sql_func f, LLVMValueRef days)
{
    LLVMBuilderRef b = x->f->b;
    LLVMValueRef y, m, d;
    if (f == SQL_FUNC_EXTRACT_YEAR || f == SQL_FUNC_EXTRACT_MONTH || f == SQL_FUNC_EXTRACT_DAY) {
        cg_x_civil_from_days(x, days, &y, &m, &d);
        return f == SQL_FUNC_EXTRACT_YEAR ? y : f == SQL_FUNC_EXTRACT_MONTH ? m : d;
    }
    LLVMValueRef dow = day_of_week(x, days);
    LLVMValueRef isodow =
        LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, dow, c32(x, 0), ""), c32(x, 7), dow, "");
    switch (f) {
    case SQL_FUNC_EXTRACT_DOW:
        return dow;
    case SQL_FUNC_EXTRACT_ISODOW:
        return isodow;
    case SQL_FUNC_EXTRACT_QUARTER:
        cg_x_civil_from_days(x, days, &y, &m, &d);
        return LLVMBuildUDiv(b, LLVMBuildAdd(b, m, c32(x, 2), ""), c32(x, 3), "");
    case SQL_FUNC_EXTRACT_DOY:
        cg_x_civil_from_days(x, days, &y, &m, &d);
        return LLVMBuildAdd(b, LLVMBuildSub(b, days, new_year(x, y), ""), c32(x, 1), "");
    default: { /* WEEK, ISOYEAR */
        LLVMValueRef thu = LLVMBuildAdd(b, LLVMBuildSub(b, days, isodow, ""), c32(x, 4), "");
        cg_x_civil_from_days(x, thu, &y, &m, &d);
        if (f == SQL_FUNC_EXTRACT_ISOYEAR) return y;
        LLVMValueRef into = LLVMBuildSub(b, thu, new_year(x, y), "");
        return LLVMBuildAdd(b, LLVMBuildUDiv(b, into, c32(x, 7), ""), c32(x, 1), "");
    }
    }
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
        vn = cg_widen(x->f, vn, cg_i64(x->m)); /* INTEGER days or months */
    if (sql_func_is_extract(e->func.id)) {
        out->v = extract(x, e->func.id, va);
        return STO_OK;
    }
    switch (e->func.id) {
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
