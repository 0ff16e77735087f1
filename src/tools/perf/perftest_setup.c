/*
 * uct_perftest: transport objects. Finds the memory domain that offers
 * TL/DEV, opens a side (async context, worker, interface), checks the
 * test fits the interface's capabilities, and connects two sides from
 * the address blobs they trade.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "perftest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Start of an address blob; dev, iface, ep address and rkey follow */
typedef struct {
    char tl_name[UCT_TL_NAME_MAX];
    uint32_t conn_to_ep;
    uint32_t dev_addr_len;
    uint32_t iface_addr_len;
    uint32_t ep_addr_len;
    uint32_t has_rkey;
    uint32_t rkey_len;
    uint64_t buf_addr;
    uint64_t half;
} perf_addr_hdr_t;

static int perf_fail(const char *what, ucs_status_t status)
{
    fprintf(stderr, "%s failed: %s\n", what, ucs_status_string(status));
    return -1;
}

/* Whether @a md lists TL/DEV; sets the device type when it does */
static int perf_md_has_resource(perf_ctx_t *ctx, uct_md_h md)
{
    uct_tl_resource_desc_t *resources;
    unsigned i, num_resources;
    int found = 0;

    if (uct_md_query_tl_resources(md, &resources, &num_resources) != UCS_OK) {
        return 0;
    }
    for (i = 0; i < num_resources; ++i) {
        if (!strcmp(resources[i].tl_name, ctx->params.tl_name) &&
            !strcmp(resources[i].dev_name, ctx->params.dev_name)) {
            ctx->dev_type = resources[i].dev_type;
            found         = 1;
            break;
        }
    }
    uct_release_tl_resource_list(resources);
    return found;
}

static int perf_md_try(perf_ctx_t *ctx, uct_component_h component,
                       const char *md_name)
{
    uct_md_config_t *config;
    uct_md_h md;

    if (uct_md_config_read(component, NULL, NULL, &config) != UCS_OK) {
        return 0;
    }
    if (uct_md_open(component, md_name, config, &md) != UCS_OK) {
        uct_config_release(config);
        return 0;
    }
    uct_config_release(config);

    if (!perf_md_has_resource(ctx, md)) {
        uct_md_close(md);
        return 0;
    }
    ctx->md        = md;
    ctx->component = component;
    return 1;
}

int perf_md_find(perf_ctx_t *ctx)
{
    uct_component_h *components;
    uct_component_attr_t attr;
    unsigned c, m, num_components;
    ucs_status_t status;

    status = uct_query_components(&components, &num_components);
    if (status != UCS_OK) {
        return perf_fail("uct_query_components", status);
    }

    for (c = 0; (c < num_components) && (ctx->md == NULL); ++c) {
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
        if (uct_component_query(components[c], &attr) != UCS_OK) {
            continue;
        }
        attr.md_resources =
            calloc(attr.md_resource_count + 1, sizeof(*attr.md_resources));
        if (attr.md_resources == NULL) {
            break;
        }
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
        if (uct_component_query(components[c], &attr) == UCS_OK) {
            for (m = 0; (m < attr.md_resource_count) && (ctx->md == NULL);
                 ++m) {
                perf_md_try(ctx, components[c], attr.md_resources[m].md_name);
            }
        }
        free(attr.md_resources);
    }
    /* Component handles stay valid after the list is released */
    uct_release_component_list(components);

    if (ctx->md == NULL) {
        fprintf(stderr,
                "transport %s on device %s not found; run uct_info "
                "-d to list them\n",
                ctx->params.tl_name, ctx->params.dev_name);
        return -1;
    }

    status = uct_md_query(ctx->md, &ctx->md_attr);
    if (status != UCS_OK) {
        return perf_fail("uct_md_query", status);
    }
    return 0;
}

void perf_md_close(perf_ctx_t *ctx)
{
    if (ctx->md != NULL) {
        uct_md_close(ctx->md);
        ctx->md = NULL;
    }
}

