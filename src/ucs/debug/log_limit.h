/*
 * Rate-limited log lines, for everything a remote peer can cause: a peer
 * must not decide how much we write. One ucs_log_limit_t per cause and per
 * object (an interface, say) lets one line through per interval; the lines
 * dropped meanwhile are counted, and the next line that passes says how
 * many there were. ucs_log_limit_flush() reports a count still pending,
 * for when the object goes away.
 */
#ifndef UCS_DEBUG_LOG_LIMIT_H_
#define UCS_DEBUG_LOG_LIMIT_H_

#include <ucs/debug/log.h>
#include <ucs/time/time_def.h>

#include <stdint.h>

BEGIN_C_DECLS

/* One line per cause per this many seconds */
#define UCS_LOG_LIMIT_INTERVAL_SEC 1.0

typedef struct ucs_log_limit {
    ucs_time_t next;        /* the next line may pass at or after this */
    ucs_time_t since;       /* when the first suppressed line came */
    uint32_t   suppressed;  /* lines dropped since the last one passed */
} ucs_log_limit_t;

/* A limit that lets the first line through. Zeroed memory is the same. */
#define UCS_LOG_LIMIT_INITIALIZER {0, 0, 0}

static inline void ucs_log_limit_init(ucs_log_limit_t *limit)
{
    limit->next       = 0;
    limit->since      = 0;
    limit->suppressed = 0;
}

/*
 * Whether a line may be printed now. If not, it is counted. When it may,
 * *suppressed_p is the number of lines dropped before it (and the count
 * starts again).
 */
int ucs_log_limit_pass(ucs_log_limit_t *limit, uint32_t *suppressed_p);

/* Prints the count of dropped lines at @a level, if any: "@a what: N more
 * lines like the last one were suppressed". */
void ucs_log_limit_flush(ucs_log_limit_t *limit, ucs_log_level_t level,
                         const char *what);

void ucs_log_limited_dispatch(const char *file, unsigned line,
                              const char *function, ucs_log_level_t level,
                              uint32_t suppressed, const char *format, ...)
    UCS_F_PRINTF(6, 7);

/* Like ucs_log(), through @a _limit. A line that passes after others were
 * dropped ends with "(N similar lines suppressed)". */
#define ucs_log_limited(_limit, _level, _fmt, ...) \
    do { \
        uint32_t _suppressed; \
        if (ucs_log_is_enabled(_level) && \
            ucs_log_limit_pass((_limit), &_suppressed)) { \
            ucs_log_limited_dispatch(__FILE__, __LINE__, __func__, (_level), \
                                     _suppressed, _fmt, ##__VA_ARGS__); \
        } \
    } while (0)

#define ucs_warn_limited(_limit, _fmt, ...) \
    ucs_log_limited((_limit), UCS_LOG_LEVEL_WARN, _fmt, ##__VA_ARGS__)
#define ucs_error_limited(_limit, _fmt, ...) \
    ucs_log_limited((_limit), UCS_LOG_LEVEL_ERROR, _fmt, ##__VA_ARGS__)

END_C_DECLS

#endif
