/*
 * What the shared-memory transports (posix, sysv, cma) share: the
 * identity of this host and of the namespaces that decide whether two
 * processes can share memory or reach each other's pid, and the identity
 * of a peer process that survives pid reuse.
 */
#ifndef UCT_SM_SYS_H_
#define UCT_SM_SYS_H_

#include <ucs/type/status.h>

#include <stdint.h>
#include <sys/types.h>

/* The name every shared-memory transport gives its one device */
#define UCT_SM_DEV_NAME "memory"

/**
 * The device address of the shared-memory transports (40 bytes): two
 * processes share memory when they run on the same boot of the same host
 * (boot id), as the same user, and in the same IPC namespace (posix and
 * sysv segments) or PID namespace (cma and /proc/<pid> paths). Every field
 * is a number compared for equality; nothing in it is trusted further.
 */
typedef struct uct_sm_dev_addr {
    uint64_t boot_id[2]; /* /proc/sys/kernel/random/boot_id */
    uint64_t ipc_ns;     /* inode of /proc/self/ns/ipc */
    uint64_t pid_ns;     /* inode of /proc/self/ns/pid */
    uint32_t uid;        /* effective user id */
    uint32_t reserved;   /* 0 */
} uct_sm_dev_addr_t;

/* What a transport needs in common with its peer */
#define UCT_SM_SAME_IPC_NS 1u /* segments by name or id (sysv) */
#define UCT_SM_SAME_PID_NS 2u /* /proc/<pid>, process_vm_*() */

/**
 * This process's device address, read once (later calls return the same).
 * @return UCS_OK, or UCS_ERR_UNSUPPORTED (logged at debug level) when the
 *         host's identity cannot be read: no shared-memory transport is
 *         then offered.
 */
ucs_status_t uct_sm_dev_addr_get(uct_sm_dev_addr_t *addr);

/** Whether @a remote (a peer's device address, any bytes) is on this host,
 *  of this user, in the namespaces @a need (UCT_SM_SAME_*) asks for. */
int uct_sm_dev_addr_is_local(const void *remote, unsigned need);

/**
 * The start time of process @a pid (field 22 of /proc/<pid>/stat, in clock
 * ticks since boot): with the pid it names one process for the life of the
 * boot, since a pid is reused only by a process that starts later.
 * @return UCS_OK; UCS_ERR_NO_ELEM when there is no such process.
 */
ucs_status_t uct_sm_proc_start_time(pid_t pid, uint64_t *start_p);

/** This process's pid and start time, read once. */
pid_t uct_sm_self_pid(void);
uint64_t uct_sm_self_start_time(void);

/**
 * A peer process held for liveness checks: a pidfd (Linux 5.3 and later)
 * opened on the pid after its start time was checked, so the descriptor
 * names that process even once its pid is reused; without pidfd the check
 * reads the start time again.
 */
typedef struct uct_sm_proc {
    pid_t pid;
    int pidfd;      /* -1 without pidfd_open() */
    uint64_t start; /* start time the peer announced */
} uct_sm_proc_t;

/**
 * Opens process @a pid that started at @a start.
 * @return UCS_OK; UCS_ERR_UNREACHABLE when no such process runs (it
 *         exited, or its pid is now another process's).
 */
ucs_status_t uct_sm_proc_open(pid_t pid, uint64_t start, uct_sm_proc_t *proc);

/** Whether the process is still running (a system call: check path). */
int uct_sm_proc_is_alive(const uct_sm_proc_t *proc);

void uct_sm_proc_close(uct_sm_proc_t *proc);

#endif
