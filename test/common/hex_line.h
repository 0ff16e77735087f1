/*
 * "KEY HEX" lines: how the test programs hand binary addresses to each
 * other in a file (uct_stream_check -a and tcp_hostile's target write
 * them, tcp_hostile reads them).
 */
#ifndef OPENUCT_TEST_COMMON_HEX_LINE_H_
#define OPENUCT_TEST_COMMON_HEX_LINE_H_

#include <stddef.h>
#include <stdio.h>

/* Writes "@a key HEX\n", HEX being the @a length bytes at @a data, two
 * lower-case digits each. */
void test_hex_line_write(FILE *file, const char *key, const void *data,
                         size_t length);

#endif
