/*
 * posix and sysv endpoints: sends into a peer's FIFO, PUT, GET and
 * atomics on memory its md allocated, pending queues, peer failure.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mm.h"

#include <uct/base/uct_vfs.h>
#include <ucs/debug/log.h>
#include <ucs/sys/math.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* ------------------------------------------------------------------------
 * Peers
 */

static uint64_t uct_mm_remote_key(const uct_mm_iface_addr_t *addr)
{
    return ucs_hash_u64(((uint64_t)addr->seg.pid << 32) |
                        (uint32_t)addr->seg.id) ^
           addr->start_time;
}

static int uct_mm_sock_name_valid(const char *name)
{
    size_t i;

    /* the kernel's automatic names are five hex digits */
    for (i = 0; i < UCT_MM_SOCK_NAME_LEN; ++i) {
        if (name[i] == '\0') {
            break;
        }
        if (!(((name[i] >= '0') && (name[i] <= '9')) ||
              ((name[i] >= 'a') && (name[i] <= 'f')))) {
            return 0;
        }
    }
    return (i > 0) && (i < UCT_MM_SOCK_NAME_LEN);
}

ucs_status_t uct_mm_remote_get(uct_mm_iface_t *iface,
                               const uct_mm_iface_addr_t *addr,
                               uct_mm_remote_t **remote_p)
{
    const char *name = iface->mapper->name;
    uint64_t key     = uct_mm_remote_key(addr);
    uct_mm_fifo_layout_t layout;
    uct_mm_remote_t *remote;
    ucs_status_t status;
    void *value;
    size_t len;

    if (ucs_hash_get(&iface->remotes, key, &value) == UCS_OK) {
        remote = value;
        if ((remote->seg.ref.pid != addr->seg.pid) ||
            (remote->seg.ref.id != addr->seg.id) ||
            (remote->proc.start != addr->start_time)) {
            ucs_error("%s: address of pid %u collides with a known peer", name,
                      addr->seg.pid);
            return UCS_ERR_UNREACHABLE;
        }
        if (remote->status != UCS_OK) {
            ucs_error("%s: the process of the peer interface (pid %u) has "
                      "exited",
                      name, addr->seg.pid);
            return UCS_ERR_UNREACHABLE;
        }
        ++remote->refcount;
        *remote_p = remote;
        return UCS_OK;
    }

    if ((uct_mm_fifo_layout(&addr->fifo, &layout) != UCS_OK) ||
        (layout.length != addr->seg.length) ||
        !uct_mm_sock_name_valid(addr->sock_name) || (addr->seg.pid == 0) ||
        (addr->seg.pid > INT32_MAX)) {
        ucs_error("%s: malformed interface address (pid %u, FIFO of %u "
                  "elements of %u bytes, %u descriptors of %u bytes, segment "
                  "of %" PRIu64 " bytes)",
                  name, addr->seg.pid, addr->fifo.fifo_size,
                  addr->fifo.elem_size, addr->fifo.num_descs,
                  addr->fifo.seg_size, addr->seg.length);
        return UCS_ERR_INVALID_ADDR;
    }

    remote = calloc(1, sizeof(*remote));
    if (remote == NULL) {
        ucs_error("%s: no memory for a peer", name);
        return UCS_ERR_NO_MEMORY;
    }

    status =
        uct_sm_proc_open((pid_t)addr->seg.pid, addr->start_time, &remote->proc);
    if (status != UCS_OK) {
        ucs_error("%s: the process of the peer interface (pid %u) is not "
                  "running: it exited, or the address is stale",
                  name, addr->seg.pid);
        goto err_free;
    }

    status = iface->mapper->attach(&addr->seg, &remote->seg);
    if (status != UCS_OK) {
        ucs_error("%s: cannot map the FIFO of pid %u: %s; the peer must run "
                  "as the same user on this host and in the same namespaces",
                  name, addr->seg.pid, ucs_status_string(status));
        goto err_proc;
    }

    uct_mm_fifo_view_init(&remote->fifo, &addr->fifo, &layout,
                          remote->seg.address);
    remote->fifo.cached_tail = 0;

    memset(&remote->sock, 0, sizeof(remote->sock));
    remote->sock.sun_family = AF_UNIX;
    len                     = strnlen(addr->sock_name, UCT_MM_SOCK_NAME_LEN);
    memcpy(remote->sock.sun_path + 1, addr->sock_name, len);
    remote->sock_len =
        (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len);
    remote->refcount = 1;
    remote->status   = UCS_OK;
    remote->key      = key;

    status = ucs_hash_put(&iface->remotes, key, remote);
    if (status != UCS_OK) {
        ucs_error("%s: no memory for the peer table", name);
        goto err_detach;
    }

    ++iface->num_remotes;
    *remote_p = remote;
    return UCS_OK;

err_detach:
    iface->mapper->detach(&remote->seg);
err_proc:
    uct_sm_proc_close(&remote->proc);
err_free:
    free(remote);
    return status;
}

