/*
 * The shared-memory module: registers the posix and sysv FIFO transports
 * (mm/) and the cma zero-copy transport (cma/).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cma/cma.h"
#include "mm/mm.h"

#include <uct/base/uct_component.h>

static ucs_status_t uct_sm_init(void)
{
    uct_mm_register();
    uct_cma_register();
    return UCS_OK;
}

UCT_MODULE_DEFINE(uct_sm_init)
