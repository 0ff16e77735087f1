/*
 * Helpers shared by the harnesses: failing with a message, silencing the
 * log.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "fuzz.h"

#include <ucs/debug/log.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void fuzz_fail(const char *file, unsigned line, const char *cond,
               const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "%s:%u: harness check failed: %s: ", file, line, cond);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    fflush(stderr);
    abort();
}

static ucs_log_func_rc_t fuzz_log_handler(const char *file, unsigned line,
                                          const char *function,
                                          ucs_log_level_t level,
                                          const char *format, va_list ap)
{
    char message[1024];

    if (level == UCS_LOG_LEVEL_FATAL) {
        return UCS_LOG_FUNC_RC_CONTINUE;
    }

    vsnprintf(message, sizeof(message), format, ap);
    return UCS_LOG_FUNC_RC_STOP;
}

void fuzz_log_silence(int level)
{
    const char *verbose = getenv("FUZZ_VERBOSE");

    if ((verbose != NULL) && (verbose[0] != '\0') && (verbose[0] != '0')) {
        return;
    }

    ucs_log_set_level((ucs_log_level_t)level);
    ucs_log_push_handler(fuzz_log_handler);
}
