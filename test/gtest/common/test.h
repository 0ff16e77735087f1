/*
 * Base fixture for every test: fails the test on an unexpected error or
 * warning log line, and lets a test declare the messages it expects.
 */
#ifndef OPENUCT_TEST_COMMON_TEST_H_
#define OPENUCT_TEST_COMMON_TEST_H_

#include <gtest/gtest.h>

extern "C" {
#include <ucs/debug/log.h>
}

#include <string>
#include <vector>

namespace ucs {

class test : public testing::Test {
public:
    test();
    virtual ~test();

protected:
    virtual void SetUp();
    virtual void TearDown();

    /* Error and warning lines logged since the test started that were
     * caught by a scoped_log_capture. */
    static std::vector<std::string> &captured();

    /* Count of unexpected error/warning lines; test fails if non-zero. */
    static unsigned unexpected_count();
};

/*
 * While alive, error and warning messages are recorded (see
 * test::captured()) instead of failing the test.
 */
class scoped_log_capture {
public:
    scoped_log_capture();
    ~scoped_log_capture();
    const std::vector<std::string> &messages() const;
    /* True if some captured message contains @a text. */
    bool contains(const std::string &text) const;

private:
    size_t m_start;
};

/* Sets an environment variable for the lifetime of the object. */
class scoped_setenv {
public:
    scoped_setenv(const char *name, const char *value);
    ~scoped_setenv();

private:
    std::string m_name;
    std::string m_old;
    bool m_had_old;
};

/* Scale a loop count down under valgrind. */
unsigned test_scale(unsigned count);

bool running_on_valgrind();

/* Prints UCS_SYS_HEAP_DEFINITION, the first time only: a test calls it
 * before printing a heap per object figure (ucs_sys_heap_per_object()). */
void print_heap_definition();

} // namespace ucs

#endif
