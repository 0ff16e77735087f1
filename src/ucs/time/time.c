#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <ucs/time/time.h>
#include <ucs/debug/log.h>

#include <errno.h>
#include <time.h>
#include <pthread.h>

/* Shortest interval the TSC rate is measured over: with ~100 ns of jitter
 * in a sample this keeps the error near 5 parts per million. */
#define UCS_TIME_CALIBRATE_MIN_NSEC 20000000ull

int ucs_time_tsc_enabled            = 0;
double ucs_time_units_per_sec_value = 0;

uint64_t ucs_time_monotonic_nsec(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ((uint64_t)ts.tv_sec * 1000000000ull) + (uint64_t)ts.tv_nsec;
}

static struct {
    pthread_once_t once;
    uint64_t base_tsc;  /* TSC and CLOCK_MONOTONIC read together */
    uint64_t base_nsec; /* at library load */
} ucs_time_ctx = {.once = PTHREAD_ONCE_INIT};

#if defined(__x86_64__)

static void ucs_time_cpuid(uint32_t leaf, uint32_t *eax, uint32_t *edx)
{
    uint32_t ebx, ecx;

    __asm__ __volatile__("cpuid"
                         : "=a"(*eax), "=b"(ebx), "=c"(ecx), "=d"(*edx)
                         : "a"(leaf), "c"(0));
}

/* CPUID 0x80000007 EDX bit 8: the TSC is invariant. */
static int ucs_time_tsc_is_invariant(void)
{
    uint32_t eax, edx;

    ucs_time_cpuid(0x80000000u, &eax, &edx);
    if (eax < 0x80000007u) {
        return 0;
    }

    ucs_time_cpuid(0x80000007u, &eax, &edx);
    return !!(edx & (1u << 8));
}

static uint64_t ucs_time_read_tsc(void)
{
    uint32_t low, high;

    __asm__ __volatile__("rdtsc" : "=a"(low), "=d"(high));
    return ((uint64_t)high << 32) | low;
}

/* Read the TSC and the monotonic clock at (nearly) the same instant: keep
 * the tightest of a few tries, with the TSC value taken midway. */
static void ucs_time_sample(uint64_t *tsc_p, uint64_t *nsec_p)
{
    uint64_t best_window = UINT64_MAX;
    uint64_t before, after, nsec;
    int i;

    for (i = 0; i < 5; ++i) {
        before = ucs_time_read_tsc();
        nsec   = ucs_time_monotonic_nsec();
        after  = ucs_time_read_tsc();
        if ((after - before) < best_window) {
            best_window = after - before;
            *tsc_p      = before + ((after - before) / 2);
            *nsec_p     = nsec;
        }
    }
}

#else

static int ucs_time_tsc_is_invariant(void)
{
    return 0;
}

static void ucs_time_sample(uint64_t *tsc_p, uint64_t *nsec_p)
{
    *tsc_p  = 0;
    *nsec_p = ucs_time_monotonic_nsec();
}

#endif

/* Runs before the other constructors of the library, so that no time is
 * read from a clock that is about to be switched. */
__attribute__((constructor(101))) static void ucs_time_init(void)
{
    if (ucs_time_tsc_is_invariant()) {
        ucs_time_sample(&ucs_time_ctx.base_tsc, &ucs_time_ctx.base_nsec);
        ucs_time_tsc_enabled = 1;
    }
}

static void ucs_time_measure_rate(void)
{
    uint64_t tsc = 0, nsec = 0, elapsed;
    struct timespec pause;
    double value;

    if (!ucs_time_tsc_enabled) {
        value = 1e9;
        __atomic_store(&ucs_time_units_per_sec_value, &value, __ATOMIC_RELEASE);
        return;
    }

    ucs_time_sample(&tsc, &nsec);
    elapsed = nsec - ucs_time_ctx.base_nsec;
    if (elapsed < UCS_TIME_CALIBRATE_MIN_NSEC) {
        pause.tv_sec  = 0;
        pause.tv_nsec = (long)(UCS_TIME_CALIBRATE_MIN_NSEC - elapsed);
        while ((nanosleep(&pause, &pause) != 0) && (errno == EINTR)) {
        }
        ucs_time_sample(&tsc, &nsec);
    }

    value = (double)(tsc - ucs_time_ctx.base_tsc) * 1e9 /
            (double)(nsec - ucs_time_ctx.base_nsec);
    ucs_debug("TSC rate measured over %.3f ms: %.6f MHz",
              (double)(nsec - ucs_time_ctx.base_nsec) / 1e6, value / 1e6);
    __atomic_store(&ucs_time_units_per_sec_value, &value, __ATOMIC_RELEASE);
}

double ucs_time_calibrate(void)
{
    double value;

    pthread_once(&ucs_time_ctx.once, ucs_time_measure_rate);
    __atomic_load(&ucs_time_units_per_sec_value, &value, __ATOMIC_ACQUIRE);
    return value;
}

const char *ucs_time_source_name(void)
{
    return ucs_time_tsc_enabled ? "tsc" : "clock_gettime";
}
