/*
 * vfs_test_proc: a process with UCT objects for the uct_vfs test to look
 * at, driven line by line from stdin so that the test knows what the tree
 * holds at each step.
 *
 *   vfs_test_proc [-d TCP_DEVICE]      (default device: lo)
 *
 * It opens one worker with two interfaces, self/memory and tcp/DEVICE,
 * and on each an endpoint to the interface itself. Then it prints
 * "ready <pid>" and answers each command with one line:
 *
 *   send N        N active messages on every endpoint, each delivered
 *                 before the answer "ok send N"
 *   destroy-ep    destroys the endpoints: "ok destroy-ep"
 *   ping          "ok ping" (is the process alive and responsive?)
 *   exit          "ok exit", then closes everything and exits 0
 *
 * An unknown command is answered "error ..."; end of input is "exit".
 * Between commands the worker is progressed, so the tcp connection works
 * in the background as in any application. Exit codes: 0, 1 on a setup
 * or send failure, 2 on bad options.
 */
#define _GNU_SOURCE

#include <uct/api/uct.h>
#include <common/uct_md_find.h>
#include <ucs/async/async.h>

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TP_AM_ID        7
#define TP_SEND_TIMEOUT 10.0 /* seconds for one "send" command */
#define TP_LINE_MAX     256

typedef struct {
    const char *tl_name;
    const char *dev_name;
    uct_md_h md;
    uct_iface_h iface;
    uct_iface_attr_t attr;
    uct_ep_h ep;
    void *dev_addr;
    void *iface_addr;
    uint64_t sent;
    volatile uint64_t received;
} tp_iface_t;

typedef struct {
    ucs_async_context_t *async;
    uct_worker_h worker;
    tp_iface_t ifaces[2];
    unsigned num_ifaces;
} tp_ctx_t;

static double tp_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + (ts.tv_nsec * 1e-9);
}

static int tp_fail(const tp_iface_t *ti, const char *what, ucs_status_t status)
{
    fprintf(stderr, "vfs_test_proc: %s/%s: %s failed: %s\n", ti->tl_name,
            ti->dev_name, what, ucs_status_string(status));
    return -1;
}

static ucs_status_t tp_am_cb(void *arg, void *data, size_t length,
                             unsigned flags)
{
    tp_iface_t *ti = arg;

    ++ti->received;
    return UCS_OK;
}

/* Opens the memory domain that offers ti->tl_name on ti->dev_name */
static int tp_md_open(tp_iface_t *ti)
{
    ucs_status_t status;

    status = test_uct_md_find(ti->tl_name, ti->dev_name, &ti->md, NULL);
    if (status == UCS_ERR_NO_DEVICE) {
        fprintf(stderr,
                "vfs_test_proc: transport %s on device %s not "
                "found (uct_info -d lists them)\n",
                ti->tl_name, ti->dev_name);
        return -1;
    } else if (status != UCS_OK) {
        return tp_fail(ti, "uct_query_components", status);
    }
    return 0;
}

