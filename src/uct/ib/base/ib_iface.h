/*
 * The ib interface layer: what every verbs transport (rc_verbs, ud_verbs)
 * embeds first and shares.
 *
 * - Configuration UCX_IB_* (queue lengths, segment size, inline and SGE
 *   minimums, poll batches, service level, traffic class, path MTU, RoCE
 *   subnet), embedded in the transports' own tables.
 * - One send and one receive completion queue, capped at the device's
 *   max_cqe, and one completion channel for both behind
 *   uct_iface_event_fd_get(); arming drains and acknowledges the channel,
 *   arms the send CQ for any completion and the receive CQ for solicited
 *   ones only, and returns UCS_ERR_BUSY when a completion is already
 *   waiting (such completions are kept for the next poll, never lost).
 * - Device addresses (GID, LID, link layer, path MTU), reachability, and
 *   address handle attributes with the GRH.
 * - Queue pair helpers: creation on the iface's CQs and the md's PD, the
 *   inline limit found by trial, state changes with one error line, the
 *   QP timeout and RNR timer encodings.
 * - SGEs, those of a zcopy iov, and the checks of an AM zcopy.
 * - Work-completion status to ucs_status_t.
 * - The part of iface_query every verbs transport shares.
 */
#ifndef UCT_IB_IFACE_H_
#define UCT_IB_IFACE_H_

#include "ib_md.h"

#include <uct/base/uct_iface.h>
#include <uct/base/uct_desc.h>
#include <uct/base/uct_pending.h>
#include <ucs/debug/log_limit.h>

BEGIN_C_DECLS

/** Completion queue directions. */
typedef enum uct_ib_dir {
    UCT_IB_DIR_TX = 0,
    UCT_IB_DIR_RX = 1,
    UCT_IB_DIR_LAST
} uct_ib_dir_t;

/** Largest inline size rxe accepts (513 fails). The probe at open starts
 *  at TX_MIN_INLINE and halves it on each refusal, so asking more than a
 *  device takes costs a few throwaway QPs and may end well below it. */
#define UCT_IB_MAX_INLINE_PROBE 512

/** Largest TX_MIN_INLINE accepted. */
#define UCT_IB_MAX_INLINE_CONFIG 65536

/** Completions polled and kept by an arm that finds some waiting. */
#define UCT_IB_WC_STASH_MAX 16

/** PATH_MTU=default: the port's active MTU. */
#define UCT_IB_PATH_MTU_DEFAULT 0

/** uct_ib_device_addr_t::flags */
enum {
    UCT_IB_ADDR_FLAG_ROCE   = UCS_BIT(0), /* Ethernet link layer */
    UCT_IB_ADDR_FLAG_ROCEV2 = UCS_BIT(1), /* the GID is RoCE v2 */
    UCT_IB_ADDR_FLAG_IPV4   = UCS_BIT(2)  /* the GID holds ::ffff:a.b.c.d */
};

/**
 * The device address of an ib iface, as packed on the wire (unaligned):
 * enough for the peer to build an address handle and check reachability.
 */
typedef struct uct_ib_device_addr {
    uint8_t flags;    /* UCT_IB_ADDR_FLAG_* */
    uint8_t path_mtu; /* enum ibv_mtu the sender uses */
    uint16_t lid;     /* little endian; 0 on RoCE */
    uint8_t gid[16];
} UCS_S_PACKED uct_ib_device_addr_t;

/** Configuration of the ib interface layer (prefix IB_). */
typedef struct uct_ib_iface_config {
    uct_iface_config_t super;
    size_t seg_size; /* SEG_SIZE: bcopy and receive
                        buffer payload */
    struct {
        unsigned queue_len; /* TX_QUEUE_LEN: send WQEs */
        size_t min_inline;  /* TX_MIN_INLINE: inline asked for */
        unsigned min_sge;   /* TX_MIN_SGE: SGEs per send WQE */
        unsigned max_poll;  /* TX_MAX_POLL: send CQEs per poll */
        unsigned cq_len;    /* TX_CQ_LEN: send CQ entries */
    } tx;
    struct {
        unsigned queue_len; /* RX_QUEUE_LEN: receive buffers */
        unsigned max_batch; /* RX_MAX_BATCH: refill batch */
        unsigned max_poll;  /* RX_MAX_POLL: receive CQEs/poll */
    } rx;
    unsigned sl;              /* SL */
    unsigned traffic_class;   /* TRAFFIC_CLASS */
    unsigned hop_limit;       /* HOP_LIMIT */
    unsigned path_mtu;        /* PATH_MTU: 0 default, else bytes */
    int roce_local_subnet;    /* ROCE_LOCAL_SUBNET */
    unsigned roce_prefix_len; /* ROCE_SUBNET_PREFIX_LEN: bits
                                 of the IP address compared;
                                 0 compares none */
} uct_ib_iface_config_t;

