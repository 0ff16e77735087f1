/*
 * loop: an example transport module built outside the openuct tree.
 *
 * Component "loop" offers memory domain "loop", which offers transport
 * "loop" on device "loop0". Interfaces reach other loop interfaces of the
 * same process (connect-to-iface). Active messages are not delivered
 * inside the send call: a send copies the message into a ring owned by the
 * sending interface, and that interface's progress function delivers the
 * ring's messages to the receivers' handlers. This shows the parts a real
 * transport has:
 *
 *   - a send that may fail with UCS_ERR_NO_RESOURCE (the ring is full),
 *   - a pending queue per endpoint, scheduled on the interface's arbiter
 *     and dispatched from progress once the ring has room again,
 *   - flush, which completes when everything sent before it is delivered.
 *
 * Threading: one thread drives a worker and the interfaces on it; a
 * message is delivered from the sender's progress, so sender and receiver
 * should live on the same worker (or at least the same thread).
 *
 * Configuration: UCX_LOOP_RING_SIZE (messages in flight per interface) and
 * UCX_LOOP_SEG_SIZE (largest message), plus the common interface settings.
 */
#define _POSIX_C_SOURCE 200809L /* POSIX calls in strict C11 */

#include <uct/api/uct.h>
#include <uct/api/tl.h>
#include <uct/base/uct_component.h>
#include <uct/base/uct_iface.h>
#include <uct/base/uct_md.h>
#include <uct/base/uct_pending.h>
#include <ucs/datastruct/arbiter.h>
#include <ucs/datastruct/list.h>
#include <ucs/debug/log.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define UCT_LOOP_NAME       "loop"
#define UCT_LOOP_DEV_NAME   "loop0"
#define UCT_LOOP_SLOT_ALIGN 64

typedef struct uct_loop_iface_config {
    uct_iface_config_t super; /* common settings: keep first */
    unsigned ring_size;
    size_t seg_size;
} uct_loop_iface_config_t;

/* What precedes the data of a message in a ring slot */
typedef struct uct_loop_slot_hdr {
    uint64_t peer_id; /* the receiving interface */
    uint32_t length;
    uint8_t am_id;
} uct_loop_slot_hdr_t;

/* A flush waiting for the messages sent before it */
typedef struct uct_loop_flush {
    ucs_list_link_t list;
    uct_completion_t *comp;
    uint64_t seq; /* done once this many were delivered */
} uct_loop_flush_t;

typedef struct uct_loop_md {
    uct_md_t super;
} uct_loop_md_t;

typedef struct uct_loop_iface {
    uct_base_iface_t super; /* keep first */
    uint64_t id;            /* the interface address */
    ucs_list_link_t list;   /* in uct_loop_ifaces */
    size_t seg_size;
    char *ring; /* ring_size slots of slot_size bytes */
    size_t slot_size;
    size_t data_offset;      /* of the data within a slot */
    uint64_t ring_size;      /* a power of 2 */
    uint64_t head;           /* messages queued, ever */
    uint64_t tail;           /* messages delivered, ever */
    ucs_arbiter_t arbiter;   /* endpoints with pending requests */
    ucs_list_link_t flushes; /* uct_loop_flush_t, in seq order */
} uct_loop_iface_t;

typedef struct uct_loop_ep {
    uct_base_ep_t super; /* keep first */
    uint64_t peer_id;
    ucs_arbiter_group_t arb_group;
} uct_loop_ep_t;

/* Interfaces of this process, found by id when a message is delivered */
static UCS_LIST_HEAD(uct_loop_ifaces);
static pthread_mutex_t uct_loop_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t uct_loop_next_id     = 1;

/* The device address: tells this process apart from every other one */
static uint64_t uct_loop_process_token;

static ucs_config_field_t uct_loop_iface_config_table[] = {
    {"", "", NULL, ucs_offsetof(uct_loop_iface_config_t, super),
     UCS_CONFIG_TYPE_TABLE(uct_iface_config_table)},

    {"RING_SIZE", "16",
     "Messages an interface holds until its progress delivers them (a "
     "power of 2). A send beyond that returns UCS_ERR_NO_RESOURCE.",
     ucs_offsetof(uct_loop_iface_config_t, ring_size), UCS_CONFIG_TYPE_UINT},

    {"SEG_SIZE", "8k", "Largest active message, header included.",
     ucs_offsetof(uct_loop_iface_config_t, seg_size), UCS_CONFIG_TYPE_MEMUNITS},

    {NULL}};

