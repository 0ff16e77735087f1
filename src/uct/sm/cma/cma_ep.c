/*
 * cma endpoints: PUT and GET zcopy with process_vm_writev/readv on the
 * peer process, queued operations, flush, peer failure.
 *
 * An endpoint keeps its queued operations in a circular list through
 * op->next (it holds the tail, whose next is the head), so an idle
 * endpoint is 48 bytes: the base, the peer process (pid, pidfd and start
 * time, shared by the interface's endpoints to it), the tail, and what the
 * object tree shows (ops and bytes queued, status, last error). Only the head
 * of each queue is on the interface's active list; when it completes, flush
 * markers right behind it complete too and the next operation takes its place
 * at the tail of the active list.
 *
 * A peer fails when a system call finds its pid gone (ESRCH) or the
 * liveness check made before every call finds it exited: the endpoint
 * takes the status UCS_ERR_CONNECTION_RESET, new operations return it,
 * and progress completes every queued operation with it and then calls
 * the error handler once. Failures found outside progress (a send call,
 * ep_check) queue a FAIL marker so that progress reports them.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* process_vm_readv/writev */
#endif
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cma.h"

#include <uct/base/uct_vfs.h>
#include <ucs/debug/log.h>

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

UCS_STATIC_ASSERT_SIZE_LE(uct_cma_ep_t, 48);

/* ------------------------------------------------------------------------
 * Cursor over an iov: blocks of count/stride, then the system call
 */

static void uct_cma_cursor_init(uct_cma_cursor_t *cursor, const uct_iov_t *iov,
                                size_t iovcnt, uint64_t remote_addr,
                                size_t length)
{
    cursor->iov         = iov;
    cursor->iovcnt      = iovcnt;
    cursor->index       = 0;
    cursor->elem        = 0;
    cursor->offset      = 0;
    cursor->remote_addr = remote_addr;
    cursor->remaining   = length;
}

/* Moves the cursor past @a length bytes */
static void uct_cma_cursor_advance(uct_cma_cursor_t *cursor, size_t length)
{
    const uct_iov_t *iov;
    size_t chunk;

    cursor->remote_addr += length;
    cursor->remaining -= length;
    while ((length > 0) && (cursor->index < cursor->iovcnt)) {
        iov = &cursor->iov[cursor->index];
        if (cursor->elem >= iov->count) {
            ++cursor->index;
            cursor->elem = cursor->offset = 0;
            continue;
        }
        chunk = ucs_min(iov->length - cursor->offset, length);
        cursor->offset += chunk;
        length -= chunk;
        if (cursor->offset == iov->length) {
            ++cursor->elem;
            cursor->offset = 0;
        }
    }
}

/*
 * One system call: at most @a limit bytes from the cursor on. The peer is
 * checked first, so that a pid its process left and another took is
 * never written to or read from.
 * @return bytes moved (> 0), or a negative errno; -ESRCH for a peer that
 *         exited.
 */
static ssize_t uct_cma_ep_xfer(uct_cma_ep_t *ep, int is_put,
                               uct_cma_cursor_t *cursor, size_t limit)
{
    struct iovec local[UCT_CMA_CALL_IOV], remote;
    size_t index = cursor->index, elem = cursor->elem;
    size_t offset = cursor->offset, total = 0;
    unsigned count = 0;
    const uct_iov_t *iov;
    size_t chunk;
    ssize_t ret;

    limit = ucs_min(limit, cursor->remaining);
    while ((total < limit) && (count < UCT_CMA_CALL_IOV) &&
           (index < cursor->iovcnt)) {
        iov = &cursor->iov[index];
        if ((elem >= iov->count) || (iov->length == 0)) {
            ++index;
            elem = offset = 0;
            continue;
        }
        chunk                 = ucs_min(iov->length - offset, limit - total);
        local[count].iov_base = (char *)iov->buffer +
                                (((iov->count > 1) ? iov->stride : 0) * elem) +
                                offset;
        local[count].iov_len = chunk;
        total += chunk;
        ++count;
        offset += chunk;
        if (offset == iov->length) {
            ++elem;
            offset = 0;
        }
    }
    if (total == 0) {
        return -EINVAL; /* the iov holds fewer bytes than it claims */
    }

    if (!uct_sm_proc_is_alive(&ep->peer->proc)) {
        return -ESRCH;
    }

    remote.iov_base = (void *)(uintptr_t)cursor->remote_addr;
    remote.iov_len  = total;
    if (is_put) {
        ret =
            process_vm_writev(ep->peer->proc.pid, local, count, &remote, 1, 0);
    } else {
        ret = process_vm_readv(ep->peer->proc.pid, local, count, &remote, 1, 0);
    }
    if (ret < 0) {
        return -errno;
    } else if (ret == 0) {
        return -EFAULT;
    }

    uct_cma_cursor_advance(cursor, (size_t)ret);
    return ret;
}

