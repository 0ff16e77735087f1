/*
 * The posix and sysv components and memory domains: memory allocated
 * through the md is a shared segment, its packed remote key names the
 * segment, and unpacking the key maps it (so PUT, GET and atomics are
 * loads and stores on the peer's memory).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mm.h"

#include <ucs/debug/log.h>
#include <ucs/sys/math.h>
#include <ucs/sys/string.h>
#include <ucs/sys/sys.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static ucs_config_field_t uct_mm_posix_md_config_table[] = {
    {"", "", NULL, ucs_offsetof(uct_mm_md_config_t, super),
     UCS_CONFIG_TYPE_TABLE(uct_md_config_table)},

    {"DIR", "/dev/shm",
     "Directory, on a tmpfs, where shared segments are created. They never "
     "have a name there: its size limits what can be allocated.",
     ucs_offsetof(uct_mm_md_config_t, dir), UCS_CONFIG_TYPE_STRING},

    {NULL}};

static ucs_config_field_t uct_mm_sysv_md_config_table[] = {
    {"", "", NULL, ucs_offsetof(uct_mm_md_config_t, super),
     UCS_CONFIG_TYPE_TABLE(uct_md_config_table)},

    {NULL}};

static const uct_mm_mapper_t *uct_mm_component_mapper(uct_component_t *c)
{
    return ucs_container_of(c, uct_mm_component_t, super)->mapper;
}

static void uct_mm_md_close(uct_md_h uct_md)
{
    uct_mm_md_t *md = uct_mm_md(uct_md);

    free(md->dir);
    free(md);
}

static ucs_status_t uct_mm_md_query(uct_md_h uct_md, uct_md_attr_t *md_attr)
{
    uct_md_base_attr_init(uct_md, md_attr);
    /* remote access works on memory the md allocates (a shared segment),
     * not on memory registered after the fact */
    md_attr->cap.flags =
        UCT_MD_FLAG_ALLOC | UCT_MD_FLAG_NEED_RKEY | UCT_MD_FLAG_RKEY_PTR;
    md_attr->cap.reg_mem_types    = 0;
    md_attr->cap.alloc_mem_types  = UCS_BIT(UCS_MEMORY_TYPE_HOST);
    md_attr->cap.access_mem_types = UCS_BIT(UCS_MEMORY_TYPE_HOST);
    md_attr->cap.detect_mem_types = 0;
    md_attr->cap.max_alloc        = UCT_MM_SEG_MAX_LENGTH;
    md_attr->cap.max_reg          = 0;
    md_attr->rkey_packed_size     = sizeof(uct_mm_packed_rkey_t);
    return UCS_OK;
}

static ucs_status_t uct_mm_md_mem_alloc(uct_md_h uct_md, size_t *length_p,
                                        void **address_p,
                                        ucs_memory_type_t mem_type,
                                        unsigned flags, const char *alloc_name,
                                        uct_mem_h *memh_p)
{
    uct_mm_md_t *md  = uct_mm_md(uct_md);
    size_t page_size = ucs_get_page_size();
    const char *name = (alloc_name != NULL) ? alloc_name : "?";
    char what[128];
    uct_mm_memh_t *memh;
    ucs_status_t status;
    size_t length;

    if (mem_type != UCS_MEMORY_TYPE_HOST) {
        ucs_debug("%s md: cannot allocate '%s' in %s memory", md->mapper->name,
                  name, ucs_memory_type_names[mem_type]);
        return UCS_ERR_UNSUPPORTED;
    }
    if (flags & UCT_MD_MEM_FLAG_FIXED) {
        ucs_debug("%s md: cannot allocate '%s' at a fixed address",
                  md->mapper->name, name);
        return UCS_ERR_UNSUPPORTED;
    }
    if ((*length_p == 0) || (*length_p > UCT_MM_SEG_MAX_LENGTH)) {
        ucs_error("%s md: cannot allocate %zu bytes for '%s': from 1 to "
                  "%llu bytes",
                  md->mapper->name, *length_p, name,
                  (unsigned long long)UCT_MM_SEG_MAX_LENGTH);
        return UCS_ERR_INVALID_PARAM;
    }

    memh = calloc(1, sizeof(*memh));
    if (memh == NULL) {
        ucs_error("%s md: no memory for a handle of '%s'", md->mapper->name,
                  name);
        return UCS_ERR_NO_MEMORY;
    }

    length = ucs_align_up_pow2(*length_p, page_size);
    snprintf(what, sizeof(what), "segment of '%s'", name);
    status = md->mapper->create(md, length, what, &memh->seg);
    if (status != UCS_OK) {
        free(memh);
        return (flags & UCT_MD_MEM_FLAG_HIDE_ERRORS) ? UCS_ERR_NO_MEMORY
                                                     : status;
    }

    ucs_debug("%s md: allocated %zu bytes at %p for '%s'", md->mapper->name,
              length, memh->seg.address, name);
    *length_p  = length;
    *address_p = memh->seg.address;
    *memh_p    = memh;
    return UCS_OK;
}