static inline uct_loop_iface_t *uct_loop_iface(uct_iface_h tl_iface)
{
    return ucs_container_of(tl_iface, uct_loop_iface_t, super.super);
}

static inline uct_loop_ep_t *uct_loop_ep(uct_ep_h tl_ep)
{
    return ucs_container_of(tl_ep, uct_loop_ep_t, super.super);
}

static inline uct_loop_iface_t *uct_loop_ep_iface(uct_loop_ep_t *ep)
{
    return uct_loop_iface(ep->super.super.iface);
}

/* ------------------------------------------------------------------------
 * Memory domain: nothing to register, no remote keys
 */

static void uct_loop_md_close(uct_md_h md)
{
    free(ucs_container_of(md, uct_loop_md_t, super));
}

static ucs_status_t uct_loop_md_query(uct_md_h md, uct_md_attr_t *md_attr)
{
    uct_md_base_attr_init(md, md_attr);
    md_attr->cap.flags        = 0;
    md_attr->rkey_packed_size = 0;
    return UCS_OK;
}

static const uct_md_ops_t uct_loop_md_ops = {.close = uct_loop_md_close,
                                             .query = uct_loop_md_query};

static ucs_status_t uct_loop_md_open(uct_component_t *component,
                                     const char *md_name,
                                     const uct_md_config_t *config,
                                     uct_md_h *md_p)
{
    uct_loop_md_t *md;

    md = calloc(1, sizeof(*md));
    if (md == NULL) {
        ucs_error("loop: failed to allocate a memory domain");
        return UCS_ERR_NO_MEMORY;
    }

    uct_md_base_init(&md->super, &uct_loop_md_ops, component);
    *md_p = &md->super;
    return UCS_OK;
}

/* ------------------------------------------------------------------------
 * The ring
 */

static inline uct_loop_slot_hdr_t *uct_loop_slot(uct_loop_iface_t *iface,
                                                 uint64_t seq)
{
    return (uct_loop_slot_hdr_t *)(iface->ring +
                                   ((seq & (iface->ring_size - 1)) *
                                    iface->slot_size));
}

static inline int uct_loop_ring_has_room(const uct_loop_iface_t *iface)
{
    return (iface->head - iface->tail) < iface->ring_size;
}

/* The data area of the next free slot, addressed to @a ep's peer, or NULL
 * when the ring is full */
static inline void *uct_loop_slot_reserve(uct_loop_iface_t *iface,
                                          uct_loop_ep_t *ep, uint8_t id)
{
    uct_loop_slot_hdr_t *hdr;

    if (ucs_unlikely(!uct_loop_ring_has_room(iface))) {
        return NULL;
    }

    hdr          = uct_loop_slot(iface, iface->head);
    hdr->peer_id = ep->peer_id;
    hdr->am_id   = id;
    return (char *)hdr + iface->data_offset;
}

static inline void uct_loop_slot_commit(uct_loop_iface_t *iface, size_t length)
{
    uct_loop_slot_hdr_t *hdr = uct_loop_slot(iface, iface->head);

    hdr->length = (uint32_t)length;
    ++iface->head;
    uct_iface_trace_am(&iface->super, UCT_AM_TRACE_TYPE_SEND, hdr->am_id,
                       (char *)hdr + iface->data_offset, length);
}

/* Caller holds uct_loop_lock */
static uct_loop_iface_t *uct_loop_iface_find(uint64_t id)
{
    uct_loop_iface_t *iface;

    ucs_list_for_each(iface, &uct_loop_ifaces, list) {
        if (iface->id == id) {
            return iface;
        }
    }
    return NULL;
}

/* ------------------------------------------------------------------------
 * Endpoint operations
 */

static ucs_status_t uct_loop_ep_am_short(uct_ep_h tl_ep, uint8_t id,
                                         uint64_t header, const void *payload,
                                         unsigned length)
{
    uct_loop_ep_t *ep       = uct_loop_ep(tl_ep);
    uct_loop_iface_t *iface = uct_loop_ep_iface(ep);
    ucs_status_t status;
    char *data;

    status = uct_iface_check_am_id(&iface->super, id);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    status = uct_iface_check_length(&iface->super, "am_short", length,
                                    iface->seg_size - sizeof(header));
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    data = uct_loop_slot_reserve(iface, ep, id);
    if (data == NULL) {
        return UCS_ERR_NO_RESOURCE;
    }

    memcpy(data, &header, sizeof(header));
    memcpy(data + sizeof(header), payload, length);
    uct_loop_slot_commit(iface, sizeof(header) + length);
    return UCS_OK;
}

