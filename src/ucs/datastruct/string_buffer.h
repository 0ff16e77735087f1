#ifndef UCS_DATASTRUCT_STRING_BUFFER_H_
#define UCS_DATASTRUCT_STRING_BUFFER_H_

/**
 * @file
 * Growable NUL-terminated string, for building messages and descriptions
 * piece by piece. The storage is allocated on the first append and doubles
 * as needed. A failed append leaves the contents unchanged.
 */

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

BEGIN_C_DECLS

/** A growable string; read it with ucs_string_buffer_cstr(). */
typedef struct ucs_string_buffer {
    char *buffer;    /**< NULL until something is appended */
    size_t length;   /**< characters, not counting the terminating NUL */
    size_t capacity; /**< bytes allocated */
} ucs_string_buffer_t;

/** Initialize an empty buffer; nothing is allocated.
 *  @param [out] strb the buffer. */
void ucs_string_buffer_init(ucs_string_buffer_t *strb);

/** Release the storage; the buffer is empty (and reusable) afterwards.
 *  @param [in,out] strb the buffer. */
void ucs_string_buffer_cleanup(ucs_string_buffer_t *strb);

/**
 * Append printf-formatted text.
 *
 * @param [in,out] strb the buffer.
 * @param [in]     fmt  printf format, followed by its arguments.
 * @return UCS_OK, UCS_ERR_NO_MEMORY, or UCS_ERR_INVALID_PARAM if the text
 *         cannot be formatted (contents unchanged on error).
 */
ucs_status_t ucs_string_buffer_appendf(ucs_string_buffer_t *strb,
                                       const char *fmt, ...) UCS_F_PRINTF(2, 3);

/** Like ucs_string_buffer_appendf(), with a va_list.
 *  @param [in,out] strb the buffer.
 *  @param [in]     fmt  printf format.
 *  @param [in]     ap   its arguments.
 *  @return as ucs_string_buffer_appendf(). */
ucs_status_t ucs_string_buffer_vappendf(ucs_string_buffer_t *strb,
                                        const char *fmt, va_list ap)
    UCS_F_PRINTF(2, 0);

/**
 * Append the names of the bits set in @a flags, lowest bit first, separated
 * by '|' (e.g. "read|write"). Nothing is appended when @a flags is 0.
 *
 * @param [in,out] strb  the buffer.
 * @param [in]     flags the bits.
 * @param [in]     names indexed by bit number, ending with a NULL entry; a
 *                       set bit past the end (or any bit when @a names is
 *                       NULL) is written as its bit number.
 * @return UCS_OK, or UCS_ERR_NO_MEMORY (contents unchanged).
 */
ucs_status_t ucs_string_buffer_append_flags(ucs_string_buffer_t *strb,
                                            uint64_t flags, const char **names);

/**
 * Remove trailing characters that appear in @a charset.
 *
 * @param [in,out] strb    the buffer.
 * @param [in]     charset characters to strip; NULL means whitespace
 *                         (" \t\r\n\f\v").
 */
void ucs_string_buffer_rtrim(ucs_string_buffer_t *strb, const char *charset);

/** The contents as a C string.
 *  @param [in] strb the buffer.
 *  @return the text, "" when empty, never NULL; owned by the buffer and
 *          valid until the next change to it. */
const char *ucs_string_buffer_cstr(const ucs_string_buffer_t *strb);

/** Number of characters.
 *  @param [in] strb the buffer.
 *  @return the length, not counting the terminating NUL. */
static inline size_t ucs_string_buffer_length(const ucs_string_buffer_t *strb)
{
    return strb->length;
}

/** Make the contents empty, keeping the storage.
 *  @param [in,out] strb the buffer. */
void ucs_string_buffer_reset(ucs_string_buffer_t *strb);

END_C_DECLS

#endif