static ucs_status_t uct_mm_md_mem_free(uct_md_h uct_md, uct_mem_h uct_memh)
{
    uct_mm_md_t *md     = uct_mm_md(uct_md);
    uct_mm_memh_t *memh = uct_memh;

    md->mapper->destroy(&memh->seg);
    free(memh);
    return UCS_OK;
}

static ucs_status_t uct_mm_md_mkey_pack(uct_md_h uct_md, uct_mem_h uct_memh,
                                        void *rkey_buffer)
{
    const uct_mm_memh_t *memh = uct_memh;
    uct_mm_packed_rkey_t packed;

    if (memh == NULL) {
        ucs_error("%s md: no remote key for a NULL memory handle; allocate "
                  "the memory with uct_md_mem_alloc() or "
                  "uct_iface_mem_alloc()",
                  uct_mm_md(uct_md)->mapper->name);
        return UCS_ERR_INVALID_PARAM;
    }

    packed.ref            = memh->seg.ref;
    packed.remote_address = (uintptr_t)memh->seg.address;
    memcpy(rkey_buffer, &packed, sizeof(packed));
    return UCS_OK;
}

static ucs_status_t uct_mm_rkey_unpack(uct_component_t *component,
                                       const void *rkey_buffer,
                                       uct_rkey_t *rkey_p, void **handle_p)
{
    const uct_mm_mapper_t *mapper = uct_mm_component_mapper(component);
    uct_mm_packed_rkey_t packed;
    uct_mm_rkey_t *rkey;
    ucs_status_t status;

    memcpy(&packed, rkey_buffer, sizeof(packed));
    if (packed.remote_address > UINT64_MAX - packed.ref.length) {
        ucs_error("%s: malformed remote key (address 0x%" PRIx64
                  " length %" PRIu64 ")",
                  mapper->name, packed.remote_address, packed.ref.length);
        return UCS_ERR_INVALID_PARAM;
    }

    rkey = calloc(1, sizeof(*rkey));
    if (rkey == NULL) {
        ucs_error("%s: no memory for a remote key", mapper->name);
        return UCS_ERR_NO_MEMORY;
    }

    status = mapper->attach(&packed.ref, &rkey->seg);
    if (status != UCS_OK) {
        ucs_error("%s: cannot map the memory of remote key (pid %u, "
                  "segment %" PRIu64 "): %s; the owner may have exited or "
                  "freed it, or run as another user",
                  mapper->name, packed.ref.pid, packed.ref.id,
                  ucs_status_string(status));
        free(rkey);
        return status;
    }

    rkey->remote_address = packed.remote_address;
    rkey->local_address  = rkey->seg.address;
    rkey->length         = rkey->seg.length;
    rkey->mapper         = mapper;
    *rkey_p              = (uintptr_t)rkey;
    *handle_p            = rkey;
    return UCS_OK;
}

static ucs_status_t uct_mm_rkey_ptr(uct_component_t *component, uct_rkey_t rkey,
                                    void *handle, uint64_t remote_addr,
                                    void **addr_p)
{
    const uct_mm_rkey_t *key = (const uct_mm_rkey_t *)rkey;

    if ((remote_addr < key->remote_address) ||
        (remote_addr - key->remote_address >= key->length)) {
        return UCS_ERR_INVALID_ADDR;
    }
    *addr_p = key->local_address + (remote_addr - key->remote_address);
    return UCS_OK;
}

static ucs_status_t uct_mm_rkey_release(uct_component_t *component,
                                        uct_rkey_t rkey, void *handle)
{
    uct_mm_rkey_t *key = handle;

    key->mapper->detach(&key->seg);
    free(key);
    return UCS_OK;
}

/* Why the transport is not offered here, for uct_info -d */
static void uct_mm_md_print_info(uct_md_h uct_md, FILE *stream)
{
    uct_mm_md_t *md = uct_mm_md(uct_md);
    char why[256];

    if (!md->mapper->usable(md, why, sizeof(why))) {
        fprintf(stream, "# %s: not offered: %s\n", md->mapper->name, why);
    } else if (md->mapper == &uct_mm_posix_mapper) {
        fprintf(stream,
                "# posix: segments in %s, opened by peers through "
                "/proc/<pid>/fd\n",
                md->dir);
    }
}

static const uct_md_ops_t uct_mm_md_ops = {.close     = uct_mm_md_close,
                                           .query     = uct_mm_md_query,
                                           .mem_alloc = uct_mm_md_mem_alloc,
                                           .mem_free  = uct_mm_md_mem_free,
                                           .mem_query = uct_host_md_mem_query,
                                           .mkey_pack = uct_mm_md_mkey_pack,
                                           .detect_memory_type =
                                               uct_host_md_detect_memory_type,
                                           .print_info = uct_mm_md_print_info};

