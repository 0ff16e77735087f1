#ifndef UCS_DATASTRUCT_QUEUE_H_
#define UCS_DATASTRUCT_QUEUE_H_

/**
 * @file
 * Intrusive singly-linked FIFO queue with a tail pointer, used by the
 * transports for send, receive and completion queues. Not thread-safe:
 * callers serialize access.
 *
 * Every element embeds a ucs_queue_elem_t. The head keeps a pointer to the
 * first element and a pointer to the last element's "next" field (or to its
 * own "head" field when empty), so push, push_head and pull are O(1).
 * The last element's "next" is always NULL.
 *
 * Because the head points into itself, a ucs_queue_head_t must not be copied
 * or moved while it is in use (use ucs_queue_splice() to move the contents).
 *
 * Removing while iterating: ucs_queue_for_each_safe() walks the queue with
 * an iterator (a pointer to the link that points at the current element);
 * its body may call ucs_queue_del_iter() once to unlink the current element,
 * and the walk then continues with the element that followed it.
 */

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>
#include <ucs/debug/assert.h>

BEGIN_C_DECLS

/** The link embedded in a queue element. */
typedef struct ucs_queue_elem {
    struct ucs_queue_elem *next; /**< next element, NULL for the last */
} ucs_queue_elem_t;

/** A queue; must not be copied or moved while in use. */
typedef struct ucs_queue_head {
    ucs_queue_elem_t *head;   /**< first element, NULL when empty */
    ucs_queue_elem_t **ptail; /**< the last element's next field, or
                                   &head when empty */
} ucs_queue_head_t;

/** Position inside a queue: the link that points at the current element. */
typedef ucs_queue_elem_t **ucs_queue_iter_t;

/** Make @a queue empty (elements it held are forgotten).
 *  @param [out] queue the queue head. */
static inline void ucs_queue_head_init(ucs_queue_head_t *queue)
{
    queue->head  = NULL;
    queue->ptail = &queue->head;
}

/** Whether the queue has no elements.
 *  @param [in] queue the queue head.
 *  @return nonzero if empty. */
static inline int ucs_queue_is_empty(const ucs_queue_head_t *queue)
{
    return queue->ptail == &queue->head;
}

/** Number of elements; walks the whole queue.
 *  @param [in] queue the queue head.
 *  @return the number of elements. */
static inline size_t ucs_queue_length(const ucs_queue_head_t *queue)
{
    const ucs_queue_elem_t *elem;
    size_t length = 0;

    for (elem = queue->head; elem != NULL; elem = elem->next) {
        ++length;
    }
    return length;
}

/** Append @a elem at the tail.
 *  @param [in,out] queue the queue head.
 *  @param [out]    elem  the link to add; must not be on a queue. */
static UCS_F_ALWAYS_INLINE void ucs_queue_push(ucs_queue_head_t *queue,
                                               ucs_queue_elem_t *elem)
{
    elem->next    = NULL;
    *queue->ptail = elem;
    queue->ptail  = &elem->next;
}

/** Insert @a elem before the first element.
 *  @param [in,out] queue the queue head.
 *  @param [out]    elem  the link to add; must not be on a queue. */
static UCS_F_ALWAYS_INLINE void ucs_queue_push_head(ucs_queue_head_t *queue,
                                                    ucs_queue_elem_t *elem)
{
    elem->next = queue->head;
    if (queue->ptail == &queue->head) {
        queue->ptail = &elem->next;
    }
    queue->head = elem;
}

/** Unlink and return the first element of a non-empty queue (asserted in
 *  debug builds).
 *  @param [in,out] queue the queue head.
 *  @return the unlinked link. */
static UCS_F_ALWAYS_INLINE ucs_queue_elem_t *
ucs_queue_pull_non_empty(ucs_queue_head_t *queue)
{
    ucs_queue_elem_t *elem = queue->head;

    ucs_assert(!ucs_queue_is_empty(queue));
    queue->head = elem->next;
    if (queue->ptail == &elem->next) {
        queue->ptail = &queue->head;
    }
    return elem;
}

/** Unlink and return the first element.
 *  @param [in,out] queue the queue head.
 *  @return the unlinked link, or NULL if the queue is empty. */
static UCS_F_ALWAYS_INLINE ucs_queue_elem_t *
ucs_queue_pull(ucs_queue_head_t *queue)
{
    if (ucs_queue_is_empty(queue)) {
        return NULL;
    }
    return ucs_queue_pull_non_empty(queue);
}

/**
 * Unlink the element at @a iter (see ucs_queue_for_each_safe()). Afterwards
 * @a iter points at the element that followed the removed one.
 *
 * @param [in,out] queue the queue head.
 * @param [in]     iter  an iterator at an element of @a queue.
 */
