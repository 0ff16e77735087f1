/*
 * uct_info -d: every component, its memory domains, and every transport
 * resource with the attributes of an interface opened on it.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "uct_info.h"

#include <uct/api/uct.h>
#include <uct/base/uct_md.h>
#include <ucs/async/async.h>
#include <ucs/sys/topo.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UCT_INFO_STR_MAX 64

/* A bit and its name, for printing flag sets */
typedef struct {
    uint64_t bit;
    const char *name;
} uct_info_flag_name_t;

/* What the listing shares: the filter and one worker for all ifaces */
typedef struct {
    const char *tl_filter;
    unsigned dev_types; /* mask of UCS_BIT(uct_device_type_t) */
    ucs_async_context_t *async;
    uct_worker_h worker;
    unsigned num_matched;
    unsigned num_config_errors; /* reported by the parser */
} uct_info_ctx_t;

/* The interface configuration of one transport of a memory domain, read
 * once for all its devices: a bad value is reported once */
typedef struct {
    char tl_name[UCT_TL_NAME_MAX];
    uct_iface_config_t *config;
    ucs_status_t status;
} uct_info_tl_config_t;

static const uct_info_flag_name_t uct_info_component_flags[] = {
    {UCT_COMPONENT_FLAG_CM, "connection manager"},
    {UCT_COMPONENT_FLAG_RKEY_PTR, "rkey_ptr"},
    {0, NULL}};

static const uct_info_flag_name_t uct_info_md_flags[] = {
    {UCT_MD_FLAG_ALLOC, "alloc"},
    {UCT_MD_FLAG_REG, "reg"},
    {UCT_MD_FLAG_NEED_MEMH, "need memh"},
    {UCT_MD_FLAG_NEED_RKEY, "need rkey"},
    {UCT_MD_FLAG_ADVISE, "advise"},
    {UCT_MD_FLAG_FIXED, "fixed address"},
    {UCT_MD_FLAG_RKEY_PTR, "rkey_ptr"},
    {UCT_MD_FLAG_SOCKADDR, "sockaddr"},
    {UCT_MD_FLAG_INVALIDATE, "invalidate"},
    {UCT_MD_FLAG_EXPORTED_MKEY, "exported mkey"},
    {UCT_MD_FLAG_REG_DMABUF, "dmabuf registration"},
    {0, NULL}};

static const char *uct_info_atomic_op_names[] = {
    [UCT_ATOMIC_OP_ADD] = "add",   [UCT_ATOMIC_OP_AND] = "and",
    [UCT_ATOMIC_OP_OR] = "or",     [UCT_ATOMIC_OP_XOR] = "xor",
    [UCT_ATOMIC_OP_SWAP] = "swap", [UCT_ATOMIC_OP_CSWAP] = "cswap"};

static const uct_info_flag_name_t uct_info_conn_flags[] = {
    {UCT_IFACE_FLAG_CONNECT_TO_IFACE, "to iface"},
    {UCT_IFACE_FLAG_CONNECT_TO_EP, "to ep"},
    {UCT_IFACE_FLAG_CONNECT_TO_SOCKADDR, "to sockaddr"},
    {0, NULL}};

static const uct_info_flag_name_t uct_info_errhandle_flags[] = {
    {UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE, "peer failure"},
    {UCT_IFACE_FLAG_EP_CHECK, "ep check"},
    {UCT_IFACE_FLAG_EP_KEEPALIVE, "keepalive"},
    {UCT_IFACE_FLAG_ERRHANDLE_SHORT_BUF, "short buffer"},
    {UCT_IFACE_FLAG_ERRHANDLE_BCOPY_BUF, "bcopy buffer"},
    {UCT_IFACE_FLAG_ERRHANDLE_ZCOPY_BUF, "zcopy buffer"},
    {UCT_IFACE_FLAG_ERRHANDLE_AM_ID, "am id"},
    {UCT_IFACE_FLAG_ERRHANDLE_REMOTE_MEM, "remote memory"},
    {UCT_IFACE_FLAG_ERRHANDLE_BCOPY_LEN, "bcopy length"},
    {0, NULL}};

static const uct_info_flag_name_t uct_info_cb_flags[] = {
    {UCT_IFACE_FLAG_CB_SYNC, "sync"},
    {UCT_IFACE_FLAG_CB_ASYNC, "async"},
    {0, NULL}};

