/*
 * uct_perftest: the test loops.
 *
 * Each side of a test advances through a step function that posts at
 * most one operation, progresses its worker once and returns; it never
 * waits. perf_run_size() calls the step of every local side in turn
 * until all are done, so loopback (two sides in this process) and
 * client/server (one side here, one in the peer) share the code.
 *
 * Latency tests are ping-pong: the initiator posts, the responder sees
 * it and posts back, the initiator sees the reply; each round trip is
 * recorded and halved. am_lat counts messages in the AM handler;
 * put_lat watches the last byte of its receive buffer for the peer's
 * sequence marker; atomic_add_lat watches a counter the peer adds to.
 * get_lat posts one get at a time and records it whole, from the call
 * to its completion; the responder only progresses.
 *
 * Bandwidth tests: the initiator posts back to back, retrying while the
 * transport says UCS_ERR_NO_RESOURCE. Operations that complete later
 * (zcopy, get_bcopy) take one of -O completion slots, so at most that
 * many are in flight. The clock stops when the receiver has everything:
 * for RMA when the flush (remote completion) and every completion are
 * done; for am_bw when the responder's report of the last message is
 * back. The am_bw responder reports its count every -W/2 messages and
 * the initiator stays at most -W messages ahead of the last report
 * (receiver credits, as ucx_perftest); for RMA the responder only
 * progresses.
 *
 * A failed run ends at once with one line on stderr: a side's endpoint
 * failed (the error handler), an operation or completion failed, the
 * out-of-band socket closed, or -T seconds passed without anything from
 * the peer (perf_run_loop()).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "perftest.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* put_lat marker of iteration @a seq: never 0, differs from the last */
static inline uint8_t perf_marker(unsigned long seq)
{
    return (uint8_t)((seq & 0x7f) + 1);
}

static inline char *perf_send_buf(const perf_run_t *run)
{
    return run->side->buf;
}

static inline char *perf_recv_buf(const perf_run_t *run)
{
    return run->side->buf + run->side->half;
}

/* The peer's receive half (put and atomic target) */
static inline uint64_t perf_remote_recv(const perf_run_t *run)
{
    return run->side->remote_buf + run->side->half;
}

/* The peer's send half (get source) */
static inline uint64_t perf_remote_send(const perf_run_t *run)
{
    return run->side->remote_buf;
}

static size_t perf_pack_cb(void *dest, void *arg)
{
    perf_run_t *run = arg;

    memcpy(dest, perf_send_buf(run), run->size);
    return run->size;
}

/* rndv_lat: the RTS header and the packed rkey after it */
static size_t perf_pack_rts(void *dest, void *arg)
{
    const perf_rts_hdr_t *hdr = arg;
    size_t length             = sizeof(*hdr) + hdr->rkey_len;

    memcpy(dest, arg, length);
    return length;
}

static void perf_unpack_cb(void *arg, const void *data, size_t length)
{
    perf_run_t *run = arg;

    memcpy(perf_recv_buf(run), data, length);
}

static inline perf_comp_t *perf_comp_get(perf_side_t *side)
{
    perf_comp_t *comp;

    if (side->num_free == 0) {
        return NULL;
    }
    comp               = &side->comps[side->free_comps[--side->num_free]];
    comp->super.count  = 1;
    comp->super.status = UCS_OK;
    return comp;
}

static inline void perf_comp_put(perf_side_t *side, perf_comp_t *comp)
{
    side->free_comps[side->num_free++] = comp->index;
}

static inline int perf_mode_needs_comp(const perf_run_t *run)
{
    perf_mode_t mode = run->params->mode;
    perf_op_t op     = perf_tests[run->params->test].op;

    return ((mode == PERF_MODE_ZCOPY) && (op != PERF_OP_RNDV)) ||
           ((mode == PERF_MODE_BCOPY) && (op == PERF_OP_GET));
}

/* rndv_lat: the bytes at both ends of message @a seq, set by the sender
 * and checked by the receiver (the whole message during the warm-up) */
static inline uint8_t perf_rndv_marker(unsigned long seq)
{
    return (uint8_t)(0x80 | (seq & 0x7f));
}

/* rndv_lat: offers message @a seq to the peer: registers the send half,
 * packs its rkey, sends both in an active message. The previous message
 * stays registered until the peer's FIN for it; until then there is no
 * resource for the next. */
static ucs_status_t perf_rndv_send(perf_run_t *run, unsigned long seq)
{
    perf_side_t *side = run->side;
    perf_ctx_t *ctx   = run->ctx;
    char *buf         = perf_send_buf(run);
    struct {
        perf_rts_hdr_t hdr;
        uint8_t rkey[PERF_RNDV_RKEY_MAX];
    } rts;
    ucs_status_t status;
    ssize_t packed;

    if (side->send_memh != UCT_MEM_HANDLE_NULL) {
        if (side->peer_rx < seq) {
            return UCS_ERR_NO_RESOURCE; /* the FIN of seq - 1 is not here */
        }
        status          = uct_md_mem_dereg(ctx->md, side->send_memh);
        side->send_memh = UCT_MEM_HANDLE_NULL;
        if (status != UCS_OK) {
            return status;
        }
    }

    buf[0] = buf[run->size - 1] = (char)perf_rndv_marker(seq);
    status = uct_md_mem_reg(ctx->md, buf, run->size, UCT_MD_MEM_ACCESS_ALL,
                            &side->send_memh);
    if (status != UCS_OK) {
        side->send_memh = UCT_MEM_HANDLE_NULL;
        return status;
    }
    status = uct_md_mkey_pack(ctx->md, side->send_memh, rts.rkey);
    if (status != UCS_OK) {
        return status;
    }
    rts.hdr.seq      = seq;
    rts.hdr.addr     = (uintptr_t)buf;
    rts.hdr.rkey_len = (uint32_t)ctx->md_attr.rkey_packed_size;
    rts.hdr.reserved = 0;

    packed =
        uct_ep_am_bcopy(side->ep, side->peer_am_id, perf_pack_rts, &rts, 0);
    if (packed >= 0) {
        return UCS_OK;
    }
    /* not sent: the next try registers again */
    uct_md_mem_dereg(ctx->md, side->send_memh);
    side->send_memh = UCT_MEM_HANDLE_NULL;
    return (ucs_status_t)packed;
}