static ssize_t uct_loop_ep_am_bcopy(uct_ep_h tl_ep, uint8_t id,
                                    uct_pack_callback_t pack_cb, void *arg,
                                    unsigned flags)
{
    uct_loop_ep_t *ep       = uct_loop_ep(tl_ep);
    uct_loop_iface_t *iface = uct_loop_ep_iface(ep);
    ucs_status_t status;
    size_t length;
    void *data;

    status = uct_iface_check_am_id(&iface->super, id);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    data = uct_loop_slot_reserve(iface, ep, id);
    if (data == NULL) {
        return UCS_ERR_NO_RESOURCE;
    }

    length = pack_cb(data, arg);
    if (ucs_unlikely(length > iface->seg_size)) {
        /* The slot is followed by the next one: it has been overwritten */
        ucs_error("loop: am_bcopy pack callback wrote %zu bytes, more than "
                  "max_bcopy %zu; check uct_iface_query() limits",
                  length, iface->seg_size);
        return UCS_ERR_EXCEEDS_LIMIT;
    }

    uct_loop_slot_commit(iface, length);
    return (ssize_t)length;
}

static ucs_status_t
uct_loop_ep_pending_add(uct_ep_h tl_ep, uct_pending_req_t *req, unsigned flags)
{
    uct_loop_ep_t *ep       = uct_loop_ep(tl_ep);
    uct_loop_iface_t *iface = uct_loop_ep_iface(ep);

    if (uct_loop_ring_has_room(iface)) {
        return UCS_ERR_BUSY; /* the caller may send right away */
    }

    uct_pending_req_push(&iface->arbiter, &ep->arb_group, req);
    return UCS_OK;
}

static void uct_loop_ep_pending_purge(uct_ep_h tl_ep,
                                      uct_pending_purge_callback_t cb,
                                      void *arg)
{
    uct_loop_ep_t *ep = uct_loop_ep(tl_ep);

    uct_pending_queue_purge(&uct_loop_ep_iface(ep)->arbiter, &ep->arb_group, cb,
                            arg);
}

/* Completes now, or remembers @a comp until the ring drains to here */
static ucs_status_t uct_loop_iface_flush_common(uct_loop_iface_t *iface,
                                                uct_completion_t *comp)
{
    uct_loop_flush_t *flush;

    if (iface->tail == iface->head) {
        return UCS_OK;
    }

    if (comp != NULL) {
        flush = malloc(sizeof(*flush));
        if (flush == NULL) {
            ucs_error("loop: failed to allocate a flush request");
            return UCS_ERR_NO_MEMORY;
        }
        flush->comp = comp;
        flush->seq  = iface->head;
        ucs_list_add_tail(&iface->flushes, &flush->list);
    }
    return UCS_INPROGRESS;
}

static ucs_status_t uct_loop_ep_flush(uct_ep_h tl_ep, unsigned flags,
                                      uct_completion_t *comp)
{
    uct_loop_ep_t *ep = uct_loop_ep(tl_ep);

    /* Requests still queued on the endpoint have not been sent yet */
    if (!ucs_arbiter_group_is_empty(&ep->arb_group)) {
        return UCS_ERR_NO_RESOURCE;
    }

    /* The ring is shared by the interface's endpoints: wait for all */
    return uct_loop_iface_flush_common(uct_loop_ep_iface(ep), comp);
}

static ucs_status_t uct_loop_iface_flush(uct_iface_h tl_iface, unsigned flags,
                                         uct_completion_t *comp)
{
    return uct_loop_iface_flush_common(uct_loop_iface(tl_iface), comp);
}

