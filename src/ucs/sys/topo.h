/**
 * @file
 * System topology: CPUs, NUMA nodes, and the PCI devices transports run on.
 * Included by uct.h (for ucs_sys_device_t) and by transports and tools.
 *
 * Devices are registered on first lookup and get a small process-wide
 * number (ucs_sys_device_t) that transports report in
 * uct_tl_resource_desc_t::sys_device. Built on hwloc when openuct is
 * configured with it, otherwise on sysfs; both give the same answers where
 * both know them. Everything here is thread-safe; the topology is read on
 * the first call.
 */
#ifndef UCS_SYS_TOPO_H_
#define UCS_SYS_TOPO_H_

#include <ucs/sys/compiler_def.h>
#include <ucs/type/cpu_set.h>
#include <ucs/type/status.h>

#include <stdint.h>
#include <stdio.h>

BEGIN_C_DECLS

/** A registered system device (PCI function), 0..UCS_SYS_DEVICE_ID_MAX-1. */
typedef uint8_t ucs_sys_device_t;

/** "Not a known device": host memory, virtual devices, no PCI parent. */
#define UCS_SYS_DEVICE_ID_UNKNOWN UINT8_MAX

/** Number of devices that can be registered. */
#define UCS_SYS_DEVICE_ID_MAX UCS_SYS_DEVICE_ID_UNKNOWN

/** NUMA node number when the node is not known. */
#define UCS_NUMA_NODE_UNDEFINED (-1)

/** A PCI address: domain:bus:slot.function. */
typedef struct ucs_sys_bus_id {
    uint16_t domain;  /**< PCI domain (segment). */
    uint8_t bus;      /**< Bus number. */
    uint8_t slot;     /**< Device (slot) number. */
    uint8_t function; /**< Function number. */
} ucs_sys_bus_id_t;

/** printf format for a ucs_sys_bus_id_t ("0000:3b:00.1"). */
#define UCS_SYS_BUS_ID_FMT "%04x:%02x:%02x.%x"
/**
 * printf arguments matching UCS_SYS_BUS_ID_FMT.
 * @param _id  Pointer to a ucs_sys_bus_id_t.
 */
#define UCS_SYS_BUS_ID_ARG(_id)                                           \
    (unsigned)(_id)->domain, (unsigned)(_id)->bus, (unsigned)(_id)->slot, \
        (unsigned)(_id)->function

/** Cost of moving data between two devices (or a device and memory). */
typedef struct ucs_sys_dev_distance {
    double latency;   /**< Added latency, seconds. */
    double bandwidth; /**< Bytes per second; DBL_MAX when no limit is
                           known. */
} ucs_sys_dev_distance_t;

/**
 * What the topology was read with.
 *
 * @return "hwloc" or "sysfs", or "none" if the topology could not be read
 *         (out of memory); a static string.
 */
const char *ucs_topo_backend_name(void);

/**
 * The device number of a PCI function, registering it on first use.
 *
 * @param [in]  bus_id     PCI address.
 * @param [out] sys_dev_p  The device number, set on success only.
 *
 * @return UCS_OK, or UCS_ERR_EXCEEDS_LIMIT when UCS_SYS_DEVICE_ID_MAX
 *         devices are registered.
 */
ucs_status_t ucs_topo_find_device_by_bus_id(const ucs_sys_bus_id_t *bus_id,
                                            ucs_sys_device_t *sys_dev_p);

/**
 * The device number of the PCI function behind a sysfs path, such as
 * "/sys/class/infiniband/rxe0/device" or "/sys/class/net/eth0/device": the
 * path is resolved and its deepest PCI address is used (so a virtio device
 * maps to its PCI function). A path that does not exist, or has no PCI
 * address in it, gives UCS_SYS_DEVICE_ID_UNKNOWN and UCS_OK.
 *
 * @param [in]  sysfs_path  Path in sysfs.
 * @param [out] sys_dev_p   The device number, or UCS_SYS_DEVICE_ID_UNKNOWN.
 *
 * @return UCS_OK, or UCS_ERR_EXCEEDS_LIMIT as
 *         ucs_topo_find_device_by_bus_id().
 */
