/*
 * Configuration tables and the parser that fills them.
 *
 * Every tunable is a row of a table (ucs_config_field_t): name, default
 * value, doc string, offset in the options structure, and a value type.
 * ucs_config_parser_fill_opts() sets the defaults, then applies the
 * configuration file(s), then the environment:
 *
 *   field "SNDBUF" of a table read with table prefix "TCP_" is taken from
 *   UCX_TCP_SNDBUF if set, else from UCX_SNDBUF (generic fallback).
 *
 * A field of type UCS_CONFIG_TYPE_TABLE embeds another table at its offset;
 * the embedded fields are read with the embedding table's prefix first, then
 * with the table field's own name as a prefix (if not empty), then without
 * prefix. For example, rc_verbs (prefix "RC_VERBS_") embedding the rc table
 * in a field named "RC_", which embeds the ib table in a field named "IB_",
 * reads TX_QUEUE_LEN from UCX_RC_VERBS_TX_QUEUE_LEN, UCX_RC_TX_QUEUE_LEN,
 * UCX_IB_TX_QUEUE_LEN, UCX_TX_QUEUE_LEN, in this order. The default value of
 * a table field may override defaults of the embedded table:
 * "TX_QUEUE_LEN=256;SEG_SIZE=8k".
 *
 * Sources, highest priority first: environment, the file given to
 * ucs_config_parser_fill_opts_file(), the configuration file (UCX_CONFIG_FILE,
 * or $sysconfdir/openuct.conf; "UCX_CONFIG_FILE=" disables it), defaults.
 * A configuration file holds "UCX_NAME = value" lines, '#' comments and
 * blank lines.
 */
#ifndef UCS_CONFIG_PARSER_H_
#define UCS_CONFIG_PARSER_H_

#include <ucs/config/types.h>
#include <ucs/datastruct/list.h>
#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>
#include <stdio.h>

BEGIN_C_DECLS

/** Environment prefix used when a caller passes NULL. */
#define UCS_DEFAULT_ENV_PREFIX "UCX_"

/** ucs_config_parser_t::flags */
enum {
    UCS_CONFIG_PARSER_FLAG_TABLE      = UCS_BIT(0), /* arg is a sub-table */
    UCS_CONFIG_PARSER_FLAG_DEPRECATED = UCS_BIT(1)  /* accepted, ignored */
};

/** ucs_config_parser_print_opts() flags */
typedef enum {
    UCS_CONFIG_PRINT_CONFIG = UCS_BIT(0), /* NAME=value lines */
    UCS_CONFIG_PRINT_HEADER = UCS_BIT(1), /* a comment block with the title */
    UCS_CONFIG_PRINT_DOC    = UCS_BIT(2), /* doc and syntax before each var */
    UCS_CONFIG_PRINT_HIDDEN = UCS_BIT(3)  /* also fields without a doc */
} ucs_config_print_flags_t;

/**
 * A value type. read() parses @a buf into @a dest and touches @a dest only
 * on success; write() formats the value; clone() deep-copies; release()
 * frees what read() or clone() allocated. clone and release are NULL for
 * plain values: the parser then copies @a size bytes and frees nothing.
 * help() describes the accepted syntax (printed after "expected: ").
 */
typedef struct ucs_config_parser {
    ucs_status_t (*read)(const char *buf, void *dest, const void *arg);
    void         (*write)(char *buf, size_t max, const void *src,
                          const void *arg);
    ucs_status_t (*clone)(const void *src, void *dest, const void *arg);
    void         (*release)(void *ptr, const void *arg);
    void         (*help)(char *buf, size_t max, const void *arg);
    const void   *arg;
    size_t       size;
    unsigned     flags;
} ucs_config_parser_t;

/**
 * One row of a configuration table. Tables are arrays terminated by a row
 * whose name is NULL. A NULL or empty doc marks a hidden field (printed only
 * with UCS_CONFIG_PRINT_HIDDEN).
 */
typedef struct ucs_config_field {
    const char          *name;
    const char          *dfl_value;
    const char          *doc;
    size_t              offset;
    ucs_config_parser_t parser;
} ucs_config_field_t;

/**
 * A table known to the whole process: printed by tools and used to detect
 * unknown UCX_ variables. Register with UCS_CONFIG_REGISTER_TABLE().
 */