/* ------------------------------------------------------------------------
 * Endpoint queues
 */

static inline uct_cma_op_t *uct_cma_ep_head(const uct_cma_ep_t *ep)
{
    return (ep->tail != NULL) ? ep->tail->next : NULL;
}

static inline void uct_cma_active_add(uct_cma_iface_t *iface, uct_cma_op_t *op)
{
    ucs_list_add_tail(&iface->active, &op->list);
    ++iface->num_active;
}

static inline int uct_cma_op_is_queued_work(const uct_cma_op_t *op)
{
    return op->type != UCT_CMA_OP_FLUSH;
}

/* Adds @a op at the tail of the ep's queue (it becomes the head and goes
 * on the active list when the queue was empty) and counts it */
static void uct_cma_ep_push(uct_cma_iface_t *iface, uct_cma_ep_t *ep,
                            uct_cma_op_t *op)
{
    op->ep = ep;
    if (uct_cma_op_is_queued_work(op)) {
        ++iface->num_queued;
        iface->queued_bytes += op->cursor.remaining;
    }
    if (op->type <= UCT_CMA_OP_GET) {
        ++ep->num_ops;
        ep->queued_bytes += op->cursor.remaining;
    }

    if (ep->tail == NULL) {
        op->next = op;
        ep->tail = op;
        uct_cma_active_add(iface, op);
        /* a sleeper must wake up to progress it */
        uct_cma_iface_signal(iface);
    } else {
        op->next       = ep->tail->next;
        ep->tail->next = op;
        ep->tail       = op;
    }
}

/* Takes the head off the ep's queue (not off the active list) */
static uct_cma_op_t *uct_cma_ep_pop(uct_cma_iface_t *iface, uct_cma_ep_t *ep)
{
    uct_cma_op_t *head = ep->tail->next;

    if (head == ep->tail) {
        ep->tail = NULL;
    } else {
        ep->tail->next = head->next;
    }

    if (uct_cma_op_is_queued_work(head)) {
        --iface->num_queued;
        iface->queued_bytes -= head->cursor.remaining;
    }
    if (head->type <= UCT_CMA_OP_GET) {
        --ep->num_ops;
        ep->queued_bytes -= head->cursor.remaining;
    }
    head->next = NULL;
    return head;
}

/* Empties the ep's queue into a NULL-terminated chain; @a head_active:
 * the head is still on the active list */
static uct_cma_op_t *uct_cma_ep_detach(uct_cma_iface_t *iface, uct_cma_ep_t *ep,
                                       int head_active)
{
    uct_cma_op_t *chain = NULL, **last = &chain;
    uct_cma_op_t *op;

    if (ep->tail == NULL) {
        return NULL;
    }
    if (head_active) {
        ucs_list_del(&uct_cma_ep_head(ep)->list);
        --iface->num_active;
    }
    while (ep->tail != NULL) {
        op    = uct_cma_ep_pop(iface, ep);
        *last = op;
        last  = &op->next;
    }
    return chain;
}

/* Completes every op of a detached chain with @a status (a FAIL marker
 * has no completion). Nothing of the endpoint is touched: a completion
 * may destroy it. */