static inline void ucs_queue_del_iter(ucs_queue_head_t *queue,
                                      ucs_queue_iter_t iter)
{
    ucs_queue_elem_t *elem = *iter;

    if (queue->ptail == &elem->next) {
        queue->ptail = iter;
    }
    *iter = elem->next;
}

/**
 * Unlink @a elem wherever it is in the queue (O(n)).
 *
 * @param [in,out] queue the queue head.
 * @param [in]     elem  the link to remove.
 * @return UCS_OK, or UCS_ERR_NO_ELEM if @a elem is not in the queue.
 */
static inline ucs_status_t ucs_queue_remove(ucs_queue_head_t *queue,
                                            ucs_queue_elem_t *elem)
{
    ucs_queue_iter_t iter;

    for (iter = &queue->head; *iter != NULL; iter = &(*iter)->next) {
        if (*iter == elem) {
            ucs_queue_del_iter(queue, iter);
            return UCS_OK;
        }
    }
    return UCS_ERR_NO_ELEM;
}

/**
 * Move every element of @a src to the tail of @a dst, keeping their order.
 * @a src is left empty.
 *
 * @param [in,out] dst the destination queue.
 * @param [in,out] src the queue to empty.
 */
static inline void ucs_queue_splice(ucs_queue_head_t *dst,
                                    ucs_queue_head_t *src)
{
    if (ucs_queue_is_empty(src)) {
        return;
    }

    *dst->ptail = src->head;
    dst->ptail  = src->ptail;
    ucs_queue_head_init(src);
}

/** First element of a non-empty queue, as a pointer to @a _type.
 *  @param _queue  the queue head.
 *  @param _type   the element type.
 *  @param _member name of the ucs_queue_elem_t member in @a _type. */
#define ucs_queue_head_elem_non_empty(_queue, _type, _member) \
    ucs_container_of((_queue)->head, _type, _member)

/** Last element of a non-empty queue, as a pointer to @a _type.
 *  @param _queue  the queue head.
 *  @param _type   the element type.
 *  @param _member name of the ucs_queue_elem_t member in @a _type. */
#define ucs_queue_tail_elem_non_empty(_queue, _type, _member)             \
    ucs_container_of(                                                     \
        ucs_container_of((_queue)->ptail, ucs_queue_elem_t, next), _type, \
        _member)

/** Unlink the first element of a non-empty queue, as a pointer to
 *  @a _type.
 *  @param _queue  the queue head.
 *  @param _type   the element type.
 *  @param _member name of the ucs_queue_elem_t member in @a _type. */
#define ucs_queue_pull_elem_non_empty(_queue, _type, _member) \
    ucs_container_of(ucs_queue_pull_non_empty(_queue), _type, _member)

/**
 * Iterate over the elements, first to last. The body must not unlink
 * elements; use ucs_queue_for_each_safe() for that. Elements pushed at the
 * tail during the walk are visited too. The link is tested before it is
 * converted, since a compiler may assume that the address of a member is
 * never NULL.
 *
 * @param _elem   a pointer variable of the element type.
 * @param _queue  the queue head.
 * @param _member name of the ucs_queue_elem_t member in the element type.
 */
#define ucs_queue_for_each(_elem, _queue, _member)                         \
    for (ucs_queue_elem_t *_ucs_queue_link = (_queue)->head;               \
         (_ucs_queue_link != NULL) &&                                      \
         ((_elem = ucs_container_of(_ucs_queue_link, __typeof__(*(_elem)), \
                                    _member)),                             \
          1);                                                              \
         _ucs_queue_link = _ucs_queue_link->next)

/**
 * Iterate over the elements with an iterator. The body may call
 * ucs_queue_del_iter(_queue, _iter) once to unlink the current element
 * @a _elem (and may then free it); the walk continues with the element
 * that followed it. Pushing at the tail during the walk is allowed;
 * unlinking other elements is not.
 *
 * @param _elem   a pointer variable of the element type.
 * @param _iter   a ucs_queue_iter_t variable.
 * @param _queue  the queue head.
 * @param _member name of the ucs_queue_elem_t member in the element type.
 */
#define ucs_queue_for_each_safe(_elem, _iter, _queue, _member)                 \
    for (_iter = &(_queue)->head;                                              \
         (*(_iter) != NULL) &&                                                 \
         ((_elem = ucs_container_of(*(_iter), __typeof__(*(_elem)), _member)), \
          1);                                                                  \
         _iter = (*(_iter) == &(_elem)->_member) ? &(_elem)->_member.next      \
                                                 : (_iter))

END_C_DECLS

#endif
