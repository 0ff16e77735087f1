/**
 * @file
 * String helpers under the names UCX programs use: bounded formatting and
 * copying that always terminate the result, memory-size strings ("4K",
 * "inf", "auto") in both directions, trimming, hex dumps, flag and bit
 * mask names, splitting, and path helpers.
 *
 * Implemented in libucs (src/ucs/sys/string.c). Every function is
 * reentrant and touches only the buffers it is given, so any thread may
 * call any of them at any time. Functions that write into a caller's
 * buffer of size @a max write at most @a max bytes, terminating with '\0'
 * whenever @a max is not 0. Included by applications; the memory-units
 * parser is shared with the configuration parser (UCS_CONFIG_TYPE_MEMUNITS
 * accepts the same strings).
 */
#ifndef UCS_SYS_STRING_H_
#define UCS_SYS_STRING_H_

#include <ucs/config/types.h>
#include <ucs/datastruct/string_buffer.h>
#include <ucs/sys/compiler_def.h>
#include <ucs/sys/math.h>
#include <ucs/type/status.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

BEGIN_C_DECLS

/** The word that stands for an unlimited numeric value ("inf"). */
#define UCS_NUMERIC_INF_STR "inf"

/** The word that lets the library choose a value ("auto"). */
#define UCS_VALUE_AUTO_STR "auto"

/** 16-bit hexadecimal value meaning "auto". */
#define UCS_HEXUNITS_AUTO ((uint16_t)-2)

/**
 * Suffixes ucs_memunits_to_str() appends for each power of 1024: "", "K",
 * "M", "G", "T", then NULL.
 */
extern const char *ucs_memunits_suffixes[];

/**
 * Turn a path relative to the working directory into an absolute one.
 * The path is not resolved further (no symbolic links, no "..").
 *
 * @param [in]  path      Path; copied unchanged when it starts with '/',
 *                        or when the working directory is unknown.
 * @param [out] fullpath  Receives the absolute path, truncated to fit.
 * @param [in]  max       Size of @a fullpath.
 */
void ucs_expand_path(const char *path, char *fullpath, size_t max);

/**
 * Expand a file name template: "%p" becomes the process id, "%h" the host
 * name, "%%" a single '%'; any other character is copied.
 *
 * @param [in]  tmpl  Template.
 * @param [out] buf   Receives the file name, truncated to fit.
 * @param [in]  max   Size of @a buf.
 */
void ucs_fill_filename_template(const char *tmpl, char *buf, size_t max);

/**
 * Remove trailing path components in place, as dirname(3) repeated.
 *
 * @param [in,out] path        Path to shorten; may be modified.
 * @param [in]     num_layers  How many components to remove (0 returns
 *                             @a path unchanged).
 * @return The shortened path: @a path itself or a static string such as
 *         "." or "/" (as dirname(3) returns).
 */
char *ucs_dirname(char *path, int num_layers);

/**
 * Format into a buffer, fill the unused rest of it with '\0' and always
 * terminate it (useful for fixed-size fields sent over the wire).
 *
 * @param [out] buf   Buffer; untouched when @a size is 0.
 * @param [in]  size  Size of @a buf.
 * @param [in]  fmt   printf(3) format, followed by its arguments.
 */
void ucs_snprintf_zero(char *buf, size_t size, const char *fmt, ...)
    UCS_F_PRINTF(3, 4);

/**
 * Copy a string like strncpy(3) (the rest of the buffer is filled with
 * '\0') but always terminate: at most @a max - 1 characters are copied.
 *
 * @param [out] dest  Buffer; untouched when @a max is 0.
 * @param [in]  src   String to copy.
 * @param [in]  max   Size of @a dest.
 */
void ucs_strncpy_zero(char *dest, const char *src, size_t max);

/**
 * Pack the first 7 characters of a string into a number, for use as a
 * short identifier (the 8th byte is always 0).
 *
 * @param [in] str  String.
 * @return The characters in memory order, zero-padded.
 */
uint64_t ucs_string_to_id(const char *str);

