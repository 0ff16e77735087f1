/*
 * uct_info -y: sizes of the structures of the installed headers, and the
 * heap that a worker, an interface and an endpoint of each transport take,
 * measured through the API.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "uct_info.h"

#include <uct/api/uct.h>
#include <uct/api/tl.h>
#include <uct/base/uct_component.h>
#include <uct/base/uct_desc.h>
#include <uct/base/uct_iface.h>
#include <uct/base/uct_md.h>
#include <uct/base/uct_pending.h>
#include <uct/base/uct_worker.h>
#include <ucs/async/async.h>
#include <ucs/config/parser.h>
#include <ucs/datastruct/arbiter.h>
#include <ucs/datastruct/callbackq.h>
#include <ucs/datastruct/hash.h>
#include <ucs/datastruct/list.h>
#include <ucs/datastruct/ptr_array.h>
#include <ucs/datastruct/queue.h>
#include <ucs/datastruct/string_buffer.h>
#include <ucs/memory/mpool.h>
#include <ucs/memory/rcache.h>
#include <ucs/sys/sys.h>
#include <ucs/sys/topo.h>
#include <ucs/time/time_def.h>
#include <ucs/type/cpu_set.h>
#include <ucs/type/spinlock.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Endpoints created per transport to average the heap of one */
#define UCT_INFO_NUM_EPS 16

/* Name column width of the size listing */
#define UCT_INFO_TYPE_WIDTH 36

typedef struct {
    const char *name;
    size_t size;
} uct_info_type_size_t;

#define UCT_INFO_TYPE(_type)  \
    {                         \
#_type, sizeof(_type) \
    }

static const uct_info_type_size_t uct_info_ucs_types[] = {
    UCT_INFO_TYPE(ucs_status_t),
    UCT_INFO_TYPE(ucs_list_link_t),
    UCT_INFO_TYPE(ucs_queue_head_t),
    UCT_INFO_TYPE(ucs_queue_elem_t),
    UCT_INFO_TYPE(ucs_ptr_array_t),
    UCT_INFO_TYPE(ucs_hash_t),
    UCT_INFO_TYPE(ucs_string_buffer_t),
    UCT_INFO_TYPE(ucs_callbackq_t),
    UCT_INFO_TYPE(ucs_callbackq_elem_t),
    UCT_INFO_TYPE(ucs_arbiter_t),
    UCT_INFO_TYPE(ucs_arbiter_group_t),
    UCT_INFO_TYPE(ucs_arbiter_elem_t),
    UCT_INFO_TYPE(ucs_mpool_t),
    UCT_INFO_TYPE(ucs_mpool_elem_t),
    UCT_INFO_TYPE(ucs_mpool_params_t),
    UCT_INFO_TYPE(ucs_rcache_region_t),
    UCT_INFO_TYPE(ucs_rcache_params_t),
    UCT_INFO_TYPE(ucs_config_field_t),
    UCT_INFO_TYPE(ucs_config_parser_t),
    UCT_INFO_TYPE(ucs_spinlock_t),
    UCT_INFO_TYPE(ucs_recursive_spinlock_t),
    UCT_INFO_TYPE(ucs_cpu_set_t),
    UCT_INFO_TYPE(ucs_sys_bus_id_t),
    UCT_INFO_TYPE(ucs_time_t),
    {NULL, 0}};

static const uct_info_type_size_t uct_info_uct_api_types[] = {
    UCT_INFO_TYPE(uct_iface_attr_t),
    UCT_INFO_TYPE(uct_iface_params_t),
    UCT_INFO_TYPE(uct_md_attr_t),
    UCT_INFO_TYPE(uct_component_attr_t),
    UCT_INFO_TYPE(uct_tl_resource_desc_t),
    UCT_INFO_TYPE(uct_md_resource_desc_t),
    UCT_INFO_TYPE(uct_ep_params_t),
    UCT_INFO_TYPE(uct_completion_t),
    UCT_INFO_TYPE(uct_pending_req_t),
    UCT_INFO_TYPE(uct_iov_t),
    UCT_INFO_TYPE(uct_rkey_bundle_t),
    UCT_INFO_TYPE(uct_allocated_memory_t),
    UCT_INFO_TYPE(uct_ppn_bandwidth_t),
    UCT_INFO_TYPE(uct_mem_h),
    UCT_INFO_TYPE(uct_rkey_t),
    {NULL, 0}};