static ucs_status_t perf_am_handler(void *arg, void *data, size_t length,
                                    unsigned flags)
{
    perf_side_t *side = arg;

    ++side->am_rx;
    return UCS_OK;
}

/* rndv_lat: the peer's request to get message N (perf_rts_hdr_t, then the
 * packed rkey), kept for progress to act on. A ping-pong has at most one
 * in flight each way; a second one, or a malformed one, fails the run. */
static ucs_status_t perf_am_rts_handler(void *arg, void *data, size_t length,
                                        unsigned flags)
{
    perf_side_t *side = arg;
    perf_rts_hdr_t hdr;

    if (length < sizeof(hdr)) {
        goto bad;
    }
    memcpy(&hdr, data, sizeof(hdr));
    if ((hdr.rkey_len > sizeof(side->rts_rkey)) ||
        (length != sizeof(hdr) + hdr.rkey_len) || side->rts_ready) {
        goto bad;
    }
    side->rts_seq      = hdr.seq;
    side->rts_addr     = hdr.addr;
    side->rts_rkey_len = hdr.rkey_len;
    memcpy(side->rts_rkey, (const char *)data + sizeof(hdr), hdr.rkey_len);
    side->rts_ready = 1;
    ++side->am_rx;
    return UCS_OK;

bad:
    if (side->comp_status == UCS_OK) {
        side->comp_status = UCS_ERR_MESSAGE_TRUNCATED;
    }
    return UCS_OK;
}

/* am_bw: the responder reports how many messages it has (the header of
 * a short message); reports may only grow */
static ucs_status_t perf_am_ctrl_handler(void *arg, void *data, size_t length,
                                         unsigned flags)
{
    perf_side_t *side = arg;
    uint64_t count;

    if (length >= sizeof(count)) {
        memcpy(&count, data, sizeof(count));
        if (count > side->peer_rx) {
            side->peer_rx = count;
        }
    }
    return UCS_OK;
}

/* Loopback over a transport that reaches only its own interface: @a side
 * runs on the async context, worker and interface of @a owner */
void perf_side_borrow(perf_side_t *side, const perf_side_t *owner)
{
    side->async    = owner->async;
    side->worker   = owner->worker;
    side->iface    = owner->iface;
    side->attr     = owner->attr;
    side->borrowed = 1;
}

/*
 * The endpoint to the peer failed (reset, timed out). Only records the
 * first status: the loop that waits for the peer reports it. May run
 * from the async thread.
 */
static ucs_status_t perf_err_handler(void *arg, uct_ep_h ep,
                                     ucs_status_t status)
{
    perf_side_t *side = arg;

    if (side->peer_status == UCS_OK) {
        side->peer_status = status;
    }
    return UCS_OK;
}

int perf_side_open(perf_ctx_t *ctx, perf_side_t *side)
{
    uct_iface_config_t *config;
    uct_iface_params_t params;
    ucs_status_t status;

    status =
        ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK, &side->async);
    if (status != UCS_OK) {
        side->async = NULL;
        return perf_fail("ucs_async_context_create", status);
    }

    status =
        uct_worker_create(side->async, UCS_THREAD_MODE_SINGLE, &side->worker);
    if (status != UCS_OK) {
        side->worker = NULL;
        return perf_fail("uct_worker_create", status);
    }

    status = uct_md_iface_config_read(ctx->md, ctx->params.tl_name, NULL, NULL,
                                      &config);
    if (status != UCS_OK) {
        return perf_fail("uct_md_iface_config_read", status);
    }

    /* The capabilities are known only once the interface is open: the
     * handler is always given, and transports without
     * UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE never call it (the other
     * watches of perf_run_size() cover them) */
    memset(&params, 0, sizeof(params));
    params.field_mask =
        UCT_IFACE_PARAM_FIELD_OPEN_MODE | UCT_IFACE_PARAM_FIELD_DEVICE |
        UCT_IFACE_PARAM_FIELD_RX_HEADROOM | UCT_IFACE_PARAM_FIELD_ERR_HANDLER |
        UCT_IFACE_PARAM_FIELD_ERR_HANDLER_ARG |
        UCT_IFACE_PARAM_FIELD_ERR_HANDLER_FLAGS;
    params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = ctx->params.tl_name;
    params.mode.device.dev_name = ctx->params.dev_name;
    params.rx_headroom          = 0;
    params.err_handler          = perf_err_handler;
    params.err_handler_arg      = side;
    params.err_handler_flags    = UCT_CB_FLAG_ASYNC;

    status =
        uct_iface_open(ctx->md, side->worker, &params, config, &side->iface);
    uct_config_release(config);
    if (status != UCS_OK) {
        side->iface = NULL;
        return perf_fail("uct_iface_open", status);
    }

    status = uct_iface_query(side->iface, &side->attr);
    if (status != UCS_OK) {
        return perf_fail("uct_iface_query", status);
    }

    uct_iface_progress_enable(side->iface,
                              UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    return 0;
}

