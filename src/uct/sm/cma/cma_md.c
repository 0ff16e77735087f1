/*
 * The cma component and memory domain: whether cross memory attach works
 * here, registration (a no-op) and remote keys (none).
 *
 * Memory needs no registration and carries no key. With process_vm_*()
 * the kernel lets every process of our user that may ptrace us read and
 * write all of our memory, keyed or not: the trust boundary is the user
 * id (and the Yama ptrace policy), not a registration, so a key would
 * only pretend to protect something.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* process_vm_readv */
#endif
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cma.h"

#include <ucs/debug/log.h>
#include <ucs/sys/sys.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#define UCT_CMA_PTRACE_SCOPE_FILE "/proc/sys/kernel/yama/ptrace_scope"
#define UCT_CMA_CAP_SYS_PTRACE    19

int uct_cma_ptrace_scope(void)
{
    char buf[16];
    long scope;
    char *end;

    if (ucs_read_file_str(buf, sizeof(buf), 1, UCT_CMA_PTRACE_SCOPE_FILE) < 0) {
        return -1; /* no Yama: the classic ptrace rules (same user) */
    }
    scope = strtol(buf, &end, 10);
    if (end == buf) {
        return -1;
    }
    return (int)scope;
}

/* Whether CapEff of /proc/self/status has CAP_SYS_PTRACE */
static int uct_cma_has_cap_sys_ptrace(void)
{
    unsigned long long caps = 0;
    char buf[4096], *p;
    ssize_t len;

    len = ucs_read_file(buf, sizeof(buf) - 1, 1, "/proc/self/status");
    if (len <= 0) {
        return 0;
    }
    buf[len] = '\0';
    p        = strstr(buf, "\nCapEff:");
    if ((p == NULL) || (sscanf(p + 8, "%llx", &caps) != 1)) {
        return 0;
    }
    return (caps >> UCT_CMA_CAP_SYS_PTRACE) & 1;
}

int uct_cma_usable(char *why, size_t max)
{
    uct_sm_dev_addr_t addr;
    uint64_t src = 0x636d61, dst = 0;
    struct iovec local, remote;
    int scope, dumpable;
    ssize_t ret;

    if (uct_sm_dev_addr_get(&addr) != UCS_OK) {
        snprintf(why, max,
                 "cannot read this host's boot id and namespaces from /proc; "
                 "mount /proc");
        return 0;
    }

    scope = uct_cma_ptrace_scope();
    if (scope >= 3) {
        snprintf(why, max,
                 "kernel.yama.ptrace_scope=%d forbids process_vm_readv "
                 "between processes until the next boot; boot with "
                 "kernel.yama.ptrace_scope=0 or 1",
                 scope);
        return 0;
    }
    if ((scope == 2) && !uct_cma_has_cap_sys_ptrace()) {
        snprintf(why, max,
                 "kernel.yama.ptrace_scope=2 forbids process_vm_readv "
                 "between processes without CAP_SYS_PTRACE; set it to 0 or 1 "
                 "(sysctl kernel.yama.ptrace_scope=1)");
        return 0;
    }

    dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
    if (dumpable == 0) {
        snprintf(why, max,
                 "this process is not dumpable (prctl PR_SET_DUMPABLE 0, a "
                 "set-user-id or file-capability program), so peers may "
                 "not read or write its memory; run it unprivileged or call "
                 "prctl(PR_SET_DUMPABLE, 1)");
        return 0;
    }

    /* the system call itself: a kernel without CONFIG_CROSS_MEMORY_ATTACH
     * or a seccomp filter (containers) may refuse it */
    local.iov_base  = &dst;
    local.iov_len   = sizeof(dst);
    remote.iov_base = &src;
    remote.iov_len  = sizeof(src);
    ret             = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
    if ((ret != (ssize_t)sizeof(dst)) || (dst != src)) {
        snprintf(why, max,
                 "process_vm_readv() on this process failed: %s; the kernel "
                 "needs CONFIG_CROSS_MEMORY_ATTACH, and a container's seccomp "
                 "profile must allow process_vm_readv/writev",
                 (ret < 0) ? strerror(errno) : "short read");
        return 0;
    }

    return 1;
}

static ucs_status_t uct_cma_query_devices(uct_md_h md,
                                          uct_tl_device_resource_t **devs_p,
                                          unsigned *num_devices_p)
{
    char why[256];

    if (!uct_cma_usable(why, sizeof(why))) {
        ucs_debug("cma: not offered: %s", why);
        *devs_p        = NULL;
        *num_devices_p = 0;
        return UCS_OK;
    }

    return uct_single_device_resource(md, UCT_SM_DEV_NAME, UCT_DEVICE_TYPE_SHM,
                                      UCS_SYS_DEVICE_ID_UNKNOWN, devs_p,
                                      num_devices_p);
}

