/*
 * Topology: CPU -> NUMA node tables built once (hwloc or sysfs), and a
 * registry of PCI devices keyed by bus id.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <ucs/sys/topo.h>
#include <ucs/sys/sys.h>
#include <ucs/debug/log.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_HWLOC
#include <hwloc.h>
#endif

#define UCS_TOPO_SYSFS_NODE_DIR   "/sys/devices/system/node"
#define UCS_TOPO_SYSFS_PCI_DIR    "/sys/bus/pci/devices"
#define UCS_TOPO_DEVICE_NAME_MAX  32
#define UCS_TOPO_LOCAL_DISTANCE   10   /* SLIT value of a node to itself */
#define UCS_TOPO_REMOTE_DISTANCE  20   /* assumed when SLIT is missing */
#define UCS_TOPO_NODE_BANDWIDTH   40e9 /* bytes/s at SLIT distance 10 */
#define UCS_TOPO_LATENCY_PER_UNIT 10e-9

typedef struct ucs_topo_device {
    ucs_sys_bus_id_t bus_id;
    char name[UCS_TOPO_DEVICE_NAME_MAX];
    int numa_node;
} ucs_topo_device_t;

static struct {
    pthread_once_t once;
    const char *backend;
    unsigned num_cpus;
    int *cpu_node;               /* [num_cpus] */
    unsigned num_nodes;          /* NUMA nodes present */
    unsigned node_id_limit;      /* highest node id + 1 */
    ucs_cpu_set_t *node_cpus;    /* [node_id_limit] */
    unsigned char *node_present; /* [node_id_limit] */
    unsigned *node_distance;     /* [limit * limit], 0 if unknown */
#ifdef HAVE_HWLOC
    hwloc_topology_t hwloc; /* NULL if hwloc failed to load */
#endif

    pthread_mutex_t lock; /* device registry */
    unsigned num_devices;
    ucs_topo_device_t devices[UCS_SYS_DEVICE_ID_MAX];
} ucs_topo_ctx = {.once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER};

/* ------------------------------------------------------------------------
 * CPU and NUMA tables
 */

/* Parse a sysfs CPU list ("0-3,8,10-11") into @a cpus. */
static int ucs_topo_parse_cpulist(const char *str, ucs_cpu_set_t *cpus)
{
    unsigned long first, last, cpu;
    char *end;

    UCS_CPU_ZERO(cpus);
    while (*str != '\0') {
        if (!isdigit((unsigned char)*str)) {
            return -1;
        }
        first = strtoul(str, &end, 10);
        last  = first;
        if (*end == '-') {
            last = strtoul(end + 1, &end, 10);
        }
        for (cpu = first; (cpu <= last) && (cpu < UCS_CPU_SETSIZE); ++cpu) {
            UCS_CPU_SET(cpu, cpus);
        }
        if (*end == ',') {
            ++end;
        } else if ((*end != '\0') && !isspace((unsigned char)*end)) {
            return -1;
        }
        str = end;
        while (isspace((unsigned char)*str)) {
            ++str;
        }
    }
    return 0;
}

/* Ids of the "nodeN" directories in sysfs; 0 nodes if there are none. */
static unsigned ucs_topo_sysfs_node_limit(void)
{
    unsigned limit = 0;
    struct dirent *entry;
    char *end;
    unsigned long id;
    DIR *dir;

    dir = opendir(UCS_TOPO_SYSFS_NODE_DIR);
    if (dir == NULL) {
        ucs_debug("cannot open %s: %m; assuming one NUMA node",
                  UCS_TOPO_SYSFS_NODE_DIR);
        return 0;
    }

    while ((entry = readdir(dir)) != NULL) {
        if (strncmp(entry->d_name, "node", 4) ||
            !isdigit((unsigned char)entry->d_name[4])) {
            continue;
        }
        id = strtoul(entry->d_name + 4, &end, 10);
        if ((*end == '\0') && (id < UCS_CPU_SETSIZE)) {
            limit = ucs_max(limit, (unsigned)id + 1);
        }
    }

    closedir(dir);
    return limit;
}

