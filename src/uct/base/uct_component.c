/*
 * Component and transport registry, resource queries and configuration
 * reading.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <uct/base/uct_component.h>
#include <uct/base/uct_md.h>
#include <uct/base/uct_vfs.h>
#include <ucs/debug/log.h>
#include <ucs/sys/module.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static UCS_LIST_HEAD(uct_components);
static pthread_mutex_t uct_components_lock = PTHREAD_MUTEX_INITIALIZER;

static int uct_list_contains(ucs_list_link_t *head, ucs_list_link_t *link)
{
    ucs_list_link_t *iter;

    for (iter = head->next; iter != head; iter = iter->next) {
        if (iter == link) {
            return 1;
        }
    }
    return 0;
}

void uct_component_register(uct_component_t *component)
{
    int added = 0;

    pthread_mutex_lock(&uct_components_lock);
    if (!uct_list_contains(&uct_components, &component->list)) {
        if ((component->tl_list.next == NULL) ||
            (component->tl_list.prev == NULL)) {
            ucs_list_head_init(&component->tl_list);
        }
        ucs_list_add_tail(&uct_components, &component->list);
        if (component->md_config.table != NULL) {
            ucs_config_global_list_add(&component->md_config);
        }
        if (component->cm_open != NULL) {
            component->flags |= UCT_COMPONENT_FLAG_CM;
            if (component->cm_config.table != NULL) {
                ucs_config_global_list_add(&component->cm_config);
            }
        }
        ucs_debug("registered component '%s'", component->name);
        added = 1;
    }
    pthread_mutex_unlock(&uct_components_lock);

    if (added) {
        uct_component_vfs_init(component);
    }
}

void uct_component_unregister(uct_component_t *component)
{
    uct_tl_t *tl, *tmp;

    pthread_mutex_lock(&uct_components_lock);
    if (uct_list_contains(&uct_components, &component->list)) {
        ucs_list_for_each_safe(tl, tmp, &component->tl_list, list) {
            ucs_list_del(&tl->list);
            if (tl->config.table != NULL) {
                ucs_config_global_list_remove(&tl->config);
            }
        }
        if (component->md_config.table != NULL) {
            ucs_config_global_list_remove(&component->md_config);
        }
        if (component->cm_config.table != NULL) {
            ucs_config_global_list_remove(&component->cm_config);
        }
        ucs_list_del(&component->list);
    }
    pthread_mutex_unlock(&uct_components_lock);
    ucs_vfs_obj_remove(component);
}

void uct_tl_register(uct_component_t *component, uct_tl_t *tl)
{
    pthread_mutex_lock(&uct_components_lock);
    if ((component->tl_list.next == NULL) ||
        (component->tl_list.prev == NULL)) {
        ucs_list_head_init(&component->tl_list);
    }
    if (!uct_list_contains(&component->tl_list, &tl->list)) {
        ucs_list_add_tail(&component->tl_list, &tl->list);
        if (tl->config.table != NULL) {
            ucs_config_global_list_add(&tl->config);
        }
        ucs_debug("registered transport '%s' of component '%s'", tl->name,
                  component->name);
    }
    pthread_mutex_unlock(&uct_components_lock);
}

void uct_tl_unregister(uct_tl_t *tl)
{
    pthread_mutex_lock(&uct_components_lock);
    ucs_list_del(&tl->list);
    if (tl->config.table != NULL) {
        ucs_config_global_list_remove(&tl->config);
    }
    pthread_mutex_unlock(&uct_components_lock);
}

uct_tl_t *uct_component_find_tl(uct_component_t *component, const char *tl_name)
{
    uct_tl_t *tl;

    ucs_list_for_each(tl, &component->tl_list, list) {
        if (!strcmp(tl->name, tl_name)) {
            return tl;
        }
    }
    return NULL;
}

static void uct_modules_load_once(void)
{
    ucs_modules_load("uct", UCT_MODULE_API_VERSION,
                     (const void *)uct_modules_load_once);
    ucs_config_parser_warn_unused_env_vars_once(NULL);
}

ucs_status_t uct_query_components(uct_component_h **components_p,
                                  unsigned *num_components_p)
{
    uct_component_h *components;
    uct_component_t *component;
    unsigned count = 0;

    if ((components_p == NULL) || (num_components_p == NULL)) {
        ucs_error("uct_query_components: NULL output argument");
        return UCS_ERR_INVALID_PARAM;
    }

    uct_modules_load_once();

    pthread_mutex_lock(&uct_components_lock);
    ucs_list_for_each(component, &uct_components, list) {
        ++count;
    }

    components = malloc(sizeof(*components) * (count + 1));
    if (components == NULL) {
        pthread_mutex_unlock(&uct_components_lock);
        ucs_error("failed to allocate the component list (%u entries)", count);
        return UCS_ERR_NO_MEMORY;
    }

    count = 0;
    ucs_list_for_each(component, &uct_components, list) {
        components[count++] = component;
    }
    pthread_mutex_unlock(&uct_components_lock);

    *components_p     = components;
    *num_components_p = count;
    return UCS_OK;
}

void uct_release_component_list(uct_component_h *components)
{
    free(components);
}

ucs_status_t uct_component_query(uct_component_h component,
                                 uct_component_attr_t *component_attr)
{
    uct_md_resource_desc_t *resources = NULL;
    unsigned num_resources            = 0;
    ucs_status_t status;

    if ((component == NULL) || (component_attr == NULL)) {
        ucs_error("uct_component_query: NULL %s",
                  (component == NULL) ? "component" : "attributes");
        return UCS_ERR_INVALID_PARAM;
    }

    if (component_attr->field_mask &
        (UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT |
         UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES)) {
        status = component->query_md_resources(component, &resources,
                                               &num_resources);
        if (status != UCS_OK) {
            return status;
        }
    }

    if (component_attr->field_mask & UCT_COMPONENT_ATTR_FIELD_NAME) {
        snprintf(component_attr->name, sizeof(component_attr->name), "%s",
                 component->name);
    }
    if (component_attr->field_mask &
        UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT) {
        component_attr->md_resource_count = num_resources;
    }
    if ((component_attr->field_mask & UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES) &&
        (num_resources > 0)) {
        if (component_attr->md_resources == NULL) {
            free(resources);
            ucs_error("uct_component_query(%s): md_resources is NULL; "
                      "allocate md_resource_count entries first",
                      component->name);
            return UCS_ERR_INVALID_PARAM;
        }
        memcpy(component_attr->md_resources, resources,
               sizeof(*resources) * num_resources);
    }
    if (component_attr->field_mask & UCT_COMPONENT_ATTR_FIELD_FLAGS) {
        component_attr->flags = component->flags;
    }

    free(resources);
    return UCS_OK;
}

ucs_status_t uct_md_query_single_md_resource(uct_component_t *component,
                                             uct_md_resource_desc_t **res_p,
                                             unsigned *num_resources_p)
{
    uct_md_resource_desc_t *resource;

    resource = malloc(sizeof(*resource));
    if (resource == NULL) {
        ucs_error("failed to allocate the md resource of '%s'",
                  component->name);
        return UCS_ERR_NO_MEMORY;
    }

    snprintf(resource->md_name, sizeof(resource->md_name), "%s",
             component->name);
    *res_p           = resource;
    *num_resources_p = 1;
    return UCS_OK;
}

ucs_status_t uct_single_device_resource(uct_md_h md, const char *dev_name,
                                        uct_device_type_t dev_type,
                                        ucs_sys_device_t sys_device,
                                        uct_tl_device_resource_t **devices_p,
                                        unsigned *num_devices_p)
{
    uct_tl_device_resource_t *device;

    device = calloc(1, sizeof(*device));
    if (device == NULL) {
        ucs_error("failed to allocate the device resource '%s'", dev_name);
        return UCS_ERR_NO_MEMORY;
    }

    snprintf(device->name, sizeof(device->name), "%s", dev_name);
    device->type       = dev_type;
    device->sys_device = sys_device;
    *devices_p         = device;
    *num_devices_p     = 1;
    return UCS_OK;
}

/* ------------------------------------------------------------------------
 * Configuration
 */

