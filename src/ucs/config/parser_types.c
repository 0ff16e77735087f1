/*
 * Value types of configuration fields: parse, format, copy, free and
 * describe. Each read function touches its destination only on success and
 * returns UCS_ERR_INVALID_PARAM for a malformed value (the caller prints the
 * error line with the help text) or UCS_ERR_NO_MEMORY.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <ucs/config/parser.h>

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct {
    const char *suffix;
    double factor;
} ucs_config_unit_t;

/* Memory size suffixes, matched ignoring case */
static const struct {
    const char *suffix;
    size_t factor;
} ucs_config_mem_units[] = {{"", 1},           {"b", 1},
                            {"k", 1ull << 10}, {"kb", 1ull << 10},
                            {"m", 1ull << 20}, {"mb", 1ull << 20},
                            {"g", 1ull << 30}, {"gb", 1ull << 30},
                            {"t", 1ull << 40}, {"tb", 1ull << 40}};

/* Time suffixes, matched ignoring case; no suffix means seconds */
static const ucs_config_unit_t ucs_config_time_units[] = {
    {"", 1.0}, {"s", 1.0}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}};

/* Bandwidth prefixes: powers of 1024 like memory units */
static const ucs_config_unit_t ucs_config_bw_prefixes[] = {
    {"T", 1099511627776.0},
    {"G", 1073741824.0},
    {"M", 1048576.0},
    {"K", 1024.0},
    {"", 1.0}};

static int ucs_config_is_keyword(const char *buf, const char *keyword)
{
    return !strcasecmp(buf, keyword);
}

/* strtoull() that refuses signs, blanks and empty input */
static ucs_status_t ucs_config_parse_ull(const char *buf,
                                         unsigned long long *value_p,
                                         const char **end_p)
{
    unsigned long long value;
    char *end;

    if (!isdigit((unsigned char)buf[0])) {
        return UCS_ERR_INVALID_PARAM;
    }

    errno = 0;
    value = strtoull(buf, &end, 10);
    if (errno != 0) {
        return UCS_ERR_INVALID_PARAM;
    }

    *value_p = value;
    *end_p   = end;
    return UCS_OK;
}

/* strtod() that refuses blanks, NaN and empty input */
static ucs_status_t ucs_config_parse_double(const char *buf, double *value_p,
                                            const char **end_p)
{
    double value;
    char *end;

    if ((buf[0] == '\0') || isspace((unsigned char)buf[0])) {
        return UCS_ERR_INVALID_PARAM;
    }

    errno = 0;
    value = strtod(buf, &end);
    if ((end == buf) || (errno == ERANGE) || isnan(value)) {
        return UCS_ERR_INVALID_PARAM;
    }

    *value_p = value;
    *end_p   = end;
    return UCS_OK;
}

/* Append "%s" to buf at *len_p, keeping it NUL-terminated */
static void ucs_config_append(char *buf, size_t max, size_t *len_p,
                              const char *str)
{
    int ret;

    if (*len_p >= max) {
        return;
    }

    ret = snprintf(buf + *len_p, max - *len_p, "%s", str);
    if (ret > 0) {
        *len_p = ucs_min(*len_p + (size_t)ret, max - 1);
    }
}

/*
 * Print @a value in the largest of @a units (largest factor first) in which
 * it is a whole number ("1500us"), else with 15 significant digits in the
 * largest unit it is at least one of ("1.2345us"): the text reads back as
 * the same value, to the precision of a double.
 */
static void ucs_config_write_units(char *buf, size_t max, double value,
                                   const ucs_config_unit_t *units, size_t count,
                                   const char *tail)
{
    double scaled;
    size_t i;

    for (i = 0; i < count; ++i) {
        scaled = value / units[i].factor;
        if ((fabs(scaled) >= 1.0) && (fabs(scaled) < 1e15) &&
            (fabs(scaled - round(scaled)) <= 1e-12 * fabs(scaled))) {
            snprintf(buf, max, "%.0f%s%s", round(scaled), units[i].suffix,
                     tail);
            return;
        }
    }

    for (i = 0; i + 1 < count; ++i) {
        if (fabs(value) >= units[i].factor) {
            break;
        }
    }

    snprintf(buf, max, "%.15g%s%s", value / units[i].factor, units[i].suffix,
             tail);
}

