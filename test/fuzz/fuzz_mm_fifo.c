/*
 * Harness of the receive FIFO of the posix transport (src/uct/sm/mm/):
 * what another process of our user can write into the shared segment of
 * an interface (the elements: 16-byte header and inline payload; the
 * control page: head and tail), parsed by the real receive path
 * (uct_mm_iface_progress() -> uct_mm_iface_poll() -> uct_mm_iface_rx_elem()),
 * mixed with real sends into the same FIFO.
 *
 * Two posix interfaces are opened once on device "memory", each with an
 * endpoint to itself (CONNECT_TO_IFACE), whose view of the segment is
 * where the harness writes:
 *   0: 4 elements of 64 bytes, descriptors of 256 bytes (4 spare), no
 *      headroom, no alignment: messages are delivered in place;
 *   1: 8 elements of 128 bytes, descriptors of 100 bytes (1 spare), 2
 *      messages a poll, rx_headroom 32, am_alignment 32 with offset 8:
 *      inline messages are delivered through private copies, long ones in
 *      place until the spare descriptor is held, then through copies.
 *
 * Input: the first byte picks the interface (bit 0) and which AM ids keep
 * the descriptors they get (bits 1-7: ids 0-6). Then operations, one byte
 * each (the low 3 bits) and their arguments; missing bytes read as 0; 512
 * operations at most. R is the receiver's read index when the operation
 * runs, N the FIFO size.
 *   0 ELEM  j mode plen hdr[16] payload[plen]: writes element R + j % 2N
 *           (any header); mode bit 0: with the owner bit and seq that make
 *           it ready for its number, bit 1: length = plen, bit 2: am_id
 *           & 7, bit 3: its desc field left as it is
 *   1 CTL   mode value: writes the head (mode bit 0 clear) or the tail;
 *           value is R + one signed byte, or with mode bit 1 eight bytes;
 *           mode bit 2 sets the sleep bit
 *   2 SHORT id len header[8] payload[len]: uct_ep_am_short()
 *   3 BCOPY id len[2] fill: uct_ep_am_bcopy() of len % (max_bcopy + 1)
 *   4 PROG  n: 1 + n % 4 progress calls (bit 2: uct_iface_progress, else
 *           uct_worker_progress)
 *   5 REL   k: releases held descriptor k % held
 *   6 KEEP  mask: ids whose handler keeps descriptors (bit i: id i)
 *   7 MISC  m: m even: uct_iface_event_arm(RECV); odd: then id len
 *           payload: uct_ep_am_short_iov() of 2 iovs
 * AM ids 0-5 and 30 have handlers; the rest go to the stub handler.
 *
 * Rules, checked in the handlers: only ids with a handler reach them, with
 * the id and length of the element being read (one that carries a
 * message); data is either the inline payload of one element (length at most
 * max_short + 8), or the payload of one descriptor of the segment as the
 * receiver maps it (at most max_bcopy, never one that a handler holds), or
 * a private copy (flagged as a descriptor, at most the larger of the
 * two); every byte is readable; the release record before a descriptor is
 * the interface's; with am_alignment, (data + offset) is aligned.
 * After each input, every held descriptor is released and the FIFO is put
 * back in order (head and tail at R, no element ready, each element
 * naming its descriptor): then nothing is delivered, a short and a bcopy
 * message sent on id 30 arrive once each within 4 progress calls with
 * their bytes, and the receiver's descriptors are all accounted for
 * (each element's, the free ones, none twice, none missing).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "fuzz.h"
#include "common/uct_md_find.h"

#include <uct/api/uct.h>
#include <uct/sm/mm/mm.h>
#include <ucs/async/async.h>
#include <ucs/debug/log.h>
#include <ucs/sys/math.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_MAX_OPS     512
#define FUZZ_MAX_HELD    64
#define FUZZ_MAX_DESCS   64
#define FUZZ_FINAL_ID    30
#define FUZZ_NUM_IFACES  2
#define FUZZ_FINAL_POLLS 4

typedef struct {
    uct_worker_h worker;
    uct_iface_h iface;
    uct_ep_h ep;
    uct_mm_iface_t *mm;     /* the receiver */
    uct_mm_fifo_view_t *tx; /* the sender's view of the same segment */
    uct_iface_attr_t attr;
    size_t rx_headroom;
    size_t alignment;
    size_t align_offset;
    uint32_t spare_descs; /* free descriptors when nobody holds one */
} fuzz_iface_t;