static void uct_mm_remote_free(uct_mm_iface_t *iface, uct_mm_remote_t *remote)
{
    iface->mapper->detach(&remote->seg);
    uct_sm_proc_close(&remote->proc);
    free(remote);
}

void uct_mm_remote_put(uct_mm_iface_t *iface, uct_mm_remote_t *remote)
{
    if (--remote->refcount > 0) {
        return;
    }

    /* a failure not reported yet goes with it: the next report finds
     * nothing of it */
    ucs_hash_remove(&iface->remotes, remote->key, NULL);
    --iface->num_remotes;
    uct_mm_remote_free(iface, remote);
}

void uct_mm_iface_remotes_cleanup(uct_mm_iface_t *iface)
{
    ucs_hash_iter_t iter = UCS_HASH_ITER_INIT;
    uint64_t key;
    void *value;

    if (iface->num_remotes != 0) {
        ucs_warn("%s iface %p: closed with %u peers still in use by "
                 "endpoints; destroy the endpoints first",
                 iface->mapper->name, (void *)iface, iface->num_remotes);
    }
    while (ucs_hash_next(&iface->remotes, &iter, &key, &value)) {
        uct_mm_remote_free(iface, value);
    }
    ucs_hash_cleanup(&iface->remotes);
}

void uct_mm_remote_fail(uct_mm_iface_t *iface, uct_mm_remote_t *remote,
                        ucs_status_t status)
{
    if (remote->status != UCS_OK) {
        return;
    }
    ucs_debug("%s iface %p: peer pid %d is gone", iface->mapper->name,
              (void *)iface, remote->proc.pid);
    remote->status = status;
    ++iface->failures;
}

void uct_mm_iface_check_peers(uct_mm_iface_t *iface)
{
    ucs_hash_iter_t iter = UCS_HASH_ITER_INIT;
    uct_mm_remote_t *remote;
    uint64_t key;
    void *value;

    while (ucs_hash_next(&iface->remotes, &iter, &key, &value)) {
        remote = value;
        if ((remote->status == UCS_OK) &&
            !uct_sm_proc_is_alive(&remote->proc)) {
            uct_mm_remote_fail(iface, remote, UCS_ERR_CONNECTION_RESET);
        }
    }
}

/* The next endpoint of a dead peer not reported yet, or NULL */
static uct_mm_ep_t *uct_mm_iface_next_failed_ep(uct_mm_iface_t *iface)
{
    ucs_hash_iter_t iter = UCS_HASH_ITER_INIT;
    uct_mm_remote_t *remote;
    uct_mm_ep_t *ep;
    uint64_t key;
    void *value;

    while (ucs_hash_next(&iface->remotes, &iter, &key, &value)) {
        remote = value;
        if (remote->status == UCS_OK) {
            continue;
        }
        for (ep = remote->eps; ep != NULL; ep = ep->next) {
            if (!ep->fail_reported) {
                return ep;
            }
        }
    }
    return NULL;
}

unsigned uct_mm_iface_report_failures(uct_mm_iface_t *iface)
{
    unsigned count = 0;
    uct_mm_ep_t *ep;

    /* the handler may destroy endpoints: look again after each one */
    while ((ep = uct_mm_iface_next_failed_ep(iface)) != NULL) {
        ep->fail_reported = 1;
        ucs_arbiter_group_desched(&iface->arbiter, &ep->pending);
        uct_iface_stat_peer_failure(&iface->super);
        (void)uct_iface_handle_ep_err(&iface->super.super, &ep->super.super,
                                      ep->remote->status);
        ++count;
    }
    iface->failures = 0;
    return count;
}

/* ------------------------------------------------------------------------
 * Endpoint life
 */