/* Interface, AM handler, addresses, and an endpoint to the interface */
static int tp_iface_open(tp_ctx_t *ctx, tp_iface_t *ti)
{
    uct_iface_config_t *config;
    uct_iface_params_t params;
    uct_ep_params_t ep_params;
    ucs_status_t status;

    if (tp_md_open(ti) != 0) {
        return -1;
    }

    status = uct_md_iface_config_read(ti->md, ti->tl_name, NULL, NULL, &config);
    if (status != UCS_OK) {
        return tp_fail(ti, "uct_md_iface_config_read", status);
    }
    memset(&params, 0, sizeof(params));
    params.field_mask =
        UCT_IFACE_PARAM_FIELD_OPEN_MODE | UCT_IFACE_PARAM_FIELD_DEVICE;
    params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = ti->tl_name;
    params.mode.device.dev_name = ti->dev_name;
    status = uct_iface_open(ti->md, ctx->worker, &params, config, &ti->iface);
    uct_config_release(config);
    if (status != UCS_OK) {
        ti->iface = NULL;
        return tp_fail(ti, "uct_iface_open", status);
    }

    status = uct_iface_query(ti->iface, &ti->attr);
    if (status != UCS_OK) {
        return tp_fail(ti, "uct_iface_query", status);
    }
    if (!(ti->attr.cap.flags & UCT_IFACE_FLAG_CONNECT_TO_IFACE) ||
        !(ti->attr.cap.flags & UCT_IFACE_FLAG_AM_SHORT)) {
        fprintf(stderr,
                "vfs_test_proc: %s/%s cannot connect to an "
                "interface or send am_short\n",
                ti->tl_name, ti->dev_name);
        return -1;
    }

    status = uct_iface_set_am_handler(ti->iface, TP_AM_ID, tp_am_cb, ti,
                                      UCT_CB_FLAG_SYNC);
    if (status != UCS_OK) {
        return tp_fail(ti, "uct_iface_set_am_handler", status);
    }
    uct_iface_progress_enable(ti->iface, UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);

    ti->dev_addr   = calloc(1, ti->attr.device_addr_len + 1);
    ti->iface_addr = calloc(1, ti->attr.iface_addr_len + 1);
    if ((ti->dev_addr == NULL) || (ti->iface_addr == NULL)) {
        return tp_fail(ti, "address allocation", UCS_ERR_NO_MEMORY);
    }
    status = uct_iface_get_device_address(ti->iface, ti->dev_addr);
    if (status != UCS_OK) {
        return tp_fail(ti, "uct_iface_get_device_address", status);
    }
    status = uct_iface_get_address(ti->iface, ti->iface_addr);
    if (status != UCS_OK) {
        return tp_fail(ti, "uct_iface_get_address", status);
    }

    ep_params.field_mask = UCT_EP_PARAM_FIELD_IFACE |
                           UCT_EP_PARAM_FIELD_DEV_ADDR |
                           UCT_EP_PARAM_FIELD_IFACE_ADDR;
    ep_params.iface      = ti->iface;
    ep_params.dev_addr   = ti->dev_addr;
    ep_params.iface_addr = ti->iface_addr;
    status               = uct_ep_create(&ep_params, &ti->ep);
    if (status != UCS_OK) {
        ti->ep = NULL;
        return tp_fail(ti, "uct_ep_create", status);
    }
    return 0;
}

static void tp_destroy_eps(tp_ctx_t *ctx)
{
    unsigned i;

    for (i = 0; i < ctx->num_ifaces; ++i) {
        if (ctx->ifaces[i].ep != NULL) {
            uct_ep_destroy(ctx->ifaces[i].ep);
            ctx->ifaces[i].ep = NULL;
        }
    }
}

static void tp_cleanup(tp_ctx_t *ctx)
{
    tp_iface_t *ti;
    unsigned i;

    tp_destroy_eps(ctx);
    for (i = 0; i < ctx->num_ifaces; ++i) {
        ti = &ctx->ifaces[i];
        if (ti->iface != NULL) {
            uct_iface_close(ti->iface);
        }
        if (ti->md != NULL) {
            uct_md_close(ti->md);
        }
        free(ti->iface_addr);
        free(ti->dev_addr);
    }
    if (ctx->worker != NULL) {
        uct_worker_destroy(ctx->worker);
    }
    if (ctx->async != NULL) {
        ucs_async_context_destroy(ctx->async);
    }
}

static int tp_setup(tp_ctx_t *ctx, const char *tcp_dev)
{
    ucs_status_t status;
    unsigned i;

    status =
        ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK, &ctx->async);
    if (status != UCS_OK) {
        ctx->async = NULL;
        fprintf(stderr,
                "vfs_test_proc: ucs_async_context_create failed: "
                "%s\n",
                ucs_status_string(status));
        return -1;
    }
    status =
        uct_worker_create(ctx->async, UCS_THREAD_MODE_SINGLE, &ctx->worker);
    if (status != UCS_OK) {
        ctx->worker = NULL;
        fprintf(stderr, "vfs_test_proc: uct_worker_create failed: %s\n",
                ucs_status_string(status));
        return -1;
    }

    ctx->ifaces[0].tl_name  = "self";
    ctx->ifaces[0].dev_name = "memory";
    ctx->ifaces[1].tl_name  = "tcp";
    ctx->ifaces[1].dev_name = tcp_dev;
    ctx->num_ifaces         = 2;
    for (i = 0; i < ctx->num_ifaces; ++i) {
        if (tp_iface_open(ctx, &ctx->ifaces[i]) != 0) {
            return -1;
        }
    }
    return 0;
}

