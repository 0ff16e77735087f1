/*
 * Configuration parser: fills options structures from their tables,
 * the configuration files and the environment; prints them; keeps the
 * process-wide list of tables and warns about unknown UCX_ variables.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <ucs/config/parser.h>
#include <ucs/config/global_opts.h>
#include <ucs/debug/log.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#ifndef UCS_SYSCONF_DIR
#define UCS_SYSCONF_DIR "/etc"
#endif

#define UCS_CONFIG_FILE_ENV  "UCX_CONFIG_FILE"
#define UCS_CONFIG_FILE_NAME "openuct.conf"
#define UCS_CONFIG_MAX_DEPTH 16   /* nesting of tables */
#define UCS_CONFIG_NAME_MAX  256  /* a variable name */
#define UCS_CONFIG_VALUE_MAX 4096 /* a formatted value */
#define UCS_CONFIG_HELP_MAX  512  /* a type's syntax description */

/* Variables we read without a table field (names without the prefix) */
static const char *ucs_config_known_vars[] = {
    "CONFIG_FILE", /* read before any table, see ucs_config_file_get() */
    NULL};

/* One "UCX_NAME = value" line of a configuration file */
typedef struct {
    char *name;
    char *value;
    unsigned line;
} ucs_config_file_var_t;

typedef struct {
    char *path;
    ucs_config_file_var_t *vars;
    unsigned count;
} ucs_config_file_t;

/* Prefixes a field is looked up with, most specific first */
typedef struct {
    const char *names[UCS_CONFIG_MAX_DEPTH + 1];
    unsigned count;
} ucs_config_prefixes_t;

/* Where the value of a field comes from */
typedef struct {
    const char *value;
    const char *file; /* NULL for the environment */
    unsigned line;
    char name[UCS_CONFIG_NAME_MAX];
} ucs_config_source_t;

typedef struct {
    const char *env_prefix;
    const ucs_config_file_t *files[2]; /* highest priority first */
    int ignore_errors;
    unsigned num_bad_values; /* reported and ignored */
} ucs_config_fill_ctx_t;

static struct {
    pthread_mutex_t file_lock;
    int file_loaded;
    ucs_config_file_t file;
    pthread_mutex_t list_lock;
    ucs_list_link_t list_head;
    int unused_vars_checked;
} ucs_config_ctx = {.file_lock = PTHREAD_MUTEX_INITIALIZER,
                    .list_lock = PTHREAD_MUTEX_INITIALIZER,
                    .list_head =
                        UCS_LIST_INITIALIZER(ucs_config_ctx.list_head)};

extern char **environ;

/* ---- helpers ------------------------------------------------------------- */

static int ucs_config_field_is_table(const ucs_config_field_t *field)
{
    return field->parser.flags & UCS_CONFIG_PARSER_FLAG_TABLE;
}

static int ucs_config_field_is_deprecated(const ucs_config_field_t *field)
{
    return field->parser.flags & UCS_CONFIG_PARSER_FLAG_DEPRECATED;
}

static int ucs_config_field_is_hidden(const ucs_config_field_t *field)
{
    return (field->doc == NULL) || (field->doc[0] == '\0');
}

static const char *ucs_config_env_prefix(const char *env_prefix)
{
    return (env_prefix != NULL) ? env_prefix : UCS_DEFAULT_ENV_PREFIX;
}

static void ucs_config_prefixes_init(ucs_config_prefixes_t *prefixes,
                                     const char *table_prefix)
{
    prefixes->count = 0;
    if ((table_prefix != NULL) && (table_prefix[0] != '\0')) {
        prefixes->names[prefixes->count++] = table_prefix;
    }
}

/* Enter a table field; returns 1 if its name was pushed */
static int ucs_config_prefixes_push(ucs_config_prefixes_t *prefixes,
                                    const ucs_config_field_t *field)
{
    if ((field->name[0] == '\0') || (prefixes->count >= UCS_CONFIG_MAX_DEPTH)) {
        return 0;
    }

    prefixes->names[prefixes->count++] = field->name;
    return 1;
}

/* The i-th prefix, the generic "" being the last one (i == count) */
static const char *
ucs_config_prefixes_get(const ucs_config_prefixes_t *prefixes, unsigned i)
{
    return (i < prefixes->count) ? prefixes->names[i] : "";
}

static void ucs_config_field_help(const ucs_config_field_t *field, char *buf,
                                  size_t max)
{
    if (field->parser.help != NULL) {
        field->parser.help(buf, max, field->parser.arg);
    } else {
        snprintf(buf, max, "value");
    }
}

static void ucs_config_field_release(const ucs_config_field_t *field, void *var)
{
    if (ucs_config_field_is_table(field)) {
        ucs_config_parser_release_opts(var, field->parser.arg);
    } else if (field->parser.release != NULL) {
        field->parser.release(var, field->parser.arg);
    }
}