static void uct_cma_md_print_info(uct_md_h md, FILE *stream)
{
    char why[256];
    int scope;

    if (!uct_cma_usable(why, sizeof(why))) {
        fprintf(stream, "# cma: not offered: %s\n", why);
        return;
    }

    scope = uct_cma_ptrace_scope();
    if (scope < 0) {
        fprintf(stream, "# cma: process_vm_readv/writev work between "
                        "processes of this user (no Yama ptrace policy)\n");
    } else {
        fprintf(stream,
                "# cma: process_vm_readv/writev work between processes of "
                "this user (kernel.yama.ptrace_scope=%d%s)\n",
                scope,
                (scope == 1) ? "; interfaces allow any process of the user "
                               "to attach: prctl PR_SET_PTRACER_ANY"
                             : "");
    }
}

static void uct_cma_md_close(uct_md_h md)
{
    free(md);
}

static ucs_status_t uct_cma_md_query(uct_md_h md, uct_md_attr_t *md_attr)
{
    uct_md_base_attr_init(md, md_attr);
    /* no NEED_MEMH, no NEED_RKEY: see the top of this file */
    md_attr->cap.flags            = UCT_MD_FLAG_REG;
    md_attr->cap.reg_mem_types    = UCS_BIT(UCS_MEMORY_TYPE_HOST);
    md_attr->cap.access_mem_types = UCS_BIT(UCS_MEMORY_TYPE_HOST);
    md_attr->cap.detect_mem_types = 0;
    md_attr->cap.max_reg          = SIZE_MAX;
    md_attr->rkey_packed_size     = 0;
    md_attr->reg_cost             = ucs_linear_func_make(0, 0);
    return UCS_OK;
}

static ucs_status_t uct_cma_md_mkey_pack(uct_md_h md, uct_mem_h memh,
                                         void *rkey_buffer)
{
    return UCS_OK; /* the key is empty */
}

static const uct_md_ops_t uct_cma_md_ops = {
    .close              = uct_cma_md_close,
    .query              = uct_cma_md_query,
    .mem_reg            = uct_md_dummy_mem_reg,
    .mem_dereg          = uct_md_dummy_mem_dereg,
    .mem_query          = uct_host_md_mem_query,
    .mkey_pack          = uct_cma_md_mkey_pack,
    .detect_memory_type = uct_host_md_detect_memory_type,
    .print_info         = uct_cma_md_print_info};

static ucs_status_t uct_cma_md_open(uct_component_t *component,
                                    const char *md_name,
                                    const uct_md_config_t *config,
                                    uct_md_h *md_p)
{
    uct_md_t *md;

    md = calloc(1, sizeof(*md));
    if (md == NULL) {
        ucs_error("failed to allocate memory domain '%s'", md_name);
        return UCS_ERR_NO_MEMORY;
    }

    uct_md_base_init(md, &uct_cma_md_ops, component);
    *md_p = md;
    return UCS_OK;
}

uct_tl_t uct_cma_tl = {.name           = UCT_CMA_NAME,
                       .query_devices  = uct_cma_query_devices,
                       .iface_open     = uct_cma_iface_open,
                       .config         = {.name   = "CMA transport",
                                          .prefix = "CMA_",
                                          .table  = uct_cma_iface_config_table,
                                          .size   = sizeof(uct_cma_iface_config_t)},
                       .iface_vfs_init = uct_cma_iface_vfs_init,
                       .ep_vfs_init    = uct_cma_ep_vfs_init};

static uct_component_t uct_cma_component = {
    .name               = UCT_CMA_NAME,
    .query_md_resources = uct_md_query_single_md_resource,
    .md_open            = uct_cma_md_open,
    .rkey_unpack        = uct_md_stub_rkey_unpack,
    .rkey_ptr           = NULL,
    .rkey_release       = uct_md_stub_rkey_release,
    .md_config          = {.name   = "CMA memory domain",
                           .prefix = "CMA_",
                           .table  = uct_md_config_table,
                           .size   = sizeof(uct_md_config_t)},
    .flags              = 0};

void uct_cma_register(void)
{
    uct_component_register(&uct_cma_component);
    uct_tl_register(&uct_cma_component, &uct_cma_tl);
}
