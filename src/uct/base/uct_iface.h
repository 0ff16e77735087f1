/*
 * Interface and endpoint base: what every transport embeds first, the
 * "unsupported" operations that fill a transport's table, and small
 * fast-path helpers (AM dispatch, argument checks, completions).
 */
#ifndef UCT_BASE_IFACE_H_
#define UCT_BASE_IFACE_H_

#include <uct/base/uct_component.h>
#include <uct/base/uct_md.h>
#include <uct/base/uct_worker.h>
#include <ucs/debug/log.h>
#include <ucs/debug/log_limit.h>
#include <ucs/debug/assert.h>

BEGIN_C_DECLS

/** Traffic of one active message id on an interface (see
 *  uct_iface_stats_t for who updates it and how it is read). */
typedef struct uct_iface_am_stats {
    uint64_t tx_msgs;  /* sent from this interface */
    uint64_t tx_bytes; /* as the receiver's handler sees them */
    uint64_t rx_msgs;  /* delivered to this interface's handler */
    uint64_t rx_bytes;
} uct_iface_am_stats_t;

/**
 * One active message id: its handler, and its counters next to it, so that
 * delivery updates the counters in the cache line it reads the handler
 * from, with the address it already has. 64 bytes: a slot is found with a
 * shift.
 */
typedef struct uct_am_handler {
    uct_am_callback_t cb;
    void *arg;
    uint32_t flags;
    uint32_t reserved; /* the id, for the stub handler */
    uct_iface_am_stats_t stats;
    uint64_t pad;
} uct_am_handler_t;

/** Base interface configuration, embedded first in every iface config. */
struct uct_iface_config {
    ucs_config_names_array_t alloc_methods; /* names, tried in order */
    unsigned failure_level;                 /* ucs_log_level_t */
    unsigned long max_num_eps;
};

extern ucs_config_field_t uct_iface_config_table[];

/**
 * Counters of an interface, shown by its "counters" file in the object
 * tree (uct/base/uct_vfs.h); those of each active message id are in its
 * uct_am_handler_t. The thread that drives the interface updates them
 * with plain additions (no atomics, no locks, no system calls); readers on
 * other threads load them as they are, so a value may be a few messages
 * behind. With configure --disable-stats (no ENABLE_STATS in config.h)
 * the uct_iface_stat_*() functions below are empty and every counter stays
 * 0; the layout is the same either way, so a transport built with other
 * settings still agrees with libuct (one built out of tree counts when it
 * defines ENABLE_STATS).
 */
typedef struct uct_iface_stats {
    uint64_t put_msgs;
    uint64_t put_bytes;
    uint64_t get_msgs;
    uint64_t get_bytes;
    uint64_t tx_no_resource; /* sends refused for now
                                (UCS_ERR_NO_RESOURCE) */
    uint64_t tx_retries;     /* sends the transport had to
                                resume later (tcp: the socket
                                took only part, or nothing) */
    uint64_t conn_retries;   /* connection attempts repeated */
    uint64_t tx_errors;      /* sends failed with an error */
    uint64_t peer_failures;  /* endpoints failed by their peer
                                (uct_iface_handle_ep_err) */
} uct_iface_stats_t;

struct uct_iface_vfs;

/** The base of every interface. */
typedef struct uct_base_iface {
    uct_iface_t super; /* operations table: keep first */
    uct_am_handler_t am[UCT_AM_ID_MAX];
    uct_md_h md;
    uct_priv_worker_t *worker;
    uct_tl_t *tl;
    char dev_name[UCT_DEVICE_NAME_MAX];
    size_t rx_headroom;
    size_t am_alignment; /* 1 when not requested */
    size_t am_align_offset;
    int stats_on; /* the counters can be seen: the
                     object tree was on at open */
    uct_error_handler_t err_handler;
    void *err_handler_arg;
    uint32_t err_handler_flags;
    uct_am_tracer_t am_tracer;
    void *am_tracer_arg;
    unsigned progress_flags; /* UCT_PROGRESS_* enabled */
    uct_worker_cb_id_t prog_id;
    ucs_list_link_t list;        /* in the worker's ifaces */
    unsigned num_eps;            /* uct_base_ep_init - cleanup */
    struct uct_iface_vfs *vfs;   /* object tree data, or NULL */
    ucs_log_limit_t am_drop_log; /* messages with no handler */
    struct {
        unsigned num_alloc_methods;
        uct_alloc_method_t alloc_methods[UCT_ALLOC_METHOD_LAST];
        ucs_log_level_t failure_level;
        size_t max_num_eps;
    } config;
    uct_iface_stats_t stats; /* apart from the fields above */
} uct_base_iface_t;