/*
 * Parse @a value into @a var, which holds a valid value already; on failure
 * the old value stays.
 */
static ucs_status_t ucs_config_field_replace(const ucs_config_field_t *field,
                                             void *var, const char *value)
{
    ucs_status_t status;
    void *tmp;

    tmp = malloc(field->parser.size);
    if (tmp == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    status = field->parser.read(value, tmp, field->parser.arg);
    if (status != UCS_OK) {
        free(tmp);
        return status;
    }

    if (field->parser.release != NULL) {
        field->parser.release(var, field->parser.arg);
    }
    memcpy(var, tmp, field->parser.size);
    free(tmp);
    return UCS_OK;
}

static void ucs_config_report_bad_value(const ucs_config_field_t *field,
                                        ucs_status_t status,
                                        const char *var_name, const char *value,
                                        const ucs_config_source_t *source,
                                        const char *kept)
{
    char help[UCS_CONFIG_HELP_MAX];
    char where[UCS_CONFIG_NAME_MAX + 32] = "";
    char keep[UCS_CONFIG_VALUE_MAX + 32] = "";

    if ((source != NULL) && (source->file != NULL)) {
        snprintf(where, sizeof(where), " in %s:%u", source->file, source->line);
    }

    if (kept != NULL) {
        snprintf(keep, sizeof(keep), "; using the default '%s'", kept);
    }

    if (status == UCS_ERR_INVALID_PARAM) {
        ucs_config_field_help(field, help, sizeof(help));
        ucs_error("invalid value for %s: '%s' (expected: %s)%s%s", var_name,
                  value, help, where, keep);
    } else {
        ucs_error("failed to set %s to '%s'%s: %s%s", var_name, value, where,
                  ucs_status_string(status), keep);
    }
}

/* ---- configuration files ------------------------------------------------- */

static void ucs_config_file_release(ucs_config_file_t *file)
{
    unsigned i;

    for (i = 0; i < file->count; ++i) {
        free(file->vars[i].name);
        free(file->vars[i].value);
    }

    free(file->vars);
    free(file->path);
    file->vars  = NULL;
    file->path  = NULL;
    file->count = 0;
}

static char *ucs_config_strtrim(char *str)
{
    char *end;

    while ((*str == ' ') || (*str == '\t')) {
        ++str;
    }

    end = str + strlen(str);
    while ((end > str) && ((end[-1] == ' ') || (end[-1] == '\t') ||
                           (end[-1] == '\n') || (end[-1] == '\r'))) {
        --end;
    }
    *end = '\0';
    return str;
}

static int ucs_config_is_var_name(const char *name)
{
    const char *p;

    if (name[0] == '\0') {
        return 0;
    }

    for (p = name; *p != '\0'; ++p) {
        if (!(((*p >= 'A') && (*p <= 'Z')) || ((*p >= 'a') && (*p <= 'z')) ||
              ((*p >= '0') && (*p <= '9')) || (*p == '_'))) {
            return 0;
        }
    }
    return 1;
}

static ucs_status_t ucs_config_file_add_var(ucs_config_file_t *file,
                                            const char *name, const char *value,
                                            unsigned line)
{
    ucs_config_file_var_t *vars;
    ucs_config_file_var_t var;

    var.name  = strdup(name);
    var.value = strdup(value);
    var.line  = line;
    if ((var.name == NULL) || (var.value == NULL)) {
        goto err_free;
    }

    vars = realloc(file->vars, sizeof(*vars) * (file->count + 1));
    if (vars == NULL) {
        goto err_free;
    }

    vars[file->count++] = var;
    file->vars          = vars;
    return UCS_OK;

err_free:
    free(var.value);
    free(var.name);
    return UCS_ERR_NO_MEMORY;
}

/*
 * Parse the configuration file at @a path. Malformed lines draw a warning
 * and are skipped. Returns UCS_ERR_IO_ERROR with errno set if the file
 * cannot be opened.
 */
static ucs_status_t ucs_config_file_read(const char *path,
                                         ucs_config_file_t *file_p)
{
    ucs_config_file_t file = {NULL, NULL, 0};
    size_t buf_size        = 0;
    char *buf              = NULL;
    unsigned line          = 0;
    char *name, *value, *eq;
    ucs_status_t status;
    size_t len;
    FILE *stream;

    stream = fopen(path, "r");
    if (stream == NULL) {
        return UCS_ERR_IO_ERROR;
    }

    file.path = strdup(path);
    if (file.path == NULL) {
        status = UCS_ERR_NO_MEMORY;
        goto err_close;
    }

    while (getline(&buf, &buf_size, stream) >= 0) {
        ++line;
        name = ucs_config_strtrim(buf);
        if ((name[0] == '\0') || (name[0] == '#')) {
            continue;
        }

        eq = strchr(name, '=');
        if (eq == NULL) {
            ucs_warn("%s:%u: malformed line '%s' (expected 'UCX_NAME = "
                     "value'); ignored",
                     path, line, name);
            continue;
        }

        *eq   = '\0';
        name  = ucs_config_strtrim(name);
        value = ucs_config_strtrim(eq + 1);
        if (!ucs_config_is_var_name(name)) {
            ucs_warn("%s:%u: malformed variable name '%s' (expected "
                     "'UCX_NAME = value'); ignored",
                     path, line, name);
            continue;
        }

        len = strlen(value);
        if ((len >= 2) && ((value[0] == '"') || (value[0] == '\'')) &&
            (value[len - 1] == value[0])) {
            value[len - 1] = '\0';
            ++value;
        }

        status = ucs_config_file_add_var(&file, name, value, line);
        if (status != UCS_OK) {
            ucs_error("%s:%u: no memory to store the line", path, line);
            goto err_release;
        }
    }

    free(buf);
    fclose(stream);
    *file_p = file;
    return UCS_OK;

err_release:
    free(buf);
    ucs_config_file_release(&file);
err_close:
    fclose(stream);
    return status;
}

/* The configuration file, read on first use; call with file_lock held */
static const ucs_config_file_t *ucs_config_file_get(void)
{
    const char *path = getenv(UCS_CONFIG_FILE_ENV);
    int is_explicit  = (path != NULL);
    ucs_status_t status;
    int err;

    if (ucs_config_ctx.file_loaded) {
        return &ucs_config_ctx.file;
    }

    ucs_config_ctx.file_loaded = 1;
    if (path == NULL) {
        path = UCS_SYSCONF_DIR "/" UCS_CONFIG_FILE_NAME;
    }

    if (path[0] == '\0') {
        ucs_debug("configuration file disabled by empty " UCS_CONFIG_FILE_ENV);
        return &ucs_config_ctx.file;
    }

    status = ucs_config_file_read(path, &ucs_config_ctx.file);
    if (status == UCS_ERR_IO_ERROR) {
        err = errno;
        if (is_explicit) {
            ucs_warn("cannot read configuration file %s: %s; "
                     "check " UCS_CONFIG_FILE_ENV " (set it empty to use none)",
                     path, strerror(err));
        } else {
            ucs_debug("no configuration file %s: %s", path, strerror(err));
        }
    } else if (status == UCS_OK) {
        ucs_debug("read %u variables from configuration file %s",
                  ucs_config_ctx.file.count, path);
    }

    return &ucs_config_ctx.file;
}

void ucs_config_parser_reload_file(void)
{
    pthread_mutex_lock(&ucs_config_ctx.file_lock);
    ucs_config_file_release(&ucs_config_ctx.file);
    ucs_config_ctx.file_loaded = 0;
    pthread_mutex_unlock(&ucs_config_ctx.file_lock);
}

static const ucs_config_file_var_t *
ucs_config_file_find(const ucs_config_file_t *file, const char *name)
{
    unsigned i;

    /* The last assignment wins */
    for (i = file->count; i > 0; --i) {
        if (!strcmp(file->vars[i - 1].name, name)) {
            return &file->vars[i - 1];
        }
    }
    return NULL;
}

/* ---- filling ------------------------------------------------------------- */

/*
 * Find the value for @a field: environment first, then each file; within a
 * source, the most specific prefix first. Returns 1 if found.
 */
static int ucs_config_source_lookup(const ucs_config_fill_ctx_t *ctx,
                                    const ucs_config_prefixes_t *prefixes,
                                    const ucs_config_field_t *field,
                                    ucs_config_source_t *source)
{
    const ucs_config_file_var_t *var;
    const char *value;
    unsigned i, f;

    for (i = 0; i <= prefixes->count; ++i) {
        snprintf(source->name, sizeof(source->name), "%s%s%s", ctx->env_prefix,
                 ucs_config_prefixes_get(prefixes, i), field->name);
        value = getenv(source->name);
        if (value != NULL) {
            source->value = value;
            source->file  = NULL;
            source->line  = 0;
            return 1;
        }
    }

    for (f = 0; f < ucs_static_array_size(ctx->files); ++f) {
        if (ctx->files[f] == NULL) {
            continue;
        }

        for (i = 0; i <= prefixes->count; ++i) {
            snprintf(source->name, sizeof(source->name), "%s%s%s",
                     ctx->env_prefix, ucs_config_prefixes_get(prefixes, i),
                     field->name);
            var = ucs_config_file_find(ctx->files[f], source->name);
            if (var != NULL) {
                source->value = var->value;
                source->file  = ctx->files[f]->path;
                source->line  = var->line;
                return 1;
            }
        }
    }

    return 0;
}

/*
 * Copy the value of @a name from an override list "A=1;B=2" into @a value.
 * Returns 1 if found.
 */
static int ucs_config_override_find(const char *overrides, const char *name,
                                    char *value, size_t max)
{
    size_t name_len = strlen(name);
    const char *item, *end;
    size_t len;

    for (item = overrides; (item != NULL) && (*item != '\0');
         item = (end != NULL) ? end + 1 : NULL) {
        end = strchr(item, ';');
        if (!strncmp(item, name, name_len) && (item[name_len] == '=')) {
            item += name_len + 1;
            len = (end != NULL) ? (size_t)(end - item) : strlen(item);
            snprintf(value, max, "%.*s", (int)ucs_min(len, max - 1), item);
            return 1;
        }
    }

    return 0;
}

/*
 * Set every field of @a fields to its default, honouring the default
 * overrides of the enclosing table fields (outermost first). On failure,
 * nothing is left to release.
 */
static ucs_status_t ucs_config_set_defaults(void *opts,
                                            const ucs_config_field_t *fields,
                                            const char **overrides,
                                            unsigned num_overrides)
{
    char value[UCS_CONFIG_VALUE_MAX];
    const ucs_config_field_t *field;
    const char *dfl_value;
    ucs_status_t status;
    unsigned i;

    for (field = fields; field->name != NULL; ++field) {
        if (ucs_config_field_is_table(field)) {
            if (num_overrides >= UCS_CONFIG_MAX_DEPTH) {
                ucs_error("configuration table field %s: tables nested "
                          "deeper than %d",
                          field->name, UCS_CONFIG_MAX_DEPTH);
                status = UCS_ERR_INVALID_PARAM;
                goto err_release;
            }

            overrides[num_overrides] = field->dfl_value;
            status                   = ucs_config_set_defaults(
                                  UCS_PTR_BYTE_OFFSET(opts, field->offset), field->parser.arg,
                                  overrides, num_overrides + 1);
            if (status != UCS_OK) {
                goto err_release;
            }
            continue;
        }

        if (ucs_config_field_is_deprecated(field)) {
            continue;
        }

        dfl_value = field->dfl_value;
        for (i = 0; i < num_overrides; ++i) {
            if ((overrides[i] != NULL) &&
                ucs_config_override_find(overrides[i], field->name, value,
                                         sizeof(value))) {
                dfl_value = value;
                break;
            }
        }

        status = field->parser.read(dfl_value,
                                    UCS_PTR_BYTE_OFFSET(opts, field->offset),
                                    field->parser.arg);
        if (status != UCS_OK) {
            ucs_config_report_bad_value(field, status, field->name, dfl_value,
                                        NULL, NULL);
            ucs_error("the default of configuration field %s is wrong; "
                      "fix its table",
                      field->name);
            goto err_release;
        }
    }

    return UCS_OK;

err_release:
    while (field > fields) {
        --field;
        if (!ucs_config_field_is_deprecated(field)) {
            ucs_config_field_release(field,
                                     UCS_PTR_BYTE_OFFSET(opts, field->offset));
        }
    }
    return status;
}

static ucs_status_t ucs_config_apply_sources(void *opts,
                                             const ucs_config_field_t *fields,
                                             ucs_config_fill_ctx_t *ctx,
                                             ucs_config_prefixes_t *prefixes)
{
    char dfl_value[UCS_CONFIG_VALUE_MAX];
    const ucs_config_field_t *field;
    ucs_config_source_t source;
    ucs_status_t status;
    void *var;
    int pushed;

    for (field = fields; field->name != NULL; ++field) {
        var = UCS_PTR_BYTE_OFFSET(opts, field->offset);
        if (ucs_config_field_is_table(field)) {
            pushed = ucs_config_prefixes_push(prefixes, field);
            status =
                ucs_config_apply_sources(var, field->parser.arg, ctx, prefixes);
            prefixes->count -= pushed;
            if (status != UCS_OK) {
                return status;
            }
            continue;
        }

        if (!ucs_config_source_lookup(ctx, prefixes, field, &source)) {
            continue;
        }

        if (ucs_config_field_is_deprecated(field)) {
            ucs_warn("%s is deprecated and has no effect; remove it%s%s",
                     source.name, (source.file != NULL) ? " from " : "",
                     (source.file != NULL) ? source.file : "");
            continue;
        }

        ucs_debug("%s=%s%s%s", source.name, source.value,
                  (source.file != NULL) ? " from " : "",
                  (source.file != NULL) ? source.file : "");
        status = ucs_config_field_replace(field, var, source.value);
        if (status == UCS_OK) {
            continue;
        }

        if (!ctx->ignore_errors) {
            ucs_config_report_bad_value(field, status, source.name,
                                        source.value, &source, NULL);
            return status;
        }

        field->parser.write(dfl_value, sizeof(dfl_value), var,
                            field->parser.arg);
        ucs_config_report_bad_value(field, status, source.name, source.value,
                                    &source, dfl_value);
        ++ctx->num_bad_values;
    }

    return UCS_OK;
}

/* ucs_config_parser_fill_opts_file(), counting the values that were
 * reported and ignored with @a ignore_errors in @a num_bad_values_p */
static ucs_status_t
ucs_config_fill_opts_file(void *opts, const ucs_config_field_t *fields,
                          const char *env_prefix, const char *table_prefix,
                          const char *filename, int ignore_errors,
                          unsigned *num_bad_values_p)
{
    const char *overrides[UCS_CONFIG_MAX_DEPTH];
    ucs_config_file_t extra_file = {NULL, NULL, 0};
    ucs_config_prefixes_t prefixes;
    ucs_config_fill_ctx_t ctx;
    ucs_status_t status;
    int err;

    if ((filename != NULL) && (filename[0] != '\0')) {
        status = ucs_config_file_read(filename, &extra_file);
        if (status == UCS_ERR_IO_ERROR) {
            err = errno;
            ucs_error("cannot read configuration file %s: %s; check the "
                      "path given to the configuration reader",
                      filename, strerror(err));
            return status;
        } else if (status != UCS_OK) {
            return status;
        }
    }

    status = ucs_config_set_defaults(opts, fields, overrides, 0);
    if (status != UCS_OK) {
        goto out_release_file;
    }

    ctx.env_prefix     = ucs_config_env_prefix(env_prefix);
    ctx.files[0]       = (extra_file.path != NULL) ? &extra_file : NULL;
    ctx.ignore_errors  = ignore_errors;
    ctx.num_bad_values = 0;
    ucs_config_prefixes_init(&prefixes, table_prefix);

    pthread_mutex_lock(&ucs_config_ctx.file_lock);
    ctx.files[1] = ucs_config_file_get();
    status       = ucs_config_apply_sources(opts, fields, &ctx, &prefixes);
    pthread_mutex_unlock(&ucs_config_ctx.file_lock);
    if (status != UCS_OK) {
        ucs_config_parser_release_opts(opts, fields);
    }
    *num_bad_values_p = ctx.num_bad_values;

out_release_file:
    ucs_config_file_release(&extra_file);
    return status;
}

ucs_status_t ucs_config_parser_fill_opts_file(
    void *opts, const ucs_config_field_t *fields, const char *env_prefix,
    const char *table_prefix, const char *filename, int ignore_errors)
{
    unsigned num_bad_values;

    return ucs_config_fill_opts_file(opts, fields, env_prefix, table_prefix,
                                     filename, ignore_errors, &num_bad_values);
}

ucs_status_t ucs_config_parser_fill_opts(void *opts,
                                         const ucs_config_field_t *fields,
                                         const char *env_prefix,
                                         const char *table_prefix,
                                         int ignore_errors)
{
    return ucs_config_parser_fill_opts_file(opts, fields, env_prefix,
                                            table_prefix, NULL, ignore_errors);
}

void ucs_config_parser_release_opts(void *opts,
                                    const ucs_config_field_t *fields)
{
    const ucs_config_field_t *field;

    for (field = fields; field->name != NULL; ++field) {
        if (!ucs_config_field_is_deprecated(field)) {
            ucs_config_field_release(field,
                                     UCS_PTR_BYTE_OFFSET(opts, field->offset));
        }
    }
}

ucs_status_t ucs_config_parser_clone_opts(const void *src, void *dst,
                                          const ucs_config_field_t *fields)
{
    const ucs_config_field_t *field;
    ucs_status_t status;
    const void *src_var;
    void *dst_var;

    for (field = fields; field->name != NULL; ++field) {
        src_var = UCS_PTR_BYTE_OFFSET(src, field->offset);
        dst_var = UCS_PTR_BYTE_OFFSET(dst, field->offset);
        if (ucs_config_field_is_table(field)) {
            status = ucs_config_parser_clone_opts(src_var, dst_var,
                                                  field->parser.arg);
        } else if (ucs_config_field_is_deprecated(field)) {
            status = UCS_OK;
        } else if (field->parser.clone != NULL) {
            status = field->parser.clone(src_var, dst_var, field->parser.arg);
        } else {
            memcpy(dst_var, src_var, field->parser.size);
            status = UCS_OK;
        }

        if (status != UCS_OK) {
            ucs_error("failed to copy configuration field %s: %s", field->name,
                      ucs_status_string(status));
            goto err_release;
        }
    }

    return UCS_OK;

err_release:
    while (field > fields) {
        --field;
        if (!ucs_config_field_is_deprecated(field)) {
            ucs_config_field_release(field,
                                     UCS_PTR_BYTE_OFFSET(dst, field->offset));
        }
    }
    return status;
}

/* ---- get / set ----------------------------------------------------------- */

/*
 * Find field @a name in @a fields or its embedded tables, directly or with
 * the embedding table field's name in front ("IB_SEG_SIZE").
 */
static const ucs_config_field_t *
ucs_config_field_find(const ucs_config_field_t *fields, const char *name,
                      size_t *offset_p)
{
    const ucs_config_field_t *field, *found;
    size_t offset, len;

    for (field = fields; field->name != NULL; ++field) {
        if (!ucs_config_field_is_table(field)) {
            if (!strcmp(field->name, name)) {
                *offset_p = field->offset;
                return field;
            }
            continue;
        }

        found = ucs_config_field_find(field->parser.arg, name, &offset);
        len   = strlen(field->name);
        if ((found == NULL) && (len > 0) && !strncmp(name, field->name, len)) {
            found =
                ucs_config_field_find(field->parser.arg, name + len, &offset);
        }

        if (found != NULL) {
            *offset_p = field->offset + offset;
            return found;
        }
    }

    return NULL;
}

ucs_status_t ucs_config_parser_get_value(void *opts,
                                         const ucs_config_field_t *fields,
                                         const char *name, char *value,
                                         size_t max)
{
    const ucs_config_field_t *field;
    size_t offset;

    field = ucs_config_field_find(fields, name, &offset);
    if ((field == NULL) || ucs_config_field_is_deprecated(field)) {
        return UCS_ERR_NO_ELEM;
    }

    if ((value != NULL) && (max > 0)) {
        field->parser.write(value, max, UCS_PTR_BYTE_OFFSET(opts, offset),
                            field->parser.arg);
    }
    return UCS_OK;
}

ucs_status_t ucs_config_parser_set_value(void *opts,
                                         const ucs_config_field_t *fields,
                                         const char *name, const char *value)
{
    const ucs_config_field_t *field;
    ucs_status_t status;
    size_t offset;

    field = ucs_config_field_find(fields, name, &offset);
    if (field == NULL) {
        return UCS_ERR_NO_ELEM;
    }

    if (ucs_config_field_is_deprecated(field)) {
        ucs_warn("configuration field %s is deprecated and has no effect",
                 name);
        return UCS_OK;
    }

    status = ucs_config_field_replace(field, UCS_PTR_BYTE_OFFSET(opts, offset),
                                      value);
    if (status != UCS_OK) {
        ucs_config_report_bad_value(field, status, name, value, NULL, NULL);
    }
    return status;
}

/* ---- printing ------------------------------------------------------------ */

static void ucs_config_print_doc(FILE *stream, const ucs_config_field_t *field)
{
    char help[UCS_CONFIG_HELP_MAX];
    const char *line, *end;

    fprintf(stream, "#\n");
    for (line = field->doc; line != NULL; line = end ? end + 1 : NULL) {
        end = strchr(line, '\n');
        fprintf(stream, "# %.*s\n",
                (int)((end != NULL) ? (size_t)(end - line) : strlen(line)),
                line);
    }

    ucs_config_field_help(field, help, sizeof(help));
    fprintf(stream, "#\n# syntax:    %s\n#\n", help);
}

static void ucs_config_print_fields(FILE *stream, const void *opts,
                                    const ucs_config_field_t *fields,
                                    const char *env_prefix,
                                    const char *table_prefix, unsigned flags)
{
    char value[UCS_CONFIG_VALUE_MAX];
    const ucs_config_field_t *field;
    const void *var;

    for (field = fields; field->name != NULL; ++field) {
        var = UCS_PTR_BYTE_OFFSET(opts, field->offset);
        if (ucs_config_field_is_table(field)) {
            ucs_config_print_fields(stream, var, field->parser.arg, env_prefix,
                                    table_prefix, flags);
            continue;
        }

        if (ucs_config_field_is_deprecated(field) ||
            (ucs_config_field_is_hidden(field) &&
             !(flags & UCS_CONFIG_PRINT_HIDDEN))) {
            continue;
        }

        field->parser.write(value, sizeof(value), var, field->parser.arg);
        if ((flags & UCS_CONFIG_PRINT_DOC) &&
            !ucs_config_field_is_hidden(field)) {
            ucs_config_print_doc(stream, field);
        }

        fprintf(stream, "%s%s%s=%s\n", env_prefix, table_prefix, field->name,
                value);
        if (flags & UCS_CONFIG_PRINT_DOC) {
            fprintf(stream, "\n");
        }
    }
}

void ucs_config_parser_print_opts(FILE *stream, const char *title,
                                  const void *opts,
                                  const ucs_config_field_t *fields,
                                  const char *table_prefix,
                                  const char *env_prefix, unsigned flags)
{
    if ((flags & UCS_CONFIG_PRINT_HEADER) && (title != NULL)) {
        fprintf(stream, "#\n# %s\n#\n", title);
        if (flags & UCS_CONFIG_PRINT_DOC) {
            fprintf(stream, "\n");
        }
    }

    if (flags & UCS_CONFIG_PRINT_CONFIG) {
        ucs_config_print_fields(
            stream, opts, fields, ucs_config_env_prefix(env_prefix),
            (table_prefix != NULL) ? table_prefix : "", flags);
    }
}

ucs_status_t ucs_config_parser_print_all_opts(FILE *stream,
                                              const char *env_prefix,
                                              unsigned flags,
                                              const char *filter_prefix)
{
    const ucs_config_global_list_entry_t *entry;
    ucs_status_t status, result = UCS_OK;
    unsigned num_bad_values;
    void *opts;

    pthread_mutex_lock(&ucs_config_ctx.list_lock);
    ucs_list_for_each(entry, &ucs_config_ctx.list_head, list) {
        if ((filter_prefix != NULL) &&
            strncmp(entry->prefix, filter_prefix, strlen(filter_prefix))) {
            continue;
        }

        opts = calloc(1, ucs_max(entry->size, 1));
        if (opts == NULL) {
            fprintf(stream, "# %s: no memory to read the configuration\n",
                    entry->name);
            result = UCS_ERR_NO_MEMORY;
            continue;
        }

        status =
            ucs_config_fill_opts_file(opts, entry->table, env_prefix,
                                      entry->prefix, NULL, 1, &num_bad_values);
        if (status != UCS_OK) {
            fprintf(stream, "# %s: failed to read the configuration: %s\n",
                    entry->name, ucs_status_string(status));
            result = status;
            free(opts);
            continue;
        }

        if ((num_bad_values > 0) && (result == UCS_OK)) {
            result = UCS_ERR_INVALID_PARAM;
        }

        ucs_config_parser_print_opts(stream, entry->name, opts, entry->table,
                                     entry->prefix, env_prefix, flags);
        ucs_config_parser_release_opts(opts, entry->table);
        free(opts);
    }
    pthread_mutex_unlock(&ucs_config_ctx.list_lock);
    return result;
}

/* ---- global list of tables ----------------------------------------------- */

void ucs_config_global_list_add(ucs_config_global_list_entry_t *entry)
{
    pthread_mutex_lock(&ucs_config_ctx.list_lock);
    ucs_list_add_tail(&ucs_config_ctx.list_head, &entry->list);
    pthread_mutex_unlock(&ucs_config_ctx.list_lock);
}

void ucs_config_global_list_remove(ucs_config_global_list_entry_t *entry)
{
    ucs_config_global_list_entry_t *iter;

    pthread_mutex_lock(&ucs_config_ctx.list_lock);
    /* Removing an entry that is not listed is harmless */
    ucs_list_for_each(iter, &ucs_config_ctx.list_head, list) {
        if (iter == entry) {
            ucs_list_del(&entry->list);
            entry->list.prev = NULL;
            entry->list.next = NULL;
            break;
        }
    }
    pthread_mutex_unlock(&ucs_config_ctx.list_lock);
}

void ucs_config_global_list_for_each(
    void (*cb)(const ucs_config_global_list_entry_t *entry, void *arg),
    void *arg)
{
    const ucs_config_global_list_entry_t *entry;

    pthread_mutex_lock(&ucs_config_ctx.list_lock);
    ucs_list_for_each(entry, &ucs_config_ctx.list_head, list) {
        cb(entry, arg);
    }
    pthread_mutex_unlock(&ucs_config_ctx.list_lock);
}

/* ---- unknown variables --------------------------------------------------- */

/* Levenshtein distance, for "did you mean" */
static unsigned ucs_config_edit_distance(const char *a, const char *b)
{
    size_t len_a = strlen(a), len_b = strlen(b);
    unsigned row[UCS_CONFIG_NAME_MAX + 1];
    unsigned diag, up, i, j;

    if ((len_a > UCS_CONFIG_NAME_MAX) || (len_b > UCS_CONFIG_NAME_MAX)) {
        return UINT32_MAX;
    }

    for (j = 0; j <= len_b; ++j) {
        row[j] = j;
    }

    for (i = 1; i <= len_a; ++i) {
        diag   = row[0];
        row[0] = i;
        for (j = 1; j <= len_b; ++j) {
            up     = row[j];
            row[j] = ucs_min(ucs_min(row[j] + 1, row[j - 1] + 1),
                             diag + (a[i - 1] != b[j - 1]));
            diag   = up;
        }
    }

    return row[len_b];
}

typedef struct {
    const char *name; /* unprefixed variable name, e.g. TCP_SNDBUF */
    int known;
    unsigned best_distance;
    char best[UCS_CONFIG_NAME_MAX];
} ucs_config_var_match_t;

static void ucs_config_match_fields(const ucs_config_field_t *fields,
                                    ucs_config_prefixes_t *prefixes,
                                    ucs_config_var_match_t *match)
{
    char candidate[UCS_CONFIG_NAME_MAX];
    const ucs_config_field_t *field;
    unsigned i, distance;
    int pushed;

    for (field = fields; (field->name != NULL) && !match->known; ++field) {
        if (ucs_config_field_is_table(field)) {
            pushed = ucs_config_prefixes_push(prefixes, field);
            ucs_config_match_fields(field->parser.arg, prefixes, match);
            prefixes->count -= pushed;
            continue;
        }

        for (i = 0; i <= prefixes->count; ++i) {
            snprintf(candidate, sizeof(candidate), "%s%s",
                     ucs_config_prefixes_get(prefixes, i), field->name);
            if (!strcmp(candidate, match->name)) {
                match->known = 1;
                return;
            }

            if (ucs_config_field_is_deprecated(field)) {
                continue; /* never suggested */
            }

            distance = ucs_config_edit_distance(match->name, candidate);
            if (distance < match->best_distance) {
                match->best_distance = distance;
                memcpy(match->best, candidate, sizeof(candidate));
            }
        }
    }
}

static void ucs_config_check_env_var(const char *env_prefix,
                                     const char *env_var)
{
    size_t prefix_len = strlen(env_prefix);
    const ucs_config_global_list_entry_t *entry;
    char name[UCS_CONFIG_NAME_MAX];
    ucs_config_prefixes_t prefixes;
    ucs_config_var_match_t match;
    const char *eq;
    unsigned i, threshold;

    eq = strchr(env_var, '=');
    if ((eq == NULL) || (strncmp(env_var, env_prefix, prefix_len) != 0) ||
        ((size_t)(eq - env_var) >= sizeof(name) + prefix_len)) {
        return;
    }

    snprintf(name, sizeof(name), "%.*s", (int)(eq - env_var - prefix_len),
             env_var + prefix_len);
    for (i = 0; ucs_config_known_vars[i] != NULL; ++i) {
        if (!strcmp(name, ucs_config_known_vars[i])) {
            return;
        }
    }

    match.name          = name;
    match.known         = 0;
    match.best_distance = UINT32_MAX;
    match.best[0]       = '\0';
    ucs_list_for_each(entry, &ucs_config_ctx.list_head, list) {
        ucs_config_prefixes_init(&prefixes, entry->prefix);
        ucs_config_match_fields(entry->table, &prefixes, &match);
        if (match.known) {
            return;
        }
    }

    threshold = ucs_max(1, ucs_min(3, strlen(name) / 4));
    if (match.best_distance <= threshold) {
        ucs_warn("unknown environment variable %s%s (did you mean %s%s?); "
                 "set UCX_WARN_UNUSED_ENV_VARS=n to silence",
                 env_prefix, name, env_prefix, match.best);
    } else {
        ucs_warn("unknown environment variable %s%s; set "
                 "UCX_WARN_UNUSED_ENV_VARS=n to silence",
                 env_prefix, name);
    }
}

void ucs_config_parser_warn_unused_env_vars(const char *env_prefix)
{
    char **env;

    if (!ucs_global_opts.warn_unused_env_vars) {
        return;
    }

    env_prefix = ucs_config_env_prefix(env_prefix);
    pthread_mutex_lock(&ucs_config_ctx.list_lock);
    for (env = environ; *env != NULL; ++env) {
        ucs_config_check_env_var(env_prefix, *env);
    }
    pthread_mutex_unlock(&ucs_config_ctx.list_lock);
}

void ucs_config_parser_warn_unused_env_vars_once(const char *env_prefix)
{
    int checked;

    pthread_mutex_lock(&ucs_config_ctx.list_lock);
    checked                            = ucs_config_ctx.unused_vars_checked;
    ucs_config_ctx.unused_vars_checked = 1;
    pthread_mutex_unlock(&ucs_config_ctx.list_lock);

    if (!checked) {
        ucs_config_parser_warn_unused_env_vars(env_prefix);
    }
}

static void UCS_F_DTOR ucs_config_parser_cleanup(void)
{
    ucs_config_parser_reload_file();
}
