/*
 * A linear function f(x) = c + m * x, used for cost models
 * (latency = c + m * number_of_endpoints, registration cost per byte...).
 */
#ifndef UCS_TYPE_LINEAR_FUNC_H_
#define UCS_TYPE_LINEAR_FUNC_H_

#include <ucs/sys/compiler_def.h>

BEGIN_C_DECLS

typedef struct ucs_linear_func {
    double c; /* constant term */
    double m; /* slope */
} ucs_linear_func_t;

static inline ucs_linear_func_t ucs_linear_func_make(double c, double m)
{
    ucs_linear_func_t f;

    f.c = c;
    f.m = m;
    return f;
}

static inline double ucs_linear_func_apply(ucs_linear_func_t f, double x)
{
    return f.c + (f.m * x);
}

END_C_DECLS

#endif
