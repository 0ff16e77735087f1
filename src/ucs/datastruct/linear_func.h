/**
 * @file
 * The header path UCX's uct.h uses for linear functions (ucs_linear_func_t,
 * f(x) = c + m * x, the cost model of latencies and overheads). openuct
 * keeps them in ucs/type/linear_func.h; this header includes it, so a
 * program may include either path. Included by applications written for
 * UCX.
 */
#ifndef UCS_DATASTRUCT_LINEAR_FUNC_H_
#define UCS_DATASTRUCT_LINEAR_FUNC_H_

#include <ucs/type/linear_func.h>

#endif