typedef struct ucs_config_global_list_entry {
    const char               *name;   /* e.g. "TCP transport" */
    const char               *prefix; /* e.g. "TCP_", or "" */
    const ucs_config_field_t *table;
    size_t                   size;    /* of the options struct */
    ucs_list_link_t          list;    /* owned by the registry */
} ucs_config_global_list_entry_t;

/**
 * Register @a _table for the lifetime of the library or module that holds
 * it (constructor/destructor pair). @a _type is its options structure.
 */
#define UCS_CONFIG_REGISTER_TABLE(_table, _name, _prefix, _type) \
    static ucs_config_global_list_entry_t _table##_global_entry = { \
        _name, _prefix, _table, sizeof(_type), {NULL, NULL} \
    }; \
    static void UCS_F_CTOR _table##_global_register(void) \
    { \
        ucs_config_global_list_add(&_table##_global_entry); \
    } \
    static void UCS_F_DTOR _table##_global_unregister(void) \
    { \
        ucs_config_global_list_remove(&_table##_global_entry); \
    }


/* ---- value types --------------------------------------------------------
 * Each macro expands to a ucs_config_parser_t initializer, so a table row is
 * {"SNDBUF", "64k", "Send buffer size", ucs_offsetof(cfg_t, sndbuf),
 *  UCS_CONFIG_TYPE_MEMUNITS}.
 */

/** char *, owned by the options structure */
#define UCS_CONFIG_TYPE_STRING \
    {ucs_config_string_read, ucs_config_string_write, \
     ucs_config_string_clone, ucs_config_string_release, \
     ucs_config_string_help, NULL, sizeof(char*), 0}

/** int */
#define UCS_CONFIG_TYPE_INT \
    {ucs_config_int_read, ucs_config_int_write, NULL, NULL, \
     ucs_config_int_help, NULL, sizeof(int), 0}

/** unsigned */
#define UCS_CONFIG_TYPE_UINT \
    {ucs_config_uint_read, ucs_config_uint_write, NULL, NULL, \
     ucs_config_uint_help, NULL, sizeof(unsigned), 0}

/** unsigned long */
#define UCS_CONFIG_TYPE_ULONG \
    {ucs_config_ulong_read, ucs_config_ulong_write, NULL, NULL, \
     ucs_config_ulong_help, NULL, sizeof(unsigned long), 0}

/** unsigned long; "inf" and "auto" give UCS_ULUNITS_INF/_AUTO */
#define UCS_CONFIG_TYPE_ULUNITS \
    {ucs_config_ulunits_read, ucs_config_ulunits_write, NULL, NULL, \
     ucs_config_ulunits_help, NULL, sizeof(unsigned long), 0}

/** double */
#define UCS_CONFIG_TYPE_DOUBLE \
    {ucs_config_double_read, ucs_config_double_write, NULL, NULL, \
     ucs_config_double_help, NULL, sizeof(double), 0}

/** int, 0 or 1: y/n/yes/no/1/0/on/off */
#define UCS_CONFIG_TYPE_BOOL \
    {ucs_config_bool_read, ucs_config_bool_write, NULL, NULL, \
     ucs_config_bool_help, NULL, sizeof(int), 0}

/** ucs_ternary_auto_value_t: yes/no/try */
#define UCS_CONFIG_TYPE_TERNARY \
    {ucs_config_ternary_read, ucs_config_ternary_write, NULL, NULL, \
     ucs_config_ternary_help, NULL, sizeof(int), 0}

/** ucs_ternary_auto_value_t: yes/no/try/auto */
#define UCS_CONFIG_TYPE_TERNARY_AUTO \
    {ucs_config_ternary_auto_read, ucs_config_ternary_write, NULL, NULL, \
     ucs_config_ternary_auto_help, NULL, sizeof(int), 0}

/** unsigned index into @a _names (NULL-terminated, matched ignoring case) */
#define UCS_CONFIG_TYPE_ENUM(_names) \
    {ucs_config_enum_read, ucs_config_enum_write, NULL, NULL, \
     ucs_config_enum_help, _names, sizeof(unsigned), 0}

/** unsigned with bit i set for each listed @a _names[i] ("a,c") */
#define UCS_CONFIG_TYPE_BITMAP(_names) \
    {ucs_config_bitmap_read, ucs_config_bitmap_write, NULL, NULL, \
     ucs_config_bitmap_help, _names, sizeof(unsigned), 0}

/** size_t with b/k/kb/m/mb/g/gb/t/tb suffixes (powers of 1024),
 *  "inf" and "auto" give UCS_MEMUNITS_INF/_AUTO */
#define UCS_CONFIG_TYPE_MEMUNITS \
    {ucs_config_memunits_read, ucs_config_memunits_write, NULL, NULL, \
     ucs_config_memunits_help, NULL, sizeof(size_t), 0}

/** double seconds with s/ms/us/ns suffixes (no suffix: seconds), "inf" */
#define UCS_CONFIG_TYPE_TIME \
    {ucs_config_time_read, ucs_config_time_write, NULL, NULL, \
     ucs_config_time_help, NULL, sizeof(double), 0}

/** double bytes per second: "10Gbps", "1GBs", "100MB/s", "auto" gives
 *  UCS_CONFIG_BW_AUTO. K/M/G/T are powers of 1024; b is bits, B bytes. */
#define UCS_CONFIG_TYPE_BW \
    {ucs_config_bw_read, ucs_config_bw_write, NULL, NULL, \
     ucs_config_bw_help, NULL, sizeof(double), 0}

/** ucs_config_names_array_t from a comma-separated list */
#define UCS_CONFIG_TYPE_STRING_ARRAY \
    {ucs_config_names_array_read, ucs_config_names_array_write, \
     ucs_config_names_array_clone, ucs_config_names_array_release, \
     ucs_config_names_array_help, NULL, sizeof(ucs_config_names_array_t), 0}

/** ucs_config_allow_list_t: "all", "a,b", or "^a,b" (all except a and b) */
#define UCS_CONFIG_TYPE_ALLOW_LIST \
    {ucs_config_allow_list_read, ucs_config_allow_list_write, \
     ucs_config_allow_list_clone, ucs_config_allow_list_release, \
     ucs_config_allow_list_help, NULL, sizeof(ucs_config_allow_list_t), 0}

/** ucs_range_spec_t: "1000-2000" or "1000" */
#define UCS_CONFIG_TYPE_RANGE \
    {ucs_config_range_read, ucs_config_range_write, NULL, NULL, \
     ucs_config_range_help, NULL, sizeof(ucs_range_spec_t), 0}

/** Embedded table; its offsets are relative to the field's offset. */
#define UCS_CONFIG_TYPE_TABLE(_sub_table) \
    {NULL, NULL, NULL, NULL, NULL, _sub_table, 0, \
     UCS_CONFIG_PARSER_FLAG_TABLE}

/** A removed variable: setting it draws a warning and has no effect. */
#define UCS_CONFIG_TYPE_DEPRECATED \
    {NULL, NULL, NULL, NULL, NULL, NULL, 0, \
     UCS_CONFIG_PARSER_FLAG_DEPRECATED}


/* ---- parser API ---------------------------------------------------------- */

/**
 * Fill @a opts from defaults, configuration file and environment.
 *
 * @param env_prefix    "UCX_" when NULL.
 * @param table_prefix  e.g. "TCP_"; NULL or "" for none.
 * @param ignore_errors if set, a bad value is reported and the default kept;
 *                      otherwise the call fails.
 * @return UCS_OK; UCS_ERR_INVALID_PARAM on a bad value (one error line names
 *         the variable, the value and the accepted form); UCS_ERR_NO_MEMORY.
 *         On failure @a opts holds nothing to release.
 */
ucs_status_t ucs_config_parser_fill_opts(void *opts,
                                         const ucs_config_field_t *fields,
                                         const char *env_prefix,
                                         const char *table_prefix,
                                         int ignore_errors);

/**
 * Like ucs_config_parser_fill_opts(), and also read @a filename (when not
 * NULL or empty), whose values rank below the environment and above the
 * configuration file. A missing @a filename fails with UCS_ERR_IO_ERROR.
 */
ucs_status_t ucs_config_parser_fill_opts_file(void *opts,
                                              const ucs_config_field_t *fields,
                                              const char *env_prefix,
                                              const char *table_prefix,
                                              const char *filename,
                                              int ignore_errors);

/** Free what a fill or clone allocated in @a opts. */
void ucs_config_parser_release_opts(void *opts,
                                    const ucs_config_field_t *fields);

/** Deep-copy @a src to @a dst; on failure @a dst holds nothing. */
ucs_status_t ucs_config_parser_clone_opts(const void *src, void *dst,
                                          const ucs_config_field_t *fields);

/**
 * Format the value of field @a name (no prefix, e.g. "SNDBUF"; embedded
 * tables are searched, and "IB_SEG_SIZE" finds SEG_SIZE of a table field
 * named "IB_"). @a value may be NULL to test whether the name exists.
 * @return UCS_OK, or UCS_ERR_NO_ELEM for an unknown name.
 */
ucs_status_t ucs_config_parser_get_value(void *opts,
                                         const ucs_config_field_t *fields,
                                         const char *name, char *value,
                                         size_t max);

/**
 * Parse @a value into field @a name. UCS_ERR_NO_ELEM for an unknown name;
 * UCS_ERR_INVALID_PARAM (with an error line) for a bad value, in which case
 * the old value is kept.
 */
ucs_status_t ucs_config_parser_set_value(void *opts,
                                         const ucs_config_field_t *fields,
                                         const char *name, const char *value);

/**
 * Print @a opts. Variable names are env_prefix + table_prefix + name, e.g.
 * UCX_TCP_SNDBUF=64k. @a flags is a mask of ucs_config_print_flags_t.
 */
void ucs_config_parser_print_opts(FILE *stream, const char *title,
                                  const void *opts,
                                  const ucs_config_field_t *fields,
                                  const char *table_prefix,
                                  const char *env_prefix, unsigned flags);

/**
 * Print every registered table with its current values (defaults, file,
 * environment). @a filter_prefix, when not NULL, selects the tables whose
 * prefix starts with it ("TCP_"; "" selects all). A bad value is reported
 * (one error line naming the variable, the value and the accepted form)
 * and its default printed.
 * @return UCS_OK; UCS_ERR_INVALID_PARAM if a value was bad; another error
 *         if a table could not be read (a comment line says which).
 */
ucs_status_t ucs_config_parser_print_all_opts(FILE *stream,
                                              const char *env_prefix,
                                              unsigned flags,
                                              const char *filter_prefix);

/**
 * Warn once per process about each environment variable that starts with
 * @a env_prefix ("UCX_" when NULL) and names no field of a registered table
 * (with any of its prefixes), suggesting the closest known name. Call after
 * the modules are loaded, so their tables are registered. Silenced by
 * UCX_WARN_UNUSED_ENV_VARS=n. Known without a table: UCX_CONFIG_FILE.
 */
void ucs_config_parser_warn_unused_env_vars_once(const char *env_prefix);

/** The check of ucs_config_parser_warn_unused_env_vars_once(), each call. */
void ucs_config_parser_warn_unused_env_vars(const char *env_prefix);

/**
 * Forget the cached configuration file and read it again on next use
 * (after UCX_CONFIG_FILE changed). Meant for tools and tests.
 */
void ucs_config_parser_reload_file(void);

void ucs_config_global_list_add(ucs_config_global_list_entry_t *entry);
void ucs_config_global_list_remove(ucs_config_global_list_entry_t *entry);

/** Call @a cb for each registered table, in registration order. */
void ucs_config_global_list_for_each(
        void (*cb)(const ucs_config_global_list_entry_t *entry, void *arg),
        void *arg);

/** Index of @a str in @a array, or -1. */
int ucs_config_names_search(const ucs_config_names_array_t *array,
                            const char *str);

/** Whether @a name passes @a list ("all", "a,b", "^a,b"). */
int ucs_config_allow_list_is_allowed(const ucs_config_allow_list_t *list,
                                     const char *name);


/* ---- type implementations (used by the UCS_CONFIG_TYPE_* macros) --------- */

ucs_status_t ucs_config_string_read(const char *buf, void *dest,
                                    const void *arg);
void ucs_config_string_write(char *buf, size_t max, const void *src,
                             const void *arg);
void ucs_config_string_help(char *buf, size_t max, const void *arg);
ucs_status_t ucs_config_string_clone(const void *src, void *dest,
                                     const void *arg);
void ucs_config_string_release(void *ptr, const void *arg);

ucs_status_t ucs_config_int_read(const char *buf, void *dest, const void *arg);
void ucs_config_int_write(char *buf, size_t max, const void *src,
                          const void *arg);
void ucs_config_int_help(char *buf, size_t max, const void *arg);

ucs_status_t ucs_config_uint_read(const char *buf, void *dest,
                                  const void *arg);
void ucs_config_uint_write(char *buf, size_t max, const void *src,
                           const void *arg);
void ucs_config_uint_help(char *buf, size_t max, const void *arg);

ucs_status_t ucs_config_ulong_read(const char *buf, void *dest,
                                   const void *arg);
void ucs_config_ulong_write(char *buf, size_t max, const void *src,
                            const void *arg);
void ucs_config_ulong_help(char *buf, size_t max, const void *arg);

ucs_status_t ucs_config_ulunits_read(const char *buf, void *dest,
                                     const void *arg);
void ucs_config_ulunits_write(char *buf, size_t max, const void *src,
                              const void *arg);
void ucs_config_ulunits_help(char *buf, size_t max, const void *arg);

ucs_status_t ucs_config_double_read(const char *buf, void *dest,
                                    const void *arg);
void ucs_config_double_write(char *buf, size_t max, const void *src,
                             const void *arg);
void ucs_config_double_help(char *buf, size_t max, const void *arg);

ucs_status_t ucs_config_bool_read(const char *buf, void *dest,
                                  const void *arg);
void ucs_config_bool_write(char *buf, size_t max, const void *src,
                           const void *arg);
void ucs_config_bool_help(char *buf, size_t max, const void *arg);

ucs_status_t ucs_config_ternary_read(const char *buf, void *dest,
                                     const void *arg);
void ucs_config_ternary_write(char *buf, size_t max, const void *src,
                              const void *arg);
void ucs_config_ternary_help(char *buf, size_t max, const void *arg);
ucs_status_t ucs_config_ternary_auto_read(const char *buf, void *dest,
                                          const void *arg);
void ucs_config_ternary_auto_help(char *buf, size_t max, const void *arg);

ucs_status_t ucs_config_enum_read(const char *buf, void *dest,
                                  const void *arg);
void ucs_config_enum_write(char *buf, size_t max, const void *src,
                           const void *arg);
void ucs_config_enum_help(char *buf, size_t max, const void *arg);

ucs_status_t ucs_config_bitmap_read(const char *buf, void *dest,
                                    const void *arg);
void ucs_config_bitmap_write(char *buf, size_t max, const void *src,
                             const void *arg);
void ucs_config_bitmap_help(char *buf, size_t max, const void *arg);

ucs_status_t ucs_config_memunits_read(const char *buf, void *dest,
                                      const void *arg);
void ucs_config_memunits_write(char *buf, size_t max, const void *src,
                               const void *arg);
void ucs_config_memunits_help(char *buf, size_t max, const void *arg);

ucs_status_t ucs_config_time_read(const char *buf, void *dest,
                                  const void *arg);
void ucs_config_time_write(char *buf, size_t max, const void *src,
                           const void *arg);
void ucs_config_time_help(char *buf, size_t max, const void *arg);

ucs_status_t ucs_config_bw_read(const char *buf, void *dest, const void *arg);
void ucs_config_bw_write(char *buf, size_t max, const void *src,
                         const void *arg);
void ucs_config_bw_help(char *buf, size_t max, const void *arg);

ucs_status_t ucs_config_names_array_read(const char *buf, void *dest,
                                         const void *arg);
void ucs_config_names_array_write(char *buf, size_t max, const void *src,
                                  const void *arg);
void ucs_config_names_array_help(char *buf, size_t max, const void *arg);
ucs_status_t ucs_config_names_array_clone(const void *src, void *dest,
                                          const void *arg);
void ucs_config_names_array_release(void *ptr, const void *arg);

ucs_status_t ucs_config_allow_list_read(const char *buf, void *dest,
                                        const void *arg);
void ucs_config_allow_list_write(char *buf, size_t max, const void *src,
                                 const void *arg);
void ucs_config_allow_list_help(char *buf, size_t max, const void *arg);
ucs_status_t ucs_config_allow_list_clone(const void *src, void *dest,
                                         const void *arg);
void ucs_config_allow_list_release(void *ptr, const void *arg);

ucs_status_t ucs_config_range_read(const char *buf, void *dest,
                                   const void *arg);
void ucs_config_range_write(char *buf, size_t max, const void *src,
                            const void *arg);
void ucs_config_range_help(char *buf, size_t max, const void *arg);

END_C_DECLS

#endif