static void uct_cma_chain_complete(uct_cma_iface_t *iface, uct_cma_op_t *chain,
                                   ucs_status_t status)
{
    uct_completion_t *comp;
    uct_cma_op_t *op;

    while (chain != NULL) {
        op    = chain;
        chain = op->next;
        comp  = op->comp;
        ucs_mpool_put(op);
        if (comp != NULL) {
            uct_invoke_completion(comp, status);
        }
    }
}

void uct_cma_ep_cancel_all(uct_cma_ep_t *ep)
{
    uct_cma_iface_t *iface = uct_cma_ep_iface(ep);

    uct_cma_chain_complete(iface, uct_cma_ep_detach(iface, ep, 1),
                           UCS_ERR_CANCELED);
}

/* The head op @a op (off the active list) completed with @a status */
static unsigned uct_cma_ep_op_done(uct_cma_iface_t *iface, uct_cma_ep_t *ep,
                                   uct_cma_op_t *op, ucs_status_t status)
{
    uct_completion_t *comp = op->comp;
    uct_cma_op_t *flushes = NULL, **last = &flushes;
    uct_cma_op_t *head;

    uct_cma_ep_pop(iface, ep);
    ucs_mpool_put(op);

    /* flushes waiting right behind it are done too */
    while (((head = uct_cma_ep_head(ep)) != NULL) &&
           (head->type == UCT_CMA_OP_FLUSH)) {
        *last = uct_cma_ep_pop(iface, ep);
        last  = &head->next;
    }
    if (head != NULL) {
        uct_cma_active_add(iface, head);
    }

    uct_cma_iface_signal(iface);
    if (comp != NULL) {
        uct_invoke_completion(comp, status);
    }
    uct_cma_chain_complete(iface, flushes, UCS_OK);
    return 1;
}

/* Reports the failure of @a ep, whose head op progress just took off the
 * active list: every op completes with the failure status, then the
 * error handler runs once (unless a completion destroyed the ep). */
static void uct_cma_ep_fail_now(uct_cma_iface_t *iface, uct_cma_ep_t *ep)
{
    ucs_status_t status = ep->status;
    uct_cma_op_t *chain;

    chain             = uct_cma_ep_detach(iface, ep, 0);
    iface->failing_ep = ep;
    uct_cma_iface_signal(iface);
    uct_cma_chain_complete(iface, chain, status);
    if (iface->failing_ep != ep) {
        return; /* destroyed by a completion */
    }

    iface->failing_ep = NULL;
    uct_iface_stat_peer_failure(&iface->super);
    uct_iface_handle_ep_err(&iface->super.super, &ep->super.super, status);
}

/* The peer of @a ep is gone: later operations get @a status, progress
 * reports it (right away when it holds an op of the ep, else through a
 * FAIL marker) */
static void uct_cma_ep_set_failed(uct_cma_iface_t *iface, uct_cma_ep_t *ep,
                                  ucs_status_t status)
{
    uct_cma_op_t *op;

    if (ep->status != UCS_OK) {
        return;
    }

    ucs_debug("cma ep %p: peer pid %d exited: %s", (void *)ep,
              (int)ep->peer->proc.pid, ucs_status_string(status));
    ep->status     = status;
    ep->last_error = status;
    if (ep->tail != NULL) {
        uct_cma_iface_signal(iface);
        return; /* progress sees the status at the head op */
    }

    op = ucs_mpool_get(&iface->op_mp);
    if (op == NULL) {
        ucs_error("cma ep %p: no memory to report the failure of peer pid "
                  "%d; operations will return %s",
                  (void *)ep, (int)ep->peer->proc.pid,
                  ucs_status_string(status));
        return;
    }
    op->type = UCT_CMA_OP_FAIL;
    op->comp = NULL;
    uct_cma_cursor_init(&op->cursor, NULL, 0, 0, 0);
    uct_cma_ep_push(iface, ep, op);
}

