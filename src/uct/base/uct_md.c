/*
 * Memory domain API: open/close/query, transport resources, registration,
 * remote keys.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <uct/base/uct_md.h>
#include <uct/base/uct_iface.h>
#include <uct/base/uct_vfs.h>
#include <ucs/datastruct/string_buffer.h>
#include <ucs/debug/log.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

ucs_config_field_t uct_md_config_table[] = {{NULL}};

void uct_md_base_init(uct_md_t *md, const uct_md_ops_t *ops,
                      uct_component_t *component)
{
    md->ops       = ops;
    md->component = component;
    md->vfs       = NULL;
}

void uct_md_base_attr_init(uct_md_h md, uct_md_attr_t *md_attr)
{
    memset(md_attr, 0, sizeof(*md_attr));
    snprintf(md_attr->component_name, sizeof(md_attr->component_name), "%s",
             md->component->name);
    md_attr->cap.access_mem_types = UCS_BIT(UCS_MEMORY_TYPE_HOST);
    md_attr->cap.max_alloc        = 0;
    md_attr->cap.max_reg          = 0;
    UCS_CPU_ZERO(&md_attr->local_cpus);
}

ucs_status_t uct_md_dummy_mem_reg(uct_md_h md, void *address, size_t length,
                                  unsigned flags, uct_mem_h *memh_p)
{
    /* Any non-NULL value: there is nothing to keep */
    *memh_p = (void *)0xdeadbeef;
    return UCS_OK;
}

ucs_status_t uct_md_dummy_mem_dereg(uct_md_h md, uct_mem_h memh)
{
    return UCS_OK;
}

ucs_status_t uct_md_stub_rkey_unpack(uct_component_t *component,
                                     const void *rkey_buffer,
                                     uct_rkey_t *rkey_p, void **handle_p)
{
    *rkey_p   = 0xdeadbeef;
    *handle_p = NULL;
    return UCS_OK;
}

ucs_status_t uct_md_stub_rkey_release(uct_component_t *component,
                                      uct_rkey_t rkey, void *handle)
{
    return UCS_OK;
}

ucs_status_t uct_md_open(uct_component_h component, const char *md_name,
                         const uct_md_config_t *config, uct_md_h *md_p)
{
    uct_md_resource_desc_t *resources;
    unsigned i, num_resources;
    ucs_status_t status;
    uct_md_h md;
    int found = 0;

    if ((component == NULL) || (md_name == NULL) || (md_p == NULL)) {
        ucs_error("uct_md_open: NULL %s", (component == NULL) ? "component"
                                          : (md_name == NULL) ? "md_name"
                                                              : "md_p");
        return UCS_ERR_INVALID_PARAM;
    }

    status =
        component->query_md_resources(component, &resources, &num_resources);
    if (status != UCS_OK) {
        return status;
    }
    for (i = 0; i < num_resources; ++i) {
        if (!strcmp(resources[i].md_name, md_name)) {
            found = 1;
        }
    }
    free(resources);
    if (!found) {
        ucs_error("memory domain '%s' does not exist in component '%s'; "
                  "run uct_info -d to list memory domains",
                  md_name, component->name);
        return UCS_ERR_NO_DEVICE;
    }

    status = component->md_open(component, md_name, config, &md);
    if (status != UCS_OK) {
        ucs_debug("failed to open memory domain '%s': %s", md_name,
                  ucs_status_string(status));
        return status;
    }

    ucs_assert_always(md->component == component);
    uct_md_vfs_init(md, md_name);
    *md_p = md;
    return UCS_OK;
}

void uct_md_close(uct_md_h md)
{
    if (md != NULL) {
        uct_md_vfs_cleanup(md);
        md->ops->close(md);
    }
}

ucs_status_t uct_md_query(uct_md_h md, uct_md_attr_t *md_attr)
{
    if ((md == NULL) || (md_attr == NULL)) {
        ucs_error("uct_md_query: NULL %s", (md == NULL) ? "md" : "md_attr");
        return UCS_ERR_INVALID_PARAM;
    }

    return md->ops->query(md, md_attr);
}

/* ------------------------------------------------------------------------
 * UCX_NET_DEVICES: the network devices transports may offer. Read at each
 * resource query, so a change of the environment takes effect at once.
 */

typedef struct uct_net_config {
    ucs_config_allow_list_t net_devices;
} uct_net_config_t;