static ucs_status_t uct_mm_md_open(uct_component_t *component,
                                   const char *md_name,
                                   const uct_md_config_t *uct_config,
                                   uct_md_h *md_p)
{
    const uct_mm_md_config_t *config = (const uct_mm_md_config_t *)uct_config;
    const uct_mm_mapper_t *mapper    = uct_mm_component_mapper(component);
    uct_mm_md_t *md;

    md = calloc(1, sizeof(*md));
    if (md == NULL) {
        ucs_error("%s: no memory for a memory domain", mapper->name);
        return UCS_ERR_NO_MEMORY;
    }

    md->dir = strdup((mapper == &uct_mm_posix_mapper) ? config->dir : "");
    if (md->dir == NULL) {
        ucs_error("%s: no memory for a memory domain", mapper->name);
        free(md);
        return UCS_ERR_NO_MEMORY;
    }

    md->mapper = mapper;
    uct_md_base_init(&md->super, &uct_mm_md_ops, component);
    *md_p = &md->super;
    return UCS_OK;
}

ucs_status_t uct_mm_query_devices(uct_md_h uct_md,
                                  uct_tl_device_resource_t **devs_p,
                                  unsigned *num_devices_p)
{
    uct_mm_md_t *md = uct_mm_md(uct_md);
    uct_sm_dev_addr_t addr;
    char why[256];

    if ((uct_sm_dev_addr_get(&addr) != UCS_OK) ||
        !md->mapper->usable(md, why, sizeof(why))) {
        *devs_p        = NULL;
        *num_devices_p = 0;
        return UCS_OK;
    }

    return uct_single_device_resource(
        uct_md, UCT_SM_DEV_NAME, UCT_DEVICE_TYPE_SHM, UCS_SYS_DEVICE_ID_UNKNOWN,
        devs_p, num_devices_p);
}

static uct_tl_t uct_mm_posix_tl = {
    .name           = UCT_MM_POSIX_NAME,
    .query_devices  = uct_mm_query_devices,
    .iface_open     = uct_mm_iface_open,
    .config         = {.name   = "POSIX shared memory transport",
                       .prefix = "POSIX_",
                       .table  = uct_mm_iface_config_table,
                       .size   = sizeof(uct_mm_iface_config_t)},
    .iface_vfs_init = uct_mm_iface_vfs_init,
    .ep_vfs_init    = uct_mm_ep_vfs_init};

static uct_tl_t uct_mm_sysv_tl = {
    .name           = UCT_MM_SYSV_NAME,
    .query_devices  = uct_mm_query_devices,
    .iface_open     = uct_mm_iface_open,
    .config         = {.name   = "System V shared memory transport",
                       .prefix = "SYSV_",
                       .table  = uct_mm_iface_config_table,
                       .size   = sizeof(uct_mm_iface_config_t)},
    .iface_vfs_init = uct_mm_iface_vfs_init,
    .ep_vfs_init    = uct_mm_ep_vfs_init};

uct_mm_component_t uct_mm_posix_component = {
    .super  = {.name               = UCT_MM_POSIX_NAME,
               .query_md_resources = uct_md_query_single_md_resource,
               .md_open            = uct_mm_md_open,
               .rkey_unpack        = uct_mm_rkey_unpack,
               .rkey_ptr           = uct_mm_rkey_ptr,
               .rkey_release       = uct_mm_rkey_release,
               .md_config          = {.name   = "POSIX memory domain",
                                      .prefix = "POSIX_",
                                      .table  = uct_mm_posix_md_config_table,
                                      .size   = sizeof(uct_mm_md_config_t)},
               .flags              = UCT_COMPONENT_FLAG_RKEY_PTR},
    .mapper = &uct_mm_posix_mapper};

uct_mm_component_t uct_mm_sysv_component = {
    .super  = {.name               = UCT_MM_SYSV_NAME,
               .query_md_resources = uct_md_query_single_md_resource,
               .md_open            = uct_mm_md_open,
               .rkey_unpack        = uct_mm_rkey_unpack,
               .rkey_ptr           = uct_mm_rkey_ptr,
               .rkey_release       = uct_mm_rkey_release,
               .md_config          = {.name   = "System V memory domain",
                                      .prefix = "SYSV_",
                                      .table  = uct_mm_sysv_md_config_table,
                                      .size   = sizeof(uct_mm_md_config_t)},
               .flags              = UCT_COMPONENT_FLAG_RKEY_PTR},
    .mapper = &uct_mm_sysv_mapper};

void uct_mm_register(void)
{
    uct_component_register(&uct_mm_posix_component.super);
    uct_tl_register(&uct_mm_posix_component.super, &uct_mm_posix_tl);
    uct_component_register(&uct_mm_sysv_component.super);
    uct_tl_register(&uct_mm_sysv_component.super, &uct_mm_sysv_tl);
}