static const uct_info_flag_name_t uct_info_tag_flags[] = {
    {UCT_IFACE_FLAG_TAG_EAGER_SHORT, "eager short"},
    {UCT_IFACE_FLAG_TAG_EAGER_BCOPY, "eager bcopy"},
    {UCT_IFACE_FLAG_TAG_EAGER_ZCOPY, "eager zcopy"},
    {UCT_IFACE_FLAG_TAG_RNDV_ZCOPY, "rendezvous zcopy"},
    {0, NULL}};

static const uct_info_flag_name_t uct_info_event_flags[] = {
    {UCT_IFACE_FLAG_EVENT_SEND_COMP, "send completion"},
    {UCT_IFACE_FLAG_EVENT_RECV, "receive"},
    {UCT_IFACE_FLAG_EVENT_RECV_SIG, "signaled receive"},
    {UCT_IFACE_FLAG_EVENT_FD, "fd"},
    {UCT_IFACE_FLAG_EVENT_ASYNC_CB, "async callback"},
    {0, NULL}};

/* Flags printed on their own line or as part of a group above */
static const uint64_t uct_info_iface_known_flags =
    UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_AM_BCOPY |
    UCT_IFACE_FLAG_AM_ZCOPY | UCT_IFACE_FLAG_PENDING |
    UCT_IFACE_FLAG_PUT_SHORT | UCT_IFACE_FLAG_PUT_BCOPY |
    UCT_IFACE_FLAG_PUT_ZCOPY | UCT_IFACE_FLAG_GET_SHORT |
    UCT_IFACE_FLAG_GET_BCOPY | UCT_IFACE_FLAG_GET_ZCOPY |
    UCT_IFACE_FLAG_ATOMIC_CPU | UCT_IFACE_FLAG_ATOMIC_DEVICE |
    UCT_IFACE_FLAG_ERRHANDLE_SHORT_BUF | UCT_IFACE_FLAG_ERRHANDLE_BCOPY_BUF |
    UCT_IFACE_FLAG_ERRHANDLE_ZCOPY_BUF | UCT_IFACE_FLAG_ERRHANDLE_AM_ID |
    UCT_IFACE_FLAG_ERRHANDLE_REMOTE_MEM | UCT_IFACE_FLAG_ERRHANDLE_BCOPY_LEN |
    UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE | UCT_IFACE_FLAG_EP_CHECK |
    UCT_IFACE_FLAG_CONNECT_TO_IFACE | UCT_IFACE_FLAG_CONNECT_TO_EP |
    UCT_IFACE_FLAG_CONNECT_TO_SOCKADDR | UCT_IFACE_FLAG_AM_DUP |
    UCT_IFACE_FLAG_CB_SYNC | UCT_IFACE_FLAG_CB_ASYNC |
    UCT_IFACE_FLAG_EP_KEEPALIVE | UCT_IFACE_FLAG_TAG_EAGER_SHORT |
    UCT_IFACE_FLAG_TAG_EAGER_BCOPY | UCT_IFACE_FLAG_TAG_EAGER_ZCOPY |
    UCT_IFACE_FLAG_TAG_RNDV_ZCOPY | UCT_IFACE_FLAG_INTER_NODE;

/* ------------------------------------------------------------------------
 * Formatting helpers
 */

/* "unlimited", "8K", "1M" or a plain number */
static const char *uct_info_size_str(uint64_t size, char *buf, size_t max)
{
    static const char *suffixes[] = {"", "K", "M", "G", "T", "P"};
    unsigned i                    = 0;

    if ((size == UINT64_MAX) || (size == SIZE_MAX)) {
        snprintf(buf, max, "unlimited");
        return buf;
    }

    while ((size >= 1024) && ((size % 1024) == 0) &&
           (i + 1 < ucs_static_array_size(suffixes))) {
        size /= 1024;
        ++i;
    }
    snprintf(buf, max, "%llu%s", (unsigned long long)size, suffixes[i]);
    return buf;
}

