/*
 * The ib interface layer: configuration, port and GID of an iface, its
 * completion queues and channel, event arming, device addresses, queue
 * pair helpers, the work-completion status and the SGE limit message.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "ib_iface.h"

#include <ucs/debug/log.h>
#include <ucs/sys/sys.h>

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A QP timeout of exponent e lasts 4.096 us * 2^e */
#define UCT_IB_QP_TIMEOUT_UNIT 4.096e-6

/* Room for rounding when a delay is compared to a table value */
#define UCT_IB_TIME_EPSILON 1e-9

#define UCT_IB_PATH_MTU_VALUES "default, 256, 512, 1024, 2048 or 4096"

/* ------------------------------------------------------------------------
 * Configuration
 */

/* PATH_MTU: "default" (UCT_IB_PATH_MTU_DEFAULT) or a byte count */
static ucs_status_t uct_ib_path_mtu_read(const char *buf, void *dest,
                                         const void *arg)
{
    unsigned value;

    if (!strcasecmp(buf, "default")) {
        *(unsigned *)dest = UCT_IB_PATH_MTU_DEFAULT;
        return UCS_OK;
    }

    if ((ucs_config_uint_read(buf, &value, arg) != UCS_OK) ||
        (uct_ib_mtu_from_bytes(value) == 0)) {
        return UCS_ERR_INVALID_PARAM;
    }

    *(unsigned *)dest = value;
    return UCS_OK;
}

static void uct_ib_path_mtu_write(char *buf, size_t max, const void *src,
                                  const void *arg)
{
    unsigned value = *(const unsigned *)src;

    if (value == UCT_IB_PATH_MTU_DEFAULT) {
        snprintf(buf, max, "default");
    } else {
        snprintf(buf, max, "%u", value);
    }
}

static void uct_ib_path_mtu_help(char *buf, size_t max, const void *arg)
{
    snprintf(buf, max, UCT_IB_PATH_MTU_VALUES);
}

ucs_config_field_t uct_ib_iface_config_table[] = {
    {"", "", NULL, ucs_offsetof(uct_ib_iface_config_t, super),
     UCS_CONFIG_TYPE_TABLE(uct_iface_config_table)},

    {"SEG_SIZE", "8k",
     "Payload of a bcopy send buffer and of a receive buffer.",
     ucs_offsetof(uct_ib_iface_config_t, seg_size), UCS_CONFIG_TYPE_MEMUNITS},

    {"TX_QUEUE_LEN", "255",
     "Send work requests a queue pair holds. Drivers round the queue up\n"
     "(rxe to the next power of two above it), so 2^k-1 wastes least.",
     ucs_offsetof(uct_ib_iface_config_t, tx.queue_len), UCS_CONFIG_TYPE_UINT},

    {"TX_MIN_INLINE", "64",
     "Bytes of data a send work request should carry inline; the device\n"
     "may grant less (halved until it accepts) or more.",
     ucs_offsetof(uct_ib_iface_config_t, tx.min_inline),
     UCS_CONFIG_TYPE_MEMUNITS},

    {"TX_MIN_SGE", "3", "Scatter/gather entries a send work request can hold.",
     ucs_offsetof(uct_ib_iface_config_t, tx.min_sge), UCS_CONFIG_TYPE_UINT},

    {"TX_MAX_POLL", "16",
     "Send completions taken from the send queue per progress call.",
     ucs_offsetof(uct_ib_iface_config_t, tx.max_poll), UCS_CONFIG_TYPE_UINT},

    {"TX_CQ_LEN", "4095",
     "Entries of the send completion queue (at most the device's max_cqe).",
     ucs_offsetof(uct_ib_iface_config_t, tx.cq_len), UCS_CONFIG_TYPE_UINT},

    {"RX_QUEUE_LEN", "4095",
     "Receive buffers posted, and entries of the receive completion queue.",
     ucs_offsetof(uct_ib_iface_config_t, rx.queue_len), UCS_CONFIG_TYPE_UINT},

    {"RX_MAX_BATCH", "64",
     "Receive buffers posted again in one call once consumed (at most a "
     "quarter of RX_QUEUE_LEN).",
     ucs_offsetof(uct_ib_iface_config_t, rx.max_batch), UCS_CONFIG_TYPE_UINT},

    {"RX_MAX_POLL", "16", "Receive completions taken per progress call.",
     ucs_offsetof(uct_ib_iface_config_t, rx.max_poll), UCS_CONFIG_TYPE_UINT},

    {"SL", "0", "InfiniBand service level of the packets sent (0..15).",
     ucs_offsetof(uct_ib_iface_config_t, sl), UCS_CONFIG_TYPE_UINT},

    {"TRAFFIC_CLASS", "0",
     "Traffic class in the global route header (0..255; on RoCE the IP\n"
     "DSCP and ECN bits).",
     ucs_offsetof(uct_ib_iface_config_t, traffic_class), UCS_CONFIG_TYPE_UINT},

    {"HOP_LIMIT", "255",
     "Hop limit in the global route header (0..255; on RoCE the IP TTL).",
     ucs_offsetof(uct_ib_iface_config_t, hop_limit), UCS_CONFIG_TYPE_UINT},

    {"PATH_MTU",
     "default",
     "Largest packet payload: " UCT_IB_PATH_MTU_VALUES ". \"default\"\n"
     "takes the port's active MTU; a larger value is lowered to it.",
     ucs_offsetof(uct_ib_iface_config_t, path_mtu),
     {uct_ib_path_mtu_read, uct_ib_path_mtu_write, NULL, NULL,
      uct_ib_path_mtu_help, NULL, sizeof(unsigned), 0}},

    {"ROCE_LOCAL_SUBNET", "n",
     "On RoCE, reach only peers whose IP address shares the first\n"
     "ROCE_SUBNET_PREFIX_LEN bits with ours.",
     ucs_offsetof(uct_ib_iface_config_t, roce_local_subnet),
     UCS_CONFIG_TYPE_BOOL},

    {"ROCE_SUBNET_PREFIX_LEN", "0",
     "Bits of the IP address ROCE_LOCAL_SUBNET compares (at most 32 for\n"
     "IPv4, 128 for IPv6); 0 compares none, so every peer matches.",
     ucs_offsetof(uct_ib_iface_config_t, roce_prefix_len),
     UCS_CONFIG_TYPE_UINT},

    {NULL}};