ucs_status_t uct_config_read(uct_config_bundle_t **bundle_p,
                             const ucs_config_global_list_entry_t *entry,
                             const char *env_prefix, const char *filename)
{
    uct_config_bundle_t *bundle;
    ucs_status_t status;

    bundle = calloc(1, sizeof(*bundle) + entry->size);
    if (bundle == NULL) {
        ucs_error("failed to allocate configuration '%s' (%zu bytes)",
                  entry->name, entry->size);
        return UCS_ERR_NO_MEMORY;
    }

    status = ucs_config_parser_fill_opts_file(
        bundle->data, entry->table, env_prefix, entry->prefix, filename, 0);
    if (status != UCS_OK) {
        free(bundle);
        return status;
    }

    bundle->table        = entry->table;
    bundle->table_prefix = entry->prefix;
    *bundle_p            = bundle;
    return UCS_OK;
}

static uct_config_bundle_t *uct_config_bundle(const void *config)
{
    return ucs_container_of(config, uct_config_bundle_t, data);
}

ucs_status_t uct_md_config_read(uct_component_h component,
                                const char *env_prefix, const char *filename,
                                uct_md_config_t **config_p)
{
    uct_config_bundle_t *bundle;
    ucs_status_t status;

    if ((component == NULL) || (config_p == NULL)) {
        ucs_error("uct_md_config_read: NULL %s",
                  (component == NULL) ? "component" : "config_p");
        return UCS_ERR_INVALID_PARAM;
    }

    status =
        uct_config_read(&bundle, &component->md_config, env_prefix, filename);
    if (status != UCS_OK) {
        /* the parser logged the variable, the value and the syntax */
        ucs_debug("failed to read the configuration of memory domain '%s': "
                  "%s",
                  component->name, ucs_status_string(status));
        return status;
    }

    *config_p = (uct_md_config_t *)bundle->data;
    return UCS_OK;
}