/** The base of every endpoint. */
typedef struct uct_base_ep {
    uct_ep_t super;
} uct_base_ep_t;

static inline uct_base_iface_t *uct_base_iface(uct_iface_h iface)
{
    return (uct_base_iface_t *)iface;
}

/**
 * Initializes the base part of an interface: copies @a ops (filling every
 * NULL slot with an "unsupported" function), checks and stores the
 * parameters shared by all transports (rx_headroom, AM alignment, error
 * handler), the allocation methods from @a config, and installs the
 * default "drop with a warning" AM handlers.
 */
ucs_status_t uct_base_iface_init(uct_base_iface_t *iface,
                                 const uct_iface_ops_t *ops, uct_md_h md,
                                 uct_worker_h worker,
                                 const uct_iface_params_t *params,
                                 const uct_iface_config_t *config);

/** Undoes uct_base_iface_init (disables progress). */
void uct_base_iface_cleanup(uct_base_iface_t *iface);

/** Fill every NULL slot of @a ops with a function that returns
 *  UCS_ERR_UNSUPPORTED (or does nothing, for the void ones). */
void uct_iface_ops_fill_unsupported(uct_iface_ops_t *ops);

/** Whether @a iface is the endpoint table of a connection manager
 *  (uct/base/uct_cm.h) rather than an interface. */
int uct_cm_owns_iface(uct_iface_h iface);

/** uct_ep_create() with UCT_EP_PARAM_FIELD_CM (uct_cm.c). */
ucs_status_t uct_cm_ep_create(const uct_ep_params_t *params, uct_ep_h *ep_p);

/** Fills @a attr with zeros and the values the base knows. */
void uct_base_iface_query(uct_base_iface_t *iface, uct_iface_attr_t *attr);

/** progress_enable/disable that register ops.iface_progress with the
 *  worker when any UCT_PROGRESS_* flag is on. */
void uct_base_iface_progress_enable(uct_iface_h iface, unsigned flags);
void uct_base_iface_progress_disable(uct_iface_h iface, unsigned flags);

/** An iface_flush/iface_fence/ep_flush/ep_fence that completes at once
 *  (for transports whose operations complete before they return). */
ucs_status_t uct_base_iface_flush(uct_iface_h iface, unsigned flags,
                                  uct_completion_t *comp);
ucs_status_t uct_base_iface_fence(uct_iface_h iface, unsigned flags);
ucs_status_t uct_base_ep_flush(uct_ep_h ep, unsigned flags,
                               uct_completion_t *comp);
ucs_status_t uct_base_ep_fence(uct_ep_h ep, unsigned flags);

/**
 * Initializes the base part of an endpoint and adds its directory to the
 * object tree (with the transport's files, uct_tl_t::ep_vfs_init), so
 * every endpoint a transport creates, accepted ones included, shows up.
 */
void uct_base_ep_init(uct_base_ep_t *ep, uct_base_iface_t *iface);

/**
 * Undoes uct_base_ep_init: removes the endpoint from the object tree. A
 * transport calls it on every path that frees an endpoint, before it
 * tears the endpoint down.
 */
void uct_base_ep_cleanup(uct_base_ep_t *ep);

/** Whether the application set a handler for AM @a id. */
int uct_iface_am_handler_is_set(const uct_base_iface_t *iface, uint8_t id);

/** Reports a peer failure on @a ep to the user's error handler, once the
 *  transport has completed the ep's outstanding operations with an error.
 *  Returns the handler's status, or @a status when there is no handler
 *  (after logging it at the iface's failure level). */
