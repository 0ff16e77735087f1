/*
 * Pending queues for transports: a uct_pending_req_t's private area holds
 * an arbiter element; each endpoint owns an arbiter group and the
 * interface owns the arbiter, so pending requests run in order per
 * endpoint and round-robin across endpoints.
 */
#ifndef UCT_BASE_PENDING_H_
#define UCT_BASE_PENDING_H_

#include <uct/api/uct.h>
#include <ucs/datastruct/arbiter.h>

BEGIN_C_DECLS

static inline ucs_arbiter_elem_t *
uct_pending_req_arb_elem(uct_pending_req_t *req)
{
    UCS_STATIC_ASSERT_SIZE_LE(ucs_arbiter_elem_t, UCT_PENDING_REQ_PRIV_LEN);
    return (ucs_arbiter_elem_t *)req->priv;
}

static inline uct_pending_req_t *
uct_pending_req_from_arb_elem(ucs_arbiter_elem_t *elem)
{
    return ucs_container_of((void *)elem, uct_pending_req_t, priv);
}

/** Queues @a req at the tail of an endpoint's group and schedules the
 *  group on the interface's arbiter. */
static inline void uct_pending_req_push(ucs_arbiter_t *arbiter,
                                        ucs_arbiter_group_t *group,
                                        uct_pending_req_t *req)
{
    ucs_arbiter_elem_init(uct_pending_req_arb_elem(req));
    ucs_arbiter_group_push_elem(group, uct_pending_req_arb_elem(req));
    ucs_arbiter_group_schedule(arbiter, group);
}

/** @a arg of uct_pending_req_dispatch_cb() for per-endpoint resources */
#define UCT_PENDING_DISPATCH_DESCHED ((void *)1)

/**
 * Arbiter callback that runs a pending request: UCS_OK removes it,
 * UCS_INPROGRESS keeps it and moves on to the next endpoint, and
 * UCS_ERR_NO_RESOURCE keeps it and stops dispatching (the interface is out
 * of resources), or with @a arg UCT_PENDING_DISPATCH_DESCHED only takes
 * that endpoint off the schedule (its own resources ran out; the
 * transport schedules it again when they come back). Pass it to
 * ucs_arbiter_dispatch() with NULL or UCT_PENDING_DISPATCH_DESCHED.
 */
ucs_arbiter_cb_result_t uct_pending_req_dispatch_cb(ucs_arbiter_t *arbiter,
                                                    ucs_arbiter_group_t *group,
                                                    ucs_arbiter_elem_t *elem,
                                                    void *arg);

/** Removes every request of @a group, calling @a cb (if not NULL) for
 *  each, in order. */
void uct_pending_queue_purge(ucs_arbiter_t *arbiter, ucs_arbiter_group_t *group,
                             uct_pending_purge_callback_t cb, void *arg);

/**
 * An endpoint's pending queue that knows its length: an arbiter group and
 * the number of requests in it, kept by the functions below (and by
 * uct_pending_group_dispatch_cb), so that a reader on another thread, such
 * as the object tree, gets the count without walking the group.
 */
typedef struct uct_pending_group {
    ucs_arbiter_group_t group;
    size_t count;
} uct_pending_group_t;

static inline void uct_pending_group_init(uct_pending_group_t *pending)
{
    ucs_arbiter_group_init(&pending->group);
    pending->count = 0;
}

static inline void uct_pending_group_cleanup(uct_pending_group_t *pending)
{
    ucs_arbiter_group_cleanup(&pending->group);
}

/** Queues @a req at the tail without scheduling the group. */
static inline void uct_pending_group_add(uct_pending_group_t *pending,
                                         uct_pending_req_t *req)
{
    ucs_arbiter_elem_init(uct_pending_req_arb_elem(req));
    ucs_arbiter_group_push_elem(&pending->group, uct_pending_req_arb_elem(req));
    ++pending->count;
}

/** Queues @a req at the tail and schedules the group on @a arbiter. */
static inline void uct_pending_group_push(ucs_arbiter_t *arbiter,
                                          uct_pending_group_t *pending,
                                          uct_pending_req_t *req)
{
    uct_pending_group_add(pending, req);
    ucs_arbiter_group_schedule(arbiter, &pending->group);
}

/** uct_pending_req_dispatch_cb() for arbiters whose groups are all the
 *  groups of uct_pending_group_t: also keeps their counts. */
ucs_arbiter_cb_result_t
uct_pending_group_dispatch_cb(ucs_arbiter_t *arbiter,
                              ucs_arbiter_group_t *group,
                              ucs_arbiter_elem_t *elem, void *arg);

/** uct_pending_queue_purge() of a counted queue. */
void uct_pending_group_purge(ucs_arbiter_t *arbiter,
                             uct_pending_group_t *pending,
                             uct_pending_purge_callback_t cb, void *arg);

END_C_DECLS

#endif
