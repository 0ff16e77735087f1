/*
 * Harness of the configuration parser (src/ucs/config): value types,
 * configuration files, environment variables, set/get by name.
 *
 * The first byte of an input picks the mode (its value modulo 4; the seeds
 * use the digits '0'..'3'), its higher bits pick options; the rest is text:
 *
 *   '0' <field> <value>   one value through the type of a field: parse;
 *       on success print, parse the printed text (must succeed and give
 *       the same value), clone, print into short buffers, release. A
 *       failed parse must leave the destination untouched. <field> is a
 *       byte: 'A' is the first type of the harness's table (fuzz_types
 *       below, in order), then come the other types of every registered
 *       table (the tcp address families, the log level...).
 *   '1' <file>            a configuration file ("UCX_FUZZ_INT = 5" lines)
 *       read into the harness's table and into one registered table, then
 *       printed, cloned and released.
 *   '2' <NAME=value lines> environment variables (UCX_ is prefixed to each
 *       name) read into the harness's table; then the check for unknown
 *       UCX_ variables.
 *   '3' <NAME=value>      ucs_config_parser_set_value() and _get_value() on
 *       the harness's table, NAME without prefix ("MID_INNER_INT").
 *
 * Bad input must give a status and at most log lines: never a crash,
 * undefined behaviour or a leak.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create */
#endif

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "fuzz.h"

#include <ucs/config/global_opts.h>
#include <ucs/config/parser.h>
#include <ucs/debug/log.h>
#include <uct/api/uct.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define FUZZ_VALUE_MAX  4096 /* as the parser's own buffers */
#define FUZZ_MAX_FIELDS 256
#define FUZZ_MAX_TABLES 64
#define FUZZ_MAX_ENV    16

/* ---- the harness's table: every value type, nested tables ---- */

static const char *fuzz_enum_names[] = {"alpha", "beta", "gamma", NULL};

static const char *fuzz_bitmap_names[] = {
    "b0",  "b1",  "b2",  "b3",  "b4",  "b5",  "b6",  "b7",  "b8",
    "b9",  "b10", "b11", "b12", "b13", "b14", "b15", "b16", "b17",
    "b18", "b19", "b20", "b21", "b22", "b23", "b24", "b25", "b26",
    "b27", "b28", "b29", "b30", "b31", "b32", "b33", NULL};

typedef struct {
    int value;
    size_t seg;
} fuzz_inner_opts_t;

typedef struct {
    fuzz_inner_opts_t inner;
    unsigned count;
    char *name;
} fuzz_mid_opts_t;

typedef struct {
    char *string;
    int int_value;
    unsigned uint_value;
    unsigned long ulong_value;
    unsigned long ulunits;
    double double_value;
    int bool_value;
    int ternary;
    int ternary_auto;
    unsigned enum_value;
    unsigned bitmap;
    size_t memunits;
    double time;
    double bw;
    ucs_config_names_array_t array;
    ucs_config_allow_list_t allow;
    ucs_range_spec_t range;
    fuzz_mid_opts_t mid;
    fuzz_inner_opts_t flat;
} fuzz_opts_t;

static ucs_config_field_t fuzz_inner_table[] = {
    {"INT", "1", "An integer of the innermost table.",
     ucs_offsetof(fuzz_inner_opts_t, value), UCS_CONFIG_TYPE_INT},
    {"SEG", "8k", "A size of the innermost table.",
     ucs_offsetof(fuzz_inner_opts_t, seg), UCS_CONFIG_TYPE_MEMUNITS},
    {NULL}};

static ucs_config_field_t fuzz_mid_table[] = {
    {"INNER_", "SEG=16k;INT=-3", "Nested table with default overrides.",
     ucs_offsetof(fuzz_mid_opts_t, inner),
     UCS_CONFIG_TYPE_TABLE(fuzz_inner_table)},
    {"COUNT", "4", "A count.", ucs_offsetof(fuzz_mid_opts_t, count),
     UCS_CONFIG_TYPE_UINT},
    {"NAME", "mid", NULL, ucs_offsetof(fuzz_mid_opts_t, name),
     UCS_CONFIG_TYPE_STRING},
    {"OLD", "", "A removed variable.", 0, UCS_CONFIG_TYPE_DEPRECATED},
    {NULL}};

