#ifndef UCS_DATASTRUCT_ARBITER_H_
#define UCS_DATASTRUCT_ARBITER_H_

/**
 * @file
 * Fair scheduler of pending work, behind the pending queues of the
 * transports (uct_ep_pending_add()).
 *
 *  - Element: one unit of pending work (a pending request). Embedded in the
 *    request; 16 bytes.
 *  - Group: an in-order queue of elements (one per endpoint). Elements form
 *    a circular singly-linked list reached through the group's tail.
 *  - Arbiter: the schedule, a list of the groups that have work to offer.
 *
 * Pushing an element does not schedule its group: the owner calls
 * ucs_arbiter_group_schedule() when the group may make progress, and
 * ucs_arbiter_dispatch() then offers the head element of each scheduled
 * group to a callback, round-robin across groups and in order within a
 * group. The callback's result says what to do next (see
 * ucs_arbiter_cb_result_t). A scheduled group is never empty after a
 * dispatch or purge: a group that runs out of elements is descheduled.
 *
 * During a callback:
 *  - the element being offered is detached from its group (so the group may
 *    look empty); it goes back to the head of the group unless the result is
 *    REMOVE_ELEM, after which the arbiter never touches it again (the
 *    callback may free it);
 *  - the callback may push elements to any group, including its own, and
 *    schedule or deschedule groups, including its own;
 *  - groups already visited in this pass are held aside, so
 *    ucs_arbiter_is_empty() may return true;
 *  - the callback must not clean up or free the group being dispatched.
 *
 * Not thread-safe: callers serialize access.
 */

#include <ucs/sys/compiler_def.h>
#include <ucs/datastruct/list.h>
#include <ucs/debug/assert.h>

BEGIN_C_DECLS

/** See struct ucs_arbiter. */
typedef struct ucs_arbiter ucs_arbiter_t;
/** See struct ucs_arbiter_group. */
typedef struct ucs_arbiter_group ucs_arbiter_group_t;
/** See struct ucs_arbiter_elem. */
typedef struct ucs_arbiter_elem ucs_arbiter_elem_t;

/** One unit of pending work, embedded in the request it stands for. */
struct ucs_arbiter_elem {
    ucs_arbiter_elem_t *next;   /**< next element of the group (circular) */
    ucs_arbiter_group_t *group; /**< owning group; NULL when not queued */
};

/** An in-order queue of elements, usually one per endpoint. */
struct ucs_arbiter_group {
    ucs_arbiter_elem_t *tail; /**< last element, NULL when empty */
    ucs_list_link_t list;     /**< schedule link; next NULL if
                                   unscheduled */
};

/** The schedule of groups that have work to offer. */
struct ucs_arbiter {
    ucs_list_link_t schedule; /**< scheduled groups, next to run first */
};

/** What the dispatch callback asks the arbiter to do next. */
typedef enum {
    /** The element is done: remove it, and offer the group's next element
     *  unless per_group elements were already removed in this pass. */
    UCS_ARBITER_CB_RESULT_REMOVE_ELEM,
    /** Keep the element; go on with the next group. The group keeps its
     *  place in the round-robin order. */
    UCS_ARBITER_CB_RESULT_NEXT_GROUP,
    /** Keep the element; move the group behind every other group. */
    UCS_ARBITER_CB_RESULT_RESCHED_GROUP,
    /** Keep the element; take the group off the schedule until it is
     *  scheduled again. */
    UCS_ARBITER_CB_RESULT_DESCHED_GROUP,
    /** Keep the element and stop this dispatch; the next dispatch starts
     *  with this group. */
    UCS_ARBITER_CB_RESULT_STOP
} ucs_arbiter_cb_result_t;

/**
 * Dispatch and purge callback.
 *
 * @param [in] arbiter the arbiter being dispatched or purged.
 * @param [in] group   the group @a elem belongs to.
 * @param [in] elem    the element offered (detached from its group during
 *                     the call).
 * @param [in] arg     the argument given to dispatch or purge.
 * @return what to do with @a elem and its group.
 */
