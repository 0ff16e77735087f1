/**
 * @file
 * A cheap monotonic clock.
 *
 * On x86_64 processors with an invariant TSC (the time stamp counter runs at
 * a constant rate in every power state and is synchronized across cores;
 * CPUID leaf 0x80000007, EDX bit 8) ucs_get_time() is a single rdtsc and
 * ticks are TSC cycles. The rate is measured once against CLOCK_MONOTONIC,
 * over the interval between library load and the first conversion, and never
 * changes afterwards. Everywhere else, or when the TSC is not invariant,
 * ucs_get_time() reads CLOCK_MONOTONIC (through the vDSO, no system call)
 * and ticks are nanoseconds. The choice is made once, at library load, so
 * every ucs_time_t in the process comes from the same clock.
 *
 * Included by transports (timeouts, keepalive), perftest and programs that
 * time themselves. Every function is thread-safe; ticks from different
 * threads are comparable.
 */
#ifndef UCS_TIME_TIME_H_
#define UCS_TIME_TIME_H_

#include <ucs/sys/compiler_def.h>
#include <ucs/time/time_def.h>

BEGIN_C_DECLS

/** Nonzero when ucs_get_time() reads the TSC; set once at library load. */
extern int ucs_time_tsc_enabled;

/** Ticks per second once measured, 0 before; use ucs_time_units_per_sec(). */
extern double ucs_time_units_per_sec_value;

/**
 * Measure (once) and return the tick rate; see ucs_time_units_per_sec().
 *
 * @return Ticks per second.
 */
double ucs_time_calibrate(void);

/**
 * CLOCK_MONOTONIC in nanoseconds.
 *
 * @return Nanoseconds since an arbitrary start.
 */
uint64_t ucs_time_monotonic_nsec(void);

/**
 * The current time in ticks. No system call, no lock.
 *
 * @return The time, monotonic within the process.
 */
static UCS_F_ALWAYS_INLINE ucs_time_t ucs_get_time(void)
{
#if defined(__x86_64__)
    uint32_t low, high;

    if (ucs_likely(ucs_time_tsc_enabled)) {
        __asm__ __volatile__("rdtsc" : "=a"(low), "=d"(high));
        return ((ucs_time_t)high << 32) | low;
    }
#endif
    return ucs_time_monotonic_nsec();
}

/**
 * Ticks per second. The first call may wait up to 20 ms if the library was
 * loaded less than that long ago (the TSC rate is being measured).
 *
 * @return Ticks per second, constant for the life of the process.
 */
static inline double ucs_time_units_per_sec(void)
{
    double value;

    __atomic_load(&ucs_time_units_per_sec_value, &value, __ATOMIC_ACQUIRE);
    if (ucs_likely(value != 0)) {
        return value;
    }
    return ucs_time_calibrate();
}

/**
 * Seconds to ticks, rounded to nearest; negative input gives 0.
 * @param [in] sec  Seconds.
 * @return Ticks.
 */
static inline ucs_time_t ucs_time_from_sec(double sec)
{
    if (sec <= 0) {
        return 0;
    }
    return (ucs_time_t)((sec * ucs_time_units_per_sec()) + 0.5);
}

/**
 * Milliseconds to ticks.
 * @param [in] msec  Milliseconds.
 * @return Ticks.
 */
static inline ucs_time_t ucs_time_from_msec(double msec)
{
    return ucs_time_from_sec(msec / 1e3);
}

/**
 * Microseconds to ticks.
 * @param [in] usec  Microseconds.
 * @return Ticks.
 */
static inline ucs_time_t ucs_time_from_usec(double usec)
{
    return ucs_time_from_sec(usec / 1e6);
}

/**
 * Ticks to seconds.
 * @param [in] t  Ticks.
 * @return Seconds.
 */
static inline double ucs_time_to_sec(ucs_time_t t)
{
    return (double)t / ucs_time_units_per_sec();
}

/**
 * Ticks to milliseconds.
 * @param [in] t  Ticks.
 * @return Milliseconds.
 */
static inline double ucs_time_to_msec(ucs_time_t t)
{
    return ucs_time_to_sec(t) * 1e3;
}

/**
 * Ticks to microseconds.
 * @param [in] t  Ticks.
 * @return Microseconds.
 */
static inline double ucs_time_to_usec(ucs_time_t t)
{
    return ucs_time_to_sec(t) * 1e6;
}

/**
 * Ticks to nanoseconds.
 * @param [in] t  Ticks.
 * @return Nanoseconds.
 */
static inline double ucs_time_to_nsec(ucs_time_t t)
{
    return ucs_time_to_sec(t) * 1e9;
}

/**
 * CLOCK_MONOTONIC as seconds: slower than ucs_get_time(), but needs no
 * calibration; for measurements that are compared with other programs.
 *
 * @return Seconds since an arbitrary start.
 */
static inline double ucs_get_accurate_time(void)
{
    return (double)ucs_time_monotonic_nsec() / 1e9;
}

/**
 * What ucs_get_time() reads, for tools.
 *
 * @return "tsc" or "clock_gettime", a static string.
 */
const char *ucs_time_source_name(void);

END_C_DECLS

#endif