/* The status of a failed system call (other than a dead peer) */
static ucs_status_t uct_cma_ep_xfer_error(uct_cma_iface_t *iface,
                                          uct_cma_ep_t *ep, int is_put,
                                          const uct_cma_cursor_t *cursor,
                                          int err)
{
    const char *call = is_put ? "process_vm_writev" : "process_vm_readv";

    if (err == EFAULT) {
        ep->last_error = UCS_ERR_INVALID_ADDR;
        /* a remote (or local) range that is not mapped as needed */
        ucs_debug("cma ep %p: %s(pid %d, remote 0x%" PRIx64 ") failed: "
                  "bad address",
                  (void *)ep, call, (int)ep->peer->proc.pid,
                  cursor->remote_addr);
        return UCS_ERR_INVALID_ADDR;
    }

    if (err == EPERM) {
        ucs_log_limited(&iface->err_log, UCS_LOG_LEVEL_ERROR,
                        "cma ep %p: %s(pid %d) failed: %s; the peer is not "
                        "dumpable any more or the ptrace policy changed "
                        "(kernel.yama.ptrace_scope)",
                        (void *)ep, call, (int)ep->peer->proc.pid,
                        strerror(err));
    } else {
        ucs_log_limited(&iface->err_log, UCS_LOG_LEVEL_ERROR,
                        "cma ep %p: %s(pid %d, remote 0x%" PRIx64
                        ") failed: %s",
                        (void *)ep, call, (int)ep->peer->proc.pid,
                        cursor->remote_addr, strerror(err));
    }
    ep->last_error = UCS_ERR_IO_ERROR;
    return UCS_ERR_IO_ERROR;
}

unsigned uct_cma_ep_progress_one(uct_cma_iface_t *iface, uct_cma_op_t *op)
{
    uct_cma_ep_t *ep = op->ep;
    int is_put       = (op->type == UCT_CMA_OP_PUT);
    ssize_t ret;

    if (ucs_unlikely(ep->status != UCS_OK)) {
        uct_cma_ep_fail_now(iface, ep);
        return 1;
    }

    if (op->cursor.remaining > 0) {
        ret = uct_cma_ep_xfer(ep, is_put, &op->cursor, iface->seg_size);
        if (ucs_unlikely(ret < 0)) {
            if (ret == -ESRCH) {
                uct_cma_ep_set_failed(iface, ep, UCS_ERR_CONNECTION_RESET);
                uct_cma_ep_fail_now(iface, ep);
                return 1;
            }
            return uct_cma_ep_op_done(iface, ep, op,
                                      uct_cma_ep_xfer_error(iface, ep, is_put,
                                                            &op->cursor,
                                                            (int)-ret));
        }
        iface->queued_bytes -= (size_t)ret;
        ep->queued_bytes -= (size_t)ret;
        if (op->cursor.remaining > 0) {
            uct_cma_active_add(iface, op); /* its next turn */
            return 0;
        }
    }

    return uct_cma_ep_op_done(iface, ep, op, UCS_OK);
}

/* ------------------------------------------------------------------------
 * PUT and GET
 */