static ucs_status_t uct_loop_ep_create(const uct_ep_params_t *params,
                                       uct_ep_h *ep_p)
{
    uct_loop_iface_t *iface = uct_loop_iface(params->iface);
    uct_loop_ep_t *ep;

    if (!(params->field_mask & UCT_EP_PARAM_FIELD_DEV_ADDR) ||
        !(params->field_mask & UCT_EP_PARAM_FIELD_IFACE_ADDR) ||
        (params->dev_addr == NULL) || (params->iface_addr == NULL)) {
        ucs_error("loop: endpoints connect to an interface; set dev_addr "
                  "and iface_addr in uct_ep_params_t");
        return UCS_ERR_INVALID_PARAM;
    }

    if (!uct_iface_is_reachable(params->iface, params->dev_addr,
                                params->iface_addr)) {
        ucs_error("loop: the peer interface is not in this process or was "
                  "closed; loop only connects within one process");
        return UCS_ERR_UNREACHABLE;
    }

    ep = calloc(1, sizeof(*ep));
    if (ep == NULL) {
        ucs_error("loop: failed to allocate an endpoint");
        return UCS_ERR_NO_MEMORY;
    }

    uct_base_ep_init(&ep->super, &iface->super);
    memcpy(&ep->peer_id, params->iface_addr, sizeof(ep->peer_id));
    ucs_arbiter_group_init(&ep->arb_group);

    *ep_p = &ep->super.super;
    return UCS_OK;
}

static void uct_loop_ep_destroy(uct_ep_h tl_ep)
{
    uct_loop_ep_t *ep = uct_loop_ep(tl_ep);

    if (!ucs_arbiter_group_is_empty(&ep->arb_group)) {
        ucs_warn("loop: endpoint %p destroyed with pending requests; call "
                 "uct_ep_pending_purge() first",
                 (void *)ep);
        uct_loop_ep_pending_purge(tl_ep, NULL, NULL);
    }

    /* Messages already in the ring are still delivered: they carry the
     * peer's id, not the endpoint */
    ucs_arbiter_group_cleanup(&ep->arb_group);
    uct_base_ep_cleanup(&ep->super);
    free(ep);
}

/* ------------------------------------------------------------------------
 * Interface operations
 */

/* Delivers queued messages, completes flushes, then runs pending requests
 * of endpoints waiting for room */
static unsigned uct_loop_iface_progress(uct_iface_h tl_iface)
{
    uct_loop_iface_t *iface = uct_loop_iface(tl_iface);
    uct_loop_flush_t *flush, *tmp;
    uct_loop_slot_hdr_t *hdr;
    uct_loop_iface_t *peer;
    unsigned count = 0;
    void *data;

    /* Bounded: messages sent by handlers wait for the next call */
    while ((iface->tail != iface->head) && (count < iface->ring_size)) {
        hdr  = uct_loop_slot(iface, iface->tail);
        data = (char *)hdr + iface->data_offset;

        pthread_mutex_lock(&uct_loop_lock);
        peer = uct_loop_iface_find(hdr->peer_id);
        pthread_mutex_unlock(&uct_loop_lock);

        if (peer != NULL) {
            uct_iface_trace_am(&peer->super, UCT_AM_TRACE_TYPE_RECV, hdr->am_id,
                               data, hdr->length);
            uct_iface_invoke_am(&peer->super, hdr->am_id, data, hdr->length, 0);
        } else {
            ucs_debug("loop: dropped a message for closed interface %llu",
                      (unsigned long long)hdr->peer_id);
        }

        ++iface->tail;
        ++count;
    }

    if (count == 0) {
        return 0;
    }

    ucs_list_for_each_safe(flush, tmp, &iface->flushes, list) {
        if (flush->seq > iface->tail) {
            break;
        }
        ucs_list_del(&flush->list);
        uct_invoke_completion(flush->comp, UCS_OK);
        free(flush);
    }

    ucs_arbiter_dispatch(&iface->arbiter, 1, uct_pending_req_dispatch_cb, NULL);
    return count;
}

static ucs_status_t uct_loop_iface_query(uct_iface_h tl_iface,
                                         uct_iface_attr_t *attr)
{
    uct_loop_iface_t *iface = uct_loop_iface(tl_iface);

    uct_base_iface_query(&iface->super, attr);

    attr->cap.flags = UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_AM_BCOPY |
                      UCT_IFACE_FLAG_PENDING | UCT_IFACE_FLAG_CONNECT_TO_IFACE |
                      UCT_IFACE_FLAG_CB_SYNC;
    attr->cap.am.max_short       = iface->seg_size - sizeof(uint64_t);
    attr->cap.am.max_bcopy       = iface->seg_size;
    attr->cap.am.opt_zcopy_align = 1;
    attr->cap.am.align_mtu       = 1;
    attr->device_addr_len        = sizeof(uct_loop_process_token);
    attr->iface_addr_len         = sizeof(iface->id);
    attr->ep_addr_len            = 0;
    attr->latency                = ucs_linear_func_make(50e-9, 0);
    attr->bandwidth.dedicated    = 4e9;
    attr->bandwidth.shared       = 0;
    attr->overhead               = 20e-9;
    attr->priority               = 0;
    return UCS_OK;
}