static int perf_unsupported(const perf_ctx_t *ctx, const char *why)
{
    const perf_params_t *p = &ctx->params;

    fprintf(stderr,
            "%s/%s cannot run %s with %s: %s (see uct_info -d -t "
            "%s)\n",
            p->tl_name, p->dev_name, perf_tests[p->test].name,
            perf_mode_names[p->mode], why, p->tl_name);
    return -1;
}

/* Limits of @a mode for the operation of the test */
static int perf_op_limits(const perf_ctx_t *ctx, const uct_iface_attr_t *attr,
                          uint64_t *flag, size_t *min, size_t *max,
                          size_t *max_iov)
{
    static const uint64_t am_flags[]  = {UCT_IFACE_FLAG_AM_SHORT,
                                         UCT_IFACE_FLAG_AM_BCOPY,
                                         UCT_IFACE_FLAG_AM_ZCOPY};
    static const uint64_t put_flags[] = {UCT_IFACE_FLAG_PUT_SHORT,
                                         UCT_IFACE_FLAG_PUT_BCOPY,
                                         UCT_IFACE_FLAG_PUT_ZCOPY};
    static const uint64_t get_flags[] = {UCT_IFACE_FLAG_GET_SHORT,
                                         UCT_IFACE_FLAG_GET_BCOPY,
                                         UCT_IFACE_FLAG_GET_ZCOPY};
    perf_mode_t mode                  = ctx->params.mode;

    *min     = 1;
    *max_iov = 1;
    switch (perf_tests[ctx->params.test].op) {
    case PERF_OP_AM:
        *flag = am_flags[mode];
        if (mode == PERF_MODE_SHORT) {
            /* An 8-byte header, then SIZE - 8 bytes of payload */
            *min = sizeof(uint64_t);
            *max = attr->cap.am.max_short + sizeof(uint64_t);
        } else if (mode == PERF_MODE_BCOPY) {
            *max = attr->cap.am.max_bcopy;
        } else {
            *min     = perf_max(attr->cap.am.min_zcopy, 1);
            *max     = attr->cap.am.max_zcopy;
            *max_iov = attr->cap.am.max_iov;
        }
        return 0;
    case PERF_OP_PUT:
        *flag = put_flags[mode];
        if (mode == PERF_MODE_SHORT) {
            *max = attr->cap.put.max_short;
        } else if (mode == PERF_MODE_BCOPY) {
            *max = attr->cap.put.max_bcopy;
        } else {
            *min     = perf_max(attr->cap.put.min_zcopy, 1);
            *max     = attr->cap.put.max_zcopy;
            *max_iov = attr->cap.put.max_iov;
        }
        return 0;
    case PERF_OP_GET:
        *flag = get_flags[mode];
        if (mode == PERF_MODE_SHORT) {
            *max = attr->cap.get.max_short;
        } else if (mode == PERF_MODE_BCOPY) {
            *max = attr->cap.get.max_bcopy;
        } else {
            *min     = perf_max(attr->cap.get.min_zcopy, 1);
            *max     = attr->cap.get.max_zcopy;
            *max_iov = attr->cap.get.max_iov;
        }
        return 0;
    case PERF_OP_RNDV:
        if (mode != PERF_MODE_ZCOPY) {
            return perf_unsupported(ctx, "rndv_lat moves its data with get "
                                         "zcopy; use -D zcopy");
        }
        *flag    = UCT_IFACE_FLAG_GET_ZCOPY;
        *min     = perf_max(attr->cap.get.min_zcopy, 1);
        *max     = attr->cap.get.max_zcopy;
        *max_iov = attr->cap.get.max_iov;
        return 0;
    default:
        if (mode != PERF_MODE_SHORT) {
            return perf_unsupported(ctx, "atomic operations take no data "
                                         "mode; leave -D out or use -D short");
        }
        *flag = UCT_IFACE_FLAG_ATOMIC_CPU | UCT_IFACE_FLAG_ATOMIC_DEVICE;
        *min  = 4;
        *max  = 8;
        return 0;
    }
}