/* The types fuzzed by mode '0', in order: selector 'A' is the first */
static ucs_config_field_t fuzz_types[] = {
    {"STRING", "text", "A string.", ucs_offsetof(fuzz_opts_t, string),
     UCS_CONFIG_TYPE_STRING},
    {"INT", "-7", "An int.", ucs_offsetof(fuzz_opts_t, int_value),
     UCS_CONFIG_TYPE_INT},
    {"UINT", "7", "An unsigned.", ucs_offsetof(fuzz_opts_t, uint_value),
     UCS_CONFIG_TYPE_UINT},
    {"ULONG", "70", "An unsigned long.", ucs_offsetof(fuzz_opts_t, ulong_value),
     UCS_CONFIG_TYPE_ULONG},
    {"ULUNITS", "auto", "Unsigned long units.",
     ucs_offsetof(fuzz_opts_t, ulunits), UCS_CONFIG_TYPE_ULUNITS},
    {"DOUBLE", "0.5", "A double.", ucs_offsetof(fuzz_opts_t, double_value),
     UCS_CONFIG_TYPE_DOUBLE},
    {"BOOL", "y", "A boolean.", ucs_offsetof(fuzz_opts_t, bool_value),
     UCS_CONFIG_TYPE_BOOL},
    {"TERNARY", "try", "A ternary.", ucs_offsetof(fuzz_opts_t, ternary),
     UCS_CONFIG_TYPE_TERNARY},
    {"TERNARY_AUTO", "auto", "A ternary with auto.",
     ucs_offsetof(fuzz_opts_t, ternary_auto), UCS_CONFIG_TYPE_TERNARY_AUTO},
    {"ENUM", "beta", "An enum.", ucs_offsetof(fuzz_opts_t, enum_value),
     UCS_CONFIG_TYPE_ENUM(fuzz_enum_names)},
    {"BITMAP", "b0,b31", "A bitmap.", ucs_offsetof(fuzz_opts_t, bitmap),
     UCS_CONFIG_TYPE_BITMAP(fuzz_bitmap_names)},
    {"MEMUNITS", "64k", "A size.", ucs_offsetof(fuzz_opts_t, memunits),
     UCS_CONFIG_TYPE_MEMUNITS},
    {"TIME", "10ms", "A time.", ucs_offsetof(fuzz_opts_t, time),
     UCS_CONFIG_TYPE_TIME},
    {"BW", "10Gbps", "A bandwidth.", ucs_offsetof(fuzz_opts_t, bw),
     UCS_CONFIG_TYPE_BW},
    {"ARRAY", "a,b,c", "A list.", ucs_offsetof(fuzz_opts_t, array),
     UCS_CONFIG_TYPE_STRING_ARRAY},
    {"ALLOW", "^x,y", "An allow list.", ucs_offsetof(fuzz_opts_t, allow),
     UCS_CONFIG_TYPE_ALLOW_LIST},
    {"RANGE", "1000-2000", "A range.", ucs_offsetof(fuzz_opts_t, range),
     UCS_CONFIG_TYPE_RANGE},
    {NULL}};

static ucs_config_field_t fuzz_table[] = {
    {"", "", NULL, 0, UCS_CONFIG_TYPE_TABLE(fuzz_types)},
    {"MID_", "COUNT=9", "A nested table.", ucs_offsetof(fuzz_opts_t, mid),
     UCS_CONFIG_TYPE_TABLE(fuzz_mid_table)},
    {"", "INT=5", NULL, ucs_offsetof(fuzz_opts_t, flat),
     UCS_CONFIG_TYPE_TABLE(fuzz_inner_table)},
    {NULL}};

/* ---- state set up once ---- */

static struct {
    const ucs_config_field_t *fields[FUZZ_MAX_FIELDS];
    unsigned num_fields;
    const ucs_config_global_list_entry_t *tables[FUZZ_MAX_TABLES];
    unsigned num_tables;
    int memfd;
    char memfd_path[64];
    FILE *null_stream;
} fuzz_ctx;

/* Whether a field of the same type (read function and argument) is known */
static int fuzz_field_known(const ucs_config_field_t *field)
{
    unsigned i;

    for (i = 0; i < fuzz_ctx.num_fields; ++i) {
        if ((fuzz_ctx.fields[i]->parser.read == field->parser.read) &&
            (fuzz_ctx.fields[i]->parser.arg == field->parser.arg)) {
            return 1;
        }
    }
    return 0;
}