ucs_status_t uct_mm_ep_create(const uct_ep_params_t *params, uct_ep_h *ep_p)
{
    uct_mm_iface_t *iface = uct_mm_iface(params->iface);
    unsigned need         = UCT_SM_SAME_IPC_NS;
    uct_mm_iface_addr_t addr;
    uct_mm_remote_t *remote;
    ucs_status_t status;
    uct_mm_ep_t *ep;

    if (!(params->field_mask & UCT_EP_PARAM_FIELD_IFACE_ADDR) ||
        (params->iface_addr == NULL)) {
        ucs_error("%s: uct_ep_create needs iface_addr "
                  "(UCT_EP_PARAM_FIELD_IFACE_ADDR): the transport connects "
                  "to interfaces",
                  iface->mapper->name);
        return UCS_ERR_INVALID_PARAM;
    }
    if (iface->mapper == &uct_mm_posix_mapper) {
        need |= UCT_SM_SAME_PID_NS;
    }
    if ((params->field_mask & UCT_EP_PARAM_FIELD_DEV_ADDR) &&
        !uct_sm_dev_addr_is_local(params->dev_addr, need)) {
        ucs_error("%s: the peer is on another host, runs as another user or "
                  "in other namespaces; %s reaches processes of this user "
                  "on this host only",
                  iface->mapper->name, iface->mapper->name);
        return UCS_ERR_UNREACHABLE;
    }

    memcpy(&addr, params->iface_addr, sizeof(addr));

    ep = calloc(1, sizeof(*ep));
    if (ep == NULL) {
        ucs_error("%s: no memory for an endpoint", iface->mapper->name);
        return UCS_ERR_NO_MEMORY;
    }

    status = uct_mm_remote_get(iface, &addr, &remote);
    if (status != UCS_OK) {
        free(ep);
        return status;
    }

    ep->remote = remote;
    ucs_arbiter_group_init(&ep->pending);
    ep->next    = remote->eps;
    remote->eps = ep;
    uct_base_ep_init(&ep->super, &iface->super);
    *ep_p = &ep->super.super;
    return UCS_OK;
}

void uct_mm_ep_destroy(uct_ep_h tl_ep)
{
    uct_mm_ep_t *ep       = uct_mm_ep(tl_ep);
    uct_mm_iface_t *iface = uct_mm_ep_iface(ep);
    uct_mm_ep_t **p;

    uct_base_ep_cleanup(&ep->super);
    uct_pending_queue_purge(&iface->arbiter, &ep->pending, NULL, NULL);
    ucs_arbiter_group_cleanup(&ep->pending);
    for (p = &ep->remote->eps; *p != ep; p = &(*p)->next) {
    }
    *p = ep->next;
    uct_mm_remote_put(iface, ep->remote);
    free(ep);
}

/* ------------------------------------------------------------------------
 * Active messages
 */

static void uct_mm_ep_wake(uct_mm_iface_t *iface, uct_mm_remote_t *remote)
{
    char byte = 0;

    if (iface->tx_sock < 0) {
        iface->tx_sock =
            socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (iface->tx_sock < 0) {
            ucs_log_limited(&iface->bad_log, UCS_LOG_LEVEL_WARN,
                            "%s: cannot create a socket to wake peers: %m; "
                            "a sleeping peer will not wake",
                            iface->mapper->name);
            return;
        }
    }

    /* a full socket buffer means it is awake already */
    (void)sendto(iface->tx_sock, &byte, 1, MSG_DONTWAIT,
                 (struct sockaddr *)&remote->sock, remote->sock_len);
    ++iface->tx_signals;
}

static UCS_F_ALWAYS_INLINE ucs_status_t uct_mm_ep_claim(uct_mm_iface_t *iface,
                                                        uct_mm_remote_t *remote,
                                                        uint64_t *index_p,
                                                        int *wake_p)
{
    if (ucs_unlikely(remote->status != UCS_OK)) {
        return remote->status;
    }
    if (ucs_unlikely(!uct_mm_fifo_claim(&remote->fifo, index_p, wake_p))) {
        uct_iface_stat_tx_error(&iface->super, UCS_ERR_NO_RESOURCE);
        return UCS_ERR_NO_RESOURCE;
    }
    return UCS_OK;
}

static UCS_F_ALWAYS_INLINE void
uct_mm_ep_sent(uct_mm_iface_t *iface, uct_mm_remote_t *remote,
               uct_mm_fifo_elem_t *elem, uint64_t index, uint8_t id,
               uint32_t length, uint8_t flags, int wake)
{
    elem->am_id  = id;
    elem->length = length;
    uct_mm_fifo_publish(&remote->fifo, elem, index, flags);
    if (ucs_unlikely(wake)) {
        uct_mm_ep_wake(iface, remote);
    }
    uct_iface_stat_am_tx(&iface->super, id, length);
}

