/**
 * @file
 * The UCT transport API, the one header an application includes.
 *
 * Objects: a component (family of memory domains) opens memory domains;
 * a memory domain lists transport resources (transport + device); an
 * interface is one transport on one device bound to a worker; endpoints
 * connect an interface to remote ones. The worker's progress drives
 * everything. Fast-path calls are inline dispatches through the
 * interface's operations table (see tl.h).
 *
 * Applications, the tools, the examples and the tests include
 * `<uct/api/uct.h>`; it brings in uct_def.h, tl.h, uct_types.h and
 * version.h, and every ucs header that UCX's uct.h brings in (lists,
 * linear functions, statistics types, topology), by UCX's paths, so a
 * program that reaches ucs_list_* through uct.h alone compiles.
 *
 * Thread rules, common to the whole API unless a call says otherwise:
 * - Component and resource queries (uct_query_components(),
 *   uct_component_query(), uct_md_query_tl_resources()) and configuration
 *   reading may run from any thread.
 * - An interface, its endpoints and its memory are driven by the thread of
 *   the worker they belong to: with UCS_THREAD_MODE_SINGLE by one thread
 *   only, with UCS_THREAD_MODE_SERIALIZED by any thread as long as the
 *   application never lets two calls on the same worker overlap.
 *   UCS_THREAD_MODE_MULTI is refused by uct_worker_create().
 * - Callbacks (active message handlers, completions, pending requests,
 *   purge callbacks, error handlers) run on the worker's thread from
 *   uct_worker_progress() or uct_iface_progress(), or from inside the call
 *   that triggers them (uct_ep_destroy(), uct_ep_pending_purge(); on the
 *   self transport the receiver's active message handler runs inside the
 *   sender's call). A callback may post new operations on the same worker
 *   (sends, RMA, atomics, uct_ep_pending_add()), but must not call
 *   progress, destroy the endpoint or close the interface it runs for.
 */
#ifndef UCT_H_
#define UCT_H_

#include <uct/api/uct_def.h>
#include <uct/api/tl.h>
#include <uct/api/uct_types.h>
#include <uct/api/version.h>
#include <ucs/async/async_fwd.h>
#include <ucs/config/types.h>
#include <ucs/datastruct/callbackq.h>
#include <ucs/datastruct/linear_func.h>
#include <ucs/datastruct/list.h>
#include <ucs/memory/memory_type.h>
#include <ucs/stats/stats_fwd.h>
#include <ucs/sys/compiler_def.h>
#include <ucs/sys/topo/base/topo.h>
#include <ucs/type/cpu_set.h>
#include <ucs/type/status.h>
#include <ucs/type/thread_mode.h>

#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>

BEGIN_C_DECLS

/**
 * @defgroup UCT_API UCT transport API
 * The UCT API of uct.h, by subject.
 * @{
 */

/**
 * @defgroup UCT_RESOURCE Components and transport resources
 * Finding what is there: components, the memory domains they offer and
 * the transports and devices each memory domain can open.
 */

/**
 * @defgroup UCT_CONFIG Configuration
 * Reading memory domain and interface configurations from the environment
 * (UCX_* variables) and a configuration file, changing and printing them.
 */

/**
 * @defgroup UCT_CONTEXT Workers and progress
 * The worker owns the progress queue every interface of it registers with;
 * everything happens when the application calls uct_worker_progress().
 */

/**
 * @defgroup UCT_MD Memory domains and memory
 * Opening memory domains, registering and allocating memory, packing and
 * unpacking remote keys.
 */

/**
 * @defgroup UCT_IFACE Interfaces
 * Opening an interface (one transport on one device), its capabilities,
 * addresses, events and buffers.
 */

/**
 * @defgroup UCT_EP Endpoints
 * Creating endpoints and connecting them to remote interfaces or
 * endpoints.
 */

/**
 * @defgroup UCT_AM Active messages
 * Sending messages that run a handler on the receiving interface.
 *
 * Send variants: short (the data is copied by the call, which either sends
 * it or refuses with UCS_ERR_NO_RESOURCE), bcopy (a pack callback writes
 * the data into a transport buffer during the call) and zcopy (the
 * transport reads the user's registered memory, possibly after the call
 * returned; the memory must stay untouched until the completion).
 */

/**
 * @defgroup UCT_RMA Remote memory access
 * Writing to and reading from remote memory registered and packed with
 * uct_md_mem_reg() and uct_md_mkey_pack() on the remote side.
 */

/**
 * @defgroup UCT_AMO Atomic operations
 * 32 and 64 bit atomic operations on remote memory.
 */

/**
 * @defgroup UCT_FLUSH Completion, flush, fence and pending requests
 * Waiting for outstanding operations, ordering them, and being called
 * back when an endpoint that said UCS_ERR_NO_RESOURCE can send again.
 */

/**
 * @defgroup UCT_CM Connection managers
 * Connecting by IP address and port: a server listens
 * (uct_listener_create()), a client endpoint connects to it
 * (uct_ep_create() with UCT_EP_PARAM_FIELD_CM and a socket address), and
 * each side hands the other a block of private data, typically its
 * transport addresses. Components that offer one set
 * UCT_COMPONENT_FLAG_CM. Callbacks run from the async context of the
 * connection manager's worker.
 */

/**
 * @defgroup UCT_TAG Tag-matching offload
 * Sends and receives matched by tag in the network adapter (UCX's API for
 * hardware tag matching). No transport of openuct offers it: no
 * interface sets a UCT_IFACE_FLAG_TAG_* flag, uct_iface_attr_t::cap.tag
 * is all zero, and every call returns UCS_ERR_UNSUPPORTED unless a
 * third-party transport module fills the operations.
 */

/** @} */

/* ------------------------------------------------------------------------
 * Functions
 */

/**
 * Lists the components, loading the transport modules the first time.
 * Thread safe.
 * @ingroup UCT_RESOURCE
 * @param [out] components_p     set to a new array of the components; the
 *                               handles stay valid for the life of the
 *                               process. Free the array with
 *                               uct_release_component_list().
 * @param [out] num_components_p set to the number of entries.
 * @return UCS_OK; UCS_ERR_INVALID_PARAM if an output is NULL;
 *         UCS_ERR_NO_MEMORY.
 */
ucs_status_t uct_query_components(uct_component_h **components_p,
                                  unsigned *num_components_p);
/**
 * Frees the array of uct_query_components() (not the components).
 * @ingroup UCT_RESOURCE
 * @param [in] components the array; NULL is allowed.
 */
void uct_release_component_list(uct_component_h *components);
/**
 * Reads attributes of a component: the fields selected by
 * component_attr->field_mask. To get the memory domains, query
 * UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT first, then set md_resources
 * to an array of that many entries and query
 * UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES. Thread safe.
 * @ingroup UCT_RESOURCE
 * @param [in]     component      a component of uct_query_components().
 * @param [in,out] component_attr field_mask in, selected fields out.
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for a NULL argument or a NULL
 *         md_resources when the component has memory domains;
 *         UCS_ERR_NO_MEMORY.
 */
ucs_status_t uct_component_query(uct_component_h component,
                                 uct_component_attr_t *component_attr);

/**
 * Opens a memory domain of a component.
 * @ingroup UCT_MD
 * @param [in]  component the component.
 * @param [in]  md_name   one of its uct_md_resource_desc_t::md_name.
 * @param [in]  config    configuration read by uct_md_config_read() for
 *                        this component; it may be released when the call
 *                        returns.
 * @param [out] md_p      set to the memory domain; close it with
 *                        uct_md_close() after every interface and memory
 *                        registration of it.
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for a NULL argument;
 *         UCS_ERR_NO_DEVICE if the component has no such memory domain;
 *         UCS_ERR_NO_MEMORY, or the error of the component (e.g.
 *         UCS_ERR_IO_ERROR when a device cannot be opened).
 */
ucs_status_t uct_md_open(uct_component_h component, const char *md_name,
                         const uct_md_config_t *config, uct_md_h *md_p);
/**
 * Closes a memory domain.
 * @ingroup UCT_MD
 * @param [in] md the memory domain; NULL is allowed.
 */
void uct_md_close(uct_md_h md);
/**
 * Reads the attributes of a memory domain.
 * @ingroup UCT_MD
 * @param [in]  md      the memory domain.
 * @param [out] md_attr filled whole.
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for a NULL argument.
 */
ucs_status_t uct_md_query(uct_md_h md, uct_md_attr_t *md_attr);
/**
 * Lists the transports and devices a memory domain can open interfaces
 * on. Network devices are filtered by UCX_NET_DEVICES, read at each call;
 * a transport whose device query fails is left out. Thread safe.
 * @ingroup UCT_RESOURCE
 * @param [in]  md              the memory domain.
 * @param [out] resources_p     set to a new array (NULL when empty); free
 *                              it with uct_release_tl_resource_list().
 * @param [out] num_resources_p set to the number of entries (may be 0).
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for a NULL argument or a bad
 *         UCX_NET_DEVICES; UCS_ERR_NO_MEMORY.
 */
ucs_status_t uct_md_query_tl_resources(uct_md_h md,
                                       uct_tl_resource_desc_t **resources_p,
                                       unsigned *num_resources_p);
/**
 * Frees the array of uct_md_query_tl_resources().
 * @ingroup UCT_RESOURCE
 * @param [in] resources the array; NULL is allowed.
 */
