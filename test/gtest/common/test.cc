#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "test.h"

#include <ucs/sys/sys.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <pthread.h>
#ifdef HAVE_VALGRIND_VALGRIND_H
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#endif

namespace ucs {

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static std::vector<std::string> log_captured;
static std::vector<std::string> log_unexpected;
static int log_capture_depth = 0;

static std::string format_line(const char *file, unsigned line,
                               ucs_log_level_t level, const char *fmt,
                               va_list ap)
{
    char buf[2048];
    const char *base = strrchr(file, '/');
    vsnprintf(buf, sizeof(buf), fmt, ap);
    return std::string(ucs_log_level_names[level]) + " " +
           (base ? base + 1 : file) + ":" + std::to_string(line) + " " + buf;
}

static ucs_log_func_rc_t test_log_handler(const char *file, unsigned line,
                                          const char *function,
                                          ucs_log_level_t level,
                                          const char *fmt, va_list ap)
{
    if (level > UCS_LOG_LEVEL_WARN) {
        return UCS_LOG_FUNC_RC_CONTINUE;
    }

    std::string msg = format_line(file, line, level, fmt, ap);
    pthread_mutex_lock(&log_lock);
    if (log_capture_depth > 0) {
        log_captured.push_back(msg);
        pthread_mutex_unlock(&log_lock);
        return UCS_LOG_FUNC_RC_STOP;
    }
    log_unexpected.push_back(msg);
    pthread_mutex_unlock(&log_lock);
    return UCS_LOG_FUNC_RC_CONTINUE;
}

test::test()
{}
test::~test()
{}

void test::SetUp()
{
    pthread_mutex_lock(&log_lock);
    log_captured.clear();
    log_unexpected.clear();
    log_capture_depth = 0;
    pthread_mutex_unlock(&log_lock);
    ucs_log_push_handler(test_log_handler);
}

void test::TearDown()
{
    ucs_log_pop_handler();
    pthread_mutex_lock(&log_lock);
    std::vector<std::string> unexpected = log_unexpected;
    log_unexpected.clear();
    pthread_mutex_unlock(&log_lock);
    for (size_t i = 0; i < unexpected.size(); ++i) {
        ADD_FAILURE() << "unexpected log line: " << unexpected[i];
    }
}

std::vector<std::string> &test::captured()
{
    return log_captured;
}

unsigned test::unexpected_count()
{
    return log_unexpected.size();
}

scoped_log_capture::scoped_log_capture()
{
    pthread_mutex_lock(&log_lock);
    m_start = log_captured.size();
    ++log_capture_depth;
    pthread_mutex_unlock(&log_lock);
}

scoped_log_capture::~scoped_log_capture()
{
    pthread_mutex_lock(&log_lock);
    --log_capture_depth;
    pthread_mutex_unlock(&log_lock);
}

const std::vector<std::string> &scoped_log_capture::messages() const
{
    return log_captured;
}

bool scoped_log_capture::contains(const std::string &text) const
{
    bool found = false;
    pthread_mutex_lock(&log_lock);
    for (size_t i = m_start; i < log_captured.size(); ++i) {
        if (log_captured[i].find(text) != std::string::npos) {
            found = true;
            break;
        }
    }
    pthread_mutex_unlock(&log_lock);
    return found;
}

scoped_setenv::scoped_setenv(const char *name, const char *value)
    : m_name(name), m_had_old(false)
{
    const char *old = getenv(name);
    if (old != NULL) {
        m_old     = old;
        m_had_old = true;
    }
    if (value != NULL) {
        setenv(name, value, 1);
    } else {
        unsetenv(name);
    }
}

scoped_setenv::~scoped_setenv()
{
    if (m_had_old) {
        setenv(m_name.c_str(), m_old.c_str(), 1);
    } else {
        unsetenv(m_name.c_str());
    }
}

bool running_on_valgrind()
{
    return RUNNING_ON_VALGRIND;
}

void print_heap_definition()
{
    static std::once_flag once;

    std::call_once(once, [] { printf("%s\n", UCS_SYS_HEAP_DEFINITION); });
}

unsigned test_scale(unsigned count)
{
    if (running_on_valgrind()) {
        return (count / 50) + 1;
    }
    return count;
}

} // namespace ucs
