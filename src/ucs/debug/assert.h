/**
 * @file
 * Assertions. ucs_assert() is compiled only with --enable-debug (or
 * --enable-assertions); ucs_assert_always() is always checked. A failed
 * assertion logs a FATAL message through the log handlers (see
 * ucs_log_fatal()) and aborts the process. Included by library code and
 * tests; a program using the library may use it too, but ENABLE_ASSERT then
 * comes from its own build, not from the library's.
 */
#ifndef UCS_DEBUG_ASSERT_H_
#define UCS_DEBUG_ASSERT_H_

#include <ucs/debug/log.h>

/**
 * Check @a _cond in every build; abort with "Assertion `cond' failed" if it
 * is false.
 *
 * @param _cond  Condition expected to be true; evaluated once.
 */
#define ucs_assert_always(_cond)                            \
    do {                                                    \
        if (ucs_unlikely(!(_cond))) {                       \
            ucs_log_fatal(__FILE__, __LINE__, __func__,     \
                          "Assertion `%s' failed", #_cond); \
        }                                                   \
    } while (0)

/**
 * Like ucs_assert_always(), with a printf-style explanation appended to the
 * message.
 *
 * @param _cond  Condition expected to be true; evaluated once.
 * @param _fmt   printf-style format string literal.
 */
#define ucs_assertv_always(_cond, _fmt, ...)                      \
    do {                                                          \
        if (ucs_unlikely(!(_cond))) {                             \
            ucs_log_fatal(__FILE__, __LINE__, __func__,           \
                          "Assertion `%s' failed: " _fmt, #_cond, \
                          ##__VA_ARGS__);                         \
        }                                                         \
    } while (0)

#if defined(ENABLE_ASSERT) && ENABLE_ASSERT
#define ucs_assert(_cond) ucs_assert_always(_cond)
#define ucs_assertv(_cond, _fmt, ...) \
    ucs_assertv_always(_cond, _fmt, ##__VA_ARGS__)
#else
/**
 * Check @a _cond in debug builds (ENABLE_ASSERT set, as --enable-debug
 * and --enable-assertions do), like ucs_assert_always(). In other builds
 * the condition is not evaluated at all, so it must have no side effects.
 *
 * @param _cond  Condition expected to be true.
 */
#define ucs_assert(_cond) \
    do {                  \
    } while (0)
/**
 * ucs_assertv_always() in debug builds, nothing in others (neither the
 * condition nor the arguments are evaluated).
 *
 * @param _cond  Condition expected to be true.
 * @param _fmt   printf-style format string literal.
 */
#define ucs_assertv(_cond, _fmt, ...) \
    do {                              \
    } while (0)
#endif

#endif
