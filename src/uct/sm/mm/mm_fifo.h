/*
 * The receive FIFO of the posix and sysv transports, in one shared segment
 * per receiving interface:
 *
 *   [control page][elements: fifo_size x elem_size][descriptors]
 *
 * - Control: the head (next element to claim) and the tail (first element
 *   the receiver has not given back), on cache lines of their own. Bit 63
 *   of the head says the receiver is asleep on its event socket.
 * - Senders claim element number h with a compare-and-swap of the head
 *   while h - tail < fifo_size, so several processes send at once and a
 *   full FIFO is never claimed. The claim that clears the sleep bit wakes
 *   the receiver.
 * - Each element starts with a 16-byte header. Its flags byte is written
 *   last (a release store): its owner bit is the parity of h / fifo_size,
 *   so it flips on each wrap and an element is ready when the bit matches
 *   the parity the receiver expects for its read index, and the header's
 *   seq holds the low 32 bits of h (bytes a stray writer leaves are not
 *   taken for a message).
 * - An element claimed and not written for a second (its sender died in
 *   the middle, or someone overwrote it) is skipped, so the FIFO goes on.
 * - Short messages travel inside the element. Longer ones go into a
 *   descriptor of the segment: the element's desc field tells the sender
 *   which one. The receiver hands descriptors to handlers in place; when a
 *   handler keeps one, the receiver gives the element a free descriptor
 *   and writes its number there for the next sender.
 * - The receiver publishes the tail in batches (release factor).
 *
 * Everything in the segment is untrusted: the receiver reads only the
 * flags, AM id and length of an element (each checked) and keeps its own
 * copy of which descriptor belongs to which element; a sender checks the
 * descriptor number it reads and the tail before using them.
 */
#ifndef UCT_MM_FIFO_H_
#define UCT_MM_FIFO_H_

#include <ucs/type/status.h>

#include <stddef.h>
#include <stdint.h>

/* Bytes of the abstract socket name that wakes a sleeping receiver */
#define UCT_MM_SOCK_NAME_LEN 8

/* The receiver sleeps: the sender whose claim clears this bit wakes it */
#define UCT_MM_FIFO_HEAD_ARMED ((uint64_t)1 << 63)

/* Element flags: owner parity, then what the element carries (none of
 * INLINE and DESC: a claimed element its sender could not fill) */
#define UCT_MM_FIFO_ELEM_OWNER  0x1u
#define UCT_MM_FIFO_ELEM_INLINE 0x2u
#define UCT_MM_FIFO_ELEM_DESC   0x4u

/* Compare-and-swap attempts of one claim before it reports a full FIFO */
#define UCT_MM_FIFO_CLAIM_RETRIES 1024

/* Limits a sender checks in a peer's address */
#define UCT_MM_FIFO_MIN_SIZE      2u
#define UCT_MM_FIFO_MAX_SIZE      (1u << 16)
#define UCT_MM_FIFO_MIN_ELEM_SIZE 64u
#define UCT_MM_FIFO_MAX_ELEM_SIZE (1u << 16)
#define UCT_MM_FIFO_MAX_SEG_SIZE  (1u << 24)
#define UCT_MM_FIFO_MAX_DESCS     (1u << 20)

#define UCT_MM_FIFO_LINE                      \
    128 /* two cache lines: the adjacent-line \
           prefetch of x86 pairs them */

typedef struct uct_mm_fifo_ctl {
    uint64_t head;
    char pad0[UCT_MM_FIFO_LINE - sizeof(uint64_t)];
    uint64_t tail;
    char pad1[UCT_MM_FIFO_LINE - sizeof(uint64_t)];
} uct_mm_fifo_ctl_t;

typedef struct uct_mm_fifo_elem {
    uint8_t flags; /* UCT_MM_FIFO_ELEM_*, written last */
    uint8_t am_id;
    uint16_t reserved;
    uint32_t length; /* payload bytes */
    uint32_t desc;   /* the descriptor of the next long message */
    uint32_t seq;    /* low 32 bits of the element number */
} uct_mm_fifo_elem_t;

/** What defines a FIFO's layout (in the interface address, 24 bytes). */
typedef struct uct_mm_fifo_params {
    uint32_t fifo_size;   /* elements, a power of 2 */
    uint32_t elem_size;   /* bytes per element, a multiple of 64 */
    uint32_t seg_size;    /* largest payload of a descriptor */
    uint32_t num_descs;   /* descriptors, at least fifo_size */
    uint32_t data_offset; /* payload offset in a descriptor */
    uint32_t reserved;
} uct_mm_fifo_params_t;

/** Where things are in a FIFO's segment (computed from the params). */
typedef struct uct_mm_fifo_layout {
    size_t elems_offset;
    size_t descs_offset;
    size_t desc_stride;
    size_t length; /* of the whole segment */
} uct_mm_fifo_layout_t;

/** A FIFO mapped into this process: a sender's view of a peer's FIFO, or
 *  the receiver's of its own. */