void uct_release_tl_resource_list(uct_tl_resource_desc_t *resources);
/**
 * Reads the configuration of a component's memory domains: defaults, then
 * @a filename, then the environment. Thread safe.
 * @ingroup UCT_CONFIG
 * @param [in]  component  the component.
 * @param [in]  env_prefix prefix of the environment variables; NULL for
 *                         "UCX_".
 * @param [in]  filename   configuration file to read; NULL or "" for
 *                         none.
 * @param [out] config_p   set to the new configuration; release it with
 *                         uct_config_release().
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for a NULL argument or a bad
 *         value (logged with the variable); UCS_ERR_IO_ERROR if
 *         @a filename cannot be read; UCS_ERR_NO_MEMORY.
 */
ucs_status_t uct_md_config_read(uct_component_h component,
                                const char *env_prefix, const char *filename,
                                uct_md_config_t **config_p);
/**
 * Reads the configuration of a transport's interfaces, as
 * uct_md_config_read() does for memory domains (variables such as
 * UCX_TCP_SNDBUF). Thread safe.
 * @ingroup UCT_CONFIG
 * @param [in]  md         a memory domain of the transport's component.
 * @param [in]  tl_name    the transport name.
 * @param [in]  env_prefix prefix of the environment variables; NULL for
 *                         "UCX_".
 * @param [in]  filename   configuration file to read; NULL or "" for
 *                         none.
 * @param [out] config_p   set to the new configuration; release it with
 *                         uct_config_release().
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for a NULL argument or a bad
 *         value; UCS_ERR_NO_DEVICE if the component has no such
 *         transport; UCS_ERR_IO_ERROR if @a filename cannot be read;
 *         UCS_ERR_NO_MEMORY.
 */
ucs_status_t uct_md_iface_config_read(uct_md_h md, const char *tl_name,
                                      const char *env_prefix,
                                      const char *filename,
                                      uct_iface_config_t **config_p);
/**
 * Releases a configuration of uct_md_config_read() or
 * uct_md_iface_config_read().
 * @ingroup UCT_CONFIG
 * @param [in] config the configuration; NULL is allowed.
 */
void uct_config_release(void *config);
/**
 * Reads one value of a configuration as text.
 * @ingroup UCT_CONFIG
 * @param [in]  config the configuration.
 * @param [in]  name   variable name without the prefixes (e.g. "SNDBUF").
 * @param [out] value  buffer for the value, NUL-terminated, truncated to
 *                     fit.
 * @param [in]  max    size of @a value in bytes.
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for a NULL argument;
 *         UCS_ERR_NO_ELEM for an unknown name.
 */
ucs_status_t uct_config_get(void *config, const char *name, char *value,
                            size_t max);
/**
 * Sets one value of a configuration, parsed as the environment variable
 * would be. Change a configuration before the object is opened with it.
 * @ingroup UCT_CONFIG
 * @param [in,out] config the configuration.
 * @param [in]     name   variable name without the prefixes.
 * @param [in]     value  the new value as text.
 * @return UCS_OK; UCS_ERR_NO_ELEM for an unknown name;
 *         UCS_ERR_INVALID_PARAM for a NULL argument or a bad value (the
 *         old value is kept).
 */
ucs_status_t uct_config_modify(void *config, const char *name,
                               const char *value);
/**
 * Prints a configuration (flags: UCS_CONFIG_PRINT_*).
 * @ingroup UCT_CONFIG
 * @param [in] config      the configuration (not NULL).
 * @param [in] stream      where to print.
 * @param [in] title       heading of the output.
 * @param [in] print_flags mask of ucs_config_print_flags_t.
 */
void uct_config_print(const void *config, FILE *stream, const char *title,
                      unsigned print_flags);

/**
 * Creates a worker: the progress queue its interfaces run from.
 * @ingroup UCT_CONTEXT
 * @param [in]  async       asynchronous context for the transports' event
 *                          handlers and timers, or NULL (transports that
 *                          need one then make their own). It must outlive
 *                          the worker.
 * @param [in]  thread_mode UCS_THREAD_MODE_SINGLE (one thread uses the
 *                          worker) or UCS_THREAD_MODE_SERIALIZED (any
 *                          thread, never two at once).
 * @param [out] worker_p    set to the worker; destroy it with
 *                          uct_worker_destroy().
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for a NULL worker_p or an invalid
 *         mode; UCS_ERR_UNSUPPORTED for UCS_THREAD_MODE_MULTI (use one
 *         worker per thread); UCS_ERR_NO_MEMORY.
 */
ucs_status_t uct_worker_create(ucs_async_context_t *async,
                               ucs_thread_mode_t thread_mode,
                               uct_worker_h *worker_p);
/**
 * Destroys a worker. Close its interfaces first (a warning is logged
 * otherwise).
 * @ingroup UCT_CONTEXT
 * @param [in] worker the worker; NULL is allowed.
 */
void uct_worker_destroy(uct_worker_h worker);
/**
 * Adds a callback to the worker's progress, unless *id_p shows one is
 * registered already. Safe from any thread and from inside a progress
 * callback: the change may take effect at the next progress.
 * @ingroup UCT_CONTEXT
 * @param [in]     worker the worker.
 * @param [in]     func   called by each uct_worker_progress(); returns the
 *                        number of events it handled.
 * @param [in]     arg    passed to @a func.
 * @param [in]     flags  UCS_CALLBACKQ_FLAG_* (e.g. FAST, ONESHOT).
 * @param [in,out] id_p   must hold UCS_CALLBACKQ_ID_NULL to register; set
 *                        to the id to pass to
 *                        uct_worker_progress_unregister_safe(). A NULL
 *                        argument is logged and nothing is registered.
 */
void uct_worker_progress_register_safe(uct_worker_h worker, ucs_callback_t func,
                                       void *arg, unsigned flags,
                                       uct_worker_cb_id_t *id_p);
/**
 * Removes a callback of uct_worker_progress_register_safe() and sets *id_p
 * to UCS_CALLBACKQ_ID_NULL; nothing happens if it already holds that.
 * Safe from any thread and from inside a progress callback.
 * @ingroup UCT_CONTEXT
 * @param [in]     worker the worker.
 * @param [in,out] id_p   the id of the callback.
 */
void uct_worker_progress_unregister_safe(uct_worker_h worker,
                                         uct_worker_cb_id_t *id_p);

/**
 * Opens an interface: one transport on one device, driven by @a worker.
 * Active messages that arrive before a handler is set are dropped with a
 * warning, so set handlers before giving the address to peers.
 * @ingroup UCT_IFACE
 * @param [in]  md      memory domain that listed the resource.
 * @param [in]  worker  the worker whose progress drives the interface.
 * @param [in]  params  must set UCT_IFACE_PARAM_FIELD_OPEN_MODE with
 *                      UCT_IFACE_OPEN_MODE_DEVICE and the transport and
 *                      device names; read during the call only.
 * @param [in]  config  configuration of uct_md_iface_config_read() for
 *                      this transport, or NULL to read it from the
 *                      environment; it may be released when the call
 *                      returns.
 * @param [out] iface_p set to the interface; close it with
 *                      uct_iface_close().
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for a NULL argument, a missing
 *         open mode or name, a bad alignment or allocation method;
 *         UCS_ERR_NO_DEVICE if the transport or the device does not
 *         exist; UCS_ERR_NO_MEMORY; UCS_ERR_IO_ERROR or another error
 *         of the transport when the device cannot be set up.
 */
ucs_status_t uct_iface_open(uct_md_h md, uct_worker_h worker,
                            const uct_iface_params_t *params,
                            const uct_iface_config_t *config,
                            uct_iface_h *iface_p);
/**
 * Closes an interface. Destroy its endpoints, free its memory of
 * uct_iface_mem_alloc() and release the descriptors kept by its active
 * message handlers first; endpoints left open are freed with it.
 * @ingroup UCT_IFACE
 * @param [in] iface the interface; NULL is allowed.
 */
void uct_iface_close(uct_iface_h iface);
/**
 * Reads the capabilities and limits of an interface.
 * @ingroup UCT_IFACE
 * @param [in]  iface      the interface.
 * @param [out] iface_attr filled whole.
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for a NULL argument.
 */
ucs_status_t uct_iface_query(uct_iface_h iface, uct_iface_attr_t *iface_attr);
/**
 * Writes the device address of an interface: what peers pass as
 * uct_ep_params_t::dev_addr and to uct_iface_is_reachable().
 * @ingroup UCT_IFACE
 * @param [in]  iface the interface.
 * @param [out] addr  buffer of uct_iface_attr_t::device_addr_len bytes.
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for a NULL argument;
 *         UCS_ERR_UNSUPPORTED if the transport has no device address.
 */
ucs_status_t uct_iface_get_device_address(uct_iface_h iface,
                                          uct_device_addr_t *addr);
/**
 * Writes the address of an interface: what peers pass as
 * uct_ep_params_t::iface_addr to connect to it.
 * @ingroup UCT_IFACE
 * @param [in]  iface the interface.
 * @param [out] addr  buffer of uct_iface_attr_t::iface_addr_len bytes.
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for a NULL argument;
 *         UCS_ERR_UNSUPPORTED if the interface cannot be connected to
 *         (UCT_IFACE_FLAG_CONNECT_TO_IFACE missing).
 */
ucs_status_t uct_iface_get_address(uct_iface_h iface, uct_iface_addr_t *addr);
/**
 * Tells whether an interface can reach a remote one.
 * @ingroup UCT_IFACE
 * @param [in] iface      the local interface.
 * @param [in] dev_addr   the remote device address.
 * @param [in] iface_addr the remote interface address, or NULL for an
 *                        endpoint-to-endpoint transport.
 * @return nonzero if reachable; 0 if not, or for a NULL @a iface.
 */
int uct_iface_is_reachable(const uct_iface_h iface,
                           const uct_device_addr_t *dev_addr,
                           const uct_iface_addr_t *iface_addr);