/* Comma-separated names of the bits of @a flags found in @a names */
static const char *uct_info_flags_str(uint64_t flags,
                                      const uct_info_flag_name_t *names,
                                      char *buf, size_t max)
{
    size_t len = 0;

    buf[0] = '\0';
    for (; names->name != NULL; ++names) {
        if ((flags & names->bit) && (len < max)) {
            len += snprintf(buf + len, max - len, "%s%s", (len > 0) ? ", " : "",
                            names->name);
        }
    }
    return buf;
}

static const char *uct_info_atomic_ops_str(uint64_t ops, char *buf, size_t max)
{
    size_t len = 0;
    unsigned op;

    buf[0] = '\0';
    for (op = 0; op < UCT_ATOMIC_OP_LAST; ++op) {
        if ((ops & UCS_BIT(op)) && (len < max)) {
            len += snprintf(buf + len, max - len, "%s%s", (len > 0) ? ", " : "",
                            uct_info_atomic_op_names[op]);
        }
    }
    return buf;
}

/* A line "<label>: <value>" aligned like the rest of the report */
#define uct_info_line(_indent, _label, _fmt, ...) \
    printf("#%*s%*s: " _fmt "\n", (_indent), "", 18, (_label), ##__VA_ARGS__)

/* ------------------------------------------------------------------------
 * Interface attributes
 */

/* One line for an operation kind: "am_short: <= 8K" */
static void uct_info_print_op(const char *label, uint64_t cap_flags,
                              uint64_t flag, const char *what)
{
    if (cap_flags & flag) {
        uct_info_line(6, label, "%s", what);
    }
}

static void uct_info_print_zcopy(const char *label, uint64_t cap_flags,
                                 uint64_t flag, size_t min_zcopy,
                                 size_t max_zcopy, size_t max_iov,
                                 size_t opt_align, size_t align_mtu,
                                 const size_t *max_hdr)
{
    char min_str[UCT_INFO_STR_MAX], max_str[UCT_INFO_STR_MAX];
    char hdr_str[UCT_INFO_STR_MAX], align_str[UCT_INFO_STR_MAX];
    char mtu_str[UCT_INFO_STR_MAX];

    if (!(cap_flags & flag)) {
        return;
    }

    uct_info_size_str(min_zcopy, min_str, sizeof(min_str));
    uct_info_size_str(max_zcopy, max_str, sizeof(max_str));
    uct_info_size_str(opt_align, align_str, sizeof(align_str));
    uct_info_size_str(align_mtu, mtu_str, sizeof(mtu_str));
    if (max_hdr != NULL) {
        uct_info_line(6, label,
                      "%s..%s, header <= %s, up to %zu iov, "
                      "align %s, mtu %s",
                      min_str, max_str,
                      uct_info_size_str(*max_hdr, hdr_str, sizeof(hdr_str)),
                      max_iov, align_str, mtu_str);
    } else {
        uct_info_line(6, label, "%s..%s, up to %zu iov, align %s, mtu %s",
                      min_str, max_str, max_iov, align_str, mtu_str);
    }
}

static void uct_info_print_short_bcopy(const char *label, uint64_t cap_flags,
                                       uint64_t flag, size_t max)
{
    char str[UCT_INFO_STR_MAX], line[UCT_INFO_STR_MAX + 4];

    if ((max == SIZE_MAX) || (max == UINT64_MAX)) {
        snprintf(line, sizeof(line), "unlimited");
    } else {
        snprintf(line, sizeof(line), "<= %s",
                 uct_info_size_str(max, str, sizeof(str)));
    }
    uct_info_print_op(label, cap_flags, flag, line);
}

static void uct_info_print_atomics(const uct_iface_attr_t *attr)
{
    char str[128];

    if (attr->cap.flags & UCT_IFACE_FLAG_ATOMIC_CPU) {
        uct_info_line(6, "atomic domain", "cpu");
    }
    if (attr->cap.flags & UCT_IFACE_FLAG_ATOMIC_DEVICE) {
        uct_info_line(6, "atomic domain", "device");
    }
    if (attr->cap.atomic32.op_flags != 0) {
        uct_info_line(6, "atomic32 post", "%s",
                      uct_info_atomic_ops_str(attr->cap.atomic32.op_flags, str,
                                              sizeof(str)));
    }
    if (attr->cap.atomic32.fop_flags != 0) {
        uct_info_line(6, "atomic32 fetch", "%s",
                      uct_info_atomic_ops_str(attr->cap.atomic32.fop_flags, str,
                                              sizeof(str)));
    }
    if (attr->cap.atomic64.op_flags != 0) {
        uct_info_line(6, "atomic64 post", "%s",
                      uct_info_atomic_ops_str(attr->cap.atomic64.op_flags, str,
                                              sizeof(str)));
    }
    if (attr->cap.atomic64.fop_flags != 0) {
        uct_info_line(6, "atomic64 fetch", "%s",
                      uct_info_atomic_ops_str(attr->cap.atomic64.fop_flags, str,
                                              sizeof(str)));
    }
}

static void uct_info_print_flag_group(const char *label, uint64_t flags,
                                      const uct_info_flag_name_t *names)
{
    char str[256];

    uct_info_flags_str(flags, names, str, sizeof(str));
    uct_info_line(6, label, "%s", (str[0] != '\0') ? str : "none");
}

static void uct_info_print_iface_attr(const uct_iface_attr_t *attr)
{
    uint64_t flags = attr->cap.flags;
    char str[UCT_INFO_STR_MAX];
    uint64_t other;

    printf("#\n#      capabilities:\n");
    uct_info_line(6, "bandwidth",
                  "%.2f MB/s dedicated + %.2f MB/s "
                  "shared/ppn",
                  attr->bandwidth.dedicated / 1e6,
                  attr->bandwidth.shared / 1e6);
    uct_info_line(6, "latency", "%.0f nsec + %.2f nsec per ep",
                  attr->latency.c * 1e9, attr->latency.m * 1e9);
    uct_info_line(6, "overhead", "%.0f nsec", attr->overhead * 1e9);

    uct_info_print_short_bcopy("am_short", flags, UCT_IFACE_FLAG_AM_SHORT,
                               attr->cap.am.max_short);
    uct_info_print_short_bcopy("am_bcopy", flags, UCT_IFACE_FLAG_AM_BCOPY,
                               attr->cap.am.max_bcopy);
    uct_info_print_zcopy("am_zcopy", flags, UCT_IFACE_FLAG_AM_ZCOPY,
                         attr->cap.am.min_zcopy, attr->cap.am.max_zcopy,
                         attr->cap.am.max_iov, attr->cap.am.opt_zcopy_align,
                         attr->cap.am.align_mtu, &attr->cap.am.max_hdr);
    uct_info_print_short_bcopy("put_short", flags, UCT_IFACE_FLAG_PUT_SHORT,
                               attr->cap.put.max_short);
    uct_info_print_short_bcopy("put_bcopy", flags, UCT_IFACE_FLAG_PUT_BCOPY,
                               attr->cap.put.max_bcopy);
    uct_info_print_zcopy("put_zcopy", flags, UCT_IFACE_FLAG_PUT_ZCOPY,
                         attr->cap.put.min_zcopy, attr->cap.put.max_zcopy,
                         attr->cap.put.max_iov, attr->cap.put.opt_zcopy_align,
                         attr->cap.put.align_mtu, NULL);
    uct_info_print_short_bcopy("get_short", flags, UCT_IFACE_FLAG_GET_SHORT,
                               attr->cap.get.max_short);
    uct_info_print_short_bcopy("get_bcopy", flags, UCT_IFACE_FLAG_GET_BCOPY,
                               attr->cap.get.max_bcopy);
    uct_info_print_zcopy("get_zcopy", flags, UCT_IFACE_FLAG_GET_ZCOPY,
                         attr->cap.get.min_zcopy, attr->cap.get.max_zcopy,
                         attr->cap.get.max_iov, attr->cap.get.opt_zcopy_align,
                         attr->cap.get.align_mtu, NULL);
    uct_info_print_op("pending", flags, UCT_IFACE_FLAG_PENDING, "yes");
    uct_info_print_op("am_dup", flags, UCT_IFACE_FLAG_AM_DUP,
                      "yes (a message may arrive twice)");
    uct_info_print_op("inter-node", flags, UCT_IFACE_FLAG_INTER_NODE, "yes");
    uct_info_print_atomics(attr);

    uct_info_print_flag_group("connection", flags, uct_info_conn_flags);
    uct_info_print_flag_group("error handling", flags,
                              uct_info_errhandle_flags);
    uct_info_print_flag_group("am callbacks", flags, uct_info_cb_flags);
    if (flags &
        (UCT_IFACE_FLAG_TAG_EAGER_SHORT | UCT_IFACE_FLAG_TAG_EAGER_BCOPY |
         UCT_IFACE_FLAG_TAG_EAGER_ZCOPY | UCT_IFACE_FLAG_TAG_RNDV_ZCOPY)) {
        uct_info_print_flag_group("tag offload", flags, uct_info_tag_flags);
    }
    uct_info_print_flag_group("events", attr->cap.event_flags,
                              uct_info_event_flags);

    other = flags & ~uct_info_iface_known_flags;
    if (other != 0) {
        uct_info_line(6, "other flags", "0x%llx", (unsigned long long)other);
    }

    uct_info_line(6, "device priority", "%u", (unsigned)attr->priority);
    uct_info_line(6, "device num paths", "%u", attr->dev_num_paths);
    uct_info_line(6, "max eps", "%s",
                  uct_info_size_str(attr->max_num_eps, str, sizeof(str)));
    uct_info_line(6, "device address", "%zu bytes", attr->device_addr_len);
    if (flags & UCT_IFACE_FLAG_CONNECT_TO_IFACE) {
        uct_info_line(6, "iface address", "%zu bytes", attr->iface_addr_len);
    }
    if (flags & UCT_IFACE_FLAG_CONNECT_TO_EP) {
        uct_info_line(6, "ep address", "%zu bytes", attr->ep_addr_len);
    }
}

/* ------------------------------------------------------------------------
 * Transport resources
 */

static const char *uct_info_sys_device_str(ucs_sys_device_t sys_device,
                                           char *buf, size_t max)
{
    ucs_sys_bus_id_t bus_id;
    size_t len;
    int numa;

    if (sys_device == UCS_SYS_DEVICE_ID_UNKNOWN) {
        snprintf(buf, max, "unknown");
        return buf;
    }

    len = snprintf(buf, max, "%s", ucs_topo_sys_device_get_name(sys_device));
    if ((len < max) &&
        (ucs_topo_get_device_bus_id(sys_device, &bus_id) == UCS_OK)) {
        len += snprintf(buf + len, max - len, " (" UCS_SYS_BUS_ID_FMT,
                        UCS_SYS_BUS_ID_ARG(&bus_id));
        numa = ucs_topo_sys_device_get_numa_node(sys_device);
        if ((len < max) && (numa != UCS_NUMA_NODE_UNDEFINED)) {
            len += snprintf(buf + len, max - len, ", numa node %d", numa);
        }
        if (len < max) {
            snprintf(buf + len, max - len, ")");
        }
    }
    return buf;
}

/* The configuration of @a tl_name in @a md, read unless it is cached */
static const uct_info_tl_config_t *
uct_info_tl_config_get(uct_info_ctx_t *ctx, uct_md_h md, const char *tl_name,
                       uct_info_tl_config_t *cache)
{
    if ((cache->tl_name[0] != '\0') && !strcmp(cache->tl_name, tl_name)) {
        return cache;
    }

    uct_config_release(cache->config);
    snprintf(cache->tl_name, sizeof(cache->tl_name), "%s", tl_name);
    cache->config = NULL;
    cache->status =
        uct_md_iface_config_read(md, tl_name, NULL, NULL, &cache->config);
    if (cache->status != UCS_OK) {
        ++ctx->num_config_errors;
    }
    return cache;
}

static void uct_info_print_resource(uct_info_ctx_t *ctx, uct_md_h md,
                                    const uct_tl_resource_desc_t *resource,
                                    uct_info_tl_config_t *tl_config)
{
    const uct_info_tl_config_t *config;
    uct_iface_params_t params;
    uct_iface_attr_t attr;
    char str[UCT_INFO_STR_MAX];
    ucs_status_t status;
    uct_iface_h iface;

    printf("#\n");
    printf("#      Transport: %s\n", resource->tl_name);
    printf("#         Device: %s\n", resource->dev_name);
    printf("#           Type: %s\n",
           (resource->dev_type < UCT_DEVICE_TYPE_LAST)
               ? uct_device_type_names[resource->dev_type]
               : "?");
    printf("#  System device: %s\n",
           uct_info_sys_device_str(resource->sys_device, str, sizeof(str)));

    config = uct_info_tl_config_get(ctx, md, resource->tl_name, tl_config);
    if (config->status != UCS_OK) {
        printf("#  " UCT_TL_RESOURCE_DESC_FMT ": not opened: cannot read "
               "the configuration of %s: %s\n",
               UCT_TL_RESOURCE_DESC_ARG(resource), resource->tl_name,
               ucs_status_string(config->status));
        return;
    }

    memset(&params, 0, sizeof(params));
    params.field_mask = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
                        UCT_IFACE_PARAM_FIELD_DEVICE |
                        UCT_IFACE_PARAM_FIELD_RX_HEADROOM;
    params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = resource->tl_name;
    params.mode.device.dev_name = resource->dev_name;
    params.rx_headroom          = 0;

    status = uct_iface_open(md, ctx->worker, &params, config->config, &iface);
    if (status != UCS_OK) {
        printf("#  " UCT_TL_RESOURCE_DESC_FMT ": cannot open: %s\n",
               UCT_TL_RESOURCE_DESC_ARG(resource), ucs_status_string(status));
        return;
    }

    status = uct_iface_query(iface, &attr);
    if (status == UCS_OK) {
        uct_info_print_iface_attr(&attr);
    } else {
        printf("#  " UCT_TL_RESOURCE_DESC_FMT ": cannot query: %s\n",
               UCT_TL_RESOURCE_DESC_ARG(resource), ucs_status_string(status));
    }
    uct_iface_close(iface);
}

/* ------------------------------------------------------------------------
 * Memory domains and components
 */

static void uct_info_print_md_attr(const uct_md_attr_t *attr)
{
    char str[256], size_str[UCT_INFO_STR_MAX];
    unsigned t;

    printf("#     Component: %s\n", attr->component_name);
    uct_info_flags_str(attr->cap.flags, uct_info_md_flags, str, sizeof(str));
    printf("#         flags: %s\n", (str[0] != '\0') ? str : "none");
    if (attr->cap.flags & UCT_MD_FLAG_ALLOC) {
        printf(
            "#      allocate: %s\n",
            uct_info_size_str(attr->cap.max_alloc, size_str, sizeof(size_str)));
    }
    if (attr->cap.flags & UCT_MD_FLAG_REG) {
        printf("#      register: %s, cost: %.0f nsec + %.3f nsec/KB\n",
               uct_info_size_str(attr->cap.max_reg, size_str, sizeof(size_str)),
               attr->reg_cost.c * 1e9, attr->reg_cost.m * 1e9 * 1024);
    }
    printf("#    remote key: %zu bytes\n", attr->rkey_packed_size);

    /* One line per memory type the md deals with, naming what it does */
    for (t = 0; t < UCS_MEMORY_TYPE_LAST; ++t) {
        uint64_t bit = UCS_BIT(t);
        size_t len   = 0;

        str[0] = '\0';
        if (attr->cap.access_mem_types & bit) {
            len += snprintf(str + len, sizeof(str) - len, "access");
        }
        if (attr->cap.reg_mem_types & bit) {
            len += snprintf(str + len, sizeof(str) - len, "%sregister",
                            (len > 0) ? ", " : "");
        }
        if (attr->cap.alloc_mem_types & bit) {
            len += snprintf(str + len, sizeof(str) - len, "%sallocate",
                            (len > 0) ? ", " : "");
        }
        if (attr->cap.detect_mem_types & bit) {
            len += snprintf(str + len, sizeof(str) - len, "%sdetect",
                            (len > 0) ? ", " : "");
        }
        if (len > 0) {
            printf("#   memory type: %s (%s)\n", ucs_memory_type_names[t], str);
        }
    }
}

static int uct_info_resource_matches(const uct_info_ctx_t *ctx,
                                     const uct_tl_resource_desc_t *resource)
{
    return ((ctx->tl_filter == NULL) ||
            !strcmp(ctx->tl_filter, resource->tl_name)) &&
           (ctx->dev_types & UCS_BIT(resource->dev_type));
}

/* Tells whether -D limits the listing */
static int uct_info_filtered_by_type(const uct_info_ctx_t *ctx)
{
    return ctx->dev_types != UCS_MASK(UCT_DEVICE_TYPE_LAST);
}

/* Tells whether -t or -D limits the listing */
static int uct_info_filtered(const uct_info_ctx_t *ctx)
{
    return (ctx->tl_filter != NULL) || uct_info_filtered_by_type(ctx);
}

static void uct_info_print_md(uct_info_ctx_t *ctx, uct_component_h component,
                              const char *md_name)
{
    uct_info_tl_config_t tl_config = {"", NULL, UCS_OK};
    uct_tl_resource_desc_t *resources;
    uct_md_config_t *md_config;
    unsigned i, num_resources, num_matched;
    uct_md_attr_t md_attr;
    ucs_status_t status;
    uct_md_h md;

    status = uct_md_config_read(component, NULL, NULL, &md_config);
    if (status != UCS_OK) {
        printf("#\n# Memory domain: %s: cannot read configuration: %s\n",
               md_name, ucs_status_string(status));
        ++ctx->num_config_errors;
        return;
    }

    status = uct_md_open(component, md_name, md_config, &md);
    uct_config_release(md_config);
    if (status != UCS_OK) {
        printf("#\n# Memory domain: %s: cannot open: %s\n", md_name,
               ucs_status_string(status));
        return;
    }

    status = uct_md_query_tl_resources(md, &resources, &num_resources);
    if (status != UCS_OK) {
        printf("#\n# Memory domain: %s: cannot list transports: %s\n", md_name,
               ucs_status_string(status));
        /* a bad UCX_NET_DEVICES, reported by the parser */
        ctx->num_config_errors += (status == UCS_ERR_INVALID_PARAM);
        goto out_close_md;
    }

    num_matched = 0;
    for (i = 0; i < num_resources; ++i) {
        num_matched += uct_info_resource_matches(ctx, &resources[i]);
    }
    if (uct_info_filtered(ctx) && (num_matched == 0)) {
        goto out_release;
    }

    printf("#\n# Memory domain: %s\n", md_name);
    status = uct_md_query(md, &md_attr);
    if (status == UCS_OK) {
        uct_info_print_md_attr(&md_attr);
    } else {
        printf("#   cannot query: %s\n", ucs_status_string(status));
    }
    uct_md_print_info(md, stdout);

    if (num_resources == 0) {
        printf("#   < no supported devices found >\n");
    }
    for (i = 0; i < num_resources; ++i) {
        if (uct_info_resource_matches(ctx, &resources[i])) {
            uct_info_print_resource(ctx, md, &resources[i], &tl_config);
            ++ctx->num_matched;
        }
    }
    uct_config_release(tl_config.config);

out_release:
    uct_release_tl_resource_list(resources);
out_close_md:
    uct_md_close(md);
}

/* A component's connection manager, as ucx_info -d shows it */
static void uct_info_print_cm(uct_info_ctx_t *ctx, uct_component_h component,
                              const char *name)
{
    uct_cm_config_t *config;
    uct_cm_attr_t attr;
    ucs_status_t status;
    uct_cm_h cm;

    printf("#\n# Connection manager: %s\n", name);
    status = uct_cm_config_read(component, NULL, NULL, &config);
    if (status != UCS_OK) {
        printf("#      cannot read configuration: %s\n",
               ucs_status_string(status));
        ++ctx->num_config_errors;
        return;
    }
    status = uct_cm_open(component, ctx->worker, config, &cm);
    uct_config_release(config);
    if (status != UCS_OK) {
        printf("#      cannot open: %s\n", ucs_status_string(status));
        if (status == UCS_ERR_INVALID_PARAM) {
            ++ctx->num_config_errors; /* a value out of its range */
        }
        return;
    }
    attr.field_mask = UCT_CM_ATTR_FIELD_MAX_CONN_PRIV;
    status          = uct_cm_query(cm, &attr);
    if (status == UCS_OK) {
        printf("#      max_conn_priv: %zu bytes\n", attr.max_conn_priv);
    } else {
        printf("#      cannot query: %s\n", ucs_status_string(status));
    }
    uct_cm_close(cm);
    ++ctx->num_matched;
}

static void uct_info_print_component(uct_info_ctx_t *ctx,
                                     uct_component_h component)
{
    uct_component_attr_t attr;
    ucs_status_t status;
    char str[128];
    unsigned i;

    attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME |
                      UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT |
                      UCT_COMPONENT_ATTR_FIELD_FLAGS;
    status = uct_component_query(component, &attr);
    if (status != UCS_OK) {
        printf("# Component: cannot query: %s\n", ucs_status_string(status));
        return;
    }

    attr.md_resources =
        calloc(attr.md_resource_count + 1, sizeof(*attr.md_resources));
    if (attr.md_resources == NULL) {
        printf("# Component: %s: out of memory\n", attr.name);
        return;
    }

    attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
    status          = uct_component_query(component, &attr);
    if (status != UCS_OK) {
        printf("# Component: %s: cannot list memory domains: %s\n", attr.name,
               ucs_status_string(status));
        goto out;
    }

    if (!uct_info_filtered(ctx)) {
        uct_info_flags_str(attr.flags, uct_info_component_flags, str,
                           sizeof(str));
        printf("#\n# Component: %s\n", attr.name);
        printf("#     flags: %s\n", (str[0] != '\0') ? str : "none");
        printf("#     memory domains: %u\n", attr.md_resource_count);
    }

    for (i = 0; i < attr.md_resource_count; ++i) {
        uct_info_print_md(ctx, component, attr.md_resources[i].md_name);
    }
    if ((attr.flags & UCT_COMPONENT_FLAG_CM) &&
        (!uct_info_filtered(ctx) ||
         ((ctx->tl_filter != NULL) && !strcmp(ctx->tl_filter, attr.name)))) {
        uct_info_print_cm(ctx, component, attr.name);
    }

out:
    free(attr.md_resources);
}

int uct_info_print_devices(const char *tl_filter, unsigned dev_types)
{
    uct_component_h *components;
    unsigned i, num_components;
    uct_info_ctx_t ctx;
    ucs_status_t status;
    int ret = 0;

    ctx.tl_filter         = tl_filter;
    ctx.dev_types         = dev_types;
    ctx.num_matched       = 0;
    ctx.num_config_errors = 0;

    status =
        ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK, &ctx.async);
    if (status != UCS_OK) {
        fprintf(stderr, "uct_info: cannot create an async context: %s\n",
                ucs_status_string(status));
        return 1;
    }

    status = uct_worker_create(ctx.async, UCS_THREAD_MODE_SINGLE, &ctx.worker);
    if (status != UCS_OK) {
        fprintf(stderr, "uct_info: cannot create a worker: %s\n",
                ucs_status_string(status));
        ret = 1;
        goto out_async;
    }

    status = uct_query_components(&components, &num_components);
    if (status != UCS_OK) {
        fprintf(stderr, "uct_info: cannot list components: %s\n",
                ucs_status_string(status));
        ret = 1;
        goto out_worker;
    }

    if (num_components == 0) {
        printf("# no components found; check UCX_MODULE_DIR and "
               "UCX_MODULES (uct_info -v lists the loaded modules)\n");
    }
    for (i = 0; i < num_components; ++i) {
        uct_info_print_component(&ctx, components[i]);
    }
    if (!uct_info_filtered(&ctx) || (ctx.num_matched > 0)) {
        printf("#\n");
    }

    if (ctx.num_config_errors > 0) {
        fprintf(stderr, "uct_info: the configuration is invalid (the error "
                        "above names the variable); fix or unset it\n");
        ret = 1;
    } else if ((tl_filter != NULL) && (ctx.num_matched == 0)) {
        fprintf(stderr,
                "uct_info: transport '%s' not found%s; run uct_info "
                "-d to list transports\n",
                tl_filter,
                uct_info_filtered_by_type(&ctx)
                    ? " among the devices of the -D types"
                    : "");
        ret = 1;
    } else if ((ctx.num_matched == 0) && uct_info_filtered(&ctx)) {
        fprintf(stderr, "uct_info: no device of the -D types; run uct_info "
                        "-d to list devices\n");
        ret = 1;
    }

    uct_release_component_list(components);
out_worker:
    uct_worker_destroy(ctx.worker);
out_async:
    ucs_async_context_destroy(ctx.async);
    return ret;
}
