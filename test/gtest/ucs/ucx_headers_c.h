/*
 * The C side of test_string_math.cc: ucx_headers_c.c is compiled as C.
 */
#ifndef TEST_GTEST_UCS_UCX_HEADERS_C_H_
#define TEST_GTEST_UCS_UCX_HEADERS_C_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Uses the UCX-path headers from C; returns 42 and writes "2M" into buf
 * when every check passes, -1 otherwise. */
int ucs_test_ucx_headers_c(char *buf, size_t max);

#ifdef __cplusplus
}
#endif

#endif