static UCS_F_ALWAYS_INLINE ucs_status_t
uct_cma_ep_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov, size_t iovcnt,
                 uint64_t remote_addr, uct_completion_t *comp, int is_put)
{
    uct_cma_ep_t *ep       = uct_cma_ep(tl_ep);
    uct_cma_iface_t *iface = uct_cma_ep_iface(ep);
    uct_cma_cursor_t cursor;
    ucs_status_t status;
    uct_cma_op_t *op;
    size_t length;
    ssize_t ret;

    status = uct_iface_check_iovcnt(&iface->super,
                                    is_put ? "put_zcopy" : "get_zcopy", iovcnt,
                                    iface->max_iov);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    if (ucs_unlikely(ep->status != UCS_OK)) {
        uct_iface_stat_tx_error(&iface->super, ep->status);
        return ep->status;
    }

    length = uct_iov_total_length(iov, iovcnt);
    if (is_put) {
        uct_iface_stat_put(&iface->super, length);
    } else {
        uct_iface_stat_get(&iface->super, length);
    }

    if (ucs_likely((ep->tail == NULL) && (length <= iface->seg_size))) {
        /* one segment: done in the call (a short count continues) */
        uct_cma_cursor_init(&cursor, iov, iovcnt, remote_addr, length);
        while (cursor.remaining > 0) {
            ret = uct_cma_ep_xfer(ep, is_put, &cursor, iface->seg_size);
            if (ucs_unlikely(ret < 0)) {
                if (ret == -ESRCH) {
                    /* reported from progress, not from this call */
                    uct_cma_ep_set_failed(iface, ep, UCS_ERR_CONNECTION_RESET);
                    status = UCS_ERR_CONNECTION_RESET;
                } else {
                    status = uct_cma_ep_xfer_error(iface, ep, is_put, &cursor,
                                                   (int)-ret);
                }
                uct_iface_stat_tx_error(&iface->super, status);
                return status;
            }
        }
        return UCS_OK;
    }

    /* larger, or behind queued ops of the ep: progress moves it */
    op = ucs_mpool_get(&iface->op_mp);
    if (ucs_unlikely(op == NULL)) {
        ucs_error("cma ep %p: no memory to queue a %s of %zu bytes", (void *)ep,
                  is_put ? "PUT" : "GET", length);
        return UCS_ERR_NO_MEMORY;
    }
    op->type = is_put ? UCT_CMA_OP_PUT : UCT_CMA_OP_GET;
    op->comp = comp;
    memcpy(op->iov, iov, iovcnt * sizeof(*iov));
    uct_cma_cursor_init(&op->cursor, op->iov, iovcnt, remote_addr, length);
    uct_cma_ep_push(iface, ep, op);
    return UCS_INPROGRESS;
}

ucs_status_t uct_cma_ep_put_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                  size_t iovcnt, uint64_t remote_addr,
                                  uct_rkey_t rkey, uct_completion_t *comp)
{
    return uct_cma_ep_zcopy(tl_ep, iov, iovcnt, remote_addr, comp, 1);
}

ucs_status_t uct_cma_ep_get_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                  size_t iovcnt, uint64_t remote_addr,
                                  uct_rkey_t rkey, uct_completion_t *comp)
{
    return uct_cma_ep_zcopy(tl_ep, iov, iovcnt, remote_addr, comp, 0);
}

/* ------------------------------------------------------------------------
 * Flush, fence, check, pending
 */

ucs_status_t uct_cma_ep_flush(uct_ep_h tl_ep, unsigned flags,
                              uct_completion_t *comp)
{
    uct_cma_ep_t *ep       = uct_cma_ep(tl_ep);
    uct_cma_iface_t *iface = uct_cma_ep_iface(ep);
    uct_cma_op_t *op;

    if (ep->status != UCS_OK) {
        return ep->status;
    }
    if (flags & UCT_FLUSH_FLAG_CANCEL) {
        uct_cma_ep_cancel_all(ep);
        return UCS_OK;
    }
    if (ep->tail == NULL) {
        return UCS_OK;
    }
    if (comp == NULL) {
        return UCS_INPROGRESS;
    }

    op = ucs_mpool_get(&iface->op_mp);
    if (op == NULL) {
        ucs_error("cma ep %p: no memory for a flush", (void *)ep);
        return UCS_ERR_NO_MEMORY;
    }
    op->type = UCT_CMA_OP_FLUSH;
    op->comp = comp;
    uct_cma_cursor_init(&op->cursor, NULL, 0, 0, 0);
    uct_cma_ep_push(iface, ep, op);
    return UCS_INPROGRESS;
}

ucs_status_t uct_cma_ep_fence(uct_ep_h tl_ep, unsigned flags)
{
    return UCS_OK; /* an endpoint runs its operations in order */
}

ucs_status_t uct_cma_ep_check(uct_ep_h tl_ep, unsigned flags,
                              uct_completion_t *comp)
{
    uct_cma_ep_t *ep = uct_cma_ep(tl_ep);

    if ((ep->status == UCS_OK) && !uct_sm_proc_is_alive(&ep->peer->proc)) {
        uct_cma_ep_set_failed(uct_cma_ep_iface(ep), ep,
                              UCS_ERR_CONNECTION_RESET);
    }
    return UCS_OK;
}

/* Sends never run out of resources (operations queue on the ep), so a
 * request is never queued: the caller retries its send. */
