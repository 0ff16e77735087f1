#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <ucs/datastruct/callbackq.h>
#include <ucs/debug/assert.h>
#include <ucs/debug/log.h>

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * Bookkeeping, all under priv->lock:
 *  - slots[id] says where callback "id" lives (fast array, slow array, or
 *    the pending list) and at which index; free ids are chained through the
 *    index field.
 *  - When present, the proxy is always the last entry of the fast array.
 *    Removing an entry shifts the later ones down, so the proxy removing
 *    itself at the end of its run never makes dispatch skip an entry.
 *  - The slow array may hold removed entries (id == ID_NULL) while the proxy
 *    walks it; they are compacted when the walk ends.
 *  - A FAST callback added while the proxy walks the slow array waits in the
 *    pending list: inserting it would move the proxy past the dispatch
 *    position and run it twice in one pass. The proxy inserts pending
 *    callbacks before its walk; if that moved it, it returns at once and
 *    does the walk when dispatch reaches its new place.
 *
 * Only the owner thread moves entries of the fast or slow arrays. Other
 * threads (add_safe, remove_safe) only append the proxy to the fast array
 * or replace a callback pointer, both with release stores.
 */

#define UCS_CALLBACKQ_MIN_ALLOC 8

typedef enum {
    UCS_CALLBACKQ_WHERE_FREE,
    UCS_CALLBACKQ_WHERE_FAST,
    UCS_CALLBACKQ_WHERE_SLOW,
    UCS_CALLBACKQ_WHERE_PENDING
} ucs_callbackq_where_t;

typedef struct ucs_callbackq_slot {
    uint8_t where;          /* ucs_callbackq_where_t */
    uint8_t remove_pending; /* disabled by remove_safe, not yet unlinked */
    unsigned index;         /* position, or the next free id */
} ucs_callbackq_slot_t;

typedef struct ucs_callbackq_array {
    ucs_callbackq_elem_t *elems;
    unsigned count;
    unsigned capacity;
} ucs_callbackq_array_t;

struct ucs_callbackq_priv {
    pthread_mutex_t lock;
    ucs_callbackq_slot_t *slots;
    unsigned num_slots;
    int free_id;                /* first free id, or ID_NULL */
    unsigned num_fast;          /* fast callbacks, not the proxy */
    int proxy_on;               /* proxy is in the fast array */
    ucs_callbackq_array_t slow; /* count includes removed entries */
    unsigned num_slow_removed;
    unsigned defer_compact;        /* >0 while slow entries must not
                                      move (proxy walk, remove_if) */
    int proxy_walking;             /* proxy is calling slow entries */
    ucs_callbackq_array_t pending; /* added by add_safe */
    unsigned num_remove_pending;
};

static unsigned ucs_callbackq_proxy(void *arg);

/* Stands in for a callback disabled by remove_safe until it is unlinked. */
static unsigned ucs_callbackq_disabled_cb(void *arg)
{
    return 0;
}

static void ucs_callbackq_lock(ucs_callbackq_priv_t *priv)
{
    pthread_mutex_lock(&priv->lock);
}

static void ucs_callbackq_unlock(ucs_callbackq_priv_t *priv)
{
    pthread_mutex_unlock(&priv->lock);
}

static void ucs_callbackq_elem_set(ucs_callbackq_elem_t *elem,
                                   ucs_callback_t cb, void *arg, unsigned flags,
                                   int id)
{
    elem->arg   = arg;
    elem->flags = flags;
    elem->id    = id;
    __atomic_store_n(&elem->cb, cb, __ATOMIC_RELEASE);
}

static int ucs_callbackq_id_is_valid(const ucs_callbackq_priv_t *priv, int id)
{
    return (id >= 0) && ((unsigned)id < priv->num_slots) &&
           (priv->slots[id].where != UCS_CALLBACKQ_WHERE_FREE);
}

