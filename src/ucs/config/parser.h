#ifndef UCS_CONFIG_PARSER_H_
#define UCS_CONFIG_PARSER_H_

/**
 * @file
 * Configuration tables and the parser that fills them. Included by code
 * that declares configuration tables (libuct, transport modules) and by
 * tools that print or edit configurations; the functions may be called
 * from any thread (the registry of tables and the configuration file cache
 * have their own locks), but one options structure must not be filled,
 * changed or released by two threads at once.
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

#include <ucs/config/types.h>
#include <ucs/datastruct/list.h>
#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>
#include <stdio.h>

BEGIN_C_DECLS

/** Environment prefix used when a caller passes NULL. */
#define UCS_DEFAULT_ENV_PREFIX "UCX_"

/** Bits of ucs_config_parser_t::flags. */
enum {
    UCS_CONFIG_PARSER_FLAG_TABLE      = UCS_BIT(0), /**< arg is a sub-table */
    UCS_CONFIG_PARSER_FLAG_DEPRECATED = UCS_BIT(1)  /**< accepted, ignored */
};

/** ucs_config_parser_print_opts() flags */
typedef enum {
    UCS_CONFIG_PRINT_CONFIG = UCS_BIT(0), /**< NAME=value lines */
    UCS_CONFIG_PRINT_HEADER = UCS_BIT(1), /**< a comment block with the
                                               title */
    UCS_CONFIG_PRINT_DOC = UCS_BIT(2),    /**< doc and syntax before each
                                               variable */
    UCS_CONFIG_PRINT_HIDDEN = UCS_BIT(3)  /**< also fields without a doc */
} ucs_config_print_flags_t;

/**
 * A value type. read() parses @a buf into @a dest and touches @a dest only
 * on success; write() formats the value; clone() deep-copies; release()
 * frees what read() or clone() allocated. clone and release are NULL for
 * plain values: the parser then copies @a size bytes and frees nothing.
 * help() describes the accepted syntax (printed after "expected: ").
 */
typedef struct ucs_config_parser {
    /** Parse text into the field; UCS_OK or an error, field untouched on
     *  error. */
    ucs_status_t (*read)(const char *buf, void *dest, const void *arg);
    /** Format the field into a buffer of the given size. */
    void (*write)(char *buf, size_t max, const void *src, const void *arg);
    /** Deep-copy a field value; NULL for plain values. */
    ucs_status_t (*clone)(const void *src, void *dest, const void *arg);
    /** Free what read or clone allocated; NULL for plain values. */
    void (*release)(void *ptr, const void *arg);
    /** Describe the accepted syntax into a buffer. */
    void (*help)(char *buf, size_t max, const void *arg);
    const void *arg; /**< passed to every call: names for enums and
                          bitmaps, the sub-table for tables */
    size_t size;     /**< bytes of the field */
    unsigned flags;  /**< UCS_CONFIG_PARSER_FLAG_* bits */
} ucs_config_parser_t;

/**
 * One row of a configuration table. Tables are arrays terminated by a row
 * whose name is NULL. A NULL or empty doc marks a hidden field (printed only
 * with UCS_CONFIG_PRINT_HIDDEN).
 */
typedef struct ucs_config_field {
    const char *name;           /**< variable name without prefixes */
    const char *dfl_value;      /**< default, parsed like a variable;
                                     for a table field, overrides of
                                     the sub-table's defaults */
    const char *doc;            /**< one-paragraph description */
    size_t offset;              /**< of the value in the options struct */
    ucs_config_parser_t parser; /**< the value type */
} ucs_config_field_t;

/**
 * A table known to the whole process: printed by tools and used to detect
 * unknown UCX_ variables. Register with UCS_CONFIG_REGISTER_TABLE().
 */
typedef struct ucs_config_global_list_entry {
    const char *name;                /**< e.g. "TCP transport" */
    const char *prefix;              /**< e.g. "TCP_", or "" */
    const ucs_config_field_t *table; /**< the table */
    size_t size;                     /**< of the options struct */
    ucs_list_link_t list;            /**< owned by the registry */
} ucs_config_global_list_entry_t;

/**
 * Register a table for the lifetime of the library or module that holds
 * it (constructor/destructor pair). Use at file scope, once per table.
 *
 * @param _table  the table (an array of ucs_config_field_t).
 * @param _name   title used when printing, e.g. "TCP transport".
 * @param _prefix table prefix, e.g. "TCP_", or "".
 * @param _type   the options structure the table fills.
 */
