/*
 * posix and sysv interfaces: the receive FIFO, its descriptors, progress,
 * events and addresses.
 *
 * Descriptors handed to handlers in place: the wire header of a long
 * message is in the FIFO element, so a descriptor holds only payload, and
 * what the user may keep (its rx_headroom and the pointer that
 * uct_iface_release_desc() follows) sits before the payload. That pointer
 * must not be in memory a peer can write, so the receiver maps each
 * descriptor of its segment right after private pages of its own:
 *
 *   desc_va: [private pages][shared descriptor 0][private][descriptor 1]...
 *
 * The pointer and the headroom are in the private pages; the payload
 * starts in the shared part. When that layout cannot hold (a headroom
 * smaller than the alignment shift, or an alignment above a page) or every
 * spare descriptor is held by handlers, the payload is copied into a
 * private descriptor instead.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* O_TMPFILE, mremap() */
#endif

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mm.h"

#include <uct/base/uct_vfs.h>
#include <ucs/debug/log.h>
#include <ucs/sys/math.h>
#include <ucs/sys/sys.h>
#include <ucs/time/time.h>

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef MREMAP_FIXED
#define MREMAP_FIXED 2
#endif

/* Liveness of peers with pending sends is checked this often */
#define UCT_MM_PEER_CHECK_MSEC 100.0

/* An element claimed and not written for this long is skipped */
#define UCT_MM_STALL_MSEC 1000.0

/* Idle polls between two looks at the clock for a stalled element */
#define UCT_MM_STALL_POLLS 256

static ucs_config_field_t uct_mm_iface_common_config_table[] = {
    /* memory from uct_iface_mem_alloc() is a segment peers can map */
    {"", "ALLOC=md,mmap,heap", NULL, ucs_offsetof(uct_mm_iface_config_t, super),
     UCS_CONFIG_TYPE_TABLE(uct_iface_config_table)},

    {"FIFO_SIZE", "64",
     "Elements of the receive FIFO, a power of 2 from 2 to 65536: how many "
     "messages can wait for the receiver.",
     ucs_offsetof(uct_mm_iface_config_t, fifo_size), UCS_CONFIG_TYPE_UINT},

    {"FIFO_ELEM_SIZE", "128",
     "Bytes of a FIFO element, a multiple of 64 from 64: its 16-byte header "
     "and the payload of a short message (so max_short is this minus 24).",
     ucs_offsetof(uct_mm_iface_config_t, fifo_elem_size), UCS_CONFIG_TYPE_UINT},

    {"SEG_SIZE", "8256",
     "Largest payload of a bcopy message (one receive descriptor).",
     ucs_offsetof(uct_mm_iface_config_t, seg_size), UCS_CONFIG_TYPE_MEMUNITS},

    {"FIFO_RELEASE_FACTOR", "0.5",
     "The receiver gives consumed elements back to senders every "
     "FIFO_SIZE * this many, above 0 and at most 1.",
     ucs_offsetof(uct_mm_iface_config_t, release_factor),
     UCS_CONFIG_TYPE_DOUBLE},

    {"RX_MAX_BUFS", "-1",
     "Receive descriptors of the interface, at least FIFO_SIZE; those beyond "
     "it replace descriptors that handlers keep. -1: twice FIFO_SIZE.",
     ucs_offsetof(uct_mm_iface_config_t, rx_max_bufs), UCS_CONFIG_TYPE_INT},

    {"FIFO_MAX_POLL", "16", "Messages one progress call delivers at most.",
     ucs_offsetof(uct_mm_iface_config_t, max_poll), UCS_CONFIG_TYPE_ULONG},

    {NULL}};

ucs_config_field_t uct_mm_iface_config_table[] = {
    {"MM_", "", NULL, 0,
     UCS_CONFIG_TYPE_TABLE(uct_mm_iface_common_config_table)},

    {NULL}};

static const char *uct_mm_iface_name(const uct_mm_iface_t *iface)
{
    return iface->mapper->name;
}

/* ------------------------------------------------------------------------
 * Receive descriptors
 */

static void *uct_mm_iface_desc_in_place(const uct_mm_iface_t *iface,
                                        uint32_t desc)
{
    return iface->rx.desc_va + (size_t)desc * iface->rx.desc_va_stride +
           iface->rx.priv_len + iface->rx.view.data_offset;
}

/* A handler released a descriptor it kept in place */
static void uct_mm_iface_release_shared(uct_recv_desc_t *self, void *desc)
{
    uct_mm_iface_t *iface =
        ucs_container_of(self, uct_mm_iface_t, shared_release);
    size_t offset =
        (size_t)((char *)desc + iface->super.rx_headroom - iface->rx.desc_va) -
        iface->rx.priv_len - iface->rx.view.data_offset;
    uint32_t index = (uint32_t)(offset / iface->rx.desc_va_stride);

    ucs_assertv((index < iface->rx.view.num_descs) &&
                    (offset % iface->rx.desc_va_stride == 0),
                "%s iface %p: released descriptor %p is not one of its own",
                uct_mm_iface_name(iface), (void *)iface, desc);
    ucs_assert(iface->rx.num_free < iface->rx.view.num_descs);
    iface->rx.free_descs[iface->rx.num_free++] = index;
}