int perf_check_caps(const perf_ctx_t *ctx, const uct_iface_attr_t *attr)
{
    const perf_params_t *p = &ctx->params;
    size_t min, max, max_iov;
    uint64_t flag, op_flags;
    char why[160];
    unsigned i;

    if (!(attr->cap.flags &
          (UCT_IFACE_FLAG_CONNECT_TO_IFACE | UCT_IFACE_FLAG_CONNECT_TO_EP))) {
        return perf_unsupported(ctx, "it connects neither to an interface "
                                     "nor to an endpoint");
    }

    if (perf_op_limits(ctx, attr, &flag, &min, &max, &max_iov) != 0) {
        return -1;
    }
    if (!(attr->cap.flags & flag)) {
        return perf_unsupported(ctx, "the operation is not supported");
    }
    if (max_iov < 1) {
        return perf_unsupported(ctx, "zcopy takes no iov entries");
    }

    if (perf_tests[p->test].op == PERF_OP_RNDV) {
        if (!(ctx->md_attr.cap.flags & UCT_MD_FLAG_REG)) {
            return perf_unsupported(ctx, "its memory domain does not "
                                         "register memory");
        }
        if ((attr->cap.flags &
             (UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_AM_BCOPY)) !=
            (UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_AM_BCOPY)) {
            return perf_unsupported(ctx, "it lacks am short or am bcopy");
        }
        if ((ctx->md_attr.rkey_packed_size > PERF_RNDV_RKEY_MAX) ||
            (sizeof(perf_rts_hdr_t) + ctx->md_attr.rkey_packed_size >
             attr->cap.am.max_bcopy)) {
            return perf_unsupported(ctx, "a packed rkey does not fit in an "
                                         "am bcopy");
        }
    }

    if (perf_tests[p->test].op == PERF_OP_ATOMIC_ADD) {
        for (i = 0; i < p->num_sizes; ++i) {
            if ((p->sizes[i] != 4) && (p->sizes[i] != 8)) {
                snprintf(why, sizeof(why),
                         "size %zu is not an atomic "
                         "width; use -s 4 or -s 8",
                         p->sizes[i]);
                return perf_unsupported(ctx, why);
            }
            op_flags = (p->sizes[i] == 4) ? attr->cap.atomic32.op_flags
                                          : attr->cap.atomic64.op_flags;
            if (!(op_flags & (1ul << UCT_ATOMIC_OP_ADD))) {
                snprintf(why, sizeof(why), "no %zu-bit atomic add",
                         p->sizes[i] * 8);
                return perf_unsupported(ctx, why);
            }
        }
        return 0;
    }

    for (i = 0; i < p->num_sizes; ++i) {
        if ((p->sizes[i] < min) || (p->sizes[i] > max)) {
            snprintf(why, sizeof(why),
                     "size %zu is outside the limits "
                     "%zu..%zu",
                     p->sizes[i], min, max);
            return perf_unsupported(ctx, why);
        }
    }
    return 0;
}