static struct {
    ucs_async_context_t *async;
    uct_md_h md;
    fuzz_iface_t ifaces[FUZZ_NUM_IFACES];
    fuzz_iface_t *cur;
    unsigned keep_mask;
    void *held[FUZZ_MAX_HELD]; /* descriptors the handlers keep */
    unsigned num_held;
    unsigned deliveries;
    /* the message the final phase waits for on FUZZ_FINAL_ID */
    int final;
    const uint8_t *expect;
    size_t expect_len;
    unsigned final_seen;
} fz;

typedef struct {
    const uint8_t *p;
    size_t left;
} fuzz_in_t;

static uint8_t fuzz_u8(fuzz_in_t *in)
{
    if (in->left == 0) {
        return 0;
    }
    --in->left;
    return *(in->p++);
}

static void fuzz_bytes(fuzz_in_t *in, void *dst, size_t length)
{
    size_t n = (length < in->left) ? length : in->left;

    memcpy(dst, in->p, n);
    memset((char *)dst + n, 0, length - n);
    in->p += n;
    in->left -= n;
}

static void fuzz_die(const char *what, ucs_status_t status)
{
    fprintf(stderr, "fuzz_mm_fifo: %s failed: %s\n", what,
            ucs_status_string(status));
    abort();
}

static int fuzz_is_held(const void *desc)
{
    unsigned i;

    for (i = 0; i < fz.num_held; ++i) {
        if (fz.held[i] == desc) {
            return 1;
        }
    }
    return 0;
}

/* Where @a data is: checks it against what the receiver may hand over */
static void fuzz_check_data(const fuzz_iface_t *fi, unsigned id,
                            const char *data, size_t length, unsigned flags)
{
    const uct_mm_fifo_rx_t *rx = &fi->mm->rx;
    const char *elems          = rx->view.elems;
    size_t elems_len  = (size_t)(rx->view.mask + 1) * rx->view.elem_size;
    size_t max_inline = fi->attr.cap.am.max_short + sizeof(uint64_t);
    size_t max_bcopy  = fi->attr.cap.am.max_bcopy;
    const uct_mm_fifo_elem_t *elem;
    uct_recv_desc_t *release;
    size_t offset;

    /* the element being read: what the handler gets is what it says */
    elem = uct_mm_fifo_elem(&rx->view, rx->read_index);
    fuzz_check(
        (elem->am_id == id) && (elem->length == length) &&
            (elem->flags & (UCT_MM_FIFO_ELEM_INLINE | UCT_MM_FIFO_ELEM_DESC)),
        "id %u, %zu bytes: delivered from element %llu, which says "
        "am id %u, %u bytes, flags 0x%x",
        id, length, (unsigned long long)rx->read_index, elem->am_id,
        elem->length, elem->flags);

    if ((data >= elems) && (data < elems + elems_len)) {
        offset = (size_t)(data - elems);
        fuzz_check(!(flags & UCT_CB_PARAM_FLAG_DESC),
                   "id %u: FIFO element memory passed as a descriptor", id);
        fuzz_check(offset % rx->view.elem_size == sizeof(uct_mm_fifo_elem_t),
                   "id %u: data at offset %zu of the elements is not the "
                   "payload of one",
                   id, offset);
        fuzz_check(length <= max_inline,
                   "id %u: inline length %zu above max_short + 8 = %zu", id,
                   length, max_inline);
        fuzz_check(data - sizeof(*elem) == (const char *)elem,
                   "id %u: the inline payload of element %zu, not of the one "
                   "read",
                   id, offset / rx->view.elem_size);
    } else if ((rx->desc_va != NULL) && (data >= rx->desc_va) &&
               (data < rx->desc_va + rx->desc_va_len)) {
        offset = (size_t)(data - rx->desc_va);
        fuzz_check(flags & UCT_CB_PARAM_FLAG_DESC,
                   "id %u: a descriptor passed without FLAG_DESC", id);
        fuzz_check(offset % rx->desc_va_stride ==
                       rx->priv_len + rx->view.data_offset,
                   "id %u: data at offset %zu of the descriptors is not the "
                   "payload of one",
                   id, offset);
        fuzz_check(length <= max_bcopy,
                   "id %u: descriptor length %zu above max_bcopy %zu", id,
                   length, max_bcopy);
        fuzz_check(!fuzz_is_held(data - fi->rx_headroom),
                   "id %u: descriptor %zu delivered while a handler holds it",
                   id, offset / rx->desc_va_stride);
    } else {
        fuzz_check(flags & UCT_CB_PARAM_FLAG_DESC,
                   "id %u: data %p is neither in the FIFO nor a descriptor", id,
                   (const void *)data);
        fuzz_check(length <= ucs_max(max_bcopy, max_inline),
                   "id %u: copied length %zu above max_bcopy %zu and "
                   "max_short + 8 %zu",
                   id, length, max_bcopy, max_inline);
        fuzz_check(!fuzz_is_held(data - fi->rx_headroom),
                   "id %u: a private copy delivered while a handler holds it",
                   id);
    }

    if (flags & UCT_CB_PARAM_FLAG_DESC) {
        release = uct_recv_desc((char *)data - fi->rx_headroom);
        fuzz_check((release == &fi->mm->shared_release) ||
                       (release == &fi->mm->copy_release.super),
                   "id %u: the release record of a descriptor is %p", id,
                   (void *)release);
    }
    if (fi->alignment > 1) {
        fuzz_check(((uintptr_t)data + fi->align_offset) % fi->alignment == 0,
                   "id %u: data %p + %zu is not aligned to %zu", id,
                   (const void *)data, fi->align_offset, fi->alignment);
    }
}

