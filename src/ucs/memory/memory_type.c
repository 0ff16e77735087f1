#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <ucs/memory/memory_type.h>

#include <ctype.h>
#include <stddef.h>

const char *ucs_memory_type_names[] = {
    [UCS_MEMORY_TYPE_HOST]         = "host",
    [UCS_MEMORY_TYPE_CUDA]         = "cuda",
    [UCS_MEMORY_TYPE_CUDA_MANAGED] = "cuda-managed",
    [UCS_MEMORY_TYPE_ROCM]         = "rocm",
    [UCS_MEMORY_TYPE_ROCM_MANAGED] = "rocm-managed",
    [UCS_MEMORY_TYPE_RDMA]         = "rdma",
    [UCS_MEMORY_TYPE_ZE_HOST]      = "ze-host",
    [UCS_MEMORY_TYPE_ZE_DEVICE]    = "ze-device",
    [UCS_MEMORY_TYPE_ZE_MANAGED]   = "ze-managed",
    [UCS_MEMORY_TYPE_LAST]         = "unknown"};

const char *ucs_memory_type_descs[] = {
    [UCS_MEMORY_TYPE_HOST]         = "System memory",
    [UCS_MEMORY_TYPE_CUDA]         = "NVIDIA GPU memory",
    [UCS_MEMORY_TYPE_CUDA_MANAGED] = "NVIDIA GPU managed/unified memory",
    [UCS_MEMORY_TYPE_ROCM]         = "AMD/ROCm GPU memory",
    [UCS_MEMORY_TYPE_ROCM_MANAGED] = "AMD/ROCm GPU managed memory",
    [UCS_MEMORY_TYPE_RDMA]         = "RDMA device memory",
    [UCS_MEMORY_TYPE_ZE_HOST]      = "Intel/Ze USM host memory",
    [UCS_MEMORY_TYPE_ZE_DEVICE]    = "Intel/Ze GPU memory",
    [UCS_MEMORY_TYPE_ZE_MANAGED]   = "Intel/Ze GPU managed memory",
    [UCS_MEMORY_TYPE_LAST]         = "unknown"};

/* Compare ignoring case, with '_' and '-' treated as equal. */
static int ucs_memory_type_name_equal(const char *name, const char *str)
{
    int a, b;

    for (; (*name != '\0') && (*str != '\0'); ++name, ++str) {
        a = (*name == '_') ? '-' : tolower((unsigned char)*name);
        b = (*str == '_') ? '-' : tolower((unsigned char)*str);
        if (a != b) {
            return 0;
        }
    }
    return (*name == '\0') && (*str == '\0');
}

ucs_memory_type_t ucs_memory_type_from_str(const char *str)
{
    ucs_memory_type_t mem_type;

    if (str == NULL) {
        return UCS_MEMORY_TYPE_UNKNOWN;
    }

    ucs_memory_type_for_each(mem_type) {
        if (ucs_memory_type_name_equal(ucs_memory_type_names[mem_type], str)) {
            return mem_type;
        }
    }
    return UCS_MEMORY_TYPE_UNKNOWN;
}
