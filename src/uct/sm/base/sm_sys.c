/*
 * Host, namespace and process identity for the shared-memory transports.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sm_sys.h"

#include <ucs/debug/log.h>
#include <ucs/sys/sys.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static pthread_once_t uct_sm_self_once = PTHREAD_ONCE_INIT;
static ucs_status_t uct_sm_self_status = UCS_ERR_UNSUPPORTED;
static uct_sm_dev_addr_t uct_sm_self_addr;
static pid_t uct_sm_self_pid_value;
static uint64_t uct_sm_self_start;

/* "0123abcd-...": 32 hex digits, dashes anywhere, into two numbers */
static int uct_sm_parse_boot_id(const char *text, uint64_t id[2])
{
    unsigned digits = 0;
    const char *p;
    int value;

    id[0] = id[1] = 0;
    for (p = text; (*p != '\0') && (*p != '\n'); ++p) {
        if (*p == '-') {
            continue;
        }
        if ((*p >= '0') && (*p <= '9')) {
            value = *p - '0';
        } else if ((*p >= 'a') && (*p <= 'f')) {
            value = *p - 'a' + 10;
        } else if ((*p >= 'A') && (*p <= 'F')) {
            value = *p - 'A' + 10;
        } else {
            return 0;
        }
        if (digits >= 32) {
            return 0;
        }
        id[digits / 16] = (id[digits / 16] << 4) | (uint64_t)value;
        ++digits;
    }
    return digits == 32;
}

static int uct_sm_ns_inode(const char *name, uint64_t *inode_p)
{
    char path[64];
    struct stat st;

    snprintf(path, sizeof(path), "/proc/self/ns/%s", name);
    if (stat(path, &st) != 0) {
        ucs_debug("shared memory: stat(%s) failed: %m", path);
        return 0;
    }
    *inode_p = st.st_ino;
    return 1;
}

static void uct_sm_self_init(void)
{
    char boot_id[64];
    uct_sm_dev_addr_t addr;

    memset(&addr, 0, sizeof(addr));
    if (ucs_read_file_str(boot_id, sizeof(boot_id), 1,
                          "/proc/sys/kernel/random/boot_id") < 0) {
        ucs_debug("shared memory: cannot read the boot id: %m");
        return;
    }
    if (!uct_sm_parse_boot_id(boot_id, addr.boot_id)) {
        ucs_debug("shared memory: unexpected boot id '%s'", boot_id);
        return;
    }
    if (!uct_sm_ns_inode("ipc", &addr.ipc_ns) ||
        !uct_sm_ns_inode("pid", &addr.pid_ns)) {
        return;
    }
    addr.uid = (uint32_t)geteuid();

    uct_sm_self_pid_value = getpid();
    if (uct_sm_proc_start_time(uct_sm_self_pid_value, &uct_sm_self_start) !=
        UCS_OK) {
        ucs_debug("shared memory: cannot read this process's start time");
        return;
    }

    uct_sm_self_addr   = addr;
    uct_sm_self_status = UCS_OK;
}

ucs_status_t uct_sm_dev_addr_get(uct_sm_dev_addr_t *addr)
{
    pthread_once(&uct_sm_self_once, uct_sm_self_init);
    if (uct_sm_self_status == UCS_OK) {
        *addr = uct_sm_self_addr;
    }
    return uct_sm_self_status;
}

int uct_sm_dev_addr_is_local(const void *remote, unsigned need)
{
    uct_sm_dev_addr_t self, peer;

    if ((remote == NULL) || (uct_sm_dev_addr_get(&self) != UCS_OK)) {
        return 0;
    }

    memcpy(&peer, remote, sizeof(peer));
    if ((peer.boot_id[0] != self.boot_id[0]) ||
        (peer.boot_id[1] != self.boot_id[1]) || (peer.uid != self.uid)) {
        return 0;
    }
    if ((need & UCT_SM_SAME_IPC_NS) && (peer.ipc_ns != self.ipc_ns)) {
        return 0;
    }
    if ((need & UCT_SM_SAME_PID_NS) && (peer.pid_ns != self.pid_ns)) {
        return 0;
    }
    return 1;
}

ucs_status_t uct_sm_proc_start_time(pid_t pid, uint64_t *start_p)
{
    char path[64], buf[1024];
    unsigned long long start;
    const char *p;
    ssize_t len;
    int field;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    len = ucs_read_file(buf, sizeof(buf) - 1, 1, "%s", path);
    if (len <= 0) {
        return UCS_ERR_NO_ELEM;
    }
    buf[len] = '\0';

    /* the command name may hold anything, ')' included: fields follow
     * the last ')', starting with field 3 (state) */
    p = strrchr(buf, ')');
    if (p == NULL) {
        return UCS_ERR_NO_ELEM;
    }
    for (field = 2; field < 21; ++field) {
        p = strchr(p + 1, ' ');
        if (p == NULL) {
            return UCS_ERR_NO_ELEM;
        }
    }
    if (sscanf(p + 1, "%llu", &start) != 1) {
        return UCS_ERR_NO_ELEM;
    }

    *start_p = start;
    return UCS_OK;
}

pid_t uct_sm_self_pid(void)
{
    pthread_once(&uct_sm_self_once, uct_sm_self_init);
    return uct_sm_self_pid_value;
}

uint64_t uct_sm_self_start_time(void)
{
    pthread_once(&uct_sm_self_once, uct_sm_self_init);
    return uct_sm_self_start;
}

static int uct_sm_pidfd_open(pid_t pid)
{
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    errno = ENOSYS;
    return -1;
#endif
}

ucs_status_t uct_sm_proc_open(pid_t pid, uint64_t start, uct_sm_proc_t *proc)
{
    uint64_t now;
    int pidfd;

    if (pid <= 0) {
        return UCS_ERR_UNREACHABLE;
    }

    /* the descriptor first, then the start time: if the time matches,
     * the process the descriptor holds is the one that started then */
    pidfd = uct_sm_pidfd_open(pid);
    if ((pidfd < 0) && (errno == ESRCH)) {
        return UCS_ERR_UNREACHABLE;
    }

    if ((uct_sm_proc_start_time(pid, &now) != UCS_OK) || (now != start)) {
        if (pidfd >= 0) {
            close(pidfd);
        }
        return UCS_ERR_UNREACHABLE;
    }

    /* pidfd_open() sets close-on-exec itself */
    proc->pid   = pid;
    proc->pidfd = pidfd;
    proc->start = start;
    return UCS_OK;
}

int uct_sm_proc_is_alive(const uct_sm_proc_t *proc)
{
    struct pollfd pfd;
    uint64_t now;
    int ret;

    if (proc->pidfd >= 0) {
        /* readable once the process has exited */
        pfd.fd      = proc->pidfd;
        pfd.events  = POLLIN;
        pfd.revents = 0;
        ret         = poll(&pfd, 1, 0);
        if (ret >= 0) {
            return ret == 0;
        }
    }

    return (uct_sm_proc_start_time(proc->pid, &now) == UCS_OK) &&
           (now == proc->start);
}

void uct_sm_proc_close(uct_sm_proc_t *proc)
{
    if (proc->pidfd >= 0) {
        close(proc->pidfd);
        proc->pidfd = -1;
    }
}