static void uct_mm_iface_bad_elem(uct_mm_iface_t *iface, const char *what,
                                  unsigned am_id, uint32_t length)
{
    ++iface->rx_bad;
    ucs_log_limited(&iface->bad_log, UCS_LOG_LEVEL_WARN,
                    "%s iface %p: dropped a malformed FIFO element (%s: am "
                    "id %u, length %u); a process of this user writes into "
                    "its FIFO",
                    uct_mm_iface_name(iface), (void *)iface, what, am_id,
                    length);
}

/* Delivers @a length bytes at @a data through a private copy that the
 * handler may keep */
static void uct_mm_iface_deliver_copy(uct_mm_iface_t *iface, uint8_t am_id,
                                      const void *data, uint32_t length)
{
    void *obj, *payload;
    ucs_status_t status;

    obj = ucs_mpool_get(&iface->copy_mp);
    if (obj == NULL) {
        ucs_log_limited(&iface->bad_log, UCS_LOG_LEVEL_ERROR,
                        "%s iface %p: no memory for a receive descriptor: "
                        "dropped a message of %u bytes",
                        uct_mm_iface_name(iface), (void *)iface, length);
        return;
    }

    ++iface->rx_copied;
    payload = uct_rx_desc_payload(&iface->copy_layout, obj);
    memcpy(payload, data, length);
    uct_rx_desc_set_release(&iface->copy_layout, obj,
                            &iface->copy_release.super);
    status = uct_iface_invoke_am(&iface->super, am_id, payload, length,
                                 UCT_CB_PARAM_FLAG_DESC);
    if (status != UCS_INPROGRESS) {
        ucs_mpool_put(obj);
    }
}

static void uct_mm_iface_deliver_desc(uct_mm_iface_t *iface,
                                      uct_mm_fifo_elem_t *elem, uint32_t slot,
                                      uint8_t am_id, uint32_t length)
{
    uint32_t desc = iface->rx.elem_desc[slot];
    ucs_status_t status;
    void *data;

    if (iface->rx.desc_va == NULL) {
        uct_mm_iface_deliver_copy(
            iface, am_id, uct_mm_fifo_desc_data(&iface->rx.view, desc), length);
        return;
    }

    data = uct_mm_iface_desc_in_place(iface, desc);
    if (ucs_unlikely(iface->rx.num_free == 0)) {
        /* no spare to replace it if the handler keeps it */
        uct_mm_iface_deliver_copy(iface, am_id, data, length);
        return;
    }

    if (ucs_unlikely(iface->super.am_tracer != NULL)) {
        uct_iface_trace_am(&iface->super, UCT_AM_TRACE_TYPE_RECV, am_id, data,
                           length);
    }
    status = uct_iface_invoke_am(&iface->super, am_id, data, length,
                                 UCT_CB_PARAM_FLAG_DESC);
    if (status == UCS_INPROGRESS) {
        /* the handler keeps it: the element gets a spare one, and the
         * next sender learns which once the tail passes the element */
        desc                      = iface->rx.free_descs[--iface->rx.num_free];
        iface->rx.elem_desc[slot] = desc;
        elem->desc                = desc;
    }
}

static void uct_mm_iface_deliver_inline(uct_mm_iface_t *iface,
                                        uct_mm_fifo_elem_t *elem, uint8_t am_id,
                                        uint32_t length)
{
    void *data = elem + 1;

    if (ucs_unlikely(iface->inline_copy)) {
        uct_mm_iface_deliver_copy(iface, am_id, data, length);
        return;
    }
    if (ucs_unlikely(iface->super.am_tracer != NULL)) {
        uct_iface_trace_am(&iface->super, UCT_AM_TRACE_TYPE_RECV, am_id, data,
                           length);
    }
    (void)uct_iface_invoke_am(&iface->super, am_id, data, length, 0);
}

/* One ready element: every field is read once and checked */
static UCS_F_ALWAYS_INLINE void uct_mm_iface_rx_elem(uct_mm_iface_t *iface,
                                                     uct_mm_fifo_elem_t *elem,
                                                     uint8_t flags,
                                                     uint32_t slot)
{
    uint8_t am_id   = *(volatile uint8_t *)&elem->am_id;
    uint32_t length = *(volatile uint32_t *)&elem->length;

    if (ucs_unlikely(am_id >= UCT_AM_ID_MAX)) {
        if (flags & (UCT_MM_FIFO_ELEM_INLINE | UCT_MM_FIFO_ELEM_DESC)) {
            uct_mm_iface_bad_elem(iface, "AM id", am_id, length);
        }
        return;
    }

    if (flags & UCT_MM_FIFO_ELEM_INLINE) {
        if (ucs_unlikely((length > iface->rx.view.elem_size -
                                       sizeof(uct_mm_fifo_elem_t)) ||
                         (flags & UCT_MM_FIFO_ELEM_DESC))) {
            uct_mm_iface_bad_elem(iface, "inline length", am_id, length);
            return;
        }
        uct_mm_iface_deliver_inline(iface, elem, am_id, length);
    } else if (flags & UCT_MM_FIFO_ELEM_DESC) {
        if (ucs_unlikely(length > iface->rx.view.seg_size)) {
            uct_mm_iface_bad_elem(iface, "descriptor length", am_id, length);
            return;
        }
        uct_mm_iface_deliver_desc(iface, elem, slot, am_id, length);
    }
    /* neither: an element its sender claimed but could not fill */
}

