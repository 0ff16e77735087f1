/*
 * uct_perftest: choice and calibration of the clock (perftest_clock.h).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "perftest_clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PERF_CLOCK_CALIB_NSEC 20000000L /* calibration interval */

perf_clock_t perf_clock = {0, 1e9, "monotonic"};

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* Whether the flags line of /proc/cpuinfo names @a flag as a whole word */
static int perf_flags_have(const char *flags, const char *flag)
{
    size_t len    = strlen(flag);
    const char *p = flags;

    while ((p = strstr(p, flag)) != NULL) {
        if (((p == flags) || (p[-1] == ' ') || (p[-1] == '\t')) &&
            ((p[len] == ' ') || (p[len] == '\n') || (p[len] == '\0'))) {
            return 1;
        }
        p += len;
    }
    return 0;
}

static int perf_tsc_is_invariant(void)
{
    char line[8192];
    int ok = 0;
    FILE *f;

    f = fopen("/proc/cpuinfo", "r");
    if (f == NULL) {
        return 0;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        if (!strncmp(line, "flags", 5)) {
            ok = perf_flags_have(line, "constant_tsc") &&
                 perf_flags_have(line, "nonstop_tsc");
            break;
        }
    }
    fclose(f);
    return ok;
}

/* The counter's frequency: counter and CLOCK_MONOTONIC read together,
 * twice, PERF_CLOCK_CALIB_NSEC apart; each pair takes the middle of two
 * monotonic reads around one counter read */
static double perf_tsc_calibrate(void)
{
    struct timespec pause = {0, PERF_CLOCK_CALIB_NSEC};
    perf_time_t m0, m1, m2, m3, t0, t1;

    m0 = perf_time_monotonic();
    t0 = __builtin_ia32_rdtsc();
    m1 = perf_time_monotonic();
    nanosleep(&pause, NULL);
    m2 = perf_time_monotonic();
    t1 = __builtin_ia32_rdtsc();
    m3 = perf_time_monotonic();

    if ((t1 <= t0) || ((m2 + m3) <= (m0 + m1))) {
        return 0;
    }
    return (double)(t1 - t0) * 2e9 / (double)((m2 + m3) - (m0 + m1));
}
#endif

void perf_clock_init(void)
{
    const char *env = getenv("PERF_CLOCK");

    perf_clock.use_tsc       = 0;
    perf_clock.ticks_per_sec = 1e9;
    perf_clock.name          = "monotonic";

    if ((env != NULL) && strcmp(env, "tsc") && strcmp(env, "monotonic")) {
        fprintf(stderr,
                "uct_perftest: PERF_CLOCK=%s is unknown; use tsc "
                "or monotonic. Using monotonic\n",
                env);
        return;
    }
    if ((env != NULL) && !strcmp(env, "monotonic")) {
        return;
    }

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (perf_tsc_is_invariant()) {
        double hz = perf_tsc_calibrate();

        if (hz > 1e6) {
            perf_clock.use_tsc       = 1;
            perf_clock.ticks_per_sec = hz;
            perf_clock.name          = "tsc";
            return;
        }
    }
#endif
    if (env != NULL) {
        fprintf(stderr, "uct_perftest: PERF_CLOCK=tsc: this CPU has no "
                        "invariant time stamp counter; using monotonic\n");
    }
}
