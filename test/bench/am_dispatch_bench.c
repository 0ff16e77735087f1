/*
 * Dispatch cost of an 8-byte active message over a loopback transport
 * (self by default): uct_ep_am_short() followed by uct_worker_progress(),
 * the receiver's handler counting messages. The baseline, measured in the
 * same run, is the floor any transport pays: the same handler called
 * through a function pointer with the same 16-byte copy. Prints the cost
 * per message of both and their difference and ratio.
 *
 * Usage: am_dispatch_bench [-t TL] [-d DEV] [-n ITERS] [-r REPEATS]
 */
#include <uct/api/uct.h>
#include <ucs/time/time.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    uint64_t count;
    uint64_t sum;
} bench_rx_t;

static ucs_status_t bench_am_handler(void *arg, void *data, size_t length,
                                     unsigned flags)
{
    bench_rx_t *rx = arg;
    uint64_t value;

    memcpy(&value, (char *)data + 8, sizeof(value));
    rx->sum += value + length;
    ++rx->count;
    return UCS_OK;
}

typedef ucs_status_t (*bench_handler_t)(void *, void *, size_t, unsigned);

/* Keeps the compiler from inlining the baseline call */
static bench_handler_t volatile bench_handler_ptr = bench_am_handler;

static double bench_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + (ts.tv_nsec * 1e-9);
}

static double bench_baseline(bench_rx_t *rx, unsigned long iters)
{
    bench_handler_t handler = bench_handler_ptr;
    char buffer[16] __attribute__((aligned(8)));
    uint64_t header = 0x1234, payload;
    unsigned long i;
    double start;

    start = bench_now();
    for (i = 0; i < iters; ++i) {
        payload = i;
        memcpy(buffer, &header, 8);
        memcpy(buffer + 8, &payload, 8);
        __asm__ __volatile__("" ::: "memory");
        handler(rx, buffer, sizeof(buffer), 0);
    }
    return (bench_now() - start) / iters;
}

static double bench_uct(uct_ep_h ep, uct_worker_h worker, bench_rx_t *rx,
                        unsigned long iters)
{
    uint64_t payload;
    unsigned long i;
    ucs_status_t status;
    double start;

    start = bench_now();
    for (i = 0; i < iters; ++i) {
        payload = i;
        status  = uct_ep_am_short(ep, 1, 0x1234, &payload, sizeof(payload));
        if (status != UCS_OK) {
            fprintf(stderr, "uct_ep_am_short failed: %s\n",
                    ucs_status_string(status));
            exit(1);
        }
        uct_worker_progress(worker);
    }
    return (bench_now() - start) / iters;
}

static int bench_find(const char *tl, const char *dev, uct_component_h *comp_p,
                      uct_md_h *md_p)
{
    uct_component_h *components;
    uct_component_attr_t attr;
    uct_tl_resource_desc_t *res;
    unsigned nc, nr, c, m, r;
    uct_md_h md;

    if (uct_query_components(&components, &nc) != UCS_OK) {
        return -1;
    }
    for (c = 0; c < nc; ++c) {
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
        uct_component_query(components[c], &attr);
        attr.md_resources =
            calloc(attr.md_resource_count, sizeof(*attr.md_resources));
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
        uct_component_query(components[c], &attr);
        for (m = 0; m < attr.md_resource_count; ++m) {
            if (uct_md_open(components[c], attr.md_resources[m].md_name, NULL,
                            &md) != UCS_OK) {
                continue;
            }
            uct_md_query_tl_resources(md, &res, &nr);
            for (r = 0; r < nr; ++r) {
                if (!strcmp(res[r].tl_name, tl) &&
                    !strcmp(res[r].dev_name, dev)) {
                    uct_release_tl_resource_list(res);
                    free(attr.md_resources);
                    *comp_p = components[c];
                    *md_p   = md;
                    uct_release_component_list(components);
                    return 0;
                }
            }
            uct_release_tl_resource_list(res);
            uct_md_close(md);
        }
        free(attr.md_resources);
    }
    uct_release_component_list(components);
    return -1;
}