static void ucs_config_help_names(char *buf, size_t max, const char *title,
                                  const char *const *names)
{
    size_t len = 0;
    unsigned i;

    buf[0] = '\0';
    ucs_config_append(buf, max, &len, title);
    for (i = 0; names[i] != NULL; ++i) {
        ucs_config_append(buf, max, &len, (i == 0) ? "" : "|");
        ucs_config_append(buf, max, &len, names[i]);
    }
}

/* ---- string ---- */

ucs_status_t ucs_config_string_read(const char *buf, void *dest,
                                    const void *arg)
{
    char *str = strdup(buf);

    if (str == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    *(char **)dest = str;
    return UCS_OK;
}

void ucs_config_string_write(char *buf, size_t max, const void *src,
                             const void *arg)
{
    const char *str = *(char *const *)src;

    snprintf(buf, max, "%s", (str != NULL) ? str : "");
}

ucs_status_t ucs_config_string_clone(const void *src, void *dest,
                                     const void *arg)
{
    const char *str = *(char *const *)src;
    char *copy;

    if (str == NULL) {
        *(char **)dest = NULL;
        return UCS_OK;
    }

    copy = strdup(str);
    if (copy == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    *(char **)dest = copy;
    return UCS_OK;
}

void ucs_config_string_release(void *ptr, const void *arg)
{
    free(*(char **)ptr);
    *(char **)ptr = NULL;
}

void ucs_config_string_help(char *buf, size_t max, const void *arg)
{
    snprintf(buf, max, "string");
}

/* ---- int, unsigned, unsigned long ---- */

ucs_status_t ucs_config_int_read(const char *buf, void *dest, const void *arg)
{
    const char *digits = buf;
    unsigned long long magnitude;
    const char *end;
    int negative;

    negative = (buf[0] == '-');
    if (negative || (buf[0] == '+')) {
        ++digits;
    }

    if ((ucs_config_parse_ull(digits, &magnitude, &end) != UCS_OK) ||
        (*end != '\0') ||
        (magnitude > (negative ? (unsigned long long)INT_MAX + 1
                               : (unsigned long long)INT_MAX))) {
        return UCS_ERR_INVALID_PARAM;
    }

    *(int *)dest = negative ? (int)(-(long long)magnitude) : (int)magnitude;
    return UCS_OK;
}

void ucs_config_int_write(char *buf, size_t max, const void *src,
                          const void *arg)
{
    snprintf(buf, max, "%d", *(const int *)src);
}

void ucs_config_int_help(char *buf, size_t max, const void *arg)
{
    snprintf(buf, max, "integer");
}

ucs_status_t ucs_config_uint_read(const char *buf, void *dest, const void *arg)
{
    unsigned long long value;
    const char *end;

    if ((ucs_config_parse_ull(buf, &value, &end) != UCS_OK) || (*end != '\0') ||
        (value > UINT_MAX)) {
        return UCS_ERR_INVALID_PARAM;
    }

    *(unsigned *)dest = (unsigned)value;
    return UCS_OK;
}

void ucs_config_uint_write(char *buf, size_t max, const void *src,
                           const void *arg)
{
    snprintf(buf, max, "%u", *(const unsigned *)src);
}

void ucs_config_uint_help(char *buf, size_t max, const void *arg)
{
    snprintf(buf, max, "unsigned integer");
}

ucs_status_t ucs_config_ulong_read(const char *buf, void *dest, const void *arg)
{
    unsigned long long value;
    const char *end;

    if ((ucs_config_parse_ull(buf, &value, &end) != UCS_OK) || (*end != '\0') ||
        (value > ULONG_MAX)) {
        return UCS_ERR_INVALID_PARAM;
    }

    *(unsigned long *)dest = (unsigned long)value;
    return UCS_OK;
}

void ucs_config_ulong_write(char *buf, size_t max, const void *src,
                            const void *arg)
{
    snprintf(buf, max, "%lu", *(const unsigned long *)src);
}

void ucs_config_ulong_help(char *buf, size_t max, const void *arg)
{
    snprintf(buf, max, "unsigned long integer");
}

ucs_status_t ucs_config_ulunits_read(const char *buf, void *dest,
                                     const void *arg)
{
    unsigned long value;
    ucs_status_t status;

    if (ucs_config_is_keyword(buf, "inf")) {
        value = UCS_ULUNITS_INF;
    } else if (ucs_config_is_keyword(buf, "auto")) {
        value = UCS_ULUNITS_AUTO;
    } else {
        status = ucs_config_ulong_read(buf, &value, arg);
        if (status != UCS_OK) {
            return status;
        }
    }

    *(unsigned long *)dest = value;
    return UCS_OK;
}

void ucs_config_ulunits_write(char *buf, size_t max, const void *src,
                              const void *arg)
{
    unsigned long value = *(const unsigned long *)src;

    if (value == UCS_ULUNITS_INF) {
        snprintf(buf, max, "inf");
    } else if (value == UCS_ULUNITS_AUTO) {
        snprintf(buf, max, "auto");
    } else {
        snprintf(buf, max, "%lu", value);
    }
}

void ucs_config_ulunits_help(char *buf, size_t max, const void *arg)
{
    snprintf(buf, max, "unsigned long: <number>, \"inf\", or \"auto\"");
}

/* ---- double ---- */

ucs_status_t ucs_config_double_read(const char *buf, void *dest,
                                    const void *arg)
{
    const char *end;
    double value;

    if ((ucs_config_parse_double(buf, &value, &end) != UCS_OK) ||
        (*end != '\0')) {
        return UCS_ERR_INVALID_PARAM;
    }

    *(double *)dest = value;
    return UCS_OK;
}

void ucs_config_double_write(char *buf, size_t max, const void *src,
                             const void *arg)
{
    snprintf(buf, max, "%.15g", *(const double *)src);
}

void ucs_config_double_help(char *buf, size_t max, const void *arg)
{
    snprintf(buf, max, "floating point number");
}

/* ---- bool, ternary ---- */

static int ucs_config_bool_parse(const char *buf, int *value_p)
{
    if (!strcasecmp(buf, "y") || !strcasecmp(buf, "yes") || !strcmp(buf, "1") ||
        !strcasecmp(buf, "on")) {
        *value_p = 1;
        return 1;
    }

    if (!strcasecmp(buf, "n") || !strcasecmp(buf, "no") || !strcmp(buf, "0") ||
        !strcasecmp(buf, "off")) {
        *value_p = 0;
        return 1;
    }

    return 0;
}

ucs_status_t ucs_config_bool_read(const char *buf, void *dest, const void *arg)
{
    int value;

    if (!ucs_config_bool_parse(buf, &value)) {
        return UCS_ERR_INVALID_PARAM;
    }

    *(int *)dest = value;
    return UCS_OK;
}

void ucs_config_bool_write(char *buf, size_t max, const void *src,
                           const void *arg)
{
    snprintf(buf, max, "%c", *(const int *)src ? 'y' : 'n');
}

void ucs_config_bool_help(char *buf, size_t max, const void *arg)
{
    snprintf(buf, max, "boolean: y|n (also yes|no, on|off, 1|0)");
}

ucs_status_t ucs_config_ternary_read(const char *buf, void *dest,
                                     const void *arg)
{
    int value;

    if (ucs_config_bool_parse(buf, &value)) {
        *(int *)dest = value ? UCS_YES : UCS_NO;
        return UCS_OK;
    }

    if (!strcasecmp(buf, "try")) {
        *(int *)dest = UCS_TRY;
        return UCS_OK;
    }

    return UCS_ERR_INVALID_PARAM;
}

ucs_status_t ucs_config_ternary_auto_read(const char *buf, void *dest,
                                          const void *arg)
{
    if (!strcasecmp(buf, "auto")) {
        *(int *)dest = UCS_AUTO;
        return UCS_OK;
    }

    return ucs_config_ternary_read(buf, dest, arg);
}

void ucs_config_ternary_write(char *buf, size_t max, const void *src,
                              const void *arg)
{
    switch (*(const int *)src) {
    case UCS_NO:
        snprintf(buf, max, "n");
        break;
    case UCS_YES:
        snprintf(buf, max, "y");
        break;
    case UCS_TRY:
        snprintf(buf, max, "try");
        break;
    case UCS_AUTO:
        snprintf(buf, max, "auto");
        break;
    default:
        snprintf(buf, max, "[%d]", *(const int *)src);
        break;
    }
}

void ucs_config_ternary_help(char *buf, size_t max, const void *arg)
{
    snprintf(buf, max, "y|n|try");
}

void ucs_config_ternary_auto_help(char *buf, size_t max, const void *arg)
{
    snprintf(buf, max, "y|n|try|auto");
}

/* ---- enum, bitmap ---- */

static int ucs_config_name_index(const char *const *names, const char *buf,
                                 size_t len)
{
    int i;

    for (i = 0; names[i] != NULL; ++i) {
        if ((strlen(names[i]) == len) && !strncasecmp(names[i], buf, len)) {
            return i;
        }
    }

    return -1;
}

static unsigned ucs_config_names_count(const char *const *names)
{
    unsigned count = 0;

    while (names[count] != NULL) {
        ++count;
    }
    return count;
}

ucs_status_t ucs_config_enum_read(const char *buf, void *dest, const void *arg)
{
    int index =
        ucs_config_name_index((const char *const *)arg, buf, strlen(buf));

    if (index < 0) {
        return UCS_ERR_INVALID_PARAM;
    }

    *(unsigned *)dest = (unsigned)index;
    return UCS_OK;
}

void ucs_config_enum_write(char *buf, size_t max, const void *src,
                           const void *arg)
{
    const char *const *names = (const char *const *)arg;
    unsigned value           = *(const unsigned *)src;

    if (value < ucs_config_names_count(names)) {
        snprintf(buf, max, "%s", names[value]);
    } else {
        snprintf(buf, max, "[%u]", value);
    }
}

void ucs_config_enum_help(char *buf, size_t max, const void *arg)
{
    ucs_config_help_names(buf, max, "one of: ", (const char *const *)arg);
}

ucs_status_t ucs_config_bitmap_read(const char *buf, void *dest,
                                    const void *arg)
{
    const char *const *names = (const char *const *)arg;
    unsigned value           = 0;
    const char *item, *comma;
    size_t len;
    int index;

    if (buf[0] == '\0') {
        *(unsigned *)dest = 0;
        return UCS_OK;
    }

    for (item = buf;; item = comma + 1) {
        comma = strchr(item, ',');
        len   = (comma != NULL) ? (size_t)(comma - item) : strlen(item);
        index = ucs_config_name_index(names, item, len);
        if ((index < 0) || (index >= (int)(sizeof(value) * 8))) {
            return UCS_ERR_INVALID_PARAM;
        }

        value |= 1u << index;
        if (comma == NULL) {
            break;
        }
    }

    *(unsigned *)dest = value;
    return UCS_OK;
}

void ucs_config_bitmap_write(char *buf, size_t max, const void *src,
                             const void *arg)
{
    const char *const *names = (const char *const *)arg;
    unsigned value           = *(const unsigned *)src;
    size_t len               = 0;
    unsigned i;

    buf[0] = '\0';
    for (i = 0; (i < sizeof(value) * 8) && (names[i] != NULL); ++i) {
        if (value & (1u << i)) {
            ucs_config_append(buf, max, &len, (len == 0) ? "" : ",");
            ucs_config_append(buf, max, &len, names[i]);
        }
    }
}

void ucs_config_bitmap_help(char *buf, size_t max, const void *arg)
{
    ucs_config_help_names(
        buf, max, "comma-separated list of: ", (const char *const *)arg);
}

/* ---- memory units ---- */

ucs_status_t ucs_config_memunits_read(const char *buf, void *dest,
                                      const void *arg)
{
    unsigned long long number;
    const char *suffix;
    size_t i, factor;

    if (ucs_config_is_keyword(buf, "inf")) {
        *(size_t *)dest = UCS_MEMUNITS_INF;
        return UCS_OK;
    }

    if (ucs_config_is_keyword(buf, "auto")) {
        *(size_t *)dest = UCS_MEMUNITS_AUTO;
        return UCS_OK;
    }

    if (ucs_config_parse_ull(buf, &number, &suffix) != UCS_OK) {
        return UCS_ERR_INVALID_PARAM;
    }

    for (i = 0; i < ucs_static_array_size(ucs_config_mem_units); ++i) {
        if (!strcasecmp(suffix, ucs_config_mem_units[i].suffix)) {
            break;
        }
    }

    if (i == ucs_static_array_size(ucs_config_mem_units)) {
        return UCS_ERR_INVALID_PARAM;
    }

    /* Refuse overflow and values that would read back as inf/auto */
    factor = ucs_config_mem_units[i].factor;
    if (number > (UCS_MEMUNITS_AUTO - 1) / factor) {
        return UCS_ERR_INVALID_PARAM;
    }

    *(size_t *)dest = (size_t)number * factor;
    return UCS_OK;
}

void ucs_config_memunits_write(char *buf, size_t max, const void *src,
                               const void *arg)
{
    static const char suffixes[] = "kmgt";
    size_t value                 = *(const size_t *)src;
    int i;

    if (value == UCS_MEMUNITS_INF) {
        snprintf(buf, max, "inf");
        return;
    }

    if (value == UCS_MEMUNITS_AUTO) {
        snprintf(buf, max, "auto");
        return;
    }

    for (i = 3; (i >= 0) && (value != 0); --i) {
        if ((value % (1ull << (10 * (i + 1)))) == 0) {
            snprintf(buf, max, "%zu%c", value >> (10 * (i + 1)), suffixes[i]);
            return;
        }
    }

    snprintf(buf, max, "%zu", value);
}

void ucs_config_memunits_help(char *buf, size_t max, const void *arg)
{
    snprintf(buf, max,
             "memory units: <number>[b|kb|mb|gb|tb], \"inf\", "
             "or \"auto\"");
}

/* ---- time ---- */

ucs_status_t ucs_config_time_read(const char *buf, void *dest, const void *arg)
{
    const char *suffix;
    double value;
    size_t i;

    if (ucs_config_is_keyword(buf, "inf")) {
        *(double *)dest = HUGE_VAL;
        return UCS_OK;
    }

    if (!isdigit((unsigned char)buf[0]) && (buf[0] != '.')) {
        return UCS_ERR_INVALID_PARAM;
    }

    if (ucs_config_parse_double(buf, &value, &suffix) != UCS_OK) {
        return UCS_ERR_INVALID_PARAM;
    }

    for (i = 0; i < ucs_static_array_size(ucs_config_time_units); ++i) {
        if (!strcasecmp(suffix, ucs_config_time_units[i].suffix)) {
            *(double *)dest = value * ucs_config_time_units[i].factor;
            return UCS_OK;
        }
    }

    return UCS_ERR_INVALID_PARAM;
}

void ucs_config_time_write(char *buf, size_t max, const void *src,
                           const void *arg)
{
    double value = *(const double *)src;

    if (isinf(value)) {
        snprintf(buf, max, "inf");
    } else if (value == 0) {
        snprintf(buf, max, "0");
    } else {
        /* s, ms, us, ns: the unit-less "" entry is left out */
        ucs_config_write_units(buf, max, value, ucs_config_time_units + 1,
                               ucs_static_array_size(ucs_config_time_units) - 1,
                               "");
    }
}

void ucs_config_time_help(char *buf, size_t max, const void *arg)
{
    snprintf(buf, max, "time value: <number>[s|ms|us|ns], or \"inf\"");
}

/* ---- bandwidth ---- */

ucs_status_t ucs_config_bw_read(const char *buf, void *dest, const void *arg)
{
    double value, factor;
    const char *p;
    size_t i;

    if (ucs_config_is_keyword(buf, "auto")) {
        *(double *)dest = UCS_CONFIG_BW_AUTO;
        return UCS_OK;
    }

    if (!isdigit((unsigned char)buf[0]) && (buf[0] != '.')) {
        return UCS_ERR_INVALID_PARAM;
    }

    if ((ucs_config_parse_double(buf, &value, &p) != UCS_OK) || isinf(value)) {
        return UCS_ERR_INVALID_PARAM;
    }

    if (*p == '\0') {
        *(double *)dest = value; /* bytes per second */
        return UCS_OK;
    }

    factor = 1.0;
    for (i = 0; i < ucs_static_array_size(ucs_config_bw_prefixes) - 1; ++i) {
        if (toupper((unsigned char)*p) == ucs_config_bw_prefixes[i].suffix[0]) {
            factor = ucs_config_bw_prefixes[i].factor;
            ++p;
            break;
        }
    }

    if (*p == 'b') {
        factor /= 8.0;
    } else if (*p != 'B') {
        return UCS_ERR_INVALID_PARAM;
    }
    ++p;

    if (strcmp(p, "") && strcmp(p, "ps") && strcmp(p, "/s") && strcmp(p, "s")) {
        return UCS_ERR_INVALID_PARAM;
    }

    /* "1e308TBs" would be infinite, which prints as no bandwidth */
    if (isinf(value * factor)) {
        return UCS_ERR_INVALID_PARAM;
    }

    *(double *)dest = value * factor;
    return UCS_OK;
}

void ucs_config_bw_write(char *buf, size_t max, const void *src,
                         const void *arg)
{
    double value = *(const double *)src;

    if (value == UCS_CONFIG_BW_AUTO) {
        snprintf(buf, max, "auto");
        return;
    }

    /* "1280MBs": the largest prefix giving a whole number */
    ucs_config_write_units(buf, max, value, ucs_config_bw_prefixes,
                           ucs_static_array_size(ucs_config_bw_prefixes), "Bs");
}

void ucs_config_bw_help(char *buf, size_t max, const void *arg)
{
    snprintf(buf, max,
             "bandwidth: <number>[K|M|G|T]<B|b>[ps|/s] "
             "(B bytes, b bits, 1K=1024), or \"auto\"");
}

/* ---- string array, allow list ---- */

static void ucs_config_names_free(char **names, unsigned count)
{
    while (count > 0) {
        free(names[--count]);
    }
    free(names);
}

ucs_status_t ucs_config_names_array_read(const char *buf, void *dest,
                                         const void *arg)
{
    unsigned count = 0;
    const char *item, *comma;
    char **names;
    size_t len;

    if (buf[0] == '\0') {
        ((ucs_config_names_array_t *)dest)->names = NULL;
        ((ucs_config_names_array_t *)dest)->count = 0;
        return UCS_OK;
    }

    for (item = buf, count = 1; (comma = strchr(item, ',')) != NULL;
         item = comma + 1) {
        ++count;
    }

    names = calloc(count, sizeof(*names));
    if (names == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    for (item = buf, count = 0; item != NULL; ++count) {
        comma = strchr(item, ',');
        len   = (comma != NULL) ? (size_t)(comma - item) : strlen(item);
        if (len == 0) {
            ucs_config_names_free(names, count);
            return UCS_ERR_INVALID_PARAM; /* "a,,b" or a trailing comma */
        }

        names[count] = strndup(item, len);
        if (names[count] == NULL) {
            ucs_config_names_free(names, count);
            return UCS_ERR_NO_MEMORY;
        }

        item = (comma != NULL) ? comma + 1 : NULL;
    }

    ((ucs_config_names_array_t *)dest)->names = names;
    ((ucs_config_names_array_t *)dest)->count = count;
    return UCS_OK;
}

void ucs_config_names_array_write(char *buf, size_t max, const void *src,
                                  const void *arg)
{
    const ucs_config_names_array_t *array = src;
    size_t len                            = 0;
    unsigned i;

    buf[0] = '\0';
    for (i = 0; i < array->count; ++i) {
        ucs_config_append(buf, max, &len, (i == 0) ? "" : ",");
        ucs_config_append(buf, max, &len, array->names[i]);
    }
}

ucs_status_t ucs_config_names_array_clone(const void *src, void *dest,
                                          const void *arg)
{
    const ucs_config_names_array_t *array = src;
    char **names;
    unsigned i;

    if (array->count == 0) {
        ((ucs_config_names_array_t *)dest)->names = NULL;
        ((ucs_config_names_array_t *)dest)->count = 0;
        return UCS_OK;
    }

    names = calloc(array->count, sizeof(*names));
    if (names == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    for (i = 0; i < array->count; ++i) {
        names[i] = strdup(array->names[i]);
        if (names[i] == NULL) {
            ucs_config_names_free(names, i);
            return UCS_ERR_NO_MEMORY;
        }
    }

    ((ucs_config_names_array_t *)dest)->names = names;
    ((ucs_config_names_array_t *)dest)->count = array->count;
    return UCS_OK;
}

void ucs_config_names_array_release(void *ptr, const void *arg)
{
    ucs_config_names_array_t *array = ptr;

    ucs_config_names_free(array->names, array->count);
    array->names = NULL;
    array->count = 0;
}

void ucs_config_names_array_help(char *buf, size_t max, const void *arg)
{
    snprintf(buf, max, "comma-separated list of names");
}

int ucs_config_names_search(const ucs_config_names_array_t *array,
                            const char *str)
{
    unsigned i;

    for (i = 0; i < array->count; ++i) {
        if (!strcmp(array->names[i], str)) {
            return (int)i;
        }
    }

    return -1;
}

ucs_status_t ucs_config_allow_list_read(const char *buf, void *dest,
                                        const void *arg)
{
    ucs_config_allow_list_t *list = dest;
    ucs_config_names_array_t array;
    ucs_config_allow_list_mode_t mode;
    ucs_status_t status;

    if (!strcasecmp(buf, "all")) {
        list->array.names = NULL;
        list->array.count = 0;
        list->mode        = UCS_CONFIG_ALLOW_LIST_ALLOW_ALL;
        return UCS_OK;
    }

    if (buf[0] == '^') {
        mode = UCS_CONFIG_ALLOW_LIST_NEGATE;
        ++buf;
    } else {
        mode = UCS_CONFIG_ALLOW_LIST_ALLOW;
    }

    status = ucs_config_names_array_read(buf, &array, NULL);
    if (status != UCS_OK) {
        return status;
    }

    list->array = array;
    list->mode  = mode;
    return UCS_OK;
}

void ucs_config_allow_list_write(char *buf, size_t max, const void *src,
                                 const void *arg)
{
    const ucs_config_allow_list_t *list = src;

    if (list->mode == UCS_CONFIG_ALLOW_LIST_ALLOW_ALL) {
        snprintf(buf, max, "all");
        return;
    }

    if ((list->mode == UCS_CONFIG_ALLOW_LIST_NEGATE) && (max > 1)) {
        buf[0] = '^';
        ++buf;
        --max;
    }

    ucs_config_names_array_write(buf, max, &list->array, NULL);
}

ucs_status_t ucs_config_allow_list_clone(const void *src, void *dest,
                                         const void *arg)
{
    const ucs_config_allow_list_t *list = src;
    ucs_status_t status;

    status = ucs_config_names_array_clone(
        &list->array, &((ucs_config_allow_list_t *)dest)->array, NULL);
    if (status != UCS_OK) {
        return status;
    }

    ((ucs_config_allow_list_t *)dest)->mode = list->mode;
    return UCS_OK;
}

void ucs_config_allow_list_release(void *ptr, const void *arg)
{
    ucs_config_names_array_release(&((ucs_config_allow_list_t *)ptr)->array,
                                   NULL);
}

void ucs_config_allow_list_help(char *buf, size_t max, const void *arg)
{
    snprintf(buf, max,
             "comma-separated list of names, \"^\" in front to "
             "allow all but them, or \"all\"");
}

int ucs_config_allow_list_is_allowed(const ucs_config_allow_list_t *list,
                                     const char *name)
{
    switch (list->mode) {
    case UCS_CONFIG_ALLOW_LIST_ALLOW_ALL:
        return 1;
    case UCS_CONFIG_ALLOW_LIST_ALLOW:
        return ucs_config_names_search(&list->array, name) >= 0;
    case UCS_CONFIG_ALLOW_LIST_NEGATE:
        return ucs_config_names_search(&list->array, name) < 0;
    default:
        return 0;
    }
}

/* ---- range ---- */

ucs_status_t ucs_config_range_read(const char *buf, void *dest, const void *arg)
{
    unsigned long long first, last;
    const char *end;

    if ((ucs_config_parse_ull(buf, &first, &end) != UCS_OK) ||
        (first > UINT_MAX)) {
        return UCS_ERR_INVALID_PARAM;
    }

    if (*end == '\0') {
        last = first;
    } else if ((*end != '-') ||
               (ucs_config_parse_ull(end + 1, &last, &end) != UCS_OK) ||
               (*end != '\0') || (last > UINT_MAX) || (last < first)) {
        return UCS_ERR_INVALID_PARAM;
    }

    ((ucs_range_spec_t *)dest)->first = (unsigned)first;
    ((ucs_range_spec_t *)dest)->last  = (unsigned)last;
    return UCS_OK;
}

void ucs_config_range_write(char *buf, size_t max, const void *src,
                            const void *arg)
{
    const ucs_range_spec_t *range = src;

    snprintf(buf, max, "%u-%u", range->first, range->last);
}

void ucs_config_range_help(char *buf, size_t max, const void *arg)
{
    snprintf(buf, max, "range: <first>-<last> (or one number)");
}
