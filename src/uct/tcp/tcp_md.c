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

static void uct_tcp_md_close(uct_md_h md)
{
    free(md);
}

static ucs_status_t uct_tcp_md_query(uct_md_h md, uct_md_attr_t *md_attr)
{
    uct_md_base_attr_init(md, md_attr);
    md_attr->cap.flags            = UCT_MD_FLAG_REG;
    md_attr->cap.reg_mem_types    = UCS_BIT(UCS_MEMORY_TYPE_HOST);
    md_attr->cap.detect_mem_types = 0;
    md_attr->cap.access_mem_types = UCS_BIT(UCS_MEMORY_TYPE_HOST);
    md_attr->cap.max_reg          = SIZE_MAX;
    md_attr->rkey_packed_size     = 0;
    md_attr->reg_cost             = ucs_linear_func_make(0, 0);
    return UCS_OK;
}

static ucs_status_t uct_tcp_md_mkey_pack(uct_md_h md, uct_mem_h memh,
                                         void *rkey_buffer)
{
    return UCS_OK;
}

static ucs_status_t uct_tcp_md_mem_query(uct_md_h md, const void *address,
                                         size_t length,
                                         uct_md_mem_attr_t *mem_attr)
{
    if (mem_attr->field_mask & UCT_MD_MEM_ATTR_FIELD_MEM_TYPE) {
        mem_attr->mem_type = UCS_MEMORY_TYPE_HOST;
    }
    if (mem_attr->field_mask & UCT_MD_MEM_ATTR_FIELD_SYS_DEV) {
        mem_attr->sys_dev = UCS_SYS_DEVICE_ID_UNKNOWN;
    }
    if (mem_attr->field_mask & UCT_MD_MEM_ATTR_FIELD_BASE_ADDRESS) {
        mem_attr->base_address = (void*)address;
    }
    if (mem_attr->field_mask & UCT_MD_MEM_ATTR_FIELD_ALLOC_LENGTH) {
        mem_attr->alloc_length = length;
    }
    return UCS_OK;
}

static ucs_status_t uct_tcp_md_detect_memory_type(uct_md_h md,
                                                  const void *addr,
                                                  size_t length,
                                                  ucs_memory_type_t *type_p)
{
    *type_p = UCS_MEMORY_TYPE_HOST;
    return UCS_OK;
}

static const uct_md_ops_t uct_tcp_md_ops = {
    .close              = uct_tcp_md_close,
    .query              = uct_tcp_md_query,
    .mem_reg            = uct_md_dummy_mem_reg,
    .mem_dereg          = uct_md_dummy_mem_dereg,
    .mem_query          = uct_tcp_md_mem_query,
    .mkey_pack          = uct_tcp_md_mkey_pack,
    .detect_memory_type = uct_tcp_md_detect_memory_type
};

static ucs_status_t uct_tcp_md_open(uct_component_t *component,
                                    const char *md_name,
                                    const uct_md_config_t *config,
                                    uct_md_h *md_p)
{
    uct_md_t *md;

    md = calloc(1, sizeof(*md));
    if (md == NULL) {
        ucs_error("tcp: failed to allocate the memory domain");
        return UCS_ERR_NO_MEMORY;
    }

    uct_md_base_init(md, &uct_tcp_md_ops, component);
    *md_p = md;
    return UCS_OK;
}

uct_tl_t uct_tcp_tl = {
    .name          = UCT_TCP_NAME,
    .query_devices = uct_tcp_query_devices,
    .iface_open    = uct_tcp_iface_open,
    .config        = {
        .name   = "TCP sockets transport",
        .prefix = "TCP_",
        .table  = uct_tcp_iface_config_table,
        .size   = sizeof(uct_tcp_iface_config_t)
    }
};

static uct_component_t uct_tcp_component = {
    .name               = UCT_TCP_NAME,
    .query_md_resources = uct_md_query_single_md_resource,
    .md_open            = uct_tcp_md_open,
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