static int ucs_topo_alloc_tables(unsigned num_cpus, unsigned node_limit)
{
    unsigned i;

    ucs_topo_ctx.num_cpus      = num_cpus;
    ucs_topo_ctx.node_id_limit = node_limit;
    ucs_topo_ctx.cpu_node      = malloc(num_cpus * sizeof(int));
    ucs_topo_ctx.node_cpus     = calloc(node_limit, sizeof(ucs_cpu_set_t));
    ucs_topo_ctx.node_present  = calloc(node_limit, 1);
    ucs_topo_ctx.node_distance =
        calloc((size_t)node_limit * node_limit, sizeof(unsigned));
    if ((ucs_topo_ctx.cpu_node == NULL) || (ucs_topo_ctx.node_cpus == NULL) ||
        (ucs_topo_ctx.node_present == NULL) ||
        (ucs_topo_ctx.node_distance == NULL)) {
        ucs_error("failed to allocate topology tables for %u CPUs and %u "
                  "NUMA nodes",
                  num_cpus, node_limit);
        return -1;
    }

    for (i = 0; i < num_cpus; ++i) {
        ucs_topo_ctx.cpu_node[i] = UCS_NUMA_NODE_UNDEFINED;
    }
    return 0;
}

static void ucs_topo_add_node(unsigned node, const ucs_cpu_set_t *cpus)
{
    unsigned cpu;

    ucs_topo_ctx.node_present[node] = 1;
    ucs_topo_ctx.node_cpus[node]    = *cpus;
    ++ucs_topo_ctx.num_nodes;

    for (cpu = 0; cpu < ucs_topo_ctx.num_cpus; ++cpu) {
        if (UCS_CPU_ISSET(cpu, cpus)) {
            ucs_topo_ctx.cpu_node[cpu] = (int)node;
        }
    }
}

/* NUMA distances (SLIT) from sysfs: node N's "distance" lists one value
 * per present node, in increasing node order. */
static void ucs_topo_read_distances(void)
{
    unsigned limit = ucs_topo_ctx.node_id_limit;
    unsigned from, to;
    char buf[4096];
    char *ptr, *end;
    unsigned long value;

    for (from = 0; from < limit; ++from) {
        if (!ucs_topo_ctx.node_present[from] ||
            (ucs_read_file(buf, sizeof(buf), 1,
                           UCS_TOPO_SYSFS_NODE_DIR "/node%u/distance",
                           from) <= 0)) {
            continue;
        }

        ptr = buf;
        for (to = 0; to < limit; ++to) {
            if (!ucs_topo_ctx.node_present[to]) {
                continue;
            }
            value = strtoul(ptr, &end, 10);
            if (end == ptr) {
                break;
            }
            ucs_topo_ctx.node_distance[(from * limit) + to] = (unsigned)value;
            ptr                                             = end;
        }
    }
}

/* Every CPU on node 0: no NUMA information in the system. */
static void ucs_topo_single_node(void)
{
    ucs_cpu_set_t cpus;
    unsigned cpu;

    UCS_CPU_ZERO(&cpus);
    for (cpu = 0; cpu < ucs_topo_ctx.num_cpus; ++cpu) {
        UCS_CPU_SET(cpu, &cpus);
    }
    ucs_topo_add_node(0, &cpus);
}

static void ucs_topo_init_sysfs(void)
{
    ucs_cpu_set_t cpus;
    char buf[4096];
    unsigned node;

    for (node = 0; node < ucs_topo_ctx.node_id_limit; ++node) {
        if ((ucs_read_file_str(buf, sizeof(buf), 1,
                               UCS_TOPO_SYSFS_NODE_DIR "/node%u/cpulist",
                               node) < 0)) {
            continue; /* a gap in the numbering */
        }
        if (ucs_topo_parse_cpulist(buf, &cpus) < 0) {
            ucs_warn("cannot parse the CPU list \"%s\" of NUMA node %u; "
                     "ignoring the node",
                     buf, node);
            continue;
        }
        ucs_topo_add_node(node, &cpus);
    }
}