static ucs_status_t uct_loop_iface_get_device_address(uct_iface_h tl_iface,
                                                      uct_device_addr_t *addr)
{
    memcpy(addr, &uct_loop_process_token, sizeof(uct_loop_process_token));
    return UCS_OK;
}

static ucs_status_t uct_loop_iface_get_address(uct_iface_h tl_iface,
                                               uct_iface_addr_t *addr)
{
    uct_loop_iface_t *iface = uct_loop_iface(tl_iface);

    memcpy(addr, &iface->id, sizeof(iface->id));
    return UCS_OK;
}

static int uct_loop_iface_is_reachable(const uct_iface_h tl_iface,
                                       const uct_device_addr_t *dev_addr,
                                       const uct_iface_addr_t *iface_addr)
{
    uint64_t token, id;
    int found;

    if (dev_addr == NULL) {
        return 0;
    }

    memcpy(&token, dev_addr, sizeof(token));
    if (token != uct_loop_process_token) {
        return 0; /* another process */
    }

    if (iface_addr == NULL) {
        return 1;
    }

    memcpy(&id, iface_addr, sizeof(id));
    pthread_mutex_lock(&uct_loop_lock);
    found = (uct_loop_iface_find(id) != NULL);
    pthread_mutex_unlock(&uct_loop_lock);
    return found;
}

static void uct_loop_iface_close(uct_iface_h tl_iface)
{
    uct_loop_iface_t *iface = uct_loop_iface(tl_iface);
    uct_loop_flush_t *flush, *tmp;

    pthread_mutex_lock(&uct_loop_lock);
    ucs_list_del(&iface->list);
    pthread_mutex_unlock(&uct_loop_lock);

    if (iface->head != iface->tail) {
        ucs_debug("loop: interface %llu closed with %llu undelivered "
                  "messages",
                  (unsigned long long)iface->id,
                  (unsigned long long)(iface->head - iface->tail));
    }

    ucs_list_for_each_safe(flush, tmp, &iface->flushes, list) {
        ucs_list_del(&flush->list);
        uct_invoke_completion(flush->comp, UCS_ERR_CANCELED);
        free(flush);
    }

    ucs_arbiter_cleanup(&iface->arbiter);
    uct_base_iface_cleanup(&iface->super);
    free(iface->ring);
    free(iface);
}

/* Every operation not listed is filled in by uct_base_iface_init() with a
 * function that returns UCS_ERR_UNSUPPORTED */
static const uct_iface_ops_t uct_loop_iface_ops = {
    .ep_am_short              = uct_loop_ep_am_short,
    .ep_am_bcopy              = uct_loop_ep_am_bcopy,
    .ep_pending_add           = uct_loop_ep_pending_add,
    .ep_pending_purge         = uct_loop_ep_pending_purge,
    .ep_flush                 = uct_loop_ep_flush,
    .ep_fence                 = uct_base_ep_fence,
    .ep_create                = uct_loop_ep_create,
    .ep_destroy               = uct_loop_ep_destroy,
    .iface_flush              = uct_loop_iface_flush,
    .iface_fence              = uct_base_iface_fence,
    .iface_progress_enable    = uct_base_iface_progress_enable,
    .iface_progress_disable   = uct_base_iface_progress_disable,
    .iface_progress           = uct_loop_iface_progress,
    .iface_close              = uct_loop_iface_close,
    .iface_query              = uct_loop_iface_query,
    .iface_get_device_address = uct_loop_iface_get_device_address,
    .iface_get_address        = uct_loop_iface_get_address,
    .iface_is_reachable       = uct_loop_iface_is_reachable};

/* Lays out the ring so that handler data meets the requested alignment */
static ucs_status_t uct_loop_iface_ring_init(uct_loop_iface_t *iface)
{
    size_t align  = iface->super.am_alignment;
    size_t offset = iface->super.am_align_offset;
    size_t ring_align;

    iface->data_offset =
        ucs_align_up(sizeof(uct_loop_slot_hdr_t) + offset, align) - offset;
    ring_align = ucs_max(align, UCT_LOOP_SLOT_ALIGN);
    iface->slot_size =
        ucs_align_up(iface->data_offset + iface->seg_size, ring_align);

    if (posix_memalign((void **)&iface->ring, ring_align,
                       iface->slot_size * iface->ring_size) != 0) {
        ucs_error("loop: failed to allocate a ring of %llu x %zu bytes; "
                  "lower UCX_LOOP_RING_SIZE or UCX_LOOP_SEG_SIZE",
                  (unsigned long long)iface->ring_size, iface->slot_size);
        return UCS_ERR_NO_MEMORY;
    }
    return UCS_OK;
}