static int ucs_callbackq_id_alloc(ucs_callbackq_priv_t *priv)
{
    ucs_callbackq_slot_t *slots;
    unsigned num_slots, i;
    int id;

    if (priv->free_id == UCS_CALLBACKQ_ID_NULL) {
        num_slots = ucs_max(priv->num_slots * 2, UCS_CALLBACKQ_MIN_ALLOC);
        if (num_slots > (unsigned)INT32_MAX) {
            ucs_error("callbackq: too many callbacks (%u)", priv->num_slots);
            return UCS_CALLBACKQ_ID_NULL;
        }

        slots = realloc(priv->slots, num_slots * sizeof(*slots));
        if (slots == NULL) {
            ucs_error("callbackq: failed to grow the id table to %u entries",
                      num_slots);
            return UCS_CALLBACKQ_ID_NULL;
        }

        for (i = priv->num_slots; i < num_slots; ++i) {
            slots[i].where          = UCS_CALLBACKQ_WHERE_FREE;
            slots[i].remove_pending = 0;
            slots[i].index =
                (i + 1 < num_slots) ? (i + 1) : (unsigned)UCS_CALLBACKQ_ID_NULL;
        }
        priv->free_id   = (int)priv->num_slots;
        priv->slots     = slots;
        priv->num_slots = num_slots;
    }

    id            = priv->free_id;
    priv->free_id = (int)priv->slots[id].index;
    return id;
}

static void ucs_callbackq_id_free(ucs_callbackq_priv_t *priv, int id)
{
    priv->slots[id].where          = UCS_CALLBACKQ_WHERE_FREE;
    priv->slots[id].remove_pending = 0;
    priv->slots[id].index          = (unsigned)priv->free_id;
    priv->free_id                  = id;
}

static void ucs_callbackq_slot_set(ucs_callbackq_priv_t *priv, int id,
                                   ucs_callbackq_where_t where, unsigned index)
{
    priv->slots[id].where = where;
    priv->slots[id].index = index;
}

static ucs_status_t ucs_callbackq_array_append(ucs_callbackq_array_t *array,
                                               ucs_callback_t cb, void *arg,
                                               unsigned flags, int id)
{
    ucs_callbackq_elem_t *elems;
    unsigned capacity;

    if (array->count == array->capacity) {
        capacity = ucs_max(array->capacity * 2, UCS_CALLBACKQ_MIN_ALLOC);
        elems    = realloc(array->elems, capacity * sizeof(*elems));
        if (elems == NULL) {
            ucs_error("callbackq: failed to grow a callback array to %u "
                      "entries",
                      capacity);
            return UCS_ERR_NO_MEMORY;
        }
        array->elems    = elems;
        array->capacity = capacity;
    }

    ucs_callbackq_elem_set(&array->elems[array->count++], cb, arg, flags, id);
    return UCS_OK;
}

static unsigned ucs_callbackq_num_fast_elems(const ucs_callbackq_priv_t *priv)
{
    return priv->num_fast + priv->proxy_on;
}

/* Add an entry to the fast array, in front of the proxy if it is there.
 * Only the owner thread adds entries other than the proxy. */
static void ucs_callbackq_fast_insert(ucs_callbackq_t *cbq, ucs_callback_t cb,
                                      void *arg, unsigned flags, int id)
{
    ucs_callbackq_priv_t *priv = cbq->priv;
    unsigned index             = priv->num_fast;

    ucs_assert(id != UCS_CALLBACKQ_ID_NULL);
    ucs_assert(index < UCS_CALLBACKQ_FAST_COUNT);
    if (priv->proxy_on) {
        /* Move the proxy one place up first, so that the walk always finds
         * it; the dispatcher is this thread, so it sees both stores. */
        ucs_callbackq_elem_set(&cbq->fast_elems[index + 1], ucs_callbackq_proxy,
                               cbq, 0, UCS_CALLBACKQ_ID_NULL);
    }
    ucs_callbackq_elem_set(&cbq->fast_elems[index], cb, arg, flags, id);
    ucs_callbackq_slot_set(priv, id, UCS_CALLBACKQ_WHERE_FAST, index);
    ++priv->num_fast;
}

/*
 * Unlink fast entry @a index, shifting the later ones down. Safe during
 * dispatch from the owner thread: the walk may skip one entry in this pass
 * but never reads past the NULL entries at the end.
 */
static void ucs_callbackq_fast_remove(ucs_callbackq_t *cbq, unsigned index)
{
    ucs_callbackq_priv_t *priv = cbq->priv;
    unsigned last              = ucs_callbackq_num_fast_elems(priv) - 1;
    ucs_callbackq_elem_t *elem;
    unsigned i;

    for (i = index; i < last; ++i) {
        elem  = &cbq->fast_elems[i];
        *elem = cbq->fast_elems[i + 1];
        if (elem->id != UCS_CALLBACKQ_ID_NULL) {
            priv->slots[elem->id].index = i;
        }
    }
    ucs_callbackq_elem_set(&cbq->fast_elems[last], NULL, NULL, 0,
                           UCS_CALLBACKQ_ID_NULL);
}