/**
 * Checks that the peer of an endpoint is alive; a failure is reported
 * later through the interface's error handler.
 * @ingroup UCT_EP
 * @param [in] ep    the endpoint.
 * @param [in] flags reserved, pass 0.
 * @param [in] comp  reserved, pass NULL.
 * @return UCS_OK when the check was started or not needed;
 *         UCS_ERR_INVALID_PARAM for a NULL endpoint; UCS_ERR_UNSUPPORTED
 *         without UCT_IFACE_FLAG_EP_CHECK. An endpoint that failed
 *         already gives UCS_OK: its error handler was or will be called.
 */
ucs_status_t uct_ep_check(const uct_ep_h ep, unsigned flags,
                          uct_completion_t *comp);
/**
 * Gets the file descriptor that becomes readable when an armed event
 * occurs (UCT_IFACE_FLAG_EVENT_FD). The interface owns it: do not close
 * it or read from it; poll it, then call progress.
 * @ingroup UCT_IFACE
 * @param [in]  iface the interface.
 * @param [out] fd_p  set to the descriptor.
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for a NULL argument;
 *         UCS_ERR_UNSUPPORTED without event support.
 */
ucs_status_t uct_iface_event_fd_get(uct_iface_h iface, int *fd_p);
/**
 * Arms an interface so that its event descriptor signals the next event
 * of the kinds given. Call it after progress found nothing to do, then
 * wait on the descriptor.
 * @ingroup UCT_IFACE
 * @param [in] iface  the interface.
 * @param [in] events mask of uct_iface_event_types.
 * @return UCS_OK when armed; UCS_ERR_BUSY if events are already waiting
 *         (call progress and arm again, do not sleep);
 *         UCS_ERR_INVALID_PARAM for a NULL interface; UCS_ERR_UNSUPPORTED
 *         without event support; UCS_ERR_IO_ERROR.
 */
ucs_status_t uct_iface_event_arm(uct_iface_h iface, unsigned events);
/**
 * Allocates memory for zero-copy use with an interface: with the
 * interface's allocation methods (UCX_*_ALLOC), registered on its memory
 * domain when that registers memory.
 * @ingroup UCT_IFACE
 * @param [in]  iface  the interface.
 * @param [in]  length bytes to allocate (not 0).
 * @param [in]  flags  UCT_MD_MEM_FLAG_* (access flags are added).
 * @param [in]  name   name for log messages.
 * @param [out] mem    the memory; free it with uct_iface_mem_free()
 *                     before closing the interface.
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for a NULL argument or a zero
 *         length; UCS_ERR_NO_MEMORY if every method failed; the error of
 *         the registration.
 */
ucs_status_t uct_iface_mem_alloc(uct_iface_h iface, size_t length,
                                 unsigned flags, const char *name,
                                 uct_allocated_memory_t *mem);
/**
 * Deregisters and frees memory of uct_iface_mem_alloc().
 * @ingroup UCT_IFACE
 * @param [in] mem the memory; NULL is allowed.
 */
void uct_iface_mem_free(const uct_allocated_memory_t *mem);
/**
 * Sets the handler of one active message id on an interface. Set it
 * before peers send; do not change it while progress runs on another
 * thread.
 * @ingroup UCT_AM
 * @param [in] iface the interface.
 * @param [in] id    message id, below UCT_AM_ID_MAX.
 * @param [in] cb    the handler, or NULL to remove it (messages are then
 *                   dropped with a warning). It runs from progress with
 *                   @a arg, the data, its length and UCT_CB_PARAM_FLAG_*;
 *                   see uct_am_callback_t for keeping the data.
 * @param [in] arg   passed to @a cb.
 * @param [in] flags UCT_CB_FLAG_SYNC, or UCT_CB_FLAG_ASYNC when the
 *                   handler may run on any thread.
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for a NULL interface or an id out
 *         of range; UCS_ERR_UNSUPPORTED when the interface cannot call
 *         the handler in that mode (UCT_IFACE_FLAG_CB_SYNC missing for a
 *         synchronous one).
 */
ucs_status_t uct_iface_set_am_handler(uct_iface_h iface, uint8_t id,
                                      uct_am_callback_t cb, void *arg,
                                      uint32_t flags);
/**
 * Sets a tracer that describes active messages sent and received, for
 * the trace log.
 * @ingroup UCT_AM
 * @param [in] iface  the interface.
 * @param [in] tracer the tracer, or NULL to remove it.
 * @param [in] arg    passed to @a tracer.
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for a NULL interface.
 */
ucs_status_t uct_iface_set_am_tracer(uct_iface_h iface, uct_am_tracer_t tracer,
                                     void *arg);

/**
 * Creates an endpoint. With uct_ep_params_t::dev_addr and iface_addr it
 * connects to that remote interface (UCT_IFACE_FLAG_CONNECT_TO_IFACE) and
 * may be used at once; without them it waits for uct_ep_connect_to_ep()
 * (UCT_IFACE_FLAG_CONNECT_TO_EP). Sends before the connection is up are
 * queued or refused with UCS_ERR_NO_RESOURCE by the transport.
 *
 * With UCT_EP_PARAM_FIELD_CM instead of an interface it creates an
 * endpoint of a connection manager: a client one (sockaddr, with
 * sockaddr_cb_client) that connects to a listener, or a server one
 * (conn_request from the listener's callback, with sockaddr_cb_server)
 * that accepts; both need disconnect_cb, and their private data comes
 * from sockaddr_pack_cb or private_data. Such an endpoint carries only
 * the handshake; the data goes over transport endpoints connected with
 * what the private data carried.
 * @ingroup UCT_EP
 * @param [in]  params must name the interface (UCT_EP_PARAM_FIELD_IFACE)
 *                     or the connection manager (UCT_EP_PARAM_FIELD_CM);
 *                     read during the call only.
 * @param [out] ep_p   set to the endpoint; destroy it with
 *                     uct_ep_destroy().
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for a NULL argument, a missing
 *         interface or an incomplete address; UCS_ERR_UNSUPPORTED if the
 *         transport cannot connect that way; UCS_ERR_INVALID_ADDR for an
 *         address the transport does not understand; UCS_ERR_NO_MEMORY.
 *         A connection that fails later is reported through the error
 *         handler (e.g. UCS_ERR_UNREACHABLE).
 */
ucs_status_t uct_ep_create(const uct_ep_params_t *params, uct_ep_h *ep_p);
/**
 * Destroys an endpoint. Queued pending requests are dropped without their
 * callback (purge them first with uct_ep_pending_purge() to get them
 * back). What becomes of operations still outstanding depends on the
 * transport: tcp completes them with UCS_ERR_CANCELED from inside this
 * call, rc_verbs never calls their completions. So flush the endpoint
 * and wait for the flush first when completions or zcopy buffers
 * matter.
 * @ingroup UCT_EP
 * @param [in] ep the endpoint; NULL is allowed.
 */
void uct_ep_destroy(uct_ep_h ep);
/**
 * Writes the address of an endpoint, for the peer's
 * uct_ep_connect_to_ep().
 * @ingroup UCT_EP
 * @param [in]  ep   the endpoint.
 * @param [out] addr buffer of uct_iface_attr_t::ep_addr_len bytes.
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for a NULL argument;
 *         UCS_ERR_UNSUPPORTED without UCT_IFACE_FLAG_CONNECT_TO_EP.
 */
ucs_status_t uct_ep_get_address(uct_ep_h ep, uct_ep_addr_t *addr);
/**
 * Connects an endpoint to a remote endpoint whose address came from the
 * peer's uct_ep_get_address(); both sides do the same.
 * @ingroup UCT_EP
 * @param [in] ep       the local endpoint, created without addresses.
 * @param [in] dev_addr the peer's device address.
 * @param [in] ep_addr  the peer's endpoint address.
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for a NULL argument or an endpoint
 *         connected already; UCS_ERR_UNSUPPORTED without
 *         UCT_IFACE_FLAG_CONNECT_TO_EP; UCS_ERR_INVALID_ADDR for an
 *         address the transport does not understand; UCS_ERR_NO_MEMORY.
 *         A connection that fails later is reported through the error
 *         handler.
 */
ucs_status_t uct_ep_connect_to_ep(uct_ep_h ep,
                                  const uct_device_addr_t *dev_addr,
                                  const uct_ep_addr_t *ep_addr);

/**
 * Gives advice on how part of registered memory will be used.
 * @ingroup UCT_MD
 * @param [in] md     the memory domain.
 * @param [in] memh   handle of a registration of @a md.
 * @param [in] addr   start of the range, inside the registration.
 * @param [in] length length of the range (not 0).
 * @param [in] advice the advice.
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for a NULL md or handle or a zero
 *         length; UCS_ERR_UNSUPPORTED without UCT_MD_FLAG_ADVISE.
 */
ucs_status_t uct_md_mem_advise(uct_md_h md, uct_mem_h memh, void *addr,
                               size_t length, uct_mem_advice_t advice);
/**
 * Registers memory with a memory domain, so zero-copy operations can use
 * it and uct_md_mkey_pack() can give peers access to it. The memory must
 * stay mapped until uct_md_mem_dereg().
 * @ingroup UCT_MD
 * @param [in]  md      the memory domain.
 * @param [in]  address start of the memory (not NULL).
 * @param [in]  length  length in bytes (not 0).
 * @param [in]  flags   UCT_MD_MEM_ACCESS_* and UCT_MD_MEM_FLAG_*.
 * @param [out] memh_p  set to the memory handle.
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for a NULL argument or an empty
 *         region; UCS_ERR_UNSUPPORTED without UCT_MD_FLAG_REG;
 *         UCS_ERR_NO_MEMORY; UCS_ERR_IO_ERROR when the device refuses the
 *         registration.
 */