/*
 * Posts the operation of the test once. UCS_OK: done (or in flight with a
 * completion slot taken); UCS_ERR_NO_RESOURCE: try again after progress;
 * other errors are failures.
 */
static ucs_status_t perf_post(perf_run_t *run, unsigned long seq)
{
    perf_side_t *side = run->side;
    uct_ep_h ep       = side->ep;
    uct_rkey_t rkey   = side->rkey.rkey;
    perf_comp_t *comp = NULL;
    size_t size       = run->size;
    ucs_status_t status;
    ssize_t packed;
    uct_iov_t iov;

    if (perf_mode_needs_comp(run)) {
        comp = perf_comp_get(side);
        if (comp == NULL) {
            return UCS_ERR_NO_RESOURCE;
        }
        iov.memh   = side->memh;
        iov.stride = 0;
        iov.count  = 1;
        iov.length = size;
        iov.buffer = (perf_tests[run->params->test].op == PERF_OP_GET)
                         ? perf_recv_buf(run)
                         : perf_send_buf(run);
    }

    switch (perf_tests[run->params->test].op) {
    case PERF_OP_AM:
        if (run->params->mode == PERF_MODE_SHORT) {
            status =
                uct_ep_am_short(ep, side->peer_am_id, seq, perf_send_buf(run),
                                (unsigned)(size - sizeof(uint64_t)));
        } else if (run->params->mode == PERF_MODE_BCOPY) {
            packed =
                uct_ep_am_bcopy(ep, side->peer_am_id, perf_pack_cb, run, 0);
            status = (packed < 0) ? (ucs_status_t)packed : UCS_OK;
        } else {
            status = uct_ep_am_zcopy(ep, side->peer_am_id, NULL, 0, &iov, 1, 0,
                                     &comp->super);
        }
        break;
    case PERF_OP_PUT:
        if (run->params->mode == PERF_MODE_SHORT) {
            status = uct_ep_put_short(ep, perf_send_buf(run), (unsigned)size,
                                      perf_remote_recv(run), rkey);
        } else if (run->params->mode == PERF_MODE_BCOPY) {
            packed = uct_ep_put_bcopy(ep, perf_pack_cb, run,
                                      perf_remote_recv(run), rkey);
            status = (packed < 0) ? (ucs_status_t)packed : UCS_OK;
        } else {
            status = uct_ep_put_zcopy(ep, &iov, 1, perf_remote_recv(run), rkey,
                                      &comp->super);
        }
        break;
    case PERF_OP_GET:
        if (run->params->mode == PERF_MODE_SHORT) {
            status = uct_ep_get_short(ep, perf_recv_buf(run), (unsigned)size,
                                      perf_remote_send(run), rkey);
        } else if (run->params->mode == PERF_MODE_BCOPY) {
            status =
                uct_ep_get_bcopy(ep, perf_unpack_cb, run, size,
                                 perf_remote_send(run), rkey, &comp->super);
        } else {
            status = uct_ep_get_zcopy(ep, &iov, 1, perf_remote_send(run), rkey,
                                      &comp->super);
        }
        break;
    case PERF_OP_RNDV:
        status = perf_rndv_send(run, seq);
        break;
    default:
        if (size == sizeof(uint32_t)) {
            status = uct_ep_atomic32_post(ep, UCT_ATOMIC_OP_ADD, 1,
                                          perf_remote_recv(run), rkey);
        } else {
            status = uct_ep_atomic64_post(ep, UCT_ATOMIC_OP_ADD, 1,
                                          perf_remote_recv(run), rkey);
        }
        break;
    }

    if (comp != NULL) {
        if (status == UCS_INPROGRESS) {
            return UCS_OK; /* the slot returns in perf_comp_cb */
        }
        perf_comp_put(side, comp);
    }
    if ((status == UCS_OK) &&
        (perf_tests[run->params->test].op == PERF_OP_GET)) {
        ++side->completed; /* the data is here already */
    }
    return status;
}

static void perf_rndv_get_cb(uct_completion_t *self)
{
    perf_side_t *side = PERF_CONTAINER_OF(self, perf_side_t, get_comp);

    if ((self->status != UCS_OK) && (side->comp_status == UCS_OK)) {
        side->comp_status = self->status;
    }
    side->get_state = PERF_RNDV_GET_DONE;
}

/* rndv_lat: whether message @a seq landed whole in the receive half; the
 * whole of it is compared during the warm-up, its two ends always */