ucs_status_t uct_mm_ep_am_short(uct_ep_h tl_ep, uint8_t id, uint64_t header,
                                const void *payload, unsigned length)
{
    uct_mm_ep_t *ep         = uct_mm_ep(tl_ep);
    uct_mm_iface_t *iface   = uct_mm_ep_iface(ep);
    uct_mm_remote_t *remote = ep->remote;
    uct_mm_fifo_elem_t *elem;
    ucs_status_t status;
    uint64_t index;
    char *data;
    int wake;

    status = uct_iface_check_am_id(&iface->super, id);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    status = uct_iface_check_length(
        &iface->super, "am_short payload", length,
        remote->fifo.elem_size - sizeof(uct_mm_fifo_elem_t) - sizeof(header));
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    status = uct_mm_ep_claim(iface, remote, &index, &wake);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    elem = uct_mm_fifo_elem(&remote->fifo, index);
    data = (char *)(elem + 1);
    memcpy(data, &header, sizeof(header));
    if (length != 0) { /* payload may be NULL then */
        memcpy(data + sizeof(header), payload, length);
    }
    uct_mm_ep_sent(iface, remote, elem, index, id, sizeof(header) + length,
                   UCT_MM_FIFO_ELEM_INLINE, wake);
    return UCS_OK;
}

ucs_status_t uct_mm_ep_am_short_iov(uct_ep_h tl_ep, uint8_t id,
                                    const uct_iov_t *iov, size_t iovcnt)
{
    uct_mm_ep_t *ep         = uct_mm_ep(tl_ep);
    uct_mm_iface_t *iface   = uct_mm_ep_iface(ep);
    uct_mm_remote_t *remote = ep->remote;
    size_t max = remote->fifo.elem_size - sizeof(uct_mm_fifo_elem_t) -
                 sizeof(uint64_t); /* max_short, as am_short */
    uct_mm_fifo_elem_t *elem;
    ucs_status_t status;
    uint64_t index;
    size_t length;
    int wake;

    status = uct_iface_check_am_id(&iface->super, id);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    length = uct_iov_total_length(iov, iovcnt);
    status = uct_iface_check_length(&iface->super, "am_short_iov payload",
                                    length, max);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    status = uct_mm_ep_claim(iface, remote, &index, &wake);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    elem = uct_mm_fifo_elem(&remote->fifo, index);
    uct_iov_to_buffer(iov, iovcnt, elem + 1);
    uct_mm_ep_sent(iface, remote, elem, index, id, (uint32_t)length,
                   UCT_MM_FIFO_ELEM_INLINE, wake);
    return UCS_OK;
}

ssize_t uct_mm_ep_am_bcopy(uct_ep_h tl_ep, uint8_t id,
                           uct_pack_callback_t pack_cb, void *arg,
                           unsigned flags)
{
    uct_mm_ep_t *ep         = uct_mm_ep(tl_ep);
    uct_mm_iface_t *iface   = uct_mm_ep_iface(ep);
    uct_mm_remote_t *remote = ep->remote;
    uct_mm_fifo_elem_t *elem;
    ucs_status_t status;
    uint64_t index;
    uint32_t desc;
    size_t length;
    int wake;

    status = uct_iface_check_am_id(&iface->super, id);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    status = uct_mm_ep_claim(iface, remote, &index, &wake);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    elem = uct_mm_fifo_elem(&remote->fifo, index);
    desc = *(volatile uint32_t *)&elem->desc;
    if (ucs_unlikely(desc >= remote->fifo.num_descs)) {
        /* the element is ours: give it back empty */
        uct_mm_fifo_publish(&remote->fifo, elem, index, 0);
        ucs_log_limited(&iface->bad_log, UCS_LOG_LEVEL_ERROR,
                        "%s: the FIFO of pid %d names descriptor %u of %u: "
                        "its segment was overwritten",
                        iface->mapper->name, remote->proc.pid, desc,
                        remote->fifo.num_descs);
        return UCS_ERR_IO_ERROR;
    }

    length = pack_cb(uct_mm_fifo_desc_data(&remote->fifo, desc), arg);
    if (ucs_unlikely(length > remote->fifo.seg_size)) {
        uct_mm_fifo_publish(&remote->fifo, elem, index, 0);
        return uct_iface_invalid_length(&iface->super, "am_bcopy packed",
                                        length, remote->fifo.seg_size);
    }
    uct_mm_ep_sent(iface, remote, elem, index, id, (uint32_t)length,
                   UCT_MM_FIFO_ELEM_DESC, wake);
    return (ssize_t)length;
}

