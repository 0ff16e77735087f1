#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <ucs/debug/log.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#define UCS_LOG_MAX_HANDLERS 32
#define UCS_LOG_LINE_MAX     2048

const char *ucs_log_level_names[] = {
    [UCS_LOG_LEVEL_FATAL] = "fatal",     [UCS_LOG_LEVEL_ERROR] = "error",
    [UCS_LOG_LEVEL_WARN] = "warn",       [UCS_LOG_LEVEL_DIAG] = "diag",
    [UCS_LOG_LEVEL_INFO] = "info",       [UCS_LOG_LEVEL_DEBUG] = "debug",
    [UCS_LOG_LEVEL_TRACE] = "trace",     [UCS_LOG_LEVEL_TRACE_DATA] = "data",
    [UCS_LOG_LEVEL_TRACE_POLL] = "poll", [UCS_LOG_LEVEL_LAST] = NULL};

ucs_log_level_t ucs_log_level = UCS_LOG_LEVEL_WARN;

static struct {
    pthread_mutex_t lock;
    ucs_log_func_t handlers[UCS_LOG_MAX_HANDLERS];
    unsigned num_handlers;
    FILE *stream; /* NULL means stderr */
    int stream_owned;
    char hostname[64];
} ucs_log_ctx = {.lock = PTHREAD_MUTEX_INITIALIZER};

static FILE *ucs_log_stream(void)
{
    return (ucs_log_ctx.stream != NULL) ? ucs_log_ctx.stream : stderr;
}

static const char *ucs_log_basename(const char *file)
{
    const char *slash = strrchr(file, '/');
    return (slash != NULL) ? slash + 1 : file;
}

static void ucs_log_print(const char *file, unsigned line,
                          ucs_log_level_t level, const char *format, va_list ap)
{
    char message[UCS_LOG_LINE_MAX];
    struct timeval tv;
    const char *level_name;

    vsnprintf(message, sizeof(message), format, ap);

    if (level == UCS_LOG_LEVEL_PRINT) {
        fprintf(ucs_log_stream(), "%s\n", message);
        return;
    }

    if (ucs_log_ctx.hostname[0] == '\0') {
        gethostname(ucs_log_ctx.hostname, sizeof(ucs_log_ctx.hostname) - 1);
    }

    level_name =
        (level < UCS_LOG_LEVEL_LAST) ? ucs_log_level_names[level] : "?";
    gettimeofday(&tv, NULL);
    fprintf(ucs_log_stream(), "[%lu.%06lu] [%s:%d:%ld] %18s:%-4u %-5s %s\n",
            (unsigned long)tv.tv_sec, (unsigned long)tv.tv_usec,
            ucs_log_ctx.hostname, (int)getpid(), (long)syscall(SYS_gettid),
            ucs_log_basename(file), line, level_name, message);
    fflush(ucs_log_stream());
}

static void ucs_log_vdispatch(const char *file, unsigned line,
                              const char *function, ucs_log_level_t level,
                              const char *format, va_list ap)
{
    /* only the first num entries are written and read; cppcheck cannot
     * follow the count through the lock */
    /* cppcheck-suppress uninitvar */
    ucs_log_func_t handlers[UCS_LOG_MAX_HANDLERS];
    unsigned i, num;
    va_list aq;

    /* Take a snapshot so handlers may push/pop while running */
    pthread_mutex_lock(&ucs_log_ctx.lock);
    num = ucs_log_ctx.num_handlers;
    memcpy(handlers, ucs_log_ctx.handlers, sizeof(*handlers) * num);
    pthread_mutex_unlock(&ucs_log_ctx.lock);

    for (i = num; i > 0; --i) {
        va_copy(aq, ap);
        if (handlers[i - 1](file, line, function, level, format, aq) ==
            UCS_LOG_FUNC_RC_STOP) {
            va_end(aq);
            return;
        }
        va_end(aq);
    }

    pthread_mutex_lock(&ucs_log_ctx.lock);
    ucs_log_print(file, line, level, format, ap);
    pthread_mutex_unlock(&ucs_log_ctx.lock);
}

void ucs_log_dispatch(const char *file, unsigned line, const char *function,
                      ucs_log_level_t level, const char *format, ...)
{
    va_list ap;

    va_start(ap, format);
    ucs_log_vdispatch(file, line, function, level, format, ap);
    va_end(ap);
}

