/*
 * badver: a module built for another major API version. The module loader
 * must refuse it, with a warning naming the file, before its init runs.
 */
#include <uct/api/version.h>
#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>

#include <stdint.h>
#include <stdio.h>

UCS_F_API const uint32_t ucs_module_api_version =
    (uint32_t)(UCT_MODULE_API_MAJOR + 1) << 16;

UCS_F_API ucs_status_t ucs_module_init(void);

ucs_status_t ucs_module_init(void)
{
    /* check.sh looks for this line: it must never be printed */
    fprintf(stderr, "badver: init ran although the API version differs\n");
    return UCS_ERR_UNSUPPORTED;
}
