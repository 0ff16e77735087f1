/*
 * See uct_iface_open.h.
 */
#include "uct_iface_open.h"

ucs_status_t test_uct_worker_open(ucs_async_context_t **async_p,
                                  uct_worker_h *worker_p, const char **what_p)
{
    ucs_async_context_t *async;
    ucs_status_t status;

    status = ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK, &async);
    if (status != UCS_OK) {
        *what_p = "ucs_async_context_create";
        return status;
    }
    status = uct_worker_create(async, UCS_THREAD_MODE_SINGLE, worker_p);
    if (status != UCS_OK) {
        ucs_async_context_destroy(async);
        *what_p = "uct_worker_create";
        return status;
    }
    *async_p = async;
    return UCS_OK;
}

ucs_status_t test_uct_iface_open(uct_md_h md, uct_worker_h worker,
                                 const char *tl_name, const char *dev_name,
                                 uct_error_handler_t err_handler, void *err_arg,
                                 uct_iface_h *iface_p, const char **what_p)
{
    const uint64_t err_fields = UCT_IFACE_PARAM_FIELD_ERR_HANDLER |
                                UCT_IFACE_PARAM_FIELD_ERR_HANDLER_ARG |
                                UCT_IFACE_PARAM_FIELD_ERR_HANDLER_FLAGS;
    uct_iface_params_t params = {
        .field_mask = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
                      UCT_IFACE_PARAM_FIELD_DEVICE |
                      ((err_handler != NULL) ? err_fields : 0),
        .open_mode         = UCT_IFACE_OPEN_MODE_DEVICE,
        .mode.device       = {.tl_name = tl_name, .dev_name = dev_name},
        .err_handler       = err_handler,
        .err_handler_arg   = err_arg,
        .err_handler_flags = UCT_CB_FLAG_SYNC};
    uct_iface_config_t *config;
    ucs_status_t status;

    status = uct_md_iface_config_read(md, tl_name, NULL, NULL, &config);
    if (status != UCS_OK) {
        *what_p = "uct_md_iface_config_read";
        return status;
    }
    status = uct_iface_open(md, worker, &params, config, iface_p);
    uct_config_release(config);
    if (status != UCS_OK) {
        *what_p = "uct_iface_open";
    }
    return status;
}

ucs_status_t test_uct_open(uct_md_h md, const char *tl_name,
                           const char *dev_name,
                           uct_error_handler_t err_handler, void *err_arg,
                           test_uct_open_t *out, const char **what_p)
{
    ucs_status_t status;

    status = test_uct_worker_open(&out->async, &out->worker, what_p);
    if (status != UCS_OK) {
        return status;
    }
    status = test_uct_iface_open(md, out->worker, tl_name, dev_name,
                                 err_handler, err_arg, &out->iface, what_p);
    if (status == UCS_OK) {
        status  = uct_iface_query(out->iface, &out->attr);
        *what_p = "uct_iface_query";
        if (status != UCS_OK) {
            uct_iface_close(out->iface);
        }
    }
    if (status != UCS_OK) {
        test_uct_close(NULL, out->worker, out->async, NULL);
        out->worker = NULL;
        out->async  = NULL;
        out->iface  = NULL;
    }
    return status;
}

void test_uct_close(uct_iface_h iface, uct_worker_h worker,
                    ucs_async_context_t *async, uct_md_h md)
{
    if (iface != NULL) {
        uct_iface_close(iface);
    }
    if (worker != NULL) {
        uct_worker_destroy(worker);
    }
    if (async != NULL) {
        ucs_async_context_destroy(async);
    }
    if (md != NULL) {
        uct_md_close(md);
    }
}