static const uct_info_type_size_t uct_info_uct_base_types[] = {
    UCT_INFO_TYPE(uct_iface_ops_t),
    UCT_INFO_TYPE(uct_iface_t),
    UCT_INFO_TYPE(uct_base_iface_t),
    UCT_INFO_TYPE(uct_ep_t),
    UCT_INFO_TYPE(uct_base_ep_t),
    UCT_INFO_TYPE(uct_md_t),
    UCT_INFO_TYPE(uct_md_ops_t),
    UCT_INFO_TYPE(uct_tl_t),
    UCT_INFO_TYPE(uct_am_handler_t),
    UCT_INFO_TYPE(uct_priv_worker_t),
    UCT_INFO_TYPE(uct_pending_group_t),
    UCT_INFO_TYPE(uct_config_bundle_t),
    {NULL, 0}};

/* Pads @a name (UCT_INFO_TYPE_WIDTH + 1 bytes) with dots to the column */
static void uct_info_pad(char *name, int len)
{
    if ((len >= 0) && (len < UCT_INFO_TYPE_WIDTH)) {
        memset(name + len, '.', UCT_INFO_TYPE_WIDTH - len);
        name[UCT_INFO_TYPE_WIDTH] = '\0';
    }
}

static void uct_info_print_type_list(const char *title,
                                     const uct_info_type_size_t *types)
{
    const uct_info_type_size_t *type;
    char name[UCT_INFO_TYPE_WIDTH + 1];
    int len;

    printf("%s:\n", title);
    for (type = types; type->name != NULL; ++type) {
        len = snprintf(name, sizeof(name), "sizeof(%s) = ", type->name);
        uct_info_pad(name, len);
        printf("    %s %zu\n", name, type->size);
    }
    printf("\n");
}

/* ------------------------------------------------------------------------
 * Heap of live objects, measured around their creation
 */

/* Tells whether @a resource is the first of its transport in the list */
static int uct_info_first_of_tl(const uct_tl_resource_desc_t *resources,
                                unsigned index)
{
    unsigned i;

    for (i = 0; i < index; ++i) {
        if (!strcmp(resources[i].tl_name, resources[index].tl_name)) {
            return 0;
        }
    }
    return 1;
}

/* Bytes of shared mappings of this process (mappings with an 's' in
 * their permissions in /proc/self/maps): the shared memory of the
 * shared-memory transports. -1 when the file cannot be read. */
static long uct_info_shared_mapped(void)
{
    unsigned long start, end;
    char perms[8], line[512];
    long total = 0;
    FILE *maps;

    maps = fopen("/proc/self/maps", "r");
    if (maps == NULL) {
        return -1;
    }
    while (fgets(line, sizeof(line), maps) != NULL) {
        if ((sscanf(line, "%lx-%lx %7s", &start, &end, perms) == 3) &&
            (perms[3] == 's')) {
            total += (long)(end - start);
        }
    }
    fclose(maps);
    return total;
}

/* Creates UCT_INFO_NUM_EPS endpoints on @a iface, to itself when it
 * connects to an interface, unconnected when it connects to an endpoint;
 * sets @a per_ep_p to the average heap of one. */