static ucs_config_field_t uct_net_config_table[] = {
    {"NET_DEVICES", "all",
     "Network devices the transports offer, by the names uct_info -d\n"
     "shows: \"all\", a list such as \"eth0,lo\", or \"^eth1\" for all but\n"
     "the listed ones. Names are compared whole; an empty value selects\n"
     "none. Devices that are not network devices (memory, shared memory)\n"
     "are not affected.",
     ucs_offsetof(uct_net_config_t, net_devices), UCS_CONFIG_TYPE_ALLOW_LIST},

    {NULL}};

UCS_CONFIG_REGISTER_TABLE(uct_net_config_table, "Network devices", "",
                          uct_net_config_t)

/* The values of UCX_NET_DEVICES whose names were checked against the
 * devices of every transport (each is checked once per process) */
static pthread_mutex_t uct_net_checked_lock = PTHREAD_MUTEX_INITIALIZER;
static ucs_config_names_array_t uct_net_checked;

/* An empty UCX_NET_DEVICES was reported; a query with another value
 * clears it, so the next empty value is reported again */
static int uct_net_empty_reported;

/* The filter of one resource query */
typedef struct uct_net_filter {
    uct_net_config_t config;
    uint8_t *matched; /* per listed name: a device has that name */
} uct_net_filter_t;

static void UCS_F_DTOR uct_net_checked_release(void)
{
    ucs_config_names_array_release(&uct_net_checked, NULL);
}

/* Adds @a name to @a array unless there; 0 if it was there already. */
static int uct_net_names_add(ucs_config_names_array_t *array, const char *name)
{
    char **names, *copy;

    if (ucs_config_names_search(array, name) >= 0) {
        return 0;
    }

    copy  = strdup(name);
    names = realloc(array->names, sizeof(*names) * (array->count + 1));
    if ((copy == NULL) || (names == NULL)) {
        free(copy);
        if (names != NULL) {
            array->names = names;
        }
        ucs_debug("no memory to remember the network device name '%s'", name);
        return 1;
    }

    names[array->count++] = copy;
    array->names          = names;
    return 1;
}

static ucs_status_t uct_net_filter_init(uct_net_filter_t *filter)
{
    ucs_status_t status;
    unsigned count;

    /* a bad value is reported by the parser: variable, value, syntax */
    status = ucs_config_parser_fill_opts(&filter->config, uct_net_config_table,
                                         NULL, NULL, 0);
    if (status != UCS_OK) {
        return status;
    }

    count           = filter->config.net_devices.array.count;
    filter->matched = NULL;
    if (count > 0) {
        filter->matched = calloc(count, sizeof(*filter->matched));
        if (filter->matched == NULL) {
            ucs_error("failed to allocate the UCX_NET_DEVICES filter (%u "
                      "names)",
                      count);
            ucs_config_parser_release_opts(&filter->config,
                                           uct_net_config_table);
            return UCS_ERR_NO_MEMORY;
        }
    }

    return UCS_OK;
}

static void uct_net_filter_cleanup(uct_net_filter_t *filter)
{
    free(filter->matched);
    ucs_config_parser_release_opts(&filter->config, uct_net_config_table);
}

/* Whether @a device of @a tl passes; records which listed name it has. */
static int uct_net_filter_allows(uct_net_filter_t *filter, const uct_tl_t *tl,
                                 const uct_tl_device_resource_t *device)
{
    const ucs_config_allow_list_t *list = &filter->config.net_devices;
    int index;

    if (device->type != UCT_DEVICE_TYPE_NET) {
        return 1;
    }

    index = ucs_config_names_search(&list->array, device->name);
    if (index >= 0) {
        filter->matched[index] = 1;
    }

    if (ucs_config_allow_list_is_allowed(list, device->name)) {
        return 1;
    }

    ucs_debug("%s/%s is left out by UCX_NET_DEVICES", tl->name, device->name);
    return 0;
}

/* Whether every listed name was a device name of the query */
static int uct_net_filter_all_matched(const uct_net_filter_t *filter)
{
    unsigned i;

    for (i = 0; i < filter->config.net_devices.array.count; ++i) {
        if (!filter->matched[i]) {
            return 0;
        }
    }
    return 1;
}

/* Adds the network devices of every transport of @a md to @a names. */
static void uct_net_names_of_md(uct_md_h md, ucs_config_names_array_t *names)
{
    uct_tl_device_resource_t *devices;
    unsigned i, num_devices;
    uct_tl_t *tl;

    ucs_list_for_each(tl, &md->component->tl_list, list) {
        if (tl->query_devices(md, &devices, &num_devices) != UCS_OK) {
            continue;
        }
        for (i = 0; i < num_devices; ++i) {
            if (devices[i].type == UCT_DEVICE_TYPE_NET) {
                uct_net_names_add(names, devices[i].name);
            }
        }
        free(devices);
    }
}

