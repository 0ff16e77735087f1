/**
 * @file
 * Leveled logging of openuct: the levels, the global threshold, the stack
 * of log handlers and the ucs_error()/ucs_warn()/... macros. Included by
 * every part of ucs and uct and by programs (and the gtest fixture) that
 * want to capture or redirect library messages. A message is formatted only
 * when its level is enabled; the check is one load and one compare.
 */
#ifndef UCS_DEBUG_LOG_H_
#define UCS_DEBUG_LOG_H_

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>
#include <stdarg.h>

BEGIN_C_DECLS

/**
 * Severity of a log message, from the most to the least severe. A message
 * is printed when its level is at or below ucs_log_level.
 */
typedef enum {
    UCS_LOG_LEVEL_FATAL,      /**< Unrecoverable; the process aborts. */
    UCS_LOG_LEVEL_ERROR,      /**< An operation failed. */
    UCS_LOG_LEVEL_WARN,       /**< Something unexpected that was handled;
                                   the default threshold. */
    UCS_LOG_LEVEL_DIAG,       /**< Diagnostics about a peer or resource. */
    UCS_LOG_LEVEL_INFO,       /**< Informational, e.g. configuration. */
    UCS_LOG_LEVEL_DEBUG,      /**< Control-path details (object life). */
    UCS_LOG_LEVEL_TRACE,      /**< Per-call tracing of the control path. */
    UCS_LOG_LEVEL_TRACE_DATA, /**< Tracing of every data-path operation. */
    UCS_LOG_LEVEL_TRACE_POLL, /**< Tracing of every progress/poll call. */
    UCS_LOG_LEVEL_LAST,       /**< Number of real levels; not a level. */
    UCS_LOG_LEVEL_PRINT       /**< Unconditional output without a prefix,
                                   used by tools; not parsed from a name. */
} ucs_log_level_t;

/** Names of the levels, indexed by ucs_log_level_t, NULL-terminated. */
extern const char *ucs_log_level_names[];

/** The current threshold; messages above it are not formatted. */
extern ucs_log_level_t ucs_log_level;

/** What a log handler tells the dispatcher after seeing a message. */
typedef enum {
    UCS_LOG_FUNC_RC_STOP,    /**< Message consumed, stop the handler
                                  chain (it is not printed). */
    UCS_LOG_FUNC_RC_CONTINUE /**< Pass it to the next handler, and in the
                                  end to the built-in printer. */
} ucs_log_func_rc_t;

/**
 * A log handler. Handlers form a stack: the most recently pushed one sees a
 * message first; the built-in printer is at the bottom. A handler is called
 * in the thread that logs, without any lock held, so it may log or
 * push/pop handlers itself; it must be thread-safe if several threads log.
 *
 * @param [in] file      Source file of the message.
 * @param [in] line      Source line of the message.
 * @param [in] function  Function that logged.
 * @param [in] level     Level of the message.
 * @param [in] format    printf-style format of the message.
 * @param [in] ap        Arguments of @a format (a copy; the handler may
 *                       consume it).
 *
 * @return UCS_LOG_FUNC_RC_STOP to swallow the message, or
 *         UCS_LOG_FUNC_RC_CONTINUE to pass it on.
 */
typedef ucs_log_func_rc_t (*ucs_log_func_t)(const char *file, unsigned line,
                                            const char *function,
                                            ucs_log_level_t level,
                                            const char *format, va_list ap);

/**
 * Tell whether a message of @a level would be printed now.
 *
 * @param [in] level  Level to check.
 *
 * @return Nonzero if @a level is at or below the current threshold.
 */
static inline int ucs_log_is_enabled(ucs_log_level_t level)
{
    return ucs_unlikely(level <= ucs_log_level);
}

/**
 * Hand a message to the handler stack and, unless a handler stops it, to
 * the built-in printer (one line with time, host, pid, thread id, file and
 * level). Does not check the threshold: use ucs_log() for that. Safe to call
 * from any thread; printing is serialized by an internal lock.
 *
 * @param [in] file      Source file of the message.
 * @param [in] line      Source line of the message.
 * @param [in] function  Function that logs.
 * @param [in] level     Level of the message.
 * @param [in] format    printf-style format; longer lines are truncated to
 *                       2047 characters.
 */
void ucs_log_dispatch(const char *file, unsigned line, const char *function,
                      ucs_log_level_t level, const char *format, ...)
    UCS_F_PRINTF(5, 6);

/**
 * Log at FATAL level and abort the process. The message goes through the
 * handler stack like any other, whatever the threshold; then abort() is
 * called. Does not return.
 *
 * @param [in] file      Source file of the message.
 * @param [in] line      Source line of the message.
 * @param [in] function  Function that logs.
 * @param [in] format    printf-style format of the message.
 */