/* One error line per invalid value; the table checks only the syntax */
static ucs_status_t
uct_ib_iface_check_config(const char *dev_name,
                          const uct_ib_iface_config_t *config)
{
    if ((config->path_mtu != UCT_IB_PATH_MTU_DEFAULT) &&
        (uct_ib_mtu_from_bytes(config->path_mtu) == 0)) {
        ucs_error(
            "%s: PATH_MTU=%u is not a path MTU; use " UCT_IB_PATH_MTU_VALUES,
            dev_name, config->path_mtu);
        return UCS_ERR_INVALID_PARAM;
    }
    if (config->sl > 15) {
        ucs_error("%s: SL=%u is out of range; use 0..15", dev_name, config->sl);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((config->traffic_class > UINT8_MAX) ||
        (config->hop_limit > UINT8_MAX)) {
        ucs_error("%s: TRAFFIC_CLASS=%u or HOP_LIMIT=%u is out of range; "
                  "use 0..255",
                  dev_name, config->traffic_class, config->hop_limit);
        return UCS_ERR_INVALID_PARAM;
    }
    if (config->roce_prefix_len > 128) {
        ucs_error("%s: ROCE_SUBNET_PREFIX_LEN=%u is out of range; use "
                  "0..32 for IPv4, 0..128 for IPv6",
                  dev_name, config->roce_prefix_len);
        return UCS_ERR_INVALID_PARAM;
    }
    if (config->tx.min_inline > UCT_IB_MAX_INLINE_CONFIG) {
        ucs_error("%s: TX_MIN_INLINE=%zu is too large; use at most %u",
                  dev_name, config->tx.min_inline, UCT_IB_MAX_INLINE_CONFIG);
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}

/* ------------------------------------------------------------------------
 * Opening and closing
 */

/* What to do about a verbs call that failed with @a err */
static const char *uct_ib_iface_verbs_hint(int err)
{
    switch (err) {
    case ENOMEM:
    case EAGAIN:
        return "raise the locked memory limit (ulimit -l) or lower the "
               "queue lengths";
    case EMFILE:
    case ENFILE:
        return "raise the open files limit (ulimit -n)";
    case EINVAL:
        return "the device does not support these sizes; lower them";
    default:
        return "check dmesg for the driver's reason";
    }
}

static ucs_status_t uct_ib_iface_verbs_status(int err)
{
    return ((err == ENOMEM) || (err == EAGAIN)) ? UCS_ERR_NO_MEMORY
                                                : UCS_ERR_IO_ERROR;
}

/* "<dev>:<port>" of @a dev_name: a usable port of @a dev */
static ucs_status_t uct_ib_iface_parse_port(const uct_ib_device_t *dev,
                                            const char *dev_name,
                                            uint8_t *port_num_p)
{
    const char *colon = strrchr(dev_name, ':');
    unsigned long port_num;
    char *end;

    if ((colon == NULL) || (colon[1] == '\0')) {
        ucs_error("%s: not a port name; use <device>:<port> such as %s:1 "
                  "(uct_info -d lists them)",
                  dev_name, dev->name);
        return UCS_ERR_NO_DEVICE;
    }

    if ((strlen(dev->name) != (size_t)(colon - dev_name)) ||
        strncmp(dev_name, dev->name, (size_t)(colon - dev_name))) {
        ucs_error("%s: not a port of device %s; open the interface with "
                  "the memory domain of its device",
                  dev_name, dev->name);
        return UCS_ERR_NO_DEVICE;
    }

    errno    = 0;
    port_num = strtoul(colon + 1, &end, 10);
    if ((errno != 0) || (*end != '\0') || (port_num > UINT8_MAX) ||
        !uct_ib_device_is_port_usable(dev, (uint8_t)port_num)) {
        ucs_error("%s: port %s of %s is not usable (it must exist, be "
                  "ACTIVE and InfiniBand or Ethernet); uct_info -d lists "
                  "the usable ones",
                  dev_name, colon + 1, dev->name);
        return UCS_ERR_NO_DEVICE;
    }

    *port_num_p = (uint8_t)port_num;
    return UCS_OK;
}

/* Async thread: events of this iface's objects go to the transport */
static void uct_ib_iface_async_cb(void *arg, const uct_ib_async_event_t *event)
{
    uct_ib_iface_t *iface = arg;

    if (iface->async_event_cb == NULL) {
        return;
    }
    if ((event->cq != NULL) && (event->cq != iface->cq[UCT_IB_DIR_TX]) &&
        (event->cq != iface->cq[UCT_IB_DIR_RX])) {
        return;
    }
    if ((event->port_num != 0) && (event->port_num != iface->port_num)) {
        return;
    }
    iface->async_event_cb(iface, event);
}

static ucs_status_t uct_ib_iface_create_channel(uct_ib_iface_t *iface)
{
    uct_ib_device_t *dev = uct_ib_iface_device(iface);
    ucs_status_t status;

    iface->comp_channel = ibv_create_comp_channel(dev->ibv_context);
    if (iface->comp_channel == NULL) {
        ucs_error("%s: ibv_create_comp_channel() failed: %m; %s",
                  iface->super.dev_name, uct_ib_iface_verbs_hint(errno));
        return uct_ib_iface_verbs_status(errno);
    }

    status = ucs_sys_fcntl_modfl(iface->comp_channel->fd, O_NONBLOCK, 0);
    if (status != UCS_OK) {
        ucs_error("%s: cannot make the completion channel (fd %d) "
                  "non-blocking",
                  iface->super.dev_name, iface->comp_channel->fd);
        ibv_destroy_comp_channel(iface->comp_channel);
        iface->comp_channel = NULL;
        return status;
    }
    return UCS_OK;
}

static ucs_status_t uct_ib_iface_create_cq(uct_ib_iface_t *iface,
                                           uct_ib_dir_t dir, unsigned len)
{
    uct_ib_device_t *dev = uct_ib_iface_device(iface);
    unsigned max_cqe     = (unsigned)dev->dev_attr.max_cqe;
    const char *name     = (dir == UCT_IB_DIR_TX) ? "send" : "receive";

    len = ucs_max(len, 1);
    if (len > max_cqe) {
        ucs_debug("%s: %s CQ of %u entries capped at the device's max_cqe "
                  "%u",
                  iface->super.dev_name, name, len, max_cqe);
        len = max_cqe;
    }

    iface->cq[dir] = ibv_create_cq(dev->ibv_context, (int)len, iface,
                                   iface->comp_channel, 0);
    if (iface->cq[dir] == NULL) {
        ucs_error("%s: ibv_create_cq(%u entries) for the %s CQ failed: "
                  "%m; %s",
                  iface->super.dev_name, len, name,
                  uct_ib_iface_verbs_hint(errno));
        return uct_ib_iface_verbs_status(errno);
    }

    iface->cq_len[dir] = len;
    return UCS_OK;
}

static void uct_ib_iface_destroy_cq(uct_ib_iface_t *iface, uct_ib_dir_t dir)
{
    int ret;

    if (iface->cq[dir] == NULL) {
        return;
    }

    if (iface->num_cq_events[dir] != 0) {
        ibv_ack_cq_events(iface->cq[dir], iface->num_cq_events[dir]);
        iface->num_cq_events[dir] = 0;
    }

    ret = ibv_destroy_cq(iface->cq[dir]);
    if (ret != 0) {
        errno = ret;
        ucs_warn("%s: ibv_destroy_cq() failed: %m; a QP may still use it",
                 iface->super.dev_name);
    }
    iface->cq[dir] = NULL;
}

/*
 * The inline size and SGE count the device grants: a throwaway QP asks
 * for @a sges SGEs and @a asked bytes inline, half as many bytes after
 * each refusal, down to 0; the QP reports what it got (rxe: one slot
 * holds max(16 * SGEs, inline) bytes after its 208-byte header, and both
 * grow to fill it).
 */
static ucs_status_t uct_ib_iface_probe_inline(uct_ib_iface_t *iface,
                                              enum ibv_qp_type qp_type,
                                              unsigned sges, size_t asked)
{
    struct ibv_qp_init_attr attr;
    size_t inline_size = asked;
    struct ibv_qp *qp;

    for (;;) {
        memset(&attr, 0, sizeof(attr));
        attr.send_cq             = iface->cq[UCT_IB_DIR_TX];
        attr.recv_cq             = iface->cq[UCT_IB_DIR_RX];
        attr.qp_type             = qp_type;
        attr.cap.max_send_wr     = 1;
        attr.cap.max_recv_wr     = 1;
        attr.cap.max_send_sge    = sges;
        attr.cap.max_recv_sge    = 1;
        attr.cap.max_inline_data = (uint32_t)inline_size;

        qp = ibv_create_qp(uct_ib_iface_md(iface)->pd, &attr);
        if (qp != NULL) {
            break;
        }

        if (inline_size == 0) {
            ucs_error("%s: cannot create a QP of type %d (send and receive "
                      "queues of 1, %u send SGEs): %m; %s",
                      iface->super.dev_name, qp_type, sges,
                      uct_ib_iface_verbs_hint(errno));
            return uct_ib_iface_verbs_status(errno);
        }
        ucs_debug("%s: a QP with %zu bytes inline refused: %m",
                  iface->super.dev_name, inline_size);
        inline_size /= 2;
    }

    iface->max_inline   = attr.cap.max_inline_data;
    iface->max_send_sge = ucs_max(attr.cap.max_send_sge, sges);
    ibv_destroy_qp(qp);
    ucs_debug("%s: inline data up to %zu bytes, %u send SGEs "
              "(TX_MIN_INLINE=%zu, %u SGEs asked)",
              iface->super.dev_name, iface->max_inline, iface->max_send_sge,
              asked, sges);
    return UCS_OK;
}

ucs_status_t uct_ib_iface_init(uct_ib_iface_t *iface,
                               const uct_iface_ops_t *ops, uct_md_h md,
                               uct_worker_h worker,
                               const uct_iface_params_t *params,
                               const uct_ib_iface_config_t *config,
                               const uct_ib_iface_init_attr_t *init_attr)
{
    uct_ib_md_t *ib_md   = uct_ib_md_from(md);
    uct_ib_device_t *dev = &ib_md->dev;
    const struct ibv_port_attr *port_attr;
    const char *dev_name;
    enum ibv_mtu cfg_mtu;
    ucs_status_t status;
    uint8_t port_num;

    if (!(params->field_mask & UCT_IFACE_PARAM_FIELD_OPEN_MODE) ||
        !(params->open_mode & UCT_IFACE_OPEN_MODE_DEVICE)) {
        ucs_error("%s: an ib interface opens on a device; set open_mode "
                  "to UCT_IFACE_OPEN_MODE_DEVICE with a device name",
                  dev->name);
        return UCS_ERR_INVALID_PARAM;
    }

    dev_name = params->mode.device.dev_name;
    status   = uct_ib_iface_parse_port(dev, dev_name, &port_num);
    if (status != UCS_OK) {
        return status;
    }

    status = uct_ib_iface_check_config(dev_name, config);
    if (status != UCS_OK) {
        return status;
    }

    memset(iface, 0, sizeof(*iface));
    status = uct_base_iface_init(&iface->super, ops, md, worker, params,
                                 &config->super);
    if (status != UCS_OK) {
        return status;
    }

    iface->port_num = port_num;
    status          = uct_ib_device_select_gid(dev, port_num, ib_md->gid_index,
                                               &iface->gid_info);
    if (status != UCS_OK) {
        if (status == UCS_ERR_NO_DEVICE) {
            /* an invalid UCX_IB_GID_INDEX was reported already */
            ucs_error("%s: the port has no GID to use; give its network "
                      "interface an IP address (RoCE) or check the subnet "
                      "manager (InfiniBand)",
                      dev_name);
        }
        goto err_base;
    }

    port_attr       = uct_ib_device_port_attr(dev, port_num);
    iface->lid      = port_attr->lid;
    iface->path_mtu = port_attr->active_mtu;
    if (config->path_mtu != UCT_IB_PATH_MTU_DEFAULT) {
        cfg_mtu         = uct_ib_mtu_from_bytes(config->path_mtu);
        iface->path_mtu = ucs_min(iface->path_mtu, cfg_mtu);
    }

    status = uct_ib_iface_create_channel(iface);
    if (status != UCS_OK) {
        goto err_base;
    }

    status = uct_ib_iface_create_cq(
        iface, UCT_IB_DIR_TX,
        (init_attr->tx_cq_len != 0) ? init_attr->tx_cq_len : config->tx.cq_len);
    if (status != UCS_OK) {
        goto err_channel;
    }

    status = uct_ib_iface_create_cq(iface, UCT_IB_DIR_RX,
                                    (init_attr->rx_cq_len != 0)
                                        ? init_attr->rx_cq_len
                                        : config->rx.queue_len);
    if (status != UCS_OK) {
        goto err_cqs;
    }

    status = uct_ib_iface_probe_inline(iface, init_attr->qp_type,
                                       ucs_max(init_attr->tx_max_sge, 1),
                                       config->tx.min_inline);
    if (status != UCS_OK) {
        goto err_cqs;
    }

    iface->config.seg_size     = config->seg_size;
    iface->config.tx_queue_len = config->tx.queue_len;
    iface->config.tx_min_sge   = config->tx.min_sge;
    iface->config.tx_max_poll  = config->tx.max_poll;
    iface->config.rx_queue_len = config->rx.queue_len;
    /* a batch above a quarter of the queue would let a short queue drain
     * (to its limit event, or empty) before progress posts it again */
    iface->config.rx_max_batch =
        ucs_max(1, ucs_min(config->rx.max_batch, config->rx.queue_len / 4));
    iface->config.rx_max_poll       = config->rx.max_poll;
    iface->config.sl                = (uint8_t)config->sl;
    iface->config.traffic_class     = (uint8_t)config->traffic_class;
    iface->config.hop_limit         = (uint8_t)config->hop_limit;
    iface->config.roce_local_subnet = config->roce_local_subnet;
    iface->config.roce_prefix_len   = config->roce_prefix_len;
    ucs_log_limit_init(&iface->wc_error_log);

    iface->async_event_cb = init_attr->async_event_cb;
    uct_ib_device_async_hook_add(dev, &iface->async_hook, uct_ib_iface_async_cb,
                                 iface);

    ucs_debug("%s: ib iface %p: gid index %u, lid %u, path mtu %zu, cq "
              "%u/%u, inline %zu",
              dev_name, (void *)iface, iface->gid_info.gid_index, iface->lid,
              uct_ib_mtu_bytes(iface->path_mtu), iface->cq_len[UCT_IB_DIR_TX],
              iface->cq_len[UCT_IB_DIR_RX], iface->max_inline);
    return UCS_OK;

err_cqs:
    uct_ib_iface_destroy_cq(iface, UCT_IB_DIR_RX);
    uct_ib_iface_destroy_cq(iface, UCT_IB_DIR_TX);
err_channel:
    ibv_destroy_comp_channel(iface->comp_channel);
    iface->comp_channel = NULL;
err_base:
    uct_base_iface_cleanup(&iface->super);
    return status;
}

void uct_ib_iface_cleanup(uct_ib_iface_t *iface)
{
    char what[UCT_DEVICE_NAME_MAX + 32];
    int ret;

    uct_ib_device_async_hook_remove(uct_ib_iface_device(iface),
                                    &iface->async_hook);
    snprintf(what, sizeof(what), "%s: completion errors",
             iface->super.dev_name);
    ucs_log_limit_flush(&iface->wc_error_log, UCS_LOG_LEVEL_ERROR, what);
    uct_ib_iface_destroy_cq(iface, UCT_IB_DIR_RX);
    uct_ib_iface_destroy_cq(iface, UCT_IB_DIR_TX);

    ret = ibv_destroy_comp_channel(iface->comp_channel);
    if (ret != 0) {
        errno = ret;
        ucs_warn("%s: ibv_destroy_comp_channel() failed: %m",
                 iface->super.dev_name);
    }
    iface->comp_channel = NULL;
    uct_base_iface_cleanup(&iface->super);
}

/* ------------------------------------------------------------------------
 * Completions and events
 */

int uct_ib_iface_poll_cq_slow(uct_ib_iface_t *iface, uct_ib_dir_t dir,
                              struct ibv_wc *wc, int max)
{
    uct_ib_wc_stash_t *stash = &iface->stash[dir];
    int count                = 0;
    int ret;

    if ((stash->count != 0) && (max > 0)) {
        count = (int)ucs_min(stash->count, (unsigned)max);
        memcpy(wc, &stash->wc[stash->head], count * sizeof(*wc));
        stash->head += count;
        stash->count -= count;
        if (stash->count == 0) {
            stash->head = 0;
        }
    }

    if (count == max) {
        return count;
    }

    ret = ibv_poll_cq(iface->cq[dir], max - count, wc + count);
    if (ret < 0) {
        ucs_error_limited(&iface->wc_error_log,
                          "%s: ibv_poll_cq(%s CQ) failed: %d; the CQ "
                          "overran or the device failed (check dmesg)",
                          iface->super.dev_name,
                          (dir == UCT_IB_DIR_TX) ? "send" : "receive", ret);
        /* the stashed ones are good; the error comes again next time */
        return (count != 0) ? count : UCS_ERR_IO_ERROR;
    }
    return count + ret;
}

ucs_status_t uct_ib_iface_event_fd_get(uct_iface_h tl_iface, int *fd_p)
{
    *fd_p = uct_ib_iface(tl_iface)->comp_channel->fd;
    return UCS_OK;
}

/* Read every event of the channel and acknowledge them */
static void uct_ib_iface_drain_channel(uct_ib_iface_t *iface)
{
    struct ibv_cq *cq;
    uct_ib_dir_t dir;
    void *cq_context;

    while (ibv_get_cq_event(iface->comp_channel, &cq, &cq_context) == 0) {
        dir = (cq == iface->cq[UCT_IB_DIR_TX]) ? UCT_IB_DIR_TX : UCT_IB_DIR_RX;
        ++iface->num_cq_events[dir];
    }

    if ((errno != EAGAIN) && (errno != EWOULDBLOCK)) {
        ucs_debug("%s: ibv_get_cq_event() failed: %m", iface->super.dev_name);
    }

    for (dir = UCT_IB_DIR_TX; dir < UCT_IB_DIR_LAST; ++dir) {
        if (iface->num_cq_events[dir] != 0) {
            ibv_ack_cq_events(iface->cq[dir], iface->num_cq_events[dir]);
            iface->num_cq_events[dir] = 0;
        }
    }
}

/* Arm the CQ of @a dir, then keep what it already holds in the stash */
static ucs_status_t uct_ib_iface_arm_cq(uct_ib_iface_t *iface, uct_ib_dir_t dir,
                                        int solicited_only)
{
    uct_ib_wc_stash_t *stash = &iface->stash[dir];
    int ret;

    ret = ibv_req_notify_cq(iface->cq[dir], solicited_only);
    if (ret != 0) {
        errno = ret;
        ucs_error("%s: ibv_req_notify_cq(%s CQ) failed: %m; check dmesg",
                  iface->super.dev_name,
                  (dir == UCT_IB_DIR_TX) ? "send" : "receive");
        return UCS_ERR_IO_ERROR;
    }

    if ((stash->head != 0) && (stash->count != 0)) {
        memmove(stash->wc, &stash->wc[stash->head],
                stash->count * sizeof(stash->wc[0]));
    }
    stash->head = 0;

    if (stash->count == UCT_IB_WC_STASH_MAX) {
        return UCS_OK;
    }

    ret = ibv_poll_cq(iface->cq[dir], UCT_IB_WC_STASH_MAX - stash->count,
                      &stash->wc[stash->count]);
    if (ret < 0) {
        ucs_error("%s: ibv_poll_cq(%s CQ) failed: %d; the CQ overran or "
                  "the device failed (check dmesg)",
                  iface->super.dev_name,
                  (dir == UCT_IB_DIR_TX) ? "send" : "receive", ret);
        return UCS_ERR_IO_ERROR;
    }
    stash->count += (unsigned)ret;
    return UCS_OK;
}

ucs_status_t uct_ib_iface_arm(uct_ib_iface_t *iface, unsigned events, int busy)
{
    ucs_status_t status;

    uct_ib_iface_drain_channel(iface);

    if (events & UCT_EVENT_SEND_COMP) {
        status = uct_ib_iface_arm_cq(iface, UCT_IB_DIR_TX, 0);
        if (status != UCS_OK) {
            return status;
        }
    }

    if (events & (UCT_EVENT_RECV | UCT_EVENT_RECV_SIG)) {
        status = uct_ib_iface_arm_cq(iface, UCT_IB_DIR_RX, 1);
        if (status != UCS_OK) {
            return status;
        }
    }

    if (busy || (iface->stash[UCT_IB_DIR_TX].count != 0) ||
        (iface->stash[UCT_IB_DIR_RX].count != 0)) {
        return UCS_ERR_BUSY;
    }
    return UCS_OK;
}

/* ------------------------------------------------------------------------
 * Addresses
 */

/* The default subnet prefix of InfiniBand, fe80::/64: not routable */
static int uct_ib_gid_is_link_local(const uint8_t *gid)
{
    static const uint8_t prefix[8] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0};

    return !memcmp(gid, prefix, sizeof(prefix));
}

/* Whether the first @a bits bits of @a a and @a b are the same */
static int uct_ib_bits_equal(const uint8_t *a, const uint8_t *b, unsigned bits)
{
    unsigned bytes = bits / 8;
    uint8_t mask;

    if (memcmp(a, b, bytes)) {
        return 0;
    }
    if ((bits % 8) == 0) {
        return 1;
    }
    mask = (uint8_t)(0xff << (8 - (bits % 8)));
    return ((a[bytes] ^ b[bytes]) & mask) == 0;
}

static void uct_ib_iface_pack_addr(const uct_ib_iface_t *iface,
                                   uct_ib_device_addr_t *addr)
{
    memset(addr, 0, sizeof(*addr));
    if (uct_ib_device_is_port_roce(uct_ib_iface_device(iface),
                                   iface->port_num)) {
        addr->flags |= UCT_IB_ADDR_FLAG_ROCE;
    }
    if (iface->gid_info.roce_version == UCT_IB_ROCE_V2) {
        addr->flags |= UCT_IB_ADDR_FLAG_ROCEV2;
    }
    if (iface->gid_info.af == AF_INET) {
        addr->flags |= UCT_IB_ADDR_FLAG_IPV4;
    }
    addr->path_mtu = (uint8_t)iface->path_mtu;
    addr->lid      = htole16(iface->lid);
    memcpy(addr->gid, iface->gid_info.gid.raw, sizeof(addr->gid));
}

ucs_status_t uct_ib_iface_get_device_address(uct_iface_h tl_iface,
                                             uct_device_addr_t *addr)
{
    uct_ib_device_addr_t ib_addr;

    uct_ib_iface_pack_addr(uct_ib_iface(tl_iface), &ib_addr);
    memcpy(addr, &ib_addr, sizeof(ib_addr));
    return UCS_OK;
}

int uct_ib_iface_is_reachable_addr(const uct_ib_iface_t *iface,
                                   const uct_ib_device_addr_t *addr)
{
    const uint8_t flag_mask =
        UCT_IB_ADDR_FLAG_ROCE | UCT_IB_ADDR_FLAG_ROCEV2 | UCT_IB_ADDR_FLAG_IPV4;
    uct_ib_device_addr_t ours, peer;
    unsigned bits;

    if (addr == NULL) {
        return 0;
    }

    memcpy(&peer, addr, sizeof(peer));
    uct_ib_iface_pack_addr(iface, &ours);

    /* nothing we do not define: flags, a verbs MTU, no LID on RoCE */
    if ((peer.flags & (uint8_t)~flag_mask) ||
        (uct_ib_mtu_bytes((enum ibv_mtu)peer.path_mtu) == 0) ||
        ((peer.flags & UCT_IB_ADDR_FLAG_ROCE) && (peer.lid != 0))) {
        return 0;
    }

    if (!(ours.flags & UCT_IB_ADDR_FLAG_ROCE)) {
        if (peer.flags != 0) {
            return 0; /* RoCE, or RoCE bits without it */
        }
        /* InfiniBand: the same subnet, or both routable */
        return !memcmp(ours.gid, peer.gid, 8) ||
               (!uct_ib_gid_is_link_local(ours.gid) &&
                !uct_ib_gid_is_link_local(peer.gid));
    }

    if ((ours.flags & flag_mask) != (peer.flags & flag_mask)) {
        return 0;
    }

    if (!iface->config.roce_local_subnet) {
        return 1;
    }

    if (ours.flags & UCT_IB_ADDR_FLAG_IPV4) {
        /* ::ffff:a.b.c.d: the IPv4 address is the last 4 bytes */
        bits = ucs_min(iface->config.roce_prefix_len, 32);
        return uct_ib_bits_equal(&ours.gid[12], &peer.gid[12], bits);
    }
    bits = ucs_min(iface->config.roce_prefix_len, 128);
    return uct_ib_bits_equal(ours.gid, peer.gid, bits);
}

int uct_ib_iface_is_reachable(const uct_iface_h tl_iface,
                              const uct_device_addr_t *dev_addr,
                              const uct_iface_addr_t *iface_addr)
{
    (void)iface_addr;
    return uct_ib_iface_is_reachable_addr(
        uct_ib_iface(tl_iface), (const uct_ib_device_addr_t *)dev_addr);
}

void uct_ib_iface_fill_ah_attr(const uct_ib_iface_t *iface,
                               const uct_ib_device_addr_t *addr,
                               struct ibv_ah_attr *ah_attr)
{
    uct_ib_device_addr_t peer;
    int roce;

    memcpy(&peer, addr, sizeof(peer));
    roce =
        uct_ib_device_is_port_roce(uct_ib_iface_device(iface), iface->port_num);

    memset(ah_attr, 0, sizeof(*ah_attr));
    ah_attr->dlid     = le16toh(peer.lid);
    ah_attr->sl       = iface->config.sl;
    ah_attr->port_num = iface->port_num;

    if (roce || memcmp(peer.gid, iface->gid_info.gid.raw, 8)) {
        ah_attr->is_global         = 1;
        ah_attr->grh.sgid_index    = (uint8_t)iface->gid_info.gid_index;
        ah_attr->grh.hop_limit     = iface->config.hop_limit;
        ah_attr->grh.traffic_class = iface->config.traffic_class;
        memcpy(ah_attr->grh.dgid.raw, peer.gid, sizeof(peer.gid));
    }
}

enum ibv_mtu uct_ib_iface_peer_mtu(const uct_ib_iface_t *iface,
                                   const uct_ib_device_addr_t *addr)
{
    uint8_t peer_mtu;

    memcpy(&peer_mtu, &addr->path_mtu, sizeof(peer_mtu));
    if (uct_ib_mtu_bytes((enum ibv_mtu)peer_mtu) == 0) {
        /* not a verbs MTU: the smallest works with anyone */
        return IBV_MTU_256;
    }
    return ucs_min(iface->path_mtu, (enum ibv_mtu)peer_mtu);
}

const char *uct_ib_device_addr_str(const uct_ib_device_addr_t *addr, char *buf,
                                   size_t max)
{
    uct_ib_device_addr_t peer;
    union ibv_gid gid;
    char gid_str[64];

    memcpy(&peer, addr, sizeof(peer));
    memcpy(gid.raw, peer.gid, sizeof(gid.raw));
    snprintf(buf, max, "%s lid %u mtu %zu",
             uct_ib_gid_str(&gid, gid_str, sizeof(gid_str)), le16toh(peer.lid),
             uct_ib_mtu_bytes((enum ibv_mtu)peer.path_mtu));
    return buf;
}

/* ------------------------------------------------------------------------
 * Queue pairs
 */

static const char *uct_ib_qp_state_str(enum ibv_qp_state state)
{
    switch (state) {
    case IBV_QPS_RESET:
        return "RESET";
    case IBV_QPS_INIT:
        return "INIT";
    case IBV_QPS_RTR:
        return "RTR";
    case IBV_QPS_RTS:
        return "RTS";
    case IBV_QPS_SQD:
        return "SQD";
    case IBV_QPS_SQE:
        return "SQE";
    case IBV_QPS_ERR:
        return "ERR";
    default:
        return "?";
    }
}

ucs_status_t uct_ib_iface_create_qp(uct_ib_iface_t *iface,
                                    struct ibv_qp_init_attr *attr,
                                    struct ibv_qp **qp_p)
{
    struct ibv_qp *qp;

    attr->send_cq             = iface->cq[UCT_IB_DIR_TX];
    attr->recv_cq             = iface->cq[UCT_IB_DIR_RX];
    attr->cap.max_inline_data = (uint32_t)iface->max_inline;

    qp = ibv_create_qp(uct_ib_iface_md(iface)->pd, attr);
    if (qp == NULL) {
        ucs_error("%s: ibv_create_qp(type %d, send %u x %u sge, receive "
                  "%u x %u sge, inline %u) failed: %m; %s",
                  iface->super.dev_name, attr->qp_type, attr->cap.max_send_wr,
                  attr->cap.max_send_sge, attr->cap.max_recv_wr,
                  attr->cap.max_recv_sge, attr->cap.max_inline_data,
                  uct_ib_iface_verbs_hint(errno));
        return UCS_ERR_NO_RESOURCE;
    }

    ucs_debug("%s: created QP 0x%x type %d", iface->super.dev_name, qp->qp_num,
              attr->qp_type);
    *qp_p = qp;
    return UCS_OK;
}

ucs_status_t uct_ib_qp_modify(struct ibv_qp *qp, struct ibv_qp_attr *attr,
                              int mask, const char *what)
{
    const char *state;
    int ret;

    ret = ibv_modify_qp(qp, attr, mask);
    if (ret == 0) {
        return UCS_OK;
    }

    state =
        (mask & IBV_QP_STATE) ? uct_ib_qp_state_str(attr->qp_state) : "(same)";
    errno = ret;
    if (ret == EINVAL) {
        ucs_error("%s: QP 0x%x to %s (mask 0x%x): ibv_modify_qp() failed: "
                  "%m; the device rejected the attributes (check the GID "
                  "index, path MTU and timeouts)",
                  what, qp->qp_num, state, mask);
        return UCS_ERR_INVALID_PARAM;
    }

    ucs_error("%s: QP 0x%x to %s (mask 0x%x): ibv_modify_qp() failed: %m; "
              "check dmesg for the driver's reason",
              what, qp->qp_num, state, mask);
    return UCS_ERR_IO_ERROR;
}

ucs_status_t uct_ib_iface_qp_init(uct_ib_iface_t *iface, struct ibv_qp *qp,
                                  int access_flags, uint32_t qkey)
{
    struct ibv_qp_attr attr;
    int mask;

    memset(&attr, 0, sizeof(attr));
    attr.qp_state   = IBV_QPS_INIT;
    attr.pkey_index = 0;
    attr.port_num   = iface->port_num;
    mask            = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

    switch (qp->qp_type) {
    case IBV_QPT_RC:
    case IBV_QPT_UC:
        attr.qp_access_flags = (unsigned)access_flags;
        mask |= IBV_QP_ACCESS_FLAGS;
        break;
    case IBV_QPT_UD:
        attr.qkey = qkey;
        mask |= IBV_QP_QKEY;
        break;
    default:
        ucs_error("%s: QP 0x%x has type %d; only RC, UC and UD QPs are "
                  "set up here",
                  iface->super.dev_name, qp->qp_num, qp->qp_type);
        return UCS_ERR_INVALID_PARAM;
    }

    return uct_ib_qp_modify(qp, &attr, mask, iface->super.dev_name);
}

uint8_t uct_ib_timeout_exp(double seconds)
{
    uint8_t exp;

    for (exp = 1; exp < 31; ++exp) {
        if (ldexp(UCT_IB_QP_TIMEOUT_UNIT, exp) >=
            seconds * (1.0 - UCT_IB_TIME_EPSILON)) {
            break;
        }
    }
    return exp;
}

/* Delays of the RNR timer codes, milliseconds (code 0 is the longest) */
static const double uct_ib_rnr_timer_ms[32] = {
    655.36, 0.01,  0.02,  0.03,   0.04,   0.06,   0.08,   0.12,
    0.16,   0.24,  0.32,  0.48,   0.64,   0.96,   1.28,   1.92,
    2.56,   3.84,  5.12,  7.68,   10.24,  15.36,  20.48,  30.72,
    40.96,  61.44, 81.92, 122.88, 163.84, 245.76, 327.68, 491.52};

uint8_t uct_ib_rnr_timer_code(double seconds)
{
    double ms = seconds * 1e3 * (1.0 - UCT_IB_TIME_EPSILON);
    uint8_t code;

    for (code = 1; code < 32; ++code) {
        if (uct_ib_rnr_timer_ms[code] >= ms) {
            return code;
        }
    }
    return 0;
}

enum ibv_mtu uct_ib_mtu_from_bytes(size_t bytes)
{
    switch (bytes) {
    case 256:
        return IBV_MTU_256;
    case 512:
        return IBV_MTU_512;
    case 1024:
        return IBV_MTU_1024;
    case 2048:
        return IBV_MTU_2048;
    case 4096:
        return IBV_MTU_4096;
    default:
        return (enum ibv_mtu)0;
    }
}

/* ------------------------------------------------------------------------
 * Completions and queries
 */

ucs_status_t uct_ib_wc_status(enum ibv_wc_status status)
{
    switch (status) {
    case IBV_WC_SUCCESS:
        return UCS_OK;
    case IBV_WC_RETRY_EXC_ERR:
    case IBV_WC_RNR_RETRY_EXC_ERR:
        return UCS_ERR_ENDPOINT_TIMEOUT;
    case IBV_WC_REM_ACCESS_ERR:
    case IBV_WC_REM_INV_REQ_ERR:
    case IBV_WC_REM_OP_ERR:
        return UCS_ERR_CONNECTION_RESET;
    case IBV_WC_LOC_PROT_ERR:
    case IBV_WC_LOC_LEN_ERR:
        return UCS_ERR_INVALID_ADDR;
    case IBV_WC_WR_FLUSH_ERR:
        return UCS_ERR_CANCELED;
    default:
        return UCS_ERR_IO_ERROR;
    }
}

/* What to do about a failed completion */
static const char *uct_ib_wc_hint(enum ibv_wc_status status)
{
    switch (status) {
    case IBV_WC_RETRY_EXC_ERR:
        return "the peer did not answer: check that it is alive and "
               "reachable (GID, path MTU, routes)";
    case IBV_WC_RNR_RETRY_EXC_ERR:
        return "the peer had no receive buffer for too long: give it "
               "more (RX_QUEUE_LEN) or make it progress";
    case IBV_WC_REM_ACCESS_ERR:
    case IBV_WC_REM_INV_REQ_ERR:
    case IBV_WC_REM_OP_ERR:
        return "the peer refused the request: check the remote key and "
               "address range";
    case IBV_WC_LOC_PROT_ERR:
    case IBV_WC_LOC_LEN_ERR:
        return "a local buffer or memory key was wrong: check the memory "
               "handle and the length";
    case IBV_WC_WR_FLUSH_ERR:
        return "the QP had failed already; see the error before this one";
    default:
        return "check dmesg for the driver's reason";
    }
}

void uct_ib_iface_log_wc_error(uct_ib_iface_t *iface, const struct ibv_wc *wc,
                               const char *what)
{
    ucs_error_limited(&iface->wc_error_log,
                      "%s: completion error on QP 0x%x (%s): %s, opcode %d, "
                      "vendor error 0x%x; %s",
                      iface->super.dev_name, wc->qp_num, what,
                      ibv_wc_status_str(wc->status), (int)wc->opcode,
                      wc->vendor_err, uct_ib_wc_hint(wc->status));
}

ucs_status_t uct_ib_iface_too_many_sges(const uct_ib_iface_t *iface,
                                        const char *what, unsigned max)
{
    ucs_diag("%s: %s: the iov needs more than %u SGEs (a strided entry "
             "takes one per element); pass fewer per call",
             iface->super.dev_name, what, max);
    return UCS_ERR_UNSUPPORTED;
}

void uct_ib_iface_query(uct_ib_iface_t *iface, double overhead,
                        uct_iface_attr_t *attr)
{
    uct_ib_device_t *dev = uct_ib_iface_device(iface);
    double latency, bandwidth;

    uct_base_iface_query(&iface->super, attr);
    uct_ib_device_port_estimate(dev, iface->port_num, &latency, &bandwidth);

    attr->device_addr_len     = sizeof(uct_ib_device_addr_t);
    attr->latency             = ucs_linear_func_make(latency, 0);
    attr->bandwidth.dedicated = bandwidth;
    attr->bandwidth.shared    = 0;
    attr->overhead            = overhead;
    attr->priority            = (uint8_t)uct_ib_device_priority(dev);
    attr->cap.event_flags =
        UCT_IFACE_FLAG_EVENT_SEND_COMP | UCT_IFACE_FLAG_EVENT_RECV |
        UCT_IFACE_FLAG_EVENT_RECV_SIG | UCT_IFACE_FLAG_EVENT_FD;
}

ucs_status_t uct_ib_iface_query_devices(uct_md_h md,
                                        uct_tl_device_resource_t **devices_p,
                                        unsigned *num_devices_p)
{
    return uct_ib_device_query_ports(&uct_ib_md_from(md)->dev, devices_p,
                                     num_devices_p);
}

ucs_status_t uct_ib_iface_check_tx_queue_len(const char *dev_name,
                                             unsigned queue_len, unsigned min,
                                             const struct ibv_device_attr *attr,
                                             const char *hint)
{
    int max = ucs_min(32767, attr->max_qp_wr);

    if ((queue_len >= min) && ((int)queue_len <= max)) {
        return UCS_OK;
    }
    ucs_error("UCX_IB_TX_QUEUE_LEN=%u is out of range for %s; use %u-%d%s",
              queue_len, dev_name, min, max, hint);
    return UCS_ERR_INVALID_PARAM;
}

ucs_arbiter_cb_result_t uct_ib_iface_pending_dispatch(
    ucs_arbiter_t *arbiter, ucs_arbiter_group_t *group,
    ucs_arbiter_elem_t *elem, int ep_failed, const int *slots, int min_slots)
{
    ucs_arbiter_cb_result_t result;

    if (ep_failed) {
        return UCS_ARBITER_CB_RESULT_DESCHED_GROUP;
    }
    result = uct_pending_group_dispatch_cb(arbiter, group, elem,
                                           UCT_PENDING_DISPATCH_DESCHED);
    if ((result == UCS_ARBITER_CB_RESULT_DESCHED_GROUP) &&
        (*slots < min_slots)) {
        /* the iface ran out, not the ep: it runs first next time */
        return UCS_ARBITER_CB_RESULT_STOP;
    }
    return result;
}