extern ucs_config_field_t uct_ib_iface_config_table[];

/** What a transport asks of the layer at open. */
typedef struct uct_ib_iface_init_attr {
    unsigned tx_cq_len;       /* send CQ entries wanted; 0 takes
                                 TX_CQ_LEN */
    unsigned rx_cq_len;       /* receive CQ entries wanted; 0 takes
                                 RX_QUEUE_LEN */
    enum ibv_qp_type qp_type; /* for the inline probe */
    unsigned tx_max_sge;      /* SGEs the transport's send work requests
                                 ask for; 0 takes 1. The probe asks
                                 for them with the inline size: some
                                 devices (rxe) size one send slot for
                                 both and grant more of either */
    /** Device events of this iface's objects, from the async thread,
     *  called with the uct_ib_iface_t as @a arg: errors of its CQs, events
     *  of its port, and every QP and SRQ event and fatal device error (the
     *  transport tells its own QPs and SRQs by qp_num / srq). May be
     *  NULL. */
    uct_ib_async_event_cb_t async_event_cb;
} uct_ib_iface_init_attr_t;

/** Completions an arm polled: wc[head .. head + count - 1]. */
typedef struct uct_ib_wc_stash {
    unsigned count;
    unsigned head;
    struct ibv_wc wc[UCT_IB_WC_STASH_MAX];
} uct_ib_wc_stash_t;

/** The ib interface. */
typedef struct uct_ib_iface {
    uct_base_iface_t super;
    struct ibv_cq *cq[UCT_IB_DIR_LAST];
    struct ibv_comp_channel *comp_channel;
    uint8_t port_num;
    uct_ib_gid_info_t gid_info;
    enum ibv_mtu path_mtu; /* min(port active MTU, PATH_MTU) */
    uint16_t lid;
    size_t max_inline;     /* accepted by the device */
    unsigned max_send_sge; /* granted with it (tx_max_sge asked) */
    unsigned cq_len[UCT_IB_DIR_LAST];
    unsigned num_cq_events[UCT_IB_DIR_LAST]; /* to ack */
    uct_ib_async_hook_t async_hook;
    uct_ib_async_event_cb_t async_event_cb; /* init_attr's, or NULL */
    ucs_log_limit_t wc_error_log;           /* completion errors */

    /* completions an arm found waiting, handed out by the next poll */
    uct_ib_wc_stash_t stash[UCT_IB_DIR_LAST];

    struct {
        size_t seg_size;
        unsigned tx_queue_len;
        unsigned tx_min_sge;
        unsigned tx_max_poll;
        unsigned rx_queue_len;
        unsigned rx_max_batch;
        unsigned rx_max_poll;
        uint8_t sl;
        uint8_t traffic_class;
        uint8_t hop_limit;
        int roce_local_subnet;
        unsigned roce_prefix_len;
    } config;
} uct_ib_iface_t;

static inline uct_ib_iface_t *uct_ib_iface(uct_iface_h iface)
{
    return ucs_container_of(iface, uct_ib_iface_t, super.super);
}

static inline uct_ib_md_t *uct_ib_iface_md(const uct_ib_iface_t *iface)
{
    return uct_ib_md_from(iface->super.md);
}

static inline uct_ib_device_t *uct_ib_iface_device(const uct_ib_iface_t *iface)
{
    return &uct_ib_iface_md(iface)->dev;
}

