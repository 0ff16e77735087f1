/*
 * See uct_md_find.h.
 */
#include "uct_md_find.h"

#include <stdlib.h>
#include <string.h>

/* Whether @a md lists @a tl_name on @a dev_name among its resources */
static int test_uct_md_offers(uct_md_h md, const char *tl_name,
                              const char *dev_name)
{
    uct_tl_resource_desc_t *resources;
    unsigned i, num_resources;
    int found = 0;

    if (uct_md_query_tl_resources(md, &resources, &num_resources) != UCS_OK) {
        return 0;
    }
    for (i = 0; (i < num_resources) && !found; ++i) {
        found = !strcmp(resources[i].tl_name, tl_name) &&
                !strcmp(resources[i].dev_name, dev_name);
    }
    uct_release_tl_resource_list(resources);
    return found;
}

/* Opens the memory domains of @a component one by one and keeps the first
 * that offers the pair */
static uct_md_h test_uct_component_find(uct_component_h component,
                                        const char *tl_name,
                                        const char *dev_name)
{
    uct_component_attr_t attr;
    uct_md_config_t *config;
    uct_md_h md, found = NULL;
    unsigned i;

    attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
    if (uct_component_query(component, &attr) != UCS_OK) {
        return NULL;
    }
    attr.md_resources =
        calloc(attr.md_resource_count + 1, sizeof(*attr.md_resources));
    if (attr.md_resources == NULL) {
        return NULL;
    }
    attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
    if (uct_component_query(component, &attr) != UCS_OK) {
        free(attr.md_resources);
        return NULL;
    }

    for (i = 0; (i < attr.md_resource_count) && (found == NULL); ++i) {
        if (uct_md_config_read(component, NULL, NULL, &config) != UCS_OK) {
            continue;
        }
        if (uct_md_open(component, attr.md_resources[i].md_name, config, &md) ==
            UCS_OK) {
            if (test_uct_md_offers(md, tl_name, dev_name)) {
                found = md;
            } else {
                uct_md_close(md);
            }
        }
        uct_config_release(config);
    }

    free(attr.md_resources);
    return found;
}

ucs_status_t test_uct_md_find(const char *tl_name, const char *dev_name,
                              uct_md_h *md_p, uct_component_h *component_p)
{
    uct_component_h *components;
    unsigned i, num_components;
    ucs_status_t status;
    uct_md_h md = NULL;

    status = uct_query_components(&components, &num_components);
    if (status != UCS_OK) {
        return status;
    }

    for (i = 0; (i < num_components) && (md == NULL); ++i) {
        md = test_uct_component_find(components[i], tl_name, dev_name);
        if ((md != NULL) && (component_p != NULL)) {
            *component_p = components[i];
        }
    }
    uct_release_component_list(components);

    if (md == NULL) {
        return UCS_ERR_NO_DEVICE;
    }
    *md_p = md;
    return UCS_OK;
}
