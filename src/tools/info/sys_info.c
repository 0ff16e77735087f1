/*
 * uct_info -s, -T and -M: the machine (processor, memory, clock, kernel),
 * the topology of the devices the transports use, and memcpy bandwidth.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "uct_info.h"

#include <uct/api/uct.h>
#include <ucs/sys/sys.h>
#include <ucs/sys/topo.h>
#include <ucs/time/time.h>

#include <float.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#define UCT_INFO_LINE_MAX 256

/* Longest CPU number plus one that -s counts cores for */
#define UCT_INFO_MAX_CPUS 4096

/* Time each clock and memcpy measurement runs */
#define UCT_INFO_MEASURE_SEC 0.02

/* Value of the first "KEY : value" line of /proc/cpuinfo whose key is
 * @a key, or "unknown" */
static const char *uct_info_cpuinfo(const char *key, char *buf, size_t max)
{
    char line[UCT_INFO_LINE_MAX];
    size_t key_len = strlen(key);
    const char *value;
    FILE *stream;
    size_t len;

    snprintf(buf, max, "unknown");
    stream = fopen("/proc/cpuinfo", "r");
    if (stream == NULL) {
        return buf;
    }

    while (fgets(line, sizeof(line), stream) != NULL) {
        if (strncmp(line, key, key_len) ||
            ((line[key_len] != ' ') && (line[key_len] != '\t') &&
             (line[key_len] != ':'))) {
            continue;
        }
        value = strchr(line, ':');
        if (value == NULL) {
            continue;
        }
        value += strspn(value + 1, " \t") + 1;
        len = strcspn(value, "\n");
        snprintf(buf, max, "%.*s", (int)len, value);
        break;
    }
    fclose(stream);
    return buf;
}

/* Number of physical cores and of packages (sockets) of the online CPUs,
 * from sysfs; 0 when sysfs does not say */
static void uct_info_count_cores(unsigned *cores_p, unsigned *packages_p)
{
    static long core_ids[UCT_INFO_MAX_CPUS][2];
    long package_ids[UCT_INFO_MAX_CPUS];
    unsigned cpu, i, num_cpus, num_cores = 0, num_packages = 0;
    long core, package;

    num_cpus = ucs_min(ucs_sys_get_num_cpus(), UCT_INFO_MAX_CPUS);
    for (cpu = 0; cpu < num_cpus; ++cpu) {
        if ((ucs_read_file_number(&core, 1,
                                  "/sys/devices/system/cpu/cpu%u/"
                                  "topology/core_id",
                                  cpu) != UCS_OK) ||
            (ucs_read_file_number(&package, 1,
                                  "/sys/devices/system/cpu/"
                                  "cpu%u/topology/physical_package_id",
                                  cpu) != UCS_OK)) {
            continue;
        }

        for (i = 0; i < num_cores; ++i) {
            if ((core_ids[i][0] == package) && (core_ids[i][1] == core)) {
                break;
            }
        }
        if (i == num_cores) {
            core_ids[num_cores][0] = package;
            core_ids[num_cores][1] = core;
            ++num_cores;
        }

        for (i = 0; i < num_packages; ++i) {
            if (package_ids[i] == package) {
                break;
            }
        }
        if (i == num_packages) {
            package_ids[num_packages++] = package;
        }
    }

    *cores_p    = num_cores;
    *packages_p = num_packages;
}

/* Value of "KEY: number" in /proc/meminfo, or -1 */
static long uct_info_meminfo(const char *key)
{
    char line[UCT_INFO_LINE_MAX];
    size_t key_len = strlen(key);
    long value     = -1;
    FILE *stream;

    stream = fopen("/proc/meminfo", "r");
    if (stream == NULL) {
        return -1;
    }
    while (fgets(line, sizeof(line), stream) != NULL) {
        if (!strncmp(line, key, key_len) && (line[key_len] == ':')) {
            value = strtol(line + key_len + 1, NULL, 10);
            break;
        }
    }
    fclose(stream);
    return value;
}