#ifdef HAVE_HWLOC
static int ucs_topo_init_hwloc(void)
{
    hwloc_topology_t topo;
    ucs_cpu_set_t cpus;
    hwloc_obj_t obj;
    int i, num, cpu;

    if (hwloc_topology_init(&topo) != 0) {
        ucs_debug("hwloc_topology_init() failed: %m; using sysfs");
        return -1;
    }

    hwloc_topology_set_flags(topo, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
    hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (hwloc_topology_load(topo) != 0) {
        ucs_debug("hwloc_topology_load() failed: %m; using sysfs");
        hwloc_topology_destroy(topo);
        return -1;
    }

    num = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    for (i = 0; i < num; ++i) {
        obj = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, (unsigned)i);
        if ((obj == NULL) || (obj->os_index >= ucs_topo_ctx.node_id_limit) ||
            ucs_topo_ctx.node_present[obj->os_index]) {
            continue;
        }

        UCS_CPU_ZERO(&cpus);
        for (cpu = hwloc_bitmap_first(obj->cpuset); cpu != -1;
             cpu = hwloc_bitmap_next(obj->cpuset, cpu)) {
            UCS_CPU_SET(cpu, &cpus);
        }
        ucs_topo_add_node(obj->os_index, &cpus);
    }

    ucs_topo_ctx.hwloc = topo;
    return 0;
}

/* NUMA node of a PCI function as hwloc sees it, or -2 if hwloc does not
 * know the device. */
static int ucs_topo_hwloc_device_node(const ucs_sys_bus_id_t *bus_id)
{
    hwloc_obj_t obj;

    if (ucs_topo_ctx.hwloc == NULL) {
        return -2;
    }

    obj =
        hwloc_get_pcidev_by_busid(ucs_topo_ctx.hwloc, bus_id->domain,
                                  bus_id->bus, bus_id->slot, bus_id->function);
    if (obj == NULL) {
        return -2;
    }

    obj = hwloc_get_non_io_ancestor_obj(ucs_topo_ctx.hwloc, obj);
    if ((obj == NULL) || (obj->nodeset == NULL) ||
        (hwloc_bitmap_weight(obj->nodeset) != 1)) {
        return UCS_NUMA_NODE_UNDEFINED;
    }

    return hwloc_bitmap_first(obj->nodeset);
}
#endif

static void ucs_topo_init(void)
{
    unsigned node_limit = ucs_topo_sysfs_node_limit();
    int have_sysfs      = (node_limit > 0);

    if (ucs_topo_alloc_tables((unsigned)ucs_sys_get_num_cpus(),
                              have_sysfs ? node_limit : 1) < 0) {
        /* every query answers "unknown" */
        ucs_topo_ctx.num_cpus      = 0;
        ucs_topo_ctx.node_id_limit = 0;
        ucs_topo_ctx.backend       = "none";
        return;
    }

    ucs_topo_ctx.backend = "sysfs";
#ifdef HAVE_HWLOC
    if (ucs_topo_init_hwloc() == 0) {
        ucs_topo_ctx.backend = "hwloc";
    }
#endif

    if (ucs_topo_ctx.num_nodes == 0) {
        if (have_sysfs) {
            ucs_topo_init_sysfs();
        }
        if (ucs_topo_ctx.num_nodes == 0) {
            ucs_topo_single_node();
        }
    }

    ucs_topo_read_distances();
    ucs_debug("topology (%s): %u CPUs, %u NUMA nodes", ucs_topo_ctx.backend,
              ucs_topo_ctx.num_cpus, ucs_topo_ctx.num_nodes);
}

static void ucs_topo_check_init(void)
{
    pthread_once(&ucs_topo_ctx.once, ucs_topo_init);
}

const char *ucs_topo_backend_name(void)
{
    ucs_topo_check_init();
    return ucs_topo_ctx.backend;
}

unsigned ucs_topo_num_cpus(void)
{
    ucs_topo_check_init();
    return ucs_topo_ctx.num_cpus;
}

unsigned ucs_topo_num_numa_nodes(void)
{
    ucs_topo_check_init();
    return ucs_topo_ctx.num_nodes;
}

int ucs_topo_get_cpu_numa_node(unsigned cpu)
{
    ucs_topo_check_init();
    if (cpu >= ucs_topo_ctx.num_cpus) {
        return UCS_NUMA_NODE_UNDEFINED;
    }
    return ucs_topo_ctx.cpu_node[cpu];
}

static int ucs_topo_node_is_valid(int node)
{
    return (node >= 0) && ((unsigned)node < ucs_topo_ctx.node_id_limit) &&
           ucs_topo_ctx.node_present[node];
}