static void uct_mm_iface_publish_tail(uct_mm_fifo_rx_t *rx)
{
    /* the elements and the descriptor numbers written into them are the
     * senders' again */
    __atomic_store_n(&rx->view.ctl->tail, rx->read_index, __ATOMIC_RELEASE);
    rx->published = rx->read_index;
}

static UCS_F_ALWAYS_INLINE unsigned uct_mm_iface_poll(uct_mm_iface_t *iface)
{
    uct_mm_fifo_rx_t *rx = &iface->rx;
    uint64_t index       = rx->read_index;
    uct_mm_fifo_elem_t *elem;
    unsigned count;
    uint32_t slot;
    uint8_t flags;

    for (count = 0; count < iface->max_poll; ++count) {
        elem  = uct_mm_fifo_elem(&rx->view, index);
        flags = __atomic_load_n(&elem->flags, __ATOMIC_ACQUIRE);
        if (!uct_mm_fifo_ready(&rx->view, elem, index, flags)) {
            break;
        }
        slot = (uint32_t)(index & rx->view.mask);
        uct_mm_iface_rx_elem(iface, elem, flags, slot);
        /* whatever was written there, the next sender finds the
         * descriptor this element really has (no store when it holds
         * it already: the line stays shared) */
        if (ucs_unlikely(*(volatile uint32_t *)&elem->desc !=
                         rx->elem_desc[slot])) {
            elem->desc = rx->elem_desc[slot];
        }
        rx->read_index = ++index;
        if (index - rx->published >= rx->release_batch) {
            uct_mm_iface_publish_tail(rx);
        }
    }
    return count;
}

/*
 * When a poll found nothing, now and then: an element claimed but not
 * written for UCT_MM_STALL_MSEC is given up (its sender died while
 * writing it, or another process overwrote it), so one lost element does
 * not stop the FIFO; the tail is stored again in case it was overwritten.
 */
static void uct_mm_iface_check_stall(uct_mm_iface_t *iface)
{
    uct_mm_fifo_rx_t *rx = &iface->rx;
    ucs_time_t now       = ucs_get_time();
    uint64_t head;

    if (now < rx->stall_check) {
        return;
    }
    rx->stall_check = now + ucs_time_from_msec(UCT_MM_STALL_MSEC / 4);

    if (rx->read_index != rx->published) {
        uct_mm_iface_publish_tail(rx);
    }

    head = __atomic_load_n(&rx->view.ctl->head, __ATOMIC_ACQUIRE) &
           ~UCT_MM_FIFO_HEAD_ARMED;
    if (head == rx->read_index) {
        rx->stall_since = 0;
        return;
    }

    if ((rx->stall_since == 0) || (rx->stall_index != rx->read_index)) {
        rx->stall_index = rx->read_index;
        rx->stall_since = now;
        return;
    }
    if (now - rx->stall_since < ucs_time_from_msec(UCT_MM_STALL_MSEC)) {
        return;
    }

    ++iface->rx_bad;
    ucs_log_limited(&iface->bad_log, UCS_LOG_LEVEL_WARN,
                    "%s iface %p: FIFO element %" PRIu64 " was claimed and "
                    "not written for %.0f ms (its sender died, or a process "
                    "of this user overwrote it): skipped",
                    uct_mm_iface_name(iface), (void *)iface, rx->read_index,
                    UCT_MM_STALL_MSEC);
    ++rx->read_index;
    uct_mm_iface_publish_tail(rx);
    rx->stall_since = 0;
}

static unsigned uct_mm_iface_progress(uct_iface_h tl_iface)
{
    uct_mm_iface_t *iface = uct_mm_iface(tl_iface);
    unsigned count        = uct_mm_iface_poll(iface);

    if (ucs_unlikely(count == 0) &&
        ((++iface->rx.idle_polls % UCT_MM_STALL_POLLS) == 0)) {
        uct_mm_iface_check_stall(iface);
    }

    if (ucs_unlikely(!ucs_arbiter_is_empty(&iface->arbiter))) {
        count += ucs_arbiter_dispatch(&iface->arbiter, 1, uct_mm_ep_dispatch_cb,
                                      NULL);
        if (ucs_get_time() >= iface->check_time) {
            uct_mm_iface_check_peers(iface);
            iface->check_time =
                ucs_get_time() + ucs_time_from_msec(UCT_MM_PEER_CHECK_MSEC);
        }
    }
    if (ucs_unlikely(iface->failures != 0)) {
        count += uct_mm_iface_report_failures(iface);
    }
    return count;
}

/* Sends complete in the call; what is pending is not sent yet */
static ucs_status_t uct_mm_iface_flush(uct_iface_h tl_iface, unsigned flags,
                                       uct_completion_t *comp)
{
    if (!ucs_arbiter_is_empty(&uct_mm_iface(tl_iface)->arbiter)) {
        return UCS_ERR_NO_RESOURCE;
    }
    __atomic_thread_fence(__ATOMIC_RELEASE);
    return UCS_OK;
}

