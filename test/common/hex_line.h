/*
 * "KEY HEX" lines: how the test programs hand binary addresses to each
 * other in a file (uct_stream_check -a, tcp_hostile's target and
 * uct_ud_scale's server write them; tcp_hostile and uct_ud_scale's
 * clients read them).
 */
#ifndef OPENUCT_TEST_COMMON_HEX_LINE_H_
#define OPENUCT_TEST_COMMON_HEX_LINE_H_

#include <stddef.h>
#include <stdio.h>

/* Writes "@a key HEX\n", HEX being the @a length bytes at @a data, two
 * lower-case digits each. */
void test_hex_line_write(FILE *file, const char *key, const void *data,
                         size_t length);

/* Decodes @a hex, two hexadecimal digits a byte, into at most @a max
 * bytes at @a out. Returns the byte count, or -1 when @a hex has an odd
 * length, a character that is not a digit, or more than @a max bytes. */
int test_hex_decode(const char *hex, void *out, size_t max);

/* Reads the line "@a key HEX" of the file @a path into at most @a max
 * bytes at @a out (test_hex_decode()). Returns the byte count, or -1 when
 * the file cannot be read (errno says why) or has no such line, or its
 * HEX does not decode (errno is EINVAL then). */
int test_hex_line_read(const char *path, const char *key, void *out,
                       size_t max);

#endif