static ucs_status_t fuzz_am_cb(void *arg, void *data, size_t length,
                               unsigned flags)
{
    const fuzz_iface_t *fi = fz.cur;
    unsigned id            = (unsigned)(uintptr_t)arg;
    volatile char sum      = 0;
    size_t i;

    fuzz_check((id < 6) || (id == FUZZ_FINAL_ID),
               "a handler of id %u was called", id);
    fuzz_check_data(fi, id, data, length, flags);
    for (i = 0; i < length; ++i) { /* the whole payload must be readable */
        sum += ((const char *)data)[i];
    }
    (void)sum;
    ++fz.deliveries;

    if (fz.final && (id == FUZZ_FINAL_ID)) {
        fuzz_check((length == fz.expect_len) &&
                       !memcmp(data, fz.expect, length),
                   "a message sent in order arrived as %zu other bytes "
                   "(sent %zu)",
                   length, fz.expect_len);
        ++fz.final_seen;
        return UCS_OK;
    }

    if ((flags & UCT_CB_PARAM_FLAG_DESC) && (id < 7) &&
        (fz.keep_mask & (1u << id)) && (fz.num_held < FUZZ_MAX_HELD)) {
        fz.held[fz.num_held++] = (char *)data - fi->rx_headroom;
        return UCS_INPROGRESS;
    }
    return UCS_OK;
}

/* ------------------------------------------------------------------------
 * Set-up
 */

static void fuzz_modify(uct_iface_config_t *config, const char *name,
                        const char *value)
{
    ucs_status_t status = uct_config_modify(config, name, value);

    if (status != UCS_OK) {
        fuzz_die(name, status);
    }
}