/* ------------------------------------------------------------------------
 * RMA and atomics on a segment the peer's md allocated
 */

/* The local address of [remote_addr, remote_addr + length) of @a rkey */
static UCS_F_ALWAYS_INLINE ucs_status_t uct_mm_rkey_range(uct_mm_iface_t *iface,
                                                          uct_rkey_t rkey,
                                                          uint64_t remote_addr,
                                                          size_t length,
                                                          void **addr_p)
{
    const uct_mm_rkey_t *key = (const uct_mm_rkey_t *)rkey;
    uint64_t offset;

    if (ucs_unlikely((rkey == UCT_INVALID_RKEY) || (rkey == 0))) {
        ucs_error("%s: invalid remote key", iface->mapper->name);
        return UCS_ERR_INVALID_PARAM;
    }

    offset = remote_addr - key->remote_address;
    if (ucs_unlikely((remote_addr < key->remote_address) ||
                     (offset > key->length) ||
                     (length > key->length - offset))) {
        ucs_error("%s: remote range 0x%" PRIx64 "+%zu is outside the "
                  "segment of its key (0x%" PRIx64 "+%" PRIu64 ")",
                  iface->mapper->name, remote_addr, length, key->remote_address,
                  key->length);
        return UCS_ERR_INVALID_ADDR;
    }

    *addr_p = key->local_address + offset;
    return UCS_OK;
}

ucs_status_t uct_mm_ep_put_short(uct_ep_h tl_ep, const void *buffer,
                                 unsigned length, uint64_t remote_addr,
                                 uct_rkey_t rkey)
{
    uct_mm_iface_t *iface = uct_mm_ep_iface(uct_mm_ep(tl_ep));
    ucs_status_t status;
    void *dst;

    status = uct_mm_rkey_range(iface, rkey, remote_addr, length, &dst);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    memcpy(dst, buffer, length);
    uct_iface_stat_put(&iface->super, length);
    return UCS_OK;
}

ssize_t uct_mm_ep_put_bcopy(uct_ep_h tl_ep, uct_pack_callback_t pack_cb,
                            void *arg, uint64_t remote_addr, uct_rkey_t rkey)
{
    uct_mm_iface_t *iface    = uct_mm_ep_iface(uct_mm_ep(tl_ep));
    const uct_mm_rkey_t *key = (const uct_mm_rkey_t *)rkey;
    size_t max               = iface->seg_size; /* put max_bcopy */
    ucs_status_t status;
    size_t length, room;
    void *dst;

    status = uct_mm_rkey_range(iface, rkey, remote_addr, 0, &dst);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    room = key->length - (remote_addr - key->remote_address);
    if (ucs_likely(room >= max)) {
        /* the packer writes at most max_bcopy bytes: straight there */
        length = pack_cb(dst, arg);
    } else {
        /* near the end of the segment: through a buffer of ours, so a
         * packer cannot write past the mapping */
        if (iface->put_bounce == NULL) {
            iface->put_bounce = malloc(max);
            if (iface->put_bounce == NULL) {
                ucs_error("%s: no memory for a put_bcopy buffer of %zu bytes",
                          iface->mapper->name, max);
                return UCS_ERR_NO_MEMORY;
            }
        }
        length = pack_cb(iface->put_bounce, arg);
        if (length <= ucs_min(room, max)) {
            memcpy(dst, iface->put_bounce, length);
        }
    }

    if (ucs_unlikely(length > max)) {
        return uct_iface_invalid_length(&iface->super, "put_bcopy packed",
                                        length, max);
    }
    if (ucs_unlikely(length > room)) {
        ucs_error("%s: put_bcopy of %zu bytes at 0x%" PRIx64 " passes the "
                  "end of the remote segment (%zu bytes left): nothing "
                  "written",
                  iface->mapper->name, length, remote_addr, room);
        return UCS_ERR_INVALID_ADDR;
    }
    uct_iface_stat_put(&iface->super, length);
    return (ssize_t)length;
}

ucs_status_t uct_mm_ep_get_short(uct_ep_h tl_ep, void *buffer, unsigned length,
                                 uint64_t remote_addr, uct_rkey_t rkey)
{
    uct_mm_iface_t *iface = uct_mm_ep_iface(uct_mm_ep(tl_ep));
    ucs_status_t status;
    void *src;

    status = uct_mm_rkey_range(iface, rkey, remote_addr, length, &src);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    memcpy(buffer, src, length);
    uct_iface_stat_get(&iface->super, length);
    return UCS_OK;
}