static int perf_rndv_check(perf_run_t *run, unsigned long seq)
{
    const uint8_t *recv = (const uint8_t *)perf_recv_buf(run);
    uint8_t marker      = perf_rndv_marker(seq);
    size_t size         = run->size;
    size_t i, bad = size;

    if (recv[0] != marker) {
        bad = 0;
    } else if (recv[size - 1] != marker) {
        bad = size - 1;
    } else if (seq < run->params->warmup) {
        for (i = 1; i + 1 < size; ++i) {
            if (recv[i] != 'p') {
                bad = i;
                break;
            }
        }
    }
    if (bad == size) {
        return 1;
    }
    fprintf(stderr,
            "uct_perftest: rndv_lat message %lu of %zu bytes over %s/%s "
            "arrived wrong: byte %zu is 0x%02x\n",
            seq, size, run->params->tl_name, run->params->dev_name, bad,
            recv[bad]);
    return 0;
}

/* rndv_lat receive side, advanced by progress: the peer's RTS -> rkey
 * unpacked and the receive half registered -> GET zcopy -> data checked,
 * rkey released, FIN sent, receive half deregistered. Failures go to
 * side->comp_status, which every wait loop watches. */
static void perf_rndv_progress(perf_run_t *run)
{
    perf_side_t *side = run->side;
    perf_ctx_t *ctx   = run->ctx;
    char *recv        = perf_recv_buf(run);
    ucs_status_t status;
    uct_iov_t iov;

    if (!side->rts_ready || (side->comp_status != UCS_OK)) {
        return;
    }

    if (side->get_state == PERF_RNDV_GET_IDLE) {
        if (side->rts_seq != side->completed) {
            fprintf(stderr,
                    "uct_perftest: rndv_lat got the offer of message %" PRIu64
                    " while waiting for message %lu\n",
                    side->rts_seq, side->completed);
            status = UCS_ERR_IO_ERROR;
            goto fail;
        }
        status =
            uct_rkey_unpack(ctx->component, side->rts_rkey, &side->get_rkey);
        if (status != UCS_OK) {
            goto fail;
        }
        status = uct_md_mem_reg(ctx->md, recv, run->size, UCT_MD_MEM_ACCESS_ALL,
                                &side->get_memh);
        if (status != UCS_OK) {
            side->get_memh = UCT_MEM_HANDLE_NULL;
            uct_rkey_release(ctx->component, &side->get_rkey);
            goto fail;
        }
        /* what the GET must overwrite */
        if (side->rts_seq < run->params->warmup) {
            memset(recv, 0, run->size);
        } else {
            recv[0] = recv[run->size - 1] = 0;
        }
        side->get_state = PERF_RNDV_GET_READY;
    }

    if (side->get_state == PERF_RNDV_GET_READY) {
        iov.buffer            = recv;
        iov.length            = run->size;
        iov.memh              = side->get_memh;
        iov.stride            = 0;
        iov.count             = 1;
        side->get_comp.func   = perf_rndv_get_cb;
        side->get_comp.count  = 1;
        side->get_comp.status = UCS_OK;
        side->get_state       = PERF_RNDV_GET_POSTED;
        status = uct_ep_get_zcopy(side->ep, &iov, 1, side->rts_addr,
                                  side->get_rkey.rkey, &side->get_comp);
        if (status == UCS_OK) {
            side->get_state = PERF_RNDV_GET_DONE;
        } else if (status == UCS_ERR_NO_RESOURCE) {
            side->get_state = PERF_RNDV_GET_READY;
            return;
        } else if (status != UCS_INPROGRESS) {
            goto fail;
        }
    }

    if (side->get_state == PERF_RNDV_GET_POSTED) {
        return; /* the GET is in flight */
    }

    if (side->get_state == PERF_RNDV_GET_DONE) {
        if (!perf_rndv_check(run, side->rts_seq)) {
            status = UCS_ERR_IO_ERROR;
            goto fail;
        }
        side->get_state = PERF_RNDV_GET_CHECKED;
    }

    status = uct_ep_am_short(side->ep, side->peer_am_id + PERF_AM_CTRL_OFFSET,
                             side->rts_seq + 1, NULL, 0);
    if (status == UCS_ERR_NO_RESOURCE) {
        return; /* the FIN goes on the next pass */
    } else if (status != UCS_OK) {
        goto fail;
    }
    uct_rkey_release(ctx->component, &side->get_rkey);
    status          = uct_md_mem_dereg(ctx->md, side->get_memh);
    side->get_memh  = UCT_MEM_HANDLE_NULL;
    side->get_state = PERF_RNDV_GET_IDLE;
    side->rts_ready = 0;
    ++side->completed;
    if (status != UCS_OK) {
        goto fail;
    }
    return;

fail:
    if (side->comp_status == UCS_OK) {
        side->comp_status = status;
    }
}

/* One progress pass of @a run's side: the worker, and for rndv_lat the
 * receive side's next step */
static inline void perf_side_progress(perf_run_t *run)
{
    uct_worker_progress(run->side->worker);
    if (perf_tests[run->params->test].op == PERF_OP_RNDV) {
        perf_rndv_progress(run);
    }
}

/* rndv_lat: what the end of a size leaves registered, once the peer is
 * done with it (or the run failed) */
static void perf_rndv_cleanup(perf_run_t *run)
{
    perf_side_t *side = run->side;
    perf_ctx_t *ctx   = run->ctx;

    if (side->send_memh != UCT_MEM_HANDLE_NULL) {
        uct_md_mem_dereg(ctx->md, side->send_memh);
        side->send_memh = UCT_MEM_HANDLE_NULL;
    }
    if (side->get_state == PERF_RNDV_GET_POSTED) {
        return; /* the transport still writes there: leave it */
    }
    if (side->get_state != PERF_RNDV_GET_IDLE) {
        uct_rkey_release(ctx->component, &side->get_rkey);
        uct_md_mem_dereg(ctx->md, side->get_memh);
        side->get_memh  = UCT_MEM_HANDLE_NULL;
        side->get_state = PERF_RNDV_GET_IDLE;
    }
    side->rts_ready = 0;
}