/* Adds the network devices of every memory domain of @a component. */
static void uct_net_names_of_component(uct_component_t *component,
                                       ucs_config_names_array_t *names)
{
    uct_md_resource_desc_t *md_resources;
    uct_md_config_t *md_config;
    unsigned i, num_mds;
    ucs_status_t status;
    uct_md_h md;

    if (component->query_md_resources(component, &md_resources, &num_mds) !=
        UCS_OK) {
        return;
    }

    for (i = 0; i < num_mds; ++i) {
        md_config = NULL;
        if ((component->md_config.table != NULL) &&
            (uct_md_config_read(component, NULL, NULL, &md_config) != UCS_OK)) {
            continue;
        }

        status =
            uct_md_open(component, md_resources[i].md_name, md_config, &md);
        uct_config_release(md_config);
        if (status != UCS_OK) {
            continue;
        }

        uct_net_names_of_md(md, names);
        uct_md_close(md);
    }

    free(md_resources);
}

/*
 * "UCX_NET_DEVICES=" allows no network device at all, which is rarely
 * meant (an unset shell variable, say): say so once while the value stays
 * empty, whatever the number of memory domains queried.
 */
static void uct_net_filter_check_empty(const uct_net_filter_t *filter)
{
    const ucs_config_allow_list_t *list = &filter->config.net_devices;
    int empty, report;

    empty =
        (list->mode == UCS_CONFIG_ALLOW_LIST_ALLOW) && (list->array.count == 0);

    pthread_mutex_lock(&uct_net_checked_lock);
    report                 = empty && !uct_net_empty_reported;
    uct_net_empty_reported = empty;
    pthread_mutex_unlock(&uct_net_checked_lock);

    if (report) {
        ucs_warn("UCX_NET_DEVICES is empty: no network device is selected; "
                 "unset it or set it to 'all' (uct_info -d lists the "
                 "devices)");
    }
}

/*
 * A listed name that no device of this memory domain has may belong to
 * another component (an InfiniBand port while tcp is queried), so look at
 * the network devices of every transport; warn about names none has.
 * Once per process for each value.
 */
static void uct_net_filter_check_names(const uct_net_filter_t *filter)
{
    const ucs_config_allow_list_t *list = &filter->config.net_devices;
    ucs_config_names_array_t all        = {NULL, 0};
    ucs_string_buffer_t value, unknown, available;
    uct_component_h *components;
    unsigned i, num_components, num_unknown = 0;
    int first;

    if (uct_net_filter_all_matched(filter)) {
        return;
    }

    ucs_string_buffer_init(&value);
    ucs_string_buffer_init(&unknown);
    ucs_string_buffer_init(&available);

    ucs_string_buffer_appendf(
        &value, "%s", (list->mode == UCS_CONFIG_ALLOW_LIST_NEGATE) ? "^" : "");
    for (i = 0; i < list->array.count; ++i) {
        ucs_string_buffer_appendf(&value, "%s%s", (i == 0) ? "" : ",",
                                  list->array.names[i]);
    }

    pthread_mutex_lock(&uct_net_checked_lock);
    first = uct_net_names_add(&uct_net_checked, ucs_string_buffer_cstr(&value));
    pthread_mutex_unlock(&uct_net_checked_lock);
    if (!first) {
        goto out;
    }

    if (uct_query_components(&components, &num_components) != UCS_OK) {
        goto out;
    }
    for (i = 0; i < num_components; ++i) {
        uct_net_names_of_component(components[i], &all);
    }
    uct_release_component_list(components);

    for (i = 0; i < list->array.count; ++i) {
        if (ucs_config_names_search(&all, list->array.names[i]) < 0) {
            ucs_string_buffer_appendf(&unknown, "%s'%s'",
                                      (num_unknown == 0) ? "" : ", ",
                                      list->array.names[i]);
            ++num_unknown;
        }
    }
    if (num_unknown == 0) {
        goto out;
    }

    for (i = 0; i < all.count; ++i) {
        ucs_string_buffer_appendf(&available, "%s%s", (i == 0) ? "" : ", ",
                                  all.names[i]);
    }
    ucs_warn("UCX_NET_DEVICES=%s: %s %s no network device of any transport; "
             "available network devices: %s (uct_info -d lists them)",
             ucs_string_buffer_cstr(&value), ucs_string_buffer_cstr(&unknown),
             (num_unknown == 1) ? "matches" : "match",
             (all.count > 0) ? ucs_string_buffer_cstr(&available) : "none");

out:
    ucs_config_names_array_release(&all, NULL);
    ucs_string_buffer_cleanup(&available);
    ucs_string_buffer_cleanup(&unknown);
    ucs_string_buffer_cleanup(&value);
}