void ucs_log_fatal(const char *file, unsigned line, const char *function,
                   const char *format, ...)
{
    va_list ap;

    va_start(ap, format);
    ucs_log_vdispatch(file, line, function, UCS_LOG_LEVEL_FATAL, format, ap);
    va_end(ap);
    abort();
}

void ucs_log_push_handler(ucs_log_func_t handler)
{
    pthread_mutex_lock(&ucs_log_ctx.lock);
    if (ucs_log_ctx.num_handlers < UCS_LOG_MAX_HANDLERS) {
        ucs_log_ctx.handlers[ucs_log_ctx.num_handlers++] = handler;
    }
    pthread_mutex_unlock(&ucs_log_ctx.lock);
}

void ucs_log_pop_handler(void)
{
    pthread_mutex_lock(&ucs_log_ctx.lock);
    if (ucs_log_ctx.num_handlers > 0) {
        --ucs_log_ctx.num_handlers;
    }
    pthread_mutex_unlock(&ucs_log_ctx.lock);
}

unsigned ucs_log_num_handlers(void)
{
    return ucs_log_ctx.num_handlers;
}

void ucs_log_set_level(ucs_log_level_t level)
{
    ucs_log_level = level;
}

ucs_status_t ucs_log_level_parse(const char *name, ucs_log_level_t *level_p)
{
    int i;

    if (name == NULL) {
        return UCS_ERR_INVALID_PARAM;
    }
    if (!strcasecmp(name, "warning")) {
        *level_p = UCS_LOG_LEVEL_WARN;
        return UCS_OK;
    }
    for (i = 0; i < UCS_LOG_LEVEL_LAST; ++i) {
        if (!strcasecmp(name, ucs_log_level_names[i])) {
            *level_p = (ucs_log_level_t)i;
            return UCS_OK;
        }
    }
    return UCS_ERR_INVALID_PARAM;
}

static void ucs_log_expand_path(const char *path, char *buf, size_t max)
{
    char host[64] = "";
    size_t len    = 0;
    const char *p;

    gethostname(host, sizeof(host) - 1);
    for (p = path; (*p != '\0') && (len + 1 < max); ++p) {
        if ((p[0] == '%') && (p[1] == 'p')) {
            len += snprintf(buf + len, max - len, "%d", (int)getpid());
            ++p;
        } else if ((p[0] == '%') && (p[1] == 'h')) {
            len += snprintf(buf + len, max - len, "%s", host);
            ++p;
        } else {
            buf[len++] = *p;
        }
        if (len >= max) {
            len = max - 1;
        }
    }
    buf[len] = '\0';
}

ucs_status_t ucs_log_set_file(const char *path)
{
    char expanded[4096];
    FILE *stream;
    int owned;

    if ((path == NULL) || (path[0] == '\0') || !strcmp(path, "stderr")) {
        stream = NULL;
        owned  = 0;
    } else if (!strcmp(path, "stdout")) {
        stream = stdout;
        owned  = 0;
    } else {
        ucs_log_expand_path(path, expanded, sizeof(expanded));
        stream = fopen(expanded, "a");
        if (stream == NULL) {
            fprintf(stderr,
                    "openuct: cannot open log file '%s': %s; "
                    "check UCX_LOG_FILE, logging to stderr\n",
                    expanded, strerror(errno));
            return UCS_ERR_IO_ERROR;
        }
        owned = 1;
    }

    pthread_mutex_lock(&ucs_log_ctx.lock);
    if (ucs_log_ctx.stream_owned) {
        fclose(ucs_log_ctx.stream);
    }
    ucs_log_ctx.stream       = stream;
    ucs_log_ctx.stream_owned = owned;
    pthread_mutex_unlock(&ucs_log_ctx.lock);
    return UCS_OK;
}

void ucs_log_cleanup(void)
{
    pthread_mutex_lock(&ucs_log_ctx.lock);
    if (ucs_log_ctx.stream_owned) {
        fclose(ucs_log_ctx.stream);
    }
    ucs_log_ctx.stream       = NULL;
    ucs_log_ctx.stream_owned = 0;
    pthread_mutex_unlock(&ucs_log_ctx.lock);
}
