#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <ucs/datastruct/string_buffer.h>
#include <ucs/debug/assert.h>
#include <ucs/debug/log.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UCS_STRING_BUFFER_MIN_CAPACITY 64

void ucs_string_buffer_init(ucs_string_buffer_t *strb)
{
    strb->buffer   = NULL;
    strb->length   = 0;
    strb->capacity = 0;
}

void ucs_string_buffer_cleanup(ucs_string_buffer_t *strb)
{
    free(strb->buffer);
    ucs_string_buffer_init(strb);
}

/* Make room for @a extra more characters plus the terminating NUL. */
static ucs_status_t ucs_string_buffer_reserve(ucs_string_buffer_t *strb,
                                              size_t extra)
{
    size_t needed, capacity;
    char *buffer;

    if (extra >= (SIZE_MAX - strb->length)) {
        ucs_error("string buffer cannot grow by %zu characters", extra);
        return UCS_ERR_NO_MEMORY;
    }

    needed = strb->length + extra + 1;
    if (needed <= strb->capacity) {
        return UCS_OK;
    }

    capacity = ucs_max(strb->capacity, (size_t)UCS_STRING_BUFFER_MIN_CAPACITY);
    while (capacity < needed) {
        capacity = (capacity > (SIZE_MAX / 2)) ? needed : (capacity * 2);
    }

    buffer = realloc(strb->buffer, capacity);
    if (buffer == NULL) {
        ucs_error("failed to grow string buffer to %zu bytes: out of memory",
                  capacity);
        return UCS_ERR_NO_MEMORY;
    }

    if (strb->buffer == NULL) {
        buffer[0] = '\0';
    }
    strb->buffer   = buffer;
    strb->capacity = capacity;
    return UCS_OK;
}

ucs_status_t ucs_string_buffer_vappendf(ucs_string_buffer_t *strb,
                                        const char *fmt, va_list ap)
{
    ucs_status_t status;
    va_list ap_copy;
    int ret;

    va_copy(ap_copy, ap);
    ret = vsnprintf(NULL, 0, fmt, ap_copy);
    va_end(ap_copy);
    if (ret < 0) {
        ucs_error("string buffer: failed to format '%s'", fmt);
        return UCS_ERR_INVALID_PARAM;
    }

    status = ucs_string_buffer_reserve(strb, (size_t)ret);
    if (status != UCS_OK) {
        return status;
    }

    vsnprintf(strb->buffer + strb->length, strb->capacity - strb->length, fmt,
              ap);
    strb->length += (size_t)ret;
    return UCS_OK;
}

ucs_status_t ucs_string_buffer_appendf(ucs_string_buffer_t *strb,
                                       const char *fmt, ...)
{
    ucs_status_t status;
    va_list ap;

    va_start(ap, fmt);
    status = ucs_string_buffer_vappendf(strb, fmt, ap);
    va_end(ap);
    return status;
}

ucs_status_t ucs_string_buffer_append_flags(ucs_string_buffer_t *strb,
                                            uint64_t flags, const char **names)
{
    size_t saved_length = strb->length;
    unsigned num_names  = 0;
    const char *sep     = "";
    ucs_status_t status;
    unsigned bit;

    while ((names != NULL) && (names[num_names] != NULL)) {
        ++num_names;
    }

    for (bit = 0; bit < 64; ++bit) {
        if (!(flags & UCS_BIT(bit))) {
            continue;
        }

        if (bit < num_names) {
            status = ucs_string_buffer_appendf(strb, "%s%s", sep, names[bit]);
        } else {
            status = ucs_string_buffer_appendf(strb, "%s%u", sep, bit);
        }
        if (status != UCS_OK) {
            goto err_restore;
        }
        sep = "|";
    }

    return UCS_OK;

err_restore:
    strb->length = saved_length;
    if (strb->buffer != NULL) {
        strb->buffer[saved_length] = '\0';
    }
    return status;
}

void ucs_string_buffer_rtrim(ucs_string_buffer_t *strb, const char *charset)
{
    if (charset == NULL) {
        charset = " \t\r\n\f\v";
    }

    while ((strb->length > 0) && (strb->buffer[strb->length - 1] != '\0') &&
           (strchr(charset, strb->buffer[strb->length - 1]) != NULL)) {
        --strb->length;
    }

    if (strb->buffer != NULL) {
        strb->buffer[strb->length] = '\0';
    }
}

const char *ucs_string_buffer_cstr(const ucs_string_buffer_t *strb)
{
    return (strb->buffer != NULL) ? strb->buffer : "";
}

void ucs_string_buffer_reset(ucs_string_buffer_t *strb)
{
    strb->length = 0;
    if (strb->buffer != NULL) {
        strb->buffer[0] = '\0';
    }
}