ucs_status_t uct_md_query_tl_resources(uct_md_h md,
                                       uct_tl_resource_desc_t **resources_p,
                                       unsigned *num_resources_p)
{
    uct_tl_resource_desc_t *resources = NULL, *tmp;
    uct_tl_device_resource_t *devices;
    unsigned i, num_devices, count = 0;
    uct_net_filter_t filter;
    ucs_status_t status;
    uct_tl_t *tl;

    if ((md == NULL) || (resources_p == NULL) || (num_resources_p == NULL)) {
        ucs_error("uct_md_query_tl_resources: NULL %s",
                  (md == NULL) ? "md" : "output argument");
        return UCS_ERR_INVALID_PARAM;
    }

    status = uct_net_filter_init(&filter);
    if (status != UCS_OK) {
        return status;
    }

    ucs_list_for_each(tl, &md->component->tl_list, list) {
        status = tl->query_devices(md, &devices, &num_devices);
        if (status != UCS_OK) {
            ucs_debug("failed to query devices of transport '%s': %s", tl->name,
                      ucs_status_string(status));
            continue;
        }
        if (num_devices == 0) {
            free(devices);
            continue;
        }

        tmp = realloc(resources, sizeof(*resources) * (count + num_devices));
        if (tmp == NULL) {
            ucs_error("failed to allocate the transport resource list");
            free(devices);
            status = UCS_ERR_NO_MEMORY;
            goto err_free;
        }
        resources = tmp;

        for (i = 0; i < num_devices; ++i) {
            if (!uct_net_filter_allows(&filter, tl, &devices[i])) {
                continue;
            }
            memset(&resources[count], 0, sizeof(resources[count]));
            snprintf(resources[count].tl_name, sizeof(resources[count].tl_name),
                     "%s", tl->name);
            snprintf(resources[count].dev_name,
                     sizeof(resources[count].dev_name), "%s", devices[i].name);
            resources[count].dev_type   = devices[i].type;
            resources[count].sys_device = devices[i].sys_device;
            ++count;
        }
        free(devices);
    }

    uct_net_filter_check_empty(&filter);
    uct_net_filter_check_names(&filter);
    uct_net_filter_cleanup(&filter);
    *resources_p     = resources;
    *num_resources_p = count;
    return UCS_OK;

err_free:
    free(resources);
    uct_net_filter_cleanup(&filter);
    return status;
}

void uct_release_tl_resource_list(uct_tl_resource_desc_t *resources)
{
    free(resources);
}

ucs_status_t uct_md_iface_config_read(uct_md_h md, const char *tl_name,
                                      const char *env_prefix,
                                      const char *filename,
                                      uct_iface_config_t **config_p)
{
    uct_config_bundle_t *bundle;
    ucs_status_t status;
    uct_tl_t *tl;

    if ((md == NULL) || (config_p == NULL)) {
        ucs_error("uct_md_iface_config_read: NULL %s",
                  (md == NULL) ? "md" : "config_p");
        return UCS_ERR_INVALID_PARAM;
    }

    if (tl_name == NULL) {
        ucs_error("uct_md_iface_config_read: NULL transport name");
        return UCS_ERR_INVALID_PARAM;
    }

    tl = uct_component_find_tl(md->component, tl_name);
    if (tl == NULL) {
        ucs_error("transport '%s' does not exist in component '%s'; run "
                  "uct_info -d to list transports",
                  tl_name, md->component->name);
        return UCS_ERR_NO_DEVICE;
    }

    status = uct_config_read(&bundle, &tl->config, env_prefix, filename);
    if (status != UCS_OK) {
        /* the parser logged the variable, the value and the syntax */
        ucs_debug("failed to read the configuration of transport '%s': %s",
                  tl_name, ucs_status_string(status));
        return status;
    }

    *config_p = (uct_iface_config_t *)bundle->data;
    return UCS_OK;
}

void uct_md_print_info(uct_md_h md, FILE *stream)
{
    if ((md != NULL) && (md->ops->print_info != NULL)) {
        md->ops->print_info(md, stream);
    }
}