typedef struct uct_mm_fifo_view {
    uct_mm_fifo_ctl_t *ctl;
    char *elems;
    char *descs;          /* the descriptors, contiguous */
    uint64_t cached_tail; /* last tail read (sender) */
    uint32_t mask;        /* fifo_size - 1 */
    uint32_t round_shift; /* log2(fifo_size) */
    uint32_t elem_size;
    uint32_t seg_size;
    uint32_t num_descs;
    uint32_t data_offset;
    size_t desc_stride;
} uct_mm_fifo_view_t;

/**
 * Checks @a params (any bytes: a peer's address) and computes the layout.
 * @return UCS_OK, or UCS_ERR_INVALID_PARAM when a field is out of range.
 */
ucs_status_t uct_mm_fifo_layout(const uct_mm_fifo_params_t *params,
                                uct_mm_fifo_layout_t *layout);

/** Sets @a view over a FIFO segment mapped at @a base. */
void uct_mm_fifo_view_init(uct_mm_fifo_view_t *view,
                           const uct_mm_fifo_params_t *params,
                           const uct_mm_fifo_layout_t *layout, void *base);

/** Initializes a new FIFO (its creator): head and tail 0, every element
 *  owned by round -1, element i with descriptor i. */
void uct_mm_fifo_init(uct_mm_fifo_view_t *view);

static inline uct_mm_fifo_elem_t *
uct_mm_fifo_elem(const uct_mm_fifo_view_t *view, uint64_t index)
{
    return (uct_mm_fifo_elem_t *)(view->elems + (size_t)(index & view->mask) *
                                                    view->elem_size);
}

/** The owner bit of the round of element number @a index. */
static inline uint8_t uct_mm_fifo_owner(const uct_mm_fifo_view_t *view,
                                        uint64_t index)
{
    return (uint8_t)((index >> view->round_shift) & UCT_MM_FIFO_ELEM_OWNER);
}

/**
 * Claims the next element of a peer's FIFO.
 * @return 1 with *index_p and *wake_p (the receiver sleeps: wake it after
 *         the element is written) set; 0 when the FIFO is full.
 */
static inline int uct_mm_fifo_claim(uct_mm_fifo_view_t *view, uint64_t *index_p,
                                    int *wake_p)
{
    uint64_t head = __atomic_load_n(&view->ctl->head, __ATOMIC_RELAXED);
    uint64_t index, tail;
    unsigned retries;

    for (retries = 0; retries < UCT_MM_FIFO_CLAIM_RETRIES; ++retries) {
        index = head & ~UCT_MM_FIFO_HEAD_ARMED;
        if (index - view->cached_tail > view->mask) {
            /* full as far as we knew: read the tail again; it orders what
             * the receiver wrote in elements it gave back before our
             * reads of them */
            tail = __atomic_load_n(&view->ctl->tail, __ATOMIC_ACQUIRE);
            view->cached_tail = tail;
            if (index - tail > view->mask) {
                return 0;
            }
        }
        if (__atomic_compare_exchange_n(&view->ctl->head, &head, index + 1, 0,
                                        __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
            *index_p = index;
            *wake_p  = (head & UCT_MM_FIFO_HEAD_ARMED) != 0;
            return 1;
        }
    }
    return 0;
}

/** Makes element number @a index ready for the receiver. */
static inline void uct_mm_fifo_publish(const uct_mm_fifo_view_t *view,
                                       uct_mm_fifo_elem_t *elem, uint64_t index,
                                       uint8_t flags)
{
    elem->seq = (uint32_t)index;
    __atomic_store_n(&elem->flags,
                     (uint8_t)(flags | uct_mm_fifo_owner(view, index)),
                     __ATOMIC_RELEASE);
}

/** Whether element number @a index, whose flags are @a flags, is ready. */
static inline int uct_mm_fifo_ready(const uct_mm_fifo_view_t *view,
                                    const uct_mm_fifo_elem_t *elem,
                                    uint64_t index, uint8_t flags)
{
    return !((flags ^ uct_mm_fifo_owner(view, index)) &
             UCT_MM_FIFO_ELEM_OWNER) &&
           (*(volatile const uint32_t *)&elem->seq == (uint32_t)index);
}

/** Whether there is room for a message in a peer's FIFO now. */
static inline int uct_mm_fifo_has_room(uct_mm_fifo_view_t *view)
{
    uint64_t head = __atomic_load_n(&view->ctl->head, __ATOMIC_RELAXED) &
                    ~UCT_MM_FIFO_HEAD_ARMED;

    view->cached_tail = __atomic_load_n(&view->ctl->tail, __ATOMIC_ACQUIRE);
    return (head - view->cached_tail) <= view->mask;
}

/** Where the payload of descriptor @a desc is (a checked number). */
static inline char *uct_mm_fifo_desc_data(const uct_mm_fifo_view_t *view,
                                          uint32_t desc)
{
    return view->descs + (size_t)desc * view->desc_stride + view->data_offset;
}

#endif