/* What @a run is doing, for the failure report */
static const char *perf_run_phase(const perf_run_t *run)
{
    unsigned long count;

    if (run->done) {
        return "waiting for the other side";
    } else if (run->side->initiator) {
        if (!perf_tests[run->params->test].is_latency &&
            (run->posted == run->total)) {
            return "final flush";
        }
        count = run->posted;
    } else {
        count = (perf_tests[run->params->test].op == PERF_OP_AM)
                    ? run->side->am_rx
                    : run->received;
    }
    return (count <= run->params->warmup) ? "warm-up" : "measurement";
}

/* Statuses that mean the peer or the connection to it is gone */
static int perf_status_is_peer_failure(ucs_status_t status)
{
    switch (status) {
    case UCS_ERR_CONNECTION_RESET:
    case UCS_ERR_ENDPOINT_TIMEOUT:
    case UCS_ERR_TIMED_OUT:
    case UCS_ERR_UNREACHABLE:
    case UCS_ERR_NOT_CONNECTED:
    case UCS_ERR_CANCELED:
        return 1;
    default:
        return 0;
    }
}

/*
 * An operation (@a what: "a send", "a completion", "the flush") failed
 * with @a status. Once the peer is known to have failed, or when the
 * status says so, it is the peer's failure; anything else is ours.
 */
static int perf_op_failed(perf_run_t *run, const char *what,
                          ucs_status_t status)
{
    ucs_status_t peer_status = run->side->peer_status;
    char how[64];

    run->ctx->phase = perf_run_phase(run);
    if ((peer_status != UCS_OK) || perf_status_is_peer_failure(status)) {
        snprintf(how, sizeof(how), "%s failed", what);
        perf_report_peer_failure(
            run->ctx, (peer_status != UCS_OK) ? peer_status : status, how);
        return -1;
    }
    fprintf(stderr,
            "uct_perftest: %s %s of %zu bytes over %s/%s: %s "
            "failed: %s\n",
            perf_tests[run->params->test].name,
            perf_mode_names[run->params->mode], run->size, run->params->tl_name,
            run->params->dev_name, what, ucs_status_string(status));
    return -1;
}

/* Whether the peer's message number @a seq has arrived */
static inline int perf_lat_arrived(const perf_run_t *run, unsigned long seq)
{
    const volatile char *recv = perf_recv_buf(run);

    switch (perf_tests[run->params->test].op) {
    case PERF_OP_AM:
        return run->side->am_rx > seq;
    case PERF_OP_GET:
    case PERF_OP_RNDV:
        return run->side->completed > seq;
    case PERF_OP_PUT:
        return (uint8_t)recv[run->size - 1] == perf_marker(seq);
    default:
        if (run->size == sizeof(uint32_t)) {
            return *(const volatile uint32_t *)recv >= (uint32_t)(seq + 1);
        }
        return *(const volatile uint64_t *)recv >= (uint64_t)(seq + 1);
    }
}

/* Posts message @a seq of a ping-pong; 1 when it left */
static int perf_lat_send(perf_run_t *run, unsigned long seq)
{
    ucs_status_t status;

    if (perf_tests[run->params->test].op == PERF_OP_PUT) {
        perf_send_buf(run)[run->size - 1] = (char)perf_marker(seq);
    }
    status = perf_post(run, seq);
    if (status == UCS_OK) {
        return 1;
    } else if (status == UCS_ERR_NO_RESOURCE) {
        return 0;
    }
    return perf_op_failed(run, "a send", status);
}

static int perf_lat_initiator_step(perf_run_t *run)
{
    int have_now = 0;
    perf_time_t now;
    int ret;

    perf_side_progress(run);

    if (run->side->comp_status != UCS_OK) {
        return perf_op_failed(run, "a completion", run->side->comp_status);
    }

    if (run->posted > run->received) {
        /* Waiting for the reply to the last ping */
        if (!perf_lat_arrived(run, run->received)) {
            return 0;
        }
        now      = perf_time_now();
        have_now = 1;
        if (run->received >= run->params->warmup) {
            run->rtt[run->received - run->params->warmup] = now - run->t_send;
        }
        if (++run->received == run->total) {
            run->t_end = now;
            run->done  = 1;
            return 0;
        }
    }

    /* the next ping leaves now: the clock read at the reply is its start
     * (one read per round trip, which matters where reading the clock is
     * a system call) */
    run->t_send = have_now ? now : perf_time_now();
    if (run->posted == run->params->warmup) {
        run->t_start = run->t_send;
    }
    ret = perf_lat_send(run, run->posted);
    if (ret > 0) {
        ++run->posted;
    }
    return (ret < 0) ? -1 : 0;
}

static int perf_lat_responder_step(perf_run_t *run)
{
    int ret;

    perf_side_progress(run);
    if (run->side->comp_status != UCS_OK) {
        return perf_op_failed(run, "a completion", run->side->comp_status);
    }

    if (perf_tests[run->params->test].op == PERF_OP_GET) {
        /* one-sided: serving gets takes only progress (perf_run_loop
         * keeps progressing a side that is done) */
        run->done = 1;
        return 0;
    }

    if (run->received == run->posted) {
        if (!perf_lat_arrived(run, run->received)) {
            return 0;
        }
        ++run->received;
    }

    ret = perf_lat_send(run, run->posted);
    if (ret > 0) {
        if (++run->posted == run->total) {
            run->done = 1;
        }
    }
    return (ret < 0) ? -1 : 0;
}