ucs_status_t ucs_topo_find_device_by_sysfs(const char *sysfs_path,
                                           ucs_sys_device_t *sys_dev_p);

/**
 * PCI address of a registered device.
 *
 * @param [in]  sys_dev  Device number.
 * @param [out] bus_id   Its PCI address, set on success only.
 *
 * @return UCS_OK, or UCS_ERR_NO_ELEM if @a sys_dev is not registered.
 */
ucs_status_t ucs_topo_get_device_bus_id(ucs_sys_device_t sys_dev,
                                        ucs_sys_bus_id_t *bus_id);

/**
 * Name of a device: its PCI address unless set with
 * ucs_topo_sys_device_set_name(); "<unknown>" for UCS_SYS_DEVICE_ID_UNKNOWN
 * or an unregistered number.
 *
 * @param [in] sys_dev  Device number.
 *
 * @return The name, held by the registry for the life of the process.
 */
const char *ucs_topo_sys_device_get_name(ucs_sys_device_t sys_dev);

/**
 * Give a registered device a readable name ("mlx5_0"); first name wins
 * (a later call keeps the first name and still returns UCS_OK).
 *
 * @param [in] sys_dev  Device number.
 * @param [in] name     Name; copied (truncated if long).
 *
 * @return UCS_OK, or UCS_ERR_NO_ELEM if @a sys_dev is not registered.
 */
ucs_status_t ucs_topo_sys_device_set_name(ucs_sys_device_t sys_dev,
                                          const char *name);

/**
 * NUMA node a device is attached to. On a machine with one node every
 * device is on node 0.
 *
 * @param [in] sys_dev  Device number.
 *
 * @return The node, or UCS_NUMA_NODE_UNDEFINED.
 */
int ucs_topo_sys_device_get_numa_node(ucs_sys_device_t sys_dev);

/**
 * Number of registered devices.
 * @return The count; device numbers are 0 to count - 1.
 */
unsigned ucs_topo_num_devices(void);

/**
 * Number of configured CPUs (sysconf(_SC_NPROCESSORS_CONF)).
 * @return The count; 0 if the topology could not be read, or after the
 *         library's destructors ran.
 */
unsigned ucs_topo_num_cpus(void);

/**
 * Number of NUMA nodes.
 * @return The count, 1 on a machine without NUMA; 0 after the library's
 *         destructors ran.
 */
unsigned ucs_topo_num_numa_nodes(void);

/**
 * NUMA node of a CPU.
 *
 * @param [in] cpu  CPU number.
 *
 * @return The node, or UCS_NUMA_NODE_UNDEFINED.
 */
int ucs_topo_get_cpu_numa_node(unsigned cpu);

/**
 * The CPUs of NUMA node @a node.
 *
 * @param [in]  node  Node number.
 * @param [out] cpus  Its CPUs.
 *
 * @return UCS_OK, or UCS_ERR_INVALID_PARAM if there is no such node.
 */
ucs_status_t ucs_topo_numa_node_cpus(int node, ucs_cpu_set_t *cpus);

/**
 * Estimated cost of moving data between @a dev1 and @a dev2. Devices on the
 * same NUMA node, or an unknown device on either side, cost nothing extra
 * (latency 0, bandwidth DBL_MAX). Across nodes the estimate grows with the
 * firmware's NUMA distance (SLIT): latency (d - 10) * 10 ns, bandwidth
 * 40 GB/s * 10 / d.
 *
 * @param [in]  dev1      First device (or UCS_SYS_DEVICE_ID_UNKNOWN).
 * @param [in]  dev2      Second device (or UCS_SYS_DEVICE_ID_UNKNOWN).
 * @param [out] distance  The estimate.
 *
 * @return UCS_OK.
 */
ucs_status_t ucs_topo_get_distance(ucs_sys_device_t dev1, ucs_sys_device_t dev2,
                                   ucs_sys_dev_distance_t *distance);

/**
 * Print CPUs, NUMA nodes and registered devices, for uct_info.
 *
 * @param [in] stream  Where to print.
 */
void ucs_topo_print_info(FILE *stream);

END_C_DECLS

#endif