ucs_status_t uct_md_mem_reg(uct_md_h md, void *address, size_t length,
                            unsigned flags, uct_mem_h *memh_p);
/**
 * Deregisters memory. Operations that use it must have completed, and
 * remote keys packed from it stop working.
 * @ingroup UCT_MD
 * @param [in] md   the memory domain that registered it.
 * @param [in] memh the handle of uct_md_mem_reg().
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for a NULL md or handle;
 *         UCS_ERR_UNSUPPORTED without registration support.
 */
ucs_status_t uct_md_mem_dereg(uct_md_h md, uct_mem_h memh);
/**
 * Tells what a memory domain knows about a range of memory.
 * @ingroup UCT_MD
 * @param [in]     md       the memory domain.
 * @param [in]     address  start of the range.
 * @param [in]     length   length of the range.
 * @param [in,out] mem_attr field_mask in, selected fields out.
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for a NULL md or attributes;
 *         UCS_ERR_UNSUPPORTED if the domain cannot tell.
 */
ucs_status_t uct_md_mem_query(uct_md_h md, const void *address, size_t length,
                              uct_md_mem_attr_t *mem_attr);
/**
 * Tells the kind of memory a range is.
 * @ingroup UCT_MD
 * @param [in]  md         the memory domain.
 * @param [in]  addr       start of the range.
 * @param [in]  length     length of the range.
 * @param [out] mem_type_p set to the memory type.
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for a NULL md or output;
 *         UCS_ERR_UNSUPPORTED if the domain cannot tell.
 */
ucs_status_t uct_md_detect_memory_type(uct_md_h md, const void *addr,
                                       size_t length,
                                       ucs_memory_type_t *mem_type_p);
/**
 * Allocates memory with the first of @a methods that succeeds. With
 * UCT_ALLOC_METHOD_MD the memory is also registered with the memory domain
 * that allocated it; with the other methods it is not registered.
 * @ingroup UCT_MD
 * @param [in]  length      bytes to allocate (not 0); may be rounded up.
 * @param [in]  methods     the methods to try, in order.
 * @param [in]  num_methods entries in @a methods (not 0).
 * @param [in]  params      flags, address, memory type, memory domains and
 *                          name; read during the call only.
 * @param [out] mem         the memory; free it with uct_mem_free().
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for a NULL argument, no methods, a
 *         zero length, an unknown method or UCT_MD_MEM_FLAG_FIXED without
 *         a page-aligned address; UCS_ERR_UNSUPPORTED for a memory type
 *         other than host; UCS_ERR_NO_MEMORY if every method failed
 *         (logged unless UCT_MD_MEM_FLAG_HIDE_ERRORS).
 */
ucs_status_t uct_mem_alloc(size_t length, const uct_alloc_method_t *methods,
                           unsigned num_methods,
                           const uct_mem_alloc_params_t *params,
                           uct_allocated_memory_t *mem);
/**
 * Frees memory of uct_mem_alloc().
 * @ingroup UCT_MD
 * @param [in] mem the memory.
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for NULL, an unknown method or a
 *         failed unmap; the error of the memory domain for
 *         UCT_ALLOC_METHOD_MD.
 */
ucs_status_t uct_mem_free(const uct_allocated_memory_t *mem);
/**
 * Packs the remote key of registered memory, to send to peers who unpack
 * it with uct_rkey_unpack(). The key stays usable while the memory is
 * registered; the buffer is plain bytes the caller owns.
 * @ingroup UCT_MD
 * @param [in]  md          the memory domain that registered the memory.
 * @param [in]  memh        the memory handle.
 * @param [out] rkey_buffer buffer of uct_md_attr_t::rkey_packed_size
 *                          bytes.
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for a NULL md, buffer or handle;
 *         UCS_ERR_UNSUPPORTED if the domain has no remote keys.
 */
ucs_status_t uct_md_mkey_pack(uct_md_h md, uct_mem_h memh, void *rkey_buffer);
/**
 * Unpacks a remote key received from a peer. The buffer may be freed
 * when the call returns.
 * @ingroup UCT_MD
 * @param [in]  component   the component of the memory domain that
 *                          packed the key (same name on both sides).
 * @param [in]  rkey_buffer the packed key; may be NULL only when the
 *                          component's keys are empty (its memory domains
 *                          report uct_md_attr_t::rkey_packed_size 0).
 * @param [out] rkey_ob     set to the unpacked key; release it with
 *                          uct_rkey_release() after the operations that
 *                          use it have completed.
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for a NULL component or bundle, a
 *         NULL buffer where keys carry bytes, or a buffer that holds no
 *         valid key.
 */
ucs_status_t uct_rkey_unpack(uct_component_h component, const void *rkey_buffer,
                             uct_rkey_bundle_t *rkey_ob);
/**
 * Gives a local pointer to remote memory, for components with
 * UCT_COMPONENT_FLAG_RKEY_PTR (memory shared between processes).
 * @ingroup UCT_MD
 * @param [in]  component   the component that unpacked the key.
 * @param [in]  rkey_ob     the unpacked key.
 * @param [in]  remote_addr a remote address inside the registration.
 * @param [out] addr_p      set to the matching local address, valid
 *                          until the key is released.
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for a NULL argument;
 *         UCS_ERR_UNSUPPORTED if the component cannot map keys.
 */
ucs_status_t uct_rkey_ptr(uct_component_h component, uct_rkey_bundle_t *rkey_ob,
                          uint64_t remote_addr, void **addr_p);
/**
 * Releases a remote key of uct_rkey_unpack().
 * @ingroup UCT_MD
 * @param [in] component the component that unpacked it.
 * @param [in] rkey_ob   the key.
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for a NULL argument.
 */
ucs_status_t uct_rkey_release(uct_component_h component,
                              const uct_rkey_bundle_t *rkey_ob);

/* ------------------------------------------------------------------------
 * Fast path: inline dispatch through the operations table
 */

/**
 * Runs the worker's progress callbacks; returns how many events ran.
 * This is where receives are handled, active message handlers, completion
 * callbacks and pending requests run. Call it from the worker's thread
 * (see uct_worker_create()), never from inside one of the callbacks it
 * runs.
 * @ingroup UCT_CONTEXT
 * @param [in] worker the worker.
 * @return the number of events handled (0 when there was nothing to do).
 */
UCT_INLINE_API unsigned uct_worker_progress(uct_worker_h worker)
{
    return ucs_callbackq_dispatch(&worker->progress_q);
}

/**
 * Waits, without blocking, for the operations posted on all endpoints of
 * an interface. With UCT_FLUSH_FLAG_LOCAL the send buffers may be reused;
 * with UCT_FLUSH_FLAG_REMOTE the remote side has also performed them.
 * @ingroup UCT_FLUSH
 * @param [in] iface the interface.
 * @param [in] flags UCT_FLUSH_FLAG_LOCAL or UCT_FLUSH_FLAG_REMOTE.
 * @param [in] comp  completion updated when the flush finishes after
 *                   UCS_INPROGRESS, or NULL to poll (call again after
 *                   progress until it returns UCS_OK).
 * @return UCS_OK when nothing is outstanding; UCS_INPROGRESS;
 *         UCS_ERR_NO_RESOURCE to retry later; UCS_ERR_UNSUPPORTED (e.g.
 *         UCT_FLUSH_FLAG_CANCEL on tcp); UCS_ERR_NO_MEMORY.
 */
UCT_INLINE_API ucs_status_t uct_iface_flush(uct_iface_h iface, unsigned flags,
                                            uct_completion_t *comp)
{
    return iface->ops.iface_flush(iface, flags, comp);
}

/**
 * Orders the operations of all endpoints of an interface: those posted
 * after the fence are performed after those posted before it.
 * @ingroup UCT_FLUSH
 * @param [in] iface the interface.
 * @param [in] flags reserved, pass 0.
 * @return UCS_OK; UCS_ERR_UNSUPPORTED.
 */
UCT_INLINE_API ucs_status_t uct_iface_fence(uct_iface_h iface, unsigned flags)
{
    return iface->ops.iface_fence(iface, flags);
}

/**
 * Releases a descriptor kept by an active message handler. @a desc is the
 * start of the user's headroom: the handler's @a data minus the
 * interface's rx_headroom (just @a data when rx_headroom is 0).
 *
 * A handler may keep the data only when its flags carry
 * UCT_CB_PARAM_FLAG_DESC and it returns UCS_INPROGRESS; the user then
 * owns the descriptor and must release it exactly once, from the
 * worker's thread, before the interface is closed.
 * @ingroup UCT_AM
 * @param [in] desc the descriptor.
 */
UCT_INLINE_API void uct_iface_release_desc(void *desc)
{
    uct_recv_desc_t *release_desc = uct_recv_desc(desc);
    release_desc->cb(release_desc, desc);
}

/**
 * Writes a small buffer to remote memory. The buffer is copied: it may be
 * reused when the call returns.
 * @ingroup UCT_RMA
 * @param [in] ep          the endpoint.
 * @param [in] buffer      the data.
 * @param [in] length      its length, up to cap.put.max_short.
 * @param [in] remote_addr remote address inside the peer's registration.
 * @param [in] rkey        remote key of that registration.
 * @return UCS_OK when the data was taken (it is performed remotely after a
 *         remote flush); UCS_ERR_NO_RESOURCE to retry later (or queue a
 *         pending request); UCS_ERR_INVALID_PARAM for a length over the
 *         limit; UCS_ERR_UNSUPPORTED; the endpoint's failure status
 *         (e.g. UCS_ERR_CONNECTION_RESET, UCS_ERR_ENDPOINT_TIMEOUT).
 */
