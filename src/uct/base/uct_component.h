/*
 * Registry of components and their transports. Modules register what
 * they provide from their init function; libuct core knows no transport
 * by name.
 */
#ifndef UCT_BASE_COMPONENT_H_
#define UCT_BASE_COMPONENT_H_

#include <uct/api/uct.h>
#include <ucs/config/parser.h>
#include <ucs/datastruct/list.h>

BEGIN_C_DECLS

typedef struct uct_component uct_component_t;

/** One device a transport can run on. */
typedef struct uct_tl_device_resource {
    char name[UCT_DEVICE_NAME_MAX];
    uct_device_type_t type;
    ucs_sys_device_t sys_device;
} uct_tl_device_resource_t;

/** A transport of a component. */
typedef struct uct_tl {
    char name[UCT_TL_NAME_MAX];

    /** Devices this transport can use on @a md (array freed with free()). */
    ucs_status_t (*query_devices)(uct_md_h md,
                                  uct_tl_device_resource_t **devices_p,
                                  unsigned *num_devices_p);

    /** Open an interface; params and config were already checked. */
    ucs_status_t (*iface_open)(uct_md_h md, uct_worker_h worker,
                               const uct_iface_params_t *params,
                               const uct_iface_config_t *config,
                               uct_iface_h *iface_p);

    /** Interface configuration: table, size, env prefix ("TCP_"). */
    ucs_config_global_list_entry_t config;

    /**
     * May be NULL. Add the transport's own files to the object tree
     * directory of a new interface (after its open returned) or endpoint
     * (from uct_base_ep_init), with the helpers of uct/base/uct_vfs.h. A
     * file named like a generic one replaces it. Setup path only.
     */
    void (*iface_vfs_init)(uct_iface_h iface);
    void (*ep_vfs_init)(uct_ep_h ep);

    ucs_list_link_t list; /* in the component's tl_list */
} uct_tl_t;

/** A component: a family of memory domains and their transports. */
struct uct_component {
    char name[UCT_COMPONENT_NAME_MAX];

    ucs_status_t (*query_md_resources)(uct_component_t *component,
                                       uct_md_resource_desc_t **resources_p,
                                       unsigned *num_resources_p);
    ucs_status_t (*md_open)(uct_component_t *component, const char *md_name,
                            const uct_md_config_t *config, uct_md_h *md_p);
    ucs_status_t (*rkey_unpack)(uct_component_t *component,
                                const void *rkey_buffer, uct_rkey_t *rkey_p,
                                void **handle_p);
    /** May be NULL: rkey_ptr is then unsupported. */
    ucs_status_t (*rkey_ptr)(uct_component_t *component, uct_rkey_t rkey,
                             void *handle, uint64_t remote_addr, void **addr_p);
    ucs_status_t (*rkey_release)(uct_component_t *component, uct_rkey_t rkey,
                                 void *handle);

    /** Memory domain configuration (table may be empty). */
    ucs_config_global_list_entry_t md_config;

    /**
     * May be NULL: the component has no connection manager. Otherwise
     * uct_component_register() sets UCT_COMPONENT_FLAG_CM, and this opens
     * one (a structure that starts with uct_cm_t, see uct/base/uct_cm.h).
     */
    ucs_status_t (*cm_open)(uct_component_t *component, uct_worker_h worker,
                            const uct_cm_config_t *config, uct_cm_h *cm_p);
    /** Connection manager configuration (with cm_open; the table may be
     *  empty). */
    ucs_config_global_list_entry_t cm_config;

    uint64_t flags;          /* UCT_COMPONENT_FLAG_* */
    ucs_list_link_t tl_list; /* uct_tl_t of this component */
    ucs_list_link_t list;    /* in the global component list */
};

/** Registers a component and its configuration table. Idempotent. */
void uct_component_register(uct_component_t *component);

/** Removes a component (module unload). */
void uct_component_unregister(uct_component_t *component);

/** Adds a transport to a registered component. Idempotent. */
void uct_tl_register(uct_component_t *component, uct_tl_t *tl);

void uct_tl_unregister(uct_tl_t *tl);

/** Finds a transport of @a component by name, or NULL. */
uct_tl_t *uct_component_find_tl(uct_component_t *component,
                                const char *tl_name);

/** A memory domain resource list with the single entry @a md_name. */
ucs_status_t uct_md_query_single_md_resource(uct_component_t *component,
                                             uct_md_resource_desc_t **res_p,
                                             unsigned *num_resources_p);

/** A device list with the single device @a dev_name. */
ucs_status_t uct_single_device_resource(uct_md_h md, const char *dev_name,
                                        uct_device_type_t dev_type,
                                        ucs_sys_device_t sys_device,
                                        uct_tl_device_resource_t **devices_p,
                                        unsigned *num_devices_p);

/**
 * Defines the two symbols every transport module exports: the API version
 * it was built against and its init function (which registers its
 * components and transports).
 */
#define UCT_MODULE_DEFINE(_init_func)                                         \
    UCS_F_API const uint32_t ucs_module_api_version = UCT_MODULE_API_VERSION; \
    UCS_F_API ucs_status_t ucs_module_init(void);                             \
    ucs_status_t ucs_module_init(void)                                        \
    {                                                                         \
        return _init_func();                                                  \
    }

/* Configuration storage: a bundle remembers the table of its data. */
typedef struct uct_config_bundle {
    const ucs_config_field_t *table;
    const char *table_prefix;
    char data[];
} uct_config_bundle_t;

ucs_status_t uct_config_read(uct_config_bundle_t **bundle_p,
                             const ucs_config_global_list_entry_t *entry,
                             const char *env_prefix, const char *filename);

END_C_DECLS

#endif