static ucs_status_t uct_info_measure_eps(uct_iface_h iface,
                                         const uct_iface_attr_t *attr,
                                         double *per_ep_p)
{
    uct_ep_h eps[UCT_INFO_NUM_EPS];
    uct_device_addr_t *dev_addr;
    uct_iface_addr_t *iface_addr;
    uct_ep_params_t params;
    ucs_status_t status;
    unsigned i, num_eps;
    size_t before;

    dev_addr   = calloc(1, attr->device_addr_len + 1);
    iface_addr = calloc(1, attr->iface_addr_len + 1);
    if ((dev_addr == NULL) || (iface_addr == NULL)) {
        status = UCS_ERR_NO_MEMORY;
        goto out;
    }

    memset(&params, 0, sizeof(params));
    params.field_mask = UCT_EP_PARAM_FIELD_IFACE;
    params.iface      = iface;
    if (attr->cap.flags & UCT_IFACE_FLAG_CONNECT_TO_IFACE) {
        status = uct_iface_get_device_address(iface, dev_addr);
        if (status != UCS_OK) {
            goto out;
        }
        status = uct_iface_get_address(iface, iface_addr);
        if (status != UCS_OK) {
            goto out;
        }
        params.field_mask |=
            UCT_EP_PARAM_FIELD_DEV_ADDR | UCT_EP_PARAM_FIELD_IFACE_ADDR;
        params.dev_addr   = dev_addr;
        params.iface_addr = iface_addr;
    } else if (!(attr->cap.flags & UCT_IFACE_FLAG_CONNECT_TO_EP)) {
        status = UCS_ERR_UNSUPPORTED;
        goto out;
    }

    before = ucs_sys_heap_in_use();
    status = UCS_OK;
    for (num_eps = 0; num_eps < UCT_INFO_NUM_EPS; ++num_eps) {
        status = uct_ep_create(&params, &eps[num_eps]);
        if (status != UCS_OK) {
            break;
        }
    }
    if (status == UCS_OK) {
        *per_ep_p = ucs_sys_heap_per_object(before, ucs_sys_heap_in_use(),
                                            UCT_INFO_NUM_EPS);
    }
    for (i = 0; i < num_eps; ++i) {
        uct_ep_destroy(eps[i]);
    }

out:
    free(iface_addr);
    free(dev_addr);
    return status;
}

static void uct_info_measure_resource(uct_md_h md, uct_worker_h worker,
                                      const uct_tl_resource_desc_t *resource)
{
    uct_iface_config_t *config;
    uct_iface_params_t params;
    uct_iface_attr_t attr;
    ucs_status_t status;
    uct_iface_h iface;
    double per_iface, per_ep = 0;
    size_t before;
    long shm_before, shm = 0;
    char name[UCT_INFO_TYPE_WIDTH + 1], shm_text[64];
    int len;

    len = snprintf(name, sizeof(name), "%s/%s ", resource->tl_name,
                   resource->dev_name);
    uct_info_pad(name, len);

    status =
        uct_md_iface_config_read(md, resource->tl_name, NULL, NULL, &config);
    if (status != UCS_OK) {
        printf("    %s cannot read the configuration: %s\n", name,
               ucs_status_string(status));
        return;
    }

    memset(&params, 0, sizeof(params));
    params.field_mask =
        UCT_IFACE_PARAM_FIELD_OPEN_MODE | UCT_IFACE_PARAM_FIELD_DEVICE;
    params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = resource->tl_name;
    params.mode.device.dev_name = resource->dev_name;

    shm_before = uct_info_shared_mapped();
    before     = ucs_sys_heap_in_use();
    status     = uct_iface_open(md, worker, &params, config, &iface);
    uct_config_release(config);
    if (status != UCS_OK) {
        printf("    %s cannot open: %s\n", name, ucs_status_string(status));
        return;
    }
    per_iface = ucs_sys_heap_per_object(before, ucs_sys_heap_in_use(), 1);
    if (shm_before >= 0) {
        shm = uct_info_shared_mapped() - shm_before;
    }
    shm_text[0] = '\0';
    if (shm > 0) {
        snprintf(shm_text, sizeof(shm_text), ", shared memory %ld", shm);
    }

    status = uct_iface_query(iface, &attr);
    if (status == UCS_OK) {
        status = uct_info_measure_eps(iface, &attr, &per_ep);
    }
    if (status == UCS_OK) {
        printf("    %s iface %.0f, ep %.0f%s\n", name, per_iface, per_ep,
               shm_text);
    } else {
        printf("    %s iface %.0f, ep not measured: %s%s\n", name, per_iface,
               ucs_status_string(status), shm_text);
    }
    uct_iface_close(iface);
}