UCT_INLINE_API ucs_status_t uct_ep_put_short(uct_ep_h ep, const void *buffer,
                                             unsigned length,
                                             uint64_t remote_addr,
                                             uct_rkey_t rkey)
{
    return ep->iface->ops.ep_put_short(ep, buffer, length, remote_addr, rkey);
}

/**
 * Writes to remote memory what @a pack_cb packs. The callback runs inside
 * this call, on this thread, and writes at most cap.put.max_bcopy bytes
 * into the transport's buffer.
 * @ingroup UCT_RMA
 * @param [in] ep          the endpoint.
 * @param [in] pack_cb     packs the data; returns the length packed.
 * @param [in] arg         passed to @a pack_cb.
 * @param [in] remote_addr remote address inside the peer's registration.
 * @param [in] rkey        remote key of that registration.
 * @return the number of bytes packed (>= 0) when taken, or a negative
 *         ucs_status_t: UCS_ERR_NO_RESOURCE (pack_cb was not called),
 *         UCS_ERR_UNSUPPORTED or the endpoint's failure status.
 */
UCT_INLINE_API ssize_t uct_ep_put_bcopy(uct_ep_h ep,
                                        uct_pack_callback_t pack_cb, void *arg,
                                        uint64_t remote_addr, uct_rkey_t rkey)
{
    return ep->iface->ops.ep_put_bcopy(ep, pack_cb, arg, remote_addr, rkey);
}

/**
 * Writes local memory described by an iov to remote memory, without an
 * intermediate copy where the transport can.
 * @ingroup UCT_RMA
 * @param [in] ep          the endpoint.
 * @param [in] iov         the local data; entries carry the memory handle
 *                         of their registration when the memory domain
 *                         needs one (UCT_MD_FLAG_NEED_MEMH).
 * @param [in] iovcnt      entries in @a iov, up to cap.put.max_iov.
 * @param [in] remote_addr remote address inside the peer's registration.
 * @param [in] rkey        remote key of that registration.
 * @param [in] comp        completion updated when the operation finishes
 *                         after UCS_INPROGRESS, or NULL (then only a flush
 *                         tells).
 * @return UCS_OK when completed locally: the buffers may be reused;
 *         UCS_INPROGRESS: the buffers (not the iov array itself) must stay
 *         untouched until @a comp is updated; UCS_ERR_NO_RESOURCE to
 *         retry later; UCS_ERR_INVALID_PARAM for a length or count over
 *         the limits; UCS_ERR_UNSUPPORTED; the endpoint's failure status.
 */
UCT_INLINE_API ucs_status_t uct_ep_put_zcopy(uct_ep_h ep, const uct_iov_t *iov,
                                             size_t iovcnt,
                                             uint64_t remote_addr,
                                             uct_rkey_t rkey,
                                             uct_completion_t *comp)
{
    return ep->iface->ops.ep_put_zcopy(ep, iov, iovcnt, remote_addr, rkey,
                                       comp);
}

/**
 * Reads a small piece of remote memory into @a buffer, which holds the
 * data when the call returns UCS_OK.
 * @ingroup UCT_RMA
 * @param [in] ep          the endpoint.
 * @param [out] buffer     where the data goes.
 * @param [in] length      its length, up to cap.get.max_short.
 * @param [in] remote_addr remote address inside the peer's registration.
 * @param [in] rkey        remote key of that registration.
 * @return UCS_OK; UCS_ERR_NO_RESOURCE to retry later;
 *         UCS_ERR_INVALID_PARAM for a length over the limit;
 *         UCS_ERR_UNSUPPORTED; the endpoint's failure status.
 */
UCT_INLINE_API ucs_status_t uct_ep_get_short(uct_ep_h ep, void *buffer,
                                             unsigned length,
                                             uint64_t remote_addr,
                                             uct_rkey_t rkey)
{
    return ep->iface->ops.ep_get_short(ep, buffer, length, remote_addr, rkey);
}

/**
 * Reads remote memory and passes it to @a unpack_cb, which runs on the
 * worker's thread, inside this call or from progress, before @a comp is
 * updated.
 * @ingroup UCT_RMA
 * @param [in] ep          the endpoint.
 * @param [in] unpack_cb   consumes the data.
 * @param [in] arg         passed to @a unpack_cb; must stay valid until
 *                         the operation completes.
 * @param [in] length      bytes to read, up to cap.get.max_bcopy.
 * @param [in] remote_addr remote address inside the peer's registration.
 * @param [in] rkey        remote key of that registration.
 * @param [in] comp        completion updated after UCS_INPROGRESS.
 * @return UCS_OK when the data was unpacked already; UCS_INPROGRESS;
 *         UCS_ERR_NO_RESOURCE to retry later; UCS_ERR_INVALID_PARAM for a
 *         length over the limit; UCS_ERR_UNSUPPORTED; UCS_ERR_NO_MEMORY;
 *         the endpoint's failure status. A read of memory the peer did
 *         not expose completes with UCS_ERR_INVALID_ADDR in @a comp.
 */
UCT_INLINE_API ucs_status_t uct_ep_get_bcopy(
    uct_ep_h ep, uct_unpack_callback_t unpack_cb, void *arg, size_t length,
    uint64_t remote_addr, uct_rkey_t rkey, uct_completion_t *comp)
{
    return ep->iface->ops.ep_get_bcopy(ep, unpack_cb, arg, length, remote_addr,
                                       rkey, comp);
}

/**
 * Reads remote memory into local memory described by an iov.
 * @ingroup UCT_RMA
 * @param [in] ep          the endpoint.
 * @param [in] iov         where the data goes (registered memory when the
 *                         memory domain needs it).
 * @param [in] iovcnt      entries in @a iov, up to cap.get.max_iov.
 * @param [in] remote_addr remote address inside the peer's registration.
 * @param [in] rkey        remote key of that registration.
 * @param [in] comp        completion updated after UCS_INPROGRESS.
 * @return UCS_OK when the data is in place already; UCS_INPROGRESS: the
 *         buffers must not be read or freed until @a comp is updated;
 *         UCS_ERR_NO_RESOURCE to retry later; UCS_ERR_INVALID_PARAM for a
 *         length or count over the limits; UCS_ERR_UNSUPPORTED;
 *         UCS_ERR_NO_MEMORY; the endpoint's failure status.
 */
UCT_INLINE_API ucs_status_t uct_ep_get_zcopy(uct_ep_h ep, const uct_iov_t *iov,
                                             size_t iovcnt,
                                             uint64_t remote_addr,
                                             uct_rkey_t rkey,
                                             uct_completion_t *comp)
{
    return ep->iface->ops.ep_get_zcopy(ep, iov, iovcnt, remote_addr, rkey,
                                       comp);
}

/**
 * Sends a small active message: an 8-byte header and a payload, copied by
 * the call. The receiver's handler gets header and payload as one buffer.
 * @ingroup UCT_AM
 * @param [in] ep      the endpoint.
 * @param [in] id      message id, below UCT_AM_ID_MAX.
 * @param [in] header  8 bytes sent first.
 * @param [in] payload the payload; may be NULL when @a length is 0.
 * @param [in] length  payload length; header + payload up to
 *                     cap.am.max_short.
 * @return UCS_OK when sent (the payload may be reused);
 *         UCS_ERR_NO_RESOURCE to retry later (or queue a pending
 *         request); UCS_ERR_INVALID_PARAM for an id or length out of
 *         range; UCS_ERR_UNSUPPORTED; the endpoint's failure status (e.g.
 *         UCS_ERR_CONNECTION_RESET, UCS_ERR_ENDPOINT_TIMEOUT).
 */
UCT_INLINE_API ucs_status_t uct_ep_am_short(uct_ep_h ep, uint8_t id,
                                            uint64_t header,
                                            const void *payload,
                                            unsigned length)
{
    return ep->iface->ops.ep_am_short(ep, id, header, payload, length);
}

/**
 * Sends a small active message gathered from an iov, copied by the call.
 * @ingroup UCT_AM
 * @param [in] ep     the endpoint.
 * @param [in] id     message id, below UCT_AM_ID_MAX.
 * @param [in] iov    the pieces of the message (no memory handle needed).
 * @param [in] iovcnt entries in @a iov, up to cap.am.max_iov; the total
 *                    length up to cap.am.max_short.
 * @return as uct_ep_am_short(); the buffers may be reused on return.
 */
UCT_INLINE_API ucs_status_t uct_ep_am_short_iov(uct_ep_h ep, uint8_t id,
                                                const uct_iov_t *iov,
                                                size_t iovcnt)
{
    return ep->iface->ops.ep_am_short_iov(ep, id, iov, iovcnt);
}

/**
 * Sends an active message whose data @a pack_cb writes into a transport
 * buffer. The callback runs inside this call, on this thread, and writes
 * at most cap.am.max_bcopy bytes.
 * @ingroup UCT_AM
 * @param [in] ep      the endpoint.
 * @param [in] id      message id, below UCT_AM_ID_MAX.
 * @param [in] pack_cb packs the message; returns the length packed.
 * @param [in] arg     passed to @a pack_cb.
 * @param [in] flags   UCT_SEND_FLAG_*.
 * @return the length packed (>= 0) when the message was taken, or a
 *         negative ucs_status_t: UCS_ERR_NO_RESOURCE (pack_cb was not
 *         called), UCS_ERR_INVALID_PARAM for an id out of range or a
 *         packed length over the limit, UCS_ERR_UNSUPPORTED or the
 *         endpoint's failure status.
 */