/* Contents of a one-line sysfs or procfs file, or "unknown" */
static const char *uct_info_file_line(const char *path, char *buf, size_t max)
{
    if (ucs_read_file_str(buf, max, 1, "%s", path) <= 0) {
        snprintf(buf, max, "unknown");
    }
    return buf;
}

/* Ticks of ucs_get_time() against CLOCK_MONOTONIC over a short interval:
 * 100% when the calibrated rate matches the kernel clock */
static double uct_info_clock_accuracy(void)
{
    double start_sec, elapsed_sec;
    ucs_time_t start;

    start_sec = ucs_get_accurate_time();
    start     = ucs_get_time();
    do {
        elapsed_sec = ucs_get_accurate_time() - start_sec;
    } while (elapsed_sec < UCT_INFO_MEASURE_SEC);

    return 100.0 * ucs_time_to_sec(ucs_get_time() - start) / elapsed_sec;
}

static void uct_info_print_limit(const char *label, int resource)
{
    struct rlimit rlim;

    if (ucs_sys_getrlimit(resource, &rlim) != UCS_OK) {
        printf("# %-22s unknown\n", label);
    } else if (rlim.rlim_cur == RLIM_INFINITY) {
        printf("# %-22s unlimited\n", label);
    } else {
        printf("# %-22s %llu\n", label, (unsigned long long)rlim.rlim_cur);
    }
}

void uct_info_print_system(void)
{
    char buf[UCT_INFO_LINE_MAX];
    unsigned cores, packages;
    struct utsname uts;
    long huge_total, huge_free;
    size_t huge_page_size;

    printf("# Host name:             %s\n", ucs_get_host_name());
    if (uname(&uts) == 0) {
        printf("# Kernel:                %s %s %s\n", uts.sysname, uts.release,
               uts.machine);
        printf("# Kernel build:          %s\n", uts.version);
    }

    printf("# CPU vendor:            %s\n",
           uct_info_cpuinfo("vendor_id", buf, sizeof(buf)));
    printf("# CPU model:             %s\n",
           uct_info_cpuinfo("model name", buf, sizeof(buf)));
    uct_info_count_cores(&cores, &packages);
    printf("# CPUs:                  %ld configured, %ld online\n",
           ucs_sys_get_num_cpus(), sysconf(_SC_NPROCESSORS_ONLN));
    printf("# Physical cores:        %u in %u package%s\n", cores, packages,
           (packages == 1) ? "" : "s");
    printf("# NUMA nodes:            %u (topology read with %s)\n",
           ucs_topo_num_numa_nodes(), ucs_topo_backend_name());

    printf("# Memory:                %ld kB\n", uct_info_meminfo("MemTotal"));
    printf("# Page size:             %zu\n", ucs_get_page_size());
    huge_page_size = ucs_get_huge_page_size();
    huge_total     = uct_info_meminfo("HugePages_Total");
    huge_free      = uct_info_meminfo("HugePages_Free");
    if (huge_page_size == 0) {
        printf("# Huge pages:            none\n");
    } else {
        printf("# Huge pages:            %zu kB each, %ld reserved, %ld "
               "free\n",
               huge_page_size / 1024, huge_total, huge_free);
    }
    printf("# Transparent hugepages: %s\n",
           uct_info_file_line("/sys/kernel/mm/transparent_hugepage/enabled",
                              buf, sizeof(buf)));

    printf("# Clock source:          %s\n", ucs_time_source_name());
    printf("# Clock frequency:       %.3f MHz\n",
           ucs_time_units_per_sec() / 1e6);
    printf("# Clock accuracy:        %.3f %%\n", uct_info_clock_accuracy());
    printf("# Kernel clock source:   %s\n",
           uct_info_file_line("/sys/devices/system/clocksource/clocksource0/"
                              "current_clocksource",
                              buf, sizeof(buf)));

    uct_info_print_limit("Open files limit:", RLIMIT_NOFILE);
    uct_info_print_limit("Locked memory limit:", RLIMIT_MEMLOCK);
}

/* ------------------------------------------------------------------------
 * -T: topology
 */