/**
 * Write a size in bytes with the largest unit that divides it exactly:
 * 4096 gives "4K", 1536 gives "1536", UCS_MEMUNITS_INF "inf" and
 * UCS_MEMUNITS_AUTO "auto". ucs_str_to_memunits() reads every result back.
 *
 * @param [in]  value  Size in bytes.
 * @param [out] buf    Receives the string, truncated to fit.
 * @param [in]  max    Size of @a buf.
 * @return @a buf.
 */
char *ucs_memunits_to_str(size_t value, char *buf, size_t max);

/**
 * Write a range of sizes as "start..end" (each as ucs_memunits_to_str()
 * writes it), or a single size when both ends are equal.
 *
 * @param [in]  range_start  First size of the range.
 * @param [in]  range_end    Last size of the range.
 * @param [out] buf          Receives the string, truncated to fit.
 * @param [in]  max          Size of @a buf.
 * @return @a buf.
 */
const char *ucs_memunits_range_str(size_t range_start, size_t range_end,
                                   char *buf, size_t max);

/**
 * Read a size: a decimal number with an optional unit b, k, m, g or t
 * (each optionally followed by b; case is ignored), or "inf" or "auto".
 *
 * @param [in]  buf   String, e.g. "64", "8k", "2MB", "inf".
 * @param [out] dest  A size_t that receives the size in bytes,
 *                    UCS_MEMUNITS_INF or UCS_MEMUNITS_AUTO; set only on
 *                    success.
 * @return UCS_OK, or UCS_ERR_INVALID_PARAM when the string is not a size
 *         or the size does not fit below UCS_MEMUNITS_AUTO.
 */
ucs_status_t ucs_str_to_memunits(const char *buf, void *dest);

/**
 * Value of a memory unit letter.
 *
 * @param [in] prefix  'B', 'K', 'M', 'G' or 'T' (either case).
 * @return 1, 2^10, 2^20, 2^30 or 2^40; 0 for any other character.
 */
size_t ucs_string_quantity_prefix_value(char prefix);

/**
 * vsnprintf(3) that always terminates the buffer.
 *
 * @param [out] buf   Buffer; untouched when @a size is 0.
 * @param [in]  size  Size of @a buf.
 * @param [in]  fmt   printf(3) format.
 * @param [in]  ap    Arguments of @a fmt.
 */
void ucs_vsnprintf_safe(char *buf, size_t size, const char *fmt, va_list ap);

/**
 * snprintf(3) that always terminates the buffer.
 *
 * @param [out] buf   Buffer; untouched when @a size is 0.
 * @param [in]  size  Size of @a buf.
 * @param [in]  fmt   printf(3) format, followed by its arguments.
 */
void ucs_snprintf_safe(char *buf, size_t size, const char *fmt, ...)
    UCS_F_PRINTF(3, 4);

/**
 * Copy at most @a len - 1 characters of a string and terminate it. Unlike
 * strncpy(3) the rest of the buffer is not written, and @a src is not read
 * past @a len bytes.
 *
 * @param [out] dst  Buffer; untouched when @a len is 0.
 * @param [in]  src  String to copy.
 * @param [in]  len  Size of @a dst.
 * @return @a dst.
 */
char *ucs_strncpy_safe(char *dst, const char *src, size_t len);

/**
 * Remove leading and trailing whitespace (as isspace(3) defines it).
 * The string is terminated in place after its last non-space character.
 *
 * @param [in,out] str  String to trim.
 * @return Pointer into @a str at its first non-space character.
 */
char *ucs_strtrim(char *str);

/**
 * The last component of a path, without modifying it.
 *
 * @param [in] path  Path.
 * @return Pointer into @a path after its last '/', or @a path itself.
 */
static inline const char *ucs_basename(const char *path)
{
    const char *slash = strrchr(path, '/');

    return (slash == NULL) ? path : (slash + 1);
}

/**
 * Write bytes as lowercase hexadecimal, two digits per byte, with ':'
 * after every 4 bytes and a newline after every @a per_line bytes. Stops
 * early, still terminated, when @a buf is full.
 *
 * @param [in]  data      Bytes to dump.
 * @param [in]  length    Number of bytes.
 * @param [out] buf       Receives the text.
 * @param [in]  max       Size of @a buf, including the terminator.
 * @param [in]  per_line  Bytes per line; SIZE_MAX (or 0) for one line.
 * @return @a buf.
 */