static ucs_status_t uct_loop_iface_open(uct_md_h md, uct_worker_h worker,
                                        const uct_iface_params_t *params,
                                        const uct_iface_config_t *tl_config,
                                        uct_iface_h *iface_p)
{
    const uct_loop_iface_config_t *config =
        ucs_container_of(tl_config, uct_loop_iface_config_t, super);
    uct_loop_iface_t *iface;
    ucs_status_t status;

    if (!ucs_is_pow2(config->ring_size)) {
        ucs_error("loop: UCX_LOOP_RING_SIZE=%u is not a power of 2; use "
                  "for example 16",
                  config->ring_size);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((config->seg_size <= sizeof(uint64_t)) ||
        (config->seg_size > UINT32_MAX)) {
        ucs_error("loop: UCX_LOOP_SEG_SIZE=%zu is out of range; use 16 "
                  "bytes to 4g",
                  config->seg_size);
        return UCS_ERR_INVALID_PARAM;
    }

    iface = calloc(1, sizeof(*iface));
    if (iface == NULL) {
        ucs_error("loop: failed to allocate an interface");
        return UCS_ERR_NO_MEMORY;
    }

    status = uct_base_iface_init(&iface->super, &uct_loop_iface_ops, md, worker,
                                 params, tl_config);
    if (status != UCS_OK) {
        free(iface);
        return status;
    }

    iface->seg_size  = config->seg_size;
    iface->ring_size = config->ring_size;
    iface->head      = 0;
    iface->tail      = 0;
    ucs_arbiter_init(&iface->arbiter);
    ucs_list_head_init(&iface->flushes);

    status = uct_loop_iface_ring_init(iface);
    if (status != UCS_OK) {
        ucs_arbiter_cleanup(&iface->arbiter);
        uct_base_iface_cleanup(&iface->super);
        free(iface);
        return status;
    }

    pthread_mutex_lock(&uct_loop_lock);
    iface->id = uct_loop_next_id++;
    ucs_list_add_tail(&uct_loop_ifaces, &iface->list);
    pthread_mutex_unlock(&uct_loop_lock);

    *iface_p = &iface->super.super;
    return UCS_OK;
}

/* ------------------------------------------------------------------------
 * Registration
 */

static ucs_status_t uct_loop_query_devices(uct_md_h md,
                                           uct_tl_device_resource_t **devs_p,
                                           unsigned *num_devices_p)
{
    return uct_single_device_resource(
        md, UCT_LOOP_DEV_NAME, UCT_DEVICE_TYPE_SELF, UCS_SYS_DEVICE_ID_UNKNOWN,
        devs_p, num_devices_p);
}

static uct_tl_t uct_loop_tl = {
    .name          = UCT_LOOP_NAME,
    .query_devices = uct_loop_query_devices,
    .iface_open    = uct_loop_iface_open,
    .config        = {.name   = "Loop example transport",
                      .prefix = "LOOP_",
                      .table  = uct_loop_iface_config_table,
                      .size   = sizeof(uct_loop_iface_config_t)}};

static uct_component_t uct_loop_component = {
    .name               = UCT_LOOP_NAME,
    .query_md_resources = uct_md_query_single_md_resource,
    .md_open            = uct_loop_md_open,
    .rkey_unpack        = uct_md_stub_rkey_unpack,
    .rkey_ptr           = NULL,
    .rkey_release       = uct_md_stub_rkey_release,
    .md_config          = {.name   = "Loop example memory domain",
                           .prefix = "LOOP_",
                           .table  = uct_md_config_table,
                           .size   = sizeof(uct_md_config_t)},
    .flags              = 0};

/* Runs once, when the module loader accepts this module */
static ucs_status_t uct_loop_init(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    uct_loop_process_token = ((uint64_t)getpid() << 32) ^
                             ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)ts.tv_nsec;

    uct_component_register(&uct_loop_component);
    uct_tl_register(&uct_loop_component, &uct_loop_tl);
    return UCS_OK;
}

UCT_MODULE_DEFINE(uct_loop_init)