static void perf_flush_cb(uct_completion_t *self)
{
    perf_run_t *run = PERF_CONTAINER_OF(self, perf_run_t, flush_comp);

    run->flushed = 1;
}

/* am_bw with receiver credits: whether the responder's reports let one
 * more message go */
static inline int perf_bw_have_credit(const perf_run_t *run)
{
    unsigned window = run->params->fc_window;

    return (window == 0) || (perf_tests[run->params->test].op != PERF_OP_AM) ||
           ((run->posted - run->side->peer_rx) < window);
}

static int perf_bw_initiator_step(perf_run_t *run)
{
    perf_side_t *side = run->side;
    ucs_status_t status;

    uct_worker_progress(side->worker);

    if (side->comp_status != UCS_OK) {
        return perf_op_failed(run, "a completion", side->comp_status);
    }

    if (run->posted < run->total) {
        if (!perf_bw_have_credit(run)) {
            return 0;
        }
        if (run->posted == run->params->warmup) {
            run->t_start = perf_time_now();
        }
        status = perf_post(run, run->posted);
        if (status == UCS_OK) {
            ++run->posted;
        } else if (status != UCS_ERR_NO_RESOURCE) {
            return perf_op_failed(run, "a send", status);
        }
        return 0;
    }

    /* Everything is posted: flush, then wait for the completion slots */
    if (!run->flushing) {
        run->flush_comp.func   = perf_flush_cb;
        run->flush_comp.count  = 1;
        run->flush_comp.status = UCS_OK;
        status                 = uct_ep_flush(side->ep, 0, &run->flush_comp);
        if (status == UCS_ERR_NO_RESOURCE) {
            return 0;
        } else if (status == UCS_OK) {
            run->flushed = 1;
        } else if (status != UCS_INPROGRESS) {
            return perf_op_failed(run, "the flush", status);
        }
        run->flushing = 1;
    }

    /* The clock stops when the receiver has everything: RMA is then
     * complete at the target (the flush), AMs when the responder's
     * report of the last one is here */
    if (run->flushed && (side->num_free == side->num_comps) &&
        ((perf_tests[run->params->test].op != PERF_OP_AM) ||
         (side->peer_rx >= run->total))) {
        if (run->flush_comp.status != UCS_OK) {
            return perf_op_failed(run, "the flush", run->flush_comp.status);
        }
        run->t_end = perf_time_now();
        run->done  = 1;
    }
    return 0;
}

/* am_bw responder: reports the count of messages received every
 * fc_window / 2 of them (credits), and always the last one */
static int perf_bw_report(perf_run_t *run);

static int perf_bw_responder_step(perf_run_t *run)
{
    uct_worker_progress(run->side->worker);

    if (perf_tests[run->params->test].op != PERF_OP_AM) {
        run->done = 1; /* RMA: the target only progresses */
        return 0;
    }
    return perf_bw_report(run);
}

/* The am_bw responder's report, when one is due */
static int perf_bw_report(perf_run_t *run)
{
    perf_side_t *side = run->side;
    unsigned long rx, every;
    ucs_status_t status;

    rx    = (side->am_rx < run->total) ? side->am_rx : run->total;
    every = (run->params->fc_window == 0)
                ? run->total
                : perf_max(run->params->fc_window / 2, 1);
    if ((rx == run->reported) ||
        ((rx < run->total) && ((rx - run->reported) < every))) {
        return 0;
    }

    status = uct_ep_am_short(side->ep, side->peer_am_id + PERF_AM_CTRL_OFFSET,
                             rx, NULL, 0);
    if (status == UCS_ERR_NO_RESOURCE) {
        return 0;
    } else if (status != UCS_OK) {
        return perf_op_failed(run, "a receive report", status);
    }
    run->reported = rx;
    if (rx == run->total) {
        run->done = 1;
    }
    return 0;
}

static int perf_step(perf_run_t *run)
{
    if (perf_tests[run->params->test].is_latency) {
        return run->side->initiator ? perf_lat_initiator_step(run)
                                    : perf_lat_responder_step(run);
    }
    return run->side->initiator ? perf_bw_initiator_step(run)
                                : perf_bw_responder_step(run);
}

static void perf_run_init(perf_ctx_t *ctx, perf_side_t *side, perf_run_t *run,
                          size_t size)
{
    memset(run, 0, sizeof(*run));
    run->ctx    = ctx;
    run->side   = side;
    run->params = &ctx->params;
    run->size   = size;
    run->total  = ctx->params.warmup + ctx->params.iters;

    side->am_rx     = 0;
    side->peer_rx   = 0;
    side->completed = 0;
    side->rts_ready = 0;
    side->get_state = PERF_RNDV_GET_IDLE;
    memset(side->buf + side->half, 0, side->half);
    memset(side->buf, 'p', side->half);
}

static int perf_cmp_time(const void *a, const void *b)
{
    perf_time_t ta = *(const perf_time_t *)a;
    perf_time_t tb = *(const perf_time_t *)b;

    return (ta > tb) - (ta < tb);
}

