/*
 * uct_perftest: the benchmark's own clock.
 *
 * The harness builds against any UCT implementation (openuct or UCX), so
 * it keeps time itself instead of using a library's clock. On x86_64
 * with an invariant time stamp counter (the CPU flags constant_tsc and
 * nonstop_tsc) it reads the counter, calibrated against CLOCK_MONOTONIC
 * at start; elsewhere it reads CLOCK_MONOTONIC in nanoseconds.
 * PERF_CLOCK=monotonic in the environment forces the second.
 */
#ifndef UCT_PERFTEST_CLOCK_H_
#define UCT_PERFTEST_CLOCK_H_

#include <stdint.h>
#include <time.h>

typedef uint64_t perf_time_t;

typedef struct {
    int use_tsc; /* 1: the time stamp counter, 0: monotonic ns */
    double ticks_per_sec;
    const char *name; /* "tsc" or "monotonic", for the header */
} perf_clock_t;

extern perf_clock_t perf_clock;

/* Chooses and calibrates the clock; call once before the first read */
void perf_clock_init(void);

static inline perf_time_t perf_time_monotonic(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (perf_time_t)ts.tv_sec * 1000000000ull + (perf_time_t)ts.tv_nsec;
}

static inline perf_time_t perf_time_now(void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (perf_clock.use_tsc) {
        return __builtin_ia32_rdtsc();
    }
#endif
    return perf_time_monotonic();
}

static inline double perf_time_to_sec(perf_time_t t)
{
    return (double)t / perf_clock.ticks_per_sec;
}

static inline double perf_time_to_usec(perf_time_t t)
{
    return (double)t * 1e6 / perf_clock.ticks_per_sec;
}

static inline perf_time_t perf_time_from_sec(double sec)
{
    return (perf_time_t)(sec * perf_clock.ticks_per_sec);
}

#endif
