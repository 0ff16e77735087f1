/*
 * Cost of the registration cache itself, next to the cost of a
 * registration, measured in the same run:
 *   hit        ucs_rcache_get() + ucs_rcache_region_put() of a 4 KiB buffer
 *              inside a cached region, with 1 and with many regions cached
 *   miss       get + put + invalidate with a registration that does nothing:
 *              what the cache adds to every registration it cannot avoid
 *   reg        a stand-in for a registration without a device: mlock() +
 *              munlock() of the range (the kernel pinning that ibv_reg_mr
 *              also does), for 4 KiB and 1 MiB
 *   miss+reg   the miss path with that registration
 * Prints nanoseconds per operation and the ratio of a hit to a
 * registration. The memory domain measures real ibv_reg_mr costs.
 *
 * Usage: rcache_bench [-n ITERS] [-r REGIONS]
 */
#define _GNU_SOURCE

#include <ucs/memory/rcache.h>
#include <ucs/sys/sys.h>

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

typedef struct {
    ucs_rcache_region_t super;
    int locked; /* mlock() succeeded */
} bench_region_t;

typedef struct {
    int pin; /* registrations mlock() the range */
} bench_md_t;

static double bench_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + (ts.tv_nsec * 1e-9);
}

static ucs_status_t bench_mem_reg(void *context, ucs_rcache_t *rcache,
                                  void *arg, ucs_rcache_region_t *region)
{
    bench_md_t *md          = context;
    bench_region_t *bregion = (bench_region_t *)region;

    bregion->locked = md->pin && (mlock((void *)region->start,
                                        region->end - region->start) == 0);
    return UCS_OK;
}

static void bench_mem_dereg(void *context, ucs_rcache_t *rcache,
                            ucs_rcache_region_t *region)
{
    bench_region_t *bregion = (bench_region_t *)region;

    if (bregion->locked) {
        munlock((void *)region->start, region->end - region->start);
    }
}

static const ucs_rcache_ops_t bench_ops = {bench_mem_reg, bench_mem_dereg};

static ucs_rcache_t *bench_create(bench_md_t *md)
{
    ucs_rcache_params_t params;
    ucs_rcache_t *rcache;

    memset(&params, 0, sizeof(params));
    params.region_struct_size = sizeof(bench_region_t);
    params.ops                = &bench_ops;
    params.context            = md;
    params.max_size           = SIZE_MAX;
    params.max_regions        = ULONG_MAX;
    if (ucs_rcache_create(&params, "bench", &rcache) != UCS_OK) {
        fprintf(stderr, "rcache_bench: cannot create the cache\n");
        exit(1);
    }
    return rcache;
}

static void bench_get(ucs_rcache_t *rcache, void *address, size_t length,
                      ucs_rcache_region_t **region_p)
{
    if (ucs_rcache_get(rcache, address, length, PROT_READ | PROT_WRITE, NULL,
                       region_p) != UCS_OK) {
        fprintf(stderr, "rcache_bench: get failed\n");
        exit(1);
    }
}

/* ns per get+put of 4 KiB at a random one of @a num_regions cached regions
 * (two pages apart, so that they do not merge) */
static double bench_hit(char *buffer, unsigned num_regions, unsigned long iters)
{
    size_t page   = ucs_get_page_size();
    bench_md_t md = {0};
    ucs_rcache_region_t *region;
    ucs_rcache_t *rcache;
    unsigned *order;
    unsigned long i;
    double start, elapsed;

    rcache = bench_create(&md);
    order  = malloc(sizeof(*order) * 4096);
    for (i = 0; i < num_regions; ++i) {
        bench_get(rcache, buffer + 2 * i * page, page, &region);
        ucs_rcache_region_put(rcache, region);
    }
    srand(1);
    for (i = 0; i < 4096; ++i) {
        order[i] = rand() % num_regions;
    }

    start = bench_now();
    for (i = 0; i < iters; ++i) {
        bench_get(rcache, buffer + 2 * order[i % 4096] * page, page, &region);
        ucs_rcache_region_put(rcache, region);
    }
    elapsed = bench_now() - start;

    free(order);
    ucs_rcache_destroy(rcache);
    return elapsed * 1e9 / iters;
}