static void uct_info_measure_md(uct_component_h component, const char *md_name,
                                uct_worker_h worker)
{
    uct_tl_resource_desc_t *resources;
    uct_md_config_t *md_config;
    unsigned i, num_resources;
    ucs_status_t status;
    uct_md_h md;

    status = uct_md_config_read(component, NULL, NULL, &md_config);
    if (status != UCS_OK) {
        printf("    %s: cannot read the configuration: %s\n", md_name,
               ucs_status_string(status));
        return;
    }

    status = uct_md_open(component, md_name, md_config, &md);
    uct_config_release(md_config);
    if (status != UCS_OK) {
        printf("    %s: cannot open: %s\n", md_name, ucs_status_string(status));
        return;
    }

    status = uct_md_query_tl_resources(md, &resources, &num_resources);
    if (status == UCS_OK) {
        /* One device per transport: the others cost the same */
        for (i = 0; i < num_resources; ++i) {
            if (uct_info_first_of_tl(resources, i)) {
                uct_info_measure_resource(md, worker, &resources[i]);
            }
        }
        uct_release_tl_resource_list(resources);
    } else {
        printf("    %s: cannot list transports: %s\n", md_name,
               ucs_status_string(status));
    }
    uct_md_close(md);
}

static void uct_info_measure_component(uct_component_h component,
                                       uct_worker_h worker)
{
    uct_md_resource_desc_t *md_resources;
    uct_component_attr_t attr;
    unsigned i;

    attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
    if (uct_component_query(component, &attr) != UCS_OK) {
        return;
    }

    md_resources = calloc(attr.md_resource_count + 1, sizeof(*md_resources));
    if (md_resources == NULL) {
        return;
    }

    attr.field_mask   = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
    attr.md_resources = md_resources;
    if (uct_component_query(component, &attr) == UCS_OK) {
        for (i = 0; i < attr.md_resource_count; ++i) {
            uct_info_measure_md(component, md_resources[i].md_name, worker);
        }
    }
    free(md_resources);
}

static int uct_info_print_heap(void)
{
    uct_component_h *components;
    unsigned i, num_components;
    ucs_async_context_t *async;
    char name[UCT_INFO_TYPE_WIDTH + 1];
    uct_worker_h worker;
    ucs_status_t status;
    size_t before;
    int ret = 0;

    printf("Heap of live objects (bytes, measured around their creation;\n"
           "one device per transport, an endpoint is the average of %d, "
           "just created: a\nconnecting endpoint still holds its connection "
           "state and buffers, which an\nidle connected tcp endpoint gives "
           "back after about a second;\nshared memory: the shared mappings "
           "an interface added, as the receive\nFIFO and descriptors of "
           "posix and sysv):\n%s\n",
           UCT_INFO_NUM_EPS, UCS_SYS_HEAP_DEFINITION);
    if (ucs_sys_heap_in_use() == 0) {
        printf("    not measurable: the C library has no mallinfo2(), or "
               "the allocator is not\n    glibc's\n\n");
        return 0;
    }

    /* Listing the components first loads the modules outside the figures */
    status = uct_query_components(&components, &num_components);
    if (status != UCS_OK) {
        fprintf(stderr, "uct_info: cannot list components: %s\n",
                ucs_status_string(status));
        return 1;
    }

    /* Polled: no thread accepts connections while endpoints are counted */
    status = ucs_async_context_create(UCS_ASYNC_MODE_POLL, &async);
    if (status != UCS_OK) {
        fprintf(stderr, "uct_info: cannot create an async context: %s\n",
                ucs_status_string(status));
        ret = 1;
        goto out_components;
    }

    before = ucs_sys_heap_in_use();
    status = uct_worker_create(async, UCS_THREAD_MODE_SINGLE, &worker);
    if (status != UCS_OK) {
        fprintf(stderr, "uct_info: cannot create a worker: %s\n",
                ucs_status_string(status));
        ret = 1;
        goto out_async;
    }
    uct_info_pad(name, snprintf(name, sizeof(name), "worker "));
    printf("    %s %.0f\n", name,
           ucs_sys_heap_per_object(before, ucs_sys_heap_in_use(), 1));

    for (i = 0; i < num_components; ++i) {
        uct_info_measure_component(components[i], worker);
    }
    printf("\n");

    uct_worker_destroy(worker);
out_async:
    ucs_async_context_destroy(async);
out_components:
    uct_release_component_list(components);
    return ret;
}

int uct_info_print_types(void)
{
    uct_info_print_type_list("UCS", uct_info_ucs_types);
    uct_info_print_type_list("UCT API", uct_info_uct_api_types);
    uct_info_print_type_list("UCT transport base", uct_info_uct_base_types);
    return uct_info_print_heap();
}
