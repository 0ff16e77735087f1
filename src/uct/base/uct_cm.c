/*
 * Connection managers: the generic half of uct_cm_*, uct_listener_*,
 * uct_ep_connect(), uct_ep_disconnect() and uct_cm_client_ep_conn_notify().
 * It checks what the caller passed and dispatches to the component's cm
 * (uct/base/uct_cm.h). Also UCX's interface-based socket-address calls,
 * which no transport here offers.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <uct/base/uct_cm.h>
#include <uct/base/uct_iface.h>
#include <ucs/debug/log.h>

#include <netinet/in.h>
#include <string.h>

/* Marks the table of a cm's endpoints: a cm is not an interface */
static ucs_status_t uct_cm_iface_query(uct_iface_h iface,
                                       uct_iface_attr_t *attr)
{
    ucs_error("uct_iface_query: the handle is a connection manager's, not "
              "an interface's; query the cm with uct_cm_query()");
    return UCS_ERR_INVALID_PARAM;
}

int uct_cm_owns_iface(uct_iface_h iface)
{
    return iface->ops.iface_query == uct_cm_iface_query;
}

void uct_cm_base_init(uct_cm_t *cm, const uct_cm_ops_t *ops,
                      const uct_iface_ops_t *ep_ops, uct_component_t *component,
                      uct_worker_h worker)
{
    cm->iface.ops             = *ep_ops;
    cm->iface.ops.iface_query = uct_cm_iface_query;
    uct_iface_ops_fill_unsupported(&cm->iface.ops);
    cm->ops       = ops;
    cm->component = component;
    cm->worker    = worker;
}

static int uct_cm_check_component(uct_component_h component, const char *func)
{
    if (component->cm_open != NULL) {
        return 1;
    }
    ucs_error("%s: component '%s' has no connection manager; use one whose "
              "uct_component_query() flags have UCT_COMPONENT_FLAG_CM "
              "(uct_info -d lists them)",
              func, component->name);
    return 0;
}

ucs_status_t uct_cm_config_read(uct_component_h component,
                                const char *env_prefix, const char *filename,
                                uct_cm_config_t **config_p)
{
    uct_config_bundle_t *bundle;
    ucs_status_t status;

    if ((component == NULL) || (config_p == NULL)) {
        ucs_error("uct_cm_config_read: NULL %s",
                  (component == NULL) ? "component" : "config_p");
        return UCS_ERR_INVALID_PARAM;
    }
    if (!uct_cm_check_component(component, "uct_cm_config_read")) {
        return UCS_ERR_UNSUPPORTED;
    }

    status =
        uct_config_read(&bundle, &component->cm_config, env_prefix, filename);
    if (status != UCS_OK) {
        /* the parser logged the variable, the value and the syntax */
        return status;
    }
    *config_p = (uct_cm_config_t *)bundle->data;
    return UCS_OK;
}

ucs_status_t uct_cm_open(uct_component_h component, uct_worker_h worker,
                         const uct_cm_config_t *config, uct_cm_h *cm_p)
{
    if ((component == NULL) || (worker == NULL) || (config == NULL) ||
        (cm_p == NULL)) {
        ucs_error("uct_cm_open: NULL %s", (component == NULL) ? "component"
                                          : (worker == NULL)  ? "worker"
                                          : (config == NULL)
                                              ? "config (uct_cm_config_read())"
                                              : "cm_p");
        return UCS_ERR_INVALID_PARAM;
    }
    if (!uct_cm_check_component(component, "uct_cm_open")) {
        return UCS_ERR_UNSUPPORTED;
    }
    return component->cm_open(component, worker, config, cm_p);
}

void uct_cm_close(uct_cm_h cm)
{
    if (cm != NULL) {
        cm->ops->close(cm);
    }
}

ucs_status_t uct_cm_query(uct_cm_h cm, uct_cm_attr_t *cm_attr)
{
    if ((cm == NULL) || (cm_attr == NULL)) {
        ucs_error("uct_cm_query: NULL %s", (cm == NULL) ? "cm" : "cm_attr");
        return UCS_ERR_INVALID_PARAM;
    }
    return cm->ops->cm_query(cm, cm_attr);
}