void ucs_log_fatal(const char *file, unsigned line, const char *function,
                   const char *format, ...) UCS_F_PRINTF(4, 5) UCS_F_NORETURN;

/**
 * Push a handler on top of the handler stack; it sees every dispatched
 * message first. The stack holds at most 32 handlers; a push beyond that is
 * ignored. Thread-safe.
 *
 * @param [in] handler  Handler to add; must stay callable until popped.
 */
void ucs_log_push_handler(ucs_log_func_t handler);

/**
 * Remove the most recently pushed handler; does nothing if the stack is
 * empty. Thread-safe, but handlers are a stack: pop in the reverse order of
 * the pushes.
 */
void ucs_log_pop_handler(void);

/**
 * Number of handlers currently pushed.
 *
 * @return The depth of the handler stack (the built-in printer excluded).
 */
unsigned ucs_log_num_handlers(void);

/**
 * Set the threshold: messages with a level above @a level are not
 * formatted. Normally set from UCX_LOG_LEVEL at library load.
 *
 * @param [in] level  New threshold.
 */
void ucs_log_set_level(ucs_log_level_t level);

/**
 * Direct output to @a path ("stdout", "stderr", or a file name in which
 * "%p" expands to the pid and "%h" to the host name). NULL or "" means
 * stderr. A file is opened for appending and replaces (and closes) a file
 * set earlier. Thread-safe.
 *
 * @param [in] path  Destination, as above.
 *
 * @return UCS_OK, or UCS_ERR_IO_ERROR if the file cannot be opened (a note
 *         is printed to stderr and the previous destination is kept).
 */
ucs_status_t ucs_log_set_file(const char *path);

/**
 * Parse a level name (case-insensitive); "warning" is accepted too.
 *
 * @param [in]  name     One of ucs_log_level_names, or "warning".
 * @param [out] level_p  Set to the level on success only.
 *
 * @return UCS_OK, or UCS_ERR_INVALID_PARAM if @a name is NULL or unknown.
 */
ucs_status_t ucs_log_level_parse(const char *name, ucs_log_level_t *level_p);

/** Flush and close the output file; called at library unload. */
void ucs_log_cleanup(void);

/**
 * Log a printf-style message at @a _level if that level is enabled; the
 * arguments are not evaluated otherwise.
 *
 * @param _level  A ucs_log_level_t.
 * @param _fmt    printf-style format string literal.
 */
#define ucs_log(_level, _fmt, ...)                                         \
    do {                                                                   \
        if (ucs_log_is_enabled(_level)) {                                  \
            ucs_log_dispatch(__FILE__, __LINE__, __func__, (_level), _fmt, \
                             ##__VA_ARGS__);                               \
        }                                                                  \
    } while (0)

/**
 * Log "Fatal: " and the message, then abort the process.
 * @param _fmt  printf-style format string literal.
 */
#define ucs_fatal(_fmt, ...) \
    ucs_log_fatal(__FILE__, __LINE__, __func__, "Fatal: " _fmt, ##__VA_ARGS__)
/** ucs_log() at ERROR level. @param _fmt printf-style format literal. */
#define ucs_error(_fmt, ...) ucs_log(UCS_LOG_LEVEL_ERROR, _fmt, ##__VA_ARGS__)
/** ucs_log() at WARN level. @param _fmt printf-style format literal. */
#define ucs_warn(_fmt, ...) ucs_log(UCS_LOG_LEVEL_WARN, _fmt, ##__VA_ARGS__)
/** ucs_log() at DIAG level. @param _fmt printf-style format literal. */
#define ucs_diag(_fmt, ...) ucs_log(UCS_LOG_LEVEL_DIAG, _fmt, ##__VA_ARGS__)
/** ucs_log() at INFO level. @param _fmt printf-style format literal. */
#define ucs_info(_fmt, ...) ucs_log(UCS_LOG_LEVEL_INFO, _fmt, ##__VA_ARGS__)
/** ucs_log() at DEBUG level. @param _fmt printf-style format literal. */
#define ucs_debug(_fmt, ...) ucs_log(UCS_LOG_LEVEL_DEBUG, _fmt, ##__VA_ARGS__)
/** ucs_log() at TRACE level. @param _fmt printf-style format literal. */
#define ucs_trace(_fmt, ...) ucs_log(UCS_LOG_LEVEL_TRACE, _fmt, ##__VA_ARGS__)
/** ucs_log() at TRACE_DATA level. @param _fmt printf-style format literal. */
#define ucs_trace_data(_fmt, ...) \
    ucs_log(UCS_LOG_LEVEL_TRACE_DATA, _fmt, ##__VA_ARGS__)
/** ucs_log() at TRACE_POLL level. @param _fmt printf-style format literal. */
#define ucs_trace_poll(_fmt, ...) \
    ucs_log(UCS_LOG_LEVEL_TRACE_POLL, _fmt, ##__VA_ARGS__)

END_C_DECLS

#endif