/* Drop removed entries from the slow array, keeping the order. */
static void ucs_callbackq_slow_compact(ucs_callbackq_priv_t *priv)
{
    ucs_callbackq_elem_t *elems = priv->slow.elems;
    unsigned i, count = 0;

    for (i = 0; i < priv->slow.count; ++i) {
        if (elems[i].id == UCS_CALLBACKQ_ID_NULL) {
            continue;
        }
        if (i != count) {
            elems[count]                   = elems[i];
            priv->slots[elems[i].id].index = count;
        }
        ++count;
    }

    priv->slow.count       = count;
    priv->num_slow_removed = 0;
}

static void ucs_callbackq_slow_remove(ucs_callbackq_priv_t *priv,
                                      unsigned index)
{
    ucs_callbackq_elem_set(&priv->slow.elems[index], NULL, NULL, 0,
                           UCS_CALLBACKQ_ID_NULL);
    ++priv->num_slow_removed;
    if (priv->defer_compact == 0) {
        ucs_callbackq_slow_compact(priv);
    }
}

static void ucs_callbackq_pending_remove(ucs_callbackq_priv_t *priv,
                                         unsigned index)
{
    ucs_callbackq_elem_t *elems = priv->pending.elems;
    unsigned i;

    for (i = index; i + 1 < priv->pending.count; ++i) {
        elems[i]                       = elems[i + 1];
        priv->slots[elems[i].id].index = i;
    }
    --priv->pending.count;
}

/* Make sure the proxy runs on the next dispatch. */
static void ucs_callbackq_proxy_enable(ucs_callbackq_t *cbq)
{
    ucs_callbackq_priv_t *priv = cbq->priv;

    if (!priv->proxy_on) {
        /* Another thread may do this while the owner dispatches: the entry
         * past the last one is NULL, and the release store of the callback
         * publishes the argument with it. */
        ucs_callbackq_elem_set(&cbq->fast_elems[priv->num_fast],
                               ucs_callbackq_proxy, cbq, 0,
                               UCS_CALLBACKQ_ID_NULL);
        priv->proxy_on = 1;
    }
}

/* Owner thread: take the proxy out when it has nothing left to do. */
static void ucs_callbackq_proxy_disable_if_idle(ucs_callbackq_t *cbq)
{
    ucs_callbackq_priv_t *priv = cbq->priv;

    if (!priv->proxy_on || (priv->defer_compact > 0) ||
        (priv->slow.count > 0) || (priv->pending.count > 0) ||
        (priv->num_remove_pending > 0)) {
        return;
    }

    ucs_assert(cbq->fast_elems[priv->num_fast].cb == ucs_callbackq_proxy);
    ucs_callbackq_fast_remove(cbq, priv->num_fast);
    priv->proxy_on = 0;
}

/* Owner thread: place a new callback in the fast or the slow array. */
static ucs_status_t ucs_callbackq_insert(ucs_callbackq_t *cbq,
                                         ucs_callback_t cb, void *arg,
                                         unsigned flags, int id)
{
    ucs_callbackq_priv_t *priv = cbq->priv;
    ucs_status_t status;

    if ((flags & UCS_CALLBACKQ_FLAG_FAST) &&
        !(flags & UCS_CALLBACKQ_FLAG_ONESHOT) &&
        (priv->num_fast < UCS_CALLBACKQ_FAST_COUNT)) {
        if (priv->proxy_walking) {
            /* See the top of this file. */
            status =
                ucs_callbackq_array_append(&priv->pending, cb, arg, flags, id);
            if (status == UCS_OK) {
                ucs_callbackq_slot_set(priv, id, UCS_CALLBACKQ_WHERE_PENDING,
                                       priv->pending.count - 1);
            }
            return status;
        }

        ucs_callbackq_fast_insert(cbq, cb, arg, flags, id);
        return UCS_OK;
    }

    status = ucs_callbackq_array_append(&priv->slow, cb, arg, flags, id);
    if (status != UCS_OK) {
        return status;
    }

    ucs_callbackq_slot_set(priv, id, UCS_CALLBACKQ_WHERE_SLOW,
                           priv->slow.count - 1);
    ucs_callbackq_proxy_enable(cbq);
    return UCS_OK;
}

