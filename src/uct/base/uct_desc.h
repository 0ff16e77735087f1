/*
 * Descriptors shared by the transports: pools of send and receive buffers
 * whose chunks are allocated and registered through the interface's memory
 * domain, and the layout of a receive descriptor.
 *
 * A receive descriptor is one pool object:
 *
 *   obj                      payload - hdr_len     payload
 *   |<- priv_size ->| ...    |<- wire header ->|   |<- seg_size ->|
 *   |                 |<- recv desc ptr ->|<- user rx_headroom ->|
 *
 * - The transport's own fields (priv_size bytes, e.g. a list link and the
 *   lkey of the chunk) start the object.
 * - The payload of an active message (what the handler's @a data points to)
 *   sits at payload_offset, placed so that (payload + am_align_offset) is a
 *   multiple of the iface's am_alignment.
 * - The transport's wire header (hdr_len bytes) ends at the payload: the
 *   device writes [header][payload] from recv_offset on.
 * - The user's rx_headroom ends at the payload too, with the pointer to the
 *   uct_recv_desc_t right before it (uct_recv_desc_set()). Headroom and
 *   wire header overlap: the transport reads its header before the handler
 *   runs, and the user writes its headroom only after that.
 *
 * A handler that returns UCS_INPROGRESS for a UCT_CB_PARAM_FLAG_DESC
 * message keeps the object until uct_iface_release_desc(payload -
 * rx_headroom), which returns it to its pool.
 */
#ifndef UCT_BASE_DESC_H_
#define UCT_BASE_DESC_H_

#include <uct/base/uct_iface.h>
#include <ucs/memory/mpool.h>

BEGIN_C_DECLS

/**
 * Called once for each object of a new chunk, with the memory handle of
 * the chunk (NULL when the md does not register memory), so a transport
 * can keep the local key in the object.
 */
typedef void (*uct_iface_mpool_obj_init_t)(uct_iface_h iface, void *obj,
                                           uct_mem_h memh);

/** What a pool of an interface is made of. */
typedef struct uct_iface_mpool_params {
    size_t elem_size;                    /* bytes per object */
    size_t align_offset;                 /* (obj + align_offset) */
    size_t alignment;                    /*   % alignment == 0 */
    unsigned elems_per_chunk;            /* > 0 */
    unsigned max_elems;                  /* 0 or UINT_MAX: none */
    uct_iface_mpool_obj_init_t obj_init; /* may be NULL */
    const char *name;                    /* for messages */
} uct_iface_mpool_params_t;

/**
 * Initialize @a mp, whose chunks come from uct_iface_mem_alloc() on
 * @a iface (so with the iface's allocation methods, registered with its
 * md when the md can register). Nothing is allocated until the first get.
 * ucs_mpool_release_idle() gives idle chunks back (deregistered and
 * freed); ucs_mpool_cleanup() frees the rest.
 *
 * @return UCS_OK, or UCS_ERR_INVALID_PARAM/UCS_ERR_NO_MEMORY as
 *         ucs_mpool_init() does.
 */
ucs_status_t uct_iface_mpool_init(uct_base_iface_t *iface, ucs_mpool_t *mp,
                                  const uct_iface_mpool_params_t *params);

/** The offsets of a receive descriptor (see the top of this file). */
typedef struct uct_rx_desc_layout {
    size_t priv_size;       /* transport fields at the object start */
    size_t hdr_len;         /* wire header before the payload */
    size_t seg_size;        /* largest payload */
    size_t payload_offset;  /* object start -> AM payload */
    size_t recv_offset;     /* object start -> where the device writes
                               (payload_offset - hdr_len) */
    size_t headroom_offset; /* object start -> user headroom
                               (payload_offset - rx_headroom) */
    size_t elem_size;       /* whole object */
    size_t align_offset;    /* for uct_iface_mpool_params_t: the payload is */
    size_t alignment;       /*   aligned as the iface's AM parameters ask */
} uct_rx_desc_layout_t;

/**
 * Compute the receive descriptor layout of @a iface (its rx_headroom,
 * am_alignment and am_align_offset) for a transport with @a priv_size
 * bytes of its own fields, a wire header of @a hdr_len bytes and payloads
 * of at most @a seg_size bytes.
 */
void uct_rx_desc_layout_init(const uct_base_iface_t *iface, size_t priv_size,
                             size_t hdr_len, size_t seg_size,
                             uct_rx_desc_layout_t *layout);

/** Fill @a params with the sizes of @a layout (the caller sets the rest). */
void uct_rx_desc_mpool_params(const uct_rx_desc_layout_t *layout,
                              uct_iface_mpool_params_t *params);

/** The payload of receive descriptor @a obj. */
static UCS_F_ALWAYS_INLINE void *
uct_rx_desc_payload(const uct_rx_desc_layout_t *layout, void *obj)
{
    return (char *)obj + layout->payload_offset;
}

/** Where the device writes into receive descriptor @a obj. */
static UCS_F_ALWAYS_INLINE void *
uct_rx_desc_recv_buf(const uct_rx_desc_layout_t *layout, void *obj)
{
    return (char *)obj + layout->recv_offset;
}

/**
 * Before a handler that may keep the descriptor runs: store @a release
 * (whose callback returns the object to its pool, see
 * uct_rx_desc_release_obj()) where uct_iface_release_desc() finds it.
 * The wire header must have been read already: this may overwrite it.
 */
static UCS_F_ALWAYS_INLINE void
uct_rx_desc_set_release(const uct_rx_desc_layout_t *layout, void *obj,
                        uct_recv_desc_t *release)
{
    uct_recv_desc_set((char *)obj + layout->headroom_offset, release);
}

/**
 * The object of the user descriptor @a desc that a release callback gets
 * (the start of the user headroom).
 */
static UCS_F_ALWAYS_INLINE void *
uct_rx_desc_obj(const uct_rx_desc_layout_t *layout, void *desc)
{
    return (char *)desc - layout->headroom_offset;
}

/**
 * A release callback that returns the object to its pool: embed it in the
 * iface next to the layout it reads, initialize it with
 * uct_rx_desc_release_init(), and pass &release->super to
 * uct_rx_desc_set_release().
 */
typedef struct uct_rx_desc_release {
    uct_recv_desc_t super;
    const uct_rx_desc_layout_t *layout;
} uct_rx_desc_release_t;

void uct_rx_desc_release_init(uct_rx_desc_release_t *release,
                              const uct_rx_desc_layout_t *layout);

END_C_DECLS

#endif