/**
 * Open the layer: the base iface, the port of params' device name
 * ("<dev>:<port>", which must be a usable port of @a md's device), its
 * GID and path MTU, the completion channel, the two CQs (each capped at
 * max_cqe, with a debug line when capped), the inline limit probed with a
 * throwaway QP of init_attr->qp_type, and the async event hook.
 * Every failure is one error line with the cause and a hint.
 */
ucs_status_t uct_ib_iface_init(uct_ib_iface_t *iface,
                               const uct_iface_ops_t *ops, uct_md_h md,
                               uct_worker_h worker,
                               const uct_iface_params_t *params,
                               const uct_ib_iface_config_t *config,
                               const uct_ib_iface_init_attr_t *init_attr);

/** Undo uct_ib_iface_init (the transport destroyed its QPs first). */
void uct_ib_iface_cleanup(uct_ib_iface_t *iface);

/**
 * Poll up to @a max completions of direction @a dir into @a wc, those an
 * arm kept first. Returns the count (0 when none), or a negative status
 * when ibv_poll_cq fails (logged).
 */
int uct_ib_iface_poll_cq_slow(uct_ib_iface_t *iface, uct_ib_dir_t dir,
                              struct ibv_wc *wc, int max);

static UCS_F_ALWAYS_INLINE int uct_ib_iface_poll_cq(uct_ib_iface_t *iface,
                                                    uct_ib_dir_t dir,
                                                    struct ibv_wc *wc, int max)
{
    int ret;

    if (ucs_unlikely(iface->stash[dir].count != 0)) {
        return uct_ib_iface_poll_cq_slow(iface, dir, wc, max);
    }
    ret = ibv_poll_cq(iface->cq[dir], max, wc);
    if (ucs_unlikely(ret < 0)) {
        return uct_ib_iface_poll_cq_slow(iface, dir, wc, max);
    }
    return ret;
}

/** uct_iface_event_fd_get: the completion channel's fd (non-blocking). */
ucs_status_t uct_ib_iface_event_fd_get(uct_iface_h tl_iface, int *fd_p);

/**
 * uct_iface_event_arm: read and acknowledge the channel's events, arm the
 * send CQ (UCT_EVENT_SEND_COMP) and the receive CQ, solicited only
 * (UCT_EVENT_RECV, UCT_EVENT_RECV_SIG), then look for completions that
 * arrived before the arm and keep them. Returns UCS_ERR_BUSY when there are
 * some (or the transport says it has work, see @a busy), UCS_OK otherwise.
 */
ucs_status_t uct_ib_iface_arm(uct_ib_iface_t *iface, unsigned events, int busy);

/* ------------------------------------------------------------------------
 * Addresses
 */

/** uct_iface_get_device_address: a uct_ib_device_addr_t. */
ucs_status_t uct_ib_iface_get_device_address(uct_iface_h tl_iface,
                                             uct_device_addr_t *addr);

/**
 * Whether a peer with device address @a addr can be reached from @a iface:
 * the same link layer; on InfiniBand the same subnet prefix, or else both
 * GIDs routable (neither on the default link-local subnet fe80::/64), so
 * the GRH takes the packets through a router; on RoCE the same RoCE
 * version and address family, and with ROCE_LOCAL_SUBNET=y the same
 * first ROCE_SUBNET_PREFIX_LEN bits of the IP address (0: any address).
 * A NULL address is not reachable.
 */
int uct_ib_iface_is_reachable_addr(const uct_ib_iface_t *iface,
                                   const uct_ib_device_addr_t *addr);

/** uct_iface_is_reachable of a transport for which the device address
 *  decides (uct_ib_iface_is_reachable_addr(); @a iface_addr is not
 *  looked at). */
int uct_ib_iface_is_reachable(const uct_iface_h tl_iface,
                              const uct_device_addr_t *dev_addr,
                              const uct_iface_addr_t *iface_addr);

/**
 * Check UCX_IB_TX_QUEUE_LEN=@a queue_len of a transport against its least
 * @a min, 32767 and the device's max_qp_wr: UCS_ERR_INVALID_PARAM with one
 * line naming the range (and @a hint, "" for none) when out of it.
 */
ucs_status_t uct_ib_iface_check_tx_queue_len(const char *dev_name,
                                             unsigned queue_len, unsigned min,
                                             const struct ibv_device_attr *attr,
                                             const char *hint);