/* Owner thread: unlink callback @a id and free the id. The caller decides
 * when the proxy may be taken out. */
static void ucs_callbackq_remove_id(ucs_callbackq_t *cbq, int id)
{
    ucs_callbackq_priv_t *priv = cbq->priv;
    ucs_callbackq_slot_t *slot = &priv->slots[id];

    if (slot->remove_pending) {
        slot->remove_pending = 0;
        --priv->num_remove_pending;
    }

    switch (slot->where) {
    case UCS_CALLBACKQ_WHERE_FAST:
        ucs_callbackq_fast_remove(cbq, slot->index);
        --priv->num_fast;
        break;
    case UCS_CALLBACKQ_WHERE_SLOW:
        ucs_callbackq_slow_remove(priv, slot->index);
        break;
    case UCS_CALLBACKQ_WHERE_PENDING:
        ucs_callbackq_pending_remove(priv, slot->index);
        break;
    default:
        ucs_fatal("callbackq %p: id %d is not in use", cbq, id);
    }

    ucs_callbackq_id_free(priv, id);
}

/* Owner thread: apply what remove_safe and add_safe left for the proxy. */
static void ucs_callbackq_apply_deferred(ucs_callbackq_t *cbq)
{
    ucs_callbackq_priv_t *priv = cbq->priv;
    ucs_callbackq_elem_t *elem;
    unsigned i, num_done;
    ucs_status_t status;
    int id;

    for (id = 0;
         (priv->num_remove_pending > 0) && ((unsigned)id < priv->num_slots);
         ++id) {
        if ((priv->slots[id].where != UCS_CALLBACKQ_WHERE_FREE) &&
            priv->slots[id].remove_pending) {
            ucs_callbackq_remove_id(cbq, id);
        }
    }

    for (num_done = 0; num_done < priv->pending.count; ++num_done) {
        elem   = &priv->pending.elems[num_done];
        status = ucs_callbackq_insert(cbq, elem->cb, elem->arg, elem->flags,
                                      elem->id);
        if (status != UCS_OK) {
            /* Left pending; the next dispatch retries. */
            break;
        }
    }

    if (num_done > 0) {
        priv->pending.count -= num_done;
        memmove(priv->pending.elems, priv->pending.elems + num_done,
                priv->pending.count * sizeof(*priv->pending.elems));
        for (i = 0; i < priv->pending.count; ++i) {
            priv->slots[priv->pending.elems[i].id].index = i;
        }
    }
}

/*
 * Runs from the fast array: applies deferred changes, then calls the slow
 * callbacks without holding the lock. Entries added during the walk wait for
 * the next pass; removed entries stay in place (marked) until the walk ends.
 */
static unsigned ucs_callbackq_proxy(void *arg)
{
    ucs_callbackq_t *cbq       = (ucs_callbackq_t *)arg;
    ucs_callbackq_priv_t *priv = cbq->priv;
    unsigned num_slow          = 0;
    unsigned count             = 0;
    ucs_callbackq_elem_t *elem;
    unsigned i, flags, index;
    ucs_callback_t cb;
    void *cb_arg;
    int id;

    ucs_callbackq_lock(priv);
    ++priv->defer_compact;
    index = priv->num_fast; /* the proxy is the last fast entry */
    ucs_callbackq_apply_deferred(cbq);
    if (priv->num_fast <= index) {
        priv->proxy_walking = 1;
        num_slow            = priv->slow.count;
    } /* else: moved up by new fast entries; dispatch will call it again */
    ucs_callbackq_unlock(priv);

    for (i = 0; i < num_slow; ++i) {
        /* The array may have been reallocated by a callback's add. */
        elem = &priv->slow.elems[i];
        cb   = __atomic_load_n(&elem->cb, __ATOMIC_ACQUIRE);
        id   = elem->id;
        if (id == UCS_CALLBACKQ_ID_NULL) {
            continue;
        }

        cb_arg = elem->arg;
        flags  = elem->flags;
        count += cb(cb_arg);

        if (flags & UCS_CALLBACKQ_FLAG_ONESHOT) {
            ucs_callbackq_lock(priv);
            if (priv->slow.elems[i].id == id) {
                ucs_callbackq_remove_id(cbq, id);
            }
            ucs_callbackq_unlock(priv);
        }
    }

    ucs_callbackq_lock(priv);
    priv->proxy_walking = 0;
    if (--priv->defer_compact == 0) {
        if (priv->num_slow_removed > 0) {
            ucs_callbackq_slow_compact(priv);
        }
        ucs_callbackq_proxy_disable_if_idle(cbq);
    }
    ucs_callbackq_unlock(priv);
    return count;
}

