/*
 * FIFO layout: checks of a peer's parameters, views, initialization.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mm.h"

#include <ucs/sys/math.h>
#include <ucs/sys/sys.h>

#include <string.h>
#include <unistd.h>

ucs_status_t uct_mm_fifo_layout(const uct_mm_fifo_params_t *params,
                                uct_mm_fifo_layout_t *layout)
{
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t elems, stride, length;

    if ((params->fifo_size < UCT_MM_FIFO_MIN_SIZE) ||
        (params->fifo_size > UCT_MM_FIFO_MAX_SIZE) ||
        (params->fifo_size & (params->fifo_size - 1)) ||
        (params->elem_size < UCT_MM_FIFO_MIN_ELEM_SIZE) ||
        (params->elem_size > UCT_MM_FIFO_MAX_ELEM_SIZE) ||
        (params->elem_size % 64) || (params->seg_size == 0) ||
        (params->seg_size > UCT_MM_FIFO_MAX_SEG_SIZE) ||
        (params->num_descs < params->fifo_size) ||
        (params->num_descs > UCT_MM_FIFO_MAX_DESCS) ||
        (params->data_offset >= page)) {
        return UCS_ERR_INVALID_PARAM;
    }

    /* every number is bounded above: none of these can overflow */
    elems  = ucs_align_up_pow2((uint64_t)params->fifo_size * params->elem_size,
                               page);
    stride = ucs_align_up_pow2((uint64_t)params->data_offset + params->seg_size,
                               page);
    length = page + elems + (uint64_t)params->num_descs * stride;
    if (length > UCT_MM_SEG_MAX_LENGTH) {
        return UCS_ERR_INVALID_PARAM;
    }

    layout->elems_offset = page;
    layout->descs_offset = page + elems;
    layout->desc_stride  = stride;
    layout->length       = length;
    return UCS_OK;
}

void uct_mm_fifo_view_init(uct_mm_fifo_view_t *view,
                           const uct_mm_fifo_params_t *params,
                           const uct_mm_fifo_layout_t *layout, void *base)
{
    view->ctl         = base;
    view->elems       = (char *)base + layout->elems_offset;
    view->descs       = (char *)base + layout->descs_offset;
    view->cached_tail = 0;
    view->mask        = params->fifo_size - 1;
    view->round_shift = (uint32_t)ucs_ilog2(params->fifo_size);
    view->elem_size   = params->elem_size;
    view->seg_size    = params->seg_size;
    view->num_descs   = params->num_descs;
    view->data_offset = params->data_offset;
    view->desc_stride = layout->desc_stride;
}

void uct_mm_fifo_init(uct_mm_fifo_view_t *view)
{
    uct_mm_fifo_elem_t *elem;
    uint32_t i;

    view->ctl->head = 0;
    view->ctl->tail = 0;
    for (i = 0; i <= view->mask; ++i) {
        elem = uct_mm_fifo_elem(view, i);
        memset(elem, 0, sizeof(*elem));
        /* round -1 is odd: nothing is ready for round 0 */
        elem->flags = UCT_MM_FIFO_ELEM_OWNER;
        elem->desc  = i;
        elem->seq   = UINT32_MAX - i; /* not the number of any element
                                         the receiver will read here soon */
    }
}
