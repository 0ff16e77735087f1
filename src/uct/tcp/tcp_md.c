/*
 * The tcp memory domain, component and module entry point. Memory needs
 * no registration: a remote key is the remote address itself, carried in
 * the PUT/GET messages of the stream.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "tcp.h"

#include <ucs/debug/log.h>

#include <stdlib.h>

uct_tl_t uct_tcp_tl = {
    .name           = UCT_TCP_NAME,
    .query_devices  = uct_tcp_device_query_all,
    .iface_open     = uct_tcp_iface_open,
    .config         = {
        .name   = "TCP sockets transport",
        .prefix = "TCP_",
        .table  = uct_tcp_iface_config_table,
        .size   = sizeof(uct_tcp_iface_config_t)
    },
    .iface_vfs_init = uct_tcp_iface_vfs_init,
    .ep_vfs_init    = uct_tcp_ep_vfs_init
};

static uct_component_t uct_tcp_component = {
    .name               = UCT_TCP_NAME,
    .query_md_resources = uct_md_query_single_md_resource,
    .md_open            = uct_host_md_open,
    .rkey_unpack        = uct_md_stub_rkey_unpack,
    .rkey_ptr           = NULL,
    .rkey_release       = uct_md_stub_rkey_release,
    .md_config          = {
        .name   = "TCP memory domain",
        .prefix = "TCP_",
        .table  = uct_md_config_table,
        .size   = sizeof(uct_md_config_t)
    },
    .flags              = 0
};

static ucs_status_t uct_tcp_init(void)
{
    uct_component_register(&uct_tcp_component);
    uct_tl_register(&uct_tcp_component, &uct_tcp_tl);
    return UCS_OK;
}

UCT_MODULE_DEFINE(uct_tcp_init)