static void fuzz_add_fields(const ucs_config_field_t *fields)
{
    const ucs_config_field_t *field;

    for (field = fields; field->name != NULL; ++field) {
        if (field->parser.flags & UCS_CONFIG_PARSER_FLAG_TABLE) {
            fuzz_add_fields(field->parser.arg);
        } else if (!(field->parser.flags & UCS_CONFIG_PARSER_FLAG_DEPRECATED) &&
                   !fuzz_field_known(field) &&
                   (fuzz_ctx.num_fields < FUZZ_MAX_FIELDS)) {
            fuzz_ctx.fields[fuzz_ctx.num_fields++] = field;
        }
    }
}

static void fuzz_add_table(const ucs_config_global_list_entry_t *entry,
                           void *arg)
{
    if (fuzz_ctx.num_tables < FUZZ_MAX_TABLES) {
        fuzz_ctx.tables[fuzz_ctx.num_tables++] = entry;
    }
    fuzz_add_fields(entry->table);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    uct_component_h *components;
    unsigned num_components;

    fuzz_log_silence(UCS_LOG_LEVEL_DEBUG);

    /* no system configuration file: an input is all there is */
    setenv("UCX_CONFIG_FILE", "", 1);
    ucs_config_parser_reload_file();

    /* the modules register their tables (the tcp address families...) */
    if (uct_query_components(&components, &num_components) == UCS_OK) {
        uct_release_component_list(components);
    }

    fuzz_add_fields(fuzz_types);
    ucs_config_global_list_for_each(fuzz_add_table, NULL);

    fuzz_ctx.memfd = memfd_create("fuzz_config", 0);
    fuzz_check(fuzz_ctx.memfd >= 0, "memfd_create: %m");
    snprintf(fuzz_ctx.memfd_path, sizeof(fuzz_ctx.memfd_path),
             "/proc/self/fd/%d", fuzz_ctx.memfd);

    fuzz_ctx.null_stream = fopen("/dev/null", "w");
    fuzz_check(fuzz_ctx.null_stream != NULL, "/dev/null: %m");
    return 0;
}

/* ---- helpers ---- */

/* A NUL-terminated copy of the input, of exactly its size */
static char *fuzz_strndup(const uint8_t *data, size_t size)
{
    char *str = malloc(size + 1);

    fuzz_check(str != NULL, "no memory for %zu bytes", size + 1);
    memcpy(str, data, size);
    str[size] = '\0';
    return str;
}

static int fuzz_is_double(const ucs_config_parser_t *parser)
{
    return (parser->read == ucs_config_double_read) ||
           (parser->read == ucs_config_time_read) ||
           (parser->read == ucs_config_bw_read);
}

/* Types whose values are plain data: equal values are equal bytes */
static int fuzz_is_plain(const ucs_config_parser_t *parser)
{
    return (parser->read == ucs_config_int_read) ||
           (parser->read == ucs_config_uint_read) ||
           (parser->read == ucs_config_ulong_read) ||
           (parser->read == ucs_config_ulunits_read) ||
           (parser->read == ucs_config_bool_read) ||
           (parser->read == ucs_config_ternary_read) ||
           (parser->read == ucs_config_ternary_auto_read) ||
           (parser->read == ucs_config_enum_read) ||
           (parser->read == ucs_config_bitmap_read) ||
           (parser->read == ucs_config_memunits_read) ||
           (parser->read == ucs_config_range_read);
}

static int fuzz_doubles_equal(double a, double b)
{
    if ((a == b) || (isnan(a) && isnan(b))) {
        return 1;
    }

    return fabs(a - b) <= 1e-12 * fmax(fabs(a), fabs(b));
}

static void fuzz_release(const ucs_config_parser_t *parser, void *value)
{
    if (parser->release != NULL) {
        parser->release(value, parser->arg);
    }
}

/* Print @a value into buffers of exactly @a max bytes */
static void fuzz_write_short(const ucs_config_field_t *field, const void *value,
                             size_t max)
{
    char *buf = malloc(max);

    fuzz_check(buf != NULL, "no memory for %zu bytes", max);
    memset(buf, 'x', max);
    field->parser.write(buf, max, value, field->parser.arg);
    fuzz_check(memchr(buf, '\0', max) != NULL,
               "%s: write() into %zu bytes left no terminating NUL",
               field->name, max);
    free(buf);
}

/* ---- mode 0: one value ---- */

