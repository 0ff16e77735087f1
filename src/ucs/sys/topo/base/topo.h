/**
 * @file
 * The header path UCX's uct.h uses for the system topology (system devices
 * such as ucs_sys_device_t, distances between devices and NUMA nodes).
 * openuct keeps it in ucs/sys/topo.h; this header includes it, so a
 * program may include either path. Included by applications written for
 * UCX.
 */
#ifndef UCS_SYS_TOPO_BASE_TOPO_H_
#define UCS_SYS_TOPO_BASE_TOPO_H_

#include <ucs/sys/topo.h>

#endif