/* Listing every transport resource registers the devices they run on */
static void uct_info_register_devices(void)
{
    uct_component_h *components;
    uct_component_attr_t attr;
    uct_md_resource_desc_t *mds;
    uct_tl_resource_desc_t *resources;
    unsigned c, m, num_components, num_resources;
    uct_md_config_t *md_config;
    uct_md_h md;

    if (uct_query_components(&components, &num_components) != UCS_OK) {
        return;
    }

    for (c = 0; c < num_components; ++c) {
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
        if (uct_component_query(components[c], &attr) != UCS_OK) {
            continue;
        }
        mds = calloc(attr.md_resource_count + 1, sizeof(*mds));
        if (mds == NULL) {
            continue;
        }
        attr.field_mask   = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
        attr.md_resources = mds;
        if (uct_component_query(components[c], &attr) != UCS_OK) {
            attr.md_resource_count = 0;
        }
        for (m = 0; m < attr.md_resource_count; ++m) {
            if (uct_md_config_read(components[c], NULL, NULL, &md_config) !=
                UCS_OK) {
                continue;
            }
            if (uct_md_open(components[c], mds[m].md_name, md_config, &md) ==
                UCS_OK) {
                if (uct_md_query_tl_resources(md, &resources, &num_resources) ==
                    UCS_OK) {
                    uct_release_tl_resource_list(resources);
                }
                uct_md_close(md);
            }
            uct_config_release(md_config);
        }
        free(mds);
    }
    uct_release_component_list(components);
}

void uct_info_print_topology(void)
{
    ucs_sys_dev_distance_t distance;
    unsigned i, j, num_devices;

    uct_info_register_devices();
    ucs_topo_print_info(stdout);

    num_devices = ucs_topo_num_devices();
    if (num_devices == 0) {
        printf("# no PCI device is used by a transport\n#\n");
        return;
    }

    printf("# Estimated bandwidth between devices (MB/s; inf: no limit "
           "known):\n#\n#     ");
    for (j = 0; j < num_devices; ++j) {
        printf(" %12u", j);
    }
    printf("\n");
    for (i = 0; i < num_devices; ++i) {
        printf("# %3u ", i);
        for (j = 0; j < num_devices; ++j) {
            if (ucs_topo_get_distance(i, j, &distance) != UCS_OK) {
                printf(" %12s", "?");
            } else if (distance.bandwidth >= DBL_MAX) {
                printf(" %12s", "inf");
            } else {
                printf(" %12.0f", distance.bandwidth / 1e6);
            }
        }
        printf("\n");
    }
    printf("#\n");
}

/* ------------------------------------------------------------------------
 * -M: memcpy bandwidth
 */

#define UCT_INFO_MEMCPY_MIN (4ul * 1024)
#define UCT_INFO_MEMCPY_MAX (64ul * 1024 * 1024)

int uct_info_print_memcpy(void)
{
    double start_sec, elapsed_sec;
    unsigned long count;
    size_t size;
    char *src, *dst;

    src = malloc(UCT_INFO_MEMCPY_MAX);
    dst = malloc(UCT_INFO_MEMCPY_MAX);
    if ((src == NULL) || (dst == NULL)) {
        fprintf(stderr, "uct_info: no memory for the memcpy buffers\n");
        free(dst);
        free(src);
        return 1;
    }
    memset(src, 0x5a, UCT_INFO_MEMCPY_MAX);
    memset(dst, 0, UCT_INFO_MEMCPY_MAX);

    printf("# memcpy bandwidth (glibc memcpy, one thread, buffers "
           "already touched):\n");
    for (size = UCT_INFO_MEMCPY_MIN; size <= UCT_INFO_MEMCPY_MAX; size *= 2) {
        count     = 0;
        start_sec = ucs_get_accurate_time();
        do {
            memcpy(dst, src, size);
            /* keep the copy: the compiler may not drop it */
            __asm__ __volatile__("" : : "r"(dst) : "memory");
            ++count;
            elapsed_sec = ucs_get_accurate_time() - start_sec;
        } while (elapsed_sec < UCT_INFO_MEASURE_SEC);
        printf("# %12zu bytes: %10.1f MB/s\n", size,
               (double)size * count / elapsed_sec / 1e6);
    }

    free(dst);
    free(src);
    return 0;
}