static void perf_comp_cb(uct_completion_t *self)
{
    perf_comp_t *comp = PERF_CONTAINER_OF(self, perf_comp_t, super);
    perf_side_t *side = comp->side;

    if ((self->status != UCS_OK) && (side->comp_status == UCS_OK)) {
        side->comp_status = self->status;
    }
    ++side->completed;
    side->free_comps[side->num_free++] = comp->index;
}

static int perf_side_comps_alloc(perf_ctx_t *ctx, perf_side_t *side)
{
    unsigned i;

    side->num_comps  = ctx->params.outstanding;
    side->comps      = calloc(side->num_comps, sizeof(*side->comps));
    side->free_comps = calloc(side->num_comps, sizeof(*side->free_comps));
    if ((side->comps == NULL) || (side->free_comps == NULL)) {
        fprintf(stderr, "out of memory for %u completions\n", side->num_comps);
        return -1;
    }
    for (i = 0; i < side->num_comps; ++i) {
        side->comps[i].super.func = perf_comp_cb;
        side->comps[i].side       = side;
        side->comps[i].index      = i;
        side->free_comps[i]       = i;
    }
    side->num_free    = side->num_comps;
    side->completed   = 0;
    side->comp_status = UCS_OK;
    return 0;
}

/* The buffer from the md itself, registered with it by the allocation */
static int perf_side_md_alloc(perf_ctx_t *ctx, perf_side_t *side)
{
    uct_alloc_method_t method = UCT_ALLOC_METHOD_MD;
    uct_mem_alloc_params_t params;
    ucs_status_t status;

    memset(&params, 0, sizeof(params));
    params.field_mask =
        UCT_MEM_ALLOC_PARAM_FIELD_FLAGS | UCT_MEM_ALLOC_PARAM_FIELD_MEM_TYPE |
        UCT_MEM_ALLOC_PARAM_FIELD_MDS | UCT_MEM_ALLOC_PARAM_FIELD_NAME;
    params.flags     = UCT_MD_MEM_ACCESS_ALL;
    params.mem_type  = UCS_MEMORY_TYPE_HOST;
    params.mds.mds   = &ctx->md;
    params.mds.count = 1;
    params.name      = "uct_perftest buffer";
    status = uct_mem_alloc(2 * side->half, &method, 1, &params, &side->mem);
    if (status != UCS_OK) {
        return perf_fail("uct_mem_alloc", status);
    }
    side->md_allocated = 1;
    side->buf          = side->mem.address;
    side->memh         = side->mem.memh;
    memset(side->buf, 0, 2 * side->half);
    return perf_side_comps_alloc(ctx, side);
}

static int perf_side_alloc(perf_ctx_t *ctx, perf_side_t *side, size_t max_size)
{
    ucs_status_t status;
    void *buf;

    side->half = (perf_max(max_size, 64) + 63) & ~(size_t)63;
    if (!(ctx->md_attr.cap.flags & UCT_MD_FLAG_REG) &&
        (ctx->md_attr.cap.flags & UCT_MD_FLAG_ALLOC)) {
        /* Peers reach only memory the md allocated (posix, sysv) */
        return perf_side_md_alloc(ctx, side);
    }
    if (posix_memalign(&buf, PERF_BUF_ALIGN, 2 * side->half) != 0) {
        fprintf(stderr, "cannot allocate a %zu-byte buffer\n", 2 * side->half);
        return -1;
    }
    side->buf = buf;
    memset(side->buf, 0, 2 * side->half);

    if (ctx->md_attr.cap.flags & UCT_MD_FLAG_REG) {
        status = uct_md_mem_reg(ctx->md, side->buf, 2 * side->half,
                                UCT_MD_MEM_ACCESS_ALL, &side->memh);
        if (status != UCS_OK) {
            side->memh = UCT_MEM_HANDLE_NULL;
            return perf_fail("uct_md_mem_reg", status);
        }
    }

    return perf_side_comps_alloc(ctx, side);
}

