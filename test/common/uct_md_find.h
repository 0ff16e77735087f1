/*
 * Test programs' helper: open the memory domain that offers a transport on
 * a device, the way every UCT application finds it (components, their
 * memory domains, each domain's transport resources).
 */
#ifndef TEST_COMMON_UCT_MD_FIND_H_
#define TEST_COMMON_UCT_MD_FIND_H_

#include <uct/api/uct.h>

/**
 * Opens the memory domain offering @a tl_name on @a dev_name.
 * @param md_p         the open memory domain; the caller closes it
 * @param component_p  its component, or NULL when not wanted
 * @return UCS_OK; UCS_ERR_NO_DEVICE when no memory domain offers the pair;
 *         the status of uct_query_components() when that fails.
 * Sets the outputs only on success.
 */
ucs_status_t test_uct_md_find(const char *tl_name, const char *dev_name,
                              uct_md_h *md_p, uct_component_h *component_p);

#endif