/* ns per get+put+invalidate of @a length bytes: every get misses */
static double bench_miss(char *buffer, size_t length, int pin,
                         unsigned long iters)
{
    bench_md_t md = {pin};
    ucs_rcache_region_t *region;
    ucs_rcache_t *rcache;
    unsigned long i;
    double start, elapsed;

    rcache = bench_create(&md);
    start  = bench_now();
    for (i = 0; i < iters; ++i) {
        bench_get(rcache, buffer, length, &region);
        ucs_rcache_region_put(rcache, region);
        ucs_rcache_invalidate(rcache, buffer, length);
    }
    elapsed = bench_now() - start;
    ucs_rcache_destroy(rcache);
    return elapsed * 1e9 / iters;
}

/* ns per mlock()+munlock() of @a length bytes, or -1 if mlock fails */
static double bench_pin(char *buffer, size_t length, unsigned long iters)
{
    unsigned long i;
    double start;

    start = bench_now();
    for (i = 0; i < iters; ++i) {
        if (mlock(buffer, length) != 0) {
            return -1;
        }
        munlock(buffer, length);
    }
    return (bench_now() - start) * 1e9 / iters;
}

int main(int argc, char **argv)
{
    unsigned long iters  = 2000000;
    unsigned num_regions = 1024;
    size_t page          = ucs_get_page_size();
    double hit1, hitn, miss, reg4k, reg1m, miss4k, miss1m;
    size_t size;
    char *buffer;
    int c;

    while ((c = getopt(argc, argv, "n:r:")) != -1) {
        switch (c) {
        case 'n':
            iters = strtoul(optarg, NULL, 0);
            break;
        case 'r':
            num_regions = strtoul(optarg, NULL, 0);
            break;
        default:
            fprintf(stderr, "usage: rcache_bench [-n ITERS] [-r REGIONS]\n");
            return 1;
        }
    }
    if ((iters < 100) || (num_regions == 0)) {
        fprintf(stderr, "rcache_bench: need -n >= 100 and -r >= 1\n");
        return 1;
    }

    size   = ucs_max(2 * num_regions * page, 1ul << 20);
    buffer = mmap(NULL, size, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (buffer == MAP_FAILED) {
        perror("rcache_bench: mmap");
        return 1;
    }

    hit1   = bench_hit(buffer, 1, iters);
    hitn   = bench_hit(buffer, num_regions, iters);
    miss   = bench_miss(buffer, page, 0, iters / 10);
    reg4k  = bench_pin(buffer, page, iters / 10);
    reg1m  = bench_pin(buffer, 1ul << 20, iters / 100);
    miss4k = bench_miss(buffer, page, 1, iters / 10);
    miss1m = bench_miss(buffer, 1ul << 20, 1, iters / 100);

    printf("rcache_bench: page %zu, %lu iterations\n", page, iters);
    printf("  hit, 1 region cached           %8.1f ns per get+put\n", hit1);
    printf("  hit, %5u regions cached       %8.1f ns per get+put\n",
           num_regions, hitn);
    printf("  miss, no-op registration       %8.1f ns per get+put+"
           "invalidate\n",
           miss);
    if (reg4k < 0) {
        printf("  registration stand-in: mlock() failed (RLIMIT_MEMLOCK?)\n");
    } else {
        printf("  registration 4 KiB (mlock)     %8.1f ns\n", reg4k);
        printf("  registration 1 MiB (mlock)     %8.1f ns\n", reg1m);
        printf("  miss + registration 4 KiB      %8.1f ns\n", miss4k);
        printf("  miss + registration 1 MiB      %8.1f ns\n", miss1m);
        printf("  hit / registration 4 KiB       %8.3f\n", hitn / reg4k);
    }

    munmap(buffer, size);
    return 0;
}