ucs_status_t uct_mm_ep_get_bcopy(uct_ep_h tl_ep,
                                 uct_unpack_callback_t unpack_cb, void *arg,
                                 size_t length, uint64_t remote_addr,
                                 uct_rkey_t rkey, uct_completion_t *comp)
{
    uct_mm_iface_t *iface = uct_mm_ep_iface(uct_mm_ep(tl_ep));
    ucs_status_t status;
    void *src;

    status = uct_mm_rkey_range(iface, rkey, remote_addr, length, &src);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    unpack_cb(arg, src, length);
    uct_iface_stat_get(&iface->super, length);
    return UCS_OK;
}

static UCS_F_ALWAYS_INLINE ucs_status_t uct_mm_atomic_addr(uct_ep_h tl_ep,
                                                           uint64_t remote_addr,
                                                           uct_rkey_t rkey,
                                                           size_t size,
                                                           void **addr_p)
{
    uct_mm_iface_t *iface = uct_mm_ep_iface(uct_mm_ep(tl_ep));

    if (ucs_unlikely(remote_addr % size)) {
        ucs_error("%s: atomic address 0x%" PRIx64 " is not aligned to %zu",
                  iface->mapper->name, remote_addr, size);
        return UCS_ERR_INVALID_PARAM;
    }
    return uct_mm_rkey_range(iface, rkey, remote_addr, size, addr_p);
}

/*
 * The atomic ops of both widths: size is 4 or 8, a 32-bit operand is the low
 * half of a uint64_t, and a fetched 32-bit value comes back zero-extended.
 */
static ucs_status_t uct_mm_atomic_apply(void *ptr, size_t size,
                                        uct_atomic_op_t opcode, uint64_t value,
                                        uint64_t *old_p)
{
    int wide      = (size == sizeof(uint64_t));
    uint64_t *p64 = ptr;
    uint32_t *p32 = ptr;
    uint32_t v32  = (uint32_t)value;

    switch (opcode) {
    case UCT_ATOMIC_OP_ADD:
        *old_p = wide ? __atomic_fetch_add(p64, value, __ATOMIC_SEQ_CST)
                      : __atomic_fetch_add(p32, v32, __ATOMIC_SEQ_CST);
        return UCS_OK;
    case UCT_ATOMIC_OP_AND:
        *old_p = wide ? __atomic_fetch_and(p64, value, __ATOMIC_SEQ_CST)
                      : __atomic_fetch_and(p32, v32, __ATOMIC_SEQ_CST);
        return UCS_OK;
    case UCT_ATOMIC_OP_OR:
        *old_p = wide ? __atomic_fetch_or(p64, value, __ATOMIC_SEQ_CST)
                      : __atomic_fetch_or(p32, v32, __ATOMIC_SEQ_CST);
        return UCS_OK;
    case UCT_ATOMIC_OP_XOR:
        *old_p = wide ? __atomic_fetch_xor(p64, value, __ATOMIC_SEQ_CST)
                      : __atomic_fetch_xor(p32, v32, __ATOMIC_SEQ_CST);
        return UCS_OK;
    case UCT_ATOMIC_OP_SWAP:
        *old_p = wide ? __atomic_exchange_n(p64, value, __ATOMIC_SEQ_CST)
                      : __atomic_exchange_n(p32, v32, __ATOMIC_SEQ_CST);
        return UCS_OK;
    default:
        return UCS_ERR_UNSUPPORTED;
    }
}

/* *result is a uint32_t or a uint64_t, as size says */
static void uct_mm_atomic_result(void *result, size_t size, uint64_t value)
{
    if (size == sizeof(uint64_t)) {
        *(uint64_t *)result = value;
    } else {
        *(uint32_t *)result = (uint32_t)value;
    }
}

static ucs_status_t uct_mm_atomic(uct_ep_h ep, uct_atomic_op_t opcode,
                                  size_t size, uint64_t value, void *result,
                                  uint64_t remote_addr, uct_rkey_t rkey,
                                  int fetch)
{
    ucs_status_t status;
    uint64_t old = 0;
    void *ptr;

    if (!fetch && (opcode == UCT_ATOMIC_OP_SWAP)) {
        return UCS_ERR_UNSUPPORTED;
    }
    status = uct_mm_atomic_addr(ep, remote_addr, rkey, size, &ptr);
    if (status != UCS_OK) {
        return status;
    }
    status = uct_mm_atomic_apply(ptr, size, opcode, value, &old);
    if ((status == UCS_OK) && fetch) {
        uct_mm_atomic_result(result, size, old);
    }
    return status;
}