ucs_status_t uct_iface_handle_ep_err(uct_iface_h iface, uct_ep_h ep,
                                     ucs_status_t status);

/** Logs the invalid AM id and returns UCS_ERR_INVALID_PARAM. */
ucs_status_t uct_iface_invalid_am_id(uct_base_iface_t *iface, unsigned id);

/** Logs a length over the limit and returns UCS_ERR_INVALID_PARAM. */
ucs_status_t uct_iface_invalid_length(uct_base_iface_t *iface, const char *what,
                                      size_t length, size_t max);

/** Logs an iov count over the limit and returns UCS_ERR_INVALID_PARAM. */
ucs_status_t uct_iface_invalid_iovcnt(uct_base_iface_t *iface, const char *what,
                                      size_t iovcnt, size_t max);

/** UCS_OK when @a id is a valid AM id; otherwise logs and rejects. */
static UCS_F_ALWAYS_INLINE ucs_status_t
uct_iface_check_am_id(uct_base_iface_t *iface, uint8_t id)
{
    if (ucs_unlikely(id >= UCT_AM_ID_MAX)) {
        return uct_iface_invalid_am_id(iface, id);
    }
    return UCS_OK;
}

/** UCS_OK when @a length <= @a max; otherwise logs and rejects. */
static UCS_F_ALWAYS_INLINE ucs_status_t uct_iface_check_length(
    uct_base_iface_t *iface, const char *what, size_t length, size_t max)
{
    if (ucs_unlikely(length > max)) {
        return uct_iface_invalid_length(iface, what, length, max);
    }
    return UCS_OK;
}

static UCS_F_ALWAYS_INLINE ucs_status_t uct_iface_check_iovcnt(
    uct_base_iface_t *iface, const char *what, size_t iovcnt, size_t max)
{
    if (ucs_unlikely(iovcnt > max)) {
        return uct_iface_invalid_iovcnt(iface, what, iovcnt, max);
    }
    return UCS_OK;
}

/* ------------------------------------------------------------------------
 * Counters (see uct_iface_stats_t). Each is a few plain additions on the
 * interface that sends or receives; nothing when stats are compiled out.
 */

/* 1 when the counters are kept: ENABLE_STATS of config.h (configure
 * without --disable-stats). The functions below test it like a variable,
 * so every parameter is used either way and the compiler drops the code. */
#ifdef ENABLE_STATS
#define UCT_IFACE_STATS_ENABLED 1
#else
#define UCT_IFACE_STATS_ENABLED 0
#endif

/** An active message of @a length bytes (what the receiver's handler
 *  gets: header included) left through @a iface. @a id is a checked AM id
 *  (a size_t: the compiler widens it once for every use). */
static UCS_F_ALWAYS_INLINE void uct_iface_stat_am_tx(uct_base_iface_t *iface,
                                                     size_t id, size_t length)
{
    uct_iface_am_stats_t *stats = &iface->am[id].stats;

    if (UCT_IFACE_STATS_ENABLED) {
        stats->tx_msgs += 1;
        stats->tx_bytes += length;
    }
}

/** An active message of @a length bytes was delivered to @a handler
 *  (uct_iface_invoke_am counts every delivery). */
static UCS_F_ALWAYS_INLINE void
uct_am_handler_stat_rx(uct_am_handler_t *handler, size_t length)
{
    if (UCT_IFACE_STATS_ENABLED) {
        handler->stats.rx_msgs += 1;
        handler->stats.rx_bytes += length;
    }
}

/** A PUT of @a length bytes was issued. */
static UCS_F_ALWAYS_INLINE void uct_iface_stat_put(uct_base_iface_t *iface,
                                                   size_t length)
{
    if (UCT_IFACE_STATS_ENABLED) {
        iface->stats.put_msgs += 1;
        iface->stats.put_bytes += length;
    }
}