ucs_status_t uct_md_mem_advise(uct_md_h md, uct_mem_h memh, void *addr,
                               size_t length, uct_mem_advice_t advice)
{
    if ((md == NULL) || (memh == UCT_MEM_HANDLE_NULL) || (length == 0)) {
        ucs_error("uct_md_mem_advise: %s", (md == NULL) ? "NULL md"
                                           : (length == 0)
                                               ? "zero length"
                                               : "NULL memory handle");
        return UCS_ERR_INVALID_PARAM;
    }
    if (md->ops->mem_advise == NULL) {
        return UCS_ERR_UNSUPPORTED;
    }
    return md->ops->mem_advise(md, memh, addr, length, advice);
}

ucs_status_t uct_md_mem_reg(uct_md_h md, void *address, size_t length,
                            unsigned flags, uct_mem_h *memh_p)
{
    if ((md == NULL) || (memh_p == NULL)) {
        ucs_error("uct_md_mem_reg: NULL %s", (md == NULL) ? "md" : "memh_p");
        return UCS_ERR_INVALID_PARAM;
    }
    if ((address == NULL) || (length == 0)) {
        ucs_error("uct_md_mem_reg(%s): invalid region %p length %zu",
                  md->component->name, address, length);
        return UCS_ERR_INVALID_PARAM;
    }
    if (md->ops->mem_reg == NULL) {
        return UCS_ERR_UNSUPPORTED;
    }
    return md->ops->mem_reg(md, address, length, flags, memh_p);
}

ucs_status_t uct_md_mem_dereg(uct_md_h md, uct_mem_h memh)
{
    if (md == NULL) {
        ucs_error("uct_md_mem_dereg: NULL md");
        return UCS_ERR_INVALID_PARAM;
    }
    if (memh == UCT_MEM_HANDLE_NULL) {
        ucs_error("uct_md_mem_dereg(%s): NULL memory handle",
                  md->component->name);
        return UCS_ERR_INVALID_PARAM;
    }
    if (md->ops->mem_dereg == NULL) {
        return UCS_ERR_UNSUPPORTED;
    }
    return md->ops->mem_dereg(md, memh);
}

ucs_status_t uct_md_mem_query(uct_md_h md, const void *address, size_t length,
                              uct_md_mem_attr_t *mem_attr)
{
    if ((md == NULL) || (mem_attr == NULL)) {
        ucs_error("uct_md_mem_query: NULL %s",
                  (md == NULL) ? "md" : "mem_attr");
        return UCS_ERR_INVALID_PARAM;
    }
    if (md->ops->mem_query == NULL) {
        return UCS_ERR_UNSUPPORTED;
    }
    return md->ops->mem_query(md, address, length, mem_attr);
}

ucs_status_t uct_md_detect_memory_type(uct_md_h md, const void *addr,
                                       size_t length,
                                       ucs_memory_type_t *mem_type_p)
{
    if ((md == NULL) || (mem_type_p == NULL)) {
        ucs_error("uct_md_detect_memory_type: NULL %s",
                  (md == NULL) ? "md" : "mem_type_p");
        return UCS_ERR_INVALID_PARAM;
    }
    if (md->ops->detect_memory_type == NULL) {
        return UCS_ERR_UNSUPPORTED;
    }
    return md->ops->detect_memory_type(md, addr, length, mem_type_p);
}

ucs_status_t uct_md_mkey_pack(uct_md_h md, uct_mem_h memh, void *rkey_buffer)
{
    if ((md == NULL) || (rkey_buffer == NULL)) {
        ucs_error("uct_md_mkey_pack: NULL %s",
                  (md == NULL) ? "md" : "rkey buffer");
        return UCS_ERR_INVALID_PARAM;
    }
    if (md->ops->mkey_pack == NULL) {
        return UCS_ERR_UNSUPPORTED;
    }
    return md->ops->mkey_pack(md, memh, rkey_buffer);
}

