#include "hex_line.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

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

/* The value of hexadecimal digit @a c, or -1 */
static int test_hex_digit(char c)
{
    if ((c >= '0') && (c <= '9')) {
        return c - '0';
    } else if ((c >= 'a') && (c <= 'f')) {
        return c - 'a' + 10;
    } else if ((c >= 'A') && (c <= 'F')) {
        return c - 'A' + 10;
    }
    return -1;
}

int test_hex_decode(const char *hex, void *out, size_t max)
{
    size_t n   = strlen(hex) / 2, i;
    uint8_t *b = out;
    int hi, lo;

    if ((strlen(hex) % 2 != 0) || (n > max)) {
        return -1;
    }
    for (i = 0; i < n; ++i) {
        hi = test_hex_digit(hex[2 * i]);
        lo = test_hex_digit(hex[2 * i + 1]);
        if ((hi < 0) || (lo < 0)) {
            return -1;
        }
        b[i] = (uint8_t)((hi << 4) | lo);
    }
    return (int)n;
}

int test_hex_line_read(const char *path, const char *key, void *out, size_t max)
{
    size_t key_len = strlen(key);
    int length     = -1;
    char line[1024];
    FILE *file;

    file = fopen(path, "r");
    if (file == NULL) {
        return -1;
    }
    while (fgets(line, sizeof(line), file) != NULL) {
        if (strncmp(line, key, key_len) || (line[key_len] != ' ')) {
            continue;
        }
        line[strcspn(line, "\n")] = '\0';
        length = test_hex_decode(line + key_len + 1, out, max);
        break;
    }
    fclose(file);
    if (length < 0) {
        errno = EINVAL;
    }
    return length;
}
