/*
 * String helpers of ucs/sys/string.h.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <ucs/sys/string.h>
#include <ucs/config/parser.h>
#include <ucs/sys/sys.h>
#include <ctype.h>
#include <libgen.h>
#include <stdio.h>
#include <strings.h>
#include <unistd.h>

const char *ucs_memunits_suffixes[] = {"", "K", "M", "G", "T", NULL};

void ucs_expand_path(const char *path, char *fullpath, size_t max)
{
    char cwd[1024];

    if ((path[0] != '/') && (getcwd(cwd, sizeof(cwd)) != NULL)) {
        ucs_snprintf_safe(fullpath, max, "%s/%s", cwd, path);
    } else {
        ucs_strncpy_safe(fullpath, path, max);
    }
}

void ucs_fill_filename_template(const char *tmpl, char *buf, size_t max)
{
    size_t len = 0;
    const char *p;

    if (max == 0) {
        return;
    }

    buf[0] = '\0';
    for (p = tmpl; (*p != '\0') && (len + 1 < max); ++p) {
        if ((p[0] == '%') && (p[1] == 'p')) {
            snprintf(buf + len, max - len, "%d", (int)getpid());
            ++p;
        } else if ((p[0] == '%') && (p[1] == 'h')) {
            snprintf(buf + len, max - len, "%s", ucs_get_host_name());
            ++p;
        } else if ((p[0] == '%') && (p[1] == '%')) {
            buf[len]     = '%';
            buf[len + 1] = '\0';
            ++p;
        } else {
            buf[len]     = *p;
            buf[len + 1] = '\0';
        }
        len += strlen(buf + len);
    }
}

char *ucs_dirname(char *path, int num_layers)
{
    for (; num_layers > 0; --num_layers) {
        path = dirname(path);
    }

    return path;
}

void ucs_vsnprintf_safe(char *buf, size_t size, const char *fmt, va_list ap)
{
    if (size == 0) {
        return;
    }

    vsnprintf(buf, size, fmt, ap);
    buf[size - 1] = '\0';
}

void ucs_snprintf_safe(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    ucs_vsnprintf_safe(buf, size, fmt, ap);
    va_end(ap);
}

void ucs_snprintf_zero(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;

    if (size == 0) {
        return;
    }

    memset(buf, 0, size);
    va_start(ap, fmt);
    ucs_vsnprintf_safe(buf, size, fmt, ap);
    va_end(ap);
}

void ucs_strncpy_zero(char *dest, const char *src, size_t max)
{
    if (max == 0) {
        return;
    }

    strncpy(dest, src, max - 1);
    dest[max - 1] = '\0';
}

char *ucs_strncpy_safe(char *dst, const char *src, size_t len)
{
    size_t copy;

    if (len == 0) {
        return dst;
    }

    copy = strnlen(src, len - 1);
    memcpy(dst, src, copy);
    dst[copy] = '\0';
    return dst;
}

uint64_t ucs_string_to_id(const char *str)
{
    uint64_t id = 0;

    memcpy(&id, str, strnlen(str, sizeof(id) - 1));
    return id;
}

char *ucs_memunits_to_str(size_t value, char *buf, size_t max)
{
    size_t unit = 0;

    if (value == UCS_MEMUNITS_INF) {
        return ucs_strncpy_safe(buf, UCS_NUMERIC_INF_STR, max);
    }

    if (value == UCS_MEMUNITS_AUTO) {
        return ucs_strncpy_safe(buf, UCS_VALUE_AUTO_STR, max);
    }

    while ((value != 0) && ((value % 1024) == 0) &&
           (ucs_memunits_suffixes[unit + 1] != NULL)) {
        value /= 1024;
        ++unit;
    }

    ucs_snprintf_safe(buf, max, "%zu%s", value, ucs_memunits_suffixes[unit]);
    return buf;
}

const char *ucs_memunits_range_str(size_t range_start, size_t range_end,
                                   char *buf, size_t max)
{
    char start[32], end[32];

    if (range_start == range_end) {
        return ucs_memunits_to_str(range_start, buf, max);
    }

    ucs_snprintf_safe(buf, max, "%s..%s",
                      ucs_memunits_to_str(range_start, start, sizeof(start)),
                      ucs_memunits_to_str(range_end, end, sizeof(end)));
    return buf;
}

ucs_status_t ucs_str_to_memunits(const char *buf, void *dest)
{
    size_t value;

    /* The configuration parser already reads sizes, refusing overflow */
    if (ucs_config_memunits_read(buf, &value, NULL) != UCS_OK) {
        return UCS_ERR_INVALID_PARAM;
    }

    *(size_t *)dest = value;
    return UCS_OK;
}

size_t ucs_string_quantity_prefix_value(char prefix)
{
    switch (toupper((unsigned char)prefix)) {
    case 'B':
        return 1;
    case 'K':
        return UCS_KBYTE;
    case 'M':
        return UCS_MBYTE;
    case 'G':
        return UCS_GBYTE;
    case 'T':
        return UCS_TBYTE;
    default:
        return 0;
    }
}

