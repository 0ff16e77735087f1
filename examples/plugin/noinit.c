/*
 * noinit: a module with the right API version but no ucs_module_init. The
 * module loader must refuse it with a warning naming the file.
 */
#include <uct/api/version.h>
#include <ucs/sys/compiler_def.h>

#include <stdint.h>

UCS_F_API const uint32_t ucs_module_api_version = UCT_MODULE_API_VERSION;

/* Something to export besides the version, named unlike the init symbol */
UCS_F_API int uct_noinit_placeholder(void);

int uct_noinit_placeholder(void)
{
    return 0;
}
