/*
 * Assertions. ucs_assert() is compiled only with --enable-debug (or
 * --enable-assertions); ucs_assert_always() is always checked.
 */
#ifndef UCS_DEBUG_ASSERT_H_
#define UCS_DEBUG_ASSERT_H_

#include <ucs/debug/log.h>

#define ucs_assert_always(_cond) \
    do { \
        if (ucs_unlikely(!(_cond))) { \
            ucs_log_fatal(__FILE__, __LINE__, __func__, \
                          "Assertion `%s' failed", #_cond); \
        } \
    } while (0)

#define ucs_assertv_always(_cond, _fmt, ...) \
    do { \
        if (ucs_unlikely(!(_cond))) { \
            ucs_log_fatal(__FILE__, __LINE__, __func__, \
                          "Assertion `%s' failed: " _fmt, #_cond, \
                          ##__VA_ARGS__); \
        } \
    } while (0)

#if defined(ENABLE_ASSERT) && ENABLE_ASSERT
#  define ucs_assert(_cond)              ucs_assert_always(_cond)
#  define ucs_assertv(_cond, _fmt, ...)  ucs_assertv_always(_cond, _fmt, \
                                                             ##__VA_ARGS__)
#else
#  define ucs_assert(_cond)              do { } while (0)
#  define ucs_assertv(_cond, _fmt, ...)  do { } while (0)
#endif

#endif