/* The sample of rank @a pct percent among @a n sorted ones */
static perf_time_t perf_percentile(const perf_time_t *sorted, unsigned long n,
                                   double pct)
{
    unsigned long rank = (unsigned long)(pct / 100.0 * (double)n);

    return sorted[(rank < n) ? rank : (n - 1)];
}

static void perf_result_compute(const perf_run_t *run, perf_result_t *result)
{
    unsigned long iters = run->params->iters;
    unsigned long n     = (run->samples > 0) ? run->samples : iters;
    double total_sec    = perf_time_to_sec(run->t_end - run->t_start);
    double div, one_way_sec;

    memset(result, 0, sizeof(*result));
    result->size  = run->size;
    result->iters = iters;
    if (iters == 0) {
        return;
    }

    if (perf_tests[run->params->test].is_latency) {
        /* ping-pongs report half a round trip, a get the whole get */
        div = (perf_tests[run->params->test].op == PERF_OP_GET) ? 1.0 : 2.0;
        qsort(run->rtt, n, sizeof(*run->rtt), perf_cmp_time);
        result->min_usec = perf_time_to_usec(run->rtt[0]) / div;
        result->typical_usec =
            perf_time_to_usec(perf_percentile(run->rtt, n, 50.0)) / div;
        result->p99_usec =
            perf_time_to_usec(perf_percentile(run->rtt, n, 99.0)) / div;
        one_way_sec = total_sec / iters / div;
    } else {
        one_way_sec          = total_sec / iters;
        result->typical_usec = one_way_sec * 1e6;
    }

    result->avg_usec = one_way_sec * 1e6;
    if (one_way_sec > 0) {
        result->msg_rate = 1.0 / one_way_sec;
        result->bw_mibs  = (double)run->size / one_way_sec / (1024.0 * 1024.0);
    }
}

/* Grows with everything the peer makes happen here: replies, messages,
 * completions, sends the transport took, the flush */
static unsigned long perf_run_events(const perf_run_t *run)
{
    return run->posted + run->received + run->side->am_rx + run->side->peer_rx +
           run->side->completed + (unsigned long)run->flushed;
}

/*
 * Loopback ping-pong, both sides in this process: one loop posts the
 * ping, progresses until the responder has it, posts the pong and
 * progresses until it is back, and reads the clock once per round trip.
 * The same work as the step functions without their per-call dispatch,
 * so an in-process transport measures itself and not the harness. The
 * waits check for failures and for -T every PERF_CLOCK_CHECK_MASK + 1
 * passes.
 */
static int perf_lat_wait(perf_ctx_t *ctx, perf_run_t *run, perf_run_t *other,
                         unsigned long seq)
{
    uct_worker_h worker = run->side->worker;
    uct_worker_h wother = other->side->worker;
    int rndv            = (perf_tests[run->params->test].op == PERF_OP_RNDV);
    perf_time_t t_wait  = 0;
    unsigned long spins = 0;
    perf_time_t limit;

    for (;;) {
        uct_worker_progress(worker);
        if (rndv) {
            perf_rndv_progress(run);
        }
        if (perf_lat_arrived(run, seq)) {
            return 0;
        }
        if (wother != worker) {
            uct_worker_progress(wother);
        }
        if (rndv) {
            perf_rndv_progress(other);
        }
        if ((++spins & PERF_CLOCK_CHECK_MASK) != 0) {
            continue;
        }
        if ((run->side->peer_status != UCS_OK) ||
            (other->side->peer_status != UCS_OK)) {
            ctx->phase = perf_run_phase(run);
            perf_report_peer_failure(ctx,
                                     (run->side->peer_status != UCS_OK)
                                         ? run->side->peer_status
                                         : other->side->peer_status,
                                     "the transport reported it");
            return -1;
        }
        if (run->side->comp_status != UCS_OK) {
            return perf_op_failed(run, "a completion", run->side->comp_status);
        }
        if (other->side->comp_status != UCS_OK) {
            return perf_op_failed(other, "a completion",
                                  other->side->comp_status);
        }
        limit = perf_time_from_sec(ctx->params.timeout);
        if (t_wait == 0) {
            t_wait = perf_time_now();
        } else if ((ctx->params.timeout > 0) &&
                   ((perf_time_now() - t_wait) > limit)) {
            ctx->phase = perf_run_phase(run);
            perf_report_no_progress(ctx);
            return -1;
        }
    }
}

/* Posts message @a seq from @a run's side, progressing both sides while
 * the transport has no resources */
static int perf_lat_post(perf_ctx_t *ctx, perf_run_t *run, perf_run_t *other,
                         unsigned long seq)
{
    int ret;

    for (;;) {
        ret = perf_lat_send(run, seq);
        if (ret != 0) {
            return (ret > 0) ? 0 : -1;
        }
        perf_side_progress(run);
        if (other->side->worker != run->side->worker) {
            uct_worker_progress(other->side->worker);
        }
        if (perf_tests[run->params->test].op == PERF_OP_RNDV) {
            perf_rndv_progress(other);
        }
        if ((run->side->peer_status != UCS_OK) ||
            (other->side->peer_status != UCS_OK)) {
            return perf_op_failed(run, "a send", UCS_ERR_NO_RESOURCE);
        }
    }
}

/* am_lat short: the calls made directly, the generic paths taken only
 * when the transport has no resources, fails, or the message is not
 * there yet */
