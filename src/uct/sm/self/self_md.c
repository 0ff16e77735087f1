/*
 * The self transport (module libuct_self.so, component "self", device
 * "memory"): its memory domain, component and module entry point. Any self
 * interface of the process can reach any other; see self_iface.c and
 * self_ep.c.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "self.h"

#include <ucs/debug/log.h>

#include <stdlib.h>
#include <string.h>

ucs_status_t uct_self_query_devices(uct_md_h md,
                                    uct_tl_device_resource_t **devs_p,
                                    unsigned *num_devices_p)
{
    return uct_single_device_resource(
        md, UCT_SELF_DEV_NAME, UCT_DEVICE_TYPE_SELF, UCS_SYS_DEVICE_ID_UNKNOWN,
        devs_p, num_devices_p);
}

static ucs_status_t uct_self_rkey_ptr(uct_component_t *component,
                                      uct_rkey_t rkey, void *handle,
                                      uint64_t remote_addr, void **addr_p)
{
    *addr_p = (void *)(uintptr_t)remote_addr;
    return UCS_OK;
}

uct_tl_t uct_self_tl = {.name           = UCT_SELF_NAME,
                        .query_devices  = uct_self_query_devices,
                        .iface_open     = uct_self_iface_open,
                        .config         = {.name   = "Self memory transport",
                                           .prefix = "SELF_",
                                           .table  = uct_self_iface_config_table,
                                           .size   = sizeof(uct_self_iface_config_t)},
                        .iface_vfs_init = uct_self_iface_vfs_init,
                        .ep_vfs_init    = uct_self_ep_vfs_init};

static uct_component_t uct_self_component = {
    .name               = UCT_SELF_NAME,
    .query_md_resources = uct_md_query_single_md_resource,
    .md_open            = uct_host_md_open,
    .rkey_unpack        = uct_md_stub_rkey_unpack,
    .rkey_ptr           = uct_self_rkey_ptr,
    .rkey_release       = uct_md_stub_rkey_release,
    .md_config          = {.name   = "Self memory domain",
                           .prefix = "SELF_",
                           .table  = uct_md_config_table,
                           .size   = sizeof(uct_md_config_t)},
    .flags              = UCT_COMPONENT_FLAG_RKEY_PTR};

static ucs_status_t uct_self_init(void)
{
    uct_component_register(&uct_self_component);
    uct_tl_register(&uct_self_component, &uct_self_tl);
    return UCS_OK;
}

UCT_MODULE_DEFINE(uct_self_init)
