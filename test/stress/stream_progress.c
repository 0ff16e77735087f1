/*
 * uct_stream_check: progress and the decision whether the run goes on
 * (peer failure, failed operations, the control connection, the stall
 * limit), and the small control messages both sides send.
 */
#include "stream_check.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static volatile sig_atomic_t sc_signalled;

ucs_status_t sc_err_handler(void *arg, uct_ep_h ep, ucs_status_t status)
{
    sc_ctx_t *ctx = arg;

    if (ctx->peer_status == UCS_OK) {
        ctx->peer_status = status;
    }
    return UCS_OK;
}

/* Whether the server told the client, over the control connection, that
 * it found bad data; waits up to @a wait_ms for that word */
static int sc_server_found_bad_data(sc_ctx_t *ctx, int wait_ms)
{
    struct pollfd pfd = {.fd = ctx->sock, .events = POLLIN};

    if (!sc_is_client(ctx) || (ctx->sock < 0)) {
        return 0;
    }
    if ((ctx->verdict == 0) && (poll(&pfd, 1, wait_ms) > 0)) {
        sc_oob_check(ctx, sc_now());
    }
    if (ctx->verdict != 'F') {
        return 0;
    }
    sc_stop(ctx, SC_EXIT_ERROR,
            "the server found missing or corrupt data "
            "(see its output)");
    return 1;
}

/*
 * An operation on endpoint @a ep failed with @a status. With -e that may
 * be the peer's failure, which the error handler confirms (sc_progress
 * waits for it up to the stall limit); without, it ends the run. Returns -1
 * once the run stopped, else 0.
 */
int sc_op_failed(sc_ctx_t *ctx, unsigned ep, const char *what,
                 ucs_status_t status)
{
    if (ctx->stopped) {
        return -1;
    }
    if (!ctx->err_handler) {
        /* A server that found bad data says so before it closes */
        if (!sc_server_found_bad_data(ctx, 200)) {
            sc_stop(ctx, SC_EXIT_ERROR, "%s on endpoint %u failed: %s", what,
                    ep, ucs_status_string(status));
        }
        return -1;
    }
    if (ctx->op_status == UCS_OK) {
        ctx->op_status    = status;
        ctx->op_name      = what;
        ctx->op_ep        = ep;
        ctx->op_failed_at = sc_now();
        if (ctx->verbose) {
            printf("%s: %s on endpoint %u failed: %s; waiting for the error "
                   "handler\n",
                   sc_side(ctx), what, ep, ucs_status_string(status));
        }
    }
    return 0;
}

/*
 * With -e: when nothing moved for a second, or the peer closed the control
 * connection, probe every endpoint (where the interface can), so that a
 * dead peer is noticed even when no data is in flight, at most once a
 * second
 */
static void sc_eps_check(sc_ctx_t *ctx, double now)
{
    ucs_status_t status;
    unsigned i;

    if (!ctx->err_handler || ctx->finishing ||
        !(ctx->attr.cap.flags & UCT_IFACE_FLAG_EP_CHECK) ||
        (now < ctx->next_ep_check) ||
        ((now - ctx->last_activity < SC_EP_CHECK_IDLE) &&
         (ctx->oob_closed_at == 0))) {
        return;
    }
    ctx->next_ep_check = now + SC_EP_CHECK_IDLE;
    for (i = 0; i < ctx->num_eps; ++i) {
        status = uct_ep_check(ctx->streams[i].ep, 0, NULL);
        if ((status != UCS_OK) && (status != UCS_ERR_NO_RESOURCE)) {
            sc_op_failed(ctx, i, "uct_ep_check", status);
        }
    }
}

/* The checks that need the clock, made every few hundred progress calls */
static int sc_progress_check(sc_ctx_t *ctx)
{
    double now = sc_now();

    if (ctx->moved) {
        ctx->moved         = 0;
        ctx->last_activity = now;
    }
    if (now >= ctx->next_oob_check) {
        sc_oob_check(ctx, now);
        ctx->next_oob_check = now + SC_OOB_CHECK_SEC;
    }
    if (sc_is_client(ctx) && (ctx->verdict == 'F')) {
        return sc_server_found_bad_data(ctx, 0) ? -1 : 0;
    }

    if (!ctx->finishing) {
        if ((ctx->op_status != UCS_OK) &&
            (now - ctx->op_failed_at > ctx->stall_limit)) {
            sc_stop(ctx, SC_EXIT_ERROR,
                    "%s on endpoint %u failed: %s, "
                    "but the error handler was not called within %.0f s "
                    "(-T)",
                    ctx->op_name, ctx->op_ep, ucs_status_string(ctx->op_status),
                    ctx->stall_limit);
            return -1;
        }
        if ((ctx->oob_closed_at > 0) && !ctx->err_handler) {
            sc_stop(ctx, SC_EXIT_ERROR,
                    "the peer closed the control "
                    "connection (did it exit or crash?)");
            return -1;
        }
        if ((ctx->oob_closed_at > 0) &&
            (now - ctx->oob_closed_at > ctx->stall_limit)) {
            sc_stop(ctx, SC_EXIT_ERROR,
                    "the peer closed the control "
                    "connection, and the transport reported no failure "
                    "within %.0f s (-T)",
                    ctx->stall_limit);
            return -1;
        }
    }

    sc_eps_check(ctx, now);

    /* A failure waits for the error handler instead (above) */
    if ((ctx->op_status == UCS_OK) && (ctx->oob_closed_at == 0) &&
        (now - ctx->last_activity > ctx->stall_limit)) {
        sc_stop(ctx, SC_EXIT_ERROR,
                "nothing moved for %.0f s (nothing "
                "sent, received or completed); the transport or the peer "
                "is stuck (-T sets the limit)",
                ctx->stall_limit);
        return -1;
    }
    return 0;
}