static ucs_status_t uct_mm_atomic_cswap(uct_ep_h ep, size_t size,
                                        uint64_t compare, uint64_t swap,
                                        uint64_t remote_addr, uct_rkey_t rkey,
                                        void *result)
{
    uint32_t compare32 = (uint32_t)compare;
    ucs_status_t status;
    void *ptr;

    status = uct_mm_atomic_addr(ep, remote_addr, rkey, size, &ptr);
    if (status != UCS_OK) {
        return status;
    }
    /* on failure compare receives the value found; on success it was it */
    if (size == sizeof(uint64_t)) {
        __atomic_compare_exchange_n((uint64_t *)ptr, &compare, swap, 0,
                                    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    } else {
        __atomic_compare_exchange_n((uint32_t *)ptr, &compare32, (uint32_t)swap,
                                    0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
        compare = compare32;
    }
    uct_mm_atomic_result(result, size, compare);
    return UCS_OK;
}

ucs_status_t uct_mm_ep_atomic64_post(uct_ep_h ep, uct_atomic_op_t opcode,
                                     uint64_t value, uint64_t remote_addr,
                                     uct_rkey_t rkey)
{
    return uct_mm_atomic(ep, opcode, sizeof(value), value, NULL, remote_addr,
                         rkey, 0);
}

ucs_status_t uct_mm_ep_atomic32_post(uct_ep_h ep, uct_atomic_op_t opcode,
                                     uint32_t value, uint64_t remote_addr,
                                     uct_rkey_t rkey)
{
    return uct_mm_atomic(ep, opcode, sizeof(value), value, NULL, remote_addr,
                         rkey, 0);
}

ucs_status_t uct_mm_ep_atomic64_fetch(uct_ep_h ep, uct_atomic_op_t opcode,
                                      uint64_t value, uint64_t *result,
                                      uint64_t remote_addr, uct_rkey_t rkey,
                                      uct_completion_t *comp)
{
    return uct_mm_atomic(ep, opcode, sizeof(value), value, result, remote_addr,
                         rkey, 1);
}

ucs_status_t uct_mm_ep_atomic32_fetch(uct_ep_h ep, uct_atomic_op_t opcode,
                                      uint32_t value, uint32_t *result,
                                      uint64_t remote_addr, uct_rkey_t rkey,
                                      uct_completion_t *comp)
{
    return uct_mm_atomic(ep, opcode, sizeof(value), value, result, remote_addr,
                         rkey, 1);
}

ucs_status_t uct_mm_ep_atomic_cswap64(uct_ep_h ep, uint64_t compare,
                                      uint64_t swap, uint64_t remote_addr,
                                      uct_rkey_t rkey, uint64_t *result,
                                      uct_completion_t *comp)
{
    return uct_mm_atomic_cswap(ep, sizeof(compare), compare, swap, remote_addr,
                               rkey, result);
}

ucs_status_t uct_mm_ep_atomic_cswap32(uct_ep_h ep, uint32_t compare,
                                      uint32_t swap, uint64_t remote_addr,
                                      uct_rkey_t rkey, uint32_t *result,
                                      uct_completion_t *comp)
{
    return uct_mm_atomic_cswap(ep, sizeof(compare), compare, swap, remote_addr,
                               rkey, result);
}

/* ------------------------------------------------------------------------
 * Pending, flush, check
 */

ucs_status_t uct_mm_ep_pending_add(uct_ep_h tl_ep, uct_pending_req_t *req,
                                   unsigned flags)
{
    uct_mm_ep_t *ep       = uct_mm_ep(tl_ep);
    uct_mm_iface_t *iface = uct_mm_ep_iface(ep);

    if (ep->remote->status != UCS_OK) {
        return ep->remote->status;
    }
    if (ucs_arbiter_group_is_empty(&ep->pending) &&
        uct_mm_fifo_has_room(&ep->remote->fifo)) {
        return UCS_ERR_BUSY;
    }
    uct_pending_req_push(&iface->arbiter, &ep->pending, req);
    ++ep->pending_count;
    return UCS_OK;
}

ucs_arbiter_cb_result_t uct_mm_ep_dispatch_cb(ucs_arbiter_t *arbiter,
                                              ucs_arbiter_group_t *group,
                                              ucs_arbiter_elem_t *elem,
                                              void *arg)
{
    uct_mm_ep_t *ep        = ucs_container_of(group, uct_mm_ep_t, pending);
    uct_pending_req_t *req = uct_pending_req_from_arb_elem(elem);
    ucs_status_t status;

    status = req->func(req);
    if ((status == UCS_INPROGRESS) || (status == UCS_ERR_NO_RESOURCE)) {
        return UCS_ARBITER_CB_RESULT_NEXT_GROUP;
    }
    if (status != UCS_OK) {
        ucs_error("pending request %p returned %s; a pending callback must "
                  "return UCS_OK, UCS_INPROGRESS or UCS_ERR_NO_RESOURCE",
                  (void *)req, ucs_status_string(status));
    }
    --ep->pending_count;
    return UCS_ARBITER_CB_RESULT_REMOVE_ELEM;
}

void uct_mm_ep_pending_purge(uct_ep_h tl_ep, uct_pending_purge_callback_t cb,
                             void *arg)
{
    uct_mm_ep_t *ep = uct_mm_ep(tl_ep);

    uct_pending_queue_purge(&uct_mm_ep_iface(ep)->arbiter, &ep->pending, cb,
                            arg);
    ep->pending_count = 0;
}

ucs_status_t uct_mm_ep_flush(uct_ep_h tl_ep, unsigned flags,
                             uct_completion_t *comp)
{
    uct_mm_ep_t *ep = uct_mm_ep(tl_ep);

    if (ep->remote->status != UCS_OK) {
        return ep->remote->status;
    }
    if (!ucs_arbiter_group_is_empty(&ep->pending)) {
        return UCS_ERR_NO_RESOURCE;
    }
    /* sends complete when they are in the peer's memory */
    __atomic_thread_fence(__ATOMIC_RELEASE);
    return UCS_OK;
}

ucs_status_t uct_mm_ep_check(uct_ep_h tl_ep, unsigned flags,
                             uct_completion_t *comp)
{
    uct_mm_ep_t *ep       = uct_mm_ep(tl_ep);
    uct_mm_iface_t *iface = uct_mm_ep_iface(ep);

    if ((ep->remote->status == UCS_OK) &&
        !uct_sm_proc_is_alive(&ep->remote->proc)) {
        uct_mm_remote_fail(iface, ep->remote, UCS_ERR_CONNECTION_RESET);
    }
    return UCS_OK;
}

/* ------------------------------------------------------------------------
 * Object tree
 */

static void uct_mm_ep_vfs_show_peer(void *obj, ucs_string_buffer_t *strb,
                                    void *arg_ptr, uint64_t arg_u64)
{
    const uct_mm_ep_t *ep = obj;

    ucs_string_buffer_appendf(strb, "pid %d segment %" PRIu64 " %s\n",
                              ep->remote->proc.pid, ep->remote->seg.ref.id,
                              ucs_status_string(ep->remote->status));
}

static void uct_mm_ep_vfs_show_state(void *obj, ucs_string_buffer_t *strb,
                                     void *arg_ptr, uint64_t arg_u64)
{
    const uct_mm_ep_t *ep = obj;

    if (ep->remote->status == UCS_OK) {
        ucs_string_buffer_appendf(strb, "connected\n");
    } else {
        ucs_string_buffer_appendf(strb, "failed (%s)\n",
                                  ucs_status_string(ep->remote->status));
    }
}

static void uct_mm_ep_vfs_show_last_error(void *obj, ucs_string_buffer_t *strb,
                                          void *arg_ptr, uint64_t arg_u64)
{
    const uct_mm_ep_t *ep = obj;

    uct_vfs_append_status(strb, ep->remote->status);
}

void uct_mm_ep_vfs_init(uct_ep_h tl_ep)
{
    uct_mm_ep_t *ep = uct_mm_ep(tl_ep);

    uct_vfs_add_file(ep, uct_mm_ep_vfs_show_peer, NULL, 0, "peer");
    uct_vfs_add_file(ep, uct_mm_ep_vfs_show_state, NULL, 0, "state");
    /* a send is in the peer's memory when it returns: nothing queues */
    uct_vfs_add_string(ep, "bytes 0\nzcopy_sends 0", "tx_queue");
    uct_vfs_add_uint(ep, &ep->pending_count, sizeof(ep->pending_count),
                     "pending");
    uct_vfs_add_file(ep, uct_mm_ep_vfs_show_last_error, NULL, 0, "last_error");
}
