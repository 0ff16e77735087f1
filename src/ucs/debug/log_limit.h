/**
 * @file
 * Rate-limited log lines, for everything a remote peer can cause: a peer
 * must not decide how much we write. Included by transports that log about
 * what they receive. One ucs_log_limit_t per cause and per object (an
 * interface, say) lets one line through per interval; the lines dropped
 * meanwhile are counted, and the next line that passes says how many there
 * were. ucs_log_limit_flush() reports a count still pending, for when the
 * object goes away. A limit is not locked: use it from one thread at a time
 * (the thread that owns the object it belongs to).
 */
#ifndef UCS_DEBUG_LOG_LIMIT_H_
#define UCS_DEBUG_LOG_LIMIT_H_

#include <ucs/debug/log.h>
#include <ucs/time/time_def.h>

#include <stdint.h>

BEGIN_C_DECLS

/** One line per cause per this many seconds. */
#define UCS_LOG_LIMIT_INTERVAL_SEC 1.0

/**
 * State of one rate limit. Embed it in the object whose lines it limits;
 * initialize it with UCS_LOG_LIMIT_INITIALIZER, ucs_log_limit_init() or
 * zeroed memory. It owns no resources.
 */
typedef struct ucs_log_limit {
    ucs_time_t next;     /**< The next line may pass at or after this
                              time (0: the next line passes). */
    ucs_time_t since;    /**< When the first suppressed line came. */
    uint32_t suppressed; /**< Lines dropped since the last one passed. */
} ucs_log_limit_t;

/** A limit that lets the first line through. Zeroed memory is the same. */
#define UCS_LOG_LIMIT_INITIALIZER \
    {                             \
        0, 0, 0                   \
    }

/**
 * Reset a limit so that the next line passes and nothing is counted.
 *
 * @param [out] limit  Limit to initialize.
 */
static inline void ucs_log_limit_init(ucs_log_limit_t *limit)
{
    limit->next       = 0;
    limit->since      = 0;
    limit->suppressed = 0;
}

/**
 * Whether a line may be printed now. If not, it is counted. When it may,
 * the next one may pass only UCS_LOG_LIMIT_INTERVAL_SEC later. Reads the
 * clock (ucs_get_time()); no system call, no lock.
 *
 * @param [in,out] limit         The limit of this cause.
 * @param [out]    suppressed_p  When the line may pass: the number of lines
 *                               dropped before it (and the count starts
 *                               again). Not written otherwise.
 *
 * @return 1 if the line may be printed, 0 if it was counted and dropped.
 */
int ucs_log_limit_pass(ucs_log_limit_t *limit, uint32_t *suppressed_p);

/**
 * Print the count of dropped lines at @a level, if any and if that level is
 * enabled: "@a what: N more lines like the last one were suppressed". The
 * count is reset in any case. Call it before the object owning the limit is
 * destroyed.
 *
 * @param [in,out] limit  The limit to flush.
 * @param [in]     level  Level of the summary line.
 * @param [in]     what   Prefix naming the object, e.g. the interface.
 */
void ucs_log_limit_flush(ucs_log_limit_t *limit, ucs_log_level_t level,
                         const char *what);

/**
 * Dispatch a line that passed a limit, as ucs_log_dispatch() does, adding
 * "(N similar lines suppressed)" when @a suppressed is not zero. Used by
 * ucs_log_limited(); the message is truncated to 1023 characters.
 *
 * @param [in] file        Source file of the message.
 * @param [in] line        Source line of the message.
 * @param [in] function    Function that logs.
 * @param [in] level       Level of the message.
 * @param [in] suppressed  Lines dropped before this one.
 * @param [in] format      printf-style format of the message.
 */
void ucs_log_limited_dispatch(const char *file, unsigned line,
                              const char *function, ucs_log_level_t level,
                              uint32_t suppressed, const char *format, ...)
    UCS_F_PRINTF(6, 7);

/**
 * Like ucs_log(), through @a _limit. A line that passes after others were
 * dropped ends with "(N similar lines suppressed)". A line whose level is
 * disabled is neither printed nor counted.
 *
 * @param _limit  Pointer to the ucs_log_limit_t of this cause.
 * @param _level  A ucs_log_level_t.
 * @param _fmt    printf-style format string literal.
 */
#define ucs_log_limited(_limit, _level, _fmt, ...)                           \
    do {                                                                     \
        uint32_t _suppressed;                                                \
        if (ucs_log_is_enabled(_level) &&                                    \
            ucs_log_limit_pass((_limit), &_suppressed)) {                    \
            ucs_log_limited_dispatch(__FILE__, __LINE__, __func__, (_level), \
                                     _suppressed, _fmt, ##__VA_ARGS__);      \
        }                                                                    \
    } while (0)

/**
 * ucs_log_limited() at WARN level.
 * @param _limit  Pointer to the ucs_log_limit_t of this cause.
 * @param _fmt    printf-style format string literal.
 */
#define ucs_warn_limited(_limit, _fmt, ...) \
    ucs_log_limited((_limit), UCS_LOG_LEVEL_WARN, _fmt, ##__VA_ARGS__)
/**
 * ucs_log_limited() at ERROR level.
 * @param _limit  Pointer to the ucs_log_limit_t of this cause.
 * @param _fmt    printf-style format string literal.
 */
#define ucs_error_limited(_limit, _fmt, ...) \
    ucs_log_limited((_limit), UCS_LOG_LEVEL_ERROR, _fmt, ##__VA_ARGS__)

END_C_DECLS

#endif