UCT_INLINE_API ssize_t uct_ep_am_bcopy(uct_ep_h ep, uint8_t id,
                                       uct_pack_callback_t pack_cb, void *arg,
                                       unsigned flags)
{
    return ep->iface->ops.ep_am_bcopy(ep, id, pack_cb, arg, flags);
}

/**
 * Sends an active message of a header and data read from the user's
 * memory, without an intermediate copy where the transport can. The
 * receiver's handler gets header and data as one buffer.
 * @ingroup UCT_AM
 * @param [in] ep            the endpoint.
 * @param [in] id            message id, below UCT_AM_ID_MAX.
 * @param [in] header        user header, copied by the call: it may be
 *                           reused when the call returns.
 * @param [in] header_length its length, up to cap.am.max_hdr.
 * @param [in] iov           the data; entries carry the memory handle of
 *                           their registration when the memory domain
 *                           needs one.
 * @param [in] iovcnt        entries in @a iov, up to cap.am.max_iov.
 * @param [in] flags         UCT_SEND_FLAG_*.
 * @param [in] comp          completion updated when the send finishes
 *                           after UCS_INPROGRESS, or NULL.
 * @return UCS_OK when the data was sent or copied: the buffers may be
 *         reused; UCS_INPROGRESS: the buffers (not the iov array) must
 *         stay untouched until @a comp is updated; UCS_ERR_NO_RESOURCE to
 *         retry later; UCS_ERR_INVALID_PARAM for an id, length or count
 *         out of range; UCS_ERR_UNSUPPORTED; UCS_ERR_NO_MEMORY; the
 *         endpoint's failure status.
 */
UCT_INLINE_API ucs_status_t uct_ep_am_zcopy(
    uct_ep_h ep, uint8_t id, const void *header, unsigned header_length,
    const uct_iov_t *iov, size_t iovcnt, unsigned flags, uct_completion_t *comp)
{
    return ep->iface->ops.ep_am_zcopy(ep, id, header, header_length, iov,
                                      iovcnt, flags, comp);
}

/**
 * Compares a remote 64-bit word with @a compare and, if equal, replaces
 * it with @a swap; returns the old value in @a result.
 * @ingroup UCT_AMO
 * @param [in]  ep          the endpoint.
 * @param [in]  compare     expected value.
 * @param [in]  swap        new value.
 * @param [in]  remote_addr remote address, 8-byte aligned, inside the
 *                          peer's registration.
 * @param [in]  rkey        remote key of that registration.
 * @param [out] result      set to the old value; must stay valid until
 *                          the operation completes.
 * @param [in]  comp        completion updated after UCS_INPROGRESS.
 * @return UCS_OK when @a result holds the value already; UCS_INPROGRESS;
 *         UCS_ERR_NO_RESOURCE to retry later; UCS_ERR_UNSUPPORTED; the
 *         endpoint's failure status.
 */
UCT_INLINE_API ucs_status_t uct_ep_atomic_cswap64(
    uct_ep_h ep, uint64_t compare, uint64_t swap, uint64_t remote_addr,
    uct_rkey_t rkey, uint64_t *result, uct_completion_t *comp)
{
    return ep->iface->ops.ep_atomic_cswap64(ep, compare, swap, remote_addr,
                                            rkey, result, comp);
}

/**
 * The 32-bit form of uct_ep_atomic_cswap64().
 * @ingroup UCT_AMO
 * @param [in]  ep          the endpoint.
 * @param [in]  compare     expected value.
 * @param [in]  swap        new value.
 * @param [in]  remote_addr remote address, 4-byte aligned.
 * @param [in]  rkey        remote key.
 * @param [out] result      set to the old value; must stay valid until
 *                          the operation completes.
 * @param [in]  comp        completion updated after UCS_INPROGRESS.
 * @return as uct_ep_atomic_cswap64().
 */
UCT_INLINE_API ucs_status_t uct_ep_atomic_cswap32(
    uct_ep_h ep, uint32_t compare, uint32_t swap, uint64_t remote_addr,
    uct_rkey_t rkey, uint32_t *result, uct_completion_t *comp)
{
    return ep->iface->ops.ep_atomic_cswap32(ep, compare, swap, remote_addr,
                                            rkey, result, comp);
}

/**
 * Applies an atomic operation to a remote 32-bit word, without fetching
 * the old value.
 * @ingroup UCT_AMO
 * @param [in] ep          the endpoint.
 * @param [in] opcode      one of cap.atomic32.op_flags.
 * @param [in] value       the operand.
 * @param [in] remote_addr remote address, 4-byte aligned.
 * @param [in] rkey        remote key.
 * @return UCS_OK when posted (performed remotely after a remote flush);
 *         UCS_ERR_NO_RESOURCE to retry later; UCS_ERR_UNSUPPORTED for an
 *         operation the interface lacks; the endpoint's failure status.
 */
UCT_INLINE_API ucs_status_t uct_ep_atomic32_post(uct_ep_h ep,
                                                 uct_atomic_op_t opcode,
                                                 uint32_t value,
                                                 uint64_t remote_addr,
                                                 uct_rkey_t rkey)
{
    return ep->iface->ops.ep_atomic32_post(ep, opcode, value, remote_addr,
                                           rkey);
}

/**
 * The 64-bit form of uct_ep_atomic32_post().
 * @ingroup UCT_AMO
 * @param [in] ep          the endpoint.
 * @param [in] opcode      one of cap.atomic64.op_flags.
 * @param [in] value       the operand.
 * @param [in] remote_addr remote address, 8-byte aligned.
 * @param [in] rkey        remote key.
 * @return as uct_ep_atomic32_post().
 */
UCT_INLINE_API ucs_status_t uct_ep_atomic64_post(uct_ep_h ep,
                                                 uct_atomic_op_t opcode,
                                                 uint64_t value,
                                                 uint64_t remote_addr,
                                                 uct_rkey_t rkey)
{
    return ep->iface->ops.ep_atomic64_post(ep, opcode, value, remote_addr,
                                           rkey);
}

/**
 * Applies an atomic operation to a remote 32-bit word and fetches its old
 * value.
 * @ingroup UCT_AMO
 * @param [in]  ep          the endpoint.
 * @param [in]  opcode      one of cap.atomic32.fop_flags.
 * @param [in]  value       the operand.
 * @param [out] result      set to the old value; must stay valid until
 *                          the operation completes.
 * @param [in]  remote_addr remote address, 4-byte aligned.
 * @param [in]  rkey        remote key.
 * @param [in]  comp        completion updated after UCS_INPROGRESS.
 * @return as uct_ep_atomic_cswap64().
 */
UCT_INLINE_API ucs_status_t uct_ep_atomic32_fetch(
    uct_ep_h ep, uct_atomic_op_t opcode, uint32_t value, uint32_t *result,
    uint64_t remote_addr, uct_rkey_t rkey, uct_completion_t *comp)
{
    return ep->iface->ops.ep_atomic32_fetch(ep, opcode, value, result,
                                            remote_addr, rkey, comp);
}

/**
 * The 64-bit form of uct_ep_atomic32_fetch().
 * @ingroup UCT_AMO
 * @param [in]  ep          the endpoint.
 * @param [in]  opcode      one of cap.atomic64.fop_flags.
 * @param [in]  value       the operand.
 * @param [out] result      set to the old value; must stay valid until
 *                          the operation completes.
 * @param [in]  remote_addr remote address, 8-byte aligned.
 * @param [in]  rkey        remote key.
 * @param [in]  comp        completion updated after UCS_INPROGRESS.
 * @return as uct_ep_atomic_cswap64().
 */
UCT_INLINE_API ucs_status_t uct_ep_atomic64_fetch(
    uct_ep_h ep, uct_atomic_op_t opcode, uint64_t value, uint64_t *result,
    uint64_t remote_addr, uct_rkey_t rkey, uct_completion_t *comp)
{
    return ep->iface->ops.ep_atomic64_fetch(ep, opcode, value, result,
                                            remote_addr, rkey, comp);
}

/**
 * Queues @a req to run when the endpoint has resources again. Returns
 * UCS_ERR_BUSY if resources are free already (retry the operation now).
 *
 * The request's callback runs from progress on the worker's thread; it
 * sends and returns UCS_OK (the request leaves the queue and belongs to
 * the user again), UCS_INPROGRESS (partial progress, it runs again) or
 * UCS_ERR_NO_RESOURCE (it runs again when resources return). Until then
 * the request memory must stay valid and untouched.
 * @ingroup UCT_FLUSH
 * @param [in] ep    the endpoint.
 * @param [in] req   the request, with func set.
 * @param [in] flags UCT_CB_FLAG_* of the callback (ignored by the
 *                   transports here).
 * @return UCS_OK when queued; UCS_ERR_BUSY; UCS_ERR_UNSUPPORTED without
 *         UCT_IFACE_FLAG_PENDING.
 */
UCT_INLINE_API ucs_status_t uct_ep_pending_add(uct_ep_h ep,
                                               uct_pending_req_t *req,
                                               unsigned flags)
{
    return ep->iface->ops.ep_pending_add(ep, req, flags);
}

/**
 * Removes every queued pending request of an endpoint, calling @a cb for
 * each from inside this call; afterwards the requests belong to the user.
 * @ingroup UCT_FLUSH
 * @param [in] ep  the endpoint.
 * @param [in] cb  called with each request and @a arg, or NULL.
 * @param [in] arg passed to @a cb.
 */
UCT_INLINE_API void
uct_ep_pending_purge(uct_ep_h ep, uct_pending_purge_callback_t cb, void *arg)
{
    ep->iface->ops.ep_pending_purge(ep, cb, arg);
}

