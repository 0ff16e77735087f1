#include "hex_line.h"

#include <stdint.h>

void test_hex_line_write(FILE *file, const char *key, const void *data,
                         size_t length)
{
    const uint8_t *b = data;
    size_t i;

    fprintf(file, "%s ", key);
    for (i = 0; i < length; ++i) {
        fprintf(file, "%02x", b[i]);
    }
    fprintf(file, "\n");
}
