/*
 * The floor of in-process transports: one memcpy() of each size between
 * two page-aligned buffers, timed over many copies. A self active message
 * or put of N bytes copies them at least once, so this is what it cannot
 * beat. Prints CSV: size, time per copy, copies per second, MiB/s.
 *
 * Usage: memcpy_floor [-s SIZES] [-t SECONDS]
 *   SIZES  comma separated, k/m suffixes (default 8,64,512,4k,32k,256k,
 *          1m,4m)
 *   SECONDS  time per size (default 0.2)
 */
#define _GNU_SOURCE

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FLOOR_MAX_SIZES 64
#define FLOOR_ALIGN     4096
#define FLOOR_BATCH_MIN 16

static double floor_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Keeps the compiler from dropping or merging the copies */
static inline void floor_clobber(void *p)
{
    __asm__ __volatile__("" : : "r"(p) : "memory");
}

static int floor_parse_sizes(const char *str, size_t *sizes, int *count)
{
    const char *p = str;
    unsigned long long v;
    char *end;
    int n = 0;

    for (;;) {
        if (n == FLOOR_MAX_SIZES) {
            return -1;
        }
        errno = 0;
        v     = strtoull(p, &end, 10);
        if ((errno != 0) || (end == p) || (v == 0)) {
            return -1;
        }
        switch (*end) {
        case 'k':
        case 'K':
            v <<= 10;
            ++end;
            break;
        case 'm':
        case 'M':
            v <<= 20;
            ++end;
            break;
        default:
            break;
        }
        if (v > (1ull << 30)) {
            return -1;
        }
        sizes[n++] = (size_t)v;
        if (*end == '\0') {
            break;
        } else if (*end != ',') {
            return -1;
        }
        p = end + 1;
    }
    *count = n;
    return 0;
}

int main(int argc, char **argv)
{
    size_t sizes[FLOOR_MAX_SIZES];
    double seconds = 0.2, t0, t1, per_copy;
    unsigned long copies, batch, i;
    size_t max_size = 0;
    void *src, *dst;
    int count, c, k;
    char *end;

    if (floor_parse_sizes("8,64,512,4k,32k,256k,1m,4m", sizes, &count) != 0) {
        return 1;
    }
    while ((c = getopt(argc, argv, "s:t:h")) != -1) {
        switch (c) {
        case 's':
            if (floor_parse_sizes(optarg, sizes, &count) != 0) {
                fprintf(stderr,
                        "memcpy_floor: invalid sizes '%s': give up "
                        "to %d sizes of 1 B-1 GiB like 8,4k,1m\n",
                        optarg, FLOOR_MAX_SIZES);
                return 1;
            }
            break;
        case 't':
            seconds = strtod(optarg, &end);
            if ((*end != '\0') || !(seconds > 0) || (seconds > 60)) {
                fprintf(stderr,
                        "memcpy_floor: invalid -t '%s': give "
                        "seconds per size, 0-60\n",
                        optarg);
                return 1;
            }
            break;
        case 'h':
            printf("Usage: memcpy_floor [-s SIZES] [-t SECONDS]\n");
            return 0;
        default:
            fprintf(stderr, "Usage: memcpy_floor [-s SIZES] [-t SECONDS]\n");
            return 1;
        }
    }

    for (k = 0; k < count; ++k) {
        max_size = (sizes[k] > max_size) ? sizes[k] : max_size;
    }
    if ((posix_memalign(&src, FLOOR_ALIGN, max_size) != 0) ||
        (posix_memalign(&dst, FLOOR_ALIGN, max_size) != 0)) {
        fprintf(stderr, "memcpy_floor: cannot allocate 2 x %zu bytes\n",
                max_size);
        return 1;
    }
    memset(src, 'f', max_size);
    memset(dst, 0, max_size);

    printf("size,usec_per_copy,copies_per_sec,mib_per_sec\n");
    for (k = 0; k < count; ++k) {
        /* batches grow until one takes a millisecond, then run for the
         * time asked */
        batch = FLOOR_BATCH_MIN;
        for (;;) {
            t0 = floor_now();
            for (i = 0; i < batch; ++i) {
                memcpy(dst, src, sizes[k]);
                floor_clobber(dst);
            }
            t1 = floor_now();
            if ((t1 - t0) > 1e-3) {
                break;
            }
            batch *= 2;
        }
        copies = 0;
        t0     = floor_now();
        do {
            for (i = 0; i < batch; ++i) {
                memcpy(dst, src, sizes[k]);
                floor_clobber(dst);
            }
            copies += batch;
            t1 = floor_now();
        } while ((t1 - t0) < seconds);
        per_copy = (t1 - t0) / (double)copies;
        printf("%zu,%.4f,%.0f,%.1f\n", sizes[k], per_copy * 1e6, 1.0 / per_copy,
               (double)sizes[k] / per_copy / (1024.0 * 1024.0));
    }

    free(dst);
    free(src);
    return 0;
}