static void fuzz_value(const uint8_t *data, size_t size)
{
    const ucs_config_field_t *field;
    const ucs_config_parser_t *parser;
    char *printed, *reprinted, *input;
    void *value, *again, *copy, *pattern;
    ucs_status_t status;
    size_t max;

    if (size < 1) {
        return;
    }

    field  = fuzz_ctx.fields[(uint8_t)(data[0] - 'A') % fuzz_ctx.num_fields];
    parser = &field->parser;
    input  = fuzz_strndup(data + 1, size - 1);

    value   = malloc(parser->size);
    pattern = malloc(parser->size);
    fuzz_check((value != NULL) && (pattern != NULL), "no memory");
    memset(value, 0xa5, parser->size);
    memset(pattern, 0xa5, parser->size);

    status = parser->read(input, value, parser->arg);
    if (status != UCS_OK) {
        fuzz_check(!memcmp(value, pattern, parser->size),
                   "%s: read('%s') failed (%s) but changed the destination",
                   field->name, input, ucs_status_string(status));
        goto out;
    }

    /* print, parse the printed text, print again */
    printed   = calloc(1, FUZZ_VALUE_MAX);
    reprinted = calloc(1, FUZZ_VALUE_MAX);
    again     = calloc(1, parser->size);
    copy      = calloc(1, parser->size);
    fuzz_check((printed != NULL) && (reprinted != NULL) && (again != NULL) &&
                   (copy != NULL),
               "no memory");

    parser->write(printed, FUZZ_VALUE_MAX, value, parser->arg);
    fuzz_check(memchr(printed, '\0', FUZZ_VALUE_MAX) != NULL,
               "%s: write() left no terminating NUL", field->name);
    if (strlen(printed) < FUZZ_VALUE_MAX - 1) { /* not truncated */
        status = parser->read(printed, again, parser->arg);
        fuzz_check(status == UCS_OK,
                   "%s: '%s' parsed, printed as '%s', "
                   "which does not parse: %s",
                   field->name, input, printed, ucs_status_string(status));

        parser->write(reprinted, FUZZ_VALUE_MAX, again, parser->arg);
        fuzz_check(!strcmp(printed, reprinted),
                   "%s: '%s' printed as '%s', "
                   "which parses to a value printed as '%s'",
                   field->name, input, printed, reprinted);
        if (fuzz_is_double(parser)) {
            fuzz_check(fuzz_doubles_equal(*(double *)value, *(double *)again),
                       "%s: '%s' is %.17g, printed as '%s', which is %.17g",
                       field->name, input, *(double *)value, printed,
                       *(double *)again);
        } else if (fuzz_is_plain(parser)) {
            fuzz_check(!memcmp(value, again, parser->size),
                       "%s: '%s' printed as '%s' does not parse to the same "
                       "value",
                       field->name, input, printed);
        }
        fuzz_release(parser, again);
    }

    /* a clone prints the same */
    if (parser->clone != NULL) {
        status = parser->clone(value, copy, parser->arg);
        fuzz_check(status == UCS_OK, "%s: clone failed: %s", field->name,
                   ucs_status_string(status));
        parser->write(reprinted, FUZZ_VALUE_MAX, copy, parser->arg);
        fuzz_check(!strcmp(printed, reprinted),
                   "%s: '%s' printed as '%s', "
                   "its clone as '%s'",
                   field->name, input, printed, reprinted);
        fuzz_release(parser, copy);
    }

    /* short buffers: truncated, never overrun */
    for (max = 1; max <= 16; max *= 2) {
        fuzz_write_short(field, value, max);
    }
    fuzz_write_short(field, value, strlen(printed) + 1);
    if (strlen(printed) > 0) {
        fuzz_write_short(field, value, strlen(printed));
    }

    fuzz_release(parser, value);
    free(copy);
    free(again);
    free(reprinted);
    free(printed);
out:
    free(pattern);
    free(value);
    free(input);
}

/* ---- mode 1: a configuration file ---- */

static void fuzz_fill_print_release(const ucs_config_field_t *fields,
                                    size_t opts_size, const char *prefix,
                                    const char *filename, int ignore_errors)
{
    void *opts, *copy;
    ucs_status_t status;

    opts = malloc(opts_size);
    copy = malloc(opts_size);
    fuzz_check((opts != NULL) && (copy != NULL), "no memory");

    status = ucs_config_parser_fill_opts_file(opts, fields, NULL, prefix,
                                              filename, ignore_errors);
    if (status == UCS_OK) {
        ucs_config_parser_print_opts(
            fuzz_ctx.null_stream, "fuzz", opts, fields, prefix, NULL,
            UCS_CONFIG_PRINT_CONFIG | UCS_CONFIG_PRINT_HEADER |
                UCS_CONFIG_PRINT_DOC | UCS_CONFIG_PRINT_HIDDEN);
        if (ucs_config_parser_clone_opts(opts, copy, fields) == UCS_OK) {
            ucs_config_parser_release_opts(copy, fields);
        }
        ucs_config_parser_release_opts(opts, fields);
    } else {
        fuzz_check(ignore_errors == 0,
                   "%s: filling with ignore_errors "
                   "failed: %s",
                   prefix, ucs_status_string(status));
    }

    free(copy);
    free(opts);
}