void uct_config_release(void *config)
{
    uct_config_bundle_t *bundle;

    if (config == NULL) {
        return;
    }

    bundle = uct_config_bundle(config);
    ucs_config_parser_release_opts(bundle->data, bundle->table);
    free(bundle);
}

ucs_status_t uct_config_get(void *config, const char *name, char *value,
                            size_t max)
{
    uct_config_bundle_t *bundle;

    if ((config == NULL) || (name == NULL) || (value == NULL)) {
        ucs_error("uct_config_get: NULL %s", (config == NULL) ? "config"
                                             : (name == NULL) ? "name"
                                                              : "value buffer");
        return UCS_ERR_INVALID_PARAM;
    }

    bundle = uct_config_bundle(config);
    return ucs_config_parser_get_value(bundle->data, bundle->table, name, value,
                                       max);
}

ucs_status_t uct_config_modify(void *config, const char *name,
                               const char *value)
{
    uct_config_bundle_t *bundle;

    if ((config == NULL) || (name == NULL) || (value == NULL)) {
        ucs_error("uct_config_modify: NULL %s", (config == NULL) ? "config"
                                                : (name == NULL) ? "name"
                                                                 : "value");
        return UCS_ERR_INVALID_PARAM;
    }

    bundle = uct_config_bundle(config);
    return ucs_config_parser_set_value(bundle->data, bundle->table, name,
                                       value);
}

void uct_config_print(const void *config, FILE *stream, const char *title,
                      unsigned print_flags)
{
    uct_config_bundle_t *bundle = uct_config_bundle(config);

    ucs_config_parser_print_opts(stream, title, bundle->data, bundle->table,
                                 bundle->table_prefix, "UCX_", print_flags);
}