ucs_status_t ucs_topo_numa_node_cpus(int node, ucs_cpu_set_t *cpus)
{
    ucs_topo_check_init();
    if (!ucs_topo_node_is_valid(node)) {
        ucs_debug("no NUMA node %d (the system has %u)", node,
                  ucs_topo_ctx.num_nodes);
        return UCS_ERR_INVALID_PARAM;
    }

    *cpus = ucs_topo_ctx.node_cpus[node];
    return UCS_OK;
}

/* ------------------------------------------------------------------------
 * Devices
 */

static int ucs_topo_bus_id_equal(const ucs_sys_bus_id_t *a,
                                 const ucs_sys_bus_id_t *b)
{
    return (a->domain == b->domain) && (a->bus == b->bus) &&
           (a->slot == b->slot) && (a->function == b->function);
}

static int ucs_topo_device_numa_node(const ucs_sys_bus_id_t *bus_id)
{
    long value;

#ifdef HAVE_HWLOC
    int node = ucs_topo_hwloc_device_node(bus_id);

    if (node >= 0) {
        return node;
    }
#endif

    if ((ucs_read_file_number(&value, 1,
                              UCS_TOPO_SYSFS_PCI_DIR "/" UCS_SYS_BUS_ID_FMT
                                                     "/numa_node",
                              UCS_SYS_BUS_ID_ARG(bus_id)) == UCS_OK) &&
        ucs_topo_node_is_valid((int)value)) {
        return (int)value;
    }

    /* firmware did not say (-1): with one node there is no doubt */
    return (ucs_topo_ctx.num_nodes == 1) ? 0 : UCS_NUMA_NODE_UNDEFINED;
}

ucs_status_t ucs_topo_find_device_by_bus_id(const ucs_sys_bus_id_t *bus_id,
                                            ucs_sys_device_t *sys_dev_p)
{
    ucs_topo_device_t *device;
    unsigned i;

    ucs_topo_check_init();

    pthread_mutex_lock(&ucs_topo_ctx.lock);
    for (i = 0; i < ucs_topo_ctx.num_devices; ++i) {
        if (ucs_topo_bus_id_equal(&ucs_topo_ctx.devices[i].bus_id, bus_id)) {
            goto out;
        }
    }

    if (ucs_topo_ctx.num_devices >= UCS_SYS_DEVICE_ID_MAX) {
        pthread_mutex_unlock(&ucs_topo_ctx.lock);
        ucs_error("cannot register device " UCS_SYS_BUS_ID_FMT ": %u devices "
                  "are registered already, the most there can be",
                  UCS_SYS_BUS_ID_ARG(bus_id), UCS_SYS_DEVICE_ID_MAX);
        return UCS_ERR_EXCEEDS_LIMIT;
    }

    device            = &ucs_topo_ctx.devices[i];
    device->bus_id    = *bus_id;
    device->numa_node = ucs_topo_device_numa_node(bus_id);
    snprintf(device->name, sizeof(device->name), UCS_SYS_BUS_ID_FMT,
             UCS_SYS_BUS_ID_ARG(bus_id));
    __atomic_store_n(&ucs_topo_ctx.num_devices, i + 1, __ATOMIC_RELEASE);
    ucs_debug("registered system device %u: %s, NUMA node %d", i, device->name,
              device->numa_node);

out:
    pthread_mutex_unlock(&ucs_topo_ctx.lock);
    *sys_dev_p = (ucs_sys_device_t)i;
    return UCS_OK;
}

/* Parse a whole path component "dddd:bb:ss.f". */
static int ucs_topo_parse_bus_id(const char *str, size_t len,
                                 ucs_sys_bus_id_t *bus_id)
{
    unsigned domain, bus, slot, function;
    char buf[32];
    int consumed = 0;

    if (len >= sizeof(buf)) {
        return 0;
    }
    memcpy(buf, str, len);
    buf[len] = '\0';

    if ((sscanf(buf, "%x:%x:%x.%x%n", &domain, &bus, &slot, &function,
                &consumed) != 4) ||
        ((size_t)consumed != len) || (domain > UINT16_MAX) ||
        (bus > UINT8_MAX) || (slot > 0x1f) || (function > 7)) {
        return 0;
    }

    bus_id->domain   = (uint16_t)domain;
    bus_id->bus      = (uint8_t)bus;
    bus_id->slot     = (uint8_t)slot;
    bus_id->function = (uint8_t)function;
    return 1;
}