/**
 * Waits, without blocking, for the operations posted on an endpoint.
 * With UCT_FLUSH_FLAG_LOCAL the send buffers may be reused; with
 * UCT_FLUSH_FLAG_REMOTE the peer has also performed them; with
 * UCT_FLUSH_FLAG_CANCEL queued pending requests are dropped without
 * their callback.
 * @ingroup UCT_FLUSH
 * @param [in] ep    the endpoint.
 * @param [in] flags mask of uct_flush_flags.
 * @param [in] comp  completion updated when the flush finishes after
 *                   UCS_INPROGRESS, or NULL to poll (call again after
 *                   progress until it returns UCS_OK).
 * @return UCS_OK when nothing is outstanding; UCS_INPROGRESS;
 *         UCS_ERR_NO_RESOURCE to retry later; UCS_ERR_NO_MEMORY;
 *         UCS_ERR_UNSUPPORTED; the endpoint's failure status.
 */
UCT_INLINE_API ucs_status_t uct_ep_flush(uct_ep_h ep, unsigned flags,
                                         uct_completion_t *comp)
{
    return ep->iface->ops.ep_flush(ep, flags, comp);
}

/**
 * Orders the operations of an endpoint: those posted after the fence are
 * performed after those posted before it.
 * @ingroup UCT_FLUSH
 * @param [in] ep    the endpoint.
 * @param [in] flags reserved, pass 0.
 * @return UCS_OK; UCS_ERR_UNSUPPORTED; the endpoint's failure status.
 */
UCT_INLINE_API ucs_status_t uct_ep_fence(uct_ep_h ep, unsigned flags)
{
    return ep->iface->ops.ep_fence(ep, flags);
}

/**
 * Reads the configuration of a component's connection manager from the
 * environment (UCX_<env_prefix>_...) and an optional file.
 * @ingroup UCT_CM
 * @param [in]  component  a component with UCT_COMPONENT_FLAG_CM.
 * @param [in]  env_prefix extra variable prefix, or NULL.
 * @param [in]  filename   configuration file, or NULL.
 * @param [out] config_p   the configuration; release it with
 *                         uct_config_release().
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for a NULL argument or a bad
 *         value; UCS_ERR_UNSUPPORTED for a component without a connection
 *         manager.
 */
ucs_status_t uct_cm_config_read(uct_component_h component,
                                const char *env_prefix, const char *filename,
                                uct_cm_config_t **config_p);

/**
 * Opens a connection manager of a component.
 * @ingroup UCT_CM
 * @param [in]  component a component with UCT_COMPONENT_FLAG_CM.
 * @param [in]  worker    the worker whose async context runs the
 *                        callbacks of the cm, its listeners and eps; a
 *                        callback that found the context blocked runs
 *                        from the worker's uct_worker_progress() instead,
 *                        so progress the worker while waiting for one.
 * @param [in]  config    from uct_cm_config_read().
 * @param [out] cm_p      the connection manager; close it with
 *                        uct_cm_close().
 * @return UCS_OK; UCS_ERR_INVALID_PARAM; UCS_ERR_UNSUPPORTED for a
 *         component without one; UCS_ERR_NO_DEVICE when the system offers
 *         nothing it can run on; UCS_ERR_NO_MEMORY.
 */
ucs_status_t uct_cm_open(uct_component_h component, uct_worker_h worker,
                         const uct_cm_config_t *config, uct_cm_h *cm_p);

/**
 * Closes a connection manager. Its listeners and endpoints must have been
 * destroyed before.
 * @ingroup UCT_CM
 * @param [in] cm the connection manager, or NULL (nothing is done).
 */
void uct_cm_close(uct_cm_h cm);

/**
 * Queries a connection manager's attributes.
 * @ingroup UCT_CM
 * @param [in]     cm      the connection manager.
 * @param [in,out] cm_attr field_mask says what to fill
 *                         (UCT_CM_ATTR_FIELD_*).
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for a NULL argument.
 */
ucs_status_t uct_cm_query(uct_cm_h cm, uct_cm_attr_t *cm_attr);

/**
 * Listens on an IP address and port for connection requests; each one
 * reaches uct_listener_params_t::conn_request_cb from the async context.
 * @ingroup UCT_CM
 * @param [in]  cm         the connection manager.
 * @param [in]  saddr      a sockaddr_in or sockaddr_in6; port 0 lets the
 *                         system choose one (uct_listener_query() tells
 *                         it).
 * @param [in]  socklen    bytes at @a saddr.
 * @param [in]  params     the callback (required), its argument and the
 *                         backlog.
 * @param [out] listener_p the listener; destroy it with
 *                         uct_listener_destroy().
 * @return UCS_OK; UCS_ERR_INVALID_PARAM; UCS_ERR_BUSY when the address is
 *         in use; UCS_ERR_INVALID_ADDR when it is not local;
 *         UCS_ERR_NO_MEMORY; UCS_ERR_IO_ERROR.
 */
ucs_status_t uct_listener_create(uct_cm_h cm, const struct sockaddr *saddr,
                                 socklen_t socklen,
                                 const uct_listener_params_t *params,
                                 uct_listener_h *listener_p);

/**
 * Stops listening and frees the listener. Requests it reported and the
 * user has not taken are rejected.
 * @ingroup UCT_CM
 * @param [in] listener the listener, or NULL (nothing is done).
 */
void uct_listener_destroy(uct_listener_h listener);

/**
 * Refuses a connection request: the client's connect callback gets
 * UCS_ERR_REJECTED.
 * @ingroup UCT_CM
 * @param [in] listener     the listener that reported the request.
 * @param [in] conn_request the request; it is gone after the call.
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for a NULL argument.
 */
ucs_status_t uct_listener_reject(uct_listener_h listener,
                                 uct_conn_request_h conn_request);

/**
 * Queries a listener's attributes (the address it is bound to, with its
 * port).
 * @ingroup UCT_CM
 * @param [in]     listener      the listener.
 * @param [in,out] listener_attr field_mask says what to fill
 *                               (UCT_LISTENER_ATTR_FIELD_*).
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for a NULL argument.
 */
ucs_status_t uct_listener_query(uct_listener_h listener,
                                uct_listener_attr_t *listener_attr);

/**
 * Called by the client after its connect callback said UCS_OK and it
 * connected its transport endpoints: the server's notify callback then
 * gets UCS_OK.
 * @ingroup UCT_CM
 * @param [in] ep the client endpoint of a connection manager.
 * @return UCS_OK; UCS_ERR_NOT_CONNECTED when the server is gone;
 *         UCS_ERR_UNSUPPORTED for an endpoint of an interface.
 */
ucs_status_t uct_cm_client_ep_conn_notify(uct_ep_h ep);

/**
 * Sends the connection request of a client endpoint created with a
 * resolve callback (uct_ep_params_t::cm_resolve_cb), once the callback
 * said which device the route goes through.
 * @ingroup UCT_CM
 * @param [in] ep     the client endpoint.
 * @param [in] params the private data.
 * @return UCS_OK; UCS_ERR_EXCEEDS_LIMIT when the private data is longer
 *         than uct_cm_attr_t::max_conn_priv (nothing is sent);
 *         UCS_ERR_UNSUPPORTED for an endpoint of an interface or a cm
 *         that does not work this way.
 */
ucs_status_t uct_ep_connect(uct_ep_h ep, const uct_ep_connect_params_t *params);

/**
 * Starts ending the connection of a connection manager's endpoint; the
 * peer's disconnect callback runs once. Destroy the endpoint after this
 * (or after its own disconnect callback).
 * @ingroup UCT_CM
 * @param [in] ep    the endpoint.
 * @param [in] flags reserved, pass 0.
 * @return UCS_OK or UCS_INPROGRESS; UCS_ERR_BUSY while the handshake is
 *         still running; UCS_ERR_NOT_CONNECTED when it was disconnected
 *         already; UCS_ERR_UNSUPPORTED for an endpoint of an interface.
 */
ucs_status_t uct_ep_disconnect(uct_ep_h ep, unsigned flags);

/**
 * Accepts a request of an interface opened in a socket-address server
 * mode. No transport of openuct opens such an interface, so there is no
 * request to accept: it returns UCS_ERR_UNSUPPORTED. Use a connection
 * manager (uct_ep_create() with the request of a listener).
 * @ingroup UCT_CM
 * @param [in] iface        the interface.
 * @param [in] conn_request the request.
 * @return UCS_ERR_UNSUPPORTED.
 */
ucs_status_t uct_iface_accept(uct_iface_h iface,
                              uct_conn_request_h conn_request);

/**
 * Rejects a request of an interface opened in a socket-address server
 * mode: UCS_ERR_UNSUPPORTED, as uct_iface_accept(); a listener's
 * requests are rejected with uct_listener_reject().
 * @ingroup UCT_CM
 * @param [in] iface        the interface.
 * @param [in] conn_request the request.
 * @return UCS_ERR_UNSUPPORTED.
 */
ucs_status_t uct_iface_reject(uct_iface_h iface,
                              uct_conn_request_h conn_request);

/**
 * Says whether a memory domain can open an interface in a socket-address
 * mode on an address. No memory domain of openuct can
 * (UCT_MD_FLAG_SOCKADDR is never set), so it returns 0; connection
 * managers are the way to connect by address.
 * @ingroup UCT_MD
 * @param [in] md       the memory domain.
 * @param [in] sockaddr the address.
 * @param [in] mode     local (to listen on) or remote (to connect to).
 * @return 0.
 */
