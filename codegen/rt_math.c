/*
 * rt_math.c — the DOUBLE PRECISION functions behind generated expressions
 * (SQRT, POWER, EXP, LN, LOG), with PostgreSQL's errors: an argument outside
 * the function's domain (2201E for logarithms, 2201F for roots and powers),
 * and a result that overflows to infinity or underflows to zero from finite,
 * non-zero arguments (22003). NaN arguments give NaN, as in PostgreSQL.
 */
#include <math.h>

#include "codegen/rt.h"

static int32_t fail(cg_error *err, const char *sqlstate, const char *msg)
{
    err->detail = sto_error(sqlstate, "%s", msg);
    return CG_ERR_RUNTIME;
}

/* r, unless it overflowed or underflowed */
static int32_t check_range(cg_error *err, double r, bool overflow, bool underflow, double *out)
{
    if (overflow) return fail(err, STO_NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: overflow");
    if (underflow)
        return fail(err, STO_NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: underflow");
    *out = r;
    return CG_ERR_NONE;
}

int32_t cg_rt_math(cg_error *err, int32_t op, double a, double b, double *out)
{
    double r;
    switch (op) {
    case CG_MATH_SQRT:
        if (a < 0)
            return fail(err, STO_INVALID_ARGUMENT_FOR_POWER_FUNCTION,
                        "cannot take square root of a negative number");
        *out = sqrt(a);
        return CG_ERR_NONE;
    case CG_MATH_POWER:
        if (a == 0 && b < 0)
            return fail(err, STO_INVALID_ARGUMENT_FOR_POWER_FUNCTION,
                        "zero raised to a negative power is undefined");
        if (a < 0 && floor(b) != b)
            return fail(err, STO_INVALID_ARGUMENT_FOR_POWER_FUNCTION,
                        "a negative number raised to a non-integer power yields a complex result");
        r = pow(a, b);
        return check_range(err, r, isinf(r) && !isinf(a) && !isinf(b), r == 0 && a != 0, out);
    case CG_MATH_EXP:
        r = exp(a);
        return check_range(err, r, isinf(r) && !isinf(a), r == 0 && !isinf(a), out);
    case CG_MATH_LN:
    case CG_MATH_LOG10:
        if (a == 0)
            return fail(err, STO_INVALID_ARGUMENT_FOR_LOGARITHM, "cannot take logarithm of zero");
        if (a < 0)
            return fail(err, STO_INVALID_ARGUMENT_FOR_LOGARITHM,
                        "cannot take logarithm of a negative number");
        *out = op == CG_MATH_LN ? log(a) : log10(a);
        return CG_ERR_NONE;
    default:
        return fail(err, STO_INTERNAL_ERROR, "codegen: unknown math function");
    }
}
