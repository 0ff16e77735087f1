/*
 * A tiny module for the module loader tests, built in several variants:
 *   TESTFW_GOOD      a valid module (API 1.0) counting its init calls
 *   TESTFW_BADVER    built for API 2.0
 *   TESTFW_NOINIT    exports the version but no ucs_module_init
 *   TESTFW_INITFAIL  its init fails with UCS_ERR_NO_DEVICE
 */
#include <ucs/sys/compiler_def.h>
#include <ucs/sys/module.h>
#include <ucs/type/status.h>

#if defined(TESTFW_BADVER)
#define TESTFW_API_MAJOR 2
#else
#define TESTFW_API_MAJOR 1
#endif

UCS_F_API const uint32_t ucs_module_api_version =
    UCS_MODULE_API_VERSION(TESTFW_API_MAJOR, 0);

/* Read by the test through dlsym() */
UCS_F_API unsigned testfw_init_count = 0;

#if !defined(TESTFW_NOINIT)
UCS_F_API ucs_status_t ucs_module_init(void)
{
    ++testfw_init_count;
#if defined(TESTFW_INITFAIL)
    return UCS_ERR_NO_DEVICE;
#else
    return UCS_OK;
#endif
}
#endif

#if defined(TESTFW_GOOD)
UCS_F_API void ucs_module_cleanup(void)
{}
#endif