static int bench_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    const char *tl = "self", *dev = "memory";
    unsigned long iters = 10000000;
    unsigned repeats    = 5, i;
    double base[64], uct[64];
    uct_iface_params_t params;
    uct_iface_attr_t iface_attr;
    uct_ep_params_t ep_params;
    uct_component_h component;
    uct_worker_h worker;
    uct_iface_h iface;
    void *iface_addr;
    bench_rx_t rx = {0, 0};
    uct_md_h md;
    uct_ep_h ep;
    int c;

    while ((c = getopt(argc, argv, "t:d:n:r:h")) != -1) {
        switch (c) {
        case 't':
            tl = optarg;
            break;
        case 'd':
            dev = optarg;
            break;
        case 'n':
            iters = strtoul(optarg, NULL, 0);
            break;
        case 'r':
            repeats = atoi(optarg);
            break;
        default:
            printf("usage: %s [-t TL] [-d DEV] [-n ITERS] [-r REPEATS]\n",
                   argv[0]);
            return (c == 'h') ? 0 : 2;
        }
    }
    if ((repeats == 0) || (repeats > 64) || (iters == 0)) {
        fprintf(stderr, "-r must be 1..64 and -n positive\n");
        return 2;
    }

    if (bench_find(tl, dev, &component, &md) != 0) {
        fprintf(stderr, "transport %s/%s not found; run uct_info -d\n", tl,
                dev);
        return 1;
    }

    if (uct_worker_create(NULL, UCS_THREAD_MODE_SINGLE, &worker) != UCS_OK) {
        return 1;
    }

    memset(&params, 0, sizeof(params));
    params.field_mask =
        UCT_IFACE_PARAM_FIELD_OPEN_MODE | UCT_IFACE_PARAM_FIELD_DEVICE;
    params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = tl;
    params.mode.device.dev_name = dev;
    if (uct_iface_open(md, worker, &params, NULL, &iface) != UCS_OK) {
        return 1;
    }
    uct_iface_query(iface, &iface_attr);
    if (!(iface_attr.cap.flags & UCT_IFACE_FLAG_CONNECT_TO_IFACE)) {
        fprintf(stderr, "%s/%s cannot connect to an interface\n", tl, dev);
        return 2;
    }
    uct_iface_progress_enable(iface, UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    uct_iface_set_am_handler(iface, 1, bench_am_handler, &rx, 0);

    iface_addr = calloc(1, iface_attr.iface_addr_len + 1);
    uct_iface_get_address(iface, iface_addr);
    ep_params.field_mask = UCT_EP_PARAM_FIELD_IFACE |
                           UCT_EP_PARAM_FIELD_IFACE_ADDR |
                           UCT_EP_PARAM_FIELD_DEV_ADDR;
    ep_params.iface      = iface;
    ep_params.iface_addr = iface_addr;
    ep_params.dev_addr   = iface_addr; /* unused by loopback transports */
    if (uct_ep_create(&ep_params, &ep) != UCS_OK) {
        return 1;
    }

    /* warm up */
    bench_baseline(&rx, iters / 10);
    bench_uct(ep, worker, &rx, iters / 10);

    /* alternate the two measurements so drift hits both alike */
    for (i = 0; i < repeats; ++i) {
        base[i] = bench_baseline(&rx, iters);
        uct[i]  = bench_uct(ep, worker, &rx, iters);
    }
    qsort(base, repeats, sizeof(double), bench_cmp);
    qsort(uct, repeats, sizeof(double), bench_cmp);

    printf("am_short 8 B + progress over %s/%s, %lu messages x %u runs "
           "(median)\n",
           tl, dev, iters, repeats);
    printf("  %-34s %8.2f ns/msg\n",
           "uct_ep_am_short + worker progress:", uct[repeats / 2] * 1e9);
    printf("  %-34s %8.2f ns/msg\n",
           "baseline (indirect handler call):", base[repeats / 2] * 1e9);
    printf("  %-34s %8.2f ns/msg\n",
           "transport overhead:", (uct[repeats / 2] - base[repeats / 2]) * 1e9);
    printf("  %-34s %8.2fx\n",
           "ratio to baseline:", uct[repeats / 2] / base[repeats / 2]);
    printf("  target: <= 20 ns/msg -> %s\n",
           (uct[repeats / 2] * 1e9 <= 20.0) ? "met" : "MISSED");
    if (rx.count == 0) {
        fprintf(stderr, "no message arrived\n");
        return 1;
    }

    uct_ep_destroy(ep);
    free(iface_addr);
    uct_iface_close(iface);
    uct_worker_destroy(worker);
    uct_md_close(md);
    return 0;
}