ucs_status_t uct_cma_ep_pending_add(uct_ep_h tl_ep, uct_pending_req_t *req,
                                    unsigned flags)
{
    return UCS_ERR_BUSY;
}

void uct_cma_ep_pending_purge(uct_ep_h tl_ep, uct_pending_purge_callback_t cb,
                              void *arg)
{}

/* ------------------------------------------------------------------------
 * Create and destroy
 */

/* The peer process @a pid that started at @a start, shared with the
 * other endpoints to it; UCS_ERR_UNREACHABLE when it is not running */
static ucs_status_t uct_cma_peer_get(uct_cma_iface_t *iface, uint32_t pid,
                                     uint64_t start, uct_cma_peer_t **peer_p)
{
    /* pids are below 2^22 and start times (clock ticks since boot) below
     * 2^42: the key names one process */
    uint64_t key = (start << 22) | pid;
    uct_cma_peer_t *peer;
    ucs_status_t status;
    void *value;

    if (ucs_hash_get(&iface->peers, key, &value) == UCS_OK) {
        peer = value;
        if (!uct_sm_proc_is_alive(&peer->proc)) {
            return UCS_ERR_UNREACHABLE;
        }
        ++peer->refcount;
        *peer_p = peer;
        return UCS_OK;
    }

    peer = calloc(1, sizeof(*peer));
    if (peer == NULL) {
        ucs_error("cma: failed to allocate a peer");
        return UCS_ERR_NO_MEMORY;
    }

    status = uct_sm_proc_open((pid_t)pid, start, &peer->proc);
    if (status != UCS_OK) {
        free(peer);
        return UCS_ERR_UNREACHABLE;
    }

    peer->key      = key;
    peer->refcount = 1;
    status         = ucs_hash_put(&iface->peers, key, peer);
    if (status != UCS_OK) {
        ucs_error("cma: no memory for the peer table");
        uct_sm_proc_close(&peer->proc);
        free(peer);
        return status;
    }

    *peer_p = peer;
    return UCS_OK;
}

static void uct_cma_peer_put(uct_cma_iface_t *iface, uct_cma_peer_t *peer)
{
    if (--peer->refcount > 0) {
        return;
    }
    ucs_hash_remove(&iface->peers, peer->key, NULL);
    uct_sm_proc_close(&peer->proc);
    free(peer);
}

void uct_cma_iface_peers_cleanup(uct_cma_iface_t *iface)
{
    ucs_hash_iter_t iter = UCS_HASH_ITER_INIT;
    uint64_t key;
    void *value;

    /* peers of endpoints the user did not destroy */
    while (ucs_hash_next(&iface->peers, &iter, &key, &value)) {
        uct_sm_proc_close(&((uct_cma_peer_t *)value)->proc);
        free(value);
    }
    ucs_hash_cleanup(&iface->peers);
}

ucs_status_t uct_cma_ep_create(const uct_ep_params_t *params, uct_ep_h *ep_p)
{
    uct_cma_iface_t *iface = uct_cma_iface(params->iface);
    uct_cma_ep_t *ep;
    ucs_status_t status;
    uint64_t start;
    uint32_t pid;

    if (!(params->field_mask & UCT_EP_PARAM_FIELD_IFACE_ADDR) ||
        (params->iface_addr == NULL)) {
        ucs_error("cma: uct_ep_create needs iface_addr "
                  "(UCT_EP_PARAM_FIELD_IFACE_ADDR): the transport connects "
                  "to interfaces");
        return UCS_ERR_INVALID_PARAM;
    }
    if ((params->field_mask & UCT_EP_PARAM_FIELD_DEV_ADDR) &&
        !uct_sm_dev_addr_is_local(params->dev_addr, UCT_SM_SAME_PID_NS)) {
        ucs_error("cma: the device address is of another host, user or PID "
                  "namespace; cma reaches processes of the same user in the "
                  "same PID namespace only");
        return UCS_ERR_UNREACHABLE;
    }

    memcpy(&pid, params->iface_addr, sizeof(pid));
    memcpy(&start, (const char *)params->iface_addr + sizeof(pid),
           sizeof(start));
    if ((pid == 0) || (pid > INT_MAX)) {
        ucs_error("cma: the interface address names pid %" PRIu32
                  ", which no process has",
                  pid);
        return UCS_ERR_INVALID_ADDR;
    }

    ep = calloc(1, sizeof(*ep));
    if (ep == NULL) {
        ucs_error("cma: failed to allocate an endpoint");
        return UCS_ERR_NO_MEMORY;
    }

    status = uct_cma_peer_get(iface, pid, start, &ep->peer);
    if (status != UCS_OK) {
        free(ep);
        ucs_diag("cma: process %" PRIu32 " that started at %" PRIu64
                 " is not running (it exited, or its pid now names another "
                 "process)",
                 pid, start);
        return status;
    }

    ep->tail         = NULL;
    ep->num_ops      = 0;
    ep->status       = UCS_OK;
    ep->queued_bytes = 0;
    ep->last_error   = UCS_OK;
    uct_base_ep_init(&ep->super, &iface->super);
    *ep_p = &ep->super.super;
    return UCS_OK;
}