const char *ucs_str_dump_hex(const void *data, size_t length, char *buf,
                             size_t max, size_t per_line);

/**
 * Name the set flags of a bit mask, separated by ','.
 *
 * @param [out] str        Receives the names, truncated to fit; "" when
 *                         no named flag is set.
 * @param [in]  max        Size of @a str.
 * @param [in]  flags      Flags; bit i is named by @a str_table[i].
 * @param [in]  str_table  Names of bits 0, 1, ..., ending with NULL. Bits
 *                         past the end of the table are ignored.
 * @return @a str.
 */
const char *ucs_flags_str(char *str, size_t max, uint64_t flags,
                          const char **str_table);

/**
 * Count the occurrences of a character in a string.
 *
 * @param [in] str  String.
 * @param [in] c    Character to count (not '\0').
 * @return The count, 0 to strlen(@a str).
 */
size_t ucs_string_count_char(const char *str, char c);

/**
 * Length of the longest common prefix of two strings.
 *
 * @param [in] str1  First string.
 * @param [in] str2  Second string.
 * @return 0 to the length of the shorter string.
 */
size_t ucs_string_common_prefix_len(const char *str1, const char *str2);

/**
 * The deepest directory that contains both paths, without a trailing
 * '/': "/sys/a/b" and "/sys/a/c" give "/sys/a". Only the text is
 * compared; the paths need not exist.
 *
 * @param [in]  path1        First path.
 * @param [in]  path2        Second path.
 * @param [out] common_path  Receives the parent; it must have room for
 *                           the shorter path and its terminator.
 */
void ucs_path_get_common_parent(const char *path1, const char *path2,
                                char *common_path);

/**
 * Number of path components that differ between two paths: from their
 * deepest common directory, the longer of the two remaining parts, in
 * components. "/a/b/c" and "/a/b/c/d" are 1 apart, "/a/b/c/d" and
 * "/a/x/y" 3. Only the text is compared; the paths need not exist.
 *
 * @param [in] path1  First path.
 * @param [in] path2  Second path.
 * @return The distance, 0 for equal paths.
 */
size_t ucs_path_calc_distance(const char *path1, const char *path2);

/**
 * Append the indexes of the set bits of a mask to a string buffer, as
 * "0, 3, 5", or "<none>" for an empty mask.
 *
 * @param [in]     mask  Bit mask.
 * @param [in,out] strb  String buffer to append to (it keeps ownership of
 *                       its storage).
 * @return The whole contents of @a strb, valid until it is next changed.
 */
const char *ucs_mask_str(uint64_t mask, ucs_string_buffer_t *strb);

/**
 * Find a string in a NULL-terminated array of strings.
 *
 * @param [in] str             String to look for.
 * @param [in] string_list     Array of strings, ending with NULL.
 * @param [in] case_sensitive  Non-zero to compare exactly, 0 to ignore
 *                             case.
 * @return Index of the first match, or -1.
 */
ssize_t ucs_string_find_in_list(const char *str, const char **string_list,
                                int case_sensitive);

/**
 * Split a string in place into tokens separated by any of the delimiter
 * characters (consecutive delimiters separate empty tokens).
 *
 * @param [in,out] str    String to split; delimiters are overwritten.
 * @param [in]     delim  Delimiter characters.
 * @param [in]     count  Number of tokens wanted.
 * @param [out]    ...    @a count pointers to char* that receive the
 *                        tokens, NULL for those the string lacks.
 * @return The rest of the string after the @a count-th token's delimiter,
 *         or NULL when the string had at most @a count tokens.
 */
char *ucs_string_split(char *str, const char *delim, int count, ...);

/**
 * Whether a string is empty.
 *
 * @param [in] str  String.
 * @return Non-zero when @a str is "".
 */
static inline int ucs_string_is_empty(const char *str)
{
    return *str == '\0';
}

END_C_DECLS

#endif