ucs_status_t ucs_topo_find_device_by_sysfs(const char *sysfs_path,
                                           ucs_sys_device_t *sys_dev_p)
{
    char path[PATH_MAX];
    ucs_sys_bus_id_t bus_id;
    int found = 0;
    const char *comp, *next;

    if (realpath(sysfs_path, path) == NULL) {
        ucs_debug("%s: %m; no system device", sysfs_path);
        *sys_dev_p = UCS_SYS_DEVICE_ID_UNKNOWN;
        return UCS_OK;
    }

    /* the deepest PCI address in the path is the device's function */
    for (comp = path; *comp != '\0'; comp = next) {
        while (*comp == '/') {
            ++comp;
        }
        next = strchr(comp, '/');
        if (next == NULL) {
            next = comp + strlen(comp);
        }
        if (ucs_topo_parse_bus_id(comp, (size_t)(next - comp), &bus_id)) {
            found = 1;
        }
    }

    if (!found) {
        ucs_debug("%s (%s) is not a PCI device", sysfs_path, path);
        *sys_dev_p = UCS_SYS_DEVICE_ID_UNKNOWN;
        return UCS_OK;
    }

    return ucs_topo_find_device_by_bus_id(&bus_id, sys_dev_p);
}

/* The registered device @a sys_dev, or NULL. */
static const ucs_topo_device_t *ucs_topo_device(ucs_sys_device_t sys_dev)
{
    if (sys_dev >=
        __atomic_load_n(&ucs_topo_ctx.num_devices, __ATOMIC_ACQUIRE)) {
        return NULL;
    }
    return &ucs_topo_ctx.devices[sys_dev];
}

ucs_status_t ucs_topo_get_device_bus_id(ucs_sys_device_t sys_dev,
                                        ucs_sys_bus_id_t *bus_id)
{
    const ucs_topo_device_t *device = ucs_topo_device(sys_dev);

    if (device == NULL) {
        return UCS_ERR_NO_ELEM;
    }

    *bus_id = device->bus_id;
    return UCS_OK;
}

const char *ucs_topo_sys_device_get_name(ucs_sys_device_t sys_dev)
{
    const ucs_topo_device_t *device = ucs_topo_device(sys_dev);

    return (device == NULL) ? "<unknown>" : device->name;
}

ucs_status_t ucs_topo_sys_device_set_name(ucs_sys_device_t sys_dev,
                                          const char *name)
{
    ucs_topo_device_t *device;
    char bus_str[UCS_TOPO_DEVICE_NAME_MAX];

    if (ucs_topo_device(sys_dev) == NULL) {
        ucs_error("cannot name system device %u: it is not registered",
                  sys_dev);
        return UCS_ERR_NO_ELEM;
    }

    pthread_mutex_lock(&ucs_topo_ctx.lock);
    device = &ucs_topo_ctx.devices[sys_dev];
    snprintf(bus_str, sizeof(bus_str), UCS_SYS_BUS_ID_FMT,
             UCS_SYS_BUS_ID_ARG(&device->bus_id));
    if (!strcmp(device->name, bus_str)) {
        /* still the default name */
        snprintf(device->name, sizeof(device->name), "%s", name);
    }
    pthread_mutex_unlock(&ucs_topo_ctx.lock);
    return UCS_OK;
}

int ucs_topo_sys_device_get_numa_node(ucs_sys_device_t sys_dev)
{
    const ucs_topo_device_t *device = ucs_topo_device(sys_dev);

    return (device == NULL) ? UCS_NUMA_NODE_UNDEFINED : device->numa_node;
}

unsigned ucs_topo_num_devices(void)
{
    return __atomic_load_n(&ucs_topo_ctx.num_devices, __ATOMIC_ACQUIRE);
}

