/*
 * The entry point of the ib module: the ib component and its transports.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <uct/ib/base/ib_md.h>
#include <uct/ib/rc/rc.h>
#include <uct/ib/ud/ud.h>

static ucs_status_t uct_ib_module_init(void)
{
    uct_component_register(&uct_ib_component);
    uct_tl_register(&uct_ib_component, &uct_rc_verbs_tl);
    uct_tl_register(&uct_ib_component, &uct_ud_verbs_tl);
    return UCS_OK;
}

UCT_MODULE_DEFINE(uct_ib_module_init)