/* ------------------------------------------------------------------------
 * Query, addresses
 */

static ucs_status_t uct_mm_iface_query(uct_iface_h tl_iface,
                                       uct_iface_attr_t *attr)
{
    uct_mm_iface_t *iface = uct_mm_iface(tl_iface);

    uct_base_iface_query(&iface->super, attr);

    attr->cap.flags = UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_AM_BCOPY |
                      UCT_IFACE_FLAG_PUT_SHORT | UCT_IFACE_FLAG_PUT_BCOPY |
                      UCT_IFACE_FLAG_GET_SHORT | UCT_IFACE_FLAG_GET_BCOPY |
                      UCT_IFACE_FLAG_ATOMIC_CPU | UCT_IFACE_FLAG_ATOMIC_DEVICE |
                      UCT_IFACE_FLAG_PENDING | UCT_IFACE_FLAG_CONNECT_TO_IFACE |
                      UCT_IFACE_FLAG_CB_SYNC | UCT_IFACE_FLAG_EP_CHECK |
                      UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE;
    attr->cap.event_flags = UCT_IFACE_FLAG_EVENT_RECV |
                            UCT_IFACE_FLAG_EVENT_SEND_COMP |
                            UCT_IFACE_FLAG_EVENT_FD;

    attr->cap.am.max_short = iface->rx.view.elem_size -
                             sizeof(uct_mm_fifo_elem_t) - sizeof(uint64_t);
    attr->cap.am.max_bcopy       = iface->seg_size;
    attr->cap.am.opt_zcopy_align = 1;
    attr->cap.am.align_mtu       = 1;
    attr->cap.am.max_iov         = 1;

    attr->cap.put.max_short       = UINT_MAX;
    attr->cap.put.max_bcopy       = iface->seg_size;
    attr->cap.put.opt_zcopy_align = 1;
    attr->cap.put.align_mtu       = 1;
    attr->cap.get.max_short       = UINT_MAX;
    attr->cap.get.max_bcopy       = SIZE_MAX;
    attr->cap.get.opt_zcopy_align = 1;
    attr->cap.get.align_mtu       = 1;

    attr->cap.atomic32.op_flags  = UCT_MM_ATOMIC_OPS;
    attr->cap.atomic32.fop_flags = UCT_MM_ATOMIC_FOPS;
    attr->cap.atomic64.op_flags  = UCT_MM_ATOMIC_OPS;
    attr->cap.atomic64.fop_flags = UCT_MM_ATOMIC_FOPS;

    attr->device_addr_len     = sizeof(uct_sm_dev_addr_t);
    attr->iface_addr_len      = sizeof(uct_mm_iface_addr_t);
    attr->ep_addr_len         = 0;
    attr->max_conn_priv       = 0;
    attr->overhead            = 10e-9;
    attr->bandwidth.dedicated = 0;
    attr->bandwidth.shared    = 12179.0 * 1024 * 1024;
    attr->latency             = ucs_linear_func_make(80e-9, 0);
    attr->priority            = 0;
    return UCS_OK;
}

static ucs_status_t uct_mm_iface_get_address(uct_iface_h tl_iface,
                                             uct_iface_addr_t *addr)
{
    uct_mm_iface_t *iface = uct_mm_iface(tl_iface);
    uct_mm_iface_addr_t a;

    memset(&a, 0, sizeof(a));
    a.seg              = iface->seg.ref;
    a.start_time       = uct_sm_self_start_time();
    a.fifo.fifo_size   = iface->rx.view.mask + 1;
    a.fifo.elem_size   = iface->rx.view.elem_size;
    a.fifo.seg_size    = iface->rx.view.seg_size;
    a.fifo.num_descs   = iface->rx.view.num_descs;
    a.fifo.data_offset = iface->rx.view.data_offset;
    memcpy(a.sock_name, iface->sock_name, sizeof(a.sock_name));
    memcpy(addr, &a, sizeof(a));
    return UCS_OK;
}

static ucs_status_t uct_mm_iface_get_device_address(uct_iface_h tl_iface,
                                                    uct_device_addr_t *addr)
{
    uct_sm_dev_addr_t dev;
    ucs_status_t status;

    status = uct_sm_dev_addr_get(&dev);
    if (status == UCS_OK) {
        memcpy(addr, &dev, sizeof(dev));
    }
    return status;
}

static int uct_mm_iface_is_reachable(const uct_iface_h tl_iface,
                                     const uct_device_addr_t *dev_addr,
                                     const uct_iface_addr_t *iface_addr)
{
    uct_mm_iface_t *iface = uct_mm_iface(tl_iface);
    unsigned need         = UCT_SM_SAME_IPC_NS;
    uct_mm_iface_addr_t addr;
    uct_mm_fifo_layout_t layout;

    if (iface->mapper == &uct_mm_posix_mapper) {
        /* peers open our files through /proc/<pid> */
        need |= UCT_SM_SAME_PID_NS;
    }
    if ((iface_addr == NULL) || !uct_sm_dev_addr_is_local(dev_addr, need)) {
        return 0;
    }

    memcpy(&addr, iface_addr, sizeof(addr));
    return uct_mm_fifo_layout(&addr.fifo, &layout) == UCS_OK;
}

