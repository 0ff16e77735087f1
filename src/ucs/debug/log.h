/*
 * Leveled logging. A message is formatted only when its level is enabled;
 * the check is one load and one compare.
 */
#ifndef UCS_DEBUG_LOG_H_
#define UCS_DEBUG_LOG_H_

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>
#include <stdarg.h>

BEGIN_C_DECLS

typedef enum {
    UCS_LOG_LEVEL_FATAL,
    UCS_LOG_LEVEL_ERROR,
    UCS_LOG_LEVEL_WARN,
    UCS_LOG_LEVEL_DIAG,
    UCS_LOG_LEVEL_INFO,
    UCS_LOG_LEVEL_DEBUG,
    UCS_LOG_LEVEL_TRACE,
    UCS_LOG_LEVEL_TRACE_DATA,
    UCS_LOG_LEVEL_TRACE_POLL,
    UCS_LOG_LEVEL_LAST,
    UCS_LOG_LEVEL_PRINT   /* unconditional output, used by tools */
} ucs_log_level_t;

/** Names of the levels, indexed by ucs_log_level_t, NULL-terminated. */
extern const char *ucs_log_level_names[];

/** The current threshold; messages above it are not formatted. */
extern ucs_log_level_t ucs_log_level;

typedef enum {
    UCS_LOG_FUNC_RC_STOP,     /* message consumed, stop the handler chain */
    UCS_LOG_FUNC_RC_CONTINUE  /* pass it to the next handler */
} ucs_log_func_rc_t;

/**
 * A log handler. Handlers form a stack: the most recently pushed one sees a
 * message first; the built-in printer is at the bottom.
 */
typedef ucs_log_func_rc_t (*ucs_log_func_t)(const char *file, unsigned line,
                                            const char *function,
                                            ucs_log_level_t level,
                                            const char *format, va_list ap);

static inline int ucs_log_is_enabled(ucs_log_level_t level)
{
    return ucs_unlikely(level <= ucs_log_level);
}

void ucs_log_dispatch(const char *file, unsigned line, const char *function,
                      ucs_log_level_t level, const char *format, ...)
    UCS_F_PRINTF(5, 6);

/** Log at FATAL level and abort the process. */
void ucs_log_fatal(const char *file, unsigned line, const char *function,
                   const char *format, ...) UCS_F_PRINTF(4, 5) UCS_F_NORETURN;

void ucs_log_push_handler(ucs_log_func_t handler);
void ucs_log_pop_handler(void);
unsigned ucs_log_num_handlers(void);

void ucs_log_set_level(ucs_log_level_t level);

/**
 * Direct output to @a path ("stdout", "stderr", or a file name in which
 * "%p" expands to the pid and "%h" to the host name). NULL or "" means
 * stderr.
 */
ucs_status_t ucs_log_set_file(const char *path);

/** Parse a level name (case-insensitive); "warning" is accepted too. */
ucs_status_t ucs_log_level_parse(const char *name, ucs_log_level_t *level_p);

/** Flush and close the output file; called at library unload. */
void ucs_log_cleanup(void);

#define ucs_log(_level, _fmt, ...) \
    do { \
        if (ucs_log_is_enabled(_level)) { \
            ucs_log_dispatch(__FILE__, __LINE__, __func__, (_level), _fmt, \
                             ##__VA_ARGS__); \
        } \
    } while (0)

#define ucs_fatal(_fmt, ...) \
    ucs_log_fatal(__FILE__, __LINE__, __func__, "Fatal: " _fmt, ##__VA_ARGS__)
#define ucs_error(_fmt, ...) ucs_log(UCS_LOG_LEVEL_ERROR, _fmt, ##__VA_ARGS__)
#define ucs_warn(_fmt, ...)  ucs_log(UCS_LOG_LEVEL_WARN, _fmt, ##__VA_ARGS__)
#define ucs_diag(_fmt, ...)  ucs_log(UCS_LOG_LEVEL_DIAG, _fmt, ##__VA_ARGS__)
#define ucs_info(_fmt, ...)  ucs_log(UCS_LOG_LEVEL_INFO, _fmt, ##__VA_ARGS__)
#define ucs_debug(_fmt, ...) ucs_log(UCS_LOG_LEVEL_DEBUG, _fmt, ##__VA_ARGS__)
#define ucs_trace(_fmt, ...) ucs_log(UCS_LOG_LEVEL_TRACE, _fmt, ##__VA_ARGS__)
#define ucs_trace_data(_fmt, ...) \
    ucs_log(UCS_LOG_LEVEL_TRACE_DATA, _fmt, ##__VA_ARGS__)
#define ucs_trace_poll(_fmt, ...) \
    ucs_log(UCS_LOG_LEVEL_TRACE_POLL, _fmt, ##__VA_ARGS__)

END_C_DECLS

#endif