#define UCS_CONFIG_REGISTER_TABLE(_table, _name, _prefix, _type)    \
    static ucs_config_global_list_entry_t _table##_global_entry = { \
        _name, _prefix, _table, sizeof(_type), {NULL, NULL}};       \
    static void UCS_F_CTOR _table##_global_register(void)           \
    {                                                               \
        ucs_config_global_list_add(&_table##_global_entry);         \
    }                                                               \
    static void UCS_F_DTOR _table##_global_unregister(void)         \
    {                                                               \
        ucs_config_global_list_remove(&_table##_global_entry);      \
    }

/* ---- value types --------------------------------------------------------
 * Each macro expands to a ucs_config_parser_t initializer, so a table row is
 * {"SNDBUF", "64k", "Send buffer size", ucs_offsetof(cfg_t, sndbuf),
 *  UCS_CONFIG_TYPE_MEMUNITS}.
 */

/** Value type of a field: char *, owned by the options structure */
#define UCS_CONFIG_TYPE_STRING                                  \
    {                                                           \
        ucs_config_string_read, ucs_config_string_write,        \
            ucs_config_string_clone, ucs_config_string_release, \
            ucs_config_string_help, NULL, sizeof(char *), 0     \
    }

/** Value type of a field: int */
#define UCS_CONFIG_TYPE_INT                                    \
    {                                                          \
        ucs_config_int_read, ucs_config_int_write, NULL, NULL, \
            ucs_config_int_help, NULL, sizeof(int), 0          \
    }

/** Value type of a field: unsigned */
#define UCS_CONFIG_TYPE_UINT                                     \
    {                                                            \
        ucs_config_uint_read, ucs_config_uint_write, NULL, NULL, \
            ucs_config_uint_help, NULL, sizeof(unsigned), 0      \
    }

/** Value type of a field: unsigned long */
#define UCS_CONFIG_TYPE_ULONG                                      \
    {                                                              \
        ucs_config_ulong_read, ucs_config_ulong_write, NULL, NULL, \
            ucs_config_ulong_help, NULL, sizeof(unsigned long), 0  \
    }

/** Value type of a field: unsigned long; "inf" and "auto" give
 *  UCS_ULUNITS_INF and UCS_ULUNITS_AUTO */
#define UCS_CONFIG_TYPE_ULUNITS                                        \
    {                                                                  \
        ucs_config_ulunits_read, ucs_config_ulunits_write, NULL, NULL, \
            ucs_config_ulunits_help, NULL, sizeof(unsigned long), 0    \
    }

/** Value type of a field: double */
#define UCS_CONFIG_TYPE_DOUBLE                                       \
    {                                                                \
        ucs_config_double_read, ucs_config_double_write, NULL, NULL, \
            ucs_config_double_help, NULL, sizeof(double), 0          \
    }

/** Value type of a field: int, 0 or 1: y/n/yes/no/1/0/on/off */
#define UCS_CONFIG_TYPE_BOOL                                     \
    {                                                            \
        ucs_config_bool_read, ucs_config_bool_write, NULL, NULL, \
            ucs_config_bool_help, NULL, sizeof(int), 0           \
    }

/** Value type of a field: ucs_ternary_auto_value_t: yes/no/try */
#define UCS_CONFIG_TYPE_TERNARY                                        \
    {                                                                  \
        ucs_config_ternary_read, ucs_config_ternary_write, NULL, NULL, \
            ucs_config_ternary_help, NULL, sizeof(int), 0              \
    }

/** Value type of a field: ucs_ternary_auto_value_t: yes/no/try/auto */
#define UCS_CONFIG_TYPE_TERNARY_AUTO                                        \
    {                                                                       \
        ucs_config_ternary_auto_read, ucs_config_ternary_write, NULL, NULL, \
            ucs_config_ternary_auto_help, NULL, sizeof(int), 0              \
    }

/** unsigned index into a NULL-terminated name list, matched ignoring
 *  case.
 *  @param _names the names, indexed by value. */
#define UCS_CONFIG_TYPE_ENUM(_names)                             \
    {                                                            \
        ucs_config_enum_read, ucs_config_enum_write, NULL, NULL, \
            ucs_config_enum_help, _names, sizeof(unsigned), 0    \
    }

/** unsigned with bit i set for each listed name i ("a,c").
 *  @param _names the NULL-terminated names, indexed by bit number. */
#define UCS_CONFIG_TYPE_BITMAP(_names)                               \
    {                                                                \
        ucs_config_bitmap_read, ucs_config_bitmap_write, NULL, NULL, \
            ucs_config_bitmap_help, _names, sizeof(unsigned), 0      \
    }

/** size_t with b/k/kb/m/mb/g/gb/t/tb suffixes (powers of 1024),
 *  "inf" and "auto" give UCS_MEMUNITS_INF/_AUTO */
#define UCS_CONFIG_TYPE_MEMUNITS                                         \
    {                                                                    \
        ucs_config_memunits_read, ucs_config_memunits_write, NULL, NULL, \
            ucs_config_memunits_help, NULL, sizeof(size_t), 0            \
    }

/** Value type of a field: double seconds with s/ms/us/ns suffixes (no
 *  suffix: seconds), or "inf" */
#define UCS_CONFIG_TYPE_TIME                                     \
    {                                                            \
        ucs_config_time_read, ucs_config_time_write, NULL, NULL, \
            ucs_config_time_help, NULL, sizeof(double), 0        \
    }

/** double bytes per second: "10Gbps", "1GBs", "100MB/s", "auto" gives
 *  UCS_CONFIG_BW_AUTO. K/M/G/T are powers of 1024; b is bits, B bytes. */
#define UCS_CONFIG_TYPE_BW                                   \
    {                                                        \
        ucs_config_bw_read, ucs_config_bw_write, NULL, NULL, \
            ucs_config_bw_help, NULL, sizeof(double), 0      \
    }

/** Value type of a field: ucs_config_names_array_t from a
 *  comma-separated list */
#define UCS_CONFIG_TYPE_STRING_ARRAY                                      \
    {                                                                     \
        ucs_config_names_array_read, ucs_config_names_array_write,        \
            ucs_config_names_array_clone, ucs_config_names_array_release, \
            ucs_config_names_array_help, NULL,                            \
            sizeof(ucs_config_names_array_t), 0                           \
    }

/** Value type of a field: ucs_config_allow_list_t: "all", "a,b", or
 *  "^a,b" (all except a and b) */
#define UCS_CONFIG_TYPE_ALLOW_LIST                                             \
    {                                                                          \
        ucs_config_allow_list_read, ucs_config_allow_list_write,               \
            ucs_config_allow_list_clone, ucs_config_allow_list_release,        \
            ucs_config_allow_list_help, NULL, sizeof(ucs_config_allow_list_t), \
            0                                                                  \
    }

/** Value type of a field: ucs_range_spec_t: "1000-2000" or "1000" */
#define UCS_CONFIG_TYPE_RANGE                                        \
    {                                                                \
        ucs_config_range_read, ucs_config_range_write, NULL, NULL,   \
            ucs_config_range_help, NULL, sizeof(ucs_range_spec_t), 0 \
    }

/** Embedded table; its offsets are relative to the field's offset.
 *  @param _sub_table the embedded table. */
#define UCS_CONFIG_TYPE_TABLE(_sub_table)            \
    {                                                \
        NULL, NULL, NULL, NULL, NULL, _sub_table, 0, \
            UCS_CONFIG_PARSER_FLAG_TABLE             \
    }

/** A removed variable: setting it draws a warning and has no effect. */
#define UCS_CONFIG_TYPE_DEPRECATED             \
    {                                          \
        NULL, NULL, NULL, NULL, NULL, NULL, 0, \
            UCS_CONFIG_PARSER_FLAG_DEPRECATED  \
    }

/* ---- parser API ---------------------------------------------------------- */

/**
 * Fill @a opts from defaults, configuration file and environment.
 *
 * @param [out] opts         the options structure; its previous contents
 *                           are overwritten, not released. On success,
 *                           release it with ucs_config_parser_release_opts().
 * @param [in] fields        the table.
 * @param [in] env_prefix    "UCX_" when NULL.
 * @param [in] table_prefix  e.g. "TCP_"; NULL or "" for none.
 * @param [in] ignore_errors if set, a bad value is reported and the default
 *                           kept; otherwise the call fails.
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
 * configuration file.
 *
 * @param [out] opts         the options structure (see
 *                           ucs_config_parser_fill_opts()).
 * @param [in] fields        the table.
 * @param [in] env_prefix    "UCX_" when NULL.
 * @param [in] table_prefix  e.g. "TCP_"; NULL or "" for none.
 * @param [in] filename      an extra configuration file, or NULL.
 * @param [in] ignore_errors as for ucs_config_parser_fill_opts().
 * @return as ucs_config_parser_fill_opts(), and UCS_ERR_IO_ERROR if
 *         @a filename cannot be read.
 */
ucs_status_t ucs_config_parser_fill_opts_file(
    void *opts, const ucs_config_field_t *fields, const char *env_prefix,
    const char *table_prefix, const char *filename, int ignore_errors);

/**
 * Free what a fill or clone allocated in @a opts (not @a opts itself).
 *
 * @param [in,out] opts   a filled options structure.
 * @param [in]     fields the table it was filled with.
 */
void ucs_config_parser_release_opts(void *opts,
                                    const ucs_config_field_t *fields);

/**
 * Deep-copy an options structure.
 *
 * @param [in]  src    a filled options structure.
 * @param [out] dst    receives the copy; release it with
 *                     ucs_config_parser_release_opts(). On failure it holds
 *                     nothing to release.
 * @param [in]  fields the table of both.
 * @return UCS_OK or UCS_ERR_NO_MEMORY (the error of a value's clone).
 */
ucs_status_t ucs_config_parser_clone_opts(const void *src, void *dst,
                                          const ucs_config_field_t *fields);

/**
 * Format the value of one field.
 *
 * @param [in]  opts   a filled options structure.
 * @param [in]  fields its table.
 * @param [in]  name   field name without prefix, e.g. "SNDBUF"; embedded
 *                     tables are searched, and "IB_SEG_SIZE" finds SEG_SIZE
 *                     of a table field named "IB_".
 * @param [out] value  receives the text, or NULL to test whether the name
 *                     exists.
 * @param [in]  max    size of @a value.
 * @return UCS_OK, or UCS_ERR_NO_ELEM for an unknown or deprecated name.
 */
ucs_status_t ucs_config_parser_get_value(void *opts,
                                         const ucs_config_field_t *fields,
                                         const char *name, char *value,
                                         size_t max);

/**
 * Parse a value into one field, replacing (and releasing) the old value.
 *
 * @param [in,out] opts   a filled options structure.
 * @param [in]     fields its table.
 * @param [in]     name   field name, as for ucs_config_parser_get_value().
 * @param [in]     value  the text to parse.
 * @return UCS_OK (also for a deprecated name, with a warning);
 *         UCS_ERR_NO_ELEM for an unknown name; UCS_ERR_INVALID_PARAM (with
 *         an error line) for a bad value or UCS_ERR_NO_MEMORY, in which
 *         case the old value is kept.
 */
ucs_status_t ucs_config_parser_set_value(void *opts,
                                         const ucs_config_field_t *fields,
                                         const char *name, const char *value);

/**
 * Print an options structure. Variable names are env_prefix + table_prefix
 * + name, e.g. UCX_TCP_SNDBUF=64k.
 *
 * @param [in] stream       where to print.
 * @param [in] title        title of the header block.
 * @param [in] opts         a filled options structure.
 * @param [in] fields       its table.
 * @param [in] table_prefix e.g. "TCP_", or NULL.
 * @param [in] env_prefix   "UCX_" when NULL.
 * @param [in] flags        a mask of ucs_config_print_flags_t.
 */
void ucs_config_parser_print_opts(FILE *stream, const char *title,
                                  const void *opts,
                                  const ucs_config_field_t *fields,
                                  const char *table_prefix,
                                  const char *env_prefix, unsigned flags);

/**
 * Print every registered table with its current values (defaults, file,
 * environment). A bad value is reported (one error line naming the
 * variable, the value and the accepted form) and its default printed.
 *
 * @param [in] stream        where to print.
 * @param [in] env_prefix    "UCX_" when NULL.
 * @param [in] flags         a mask of ucs_config_print_flags_t.
 * @param [in] filter_prefix when not NULL, selects the tables whose prefix
 *                           starts with it ("TCP_"; "" selects all).
 * @return UCS_OK; UCS_ERR_INVALID_PARAM if a value was bad; another error
 *         (e.g. UCS_ERR_NO_MEMORY) if a table could not be read (a comment
 *         line says which).
 */
ucs_status_t ucs_config_parser_print_all_opts(FILE *stream,
                                              const char *env_prefix,
                                              unsigned flags,
                                              const char *filter_prefix);

/**
 * Warn once per process about each environment variable that starts with
 * the prefix and names no field of a registered table (with any of its
 * prefixes), suggesting the closest known name. Call after the modules are
 * loaded, so their tables are registered. Silenced by
 * UCX_WARN_UNUSED_ENV_VARS=n. Known without a table: UCX_CONFIG_FILE.
 *
 * @param [in] env_prefix "UCX_" when NULL.
 */
void ucs_config_parser_warn_unused_env_vars_once(const char *env_prefix);

/**
 * The check of ucs_config_parser_warn_unused_env_vars_once(), made on
 * every call.
 *
 * @param [in] env_prefix "UCX_" when NULL.
 */
void ucs_config_parser_warn_unused_env_vars(const char *env_prefix);

/**
 * Forget the cached configuration file and read it again on next use
 * (after UCX_CONFIG_FILE changed). Meant for tools and tests.
 */
void ucs_config_parser_reload_file(void);

/**
 * Add a table to the registry (what UCS_CONFIG_REGISTER_TABLE() does at
 * load time).
 *
 * @param [in] entry the entry; must stay valid until removed.
 */
void ucs_config_global_list_add(ucs_config_global_list_entry_t *entry);
/**
 * Remove a table from the registry; harmless if it is not registered.
 *
 * @param [in] entry the entry given to ucs_config_global_list_add().
 */
void ucs_config_global_list_remove(ucs_config_global_list_entry_t *entry);

/**
 * Call @a cb for each registered table, in registration order, with the
 * registry locked: @a cb must not register or remove tables.
 *
 * @param [in] cb  called with each entry and @a arg.
 * @param [in] arg passed to @a cb.
 */
void ucs_config_global_list_for_each(
    void (*cb)(const ucs_config_global_list_entry_t *entry, void *arg),
    void *arg);

/**
 * Find a string in a names array (exact, case-sensitive match).
 *
 * @param [in] array the array.
 * @param [in] str   the string to find.
 * @return the index of the first match, or -1.
 */
int ucs_config_names_search(const ucs_config_names_array_t *array,
                            const char *str);

/**
 * Whether a name passes an allow list ("all", "a,b", "^a,b").
 *
 * @param [in] list the allow list.
 * @param [in] name the name to test.
 * @return 1 if allowed, 0 if not.
 */
int ucs_config_allow_list_is_allowed(const ucs_config_allow_list_t *list,
                                     const char *name);

/* ---- type implementations (used by the UCS_CONFIG_TYPE_* macros) --------- */

/**
 * Parse a string (char *) (UCS_CONFIG_TYPE_* read operation).
 *
 * @param [in]  buf  the text.
 * @param [out] dest the field; written only on success.
 * @param [in]  arg  unused (NULL).
 * @return UCS_OK, or UCS_ERR_NO_MEMORY.
 */
ucs_status_t ucs_config_string_read(const char *buf, void *dest,
                                    const void *arg);
/**
 * Format a string (char *) (UCS_CONFIG_TYPE_* write operation).
 *
 * @param [out] buf receives the NUL-terminated text.
 * @param [in]  max size of @a buf.
 * @param [in]  src the field.
 * @param [in]  arg unused (NULL).
 */
void ucs_config_string_write(char *buf, size_t max, const void *src,
                             const void *arg);
/**
 * Describe the syntax of a string (char *) (UCS_CONFIG_TYPE_* help).
 *
 * @param [out] buf receives the NUL-terminated text.
 * @param [in]  max size of @a buf.
 * @param [in]  arg unused (NULL).
 */
void ucs_config_string_help(char *buf, size_t max, const void *arg);
/**
 * Deep-copy a string (char *) (UCS_CONFIG_TYPE_* clone operation).
 *
 * @param [in]  src  the field to copy.
 * @param [out] dest the copy; written only on success.
 * @param [in]  arg  unused (NULL).
 * @return UCS_OK, or UCS_ERR_NO_MEMORY.
 */
ucs_status_t ucs_config_string_clone(const void *src, void *dest,
                                     const void *arg);
/**
 * Free what read or clone allocated for a string (char *).
 *
 * @param [in,out] ptr the field.
 * @param [in]     arg unused (NULL).
 */
void ucs_config_string_release(void *ptr, const void *arg);

/**
 * Parse an int (UCS_CONFIG_TYPE_* read operation).
 *
 * @param [in]  buf  the text.
 * @param [out] dest the field; written only on success.
 * @param [in]  arg  unused (NULL).
 * @return UCS_OK, or UCS_ERR_INVALID_PARAM.
 */
ucs_status_t ucs_config_int_read(const char *buf, void *dest, const void *arg);
/**
 * Format an int (UCS_CONFIG_TYPE_* write operation).
 *
 * @param [out] buf receives the NUL-terminated text.
 * @param [in]  max size of @a buf.
 * @param [in]  src the field.
 * @param [in]  arg unused (NULL).
 */
void ucs_config_int_write(char *buf, size_t max, const void *src,
                          const void *arg);
/**
 * Describe the syntax of an int (UCS_CONFIG_TYPE_* help).
 *
 * @param [out] buf receives the NUL-terminated text.
 * @param [in]  max size of @a buf.
 * @param [in]  arg unused (NULL).
 */
void ucs_config_int_help(char *buf, size_t max, const void *arg);

/**
 * Parse an unsigned (UCS_CONFIG_TYPE_* read operation).
 *
 * @param [in]  buf  the text.
 * @param [out] dest the field; written only on success.
 * @param [in]  arg  unused (NULL).
 * @return UCS_OK, or UCS_ERR_INVALID_PARAM.
 */
ucs_status_t ucs_config_uint_read(const char *buf, void *dest, const void *arg);
/**
 * Format an unsigned (UCS_CONFIG_TYPE_* write operation).
 *
 * @param [out] buf receives the NUL-terminated text.
 * @param [in]  max size of @a buf.
 * @param [in]  src the field.
 * @param [in]  arg unused (NULL).
 */
void ucs_config_uint_write(char *buf, size_t max, const void *src,
                           const void *arg);
/**
 * Describe the syntax of an unsigned (UCS_CONFIG_TYPE_* help).
 *
 * @param [out] buf receives the NUL-terminated text.
 * @param [in]  max size of @a buf.
 * @param [in]  arg unused (NULL).
 */
void ucs_config_uint_help(char *buf, size_t max, const void *arg);

/**
 * Parse an unsigned long (UCS_CONFIG_TYPE_* read operation).
 *
 * @param [in]  buf  the text.
 * @param [out] dest the field; written only on success.
 * @param [in]  arg  unused (NULL).
 * @return UCS_OK, or UCS_ERR_INVALID_PARAM.
 */
ucs_status_t ucs_config_ulong_read(const char *buf, void *dest,
                                   const void *arg);
/**
 * Format an unsigned long (UCS_CONFIG_TYPE_* write operation).
 *
 * @param [out] buf receives the NUL-terminated text.
 * @param [in]  max size of @a buf.
 * @param [in]  src the field.
 * @param [in]  arg unused (NULL).
 */
void ucs_config_ulong_write(char *buf, size_t max, const void *src,
                            const void *arg);
/**
 * Describe the syntax of an unsigned long (UCS_CONFIG_TYPE_* help).
 *
 * @param [out] buf receives the NUL-terminated text.
 * @param [in]  max size of @a buf.
 * @param [in]  arg unused (NULL).
 */
void ucs_config_ulong_help(char *buf, size_t max, const void *arg);

/**
 * Parse an unsigned long or "inf"/"auto" (UCS_CONFIG_TYPE_* read operation).
 *
 * @param [in]  buf  the text.
 * @param [out] dest the field; written only on success.
 * @param [in]  arg  unused (NULL).
 * @return UCS_OK, or UCS_ERR_INVALID_PARAM.
 */
ucs_status_t ucs_config_ulunits_read(const char *buf, void *dest,
                                     const void *arg);
/**
 * Format an unsigned long or "inf"/"auto" (UCS_CONFIG_TYPE_* write operation).
 *
 * @param [out] buf receives the NUL-terminated text.
 * @param [in]  max size of @a buf.
 * @param [in]  src the field.
 * @param [in]  arg unused (NULL).
 */
void ucs_config_ulunits_write(char *buf, size_t max, const void *src,
                              const void *arg);
/**
 * Describe the syntax of an unsigned long or "inf"/"auto" (UCS_CONFIG_TYPE_*
 * help).
 *
 * @param [out] buf receives the NUL-terminated text.
 * @param [in]  max size of @a buf.
 * @param [in]  arg unused (NULL).
 */
void ucs_config_ulunits_help(char *buf, size_t max, const void *arg);

/**
 * Parse a double (UCS_CONFIG_TYPE_* read operation).
 *
 * @param [in]  buf  the text.
 * @param [out] dest the field; written only on success.
 * @param [in]  arg  unused (NULL).
 * @return UCS_OK, or UCS_ERR_INVALID_PARAM.
 */
ucs_status_t ucs_config_double_read(const char *buf, void *dest,
                                    const void *arg);
/**
 * Format a double (UCS_CONFIG_TYPE_* write operation).
 *
 * @param [out] buf receives the NUL-terminated text.
 * @param [in]  max size of @a buf.
 * @param [in]  src the field.
 * @param [in]  arg unused (NULL).
 */
void ucs_config_double_write(char *buf, size_t max, const void *src,
                             const void *arg);
/**
 * Describe the syntax of a double (UCS_CONFIG_TYPE_* help).
 *
 * @param [out] buf receives the NUL-terminated text.
 * @param [in]  max size of @a buf.
 * @param [in]  arg unused (NULL).
 */
void ucs_config_double_help(char *buf, size_t max, const void *arg);

/**
 * Parse a boolean (int 0 or 1) (UCS_CONFIG_TYPE_* read operation).
 *
 * @param [in]  buf  the text.
 * @param [out] dest the field; written only on success.
 * @param [in]  arg  unused (NULL).
 * @return UCS_OK, or UCS_ERR_INVALID_PARAM.
 */
ucs_status_t ucs_config_bool_read(const char *buf, void *dest, const void *arg);
/**
 * Format a boolean (int 0 or 1) (UCS_CONFIG_TYPE_* write operation).
 *
 * @param [out] buf receives the NUL-terminated text.
 * @param [in]  max size of @a buf.
 * @param [in]  src the field.
 * @param [in]  arg unused (NULL).
 */
void ucs_config_bool_write(char *buf, size_t max, const void *src,
                           const void *arg);
/**
 * Describe the syntax of a boolean (int 0 or 1) (UCS_CONFIG_TYPE_* help).
 *
 * @param [out] buf receives the NUL-terminated text.
 * @param [in]  max size of @a buf.
 * @param [in]  arg unused (NULL).
 */
void ucs_config_bool_help(char *buf, size_t max, const void *arg);

/**
 * Parse a yes/no/try value (ucs_ternary_auto_value_t) (UCS_CONFIG_TYPE_* read
 * operation).
 *
 * @param [in]  buf  the text.
 * @param [out] dest the field; written only on success.
 * @param [in]  arg  unused (NULL).
 * @return UCS_OK, or UCS_ERR_INVALID_PARAM.
 */
ucs_status_t ucs_config_ternary_read(const char *buf, void *dest,
                                     const void *arg);
/**
 * Format a yes/no/try value (ucs_ternary_auto_value_t) (UCS_CONFIG_TYPE_*
 * write operation).
 *
 * @param [out] buf receives the NUL-terminated text.
 * @param [in]  max size of @a buf.
 * @param [in]  src the field.
 * @param [in]  arg unused (NULL).
 */
void ucs_config_ternary_write(char *buf, size_t max, const void *src,
                              const void *arg);
/**
 * Describe the syntax of a yes/no/try value (ucs_ternary_auto_value_t)
 * (UCS_CONFIG_TYPE_* help).
 *
 * @param [out] buf receives the NUL-terminated text.
 * @param [in]  max size of @a buf.
 * @param [in]  arg unused (NULL).
 */
void ucs_config_ternary_help(char *buf, size_t max, const void *arg);
/**
 * Parse a yes/no/try/auto value (ucs_ternary_auto_value_t) (UCS_CONFIG_TYPE_*
 * read operation).
 *
 * @param [in]  buf  the text.
 * @param [out] dest the field; written only on success.
 * @param [in]  arg  unused (NULL).
 * @return UCS_OK, or UCS_ERR_INVALID_PARAM.
 */
ucs_status_t ucs_config_ternary_auto_read(const char *buf, void *dest,
                                          const void *arg);
/**
 * Describe the syntax of a yes/no/try/auto value (ucs_ternary_auto_value_t)
 * (UCS_CONFIG_TYPE_* help).
 *
 * @param [out] buf receives the NUL-terminated text.
 * @param [in]  max size of @a buf.
 * @param [in]  arg unused (NULL).
 */
void ucs_config_ternary_auto_help(char *buf, size_t max, const void *arg);

/**
 * Parse an enum value (unsigned index into the names) (UCS_CONFIG_TYPE_* read
 * operation).
 *
 * @param [in]  buf  the text.
 * @param [out] dest the field; written only on success.
 * @param [in]  arg  the NULL-terminated names.
 * @return UCS_OK, or UCS_ERR_INVALID_PARAM.
 */
ucs_status_t ucs_config_enum_read(const char *buf, void *dest, const void *arg);
/**
 * Format an enum value (unsigned index into the names) (UCS_CONFIG_TYPE_*
 * write operation).
 *
 * @param [out] buf receives the NUL-terminated text.
 * @param [in]  max size of @a buf.
 * @param [in]  src the field.
 * @param [in]  arg the NULL-terminated names.
 */
void ucs_config_enum_write(char *buf, size_t max, const void *src,
                           const void *arg);
/**
 * Describe the syntax of an enum value (unsigned index into the names)
 * (UCS_CONFIG_TYPE_* help).
 *
 * @param [out] buf receives the NUL-terminated text.
 * @param [in]  max size of @a buf.
 * @param [in]  arg the NULL-terminated names.
 */
void ucs_config_enum_help(char *buf, size_t max, const void *arg);

/**
 * Parse a bitmap of names (unsigned) (UCS_CONFIG_TYPE_* read operation).
 *
 * @param [in]  buf  the text.
 * @param [out] dest the field; written only on success.
 * @param [in]  arg  the NULL-terminated names.
 * @return UCS_OK, or UCS_ERR_INVALID_PARAM.
 */
ucs_status_t ucs_config_bitmap_read(const char *buf, void *dest,
                                    const void *arg);
/**
 * Format a bitmap of names (unsigned) (UCS_CONFIG_TYPE_* write operation).
 *
 * @param [out] buf receives the NUL-terminated text.
 * @param [in]  max size of @a buf.
 * @param [in]  src the field.
 * @param [in]  arg the NULL-terminated names.
 */
void ucs_config_bitmap_write(char *buf, size_t max, const void *src,
                             const void *arg);
/**
 * Describe the syntax of a bitmap of names (unsigned) (UCS_CONFIG_TYPE_* help).
 *
 * @param [out] buf receives the NUL-terminated text.
 * @param [in]  max size of @a buf.
 * @param [in]  arg the NULL-terminated names.
 */
void ucs_config_bitmap_help(char *buf, size_t max, const void *arg);

/**
 * Parse a memory size (size_t) with units (UCS_CONFIG_TYPE_* read operation).
 *
 * @param [in]  buf  the text.
 * @param [out] dest the field; written only on success.
 * @param [in]  arg  unused (NULL).
 * @return UCS_OK, or UCS_ERR_INVALID_PARAM.
 */
ucs_status_t ucs_config_memunits_read(const char *buf, void *dest,
                                      const void *arg);
/**
 * Format a memory size (size_t) with units (UCS_CONFIG_TYPE_* write operation).
 *
 * @param [out] buf receives the NUL-terminated text.
 * @param [in]  max size of @a buf.
 * @param [in]  src the field.
 * @param [in]  arg unused (NULL).
 */
void ucs_config_memunits_write(char *buf, size_t max, const void *src,
                               const void *arg);
/**
 * Describe the syntax of a memory size (size_t) with units (UCS_CONFIG_TYPE_*
 * help).
 *
 * @param [out] buf receives the NUL-terminated text.
 * @param [in]  max size of @a buf.
 * @param [in]  arg unused (NULL).
 */
void ucs_config_memunits_help(char *buf, size_t max, const void *arg);

/**
 * Parse a time in seconds (double) with units (UCS_CONFIG_TYPE_* read
 * operation).
 *
 * @param [in]  buf  the text.
 * @param [out] dest the field; written only on success.
 * @param [in]  arg  unused (NULL).
 * @return UCS_OK, or UCS_ERR_INVALID_PARAM.
 */
ucs_status_t ucs_config_time_read(const char *buf, void *dest, const void *arg);
/**
 * Format a time in seconds (double) with units (UCS_CONFIG_TYPE_* write
 * operation).
 *
 * @param [out] buf receives the NUL-terminated text.
 * @param [in]  max size of @a buf.
 * @param [in]  src the field.
 * @param [in]  arg unused (NULL).
 */
void ucs_config_time_write(char *buf, size_t max, const void *src,
                           const void *arg);
/**
 * Describe the syntax of a time in seconds (double) with units
 * (UCS_CONFIG_TYPE_* help).
 *
 * @param [out] buf receives the NUL-terminated text.
 * @param [in]  max size of @a buf.
 * @param [in]  arg unused (NULL).
 */
void ucs_config_time_help(char *buf, size_t max, const void *arg);

/**
 * Parse a bandwidth in bytes per second (double) (UCS_CONFIG_TYPE_* read
 * operation).
 *
 * @param [in]  buf  the text.
 * @param [out] dest the field; written only on success.
 * @param [in]  arg  unused (NULL).
 * @return UCS_OK, or UCS_ERR_INVALID_PARAM.
 */
ucs_status_t ucs_config_bw_read(const char *buf, void *dest, const void *arg);
/**
 * Format a bandwidth in bytes per second (double) (UCS_CONFIG_TYPE_* write
 * operation).
 *
 * @param [out] buf receives the NUL-terminated text.
 * @param [in]  max size of @a buf.
 * @param [in]  src the field.
 * @param [in]  arg unused (NULL).
 */
void ucs_config_bw_write(char *buf, size_t max, const void *src,
                         const void *arg);
/**
 * Describe the syntax of a bandwidth in bytes per second (double)
 * (UCS_CONFIG_TYPE_* help).
 *
 * @param [out] buf receives the NUL-terminated text.
 * @param [in]  max size of @a buf.
 * @param [in]  arg unused (NULL).
 */
void ucs_config_bw_help(char *buf, size_t max, const void *arg);

/**
 * Parse a comma-separated list (ucs_config_names_array_t) (UCS_CONFIG_TYPE_*
 * read operation).
 *
 * @param [in]  buf  the text.
 * @param [out] dest the field; written only on success.
 * @param [in]  arg  unused (NULL).
 * @return UCS_OK, or UCS_ERR_INVALID_PARAM or UCS_ERR_NO_MEMORY.
 */
ucs_status_t ucs_config_names_array_read(const char *buf, void *dest,
                                         const void *arg);
/**
 * Format a comma-separated list (ucs_config_names_array_t) (UCS_CONFIG_TYPE_*
 * write operation).
 *
 * @param [out] buf receives the NUL-terminated text.
 * @param [in]  max size of @a buf.
 * @param [in]  src the field.
 * @param [in]  arg unused (NULL).
 */
void ucs_config_names_array_write(char *buf, size_t max, const void *src,
                                  const void *arg);
/**
 * Describe the syntax of a comma-separated list (ucs_config_names_array_t)
 * (UCS_CONFIG_TYPE_* help).
 *
 * @param [out] buf receives the NUL-terminated text.
 * @param [in]  max size of @a buf.
 * @param [in]  arg unused (NULL).
 */
void ucs_config_names_array_help(char *buf, size_t max, const void *arg);
/**
 * Deep-copy a comma-separated list (ucs_config_names_array_t)
 * (UCS_CONFIG_TYPE_* clone operation).
 *
 * @param [in]  src  the field to copy.
 * @param [out] dest the copy; written only on success.
 * @param [in]  arg  unused (NULL).
 * @return UCS_OK, or UCS_ERR_NO_MEMORY.
 */
ucs_status_t ucs_config_names_array_clone(const void *src, void *dest,
                                          const void *arg);
/**
 * Free what read or clone allocated for a comma-separated list
 * (ucs_config_names_array_t).
 *
 * @param [in,out] ptr the field.
 * @param [in]     arg unused (NULL).
 */
void ucs_config_names_array_release(void *ptr, const void *arg);

/**
 * Parse an allow list (ucs_config_allow_list_t) (UCS_CONFIG_TYPE_* read
 * operation).
 *
 * @param [in]  buf  the text.
 * @param [out] dest the field; written only on success.
 * @param [in]  arg  unused (NULL).
 * @return UCS_OK, or UCS_ERR_INVALID_PARAM or UCS_ERR_NO_MEMORY.
 */
ucs_status_t ucs_config_allow_list_read(const char *buf, void *dest,
                                        const void *arg);
/**
 * Format an allow list (ucs_config_allow_list_t) (UCS_CONFIG_TYPE_* write
 * operation).
 *
 * @param [out] buf receives the NUL-terminated text.
 * @param [in]  max size of @a buf.
 * @param [in]  src the field.
 * @param [in]  arg unused (NULL).
 */
void ucs_config_allow_list_write(char *buf, size_t max, const void *src,
                                 const void *arg);
/**
 * Describe the syntax of an allow list (ucs_config_allow_list_t)
 * (UCS_CONFIG_TYPE_* help).
 *
 * @param [out] buf receives the NUL-terminated text.
 * @param [in]  max size of @a buf.
 * @param [in]  arg unused (NULL).
 */
void ucs_config_allow_list_help(char *buf, size_t max, const void *arg);
/**
 * Deep-copy an allow list (ucs_config_allow_list_t) (UCS_CONFIG_TYPE_* clone
 * operation).
 *
 * @param [in]  src  the field to copy.
 * @param [out] dest the copy; written only on success.
 * @param [in]  arg  unused (NULL).
 * @return UCS_OK, or UCS_ERR_NO_MEMORY.
 */
ucs_status_t ucs_config_allow_list_clone(const void *src, void *dest,
                                         const void *arg);
/**
 * Free what read or clone allocated for an allow list
 * (ucs_config_allow_list_t).
 *
 * @param [in,out] ptr the field.
 * @param [in]     arg unused (NULL).
 */
void ucs_config_allow_list_release(void *ptr, const void *arg);

/**
 * Parse a range (ucs_range_spec_t) (UCS_CONFIG_TYPE_* read operation).
 *
 * @param [in]  buf  the text.
 * @param [out] dest the field; written only on success.
 * @param [in]  arg  unused (NULL).
 * @return UCS_OK, or UCS_ERR_INVALID_PARAM.
 */
ucs_status_t ucs_config_range_read(const char *buf, void *dest,
                                   const void *arg);
/**
 * Format a range (ucs_range_spec_t) (UCS_CONFIG_TYPE_* write operation).
 *
 * @param [out] buf receives the NUL-terminated text.
 * @param [in]  max size of @a buf.
 * @param [in]  src the field.
 * @param [in]  arg unused (NULL).
 */
void ucs_config_range_write(char *buf, size_t max, const void *src,
                            const void *arg);
/**
 * Describe the syntax of a range (ucs_range_spec_t) (UCS_CONFIG_TYPE_* help).
 *
 * @param [out] buf receives the NUL-terminated text.
 * @param [in]  max size of @a buf.
 * @param [in]  arg unused (NULL).
 */
void ucs_config_range_help(char *buf, size_t max, const void *arg);

END_C_DECLS

#endif
