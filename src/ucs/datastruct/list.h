/*
 * Intrusive doubly-linked circular list.
 *
 * A list is a ucs_list_link_t head; every element embeds a ucs_list_link_t
 * member and is linked through it. An empty list is a head pointing to
 * itself. Nothing here allocates memory; every operation is O(1) except
 * ucs_list_length().
 */
#ifndef UCS_DATASTRUCT_LIST_H_
#define UCS_DATASTRUCT_LIST_H_

#include <ucs/sys/compiler_def.h>

BEGIN_C_DECLS

typedef struct ucs_list_link {
    struct ucs_list_link *prev;
    struct ucs_list_link *next;
} ucs_list_link_t;


/** Static initializer of an empty list head named @a _head. */
#define UCS_LIST_INITIALIZER(_head) { &(_head), &(_head) }

/** Define and initialize an empty list head. */
#define UCS_LIST_HEAD(_name) \
    ucs_list_link_t _name = UCS_LIST_INITIALIZER(_name)


/** Make @a head an empty list. */
static inline void ucs_list_head_init(ucs_list_link_t *head)
{
    head->prev = head;
    head->next = head;
}

/** Nonzero if the list has no elements. */
static inline int ucs_list_is_empty(const ucs_list_link_t *head)
{
    return head->next == head;
}

/** Link @a elem right after @a pos (which may be the head or an element). */
static inline void ucs_list_insert_after(ucs_list_link_t *pos,
                                         ucs_list_link_t *elem)
{
    elem->prev      = pos;
    elem->next      = pos->next;
    pos->next->prev = elem;
    pos->next       = elem;
}

/** Link @a elem right before @a pos (which may be the head or an element). */
static inline void ucs_list_insert_before(ucs_list_link_t *pos,
                                          ucs_list_link_t *elem)
{
    ucs_list_insert_after(pos->prev, elem);
}

/** Add @a elem as the first element of the list. */
static inline void ucs_list_add_head(ucs_list_link_t *head,
                                     ucs_list_link_t *elem)
{
    ucs_list_insert_after(head, elem);
}

/** Add @a elem as the last element of the list. */
static inline void ucs_list_add_tail(ucs_list_link_t *head,
                                     ucs_list_link_t *elem)
{
    ucs_list_insert_before(head, elem);
}

/**
 * Unlink @a elem from the list it is on. The element's own pointers are left
 * as they were; do not delete the same element twice.
 */
static inline void ucs_list_del(ucs_list_link_t *elem)
{
    elem->prev->next = elem->next;
    elem->next->prev = elem->prev;
}

/** Number of elements; walks the whole list. */
static inline unsigned ucs_list_length(const ucs_list_link_t *head)
{
    const ucs_list_link_t *link;
    unsigned length = 0;

    for (link = head->next; link != head; link = link->next) {
        ++length;
    }
    return length;
}

/**
 * Move every element of @a src to the tail of @a head, keeping their order.
 * @a src is left empty.
 */
static inline void ucs_list_splice_tail(ucs_list_link_t *head,
                                        ucs_list_link_t *src)
{
    ucs_list_link_t *first, *last;

    if (ucs_list_is_empty(src)) {
        return;
    }

    first             = src->next;
    last              = src->prev;
    first->prev       = head->prev;
    head->prev->next  = first;
    last->next        = head;
    head->prev        = last;
    ucs_list_head_init(src);
}

/**
 * Unlink and return the first link of a non-empty list.
 */
static inline ucs_list_link_t *ucs_list_extract_head_link(
        ucs_list_link_t *head)
{
    ucs_list_link_t *link = head->next;

    ucs_list_del(link);
    return link;
}

/** The element containing the link that follows @a _link. */
#define ucs_list_next(_link, _type, _member) \
    ucs_container_of((_link)->next, _type, _member)

/** The element containing the link that precedes @a _link. */
#define ucs_list_prev(_link, _type, _member) \
    ucs_container_of((_link)->prev, _type, _member)

/** First element of a non-empty list. */
#define ucs_list_head(_head, _type, _member) \
    ucs_list_next(_head, _type, _member)

/** Last element of a non-empty list. */
#define ucs_list_tail(_head, _type, _member) \
    ucs_list_prev(_head, _type, _member)

/** Unlink and return the first element of a non-empty list. */
#define ucs_list_extract_head(_head, _type, _member) \
    ucs_container_of(ucs_list_extract_head_link(_head), _type, _member)

/**
 * Iterate over the elements: @a _elem is a pointer to the element type.
 * The body must not unlink @a _elem; use ucs_list_for_each_safe() for that.
 */
#define ucs_list_for_each(_elem, _head, _member) \
    for (_elem = ucs_container_of((_head)->next, __typeof__(*(_elem)), \
                                  _member); \
         &(_elem)->_member != (_head); \
         _elem = ucs_container_of((_elem)->_member.next, \
                                  __typeof__(*(_elem)), _member))

/**
 * Iterate over the elements; the body may unlink (and free) @a _elem.
 * @a _tmp is a second pointer of the element type used to hold the next one.
 * The body must not unlink the element held in @a _tmp.
 */
#define ucs_list_for_each_safe(_elem, _tmp, _head, _member) \
    for (_elem = ucs_container_of((_head)->next, __typeof__(*(_elem)), \
                                  _member), \
         _tmp  = ucs_container_of((_elem)->_member.next, \
                                  __typeof__(*(_elem)), _member); \
         &(_elem)->_member != (_head); \
         _elem = _tmp, \
         _tmp  = ucs_container_of((_tmp)->_member.next, \
                                  __typeof__(*(_elem)), _member))

END_C_DECLS

#endif