char *ucs_strtrim(char *str)
{
    char *start = str;
    size_t len;

    while (isspace((unsigned char)*start)) {
        ++start;
    }

    len = strlen(start);
    while ((len > 0) && isspace((unsigned char)start[len - 1])) {
        --len;
    }

    start[len] = '\0';
    return start;
}

const char *ucs_str_dump_hex(const void *data, size_t length, char *buf,
                             size_t max, size_t per_line)
{
    static const char digits[] = "0123456789abcdef";
    const uint8_t *bytes       = (const uint8_t *)data;
    size_t pos                 = 0;
    size_t i;
    char sep;

    if (max == 0) {
        return buf;
    }

    for (i = 0; i < length; ++i) {
        sep = '\0';
        if ((i > 0) && (per_line != 0) && ((i % per_line) == 0)) {
            sep = '\n';
        } else if ((i > 0) && ((i % 4) == 0)) {
            sep = ':';
        }

        /* the separator and both digits must fit before the terminator */
        if ((pos + (sep != '\0') + 2) >= max) {
            break;
        }

        if (sep != '\0') {
            buf[pos++] = sep;
        }

        buf[pos++] = digits[bytes[i] >> 4];
        buf[pos++] = digits[bytes[i] & 0xf];
    }

    buf[pos] = '\0';
    return buf;
}

const char *ucs_flags_str(char *str, size_t max, uint64_t flags,
                          const char **str_table)
{
    const char *sep = "";
    size_t len      = 0;
    unsigned bit;

    if (max == 0) {
        return str;
    }

    str[0] = '\0';
    for (bit = 0; (bit < 64) && (str_table[bit] != NULL); ++bit) {
        if (!(flags & UCS_BIT(bit))) {
            continue;
        }

        snprintf(str + len, max - len, "%s%s", sep, str_table[bit]);
        len += strlen(str + len);
        sep = ",";
    }

    return str;
}

size_t ucs_string_count_char(const char *str, char c)
{
    size_t count = 0;

    for (; *str != '\0'; ++str) {
        count += (*str == c);
    }

    return count;
}

size_t ucs_string_common_prefix_len(const char *str1, const char *str2)
{
    size_t len = 0;

    while ((str1[len] != '\0') && (str1[len] == str2[len])) {
        ++len;
    }

    return len;
}

/* Length of the common leading directories of two paths, ending before a
 * '/' (0 when they share nothing but the root) */
static size_t ucs_path_common_parent_len(const char *path1, const char *path2)
{
    size_t len = ucs_string_common_prefix_len(path1, path2);

    /* a full component matches when both continue with '/' or end */
    if (((path1[len] == '/') || (path1[len] == '\0')) &&
        ((path2[len] == '/') || (path2[len] == '\0'))) {
        return len;
    }

    while ((len > 0) && (path1[len] != '/')) {
        --len;
    }

    return len;
}

void ucs_path_get_common_parent(const char *path1, const char *path2,
                                char *common_path)
{
    size_t len = ucs_path_common_parent_len(path1, path2);

    memcpy(common_path, path1, len);
    common_path[len] = '\0';
}

/* Number of components in a path part that starts after a '/' boundary */
static size_t ucs_path_num_components(const char *part)
{
    size_t count   = 0;
    int in_segment = 0;

    for (; *part != '\0'; ++part) {
        if (*part == '/') {
            in_segment = 0;
        } else if (!in_segment) {
            in_segment = 1;
            ++count;
        }
    }

    return count;
}

size_t ucs_path_calc_distance(const char *path1, const char *path2)
{
    size_t len = ucs_path_common_parent_len(path1, path2);

    return ucs_max(ucs_path_num_components(path1 + len),
                   ucs_path_num_components(path2 + len));
}

const char *ucs_mask_str(uint64_t mask, ucs_string_buffer_t *strb)
{
    const char *sep = "";
    unsigned bit;

    if (mask == 0) {
        ucs_string_buffer_appendf(strb, "<none>");
        return ucs_string_buffer_cstr(strb);
    }

    ucs_for_each_bit(bit, mask) {
        ucs_string_buffer_appendf(strb, "%s%u", sep, bit);
        sep = ", ";
    }

    return ucs_string_buffer_cstr(strb);
}

ssize_t ucs_string_find_in_list(const char *str, const char **string_list,
                                int case_sensitive)
{
    ssize_t i;

    for (i = 0; string_list[i] != NULL; ++i) {
        if ((case_sensitive ? strcmp(string_list[i], str)
                            : strcasecmp(string_list[i], str)) == 0) {
            return i;
        }
    }

    return -1;
}

char *ucs_string_split(char *str, const char *delim, int count, ...)
{
    char *rest = str;
    char **token_p;
    va_list ap;
    size_t len;
    int i;

    va_start(ap, count);
    for (i = 0; i < count; ++i) {
        token_p = va_arg(ap, char **);
        if (rest == NULL) {
            *token_p = NULL;
            continue;
        }

        *token_p = rest;
        len      = strcspn(rest, delim);
        if (rest[len] == '\0') {
            rest = NULL;
        } else {
            rest[len] = '\0';
            rest += len + 1;
        }
    }
    va_end(ap);

    return rest;
}