int uct_md_is_sockaddr_accessible(uct_md_h md, const ucs_sock_addr_t *sockaddr,
                                  uct_sockaddr_accessibility_t mode);

/**
 * Sends a tagged eager message from a buffer (tag-matching offload).
 * No transport of openuct offers it (no UCT_IFACE_FLAG_TAG_EAGER_SHORT):
 * UCS_ERR_UNSUPPORTED unless a third-party transport fills the operation.
 * @ingroup UCT_TAG
 * @param [in] ep     the endpoint.
 * @param [in] tag    the message's tag.
 * @param [in] data   the payload, copied before the return.
 * @param [in] length bytes of @a data, at most cap.tag.eager.max_short.
 * @return UCS_OK; UCS_ERR_NO_RESOURCE; UCS_ERR_UNSUPPORTED.
 */
UCT_INLINE_API ucs_status_t uct_ep_tag_eager_short(uct_ep_h ep, uct_tag_t tag,
                                                   const void *data,
                                                   size_t length)
{
    return ep->iface->ops.ep_tag_eager_short(ep, tag, data, length);
}

/**
 * Sends a tagged eager message that @a pack_cb writes (tag-matching
 * offload; UCS_ERR_UNSUPPORTED on every transport of openuct).
 * @ingroup UCT_TAG
 * @param [in] ep      the endpoint.
 * @param [in] tag     the message's tag.
 * @param [in] imm     immediate value delivered with the message.
 * @param [in] pack_cb writes the payload.
 * @param [in] arg     argument of @a pack_cb.
 * @param [in] flags   UCT_SEND_FLAG_* bits.
 * @return the bytes packed, or a negative ucs_status_t
 *         (UCS_ERR_UNSUPPORTED here).
 */
UCT_INLINE_API ssize_t uct_ep_tag_eager_bcopy(uct_ep_h ep, uct_tag_t tag,
                                              uint64_t imm,
                                              uct_pack_callback_t pack_cb,
                                              void *arg, unsigned flags)
{
    return ep->iface->ops.ep_tag_eager_bcopy(ep, tag, imm, pack_cb, arg, flags);
}

/**
 * Sends a tagged eager message from registered memory (tag-matching
 * offload; UCS_ERR_UNSUPPORTED on every transport of openuct).
 * @ingroup UCT_TAG
 * @param [in] ep     the endpoint.
 * @param [in] tag    the message's tag.
 * @param [in] imm    immediate value delivered with the message.
 * @param [in] iov    the payload; untouched until completion.
 * @param [in] iovcnt number of @a iov elements.
 * @param [in] flags  UCT_SEND_FLAG_* bits.
 * @param [in] comp   completion, or NULL.
 * @return UCS_OK; UCS_INPROGRESS; UCS_ERR_NO_RESOURCE;
 *         UCS_ERR_UNSUPPORTED.
 */
UCT_INLINE_API ucs_status_t uct_ep_tag_eager_zcopy(
    uct_ep_h ep, uct_tag_t tag, uint64_t imm, const uct_iov_t *iov,
    size_t iovcnt, unsigned flags, uct_completion_t *comp)
{
    return ep->iface->ops.ep_tag_eager_zcopy(ep, tag, imm, iov, iovcnt, flags,
                                             comp);
}

/**
 * Starts a tagged rendezvous send (tag-matching offload;
 * UCS_ERR_UNSUPPORTED on every transport of openuct).
 * @ingroup UCT_TAG
 * @param [in] ep            the endpoint.
 * @param [in] tag           the message's tag.
 * @param [in] header        rendezvous header for the receiver.
 * @param [in] header_length bytes of @a header.
 * @param [in] iov           the payload; untouched until completion.
 * @param [in] iovcnt        number of @a iov elements.
 * @param [in] flags         UCT_SEND_FLAG_* bits.
 * @param [in] comp          completion, or NULL.
 * @return a handle for uct_ep_tag_rndv_cancel(), or a status as a pointer
 *         (UCS_PTR_IS_ERR(); UCS_ERR_UNSUPPORTED here).
 */
UCT_INLINE_API ucs_status_ptr_t uct_ep_tag_rndv_zcopy(
    uct_ep_h ep, uct_tag_t tag, const void *header, unsigned header_length,
    const uct_iov_t *iov, size_t iovcnt, unsigned flags, uct_completion_t *comp)
{
    return ep->iface->ops.ep_tag_rndv_zcopy(ep, tag, header, header_length, iov,
                                            iovcnt, flags, comp);
}

/**
 * Cancels a rendezvous send (tag-matching offload; UCS_ERR_UNSUPPORTED on
 * every transport of openuct).
 * @ingroup UCT_TAG
 * @param [in] ep the endpoint.
 * @param [in] op what uct_ep_tag_rndv_zcopy() returned.
 * @return UCS_OK; UCS_ERR_UNSUPPORTED.
 */
UCT_INLINE_API ucs_status_t uct_ep_tag_rndv_cancel(uct_ep_h ep, void *op)
{
    return ep->iface->ops.ep_tag_rndv_cancel(ep, op);
}

/**
 * Sends a rendezvous request that the receiver completes in software
 * (tag-matching offload; UCS_ERR_UNSUPPORTED on every transport of
 * openuct).
 * @ingroup UCT_TAG
 * @param [in] ep            the endpoint.
 * @param [in] tag           the message's tag.
 * @param [in] header        request header.
 * @param [in] header_length bytes of @a header.
 * @param [in] flags         UCT_SEND_FLAG_* bits.
 * @return UCS_OK; UCS_ERR_NO_RESOURCE; UCS_ERR_UNSUPPORTED.
 */
UCT_INLINE_API ucs_status_t uct_ep_tag_rndv_request(uct_ep_h ep, uct_tag_t tag,
                                                    const void *header,
                                                    unsigned header_length,
                                                    unsigned flags)
{
    return ep->iface->ops.ep_tag_rndv_request(ep, tag, header, header_length,
                                              flags);
}

/**
 * Posts a tagged receive into registered memory (tag-matching offload;
 * UCS_ERR_UNSUPPORTED on every transport of openuct).
 * @ingroup UCT_TAG
 * @param [in] iface    the interface.
 * @param [in] tag      the tag to match.
 * @param [in] tag_mask bits of @a tag that must match.
 * @param [in] iov      the receive buffer.
 * @param [in] iovcnt   number of @a iov elements.
 * @param [in] ctx      the receive's context, the caller's until its
 *                      completed_cb runs.
 * @return UCS_OK; UCS_ERR_EXCEEDS_LIMIT; UCS_ERR_UNSUPPORTED.
 */
UCT_INLINE_API ucs_status_t uct_iface_tag_recv_zcopy(
    uct_iface_h iface, uct_tag_t tag, uct_tag_t tag_mask, const uct_iov_t *iov,
    size_t iovcnt, uct_tag_context_t *ctx)
{
    return iface->ops.iface_tag_recv_zcopy(iface, tag, tag_mask, iov, iovcnt,
                                           ctx);
}

/**
 * Cancels a posted tagged receive (tag-matching offload;
 * UCS_ERR_UNSUPPORTED on every transport of openuct).
 * @ingroup UCT_TAG
 * @param [in] iface the interface.
 * @param [in] ctx   the receive's context.
 * @param [in] force nonzero: drop it now, without a completion.
 * @return UCS_OK; UCS_ERR_UNSUPPORTED.
 */
UCT_INLINE_API ucs_status_t uct_iface_tag_recv_cancel(uct_iface_h iface,
                                                      uct_tag_context_t *ctx,
                                                      int force)
{
    return iface->ops.iface_tag_recv_cancel(iface, ctx, force);
}

/**
 * Makes uct_worker_progress() progress the interface for the given
 * directions; until then only uct_iface_progress() does. Call it from the
 * worker's thread, or with UCT_PROGRESS_THREAD_SAFE from another.
 * @ingroup UCT_CONTEXT
 * @param [in] iface the interface.
 * @param [in] flags UCT_PROGRESS_SEND and/or UCT_PROGRESS_RECV, possibly
 *                   with UCT_PROGRESS_THREAD_SAFE.
 */
UCT_INLINE_API void uct_iface_progress_enable(uct_iface_h iface, unsigned flags)
{
    iface->ops.iface_progress_enable(iface, flags);
}

/**
 * Stops progressing the interface for the given directions; when none is
 * left, the interface leaves the worker's progress.
 * @ingroup UCT_CONTEXT
 * @param [in] iface the interface.
 * @param [in] flags UCT_PROGRESS_SEND and/or UCT_PROGRESS_RECV, possibly
 *                   with UCT_PROGRESS_THREAD_SAFE.
 */
UCT_INLINE_API void uct_iface_progress_disable(uct_iface_h iface,
                                               unsigned flags)
{
    iface->ops.iface_progress_disable(iface, flags);
}

/**
 * Progresses one interface, as uct_worker_progress() does for all; same
 * thread rules.
 * @ingroup UCT_CONTEXT
 * @param [in] iface the interface.
 * @return the number of events handled.
 */
UCT_INLINE_API unsigned uct_iface_progress(uct_iface_h iface)
{
    return iface->ops.iface_progress(iface);
}

/**
 * Records @a status in @a comp if it is the first error.
 * @ingroup UCT_FLUSH
 * @param [in,out] comp   the completion.
 * @param [in]     status status of one operation; UCS_OK changes
 *                        nothing.
 */
UCT_INLINE_API void uct_completion_update_status(uct_completion_t *comp,
                                                 ucs_status_t status)
{
    if (ucs_unlikely(status != UCS_OK) && (comp->status == UCS_OK)) {
        comp->status = status;
    }
}

END_C_DECLS

#endif
