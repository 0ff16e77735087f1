/**
 * @file
 * A linear function f(x) = c + m * x, used for cost models
 * (latency = c + m * number_of_endpoints, registration cost per byte...).
 * Included by uct.h for interface and memory domain performance
 * attributes. Values only: nothing to free, nothing shared.
 */
#ifndef UCS_TYPE_LINEAR_FUNC_H_
#define UCS_TYPE_LINEAR_FUNC_H_

#include <ucs/sys/compiler_def.h>

BEGIN_C_DECLS

/** f(x) = c + m * x. */
typedef struct ucs_linear_func {
    double c; /**< Constant term. */
    double m; /**< Slope. */
} ucs_linear_func_t;

/**
 * Build a linear function.
 *
 * @param [in] c  Constant term.
 * @param [in] m  Slope.
 *
 * @return The function c + m * x.
 */
static inline ucs_linear_func_t ucs_linear_func_make(double c, double m)
{
    ucs_linear_func_t f;

    f.c = c;
    f.m = m;
    return f;
}

/**
 * Evaluate a linear function.
 *
 * @param [in] f  The function.
 * @param [in] x  Where to evaluate it.
 *
 * @return f.c + f.m * x.
 */
static inline double ucs_linear_func_apply(ucs_linear_func_t f, double x)
{
    return f.c + (f.m * x);
}

END_C_DECLS

#endif
