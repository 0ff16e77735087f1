/*
 * Test programs' helper: what a program opens to use a transport on a
 * device after it found the memory domain (uct_md_find.h): an async
 * context and a worker, the interface, and closing them all.
 */
#ifndef TEST_COMMON_UCT_IFACE_OPEN_H_
#define TEST_COMMON_UCT_IFACE_OPEN_H_

#include <uct/api/uct.h>
#include <ucs/async/async.h>

/**
 * Creates an async context (a thread, spinlock mode) and a worker on it.
 * @param async_p   the context; the caller destroys it after the worker
 * @param worker_p  the worker
 * @param what_p    on failure, the name of the call that failed
 * @return UCS_OK, or the status of the failed call. Sets the outputs only
 *         on success.
 */
ucs_status_t test_uct_worker_open(ucs_async_context_t **async_p,
                                  uct_worker_h *worker_p, const char **what_p);

/**
 * Opens the interface of @a tl_name on @a dev_name of @a md on @a worker,
 * with the transport's configuration from the environment and, unless
 * @a err_handler is NULL, that error handler with @a err_arg, called from
 * progress (UCT_CB_FLAG_SYNC).
 * @param what_p  on failure, the name of the call that failed
 * @return UCS_OK, or the status of the failed call. Sets @a iface_p only
 *         on success.
 */
ucs_status_t test_uct_iface_open(uct_md_h md, uct_worker_h worker,
                                 const char *tl_name, const char *dev_name,
                                 uct_error_handler_t err_handler, void *err_arg,
                                 uct_iface_h *iface_p, const char **what_p);

/** What test_uct_open() opens */
typedef struct {
    ucs_async_context_t *async;
    uct_worker_h worker;
    uct_iface_h iface;
    uct_iface_attr_t attr;
} test_uct_open_t;

/**
 * test_uct_worker_open(), then test_uct_iface_open() on that worker, then
 * uct_iface_query() into @a out->attr. On failure nothing stays open and
 * the fields of @a out are NULL.
 */
ucs_status_t test_uct_open(uct_md_h md, const char *tl_name,
                           const char *dev_name,
                           uct_error_handler_t err_handler, void *err_arg,
                           test_uct_open_t *out, const char **what_p);

/** Closes, in this order, each of them that is not NULL. */
void test_uct_close(uct_iface_h iface, uct_worker_h worker,
                    ucs_async_context_t *async, uct_md_h md);

#endif
