/**
 * @file
 * The base of a connection manager, for the transports that offer one: a
 * component with a cm_open sets UCT_COMPONENT_FLAG_CM, and its cm_open
 * returns a structure that starts with uct_cm_t. The cm's endpoints start
 * with uct_ep_t whose iface is uct_cm_t::iface, so uct_ep_destroy(),
 * uct_ep_disconnect(), uct_ep_connect() and
 * uct_cm_client_ep_conn_notify() reach the cm through that table.
 * Included by cm implementations (uct/tcp, uct/ib) and by uct_cm.c.
 */
#ifndef UCT_BASE_CM_H_
#define UCT_BASE_CM_H_

#include <uct/api/uct.h>
#include <uct/base/uct_component.h>

BEGIN_C_DECLS

/** What a connection manager implements; every slot is required. The
 *  generic functions of uct_cm.c have checked the arguments. */
typedef struct uct_cm_ops {
    /** uct_cm_close(): the listeners and eps were destroyed before. */
    void (*close)(uct_cm_h cm);
    /** uct_cm_query(): fill what attr->field_mask asks. */
    ucs_status_t (*cm_query)(uct_cm_h cm, uct_cm_attr_t *attr);
    /** uct_listener_create(): the address is IPv4 or IPv6 and
     *  params->conn_request_cb is set. */
    ucs_status_t (*listener_create)(uct_cm_h cm, const struct sockaddr *saddr,
                                    socklen_t socklen,
                                    const uct_listener_params_t *params,
                                    uct_listener_h *listener_p);
    /** uct_listener_reject(). */
    ucs_status_t (*listener_reject)(uct_listener_h listener,
                                    uct_conn_request_h conn_request);
    /** uct_listener_query(). */
    ucs_status_t (*listener_query)(uct_listener_h listener,
                                   uct_listener_attr_t *attr);
    /** uct_listener_destroy(). */
    void (*listener_destroy)(uct_listener_h listener);
    /** uct_ep_create() with UCT_EP_PARAM_FIELD_CM: a client (sockaddr
     *  set) or a server endpoint (conn_request set). */
    ucs_status_t (*ep_create)(const uct_ep_params_t *params, uct_ep_h *ep_p);
} uct_cm_ops_t;

/** The start of every connection manager. */
struct uct_cm {
    /** The table of the cm's endpoints: ep_destroy, ep_connect,
     *  ep_disconnect and cm_ep_conn_notify; the rest say
     *  UCS_ERR_UNSUPPORTED (uct_cm_base_init() fills them). */
    uct_iface_t iface;
    const uct_cm_ops_t *ops;    /**< what the cm implements */
    uct_component_t *component; /**< the component that opened it */
    uct_worker_h worker;        /**< its callbacks' worker */
};

/** The start of every listener. */
typedef struct uct_listener {
    uct_cm_h cm; /**< the connection manager it belongs to */
} uct_listener_t;

/**
 * Initialize the base of a new connection manager.
 * @param [out] cm        the cm being opened.
 * @param [in]  ops       what the cm implements.
 * @param [in]  ep_ops    the table of its endpoints (NULL slots are
 *                        filled with functions that return
 *                        UCS_ERR_UNSUPPORTED).
 * @param [in]  component the component.
 * @param [in]  worker    the worker given to uct_cm_open().
 */
void uct_cm_base_init(uct_cm_t *cm, const uct_cm_ops_t *ops,
                      const uct_iface_ops_t *ep_ops, uct_component_t *component,
                      uct_worker_h worker);

END_C_DECLS

#endif