/* Whether @a saddr is an IPv4 or IPv6 address that @a socklen covers */
static int uct_cm_sockaddr_valid(const struct sockaddr *saddr,
                                 socklen_t socklen, const char *func)
{
    if (saddr == NULL) {
        ucs_error("%s: NULL address", func);
        return 0;
    }
    if (((saddr->sa_family == AF_INET) &&
         (socklen >= sizeof(struct sockaddr_in))) ||
        ((saddr->sa_family == AF_INET6) &&
         (socklen >= sizeof(struct sockaddr_in6)))) {
        return 1;
    }
    ucs_error("%s: address family %d with length %u is not a whole IPv4 or "
              "IPv6 address; pass a sockaddr_in or sockaddr_in6 and its "
              "size",
              func, (int)saddr->sa_family, (unsigned)socklen);
    return 0;
}

ucs_status_t uct_listener_create(uct_cm_h cm, const struct sockaddr *saddr,
                                 socklen_t socklen,
                                 const uct_listener_params_t *params,
                                 uct_listener_h *listener_p)
{
    if ((cm == NULL) || (params == NULL) || (listener_p == NULL)) {
        ucs_error("uct_listener_create: NULL %s", (cm == NULL) ? "cm"
                                                  : (params == NULL)
                                                      ? "params"
                                                      : "listener_p");
        return UCS_ERR_INVALID_PARAM;
    }
    if (!uct_cm_sockaddr_valid(saddr, socklen, "uct_listener_create")) {
        return UCS_ERR_INVALID_PARAM;
    }
    if (!(params->field_mask & UCT_LISTENER_PARAM_FIELD_CONN_REQUEST_CB) ||
        (params->conn_request_cb == NULL)) {
        ucs_error("uct_listener_create: set params->conn_request_cb and "
                  "UCT_LISTENER_PARAM_FIELD_CONN_REQUEST_CB");
        return UCS_ERR_INVALID_PARAM;
    }
    if ((params->field_mask & UCT_LISTENER_PARAM_FIELD_BACKLOG) &&
        (params->backlog <= 0)) {
        ucs_error("uct_listener_create: backlog %d; give a positive one, "
                  "or leave UCT_LISTENER_PARAM_FIELD_BACKLOG out",
                  params->backlog);
        return UCS_ERR_INVALID_PARAM;
    }
    return cm->ops->listener_create(cm, saddr, socklen, params, listener_p);
}

void uct_listener_destroy(uct_listener_h listener)
{
    if (listener != NULL) {
        listener->cm->ops->listener_destroy(listener);
    }
}

ucs_status_t uct_listener_reject(uct_listener_h listener,
                                 uct_conn_request_h conn_request)
{
    if ((listener == NULL) || (conn_request == NULL)) {
        ucs_error("uct_listener_reject: NULL %s",
                  (listener == NULL) ? "listener" : "conn_request");
        return UCS_ERR_INVALID_PARAM;
    }
    return listener->cm->ops->listener_reject(listener, conn_request);
}

ucs_status_t uct_listener_query(uct_listener_h listener,
                                uct_listener_attr_t *listener_attr)
{
    if ((listener == NULL) || (listener_attr == NULL)) {
        ucs_error("uct_listener_query: NULL %s",
                  (listener == NULL) ? "listener" : "listener_attr");
        return UCS_ERR_INVALID_PARAM;
    }
    return listener->cm->ops->listener_query(listener, listener_attr);
}

