/*
 * Cost of memory registration through the ib memory domain, with and
 * without the registration cache: uct_md_mem_reg() + uct_md_mem_dereg() of
 * the same buffer, repeated, for 4 KiB and 1 MiB. The uncached figure is
 * the baseline (one ibv_reg_mr and one ibv_dereg_mr per iteration); the
 * cached one pays a lookup after the first, missing, registration, which
 * is printed on its own. Figures are CPU cycles (rdtsc) and nanoseconds
 * (ucs_get_time()) per iteration.
 *
 * Usage: ib_reg_bench [-d DEVICE] [-n ITERS]
 * Without RDMA devices it says so and exits with status 0.
 */
#include <uct/api/uct.h>
#include <ucs/time/time.h>

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    double first_ns; /* the first registration */
    double first_cycles;
    double ns; /* per reg + dereg after it */
    double cycles;
} bench_result_t;

/* The time stamp counter; where there is none, nanoseconds */
static inline uint64_t bench_cycles(void)
{
#if defined(__x86_64__)
    uint32_t low, high;

    __asm__ __volatile__("rdtsc" : "=a"(low), "=d"(high));
    return ((uint64_t)high << 32) | low;
#else
    return ucs_time_monotonic_nsec();
#endif
}

static uct_component_h bench_find_component(const char *name)
{
    uct_component_h *components, found = NULL;
    uct_component_attr_t attr;
    unsigned i, num_components;

    if (uct_query_components(&components, &num_components) != UCS_OK) {
        return NULL;
    }
    for (i = 0; i < num_components; ++i) {
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
        if ((uct_component_query(components[i], &attr) == UCS_OK) &&
            !strcmp(attr.name, name)) {
            found = components[i];
        }
    }
    uct_release_component_list(components);
    return found;
}

/* The first md of @a component, or "" */
static void bench_first_md(uct_component_h component, char *name, size_t max)
{
    uct_md_resource_desc_t resources[8];
    uct_component_attr_t attr;

    name[0]         = '\0';
    attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
    if ((uct_component_query(component, &attr) != UCS_OK) ||
        (attr.md_resource_count == 0) || (attr.md_resource_count > 8)) {
        return;
    }

    attr.field_mask   = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
    attr.md_resources = resources;
    if (uct_component_query(component, &attr) == UCS_OK) {
        snprintf(name, max, "%s", resources[0].md_name);
    }
}

static uct_md_h bench_open_md(uct_component_h component, const char *name,
                              const char *rcache)
{
    uct_md_config_t *config;
    ucs_status_t status;
    uct_md_h md;

    setenv("UCX_IB_RCACHE", rcache, 1);
    if (uct_md_config_read(component, NULL, NULL, &config) != UCS_OK) {
        return NULL;
    }
    status = uct_md_open(component, name, config, &md);
    uct_config_release(config);
    return (status == UCS_OK) ? md : NULL;
}

static int bench_reg(uct_md_h md, void *buffer, size_t length,
                     unsigned long iters, bench_result_t *result)
{
    uint64_t cycles0, cycles1, cycles2;
    ucs_time_t time0, time1, time2;
    double ns_per_tick;
    unsigned long i;
    uct_mem_h memh;

    ns_per_tick = 1e9 / ucs_time_units_per_sec();
    time0       = ucs_get_time();
    cycles0     = bench_cycles();
    if (uct_md_mem_reg(md, buffer, length, UCT_MD_MEM_ACCESS_ALL, &memh) !=
        UCS_OK) {
        return -1;
    }
    cycles1 = bench_cycles();
    time1   = ucs_get_time();
    uct_md_mem_dereg(md, memh);

    result->first_ns     = (double)(time1 - time0) * ns_per_tick;
    result->first_cycles = (double)(cycles1 - cycles0);

    time1   = ucs_get_time();
    cycles1 = bench_cycles();
    for (i = 0; i < iters; ++i) {
        if (uct_md_mem_reg(md, buffer, length, UCT_MD_MEM_ACCESS_ALL, &memh) !=
            UCS_OK) {
            return -1;
        }
        uct_md_mem_dereg(md, memh);
    }
    cycles2 = bench_cycles();
    time2   = ucs_get_time();

    result->ns     = (double)(time2 - time1) * ns_per_tick / iters;
    result->cycles = (double)(cycles2 - cycles1) / iters;
    return 0;
}

int main(int argc, char **argv)
{
    static const size_t sizes[] = {4096, 1 << 20};
    bench_result_t direct, cached;
    unsigned long iters = 2000;
    const char *dev     = NULL;
    uct_md_h md_direct, md_cached;
    uct_component_h component;
    char md_name[64];
    unsigned i;
    void *buffer;
    int c;

    while ((c = getopt(argc, argv, "d:n:h")) != -1) {
        switch (c) {
        case 'd':
            dev = optarg;
            break;
        case 'n':
            iters = strtoul(optarg, NULL, 0);
            break;
        default:
            printf("usage: %s [-d DEVICE] [-n ITERS]\n", argv[0]);
            return (c == 'h') ? 0 : 2;
        }
    }
    if (iters == 0) {
        fprintf(stderr, "-n must be positive\n");
        return 2;
    }

    component = bench_find_component("ib");
    if (component == NULL) {
        printf("ib_reg_bench: no ib component (built without rdma-core)\n");
        return 0;
    }

    if (dev != NULL) {
        snprintf(md_name, sizeof(md_name), "%s", dev);
    } else {
        bench_first_md(component, md_name, sizeof(md_name));
    }
    if (md_name[0] == '\0') {
        printf("ib_reg_bench: no RDMA devices; nothing measured\n");
        return 0;
    }

    md_direct = bench_open_md(component, md_name, "no");
    md_cached = bench_open_md(component, md_name, "yes");
    if ((md_direct == NULL) || (md_cached == NULL)) {
        fprintf(stderr,
                "cannot open %s with and without the registration "
                "cache (UCX_IB_RCACHE=no/yes)\n",
                md_name);
        return 1;
    }

    printf("# ib_reg_bench: md %s, %lu iterations of reg + dereg of one "
           "buffer\n",
           md_name, iters);
    printf("# %8s %14s %14s %14s %14s %8s\n", "size", "direct cycles",
           "direct ns", "cached cycles", "cached ns", "ratio");

    for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i) {
        buffer = aligned_alloc(4096, sizes[i]);
        if (buffer == NULL) {
            return 1;
        }
        memset(buffer, 0, sizes[i]);

        if ((bench_reg(md_direct, buffer, sizes[i], iters, &direct) != 0) ||
            (bench_reg(md_cached, buffer, sizes[i], iters, &cached) != 0)) {
            fprintf(stderr, "registration of %zu bytes failed\n", sizes[i]);
            return 1;
        }

        printf("  %8zu %14.0f %14.0f %14.0f %14.0f %7.1fx\n", sizes[i],
               direct.cycles, direct.ns, cached.cycles, cached.ns,
               direct.ns / cached.ns);
        printf("# %8zu first cached registration (a miss): %.0f cycles, "
               "%.0f ns\n",
               sizes[i], cached.first_cycles, cached.first_ns);
        free(buffer);
    }

    uct_md_close(md_cached);
    uct_md_close(md_direct);
    return 0;
}
