/*
 * The floor of shared-memory transports: what a message between two
 * processes on two cores costs when it is nothing but a cache line moving
 * from one core to the other. A posix or sysv active message crosses at
 * least this, so this is what such a transport cannot beat on the machine.
 *
 * Two processes (fork) share an anonymous mapping (MAP_SHARED, made before
 * the fork), each pinned to its CPU:
 *
 *   lat  ping-pong of a sequence number in one cache line: the initiator
 *        writes 2i+1, the responder waits for it and writes 2i+2, the
 *        initiator waits for that. Every round trip is timed; latency is
 *        half of it (p50, p99, minimum, and the average over the run).
 *        With -L 2 the responder answers in a line of its own, so each
 *        line has one writer, as in a pair of FIFOs.
 *   bw   one-way stream through a ring of WINDOW cache lines, as a FIFO:
 *        message k is the 8-byte sequence number k written into line
 *        k % WINDOW; the reader polls the line it expects next and, every
 *        WINDOW/2 messages (tail batching), writes how far it has read in a
 *        tail line; the writer waits for room only when the ring is full.
 *        The rate is messages over the time from the first measured one
 *        until the reader has acknowledged the last.
 *
 * Prints CSV in the columns of uct_perftest -f csv (test,mode,size,
 * iterations,typical_lat_usec,avg_lat_usec,bw_mib_s,msg_rate,min_lat_usec,
 * p99_lat_usec): "am_lat,floor,8,..." and "am_bw,floor,8,...".
 *
 * Usage: sm_floor [-c R,I] [-t lat|bw|all] [-n ITERS] [-w WARMUP]
 *                 [-W WINDOW] [-L 1|2] [-T SECONDS]
 *   R,I      CPUs of the responder (reader) and of the initiator (writer);
 *            default 0,1
 *   ITERS    measured round trips (lat) and messages (bw); default 1000000
 *            and 20 times that for bw
 *   WARMUP   iterations before measuring (default ITERS/10)
 *   WINDOW   ring lines of the stream, a power of two 2-4096 (default 64,
 *            the FIFO size of UCX's posix and sysv transports)
 *   -L       lat: 1, one line both ways (default); 2, one line per direction
 *   SECONDS  both processes give up after this long, exit code 2 (default
 *            60; 0: never)
 */
#define _GNU_SOURCE

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Separate objects sit FLOOR_PAD apart: the adjacent line prefetcher
 * moves pairs of lines */
#define FLOOR_LINE        64
#define FLOOR_PAD         128
#define FLOOR_WINDOW_MAX  4096
#define FLOOR_CALIB_NSEC  20000000L
#define FLOOR_DEFAULT_LAT 1000000ul
#define FLOOR_BW_FACTOR   20

typedef struct {
    _Atomic uint64_t value;
    char pad[FLOOR_PAD - sizeof(uint64_t)];
} floor_ctl_t;

typedef struct {
    _Atomic uint64_t seq;
    char pad[FLOOR_LINE - sizeof(uint64_t)];
} floor_elem_t;

/* The shared mapping; ring[] has the stream's window of lines */
typedef struct {
    floor_ctl_t ping;  /* lat: the sequence number going back and forth */
    floor_ctl_t tail;  /* bw: messages the reader has acknowledged */
    floor_ctl_t ready; /* the responder is pinned and polling: phase */
    floor_ctl_t pong;  /* lat with -L 2: the responder's answers */
    floor_elem_t ring[];
} floor_shm_t;

typedef struct {
    int cpu[2]; /* responder, initiator */
    int do_lat;
    int do_bw;
    unsigned long lat_iters;
    unsigned long bw_iters;
    unsigned long warmup; /* 0: a tenth of each test's iterations */
    int warmup_set;
    unsigned window;
    unsigned timeout;
    unsigned lines; /* lat: 1, one line both ways; 2, one per direction */
} floor_opts_t;

static double floor_ticks_per_usec = 1e3; /* nanoseconds until calibrated */
static int floor_use_tsc;

static inline uint64_t floor_ns_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The time stamp counter where it is invariant, else nanoseconds */
static inline uint64_t floor_ticks(void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (floor_use_tsc) {
        return __builtin_ia32_rdtsc();
    }
#endif
    return floor_ns_now();
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
static int floor_tsc_invariant(void)
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
            ok = (strstr(line, " constant_tsc") != NULL) &&
                 (strstr(line, " nonstop_tsc") != NULL);
            break;
        }
    }
    fclose(f);
    return ok;
}
#endif