ucs_status_t ucs_callbackq_init(ucs_callbackq_t *cbq)
{
    ucs_callbackq_priv_t *priv;
    unsigned i;
    int ret;

    priv = calloc(1, sizeof(*priv));
    if (priv == NULL) {
        ucs_error("callbackq %p: failed to allocate its state", cbq);
        return UCS_ERR_NO_MEMORY;
    }

    ret = pthread_mutex_init(&priv->lock, NULL);
    if (ret != 0) {
        ucs_error("callbackq %p: pthread_mutex_init() failed: %s", cbq,
                  strerror(ret));
        free(priv);
        return UCS_ERR_NO_MEMORY;
    }

    priv->free_id = UCS_CALLBACKQ_ID_NULL;
    for (i = 0; i < ucs_static_array_size(cbq->fast_elems); ++i) {
        ucs_callbackq_elem_set(&cbq->fast_elems[i], NULL, NULL, 0,
                               UCS_CALLBACKQ_ID_NULL);
    }
    cbq->priv = priv;
    return UCS_OK;
}

void ucs_callbackq_cleanup(ucs_callbackq_t *cbq)
{
    ucs_callbackq_priv_t *priv = cbq->priv;
    unsigned num_left;
    int id;

    ucs_callbackq_lock(priv);
    for (id = 0;
         (priv->num_remove_pending > 0) && ((unsigned)id < priv->num_slots);
         ++id) {
        if ((priv->slots[id].where != UCS_CALLBACKQ_WHERE_FREE) &&
            priv->slots[id].remove_pending) {
            ucs_callbackq_remove_id(cbq, id);
        }
    }

    num_left = priv->num_fast + priv->pending.count +
               (priv->slow.count - priv->num_slow_removed);
    ucs_callbackq_unlock(priv);

    if (num_left > 0) {
        ucs_warn("callbackq %p: %u callback(s) still registered at cleanup; "
                 "remove them first",
                 cbq, num_left);
    }

    pthread_mutex_destroy(&priv->lock);
    free(priv->pending.elems);
    free(priv->slow.elems);
    free(priv->slots);
    free(priv);
    memset(cbq->fast_elems, 0, sizeof(cbq->fast_elems));
    cbq->priv = NULL;
}

int ucs_callbackq_add(ucs_callbackq_t *cbq, ucs_callback_t cb, void *arg,
                      unsigned flags)
{
    ucs_callbackq_priv_t *priv = cbq->priv;
    ucs_status_t status;
    int id;

    if (cb == NULL) {
        ucs_error("callbackq %p: cannot add a NULL callback", cbq);
        return UCS_CALLBACKQ_ID_NULL;
    }

    ucs_callbackq_lock(priv);
    id = ucs_callbackq_id_alloc(priv);
    if (id != UCS_CALLBACKQ_ID_NULL) {
        status = ucs_callbackq_insert(cbq, cb, arg, flags, id);
        if (status != UCS_OK) {
            ucs_callbackq_id_free(priv, id);
            id = UCS_CALLBACKQ_ID_NULL;
        }
    }
    ucs_callbackq_unlock(priv);
    return id;
}

ucs_status_t ucs_callbackq_remove(ucs_callbackq_t *cbq, int id)
{
    ucs_callbackq_priv_t *priv = cbq->priv;

    ucs_callbackq_lock(priv);
    if (!ucs_callbackq_id_is_valid(priv, id)) {
        ucs_callbackq_unlock(priv);
        ucs_debug("callbackq %p: cannot remove id %d: not registered", cbq, id);
        return UCS_ERR_NO_ELEM;
    }

    ucs_callbackq_remove_id(cbq, id);
    ucs_callbackq_proxy_disable_if_idle(cbq);
    ucs_callbackq_unlock(priv);
    return UCS_OK;
}