/*
 * Progresses the worker once and decides whether the run goes on.
 * Returns 0 to go on, -1 once the run stopped (message printed).
 */
int sc_progress(sc_ctx_t *ctx)
{
    if (ctx->stopped) {
        return -1;
    }
    uct_worker_progress(ctx->worker);
    if (ctx->stopped) {
        return -1;
    }

    if (!ctx->finishing && (ctx->peer_status != UCS_OK)) {
        /* A server that found bad data closes: say that, not a failure */
        if (sc_server_found_bad_data(ctx, 0)) {
            return -1;
        }
        sc_stop(ctx, SC_EXIT_PEER_FAILED, "peer failed: %s",
                ucs_status_string(ctx->peer_status));
        return -1;
    }
    if (((++ctx->spins & 255) != 0) && (ctx->op_status == UCS_OK)) {
        return 0;
    }
    return sc_progress_check(ctx);
}

static void sc_on_signal(int sig)
{
    sc_signalled = 1;
}

void sc_catch_signals(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = sc_on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
}

int sc_serve(sc_ctx_t *ctx, int fd, double deadline)
{
    struct pollfd pfd[2] = {{.fd = fd, .events = POLLIN},
                            {.fd = -1, .events = POLLIN}};
    int timeout_ms;

    if (!(ctx->attr.cap.event_flags & UCT_IFACE_FLAG_EVENT_FD) ||
        (uct_iface_event_fd_get(ctx->iface, &pfd[1].fd) != UCS_OK)) {
        pfd[1].fd = -1;
    }
    while (!sc_signalled) {
        timeout_ms = 0;
        if (uct_worker_progress(ctx->worker) == 0) {
            if (pfd[1].fd < 0) {
                timeout_ms = 1;
            } else if (uct_iface_event_arm(ctx->iface, UCT_EVENT_RECV) ==
                       UCS_OK) {
                timeout_ms = 100;
            }
        }
        if ((poll(pfd, 2, timeout_ms) < 0) && (errno != EINTR)) {
            sc_stop(ctx, SC_EXIT_ERROR, "poll failed: %s", strerror(errno));
            return -1;
        }
        if (ctx->stopped) {
            return -1; /* something came that must not have */
        }
        if ((fd >= 0) && (pfd[0].revents != 0)) {
            break;
        }
        if ((deadline > 0) && (sc_now() > deadline)) {
            break;
        }
    }
    return 0;
}

void sc_comp_cb(uct_completion_t *self)
{}

typedef struct {
    const void *data;
    size_t length;
} sc_ctrl_t;

static size_t sc_pack_ctrl(void *dest, void *arg)
{
    const sc_ctrl_t *ctrl = arg;

    if (ctrl->length > 0) {
        memcpy(dest, ctrl->data, ctrl->length);
    }
    return ctrl->length;
}

/* A control message: UCS_OK when the transport took it */
ucs_status_t sc_post_ctrl(uct_ep_h ep, uint8_t id, const void *data,
                          size_t length)
{
    sc_ctrl_t ctrl = {.data = data, .length = length};
    ssize_t ret;

    ret = uct_ep_am_bcopy(ep, id, sc_pack_ctrl, &ctrl, 0);
    return (ret < 0) ? (ucs_status_t)ret : UCS_OK;
}

/*
 * A control message on @a stream's endpoint. With @a wait, retried until
 * the transport takes it. Returns 1 when sent; 0 when the transport had
 * no resources (without @a wait) or the send failed with -e (op_status is
 * set then); -1 when the run stopped.
 */
int sc_send_ctrl(sc_ctx_t *ctx, sc_stream_t *stream, uint8_t id,
                 const void *data, size_t length, int wait)
{
    ucs_status_t status;

    for (;;) {
        status = sc_post_ctrl(stream->ep, id, data, length);
        if (status == UCS_OK) {
            ctx->moved = 1;
            return 1;
        } else if (status != UCS_ERR_NO_RESOURCE) {
            return sc_op_failed(ctx, stream->index, "am_bcopy (control)",
                                status);
        } else if (!wait) {
            return 0;
        }
        if (sc_progress(ctx) != 0) {
            return -1;
        }
    }
}

/* A HELLO on one endpoint: the client's greeting, which the server
 * answers on its endpoint of the same index, or that answer */
ucs_status_t sc_am_hello(void *arg, void *data, size_t length, unsigned flags)
{
    sc_ctx_t *ctx = arg;
    sc_ack_msg_t msg;

    if (length != sizeof(msg)) {
        sc_stop(ctx, SC_EXIT_ERROR, "HELLO message of %zu bytes", length);
        return UCS_OK;
    }
    memcpy(&msg, data, sizeof(msg));
    if ((ctx->streams == NULL) || (msg.ep >= ctx->num_eps)) {
        sc_stop(ctx, SC_EXIT_ERROR, "HELLO for endpoint %u of %u", msg.ep,
                ctx->num_eps);
        return UCS_OK;
    }
    if (!ctx->streams[msg.ep].hello_rx) {
        ctx->streams[msg.ep].hello_rx = 1;
        ++ctx->hellos;
        ctx->replies_due = 1;
    }
    ctx->moved = 1;
    return UCS_OK;
}