ucs_status_t ucs_topo_get_distance(ucs_sys_device_t dev1, ucs_sys_device_t dev2,
                                   ucs_sys_dev_distance_t *distance)
{
    int node1, node2;
    unsigned slit;

    ucs_topo_check_init();

    node1 = ucs_topo_sys_device_get_numa_node(dev1);
    node2 = ucs_topo_sys_device_get_numa_node(dev2);
    if ((dev1 == dev2) || (node1 == node2) || !ucs_topo_node_is_valid(node1) ||
        !ucs_topo_node_is_valid(node2)) {
        distance->latency   = 0;
        distance->bandwidth = DBL_MAX;
        return UCS_OK;
    }

    slit = ucs_topo_ctx
               .node_distance[(node1 * ucs_topo_ctx.node_id_limit) + node2];
    if (slit <= UCS_TOPO_LOCAL_DISTANCE) {
        slit = UCS_TOPO_REMOTE_DISTANCE;
    }

    distance->latency =
        (slit - UCS_TOPO_LOCAL_DISTANCE) * UCS_TOPO_LATENCY_PER_UNIT;
    distance->bandwidth =
        UCS_TOPO_NODE_BANDWIDTH * UCS_TOPO_LOCAL_DISTANCE / slit;
    return UCS_OK;
}

/* "0-3,8,10-11" */
static const char *ucs_topo_cpu_set_str(const ucs_cpu_set_t *cpus, char *buf,
                                        size_t max)
{
    size_t len = 0;
    unsigned cpu, last;
    int ret;

    buf[0] = '\0';
    for (cpu = 0; cpu < UCS_CPU_SETSIZE; ++cpu) {
        if (!UCS_CPU_ISSET(cpu, cpus)) {
            continue;
        }
        for (last = cpu; UCS_CPU_ISSET(last + 1, cpus); ++last) {
        }
        ret = snprintf(buf + len, max - len, (cpu == last) ? "%s%u" : "%s%u-%u",
                       (len > 0) ? "," : "", cpu, last);
        if ((ret < 0) || ((size_t)ret >= (max - len))) {
            break; /* truncated */
        }
        len += (size_t)ret;
        cpu = last;
    }
    return buf;
}

void ucs_topo_print_info(FILE *stream)
{
    const ucs_topo_device_t *device;
    char cpus_str[1024];
    unsigned node, i, num_devices;

    ucs_topo_check_init();

    fprintf(stream, "#\n# Topology (%s): %u CPUs, %u NUMA node%s\n#\n",
            ucs_topo_ctx.backend, ucs_topo_ctx.num_cpus, ucs_topo_ctx.num_nodes,
            (ucs_topo_ctx.num_nodes == 1) ? "" : "s");
    for (node = 0; node < ucs_topo_ctx.node_id_limit; ++node) {
        if (ucs_topo_ctx.node_present[node]) {
            fprintf(stream, "#   numa node %u: cpus %s\n", node,
                    ucs_topo_cpu_set_str(&ucs_topo_ctx.node_cpus[node],
                                         cpus_str, sizeof(cpus_str)));
        }
    }

    num_devices = ucs_topo_num_devices();
    for (i = 0; i < num_devices; ++i) {
        device = &ucs_topo_ctx.devices[i];
        fprintf(stream,
                "#   device %u: " UCS_SYS_BUS_ID_FMT " %-16s numa "
                "node %d\n",
                i, UCS_SYS_BUS_ID_ARG(&device->bus_id), device->name,
                device->numa_node);
    }
    fprintf(stream, "#\n");
}

UCS_F_DTOR static void ucs_topo_cleanup(void)
{
#ifdef HAVE_HWLOC
    if (ucs_topo_ctx.hwloc != NULL) {
        hwloc_topology_destroy(ucs_topo_ctx.hwloc);
        ucs_topo_ctx.hwloc = NULL;
    }
#endif
    /* queries made after this (from later destructors) answer "unknown" */
    ucs_topo_ctx.num_cpus      = 0;
    ucs_topo_ctx.num_nodes     = 0;
    ucs_topo_ctx.node_id_limit = 0;
    free(ucs_topo_ctx.node_distance);
    free(ucs_topo_ctx.node_present);
    free(ucs_topo_ctx.node_cpus);
    free(ucs_topo_ctx.cpu_node);
    ucs_topo_ctx.node_distance = NULL;
    ucs_topo_ctx.node_present  = NULL;
    ucs_topo_ctx.node_cpus     = NULL;
    ucs_topo_ctx.cpu_node      = NULL;
}