int perf_side_prepare(perf_ctx_t *ctx, perf_side_t *side, size_t max_size,
                      perf_blob_t *blob)
{
    const uct_iface_attr_t *attr = &side->attr;
    uct_ep_params_t ep_params;
    perf_addr_hdr_t hdr;
    ucs_status_t status;
    uint32_t cb_flags;
    char *p;

    if (perf_side_alloc(ctx, side, max_size) != 0) {
        return -1;
    }

    cb_flags =
        (attr->cap.flags & UCT_IFACE_FLAG_CB_SYNC) ? 0 : UCT_CB_FLAG_ASYNC;
    status = uct_iface_set_am_handler(
        side->iface, side->am_id,
        (perf_tests[ctx->params.test].op == PERF_OP_RNDV) ? perf_am_rts_handler
                                                          : perf_am_handler,
        side, cb_flags);
    if (status == UCS_OK) {
        status = uct_iface_set_am_handler(side->iface,
                                          side->am_id + PERF_AM_CTRL_OFFSET,
                                          perf_am_ctrl_handler, side, cb_flags);
    }
    if (status != UCS_OK) {
        return perf_fail("uct_iface_set_am_handler", status);
    }

    memset(&hdr, 0, sizeof(hdr));
    snprintf(hdr.tl_name, sizeof(hdr.tl_name), "%s", ctx->params.tl_name);
    hdr.conn_to_ep     = ctx->conn_to_ep;
    hdr.dev_addr_len   = attr->device_addr_len;
    hdr.iface_addr_len = ctx->conn_to_ep ? 0 : attr->iface_addr_len;
    hdr.ep_addr_len    = ctx->conn_to_ep ? attr->ep_addr_len : 0;
    hdr.has_rkey       = (side->memh != UCT_MEM_HANDLE_NULL);
    hdr.rkey_len       = hdr.has_rkey ? ctx->md_attr.rkey_packed_size : 0;
    hdr.buf_addr       = (uintptr_t)side->buf;
    hdr.half           = side->half;

    blob->length = sizeof(hdr) + hdr.dev_addr_len + hdr.iface_addr_len +
                   hdr.ep_addr_len + hdr.rkey_len;
    blob->data = calloc(1, blob->length);
    if (blob->data == NULL) {
        fprintf(stderr, "out of memory for the address\n");
        return -1;
    }
    memcpy(blob->data, &hdr, sizeof(hdr));
    p = (char *)blob->data + sizeof(hdr);

    status = uct_iface_get_device_address(side->iface, (uct_device_addr_t *)p);
    if (status != UCS_OK) {
        return perf_fail("uct_iface_get_device_address", status);
    }
    p += hdr.dev_addr_len;

    if (ctx->conn_to_ep) {
        /* The endpoint exists now; it connects when the peer's address
         * arrives */
        ep_params.field_mask = UCT_EP_PARAM_FIELD_IFACE;
        ep_params.iface      = side->iface;
        status               = uct_ep_create(&ep_params, &side->ep);
        if (status != UCS_OK) {
            side->ep = NULL;
            return perf_fail("uct_ep_create", status);
        }
        status = uct_ep_get_address(side->ep, (uct_ep_addr_t *)p);
        if (status != UCS_OK) {
            return perf_fail("uct_ep_get_address", status);
        }
        p += hdr.ep_addr_len;
    } else {
        status = uct_iface_get_address(side->iface, (uct_iface_addr_t *)p);
        if (status != UCS_OK) {
            return perf_fail("uct_iface_get_address", status);
        }
        p += hdr.iface_addr_len;
    }

    if (hdr.has_rkey) {
        status = uct_md_mkey_pack(ctx->md, side->memh, p);
        if (status != UCS_OK) {
            return perf_fail("uct_md_mkey_pack", status);
        }
    }
    return 0;
}

