#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <ucs/debug/log_limit.h>
#include <ucs/time/time.h>

#include <stdarg.h>
#include <stdio.h>

int ucs_log_limit_pass(ucs_log_limit_t *limit, uint32_t *suppressed_p)
{
    ucs_time_t now = ucs_get_time();

    if ((limit->next != 0) && (now < limit->next)) {
        if (limit->suppressed++ == 0) {
            limit->since = now;
        }
        return 0;
    }

    *suppressed_p     = limit->suppressed;
    limit->suppressed = 0;
    limit->next       = now + ucs_time_from_sec(UCS_LOG_LIMIT_INTERVAL_SEC);
    if (limit->next == 0) {
        limit->next = 1;
    }
    return 1;
}

void ucs_log_limit_flush(ucs_log_limit_t *limit, ucs_log_level_t level,
                         const char *what)
{
    if ((limit->suppressed > 0) && ucs_log_is_enabled(level)) {
        ucs_log_dispatch(__FILE__, __LINE__, __func__, level,
                         "%s: %u more lines like the last one were "
                         "suppressed",
                         what, limit->suppressed);
    }
    limit->suppressed = 0;
}

void ucs_log_limited_dispatch(const char *file, unsigned line,
                              const char *function, ucs_log_level_t level,
                              uint32_t suppressed, const char *format, ...)
{
    char message[1024];
    va_list ap;

    va_start(ap, format);
    vsnprintf(message, sizeof(message), format, ap);
    va_end(ap);

    if (suppressed == 0) {
        ucs_log_dispatch(file, line, function, level, "%s", message);
    } else {
        ucs_log_dispatch(file, line, function, level,
                         "%s (%u similar lines suppressed)", message,
                         suppressed);
    }
}