/* Sends @a count messages on every endpoint and waits for their delivery */
static int tp_send(tp_ctx_t *ctx, unsigned long count)
{
    double deadline  = tp_now() + TP_SEND_TIMEOUT;
    uint64_t payload = 0x5eed;
    ucs_status_t status;
    tp_iface_t *ti;
    unsigned long n;
    uint64_t target;
    unsigned i;

    for (i = 0; i < ctx->num_ifaces; ++i) {
        ti = &ctx->ifaces[i];
        if (ti->ep == NULL) {
            printf("error send: the endpoints were destroyed\n");
            return 0;
        }
        target = ti->received + count;
        for (n = 0; n < count;) {
            status =
                uct_ep_am_short(ti->ep, TP_AM_ID, n, &payload, sizeof(payload));
            if (status == UCS_OK) {
                ++n;
                ++ti->sent;
            } else if (status != UCS_ERR_NO_RESOURCE) {
                return tp_fail(ti, "uct_ep_am_short", status);
            }
            uct_worker_progress(ctx->worker);
            if (tp_now() > deadline) {
                return tp_fail(ti, "sending", UCS_ERR_TIMED_OUT);
            }
        }
        while (ti->received < target) {
            uct_worker_progress(ctx->worker);
            if (tp_now() > deadline) {
                return tp_fail(ti, "delivery", UCS_ERR_TIMED_OUT);
            }
        }
    }
    printf("ok send %lu\n", count);
    return 0;
}

/* Progresses the worker until a line arrives on stdin; 0 at its end */
static int tp_read_line(tp_ctx_t *ctx, char *line, size_t max)
{
    struct pollfd pfd = {.fd = STDIN_FILENO, .events = POLLIN};
    int ret;

    for (;;) {
        uct_worker_progress(ctx->worker);
        ret = poll(&pfd, 1, 10);
        if ((ret < 0) && (errno != EINTR)) {
            return 0;
        }
        if ((ret > 0) && (pfd.revents != 0)) {
            break;
        }
    }
    if (fgets(line, (int)max, stdin) == NULL) {
        return 0;
    }
    line[strcspn(line, "\r\n")] = '\0';
    return 1;
}

static int tp_run(tp_ctx_t *ctx)
{
    char line[TP_LINE_MAX];
    unsigned long count;
    char *end;

    printf("ready %d\n", (int)getpid());
    fflush(stdout);

    while (tp_read_line(ctx, line, sizeof(line))) {
        if (!strncmp(line, "send ", 5)) {
            count = strtoul(line + 5, &end, 10);
            if ((end == line + 5) || (*end != '\0')) {
                printf("error send: '%s' is not a count\n", line + 5);
            } else if (tp_send(ctx, count) != 0) {
                return -1;
            }
        } else if (!strcmp(line, "destroy-ep")) {
            tp_destroy_eps(ctx);
            printf("ok destroy-ep\n");
        } else if (!strcmp(line, "ping")) {
            printf("ok ping\n");
        } else if (!strcmp(line, "exit")) {
            printf("ok exit\n");
            fflush(stdout);
            return 0;
        } else {
            printf("error unknown command '%s' (send N, destroy-ep, ping, "
                   "exit)\n",
                   line);
        }
        fflush(stdout);
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *tcp_dev = "lo";
    tp_ctx_t ctx;
    int c, ret;

    while ((c = getopt(argc, argv, "d:h")) != -1) {
        switch (c) {
        case 'd':
            tcp_dev = optarg;
            break;
        case 'h':
            printf("Usage: %s [-d TCP_DEVICE]\n", argv[0]);
            return 0;
        default:
            fprintf(stderr, "Usage: %s [-d TCP_DEVICE]\n", argv[0]);
            return 2;
        }
    }

    memset(&ctx, 0, sizeof(ctx));
    ret = (tp_setup(&ctx, tcp_dev) == 0) && (tp_run(&ctx) == 0) ? 0 : 1;
    tp_cleanup(&ctx);
    return ret;
}