static int perf_lat_loopback_am_short(perf_ctx_t *ctx, perf_run_t *init,
                                      perf_run_t *resp)
{
    perf_side_t *a       = init->side;
    perf_side_t *b       = resp->side;
    const void *a_buf    = perf_send_buf(init);
    const void *b_buf    = perf_send_buf(resp);
    unsigned length      = (unsigned)(init->size - sizeof(uint64_t));
    unsigned long warmup = ctx->params.warmup;
    perf_time_t *rtt     = init->rtt;
    int one              = ctx->params.one_message;
    unsigned batch       = ctx->params.clock_batch;
    unsigned long i, k = 0;
    unsigned left  = batch;
    perf_time_t t0 = 0;
    perf_time_t t1;

    ctx->phase = "warm-up";
    for (i = 0; i < init->total; ++i) {
        if (i == warmup) {
            ctx->phase    = "measurement";
            t0            = perf_time_now();
            init->t_start = t0;
        }
        if (!one) {
            if ((uct_ep_am_short(a->ep, a->peer_am_id, i, a_buf, length) !=
                 UCS_OK) &&
                (perf_lat_post(ctx, init, resp, i) != 0)) {
                return -1;
            }
            if ((b->am_rx <= i) && (perf_lat_wait(ctx, resp, init, i) != 0)) {
                return -1;
            }
        }
        /* -1: only this message, to the initiator's interface */
        if ((uct_ep_am_short(b->ep, b->peer_am_id, i, b_buf, length) !=
             UCS_OK) &&
            (perf_lat_post(ctx, resp, init, i) != 0)) {
            return -1;
        }
        if ((a->am_rx <= i) && (perf_lat_wait(ctx, init, resp, i) != 0)) {
            return -1;
        }
        /* one clock read per -B iterations, the last one always */
        if ((i >= warmup) && ((--left == 0) || (i + 1 == init->total))) {
            t1       = perf_time_now();
            rtt[k++] = (t1 - t0) / (batch - left);
            t0       = t1;
            left     = batch;
        }
    }
    init->t_end   = t0;
    init->samples = k;
    return 0;
}

static int perf_lat_loopback(perf_ctx_t *ctx, perf_run_t *init,
                             perf_run_t *resp)
{
    int one_sided        = (perf_tests[ctx->params.test].op == PERF_OP_GET);
    unsigned long warmup = ctx->params.warmup;
    perf_time_t t0, t1;
    unsigned long i;

    if ((perf_tests[ctx->params.test].op == PERF_OP_AM) &&
        (ctx->params.mode == PERF_MODE_SHORT)) {
        if (perf_lat_loopback_am_short(ctx, init, resp) != 0) {
            return -1;
        }
        goto out;
    }

    ctx->phase = "warm-up";
    t0         = perf_time_now();
    for (i = 0; i < init->total; ++i) {
        if (i == warmup) {
            ctx->phase    = "measurement";
            init->t_start = t0;
        }
        if (perf_lat_post(ctx, init, resp, i) != 0) {
            return -1;
        }
        if (!one_sided) {
            if ((perf_lat_wait(ctx, resp, init, i) != 0) ||
                (perf_lat_post(ctx, resp, init, i) != 0)) {
                return -1;
            }
        }
        if (perf_lat_wait(ctx, init, resp, i) != 0) {
            return -1;
        }
        t1 = perf_time_now();
        if (i >= warmup) {
            init->rtt[i - warmup] = t1 - t0;
        }
        t0 = t1;
    }
    init->t_end = t0;

out:
    init->posted = init->received = init->total;
    resp->posted = resp->received = init->total;
    init->done = resp->done = 1;
    return 0;
}

/*
 * Loopback am_bw short, both sides here: the sends, the responder's
 * reports and progress in one loop, without the step functions' per-call
 * dispatch (as perf_lat_loopback() does for latency). The clock stops
 * when the report of the last message is back.
 */
static int perf_bw_loopback_am_short(perf_ctx_t *ctx, perf_run_t *init,
                                     perf_run_t *resp)
{
    perf_side_t *a       = init->side;
    perf_side_t *b       = resp->side;
    const void *buf      = perf_send_buf(init);
    unsigned length      = (unsigned)(init->size - sizeof(uint64_t));
    unsigned long warmup = ctx->params.warmup;
    unsigned window      = ctx->params.fc_window;
    perf_time_t limit    = perf_time_from_sec(ctx->params.timeout);
    unsigned long spins = 0, last_events = 0, events;
    perf_time_t t_idle = 0, now;
    ucs_status_t status;

    ctx->phase = "warm-up";
    if (warmup == 0) {
        ctx->phase    = "measurement";
        init->t_start = perf_time_now();
    }
    while (a->peer_rx < init->total) {
        if ((init->posted < init->total) &&
            ((window == 0) || ((init->posted - a->peer_rx) < window))) {
            status = uct_ep_am_short(a->ep, a->peer_am_id, init->posted, buf,
                                     length);
            if (status == UCS_OK) {
                if (++init->posted == warmup) {
                    ctx->phase    = "measurement";
                    init->t_start = perf_time_now();
                }
                if ((b->am_rx - resp->reported) < (window / 2)) {
                    continue; /* no report due: send on */
                }
            } else if (status != UCS_ERR_NO_RESOURCE) {
                return perf_op_failed(init, "a send", status);
            }
        }
        uct_worker_progress(a->worker);
        if (b->worker != a->worker) {
            uct_worker_progress(b->worker);
        }
        if (perf_bw_report(resp) != 0) {
            return -1;
        }
        if ((++spins & PERF_CLOCK_CHECK_MASK) != 0) {
            continue;
        }
        if ((a->peer_status != UCS_OK) || (b->peer_status != UCS_OK)) {
            ctx->phase = perf_run_phase(init);
            perf_report_peer_failure(
                ctx,
                (a->peer_status != UCS_OK) ? a->peer_status : b->peer_status,
                "the transport reported it");
            return -1;
        }
        now    = perf_time_now();
        events = init->posted + b->am_rx + a->peer_rx;
        if (events != last_events) {
            last_events = events;
            t_idle      = now;
        } else if ((ctx->params.timeout > 0) && ((now - t_idle) > limit)) {
            ctx->phase = perf_run_phase(init);
            perf_report_no_progress(ctx);
            return -1;
        }
    }
    init->t_end = perf_time_now();
    init->done = resp->done = 1;
    return 0;
}