/* Picks the clock; the counter's rate is measured against CLOCK_MONOTONIC
 * over FLOOR_CALIB_NSEC */
static void floor_clock_init(void)
{
    floor_use_tsc        = 0;
    floor_ticks_per_usec = 1e3;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (floor_tsc_invariant()) {
        struct timespec pause = {0, FLOOR_CALIB_NSEC};
        uint64_t m0, m1, t0, t1;

        m0 = floor_ns_now();
        t0 = __builtin_ia32_rdtsc();
        nanosleep(&pause, NULL);
        m1 = floor_ns_now();
        t1 = __builtin_ia32_rdtsc();
        if ((t1 > t0) && (m1 > m0)) {
            floor_use_tsc        = 1;
            floor_ticks_per_usec = (double)(t1 - t0) * 1e3 / (double)(m1 - m0);
        }
    }
#endif
}

static int floor_pin(int cpu)
{
    cpu_set_t set;

    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof(set), &set) != 0) {
        fprintf(stderr,
                "sm_floor: cannot run on CPU %d: %s; pick others "
                "with -c R,I\n",
                cpu, strerror(errno));
        return -1;
    }
    return 0;
}

static inline uint64_t floor_load(_Atomic uint64_t *p)
{
    return atomic_load_explicit(p, memory_order_acquire);
}

static inline void floor_store(_Atomic uint64_t *p, uint64_t v)
{
    atomic_store_explicit(p, v, memory_order_release);
}

/* Waits until the responder reports phase @a phase; -1 when it could not
 * start */