static void fuzz_open(fuzz_iface_t *fi, const char *const (*settings)[2],
                      size_t rx_headroom, size_t alignment, size_t align_offset)
{
    uint8_t dev_addr[64], iface_addr[128];
    uct_iface_config_t *config;
    uct_iface_params_t params;
    uct_ep_params_t ep_params;
    ucs_status_t status;
    unsigned id;

    status = uct_worker_create(fz.async, UCS_THREAD_MODE_SINGLE, &fi->worker);
    if (status != UCS_OK) {
        fuzz_die("uct_worker_create", status);
    }
    status = uct_md_iface_config_read(fz.md, "posix", NULL, NULL, &config);
    if (status != UCS_OK) {
        fuzz_die("uct_md_iface_config_read(posix)", status);
    }
    for (; (*settings)[0] != NULL; ++settings) {
        fuzz_modify(config, (*settings)[0], (*settings)[1]);
    }

    memset(&params, 0, sizeof(params));
    params.field_mask = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
                        UCT_IFACE_PARAM_FIELD_DEVICE |
                        UCT_IFACE_PARAM_FIELD_RX_HEADROOM;
    params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = "posix";
    params.mode.device.dev_name = "memory";
    params.rx_headroom          = rx_headroom;
    if (alignment > 1) {
        params.field_mask |= UCT_IFACE_PARAM_FIELD_AM_ALIGNMENT |
                             UCT_IFACE_PARAM_FIELD_AM_ALIGN_OFFSET;
        params.am_alignment    = alignment;
        params.am_align_offset = align_offset;
    }
    status = uct_iface_open(fz.md, fi->worker, &params, config, &fi->iface);
    uct_config_release(config);
    if (status != UCS_OK) {
        fuzz_die("uct_iface_open(posix/memory)", status);
    }
    uct_iface_progress_enable(fi->iface, UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    for (id = 0; id < 6; ++id) {
        uct_iface_set_am_handler(fi->iface, id, fuzz_am_cb,
                                 (void *)(uintptr_t)id, 0);
    }
    uct_iface_set_am_handler(fi->iface, FUZZ_FINAL_ID, fuzz_am_cb,
                             (void *)(uintptr_t)FUZZ_FINAL_ID, 0);

    status = uct_iface_query(fi->iface, &fi->attr);
    if ((status == UCS_OK) &&
        ((fi->attr.device_addr_len > sizeof(dev_addr)) ||
         (fi->attr.iface_addr_len > sizeof(iface_addr)))) {
        status = UCS_ERR_BUFFER_TOO_SMALL;
    }
    if (status == UCS_OK) {
        status = uct_iface_get_device_address(fi->iface,
                                              (uct_device_addr_t *)dev_addr);
    }
    if (status == UCS_OK) {
        status =
            uct_iface_get_address(fi->iface, (uct_iface_addr_t *)iface_addr);
    }
    if (status != UCS_OK) {
        fuzz_die("the addresses of posix/memory", status);
    }

    memset(&ep_params, 0, sizeof(ep_params));
    ep_params.field_mask = UCT_EP_PARAM_FIELD_IFACE |
                           UCT_EP_PARAM_FIELD_DEV_ADDR |
                           UCT_EP_PARAM_FIELD_IFACE_ADDR;
    ep_params.iface      = fi->iface;
    ep_params.dev_addr   = (const uct_device_addr_t *)dev_addr;
    ep_params.iface_addr = (const uct_iface_addr_t *)iface_addr;
    status               = uct_ep_create(&ep_params, &fi->ep);
    if (status != UCS_OK) {
        fuzz_die("an endpoint to the interface itself", status);
    }

    fi->mm           = uct_mm_iface(fi->iface);
    fi->tx           = &uct_mm_ep(fi->ep)->remote->fifo;
    fi->rx_headroom  = rx_headroom;
    fi->alignment    = alignment;
    fi->align_offset = align_offset;
    fi->spare_descs  = fi->mm->rx.num_free;
    if (fi->mm->rx.view.num_descs > FUZZ_MAX_DESCS) {
        fuzz_die("the descriptor count", UCS_ERR_EXCEEDS_LIMIT);
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    static const char *const small[][2]  = {{"FIFO_SIZE", "4"},
                                            {"FIFO_ELEM_SIZE", "64"},
                                            {"SEG_SIZE", "256"},
                                            {NULL, NULL}};
    static const char *const copies[][2] = {{"FIFO_SIZE", "8"},
                                            {"FIFO_ELEM_SIZE", "128"},
                                            {"SEG_SIZE", "100"},
                                            {"RX_MAX_BUFS", "9"},
                                            {"FIFO_RELEASE_FACTOR", "1"},
                                            {"FIFO_MAX_POLL", "2"},
                                            {NULL, NULL}};
    ucs_status_t status;

    fuzz_log_silence(UCS_LOG_LEVEL_DEBUG);

    status = ucs_async_context_create(UCS_ASYNC_MODE_POLL, &fz.async);
    if (status == UCS_OK) {
        status = test_uct_md_find("posix", "memory", &fz.md, NULL);
    }
    if (status != UCS_OK) {
        fuzz_die("opening posix/memory (is the sm module built?)", status);
    }
    fuzz_open(&fz.ifaces[0], small, 0, 1, 0);
    fuzz_open(&fz.ifaces[1], copies, 32, 32, 8);
    return 0;
}

/* ------------------------------------------------------------------------
 * Operations
 */

static uint64_t fuzz_read_index(void)
{
    return fz.cur->mm->rx.read_index;
}

static void fuzz_op_elem(fuzz_in_t *in)
{
    uct_mm_fifo_view_t *tx = fz.cur->tx;
    size_t room            = tx->elem_size - sizeof(uct_mm_fifo_elem_t);
    uint64_t index = fuzz_read_index() + fuzz_u8(in) % (2 * (tx->mask + 1));
    uct_mm_fifo_elem_t *elem = uct_mm_fifo_elem(tx, index);
    uint8_t mode             = fuzz_u8(in);
    size_t plen              = fuzz_u8(in) % (room + 1);
    uct_mm_fifo_elem_t hdr;

    fuzz_bytes(in, &hdr, sizeof(hdr));
    fuzz_bytes(in, elem + 1, plen);
    if (mode & 1) {
        hdr.seq   = (uint32_t)index;
        hdr.flags = (uint8_t)((hdr.flags & ~UCT_MM_FIFO_ELEM_OWNER) |
                              uct_mm_fifo_owner(tx, index));
    }
    if (mode & 2) {
        hdr.length = (uint32_t)plen;
    }
    if (mode & 4) {
        hdr.am_id &= 7;
    }
    if (mode & 8) {
        hdr.desc = elem->desc;
    }
    /* as a sender writes it: the flags last */
    elem->am_id    = hdr.am_id;
    elem->reserved = hdr.reserved;
    elem->length   = hdr.length;
    elem->desc     = hdr.desc;
    elem->seq      = hdr.seq;
    __atomic_store_n(&elem->flags, hdr.flags, __ATOMIC_RELEASE);
}

static void fuzz_op_ctl(fuzz_in_t *in)
{
    uct_mm_fifo_ctl_t *ctl = fz.cur->tx->ctl;
    uint8_t mode           = fuzz_u8(in);
    uint64_t value;

    if (mode & 2) {
        fuzz_bytes(in, &value, sizeof(value));
    } else {
        value = fuzz_read_index() + (uint64_t)(int64_t)(int8_t)fuzz_u8(in);
    }
    if (mode & 4) {
        value |= UCT_MM_FIFO_HEAD_ARMED;
    }
    __atomic_store_n((mode & 1) ? &ctl->tail : &ctl->head, value,
                     __ATOMIC_RELEASE);
}

static void fuzz_op_short(fuzz_in_t *in)
{
    uint8_t payload[256];
    uint8_t id  = fuzz_u8(in) & 63; /* ids from 32 on are invalid */
    uint8_t len = fuzz_u8(in);
    uint64_t header;

    fuzz_bytes(in, &header, sizeof(header));
    fuzz_bytes(in, payload, len);
    (void)uct_ep_am_short(fz.cur->ep, id, header, payload, len);
}

static size_t fuzz_pack_fill(void *dest, void *arg)
{
    const size_t *fill = arg; /* {length, byte} */

    memset(dest, (int)fill[1], fill[0]);
    return fill[0];
}

static void fuzz_op_bcopy(fuzz_in_t *in)
{
    uint8_t id = fuzz_u8(in) & 63;
    size_t fill[2];
    uint16_t len;

    fuzz_bytes(in, &len, sizeof(len));
    fill[0] = len % (fz.cur->attr.cap.am.max_bcopy + 1);
    fill[1] = fuzz_u8(in);
    (void)uct_ep_am_bcopy(fz.cur->ep, id, fuzz_pack_fill, fill, 0);
}

static void fuzz_progress(unsigned n, int iface_only)
{
    while (n-- > 0) {
        if (iface_only) {
            uct_iface_progress(fz.cur->iface);
        } else {
            uct_worker_progress(fz.cur->worker);
        }
    }
}

static void fuzz_release(unsigned k)
{
    void *desc = fz.held[k];

    fz.held[k] = fz.held[--fz.num_held];
    uct_iface_release_desc(desc);
}

static void fuzz_op_misc(fuzz_in_t *in)
{
    uint8_t payload[256];
    uint8_t mode = fuzz_u8(in);
    uct_iov_t iov[2];
    uint8_t id, len;

    if (!(mode & 1)) {
        (void)uct_iface_event_arm(fz.cur->iface, UCT_EVENT_RECV);
        return;
    }
    id  = fuzz_u8(in) & 63;
    len = fuzz_u8(in);
    fuzz_bytes(in, payload, len);
    memset(iov, 0, sizeof(iov));
    iov[0].buffer = payload;
    iov[0].length = len / 2;
    iov[0].count  = 1;
    iov[1].buffer = payload + len / 2;
    iov[1].length = len - len / 2;
    iov[1].count  = 1;
    (void)uct_ep_am_short_iov(fz.cur->ep, id, iov, 2);
}

static void fuzz_run_ops(fuzz_in_t *in)
{
    unsigned ops;
    uint8_t arg;

    for (ops = 0; (in->left > 0) && (ops < FUZZ_MAX_OPS); ++ops) {
        switch (fuzz_u8(in) & 7) {
        case 0:
            fuzz_op_elem(in);
            break;
        case 1:
            fuzz_op_ctl(in);
            break;
        case 2:
            fuzz_op_short(in);
            break;
        case 3:
            fuzz_op_bcopy(in);
            break;
        case 4:
            arg = fuzz_u8(in);
            fuzz_progress(1 + (arg & 3), arg & 4);
            break;
        case 5:
            arg = fuzz_u8(in);
            if (fz.num_held > 0) {
                fuzz_release(arg % fz.num_held);
            }
            break;
        case 6:
            fz.keep_mask = fuzz_u8(in);
            break;
        default:
            fuzz_op_misc(in);
            break;
        }
    }
}

/* ------------------------------------------------------------------------
 * After the input: the FIFO in order, then messages sent in order
 */

/* Head and tail at the read index, no element ready for its next number,
 * each element naming its descriptor: a FIFO nobody wrote into */
static void fuzz_reset_fifo(void)
{
    const uct_mm_fifo_rx_t *rx = &fz.cur->mm->rx;
    uct_mm_fifo_view_t *tx     = fz.cur->tx;
    uint64_t r                 = rx->read_index;
    uct_mm_fifo_elem_t *elem;
    uint64_t index;

    for (index = r; index <= r + tx->mask; ++index) {
        elem         = uct_mm_fifo_elem(tx, index);
        elem->am_id  = 0;
        elem->length = 0;
        elem->desc   = rx->elem_desc[index & tx->mask];
        elem->seq    = (uint32_t)(index - (tx->mask + 1));
        __atomic_store_n(
            &elem->flags,
            (uint8_t)(uct_mm_fifo_owner(tx, index) ^ UCT_MM_FIFO_ELEM_OWNER),
            __ATOMIC_RELEASE);
    }
    __atomic_store_n(&tx->ctl->tail, r, __ATOMIC_RELEASE);
    __atomic_store_n(&tx->ctl->head, r, __ATOMIC_RELEASE);
}

/* Progresses until the expected message arrived, then once more */
static void fuzz_expect_delivery(const char *what)
{
    unsigned polls;

    for (polls = 0; (polls < FUZZ_FINAL_POLLS) && (fz.final_seen == 0);
         ++polls) {
        uct_worker_progress(fz.cur->worker);
    }
    fuzz_check(fz.final_seen == 1,
               "%s sent into a FIFO in order did not arrive within %u "
               "progress calls (read index %llu)",
               what, FUZZ_FINAL_POLLS, (unsigned long long)fuzz_read_index());
    fz.deliveries = 0;
    uct_worker_progress(fz.cur->worker);
    fuzz_check(fz.deliveries == 0, "%s was followed by %u other deliveries",
               what, fz.deliveries);
    fz.final_seen = 0;
}

static void fuzz_send_in_order(void)
{
    fuzz_iface_t *fi = fz.cur;
    size_t max_short = fi->attr.cap.am.max_short;
    size_t fill[2];
    uint8_t msg[512];
    uint64_t header;
    ucs_status_t status;
    ssize_t ret;
    size_t i;

    fz.deliveries = 0;
    uct_worker_progress(fi->worker);
    fuzz_check(fz.deliveries == 0,
               "%u messages delivered from a FIFO with no element ready",
               fz.deliveries);

    for (i = 0; i < sizeof(msg); ++i) {
        msg[i] = (uint8_t)(i * 7 + 1);
    }
    fz.final      = 1;
    fz.final_seen = 0;

    memcpy(&header, msg, sizeof(header));
    fz.expect     = msg;
    fz.expect_len = sizeof(header) + max_short;
    status        = uct_ep_am_short(fi->ep, FUZZ_FINAL_ID, header,
                                    msg + sizeof(header), (unsigned)max_short);
    fuzz_check(status == UCS_OK, "am_short into an empty FIFO: %s",
               ucs_status_string(status));
    fuzz_expect_delivery("am_short");

    fill[0] = fi->attr.cap.am.max_bcopy;
    fill[1] = 0xa5;
    memset(msg, 0xa5, fill[0]);
    fz.expect_len = fill[0];
    ret = uct_ep_am_bcopy(fi->ep, FUZZ_FINAL_ID, fuzz_pack_fill, fill, 0);
    fuzz_check(ret == (ssize_t)fill[0], "am_bcopy into an empty FIFO: %zd",
               ret);
    fuzz_expect_delivery("am_bcopy");

    fz.final = 0;
}

/* Every descriptor of the receiver is an element's or free, once */
static void fuzz_check_descs(void)
{
    const uct_mm_fifo_rx_t *rx = &fz.cur->mm->rx;
    uint8_t owner[FUZZ_MAX_DESCS];
    uint32_t i, d;

    fuzz_check(rx->num_free == fz.cur->spare_descs,
               "%u free descriptors with none held, %u at first", rx->num_free,
               fz.cur->spare_descs);
    memset(owner, 0, sizeof(owner));
    for (i = 0; i <= rx->view.mask; ++i) {
        d = rx->elem_desc[i];
        fuzz_check((d < rx->view.num_descs) && !owner[d],
                   "element %u has descriptor %u, of %u, taken already", i, d,
                   rx->view.num_descs);
        owner[d] = 1;
        fuzz_check(uct_mm_fifo_elem(fz.cur->tx, i)->desc == d,
                   "element %u names descriptor %u for senders, not %u", i,
                   uct_mm_fifo_elem(fz.cur->tx, i)->desc, d);
    }
    for (i = 0; i < rx->num_free; ++i) {
        d = rx->free_descs[i];
        fuzz_check((d < rx->view.num_descs) && !owner[d],
                   "free descriptor %u, of %u, taken already", d,
                   rx->view.num_descs);
        owner[d] = 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in_t in = {data, size};
    uint8_t mode;

    if (size < 1) {
        return 0;
    }
    mode         = fuzz_u8(&in);
    fz.cur       = &fz.ifaces[mode & 1];
    fz.keep_mask = mode >> 1;
    fz.num_held  = 0;

    fuzz_run_ops(&in);

    while (fz.num_held > 0) {
        fuzz_release(fz.num_held - 1);
    }
    fuzz_reset_fifo();
    fuzz_send_in_order();
    fuzz_check_descs();
    return 0;
}