/**
 * The arbiter callback's work for an ep's pending group (uct_pending.h):
 * a failed ep's group (@a ep_failed) is descheduled; otherwise its
 * requests are dispatched, and when they stop because the interface ran
 * out (*@a slots below @a min_slots afterwards, not the ep) the
 * dispatch stops, so that this group runs first the next time.
 */
ucs_arbiter_cb_result_t uct_ib_iface_pending_dispatch(
    ucs_arbiter_t *arbiter, ucs_arbiter_group_t *group,
    ucs_arbiter_elem_t *elem, int ep_failed, const int *slots, int min_slots);

/**
 * Fill @a ah_attr to reach @a addr from @a iface's port: the LID, the
 * service level, and the GRH (GID, our GID index, traffic class, hop
 * limit) whenever the link layer is Ethernet or the peer is on another
 * subnet.
 */
void uct_ib_iface_fill_ah_attr(const uct_ib_iface_t *iface,
                               const uct_ib_device_addr_t *addr,
                               struct ibv_ah_attr *ah_attr);

/** Path MTU to use with a peer: the smaller of ours and its own. */
enum ibv_mtu uct_ib_iface_peer_mtu(const uct_ib_iface_t *iface,
                                   const uct_ib_device_addr_t *addr);

/** "::ffff:127.0.0.1 lid 0 mtu 4096" into @a buf. */
const char *uct_ib_device_addr_str(const uct_ib_device_addr_t *addr, char *buf,
                                   size_t max);

/* ------------------------------------------------------------------------
 * Queue pairs
 */

/**
 * Create a QP of @a attr->qp_type on the iface's CQs and the md's PD with
 * the capabilities in @a attr->cap (max_inline_data is set to the iface's
 * max_inline). Logs one error line with the cause on failure.
 *
 * @return UCS_OK; UCS_ERR_NO_RESOURCE when the device or the memory
 *         limit refused it (the line names ulimit -l and the sizes).
 */
ucs_status_t uct_ib_iface_create_qp(uct_ib_iface_t *iface,
                                    struct ibv_qp_init_attr *attr,
                                    struct ibv_qp **qp_p);

/**
 * ibv_modify_qp with one error line naming the QP, the state and the
 * cause. Returns UCS_OK or UCS_ERR_IO_ERROR (UCS_ERR_INVALID_PARAM when
 * the device rejected the attributes).
 */
ucs_status_t uct_ib_qp_modify(struct ibv_qp *qp, struct ibv_qp_attr *attr,
                              int mask, const char *what);

/** Move @a qp to INIT on the iface's port (pkey 0, @a access_flags for an
 *  RC QP, @a qkey for a UD one). */
ucs_status_t uct_ib_iface_qp_init(uct_ib_iface_t *iface, struct ibv_qp *qp,
                                  int access_flags, uint32_t qkey);

/** The QP timeout exponent whose 4.096 us * 2^exp covers @a seconds
 *  (1..31). */
uint8_t uct_ib_timeout_exp(double seconds);

/** The RNR timer code (1..31, 0 is the longest) of the smallest delay
 *  >= @a seconds. */
uint8_t uct_ib_rnr_timer_code(double seconds);

/** The verbs MTU of a byte count 256..4096 (a power of two), or 0 when
 *  @a bytes is none of those. */
enum ibv_mtu uct_ib_mtu_from_bytes(size_t bytes);

/* ------------------------------------------------------------------------
 * Scatter/gather lists
 */

/** One SGE: @a length bytes at @a addr, of local key @a lkey (0 for data
 *  sent inline). */
static UCS_F_ALWAYS_INLINE void uct_ib_sge_fill(struct ibv_sge *sge,
                                                const void *addr, size_t length,
                                                uint32_t lkey)
{
    sge->addr   = (uintptr_t)addr;
    sge->length = (uint32_t)length;
    sge->lkey   = lkey;
}

/**
 * Fill at most @a max SGEs from the zcopy iov @a iov[0..iovcnt-1], whose
 * memory handles are the ib md's (uct_ib_mem_t: their lkey; NULL gives 0).
 * An entry of count > 1 takes one SGE per element, stride bytes apart;
 * an entry of length or count 0 takes none. Sets *@a length_p to the
 * bytes the SGEs cover.
 *
 * @return the SGE count, or -1 when @a max SGEs do not suffice (see
 *         uct_ib_iface_too_many_sges()).
 */