int perf_side_connect(perf_ctx_t *ctx, perf_side_t *side,
                      const perf_blob_t *peer)
{
    const uct_device_addr_t *dev_addr;
    const char *p = peer->data;
    uct_ep_params_t ep_params;
    perf_addr_hdr_t hdr;
    ucs_status_t status;

    if (peer->length < sizeof(hdr)) {
        fprintf(stderr, "the peer's address is truncated\n");
        return -1;
    }
    memcpy(&hdr, p, sizeof(hdr));
    hdr.tl_name[UCT_TL_NAME_MAX - 1] = '\0';
    if (strcmp(hdr.tl_name, ctx->params.tl_name) ||
        (hdr.conn_to_ep != (uint32_t)ctx->conn_to_ep) ||
        (hdr.half != side->half) ||
        (peer->length != sizeof(hdr) + hdr.dev_addr_len + hdr.iface_addr_len +
                             hdr.ep_addr_len + hdr.rkey_len)) {
        fprintf(stderr,
                "the peer runs transport '%s' with other settings "
                "than our '%s'; give both sides the same -x and -s\n",
                hdr.tl_name, ctx->params.tl_name);
        return -1;
    }
    p += sizeof(hdr);
    dev_addr = (const uct_device_addr_t *)p;
    p += hdr.dev_addr_len;

    if (ctx->conn_to_ep) {
        status =
            uct_ep_connect_to_ep(side->ep, dev_addr, (const uct_ep_addr_t *)p);
        if (status != UCS_OK) {
            return perf_fail("uct_ep_connect_to_ep", status);
        }
        p += hdr.ep_addr_len;
    } else {
        if (!uct_iface_is_reachable(side->iface, dev_addr,
                                    (const uct_iface_addr_t *)p)) {
            fprintf(stderr, "the peer is not reachable over %s/%s\n",
                    ctx->params.tl_name, ctx->params.dev_name);
            return -1;
        }
        ep_params.field_mask = UCT_EP_PARAM_FIELD_IFACE |
                               UCT_EP_PARAM_FIELD_DEV_ADDR |
                               UCT_EP_PARAM_FIELD_IFACE_ADDR;
        ep_params.iface      = side->iface;
        ep_params.dev_addr   = dev_addr;
        ep_params.iface_addr = (const uct_iface_addr_t *)p;
        status               = uct_ep_create(&ep_params, &side->ep);
        if (status != UCS_OK) {
            side->ep = NULL;
            return perf_fail("uct_ep_create", status);
        }
        p += hdr.iface_addr_len;
    }

    side->remote_buf = hdr.buf_addr;
    side->rkey.rkey  = UCT_INVALID_RKEY;
    if (hdr.has_rkey) {
        status = uct_rkey_unpack(ctx->component, p, &side->rkey);
        if (status != UCS_OK) {
            side->rkey.rkey = UCT_INVALID_RKEY;
            return perf_fail("uct_rkey_unpack", status);
        }
        side->have_rkey = 1;
    }
    return 0;
}

void perf_side_close(perf_ctx_t *ctx, perf_side_t *side)
{
    if (side->ep != NULL) {
        uct_ep_destroy(side->ep);
    }
    if (side->have_rkey) {
        uct_rkey_release(ctx->component, &side->rkey);
    }
    if (side->md_allocated) {
        uct_mem_free(&side->mem);
    } else {
        if (side->memh != UCT_MEM_HANDLE_NULL) {
            uct_md_mem_dereg(ctx->md, side->memh);
        }
        free(side->buf);
    }
    free(side->comps);
    free(side->free_comps);
    if (!side->borrowed) {
        /* a side that borrowed them leaves them to their owner, which
         * closes after it */
        if (side->iface != NULL) {
            uct_iface_close(side->iface);
        }
        if (side->worker != NULL) {
            uct_worker_destroy(side->worker);
        }
        if (side->async != NULL) {
            ucs_async_context_destroy(side->async);
        }
    }
    memset(side, 0, sizeof(*side));
}