ucs_status_t uct_rkey_unpack(uct_component_h component, const void *rkey_buffer,
                             uct_rkey_bundle_t *rkey_ob)
{
    uct_rkey_t rkey;
    void *handle;
    ucs_status_t status;

    if ((component == NULL) || (rkey_ob == NULL)) {
        ucs_error("uct_rkey_unpack: NULL %s",
                  (component == NULL) ? "component" : "rkey bundle");
        return UCS_ERR_INVALID_PARAM;
    }
    /* A component whose remote keys are empty (rkey_packed_size 0: the
     * stub unpacks them) takes a NULL buffer, as UCX does; one whose keys
     * carry bytes cannot */
    if ((rkey_buffer == NULL) &&
        (component->rkey_unpack != uct_md_stub_rkey_unpack)) {
        ucs_error("uct_rkey_unpack: NULL rkey buffer for component '%s', "
                  "whose remote keys are not empty: pass the bytes "
                  "uct_md_mkey_pack() wrote",
                  component->name);
        return UCS_ERR_INVALID_PARAM;
    }

    status = component->rkey_unpack(component, rkey_buffer, &rkey, &handle);
    if (status != UCS_OK) {
        return status;
    }

    rkey_ob->rkey   = rkey;
    rkey_ob->handle = handle;
    rkey_ob->type   = component;
    return UCS_OK;
}

ucs_status_t uct_rkey_ptr(uct_component_h component, uct_rkey_bundle_t *rkey_ob,
                          uint64_t remote_addr, void **addr_p)
{
    if ((component == NULL) || (rkey_ob == NULL) || (addr_p == NULL)) {
        ucs_error("uct_rkey_ptr: NULL argument");
        return UCS_ERR_INVALID_PARAM;
    }
    if (component->rkey_ptr == NULL) {
        return UCS_ERR_UNSUPPORTED;
    }
    return component->rkey_ptr(component, rkey_ob->rkey, rkey_ob->handle,
                               remote_addr, addr_p);
}

ucs_status_t uct_rkey_release(uct_component_h component,
                              const uct_rkey_bundle_t *rkey_ob)
{
    if ((component == NULL) || (rkey_ob == NULL)) {
        ucs_error("uct_rkey_release: NULL %s",
                  (component == NULL) ? "component" : "rkey bundle");
        return UCS_ERR_INVALID_PARAM;
    }
    return component->rkey_release(component, rkey_ob->rkey, rkey_ob->handle);
}

/* ------------------------------------------------------------------------
 * Host memory domain: for transports within one process (self).
 * Registration is a no-op and a remote key is the remote address itself.
 */

static void uct_host_md_close(uct_md_h md)
{
    free(md);
}

static ucs_status_t uct_host_md_query(uct_md_h md, uct_md_attr_t *md_attr)
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

static ucs_status_t uct_host_md_mkey_pack(uct_md_h md, uct_mem_h memh,
                                          void *rkey_buffer)
{
    return UCS_OK;
}

ucs_status_t uct_host_md_mem_query(uct_md_h md, const void *address,
                                   size_t length, uct_md_mem_attr_t *mem_attr)
{
    if (mem_attr->field_mask & UCT_MD_MEM_ATTR_FIELD_MEM_TYPE) {
        mem_attr->mem_type = UCS_MEMORY_TYPE_HOST;
    }
    if (mem_attr->field_mask & UCT_MD_MEM_ATTR_FIELD_SYS_DEV) {
        mem_attr->sys_dev = UCS_SYS_DEVICE_ID_UNKNOWN;
    }
    if (mem_attr->field_mask & UCT_MD_MEM_ATTR_FIELD_BASE_ADDRESS) {
        mem_attr->base_address = (void *)address;
    }
    if (mem_attr->field_mask & UCT_MD_MEM_ATTR_FIELD_ALLOC_LENGTH) {
        mem_attr->alloc_length = length;
    }
    return UCS_OK;
}

ucs_status_t uct_host_md_detect_memory_type(uct_md_h md, const void *addr,
                                            size_t length,
                                            ucs_memory_type_t *type_p)
{
    *type_p = UCS_MEMORY_TYPE_HOST;
    return UCS_OK;
}

static const uct_md_ops_t uct_host_md_ops = {
    .close              = uct_host_md_close,
    .query              = uct_host_md_query,
    .mem_reg            = uct_md_dummy_mem_reg,
    .mem_dereg          = uct_md_dummy_mem_dereg,
    .mem_query          = uct_host_md_mem_query,
    .mkey_pack          = uct_host_md_mkey_pack,
    .detect_memory_type = uct_host_md_detect_memory_type};

ucs_status_t uct_host_md_open(uct_component_t *component, const char *md_name,
                              const uct_md_config_t *config, uct_md_h *md_p)
{
    uct_md_t *md;

    md = calloc(1, sizeof(*md));
    if (md == NULL) {
        ucs_error("failed to allocate memory domain '%s'", md_name);
        return UCS_ERR_NO_MEMORY;
    }

    uct_md_base_init(md, &uct_host_md_ops, component);
    *md_p = md;
    return UCS_OK;
}