/*
 * Steps every local side until all are done. Ends with the run failed
 * (reported) when a side's endpoint fails, the out-of-band socket
 * closes, or nothing happens for -T seconds. Reads the clock only every
 * PERF_CLOCK_CHECK_MASK + 1 passes.
 */
static int perf_run_loop(perf_ctx_t *ctx, perf_run_t *runs,
                         const perf_run_t *initiator)
{
    perf_time_t report_interval = perf_time_from_sec(1.0);
    perf_time_t limit           = perf_time_from_sec(ctx->params.timeout);
    unsigned long loops         = 0;
    unsigned long events, last_events = 0;
    perf_time_t t_begin, t_report, t_progress, now;
    perf_side_t *side;
    unsigned i, num_done;

    t_begin = t_report = t_progress = perf_time_now();
    do {
        num_done = 0;
        for (i = 0; i < ctx->num_sides; ++i) {
            side = runs[i].side;
            if (runs[i].done) {
                /* Keep progressing: the other side may need us */
                perf_side_progress(&runs[i]);
                ++num_done;
            } else if (perf_step(&runs[i]) != 0) {
                return -1;
            }
            if (side->peer_status != UCS_OK) {
                ctx->phase = perf_run_phase(&runs[i]);
                perf_report_peer_failure(ctx, side->peer_status,
                                         "the transport reported it");
                return -1;
            }
        }

        if ((++loops & PERF_CLOCK_CHECK_MASK) != 0) {
            continue;
        }

        now        = perf_time_now();
        ctx->phase = perf_run_phase((initiator != NULL) ? initiator : &runs[0]);
        events     = 0;
        for (i = 0; i < ctx->num_sides; ++i) {
            events += perf_run_events(&runs[i]);
        }
        if (events != last_events) {
            last_events = events;
            t_progress  = now;
        } else if ((ctx->params.timeout > 0) && ((now - t_progress) > limit)) {
            perf_report_no_progress(ctx);
            return -1;
        }

        if ((ctx->sock >= 0) && (perf_oob_watch(ctx, now) != 0)) {
            return -1;
        }

        if ((now - t_report) >= report_interval) {
            t_report = now;
            if (initiator != NULL) {
                perf_print_progress(ctx, runs[0].size, initiator->posted,
                                    initiator->total,
                                    perf_time_to_sec(now - t_begin));
            }
        }
    } while (num_done < ctx->num_sides);

    return 0;
}

int perf_run_size(perf_ctx_t *ctx, size_t size, perf_result_t *result)
{
    perf_run_t runs[2];
    perf_run_t *initiator = NULL;
    unsigned i;
    int ret = -1;

    ctx->size  = size;
    ctx->phase = "waiting for the peer to start";
    for (i = 0; i < ctx->num_sides; ++i) {
        perf_run_init(ctx, &ctx->sides[i], &runs[i], size);
        if (ctx->sides[i].initiator) {
            initiator = &runs[i];
        }
    }

    if ((initiator != NULL) && perf_tests[ctx->params.test].is_latency) {
        initiator->rtt =
            calloc(perf_max(ctx->params.iters, 1), sizeof(*initiator->rtt));
        if (initiator->rtt == NULL) {
            fprintf(stderr, "out of memory for %lu round-trip times\n",
                    ctx->params.iters);
            return -1;
        }
    }

    /* Both sides have cleared their buffers before anyone posts */
    if ((ctx->sock >= 0) && (perf_oob_barrier(ctx) != 0)) {
        goto out;
    }

    if ((ctx->num_sides == 2) && perf_tests[ctx->params.test].is_latency) {
        if (perf_lat_loopback(ctx, &runs[0], &runs[1]) != 0) {
            goto out;
        }
    } else if ((ctx->num_sides == 2) && (ctx->params.test == PERF_TEST_AM_BW) &&
               (ctx->params.mode == PERF_MODE_SHORT)) {
        if (perf_bw_loopback_am_short(ctx, &runs[0], &runs[1]) != 0) {
            goto out;
        }
    } else if (perf_run_loop(ctx, runs, initiator) != 0) {
        goto out;
    }

    /* The peer has finished with our buffers and endpoint too */
    ctx->phase = "waiting for the peer to finish";
    if ((ctx->sock >= 0) && (perf_oob_barrier(ctx) != 0)) {
        goto out;
    }

    if (initiator != NULL) {
        perf_result_compute(initiator, result);
    }
    ret = 0;

out:
    if (perf_tests[ctx->params.test].op == PERF_OP_RNDV) {
        for (i = 0; i < ctx->num_sides; ++i) {
            perf_rndv_cleanup(&runs[i]);
        }
    }
    if (initiator != NULL) {
        free(initiator->rtt);
    }
    return ret;
}
