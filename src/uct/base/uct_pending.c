#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <uct/base/uct_pending.h>
#include <ucs/debug/log.h>

ucs_arbiter_cb_result_t uct_pending_req_dispatch_cb(ucs_arbiter_t *arbiter,
                                                    ucs_arbiter_group_t *group,
                                                    ucs_arbiter_elem_t *elem,
                                                    void *arg)
{
    uct_pending_req_t *req = uct_pending_req_from_arb_elem(elem);
    ucs_status_t status;

    status = req->func(req);
    if (status == UCS_OK) {
        return UCS_ARBITER_CB_RESULT_REMOVE_ELEM;
    } else if (status == UCS_INPROGRESS) {
        return UCS_ARBITER_CB_RESULT_NEXT_GROUP;
    } else if (status == UCS_ERR_NO_RESOURCE) {
        return (arg == UCT_PENDING_DISPATCH_DESCHED)
                   ? UCS_ARBITER_CB_RESULT_DESCHED_GROUP
                   : UCS_ARBITER_CB_RESULT_STOP;
    }

    ucs_error("pending request %p returned %s; a pending callback must "
              "return UCS_OK, UCS_INPROGRESS or UCS_ERR_NO_RESOURCE",
              (void *)req, ucs_status_string(status));
    return UCS_ARBITER_CB_RESULT_REMOVE_ELEM;
}

typedef struct {
    uct_pending_purge_callback_t cb;
    void *arg;
    size_t *count; /* of a uct_pending_group_t */
} uct_pending_purge_arg_t;

static ucs_arbiter_cb_result_t uct_pending_purge_cb(ucs_arbiter_t *arbiter,
                                                    ucs_arbiter_group_t *group,
                                                    ucs_arbiter_elem_t *elem,
                                                    void *arg)
{
    uct_pending_purge_arg_t *purge = arg;

    if (purge->count != NULL) {
        --*purge->count;
    }
    if (purge->cb != NULL) {
        purge->cb(uct_pending_req_from_arb_elem(elem), purge->arg);
    }
    return UCS_ARBITER_CB_RESULT_REMOVE_ELEM;
}

void uct_pending_queue_purge(ucs_arbiter_t *arbiter, ucs_arbiter_group_t *group,
                             uct_pending_purge_callback_t cb, void *arg)
{
    uct_pending_purge_arg_t purge = {cb, arg, NULL};

    ucs_arbiter_group_purge(arbiter, group, uct_pending_purge_cb, &purge);
}

ucs_arbiter_cb_result_t
uct_pending_group_dispatch_cb(ucs_arbiter_t *arbiter,
                              ucs_arbiter_group_t *group,
                              ucs_arbiter_elem_t *elem, void *arg)
{
    uct_pending_group_t *pending =
        ucs_container_of(group, uct_pending_group_t, group);
    ucs_arbiter_cb_result_t result;

    result = uct_pending_req_dispatch_cb(arbiter, group, elem, arg);
    if (result == UCS_ARBITER_CB_RESULT_REMOVE_ELEM) {
        --pending->count;
    }
    return result;
}

void uct_pending_group_purge(ucs_arbiter_t *arbiter,
                             uct_pending_group_t *pending,
                             uct_pending_purge_callback_t cb, void *arg)
{
    uct_pending_purge_arg_t purge = {cb, arg, &pending->count};

    ucs_arbiter_group_purge(arbiter, &pending->group, uct_pending_purge_cb,
                            &purge);
}