/* ------------------------------------------------------------------------
 * Events
 */

static ucs_status_t uct_mm_iface_event_fd_get(uct_iface_h tl_iface, int *fd_p)
{
    *fd_p = uct_mm_iface(tl_iface)->sock;
    return UCS_OK;
}

/* Reads the wake-ups waiting on our socket, a bounded number. They are
 * only hints: any process of the host can send one, so whether to sleep
 * is decided by the FIFO alone */
static void uct_mm_iface_drain_sock(uct_mm_iface_t *iface)
{
    char buf[16];
    int i;

    for (i = 0; i < 64; ++i) {
        if (recv(iface->sock, buf, sizeof(buf), MSG_DONTWAIT) < 0) {
            return;
        }
    }
}

static ucs_status_t uct_mm_iface_event_arm(uct_iface_h tl_iface,
                                           unsigned events)
{
    uct_mm_iface_t *iface = uct_mm_iface(tl_iface);
    uint64_t head;

    if ((events & UCT_EVENT_SEND_COMP) &&
        !ucs_arbiter_is_empty(&iface->arbiter)) {
        /* waiting for room in a peer's FIFO: it does not wake us */
        return UCS_ERR_BUSY;
    }
    if (iface->failures != 0) {
        return UCS_ERR_BUSY;
    }

    if (!(events & (UCT_EVENT_RECV | UCT_EVENT_RECV_SIG))) {
        return UCS_OK;
    }

    uct_mm_iface_drain_sock(iface);

    /* set the sleep bit, then look: a sender that claimed before it will
     * not wake us, so anything claimed and not read means busy */
    head = __atomic_fetch_or(&iface->rx.view.ctl->head, UCT_MM_FIFO_HEAD_ARMED,
                             __ATOMIC_SEQ_CST);
    if ((head & ~UCT_MM_FIFO_HEAD_ARMED) != iface->rx.read_index) {
        return UCS_ERR_BUSY;
    }
    return UCS_OK;
}

static ucs_status_t uct_mm_iface_sock_init(uct_mm_iface_t *iface)
{
    struct sockaddr_un sun;
    socklen_t len;
    size_t name_len;

    iface->sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (iface->sock < 0) {
        ucs_error("%s: cannot create the wake-up socket: %m; check the open "
                  "files limit (ulimit -n)",
                  uct_mm_iface_name(iface));
        return UCS_ERR_IO_ERROR;
    }

    /* autobind: the kernel picks a free abstract name */
    memset(&sun, 0, sizeof(sun));
    sun.sun_family = AF_UNIX;
    if (bind(iface->sock, (struct sockaddr *)&sun, sizeof(sa_family_t)) != 0) {
        ucs_error("%s: cannot bind the wake-up socket: %m",
                  uct_mm_iface_name(iface));
        goto err_close;
    }

    len = sizeof(sun);
    if ((getsockname(iface->sock, (struct sockaddr *)&sun, &len) != 0) ||
        (len <= offsetof(struct sockaddr_un, sun_path) + 1) ||
        (sun.sun_path[0] != '\0')) {
        ucs_error("%s: the wake-up socket has no abstract name",
                  uct_mm_iface_name(iface));
        goto err_close;
    }

    name_len = len - offsetof(struct sockaddr_un, sun_path) - 1;
    if (name_len >= UCT_MM_SOCK_NAME_LEN) {
        ucs_error("%s: the wake-up socket name is %zu bytes long",
                  uct_mm_iface_name(iface), name_len);
        goto err_close;
    }
    memset(iface->sock_name, 0, sizeof(iface->sock_name));
    memcpy(iface->sock_name, sun.sun_path + 1, name_len);
    return UCS_OK;

err_close:
    close(iface->sock);
    return UCS_ERR_IO_ERROR;
}

/* ------------------------------------------------------------------------
 * Receive FIFO set-up
 */

/* Moves each descriptor of the segment behind private pages (see the top
 * of the file); on failure the descriptors stay where they were and
 * messages are delivered through copies */