static int floor_wait_ready(floor_shm_t *shm, uint64_t phase)
{
    uint64_t v;

    while ((v = floor_load(&shm->ready.value)) != phase) {
        if (v == UINT64_MAX) {
            return -1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------ responder */

/* Where the responder answers: the ping line itself, or its own line */
static _Atomic uint64_t *floor_pong(floor_shm_t *shm, unsigned lines)
{
    return (lines == 2) ? &shm->pong.value : &shm->ping.value;
}

static void floor_respond_lat(floor_shm_t *shm, unsigned long total,
                              unsigned lines)
{
    _Atomic uint64_t *pong = floor_pong(shm, lines);
    unsigned long i;
    uint64_t seq;

    for (i = 0; i < total; ++i) {
        seq = 2 * (uint64_t)i + 1;
        while (floor_load(&shm->ping.value) != seq) {
        }
        floor_store(pong, seq + 1);
    }
}

static void floor_respond_bw(floor_shm_t *shm, unsigned long total,
                             unsigned window)
{
    unsigned batch = window / 2, pending = 0;
    uint64_t seq;

    for (seq = 1; seq <= total; ++seq) {
        while (floor_load(&shm->ring[seq & (window - 1)].seq) != seq) {
        }
        if (++pending == batch) {
            floor_store(&shm->tail.value, seq);
            pending = 0;
        }
    }
    floor_store(&shm->tail.value, total);
}

static int floor_responder(floor_shm_t *shm, const floor_opts_t *opts,
                           unsigned long lat_total, unsigned long bw_total)
{
    if (floor_pin(opts->cpu[0]) != 0) {
        floor_store(&shm->ready.value, UINT64_MAX);
        return 1;
    }
    if (opts->do_lat) {
        floor_store(&shm->ready.value, 1);
        floor_respond_lat(shm, lat_total, opts->lines);
    }
    if (opts->do_bw) {
        floor_store(&shm->ready.value, 2);
        floor_respond_bw(shm, bw_total, opts->window);
    }
    return 0;
}

/* ------------------------------------------------------------ initiator */

static int floor_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return (x > y) - (x < y);
}

static void floor_lat(floor_shm_t *shm, unsigned long warmup,
                      unsigned long iters, unsigned lines, uint64_t *samples)
{
    _Atomic uint64_t *pong = floor_pong(shm, lines);
    uint64_t seq, t0, t1, start;
    unsigned long i, k, p99;
    double half_usec, avg;

    for (i = 0; i < warmup; ++i) {
        seq = 2 * (uint64_t)i + 1;
        floor_store(&shm->ping.value, seq);
        while (floor_load(pong) != seq + 1) {
        }
    }
    start = floor_ticks();
    t0    = start;
    for (k = 0; k < iters; ++k, ++i) {
        seq = 2 * (uint64_t)i + 1;
        floor_store(&shm->ping.value, seq);
        while (floor_load(pong) != seq + 1) {
        }
        t1         = floor_ticks();
        samples[k] = t1 - t0;
        t0         = t1;
    }
    avg = (double)(t0 - start) / (double)iters;

    qsort(samples, iters, sizeof(*samples), floor_cmp_u64);
    half_usec = 0.5 / floor_ticks_per_usec;
    p99       = (iters * 99) / 100;
    if (p99 >= iters) {
        p99 = iters - 1;
    }
    printf("am_lat,floor,8,%lu,%.3f,%.3f,%.2f,%.0f,%.3f,%.3f\n", iters,
           (double)samples[iters / 2] * half_usec, avg * half_usec,
           8.0 / (avg * half_usec) / 1.048576, 1e6 / (avg * half_usec),
           (double)samples[0] * half_usec, (double)samples[p99] * half_usec);
}

static void floor_bw(floor_shm_t *shm, unsigned long warmup,
                     unsigned long iters, unsigned window)
{
    uint64_t total = warmup + iters, seq, tail = 0, t0 = 0, t1;
    double usec;

    for (seq = 1; seq <= total; ++seq) {
        if (seq == warmup + 1) {
            t0 = floor_ticks();
        }
        while ((seq - tail) > window) {
            tail = floor_load(&shm->tail.value);
        }
        floor_store(&shm->ring[seq & (window - 1)].seq, seq);
    }
    while (floor_load(&shm->tail.value) != total) {
    }
    t1   = floor_ticks();
    usec = (double)(t1 - t0) / floor_ticks_per_usec;
    printf("am_bw,floor,8,%lu,,,%.2f,%.0f,,\n", iters,
           (double)iters * 8.0 / usec / 1.048576, (double)iters * 1e6 / usec);
}

static void floor_on_alarm(int sig)
{
    static const char msg[] = "sm_floor: no progress before the -T limit; "
                              "is the other side's CPU busy?\n";

    (void)sig;
    if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
        /* nothing more to say */
    }
    _exit(2);
}

/* ------------------------------------------------------------- options */

static int floor_parse_ulong(const char *s, unsigned long *v)
{
    char *end;

    errno = 0;
    *v    = strtoul(s, &end, 10);
    if ((errno != 0) || (end == s) || (*end != '\0') || (s[0] == '-')) {
        return -1;
    }
    return 0;
}

static void floor_usage(FILE *f)
{
    fprintf(f, "Usage: sm_floor [-c R,I] [-t lat|bw|all] [-n ITERS] "
               "[-w WARMUP] [-W WINDOW] [-L 1|2] [-T SECONDS]\n");
}

static int floor_parse(int argc, char **argv, floor_opts_t *opts)
{
    unsigned long v;
    int c, n;

    while ((c = getopt(argc, argv, "c:t:n:w:W:L:T:h")) != -1) {
        switch (c) {
        case 'c':
            n = -1;
            if ((sscanf(optarg, "%d,%d%n", &opts->cpu[0], &opts->cpu[1], &n) !=
                 2) ||
                (n < 0) || (optarg[n] != '\0') || (opts->cpu[0] < 0) ||
                (opts->cpu[1] < 0)) {
                fprintf(stderr, "sm_floor: -c wants two CPUs like 0,1\n");
                return -1;
            }
            break;
        case 't':
            opts->do_lat = !strcmp(optarg, "lat") || !strcmp(optarg, "all");
            opts->do_bw  = !strcmp(optarg, "bw") || !strcmp(optarg, "all");
            if (!opts->do_lat && !opts->do_bw) {
                fprintf(stderr, "sm_floor: -t wants lat, bw or all\n");
                return -1;
            }
            break;
        case 'n':
            if ((floor_parse_ulong(optarg, &v) != 0) || (v == 0) ||
                (v > (1ul << 32))) {
                fprintf(stderr, "sm_floor: -n wants 1-2^32 iterations\n");
                return -1;
            }
            opts->lat_iters = v;
            opts->bw_iters  = v * FLOOR_BW_FACTOR;
            break;
        case 'w':
            if ((floor_parse_ulong(optarg, &v) != 0) || (v > (1ul << 32))) {
                fprintf(stderr, "sm_floor: -w wants 0-2^32 iterations\n");
                return -1;
            }
            opts->warmup     = v;
            opts->warmup_set = 1;
            break;
        case 'W':
            if ((floor_parse_ulong(optarg, &v) != 0) || (v < 2) ||
                (v > FLOOR_WINDOW_MAX) || (v & (v - 1))) {
                fprintf(stderr, "sm_floor: -W wants a power of two 2-%d\n",
                        FLOOR_WINDOW_MAX);
                return -1;
            }
            opts->window = (unsigned)v;
            break;
        case 'L':
            if (strcmp(optarg, "1") && strcmp(optarg, "2")) {
                fprintf(stderr, "sm_floor: -L wants 1 or 2 lines\n");
                return -1;
            }
            opts->lines = (unsigned)(optarg[0] - '0');
            break;
        case 'T':
            if ((floor_parse_ulong(optarg, &v) != 0) || (v > 86400)) {
                fprintf(stderr, "sm_floor: -T wants 0-86400 seconds\n");
                return -1;
            }
            opts->timeout = (unsigned)v;
            break;
        case 'h':
            floor_usage(stdout);
            exit(0);
        default:
            floor_usage(stderr);
            return -1;
        }
    }
    if (optind != argc) {
        floor_usage(stderr);
        return -1;
    }
    if (opts->cpu[0] == opts->cpu[1]) {
        /* each side would spin through its time slice waiting for the
         * other */
        fprintf(stderr, "sm_floor: -c %d,%d: the two sides need two CPUs\n",
                opts->cpu[0], opts->cpu[1]);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    floor_opts_t opts = {
        .cpu       = {0, 1},
        .do_lat    = 1,
        .do_bw     = 1,
        .lat_iters = FLOOR_DEFAULT_LAT,
        .bw_iters  = FLOOR_DEFAULT_LAT * FLOOR_BW_FACTOR,
        .window    = 64,
        .timeout   = 60,
        .lines     = 1,
    };
    unsigned long lat_warmup, bw_warmup;
    uint64_t *samples = NULL;
    floor_shm_t *shm;
    size_t shm_size;
    int status, rc = 0;
    pid_t pid;

    if (floor_parse(argc, argv, &opts) != 0) {
        return 1;
    }
    lat_warmup = opts.warmup_set ? opts.warmup : opts.lat_iters / 10;
    bw_warmup  = opts.warmup_set ? opts.warmup : opts.bw_iters / 10;

    if (opts.do_lat) {
        samples = malloc(opts.lat_iters * sizeof(*samples));
        if (samples == NULL) {
            fprintf(stderr,
                    "sm_floor: no memory for %lu samples; ask "
                    "fewer with -n\n",
                    opts.lat_iters);
            return 1;
        }
        /* touched now, not while timing */
        memset(samples, 0, opts.lat_iters * sizeof(*samples));
    }
    floor_clock_init();

    shm_size = sizeof(*shm) + (size_t)opts.window * sizeof(floor_elem_t);
    shm      = mmap(NULL, shm_size, PROT_READ | PROT_WRITE,
                    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shm == MAP_FAILED) {
        fprintf(stderr, "sm_floor: cannot map %zu shared bytes: %s\n", shm_size,
                strerror(errno));
        return 1;
    }
    memset(shm, 0, shm_size);

    signal(SIGALRM, floor_on_alarm);
    fflush(stdout);
    pid = fork();
    if (pid < 0) {
        fprintf(stderr, "sm_floor: fork failed: %s\n", strerror(errno));
        return 1;
    }
    if (pid == 0) {
        /* the responder goes when the initiator does */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        alarm(opts.timeout);
        _exit(floor_responder(shm, &opts, lat_warmup + opts.lat_iters,
                              bw_warmup + opts.bw_iters));
    }

    alarm(opts.timeout);
    if (floor_pin(opts.cpu[1]) != 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        return 1;
    }
    printf("test,mode,size,iterations,typical_lat_usec,avg_lat_usec,"
           "bw_mib_s,msg_rate,min_lat_usec,p99_lat_usec\n");
    if (opts.do_lat && (floor_wait_ready(shm, 1) == 0)) {
        floor_lat(shm, lat_warmup, opts.lat_iters, opts.lines, samples);
        fflush(stdout);
    }
    if (opts.do_bw && (floor_wait_ready(shm, 2) == 0)) {
        floor_bw(shm, bw_warmup, opts.bw_iters, opts.window);
        fflush(stdout);
    }

    if ((waitpid(pid, &status, 0) != pid) || !WIFEXITED(status) ||
        (WEXITSTATUS(status) != 0)) {
        fprintf(stderr, "sm_floor: the responder failed (status 0x%x)\n",
                status);
        rc = 1;
    }
    munmap(shm, shm_size);
    free(samples);
    return rc;
}