static void fuzz_file(uint8_t options, const uint8_t *data, size_t size)
{
    const ucs_config_global_list_entry_t *entry;
    int ignore_errors = options & 1;

    fuzz_check(ftruncate(fuzz_ctx.memfd, 0) == 0, "ftruncate: %m");
    fuzz_check(pwrite(fuzz_ctx.memfd, data, size, 0) == (ssize_t)size,
               "pwrite: %m");

    fuzz_fill_print_release(fuzz_table, sizeof(fuzz_opts_t), "FUZZ_",
                            fuzz_ctx.memfd_path, ignore_errors);

    if (fuzz_ctx.num_tables > 0) {
        entry = fuzz_ctx.tables[(options >> 1) % fuzz_ctx.num_tables];
        fuzz_fill_print_release(entry->table, entry->size, entry->prefix,
                                fuzz_ctx.memfd_path, ignore_errors);
    }
}

/* ---- mode 2: environment variables ---- */

static void fuzz_env(uint8_t options, const uint8_t *data, size_t size)
{
    char *text = fuzz_strndup(data, size);
    char *vars[FUZZ_MAX_ENV];
    unsigned i, count = 0;
    char *line, *next, *eq, *name;
    size_t len;

    for (line = text; (line != NULL) && (count < FUZZ_MAX_ENV); line = next) {
        next = strchr(line, '\n');
        if (next != NULL) {
            *(next++) = '\0';
        }

        eq = strchr(line, '=');
        if ((eq == NULL) || (eq == line)) {
            continue;
        }

        /* putenv, not setenv: glibc keeps every setenv string forever */
        len         = strlen(line) + 5;
        vars[count] = malloc(len);
        fuzz_check(vars[count] != NULL, "no memory");
        snprintf(vars[count], len, "UCX_%s", line);
        fuzz_check(putenv(vars[count]) == 0, "putenv: %m");
        ++count;
    }

    fuzz_fill_print_release(fuzz_table, sizeof(fuzz_opts_t), "FUZZ_", NULL,
                            options & 1);
    ucs_config_parser_warn_unused_env_vars(NULL);

    /* the environment points to vars[]: remove before freeing */
    for (i = 0; i < count; ++i) {
        name = fuzz_strndup((const uint8_t *)vars[i],
                            (size_t)(strchr(vars[i], '=') - vars[i]));
        unsetenv(name);
        free(name);
    }
    for (i = 0; i < count; ++i) {
        free(vars[i]);
    }
    free(text);
}

/* ---- mode 3: set and get by name ---- */

static void fuzz_set_get(uint8_t options, const uint8_t *data, size_t size)
{
    char *text = fuzz_strndup(data, size);
    size_t max = 1 + (options % 64);
    const char *value;
    fuzz_opts_t opts;
    char *eq, *buf;

    eq = strchr(text, '=');
    if (eq != NULL) {
        *eq   = '\0';
        value = eq + 1;
    } else {
        value = "";
    }

    if (ucs_config_parser_fill_opts(&opts, fuzz_table, NULL, "FUZZ_", 1) !=
        UCS_OK) {
        goto out;
    }

    ucs_config_parser_set_value(&opts, fuzz_table, text, value);

    buf = malloc(max);
    fuzz_check(buf != NULL, "no memory");
    if (ucs_config_parser_get_value(&opts, fuzz_table, text, buf, max) ==
        UCS_OK) {
        fuzz_check(memchr(buf, '\0', max) != NULL,
                   "get_value(%s) into %zu bytes left no terminating NUL", text,
                   max);
    }
    free(buf);

    ucs_config_parser_release_opts(&opts, fuzz_table);
out:
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t options;

    if (size < 1) {
        return 0;
    }

    options = data[0] / 4;
    switch (data[0] % 4) {
    case 0:
        fuzz_value(data + 1, size - 1);
        break;
    case 1:
        fuzz_file(options, data + 1, size - 1);
        break;
    case 2:
        fuzz_env(options, data + 1, size - 1);
        break;
    default:
        fuzz_set_get(options, data + 1, size - 1);
        break;
    }

    return 0;
}