static UCS_F_ALWAYS_INLINE int uct_ib_iov_to_sge(const uct_iov_t *iov,
                                                 size_t iovcnt,
                                                 struct ibv_sge *sge,
                                                 size_t max, size_t *length_p)
{
    size_t i, c, n = 0, total = 0;
    const uct_ib_mem_t *memh;

    for (i = 0; i < iovcnt; ++i) {
        if ((iov[i].length == 0) || (iov[i].count == 0)) {
            continue;
        }
        memh = (const uct_ib_mem_t *)iov[i].memh;
        for (c = 0; c < iov[i].count; ++c) {
            if (n == max) {
                return -1;
            }
            uct_ib_sge_fill(&sge[n],
                            (const char *)iov[i].buffer +
                                (c * ((iov[i].count > 1) ? iov[i].stride : 0)),
                            iov[i].length, (memh != NULL) ? memh->lkey : 0);
            total += iov[i].length;
            ++n;
        }
    }
    *length_p = total;
    return (int)n;
}

/**
 * The argument checks of an AM zcopy: the AM id, @a iovcnt at most
 * @a max_iov (the send's first SGE is the header's), @a header_length at
 * most @a max_hdr. Each failure is logged (uct_iface_check_*()).
 */
static UCS_F_ALWAYS_INLINE ucs_status_t uct_ib_iface_check_am_zcopy(
    uct_ib_iface_t *iface, uint8_t id, unsigned header_length, size_t iovcnt,
    size_t max_iov, size_t max_hdr)
{
    ucs_status_t status;

    status = uct_iface_check_am_id(&iface->super, id);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    status = uct_iface_check_iovcnt(&iface->super, "am_zcopy", iovcnt, max_iov);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    return uct_iface_check_length(&iface->super, "am_zcopy header",
                                  header_length, max_hdr);
}

/**
 * An iov of @a what (e.g. "am_zcopy") needs more than @a max SGEs: one
 * diagnostic line (a capability limit, not a bad argument: the caller
 * may fall back), and UCS_ERR_UNSUPPORTED.
 */
ucs_status_t uct_ib_iface_too_many_sges(const uct_ib_iface_t *iface,
                                        const char *what, unsigned max);

/* ------------------------------------------------------------------------
 * Completions and queries
 */

/**
 * The ucs_status_t of a failed work completion: retry exceeded ->
 * UCS_ERR_ENDPOINT_TIMEOUT, RNR retry exceeded -> UCS_ERR_ENDPOINT_TIMEOUT,
 * remote access/invalid request/operation -> UCS_ERR_CONNECTION_RESET
 * (the peer refused), local protection/length -> UCS_ERR_INVALID_ADDR
 * (our buffer or key was bad), flushed -> UCS_ERR_CANCELED, others ->
 * UCS_ERR_IO_ERROR.
 */
ucs_status_t uct_ib_wc_status(enum ibv_wc_status status);

/**
 * One rate-limited line for a failed completion of @a iface: the status
 * string, opcode, QP number, vendor error and @a what (e.g. the peer).
 */
void uct_ib_iface_log_wc_error(uct_ib_iface_t *iface, const struct ibv_wc *wc,
                               const char *what);

/**
 * The part of iface_query every verbs transport shares: base values,
 * device address length, latency/bandwidth estimates of the port (with
 * @a overhead seconds per message), priority, the event flags
 * (UCT_IFACE_FLAG_EVENT_SEND_COMP/RECV/RECV_SIG/FD).
 */
void uct_ib_iface_query(uct_ib_iface_t *iface, double overhead,
                        uct_iface_attr_t *attr);

/** uct_tl_t::query_devices of a verbs transport: the usable ports of
 *  @a md's device (uct_ib_device_query_ports()). */
ucs_status_t uct_ib_iface_query_devices(uct_md_h md,
                                        uct_tl_device_resource_t **devices_p,
                                        unsigned *num_devices_p);

END_C_DECLS

#endif
