#ifndef UCS_DATASTRUCT_LIST_H_
#define UCS_DATASTRUCT_LIST_H_

/**
 * @file
 * Intrusive doubly-linked circular list, used across libucs and libuct
 * and by uct.h users that read ucs structures.
 *
 * A list is a ucs_list_link_t head; every element embeds a ucs_list_link_t
 * member and is linked through it. An empty list is a head pointing to
 * itself. Nothing here allocates memory; every operation is O(1) except
 * ucs_list_length(). Not thread-safe: callers serialize access.
 */

#include <ucs/sys/compiler_def.h>

BEGIN_C_DECLS

/** A list head, or the link embedded in an element. */
typedef struct ucs_list_link {
    struct ucs_list_link *prev; /**< previous link (the head's: the last) */
    struct ucs_list_link *next; /**< next link (the head's: the first) */
} ucs_list_link_t;

/** Static initializer of an empty list head.
 *  @param _head the variable being initialized. */
#define UCS_LIST_INITIALIZER(_head) \
    {                               \
        &(_head), &(_head)          \
    }

/** Define and initialize an empty list head.
 *  @param _name name of the variable. */
#define UCS_LIST_HEAD(_name) ucs_list_link_t _name = UCS_LIST_INITIALIZER(_name)

/** Make @a head an empty list.
 *  @param [out] head the list head. */
static inline void ucs_list_head_init(ucs_list_link_t *head)
{
    head->prev = head;
    head->next = head;
}

/** Whether the list has no elements.
 *  @param [in] head the list head.
 *  @return nonzero if empty. */
static inline int ucs_list_is_empty(const ucs_list_link_t *head)
{
    return head->next == head;
}

/** Link @a elem right after @a pos.
 *  @param [in,out] pos  the head or an element of the list.
 *  @param [out]    elem the link to insert; must not be on a list. */
static inline void ucs_list_insert_after(ucs_list_link_t *pos,
                                         ucs_list_link_t *elem)
{
    elem->prev      = pos;
    elem->next      = pos->next;
    pos->next->prev = elem;
    pos->next       = elem;
}

/** Link @a elem right before @a pos.
 *  @param [in,out] pos  the head or an element of the list.
 *  @param [out]    elem the link to insert; must not be on a list. */
static inline void ucs_list_insert_before(ucs_list_link_t *pos,
                                          ucs_list_link_t *elem)
{
    ucs_list_insert_after(pos->prev, elem);
}

/** Add @a elem as the first element of the list.
 *  @param [in,out] head the list head.
 *  @param [out]    elem the link to add; must not be on a list. */
static inline void ucs_list_add_head(ucs_list_link_t *head,
                                     ucs_list_link_t *elem)
{
    ucs_list_insert_after(head, elem);
}

/** Add @a elem as the last element of the list.
 *  @param [in,out] head the list head.
 *  @param [out]    elem the link to add; must not be on a list. */
static inline void ucs_list_add_tail(ucs_list_link_t *head,
                                     ucs_list_link_t *elem)
{
    ucs_list_insert_before(head, elem);
}

/**
 * Unlink @a elem from the list it is on. The element's own pointers are left
 * as they were; do not delete the same element twice.
 *
 * @param [in] elem a link that is on a list.
 */
static inline void ucs_list_del(ucs_list_link_t *elem)
{
    elem->prev->next = elem->next;
    elem->next->prev = elem->prev;
}

/** Number of elements; walks the whole list.
 *  @param [in] head the list head.
 *  @return the number of elements. */
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
 *
 * @param [in,out] head the destination list.
 * @param [in,out] src  the list to empty.
 */
static inline void ucs_list_splice_tail(ucs_list_link_t *head,
                                        ucs_list_link_t *src)
{
    ucs_list_link_t *first, *last;

    if (ucs_list_is_empty(src)) {
        return;
    }

    first            = src->next;
    last             = src->prev;
    first->prev      = head->prev;
    head->prev->next = first;
    last->next       = head;
    head->prev       = last;
    ucs_list_head_init(src);
}

/**
 * Unlink and return the first link of a non-empty list.
 *
 * @param [in,out] head the list head; the list must not be empty.
 * @return the unlinked link.
 */
static inline ucs_list_link_t *ucs_list_extract_head_link(ucs_list_link_t *head)
{
    ucs_list_link_t *link = head->next;

    ucs_list_del(link);
    return link;
}

/** The element containing the link that follows @a _link.
 *  @param _link   a link (or the head, giving the first element).
 *  @param _type   the element type.
 *  @param _member name of the ucs_list_link_t member in @a _type. */
#define ucs_list_next(_link, _type, _member) \
    ucs_container_of((_link)->next, _type, _member)

/** The element containing the link that precedes @a _link.
 *  @param _link   a link (or the head, giving the last element).
 *  @param _type   the element type.
 *  @param _member name of the ucs_list_link_t member in @a _type. */
#define ucs_list_prev(_link, _type, _member) \
    ucs_container_of((_link)->prev, _type, _member)

/** First element of a non-empty list.
 *  @param _head   the list head.
 *  @param _type   the element type.
 *  @param _member name of the ucs_list_link_t member in @a _type. */
#define ucs_list_head(_head, _type, _member) \
    ucs_list_next(_head, _type, _member)

/** Last element of a non-empty list.
 *  @param _head   the list head.
 *  @param _type   the element type.
 *  @param _member name of the ucs_list_link_t member in @a _type. */
#define ucs_list_tail(_head, _type, _member) \
    ucs_list_prev(_head, _type, _member)

/** Unlink and return the first element of a non-empty list.
 *  @param _head   the list head.
 *  @param _type   the element type.
 *  @param _member name of the ucs_list_link_t member in @a _type. */
#define ucs_list_extract_head(_head, _type, _member) \
    ucs_container_of(ucs_list_extract_head_link(_head), _type, _member)

/**
 * Iterate over the elements, first to last. The body must not unlink
 * @a _elem; use ucs_list_for_each_safe() for that.
 *
 * @param _elem   a pointer variable of the element type.
 * @param _head   the list head.
 * @param _member name of the ucs_list_link_t member in the element type.
 */
#define ucs_list_for_each(_elem, _head, _member)                               \
    for (_elem =                                                               \
             ucs_container_of((_head)->next, __typeof__(*(_elem)), _member);   \
         &(_elem)->_member != (_head);                                         \
         _elem = ucs_container_of((_elem)->_member.next, __typeof__(*(_elem)), \
                                  _member))

/**
 * Iterate over the elements; the body may unlink (and free) @a _elem.
 * The body must not unlink the element held in @a _tmp.
 *
 * @param _elem   a pointer variable of the element type.
 * @param _tmp    a second pointer variable of the element type, holding
 *                the next element.
 * @param _head   the list head.
 * @param _member name of the ucs_list_link_t member in the element type.
 */
#define ucs_list_for_each_safe(_elem, _tmp, _head, _member)                  \
    for (_elem =                                                             \
             ucs_container_of((_head)->next, __typeof__(*(_elem)), _member), \
        _tmp = ucs_container_of((_elem)->_member.next, __typeof__(*(_elem)), \
                                _member);                                    \
         &(_elem)->_member != (_head);                                       \
         _elem = _tmp, _tmp = ucs_container_of((_tmp)->_member.next,         \
                                               __typeof__(*(_elem)), _member))

END_C_DECLS

#endif