void uct_cma_ep_destroy(uct_ep_h tl_ep)
{
    uct_cma_ep_t *ep       = uct_cma_ep(tl_ep);
    uct_cma_iface_t *iface = uct_cma_ep_iface(ep);
    uct_cma_op_t *chain;

    if (iface->failing_ep == ep) {
        iface->failing_ep = NULL; /* from a completion of its failure */
    }

    chain = uct_cma_ep_detach(iface, ep, 1);
    uct_base_ep_cleanup(&ep->super);
    uct_cma_peer_put(iface, ep->peer);
    free(ep);

    /* the endpoint is gone: completions may not reach it */
    uct_cma_chain_complete(iface, chain, UCS_ERR_CANCELED);
}

/* ------------------------------------------------------------------------
 * Object tree
 */

static void uct_cma_ep_vfs_show_peer(void *obj, ucs_string_buffer_t *strb,
                                     void *arg_ptr, uint64_t arg_u64)
{
    const uct_cma_ep_t *ep = obj;

    ucs_string_buffer_appendf(strb, "pid %d start %" PRIu64 "\n",
                              (int)ep->peer->proc.pid, ep->peer->proc.start);
}

static void uct_cma_ep_vfs_show_state(void *obj, ucs_string_buffer_t *strb,
                                      void *arg_ptr, uint64_t arg_u64)
{
    const uct_cma_ep_t *ep = obj;

    if (ep->status == UCS_OK) {
        ucs_string_buffer_appendf(strb, "connected\n");
    } else {
        ucs_string_buffer_appendf(strb, "failed: %s\n",
                                  ucs_status_string(ep->status));
    }
}

/* operations queued and the bytes they have left */
static void uct_cma_ep_vfs_show_tx_queue(void *obj, ucs_string_buffer_t *strb,
                                         void *arg_ptr, uint64_t arg_u64)
{
    const uct_cma_ep_t *ep = obj;

    ucs_string_buffer_appendf(strb, "ops %u\nbytes %zu\n",
                              (unsigned)ep->num_ops, ep->queued_bytes);
}

static void uct_cma_ep_vfs_show_last_error(void *obj, ucs_string_buffer_t *strb,
                                           void *arg_ptr, uint64_t arg_u64)
{
    const uct_cma_ep_t *ep = obj;

    uct_vfs_append_status(strb, ep->last_error);
}

void uct_cma_ep_vfs_init(uct_ep_h tl_ep)
{
    uct_cma_ep_t *ep = uct_cma_ep(tl_ep);

    uct_vfs_add_file(ep, uct_cma_ep_vfs_show_peer, NULL, 0, "peer");
    uct_vfs_add_file(ep, uct_cma_ep_vfs_show_state, NULL, 0, "state");
    uct_vfs_add_file(ep, uct_cma_ep_vfs_show_tx_queue, NULL, 0, "tx_queue");
    uct_vfs_add_value(ep, 0, "pending");
    uct_vfs_add_file(ep, uct_cma_ep_vfs_show_last_error, NULL, 0, "last_error");
}