static void uct_mm_iface_split_descs(uct_mm_iface_t *iface)
{
    uct_mm_fifo_rx_t *rx = &iface->rx;
    size_t page          = ucs_get_page_size();
    size_t stride        = rx->view.desc_stride;
    char *va, *slot, *shared;
    uint32_t i;
    void *ret;

    rx->priv_len = ucs_align_up_pow2(
        iface->super.rx_headroom + sizeof(uct_recv_desc_t *), page);
    rx->desc_va_stride = rx->priv_len + stride;
    rx->desc_va_len    = rx->desc_va_stride * rx->view.num_descs;

    va = mmap(NULL, rx->desc_va_len, PROT_NONE,
              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (va == MAP_FAILED) {
        ucs_debug("%s: cannot reserve %zu bytes for descriptors: %m",
                  uct_mm_iface_name(iface), rx->desc_va_len);
        return;
    }

    for (i = 0; i < rx->view.num_descs; ++i) {
        slot   = va + (size_t)i * rx->desc_va_stride;
        shared = rx->view.descs + (size_t)i * stride;
        ret    = mmap(slot, rx->priv_len, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        if (ret == MAP_FAILED) {
            goto err;
        }
        ret = mremap(shared, stride, stride, MREMAP_MAYMOVE | MREMAP_FIXED,
                     slot + rx->priv_len);
        if (ret == MAP_FAILED) {
            goto err;
        }
    }

    rx->desc_va = va;
    for (i = 0; i < rx->view.num_descs; ++i) {
        uct_recv_desc_set((char *)uct_mm_iface_desc_in_place(iface, i) -
                              iface->super.rx_headroom,
                          &iface->shared_release);
    }
    /* the part left where the segment was mapped is the control page
     * and the elements: only that is unmapped with the segment (the
     * range the descriptors left may hold other mappings by then) */
    iface->seg.length = (size_t)(rx->view.descs - (char *)iface->seg.address);
    rx->view.descs    = NULL;
    return;

err:
    ucs_error("%s: cannot map descriptor %u of the receive FIFO: %m; check "
              "vm.max_map_count",
              uct_mm_iface_name(iface), i);
    /* move back what was moved */
    while (i-- > 0) {
        slot = va + (size_t)i * rx->desc_va_stride + rx->priv_len;
        (void)mremap(slot, stride, stride, MREMAP_MAYMOVE | MREMAP_FIXED,
                     rx->view.descs + (size_t)i * stride);
    }
    munmap(va, rx->desc_va_len);
}

static ucs_status_t uct_mm_iface_rx_init(uct_mm_iface_t *iface,
                                         const uct_mm_iface_config_t *config)
{
    uct_mm_fifo_rx_t *rx = &iface->rx;
    uct_mm_md_t *md      = uct_mm_md(iface->super.md);
    size_t page          = ucs_get_page_size();
    size_t align         = iface->super.am_alignment;
    uct_mm_fifo_params_t params;
    uct_mm_fifo_layout_t layout;
    ucs_status_t status;
    uint32_t i;
    int split;

    memset(&params, 0, sizeof(params));
    params.fifo_size = config->fifo_size;
    params.elem_size = config->fifo_elem_size;
    params.seg_size  = (uint32_t)config->seg_size;
    params.num_descs = (config->rx_max_bufs < 0)
                           ? 2 * config->fifo_size
                           : (uint32_t)config->rx_max_bufs;

    /* the payload of a descriptor starts where am_alignment wants it */
    split = 1;
    if (align > 1) {
        if (align > page) {
            split = 0;
        } else {
            params.data_offset =
                (uint32_t)((align - iface->super.am_align_offset % align) %
                           align);
            if (params.data_offset > iface->super.rx_headroom) {
                split = 0;
            }
        }
    }

    status = uct_mm_fifo_layout(&params, &layout);
    if (status != UCS_OK) {
        ucs_error("%s: invalid FIFO configuration: FIFO_SIZE=%u "
                  "FIFO_ELEM_SIZE=%u SEG_SIZE=%u RX_MAX_BUFS=%u; FIFO_SIZE is "
                  "a power of 2 from %u to %u, FIFO_ELEM_SIZE a multiple of "
                  "64 from %u to %u, SEG_SIZE from 1 to %u, RX_MAX_BUFS from "
                  "FIFO_SIZE to %u",
                  uct_mm_iface_name(iface), params.fifo_size, params.elem_size,
                  params.seg_size, params.num_descs, UCT_MM_FIFO_MIN_SIZE,
                  UCT_MM_FIFO_MAX_SIZE, UCT_MM_FIFO_MIN_ELEM_SIZE,
                  UCT_MM_FIFO_MAX_ELEM_SIZE, UCT_MM_FIFO_MAX_SEG_SIZE,
                  UCT_MM_FIFO_MAX_DESCS);
        return UCS_ERR_INVALID_PARAM;
    }

    status =
        iface->mapper->create(md, layout.length, "receive FIFO", &iface->seg);
    if (status != UCS_OK) {
        return status;
    }

    uct_mm_fifo_view_init(&rx->view, &params, &layout, iface->seg.address);
    uct_mm_fifo_init(&rx->view);
    rx->read_index = 0;
    rx->published  = 0;
    rx->release_batch =
        ucs_max(1, (uint32_t)(config->release_factor * params.fifo_size));

    rx->elem_desc  = calloc(params.fifo_size, sizeof(*rx->elem_desc));
    rx->free_descs = calloc(params.num_descs, sizeof(*rx->free_descs));
    if ((rx->elem_desc == NULL) || (rx->free_descs == NULL)) {
        ucs_error("%s: no memory for the descriptor tables",
                  uct_mm_iface_name(iface));
        status = UCS_ERR_NO_MEMORY;
        goto err;
    }

    for (i = 0; i < params.fifo_size; ++i) {
        rx->elem_desc[i] = i;
    }
    rx->num_free = 0;
    for (i = params.num_descs; i > params.fifo_size; --i) {
        rx->free_descs[rx->num_free++] = i - 1;
    }

    rx->desc_va = NULL;
    if (split) {
        uct_mm_iface_split_descs(iface);
    }
    return UCS_OK;

err:
    free(rx->free_descs);
    free(rx->elem_desc);
    iface->mapper->destroy(&iface->seg);
    return status;
}

static void uct_mm_iface_rx_cleanup(uct_mm_iface_t *iface)
{
    if (iface->rx.desc_va != NULL) {
        munmap(iface->rx.desc_va, iface->rx.desc_va_len);
    }
    iface->mapper->destroy(&iface->seg);
    free(iface->rx.free_descs);
    free(iface->rx.elem_desc);
}

/* ------------------------------------------------------------------------
 * Open, close, object tree
 */

static void uct_mm_iface_close(uct_iface_h tl_iface)
{
    uct_mm_iface_t *iface = uct_mm_iface(tl_iface);

    uct_base_iface_progress_disable(tl_iface,
                                    UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    ucs_log_limit_flush(&iface->bad_log, UCS_LOG_LEVEL_WARN,
                        uct_mm_iface_name(iface));
    uct_mm_iface_remotes_cleanup(iface);
    ucs_arbiter_cleanup(&iface->arbiter);
    free(iface->put_bounce);
    if (iface->tx_sock >= 0) {
        close(iface->tx_sock);
    }
    close(iface->sock);
    ucs_mpool_cleanup(&iface->copy_mp, 1);
    uct_mm_iface_rx_cleanup(iface);
    uct_base_iface_cleanup(&iface->super);
    free(iface);
}

static void uct_mm_iface_vfs_show_address(void *obj, ucs_string_buffer_t *strb,
                                          void *arg_ptr, uint64_t arg_u64)
{
    const uct_mm_iface_t *iface = obj;

    ucs_string_buffer_appendf(
        strb, "pid %u segment %" PRIu64 " (%" PRIu64 " bytes) socket @%s\n",
        iface->seg.ref.pid, iface->seg.ref.id, iface->seg.ref.length,
        iface->sock_name);
}

static void uct_mm_iface_vfs_show_fifo(void *obj, ucs_string_buffer_t *strb,
                                       void *arg_ptr, uint64_t arg_u64)
{
    const uct_mm_iface_t *iface = obj;
    uint64_t head =
        __atomic_load_n(&iface->rx.view.ctl->head, __ATOMIC_RELAXED);

    ucs_string_buffer_appendf(strb,
                              "size %u elem_size %u read %" PRIu64
                              " tail %" PRIu64 " head %" PRIu64 "%s\n",
                              iface->rx.view.mask + 1, iface->rx.view.elem_size,
                              iface->rx.read_index, iface->rx.published,
                              head & ~UCT_MM_FIFO_HEAD_ARMED,
                              (head & UCT_MM_FIFO_HEAD_ARMED) ? " armed" : "");
}

void uct_mm_iface_vfs_init(uct_iface_h tl_iface)
{
    uct_mm_iface_t *iface = uct_mm_iface(tl_iface);

    uct_vfs_add_file(iface, uct_mm_iface_vfs_show_address, NULL, 0, "address");
    uct_vfs_add_file(iface, uct_mm_iface_vfs_show_fifo, NULL, 0, "fifo");
    uct_vfs_add_value(iface, iface->seg.ref.length, "shm_bytes");
    uct_vfs_add_uint(iface, &iface->rx.num_free, sizeof(iface->rx.num_free),
                     "rx_free_descs");
    uct_vfs_add_uint(iface, &iface->rx_bad, sizeof(iface->rx_bad),
                     "rx_bad_elems");
    uct_vfs_add_uint(iface, &iface->rx_copied, sizeof(iface->rx_copied),
                     "rx_copied_descs");
    uct_vfs_add_uint(iface, &iface->tx_signals, sizeof(iface->tx_signals),
                     "tx_wakeups");
    uct_vfs_add_uint(iface, &iface->num_remotes, sizeof(iface->num_remotes),
                     "peers");
}

static const uct_iface_ops_t uct_mm_iface_ops = {
    .ep_put_short             = uct_mm_ep_put_short,
    .ep_put_bcopy             = uct_mm_ep_put_bcopy,
    .ep_get_short             = uct_mm_ep_get_short,
    .ep_get_bcopy             = uct_mm_ep_get_bcopy,
    .ep_am_short              = uct_mm_ep_am_short,
    .ep_am_short_iov          = uct_mm_ep_am_short_iov,
    .ep_am_bcopy              = uct_mm_ep_am_bcopy,
    .ep_atomic_cswap64        = uct_mm_ep_atomic_cswap64,
    .ep_atomic_cswap32        = uct_mm_ep_atomic_cswap32,
    .ep_atomic32_post         = uct_mm_ep_atomic32_post,
    .ep_atomic64_post         = uct_mm_ep_atomic64_post,
    .ep_atomic32_fetch        = uct_mm_ep_atomic32_fetch,
    .ep_atomic64_fetch        = uct_mm_ep_atomic64_fetch,
    .ep_pending_add           = uct_mm_ep_pending_add,
    .ep_pending_purge         = uct_mm_ep_pending_purge,
    .ep_flush                 = uct_mm_ep_flush,
    .ep_fence                 = uct_base_ep_fence,
    .ep_check                 = uct_mm_ep_check,
    .ep_create                = uct_mm_ep_create,
    .ep_destroy               = uct_mm_ep_destroy,
    .iface_flush              = uct_mm_iface_flush,
    .iface_fence              = uct_base_iface_fence,
    .iface_progress           = uct_mm_iface_progress,
    .iface_progress_enable    = uct_base_iface_progress_enable,
    .iface_progress_disable   = uct_base_iface_progress_disable,
    .iface_event_fd_get       = uct_mm_iface_event_fd_get,
    .iface_event_arm          = uct_mm_iface_event_arm,
    .iface_close              = uct_mm_iface_close,
    .iface_query              = uct_mm_iface_query,
    .iface_get_device_address = uct_mm_iface_get_device_address,
    .iface_get_address        = uct_mm_iface_get_address,
    .iface_is_reachable       = uct_mm_iface_is_reachable};

ucs_status_t uct_mm_iface_open(uct_md_h md, uct_worker_h worker,
                               const uct_iface_params_t *params,
                               const uct_iface_config_t *tl_config,
                               uct_iface_h *iface_p)
{
    const uct_mm_iface_config_t *config =
        (const uct_mm_iface_config_t *)tl_config;
    uct_iface_mpool_params_t iface_mp_params;
    ucs_mpool_params_t mp_params;
    uct_mm_iface_t *iface;
    ucs_status_t status;

    if (!(config->release_factor > 0) || (config->release_factor > 1)) {
        ucs_error("%s: FIFO_RELEASE_FACTOR=%g is out of range: above 0 and "
                  "at most 1",
                  uct_mm_md(md)->mapper->name, config->release_factor);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((config->max_poll == 0) || (config->max_poll > UINT_MAX)) {
        ucs_error("%s: FIFO_MAX_POLL=%lu is out of range: from 1",
                  uct_mm_md(md)->mapper->name, config->max_poll);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((config->rx_max_bufs >= 0) &&
        ((unsigned)config->rx_max_bufs < config->fifo_size)) {
        ucs_error("%s: RX_MAX_BUFS=%d is below FIFO_SIZE=%u: every element "
                  "needs a descriptor",
                  uct_mm_md(md)->mapper->name, config->rx_max_bufs,
                  config->fifo_size);
        return UCS_ERR_INVALID_PARAM;
    }
    if (config->seg_size > UCT_MM_FIFO_MAX_SEG_SIZE) {
        ucs_error("%s: SEG_SIZE=%zu is above the largest, %u",
                  uct_mm_md(md)->mapper->name, config->seg_size,
                  UCT_MM_FIFO_MAX_SEG_SIZE);
        return UCS_ERR_INVALID_PARAM;
    }

    iface = calloc(1, sizeof(*iface));
    if (iface == NULL) {
        ucs_error("%s: no memory for an interface",
                  uct_mm_md(md)->mapper->name);
        return UCS_ERR_NO_MEMORY;
    }

    status = uct_base_iface_init(&iface->super, &uct_mm_iface_ops, md, worker,
                                 params, tl_config);
    if (status != UCS_OK) {
        goto err_free;
    }

    iface->mapper   = uct_mm_md(md)->mapper;
    iface->max_poll = (unsigned)config->max_poll;
    iface->seg_size = config->seg_size;
    iface->tx_sock  = -1;
    ucs_log_limit_init(&iface->bad_log);
    ucs_arbiter_init(&iface->arbiter);
    iface->shared_release.cb = uct_mm_iface_release_shared;
    iface->inline_copy =
        (iface->super.am_alignment > 1) &&
        (((sizeof(uct_mm_fifo_elem_t) + iface->super.am_align_offset) %
          iface->super.am_alignment) != 0 ||
         (iface->super.am_alignment > 64));

    status = ucs_hash_init(&iface->remotes, 8);
    if (status != UCS_OK) {
        goto err_cleanup_base;
    }

    /* private copies: [release pointer][rx headroom][payload], on the
     * heap (the md would make each chunk a shared segment) */
    uct_rx_desc_layout_init(
        &iface->super, 0, 0,
        ucs_max(config->seg_size, (size_t)config->fifo_elem_size),
        &iface->copy_layout);
    uct_rx_desc_release_init(&iface->copy_release, &iface->copy_layout);
    uct_rx_desc_mpool_params(&iface->copy_layout, &iface_mp_params);
    memset(&mp_params, 0, sizeof(mp_params));
    mp_params.elem_size       = iface_mp_params.elem_size;
    mp_params.align_offset    = iface_mp_params.align_offset;
    mp_params.alignment       = iface_mp_params.alignment;
    mp_params.elems_per_chunk = 16;
    mp_params.max_elems       = UINT_MAX;
    mp_params.name            = "mm_rx_copy_desc";
    status                    = ucs_mpool_init(&iface->copy_mp, &mp_params);
    if (status != UCS_OK) {
        goto err_hash;
    }

    status = uct_mm_iface_sock_init(iface);
    if (status != UCS_OK) {
        goto err_mpool;
    }

    status = uct_mm_iface_rx_init(iface, config);
    if (status != UCS_OK) {
        goto err_sock;
    }

    *iface_p = &iface->super.super;
    return UCS_OK;

err_sock:
    close(iface->sock);
err_mpool:
    ucs_mpool_cleanup(&iface->copy_mp, 1);
err_hash:
    ucs_hash_cleanup(&iface->remotes);
err_cleanup_base:
    uct_base_iface_cleanup(&iface->super);
err_free:
    free(iface);
    return status;
}