ucs_status_t uct_cm_ep_create(const uct_ep_params_t *params, uct_ep_h *ep_p)
{
    uint64_t mask = params->field_mask;
    int client    = !!(mask & UCT_EP_PARAM_FIELD_SOCKADDR);
    int server    = !!(mask & UCT_EP_PARAM_FIELD_CONN_REQUEST);

    if (params->cm == NULL) {
        ucs_error("uct_ep_create: UCT_EP_PARAM_FIELD_CM with a NULL cm");
        return UCS_ERR_INVALID_PARAM;
    }
    if (mask & UCT_EP_PARAM_FIELD_IFACE) {
        ucs_error("uct_ep_create: give either a cm or an iface, not both");
        return UCS_ERR_INVALID_PARAM;
    }
    if (client == server) {
        ucs_error("uct_ep_create: a cm endpoint needs exactly one of "
                  "UCT_EP_PARAM_FIELD_SOCKADDR (client) and "
                  "UCT_EP_PARAM_FIELD_CONN_REQUEST (server)");
        return UCS_ERR_INVALID_PARAM;
    }
    if (client) {
        if ((params->sockaddr == NULL) ||
            !uct_cm_sockaddr_valid(params->sockaddr->addr,
                                   params->sockaddr->addrlen,
                                   "uct_ep_create")) {
            return UCS_ERR_INVALID_PARAM;
        }
        if (!(mask & UCT_EP_PARAM_FIELD_SOCKADDR_CONNECT_CB_CLIENT) ||
            (params->sockaddr_cb_client == NULL)) {
            ucs_error("uct_ep_create: a client cm endpoint needs "
                      "sockaddr_cb_client "
                      "(UCT_EP_PARAM_FIELD_SOCKADDR_CONNECT_CB_CLIENT)");
            return UCS_ERR_INVALID_PARAM;
        }
    } else {
        if (params->conn_request == NULL) {
            ucs_error("uct_ep_create: UCT_EP_PARAM_FIELD_CONN_REQUEST with "
                      "a NULL conn_request");
            return UCS_ERR_INVALID_PARAM;
        }
        if (!(mask & UCT_EP_PARAM_FIELD_SOCKADDR_NOTIFY_CB_SERVER) ||
            (params->sockaddr_cb_server == NULL)) {
            ucs_error("uct_ep_create: a server cm endpoint needs "
                      "sockaddr_cb_server "
                      "(UCT_EP_PARAM_FIELD_SOCKADDR_NOTIFY_CB_SERVER)");
            return UCS_ERR_INVALID_PARAM;
        }
    }
    if (!(mask & UCT_EP_PARAM_FIELD_SOCKADDR_DISCONNECT_CB) ||
        (params->disconnect_cb == NULL)) {
        ucs_error("uct_ep_create: a cm endpoint needs disconnect_cb "
                  "(UCT_EP_PARAM_FIELD_SOCKADDR_DISCONNECT_CB)");
        return UCS_ERR_INVALID_PARAM;
    }
    if ((mask & UCT_EP_PARAM_FIELD_SOCKADDR_PACK_CB) &&
        (mask & UCT_EP_PARAM_FIELD_PRIV_DATA)) {
        ucs_error("uct_ep_create: give the private data either by "
                  "sockaddr_pack_cb or by private_data, not both");
        return UCS_ERR_INVALID_PARAM;
    }
    return params->cm->ops->ep_create(params, ep_p);
}

ucs_status_t uct_ep_connect(uct_ep_h ep, const uct_ep_connect_params_t *params)
{
    if ((ep == NULL) || (params == NULL)) {
        ucs_error("uct_ep_connect: NULL %s", (ep == NULL) ? "ep" : "params");
        return UCS_ERR_INVALID_PARAM;
    }
    return ep->iface->ops.ep_connect(ep, params);
}

ucs_status_t uct_ep_disconnect(uct_ep_h ep, unsigned flags)
{
    if (ep == NULL) {
        ucs_error("uct_ep_disconnect: NULL ep");
        return UCS_ERR_INVALID_PARAM;
    }
    return ep->iface->ops.ep_disconnect(ep, flags);
}

ucs_status_t uct_cm_client_ep_conn_notify(uct_ep_h ep)
{
    if (ep == NULL) {
        ucs_error("uct_cm_client_ep_conn_notify: NULL ep");
        return UCS_ERR_INVALID_PARAM;
    }
    return ep->iface->ops.cm_ep_conn_notify(ep);
}

/* ------------------------------------------------------------------------
 * UCX's interface-based socket-address connection: no transport here
 * opens an interface in a sockaddr mode, so no request can exist
 */

ucs_status_t uct_iface_accept(uct_iface_h iface,
                              uct_conn_request_h conn_request)
{
    ucs_error("uct_iface_accept: no transport of openuct opens an interface "
              "in a sockaddr mode; connect through a connection manager "
              "(uct_cm_open(), uct_listener_create())");
    return UCS_ERR_UNSUPPORTED;
}

ucs_status_t uct_iface_reject(uct_iface_h iface,
                              uct_conn_request_h conn_request)
{
    ucs_error("uct_iface_reject: no transport of openuct opens an interface "
              "in a sockaddr mode; connect through a connection manager "
              "(uct_listener_reject())");
    return UCS_ERR_UNSUPPORTED;
}

int uct_md_is_sockaddr_accessible(uct_md_h md, const ucs_sock_addr_t *sockaddr,
                                  uct_sockaddr_accessibility_t mode)
{
    return 0; /* no memory domain sets UCT_MD_FLAG_SOCKADDR */
}
