/*
 * Registered pools of an interface and the receive descriptor layout
 * (see uct_desc.h).
 */
#include "uct_desc.h"

#include <ucs/debug/log.h>
#include <ucs/sys/compiler_def.h>

#include <string.h>

/* What a chunk of an interface pool starts with: the allocation, padded so
 * that the chunk the pool sees keeps the allocation's alignment. */
typedef union uct_iface_mp_chunk_hdr {
    uct_allocated_memory_t mem;
    char pad[UCS_CACHE_LINE_SIZE * 2];
} uct_iface_mp_chunk_hdr_t;

/* The private area of an interface pool */
typedef struct uct_iface_mp_priv {
    uct_base_iface_t *iface;
    uct_iface_mpool_obj_init_t obj_init;
} uct_iface_mp_priv_t;

UCS_STATIC_ASSERT_SIZE_LE(uct_allocated_memory_t, UCS_CACHE_LINE_SIZE * 2);

static ucs_status_t uct_iface_mp_chunk_alloc(ucs_mpool_t *mp, size_t *size_p,
                                             void **chunk_p)
{
    uct_iface_mp_priv_t *priv = ucs_mpool_priv(mp);
    uct_allocated_memory_t mem;
    uct_iface_mp_chunk_hdr_t *hdr;
    ucs_status_t status;

    status = uct_iface_mem_alloc(&priv->iface->super, *size_p + sizeof(*hdr), 0,
                                 ucs_mpool_name(mp), &mem);
    if (status != UCS_OK) {
        return status;
    }

    hdr      = mem.address;
    hdr->mem = mem;
    *size_p  = mem.length - sizeof(*hdr);
    *chunk_p = hdr + 1;
    return UCS_OK;
}

static void uct_iface_mp_chunk_release(ucs_mpool_t *mp, void *chunk)
{
    uct_iface_mp_chunk_hdr_t *hdr = (uct_iface_mp_chunk_hdr_t *)chunk - 1;
    uct_allocated_memory_t mem    = hdr->mem;

    (void)mp;
    uct_iface_mem_free(&mem);
}

static void uct_iface_mp_obj_init(ucs_mpool_t *mp, void *obj, void *chunk)
{
    uct_iface_mp_priv_t *priv     = ucs_mpool_priv(mp);
    uct_iface_mp_chunk_hdr_t *hdr = (uct_iface_mp_chunk_hdr_t *)chunk - 1;

    priv->obj_init(&priv->iface->super, obj, hdr->mem.memh);
}

static const ucs_mpool_ops_t uct_iface_mp_ops = {
    .chunk_alloc   = uct_iface_mp_chunk_alloc,
    .chunk_release = uct_iface_mp_chunk_release,
    .obj_init      = NULL,
    .obj_cleanup   = NULL};

static const ucs_mpool_ops_t uct_iface_mp_ops_init = {
    .chunk_alloc   = uct_iface_mp_chunk_alloc,
    .chunk_release = uct_iface_mp_chunk_release,
    .obj_init      = uct_iface_mp_obj_init,
    .obj_cleanup   = NULL};

ucs_status_t uct_iface_mpool_init(uct_base_iface_t *iface, ucs_mpool_t *mp,
                                  const uct_iface_mpool_params_t *params)
{
    ucs_mpool_params_t mp_params;
    uct_iface_mp_priv_t *priv;
    ucs_status_t status;

    ucs_mpool_params_reset(&mp_params);
    mp_params.priv_size       = sizeof(uct_iface_mp_priv_t);
    mp_params.elem_size       = params->elem_size;
    mp_params.align_offset    = params->align_offset;
    mp_params.alignment       = params->alignment;
    mp_params.elems_per_chunk = params->elems_per_chunk;
    mp_params.max_elems       = params->max_elems;
    mp_params.ops =
        (params->obj_init != NULL) ? &uct_iface_mp_ops_init : &uct_iface_mp_ops;
    mp_params.name = params->name;

    status = ucs_mpool_init(mp, &mp_params);
    if (status != UCS_OK) {
        return status;
    }

    priv           = ucs_mpool_priv(mp);
    priv->iface    = iface;
    priv->obj_init = params->obj_init;
    return UCS_OK;
}

void uct_rx_desc_layout_init(const uct_base_iface_t *iface, size_t priv_size,
                             size_t hdr_len, size_t seg_size,
                             uct_rx_desc_layout_t *layout)
{
    size_t before =
        ucs_max(sizeof(uct_recv_desc_t *) + iface->rx_headroom, hdr_len);

    /* The pool aligns (obj + align_offset); the payload is what must be
     * aligned, at (payload + am_align_offset), so the object offset that
     * is aligned is payload_offset + am_align_offset, taken modulo the
     * alignment so that it stays within the object. */
    layout->priv_size       = priv_size;
    layout->hdr_len         = hdr_len;
    layout->seg_size        = seg_size;
    layout->payload_offset  = priv_size + before;
    layout->recv_offset     = layout->payload_offset - hdr_len;
    layout->headroom_offset = layout->payload_offset - iface->rx_headroom;
    layout->elem_size       = layout->payload_offset + seg_size;
    layout->alignment       = ucs_max(iface->am_alignment, 1);
    layout->align_offset =
        (layout->payload_offset + iface->am_align_offset) % layout->alignment;
}

void uct_rx_desc_mpool_params(const uct_rx_desc_layout_t *layout,
                              uct_iface_mpool_params_t *params)
{
    params->elem_size    = layout->elem_size;
    params->align_offset = layout->align_offset;
    params->alignment    = layout->alignment;
}

static void uct_rx_desc_release_cb(uct_recv_desc_t *self, void *desc)
{
    uct_rx_desc_release_t *release =
        ucs_container_of(self, uct_rx_desc_release_t, super);

    ucs_mpool_put(uct_rx_desc_obj(release->layout, desc));
}

void uct_rx_desc_release_init(uct_rx_desc_release_t *release,
                              const uct_rx_desc_layout_t *layout)
{
    release->super.cb = uct_rx_desc_release_cb;
    release->layout   = layout;
}