typedef ucs_arbiter_cb_result_t (*ucs_arbiter_callback_t)(
    ucs_arbiter_t *arbiter, ucs_arbiter_group_t *group,
    ucs_arbiter_elem_t *elem, void *arg);

/** Initialize an empty arbiter.
 *  @param [out] arbiter the arbiter. */
void ucs_arbiter_init(ucs_arbiter_t *arbiter);

/** Release the arbiter; warns if groups are still scheduled.
 *  @param [in,out] arbiter the arbiter. */
void ucs_arbiter_cleanup(ucs_arbiter_t *arbiter);

/** Initialize an empty, unscheduled group.
 *  @param [out] group the group. */
void ucs_arbiter_group_init(ucs_arbiter_group_t *group);

/** Release the group; warns if it still has elements or is scheduled.
 *  @param [in,out] group the group. */
void ucs_arbiter_group_cleanup(ucs_arbiter_group_t *group);

/** Prepare an element for its first push.
 *  @param [out] elem the element. */
static inline void ucs_arbiter_elem_init(ucs_arbiter_elem_t *elem)
{
    elem->next  = NULL;
    elem->group = NULL;
}

/** Whether the element is in a group.
 *  @param [in] elem the element.
 *  @return nonzero if queued. */
static inline int ucs_arbiter_elem_is_queued(const ucs_arbiter_elem_t *elem)
{
    return elem->group != NULL;
}

/** The group the element is in.
 *  @param [in] elem the element.
 *  @return the group, or NULL. */
static inline ucs_arbiter_group_t *
ucs_arbiter_elem_group(const ucs_arbiter_elem_t *elem)
{
    return elem->group;
}

/** Whether the group has no elements.
 *  @param [in] group the group.
 *  @return nonzero if empty. */
static inline int ucs_arbiter_group_is_empty(const ucs_arbiter_group_t *group)
{
    return group->tail == NULL;
}

/** Whether the group is on the schedule.
 *  @param [in] group the group.
 *  @return nonzero if scheduled. */
static inline int
ucs_arbiter_group_is_scheduled(const ucs_arbiter_group_t *group)
{
    return group->list.next != NULL;
}

/** Whether the element is in a group that is on the schedule.
 *  @param [in] elem the element.
 *  @return nonzero if so. */
static inline int ucs_arbiter_elem_is_scheduled(const ucs_arbiter_elem_t *elem)
{
    return (elem->group != NULL) && ucs_arbiter_group_is_scheduled(elem->group);
}

/** Whether no group is scheduled.
 *  @param [in] arbiter the arbiter.
 *  @return nonzero if nothing is scheduled. */
static inline int ucs_arbiter_is_empty(const ucs_arbiter_t *arbiter)
{
    return ucs_list_is_empty(&arbiter->schedule);
}

/** The first element of the group.
 *  @param [in] group the group.
 *  @return the element, or NULL if the group is empty. */
static inline ucs_arbiter_elem_t *
ucs_arbiter_group_head(const ucs_arbiter_group_t *group)
{
    return (group->tail != NULL) ? group->tail->next : NULL;
}

/** Number of elements in the group (walks it).
 *  @param [in] group the group.
 *  @return the number of elements. */
unsigned ucs_arbiter_group_num_elems(const ucs_arbiter_group_t *group);

/** Append an element at the tail of a group; it is not scheduled.
 *  @param [in,out] group the group.
 *  @param [in,out] elem  an initialized element that is not queued. */
static UCS_F_ALWAYS_INLINE void
ucs_arbiter_group_push_elem(ucs_arbiter_group_t *group,
                            ucs_arbiter_elem_t *elem)
{
    ucs_assertv(elem->group == NULL, "element %p is already in group %p", elem,
                elem->group);

    if (group->tail == NULL) {
        elem->next = elem;
    } else {
        elem->next        = group->tail->next;
        group->tail->next = elem;
    }
    group->tail = elem;
    elem->group = group;
}