/** A GET of @a length bytes was issued. */
static UCS_F_ALWAYS_INLINE void uct_iface_stat_get(uct_base_iface_t *iface,
                                                   size_t length)
{
    if (UCT_IFACE_STATS_ENABLED) {
        iface->stats.get_msgs += 1;
        iface->stats.get_bytes += length;
    }
}

/** A send returned the error @a status: counted as refused for now
 *  (UCS_ERR_NO_RESOURCE) or as failed. */
static UCS_F_ALWAYS_INLINE void uct_iface_stat_tx_error(uct_base_iface_t *iface,
                                                        ucs_status_t status)
{
    if (UCT_IFACE_STATS_ENABLED) {
        if (status == UCS_ERR_NO_RESOURCE) {
            iface->stats.tx_no_resource += 1;
        } else {
            iface->stats.tx_errors += 1;
        }
    }
}

/** The device (socket) took less than was offered; the rest is resumed
 *  later. */
static UCS_F_ALWAYS_INLINE void uct_iface_stat_tx_retry(uct_base_iface_t *iface)
{
    if (UCT_IFACE_STATS_ENABLED) {
        iface->stats.tx_retries += 1;
    }
}

/** An endpoint failed (reported to the error handler). */
static UCS_F_ALWAYS_INLINE void
uct_iface_stat_peer_failure(uct_base_iface_t *iface)
{
    if (UCT_IFACE_STATS_ENABLED) {
        iface->stats.peer_failures += 1;
    }
}

/** A connection attempt failed and will be repeated. */
static UCS_F_ALWAYS_INLINE void
uct_iface_stat_conn_retry(uct_base_iface_t *iface)
{
    if (UCT_IFACE_STATS_ENABLED) {
        iface->stats.conn_retries += 1;
    }
}

/**
 * Calls the AM handler for the checked AM @a id and counts the message as
 * received. @a data must be valid. The count comes after the call (a
 * handler may not close its interface, which every transport relies on
 * anyway): counting before it measurably slowed the self message rate.
 */
static UCS_F_ALWAYS_INLINE ucs_status_t
uct_iface_invoke_am(uct_base_iface_t *iface, size_t id, void *data,
                    unsigned length, unsigned flags)
{
    uct_am_handler_t *handler = &iface->am[id];
    ucs_status_t status;

    status = handler->cb(handler->arg, data, length, flags);
    uct_am_handler_stat_rx(handler, length);
    return status;
}

/**
 * uct_iface_invoke_am() without the count, for a send path a transport
 * chose at open because nobody can see the counters (!stats_on): where a
 * message costs a few cycles, the additions would be a visible part.
 */
static UCS_F_ALWAYS_INLINE ucs_status_t
uct_iface_invoke_am_uncounted(uct_base_iface_t *iface, size_t id, void *data,
                              unsigned length, unsigned flags)
{
    uct_am_handler_t *handler = &iface->am[id];

    return handler->cb(handler->arg, data, length, flags);
}

/** Runs the user's tracer, if any, for a message. */
void uct_iface_trace_am(uct_base_iface_t *iface, uct_am_trace_type_t type,
                        uint8_t id, const void *data, size_t length);

/** Marks one operation of @a comp done with @a status; runs the callback
 *  when the count reaches zero. */
static UCS_F_ALWAYS_INLINE void uct_invoke_completion(uct_completion_t *comp,
                                                      ucs_status_t status)
{
    uct_completion_update_status(comp, status);
    if (--comp->count == 0) {
        comp->func(comp);
    }
}

/** Total length of an iov (count * length per entry). */
static inline size_t uct_iov_total_length(const uct_iov_t *iov, size_t iovcnt)
{
    size_t i, total = 0;

    for (i = 0; i < iovcnt; ++i) {
        total += iov[i].length * iov[i].count;
    }
    return total;
}

/** Copies a whole iov into @a dest (honours count/stride); returns bytes. */
size_t uct_iov_to_buffer(const uct_iov_t *iov, size_t iovcnt, void *dest);

/** Copies from @a src into the buffers of an iov; returns bytes. */
size_t uct_iov_from_buffer(const uct_iov_t *iov, size_t iovcnt,
                           const void *src);

END_C_DECLS

#endif
