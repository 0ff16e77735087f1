#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <ucs/datastruct/arbiter.h>
#include <ucs/debug/assert.h>
#include <ucs/debug/log.h>

/* The element lives in uct_pending_req_t.priv, which is 40 bytes. */
_Static_assert(sizeof(ucs_arbiter_elem_t) <= 32,
               "ucs_arbiter_elem_t must fit in 32 bytes");

void ucs_arbiter_init(ucs_arbiter_t *arbiter)
{
    ucs_list_head_init(&arbiter->schedule);
}

void ucs_arbiter_cleanup(ucs_arbiter_t *arbiter)
{
    if (!ucs_arbiter_is_empty(arbiter)) {
        ucs_warn("arbiter %p: %u group(s) still scheduled at cleanup", arbiter,
                 ucs_list_length(&arbiter->schedule));
    }
}

void ucs_arbiter_group_init(ucs_arbiter_group_t *group)
{
    group->tail      = NULL;
    group->list.next = NULL;
    group->list.prev = NULL;
}

void ucs_arbiter_group_cleanup(ucs_arbiter_group_t *group)
{
    if (!ucs_arbiter_group_is_empty(group)) {
        ucs_warn("arbiter group %p: %u element(s) left at cleanup; purge the "
                 "group first",
                 group, ucs_arbiter_group_num_elems(group));
    }
    if (ucs_arbiter_group_is_scheduled(group)) {
        ucs_warn("arbiter group %p: still scheduled at cleanup", group);
    }
}

unsigned ucs_arbiter_group_num_elems(const ucs_arbiter_group_t *group)
{
    const ucs_arbiter_elem_t *elem;
    unsigned count;

    if (group->tail == NULL) {
        return 0;
    }

    count = 1;
    for (elem = group->tail->next; elem != group->tail; elem = elem->next) {
        ++count;
    }
    return count;
}

/* Unlink and return the first element of a non-empty group. */
static ucs_arbiter_elem_t *
ucs_arbiter_group_pop_head(ucs_arbiter_group_t *group)
{
    ucs_arbiter_elem_t *tail = group->tail;
    ucs_arbiter_elem_t *head = tail->next;

    if (head == tail) {
        group->tail = NULL;
    } else {
        tail->next = head->next;
    }

    head->next  = NULL;
    head->group = NULL;
    return head;
}

/* Place a group on @a list (at its head or tail), wherever it was. */
static void ucs_arbiter_group_move(ucs_arbiter_group_t *group,
                                   ucs_list_link_t *list, int at_head)
{
    if (ucs_arbiter_group_is_scheduled(group)) {
        ucs_list_del(&group->list);
    }

    if (at_head) {
        ucs_list_add_head(list, &group->list);
    } else {
        ucs_list_add_tail(list, &group->list);
    }
}

unsigned ucs_arbiter_dispatch_nonempty(ucs_arbiter_t *arbiter,
                                       unsigned per_group,
                                       ucs_arbiter_callback_t cb, void *arg)
{
    UCS_LIST_HEAD(done);    /* visited, keep their round-robin order */
    UCS_LIST_HEAD(resched); /* asked to go behind everybody */
    unsigned num_removed = 0;
    ucs_arbiter_cb_result_t result;
    ucs_arbiter_group_t *group;
    ucs_arbiter_elem_t *elem;
    unsigned group_removed;

    while (!ucs_list_is_empty(&arbiter->schedule)) {
        group = ucs_list_head(&arbiter->schedule, ucs_arbiter_group_t, list);

        /* While its elements are offered the group sits on "done", so it
         * counts as scheduled and schedule() on it is a no-op. */
        ucs_arbiter_group_move(group, &done, 0);
        group_removed = 0;

        for (;;) {
            if (ucs_arbiter_group_is_empty(group)) {
                ucs_arbiter_group_desched(arbiter, group);
                break;
            }

            elem   = ucs_arbiter_group_pop_head(group);
            result = cb(arbiter, group, elem, arg);

            if (result == UCS_ARBITER_CB_RESULT_REMOVE_ELEM) {
                /* The element may be gone: do not touch it. */
                ++num_removed;
                ++group_removed;
                if (ucs_arbiter_group_is_empty(group)) {
                    ucs_arbiter_group_desched(arbiter, group);
                    break;
                }
                if (!ucs_arbiter_group_is_scheduled(group) ||
                    (group_removed >= per_group)) {
                    break;
                }
                continue;
            }

            /* Kept: back to the head, unless the callback queued it again
             * by itself. */
            if (!ucs_arbiter_elem_is_queued(elem)) {
                ucs_arbiter_group_push_head_elem(group, elem);
            }
            if (ucs_arbiter_group_is_empty(group)) {
                ucs_arbiter_group_desched(arbiter, group);
                break;
            }

            switch (result) {
            case UCS_ARBITER_CB_RESULT_NEXT_GROUP:
                if (!ucs_arbiter_group_is_scheduled(group)) {
                    ucs_arbiter_group_move(group, &done, 0);
                }
                break;
            case UCS_ARBITER_CB_RESULT_RESCHED_GROUP:
                ucs_arbiter_group_move(group, &resched, 0);
                break;
            case UCS_ARBITER_CB_RESULT_DESCHED_GROUP:
                ucs_arbiter_group_desched(arbiter, group);
                break;
            case UCS_ARBITER_CB_RESULT_STOP:
                ucs_arbiter_group_move(group, &arbiter->schedule, 1);
                goto out;
            default:
                ucs_error("arbiter %p: callback returned unknown result %d "
                          "for group %p; treating it as NEXT_GROUP",
                          arbiter, (int)result, group);
                if (!ucs_arbiter_group_is_scheduled(group)) {
                    ucs_arbiter_group_move(group, &done, 0);
                }
                break;
            }
            break;
        }
    }

out:
    ucs_list_splice_tail(&arbiter->schedule, &done);
    ucs_list_splice_tail(&arbiter->schedule, &resched);
    return num_removed;
}

void ucs_arbiter_group_purge(ucs_arbiter_t *arbiter, ucs_arbiter_group_t *group,
                             ucs_arbiter_callback_t cb, void *arg)
{
    ucs_arbiter_elem_t *tail = group->tail;
    ucs_arbiter_elem_t *elem, *next;
    ucs_arbiter_cb_result_t result;

    /* Detach every element; the kept ones are pushed back in order. */
    group->tail = NULL;
    elem        = (tail != NULL) ? tail->next : NULL;
    while (elem != NULL) {
        next        = (elem == tail) ? NULL : elem->next;
        elem->next  = NULL;
        elem->group = NULL;

        result = cb(arbiter, group, elem, arg);
        if ((result != UCS_ARBITER_CB_RESULT_REMOVE_ELEM) &&
            !ucs_arbiter_elem_is_queued(elem)) {
            ucs_arbiter_group_push_elem(group, elem);
        }
        elem = next;
    }

    if (ucs_arbiter_group_is_empty(group)) {
        ucs_arbiter_group_desched(arbiter, group);
    }
}