int ucs_callbackq_add_safe(ucs_callbackq_t *cbq, ucs_callback_t cb, void *arg,
                           unsigned flags)
{
    ucs_callbackq_priv_t *priv = cbq->priv;
    ucs_status_t status;
    int id;

    if (cb == NULL) {
        ucs_error("callbackq %p: cannot add a NULL callback", cbq);
        return UCS_CALLBACKQ_ID_NULL;
    }

    ucs_callbackq_lock(priv);
    id = ucs_callbackq_id_alloc(priv);
    if (id == UCS_CALLBACKQ_ID_NULL) {
        goto out;
    }

    status = ucs_callbackq_array_append(&priv->pending, cb, arg, flags, id);
    if (status != UCS_OK) {
        ucs_callbackq_id_free(priv, id);
        id = UCS_CALLBACKQ_ID_NULL;
        goto out;
    }

    ucs_callbackq_slot_set(priv, id, UCS_CALLBACKQ_WHERE_PENDING,
                           priv->pending.count - 1);
    ucs_callbackq_proxy_enable(cbq);

out:
    ucs_callbackq_unlock(priv);
    return id;
}

ucs_status_t ucs_callbackq_remove_safe(ucs_callbackq_t *cbq, int id)
{
    ucs_callbackq_priv_t *priv = cbq->priv;
    ucs_callbackq_slot_t *slot;
    ucs_callbackq_elem_t *elem;

    ucs_callbackq_lock(priv);
    if (!ucs_callbackq_id_is_valid(priv, id) ||
        priv->slots[id].remove_pending) {
        ucs_callbackq_unlock(priv);
        ucs_debug("callbackq %p: cannot remove id %d: not registered", cbq, id);
        return UCS_ERR_NO_ELEM;
    }

    slot = &priv->slots[id];
    if (slot->where == UCS_CALLBACKQ_WHERE_PENDING) {
        /* Not visible to dispatch yet: drop it right away. */
        ucs_callbackq_pending_remove(priv, slot->index);
        ucs_callbackq_id_free(priv, id);
    } else {
        elem = (slot->where == UCS_CALLBACKQ_WHERE_FAST)
                   ? &cbq->fast_elems[slot->index]
                   : &priv->slow.elems[slot->index];
        __atomic_store_n(&elem->cb, ucs_callbackq_disabled_cb,
                         __ATOMIC_RELEASE);
        slot->remove_pending = 1;
        ++priv->num_remove_pending;
        ucs_callbackq_proxy_enable(cbq);
    }

    ucs_callbackq_unlock(priv);
    return UCS_OK;
}

unsigned ucs_callbackq_remove_if(ucs_callbackq_t *cbq,
                                 ucs_callbackq_predicate_t pred, void *arg)
{
    ucs_callbackq_priv_t *priv = cbq->priv;
    unsigned num_removed       = 0;
    ucs_callbackq_elem_t *elem;
    unsigned i;

    ucs_callbackq_lock(priv);
    ++priv->defer_compact;

    /* Walk backwards so that removals shift only entries already seen. */
    for (i = ucs_callbackq_num_fast_elems(priv); i > 0; --i) {
        elem = &cbq->fast_elems[i - 1];
        if ((elem->id != UCS_CALLBACKQ_ID_NULL) && pred(elem, arg)) {
            ucs_callbackq_remove_id(cbq, elem->id);
            ++num_removed;
        }
    }

    for (i = priv->slow.count; i > 0; --i) {
        elem = &priv->slow.elems[i - 1];
        if ((elem->id != UCS_CALLBACKQ_ID_NULL) && pred(elem, arg)) {
            ucs_callbackq_remove_id(cbq, elem->id);
            ++num_removed;
        }
    }

    for (i = priv->pending.count; i > 0; --i) {
        elem = &priv->pending.elems[i - 1];
        if (pred(elem, arg)) {
            ucs_callbackq_remove_id(cbq, elem->id);
            ++num_removed;
        }
    }

    if (--priv->defer_compact == 0) {
        if (priv->num_slow_removed > 0) {
            ucs_callbackq_slow_compact(priv);
        }
        ucs_callbackq_proxy_disable_if_idle(cbq);
    }
    ucs_callbackq_unlock(priv);
    return num_removed;
}