/** Insert an element at the head of a group; it is not scheduled.
 *  @param [in,out] group the group.
 *  @param [in,out] elem  an initialized element that is not queued. */
static UCS_F_ALWAYS_INLINE void
ucs_arbiter_group_push_head_elem(ucs_arbiter_group_t *group,
                                 ucs_arbiter_elem_t *elem)
{
    ucs_assertv(elem->group == NULL, "element %p is already in group %p", elem,
                elem->group);

    if (group->tail == NULL) {
        elem->next  = elem;
        group->tail = elem;
    } else {
        elem->next        = group->tail->next;
        group->tail->next = elem;
    }
    elem->group = group;
}

/**
 * Put @a group at the tail of the schedule. No-op if the group is empty or
 * already scheduled.
 *
 * @param [in,out] arbiter the arbiter.
 * @param [in,out] group   the group.
 */
static UCS_F_ALWAYS_INLINE void
ucs_arbiter_group_schedule(ucs_arbiter_t *arbiter, ucs_arbiter_group_t *group)
{
    if (ucs_arbiter_group_is_empty(group) ||
        ucs_arbiter_group_is_scheduled(group)) {
        return;
    }
    ucs_list_add_tail(&arbiter->schedule, &group->list);
}

/** Take @a group off the schedule; its elements stay. No-op if it is not
 *  scheduled.
 *  @param [in,out] arbiter the arbiter (unused; the group knows its place).
 *  @param [in,out] group   the group. */
static inline void ucs_arbiter_group_desched(ucs_arbiter_t *arbiter,
                                             ucs_arbiter_group_t *group)
{
    (void)arbiter;
    if (!ucs_arbiter_group_is_scheduled(group)) {
        return;
    }
    ucs_list_del(&group->list);
    group->list.next = NULL;
    group->list.prev = NULL;
}

/**
 * Offer the head element of each scheduled group to @a cb, once around the
 * schedule (groups scheduled during the pass are visited too), removing up
 * to @a per_group elements per group. See ucs_arbiter_cb_result_t.
 *
 * @param [in,out] arbiter   the arbiter; at least one group scheduled.
 * @param [in]     per_group most elements removed from one group per pass.
 * @param [in]     cb        the dispatch callback.
 * @param [in]     arg       passed to @a cb.
 * @return the number of elements removed.
 */
unsigned ucs_arbiter_dispatch_nonempty(ucs_arbiter_t *arbiter,
                                       unsigned per_group,
                                       ucs_arbiter_callback_t cb, void *arg);

/** ucs_arbiter_dispatch_nonempty() with a quick exit when nothing is
 *  scheduled.
 *  @param [in,out] arbiter   the arbiter.
 *  @param [in]     per_group most elements removed from one group.
 *  @param [in]     cb        the dispatch callback.
 *  @param [in]     arg       passed to @a cb.
 *  @return the number of elements removed. */
static UCS_F_ALWAYS_INLINE unsigned
ucs_arbiter_dispatch(ucs_arbiter_t *arbiter, unsigned per_group,
                     ucs_arbiter_callback_t cb, void *arg)
{
    if (ucs_arbiter_is_empty(arbiter)) {
        return 0;
    }
    return ucs_arbiter_dispatch_nonempty(arbiter, per_group, cb, arg);
}

/**
 * Offer every element of @a group to @a cb, in order: REMOVE_ELEM removes
 * it (the callback may free it), any other result keeps it. An emptied group
 * is descheduled. The callback must not push to this group.
 *
 * @param [in,out] arbiter the arbiter the group is scheduled on.
 * @param [in,out] group   the group.
 * @param [in]     cb      the purge callback.
 * @param [in]     arg     passed to @a cb.
 */
void ucs_arbiter_group_purge(ucs_arbiter_t *arbiter, ucs_arbiter_group_t *group,
                             ucs_arbiter_callback_t cb, void *arg);

END_C_DECLS

#endif
