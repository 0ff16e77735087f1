/*
 * Segment mappers of the posix and sysv transports.
 *
 * posix: a file of a tmpfs (UCX_POSIX_DIR) opened with O_TMPFILE, so it
 * never has a name (or, where the file system cannot do that, created
 * under a random name and unlinked at once), its pages reserved with
 * posix_fallocate() so a full tmpfs fails here and not later with SIGBUS.
 * Peers open it through /proc/<pid>/fd/<fd> of the owner. The memory goes
 * away when the last process holding it exits, however it exits.
 *
 * sysv: an IPC_PRIVATE segment marked for removal right after the owner
 * attached it; Linux lets peers attach a marked segment while it lives,
 * and frees it when the last one detaches or dies.
 *
 * Both are created with mode 0600, and a peer's segment is attached only
 * when the system reports our user as its owner, with no access for
 * anyone else, and at least as long as the peer said.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* O_TMPFILE, mremap() */
#endif

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mm.h"

#include <ucs/debug/log.h>
#include <ucs/sys/sys.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* ------------------------------------------------------------------------
 * posix
 */

static int uct_mm_posix_open_tmp(uct_mm_md_t *md, const char *what)
{
    char path[PATH_MAX];
    uint64_t rnd = 0;
    int fd;

    fd = open(md->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if ((fd >= 0) ||
        ((errno != EOPNOTSUPP) && (errno != EISDIR) && (errno != EINVAL))) {
        return fd;
    }

    /* no O_TMPFILE here: a random name, unlinked before anyone can know
     * the descriptor that opens it */
    (void)ucs_sys_random_bytes(&rnd, sizeof(rnd));
    snprintf(path, sizeof(path), "%s/openuct-%d-%" PRIu64 "-%016" PRIx64,
             md->dir, (int)getpid(), md->seg_seq++, rnd);
    fd = open(path, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0) {
        unlink(path);
    }
    ucs_debug("posix: %s: %s has no O_TMPFILE, used a file unlinked at once",
              what, md->dir);
    return fd;
}

static ucs_status_t uct_mm_posix_create(uct_mm_md_t *md, size_t length,
                                        const char *what, uct_mm_seg_t *seg)
{
    struct statvfs vfs;
    struct stat st;
    void *address;
    int fd, ret;

    fd = uct_mm_posix_open_tmp(md, what);
    if (fd < 0) {
        if ((errno == EMFILE) || (errno == ENFILE)) {
            ucs_error("posix: cannot create the %s: %m; raise the open "
                      "files limit (ulimit -n)",
                      what);
        } else {
            ucs_error("posix: cannot create the %s in UCX_POSIX_DIR=%s: %m; "
                      "point UCX_POSIX_DIR to a writable tmpfs",
                      what, md->dir);
        }
        return UCS_ERR_SHMEM_SEGMENT;
    }

    ret = posix_fallocate(fd, 0, length);
    if (ret != 0) {
        if ((ret == ENOSPC) && (statvfs(md->dir, &vfs) == 0)) {
            ucs_error("posix: the %s needs %zu bytes and %s has %llu free "
                      "of %llu: enlarge it (mount -o remount,size=... %s) "
                      "or set UCX_POSIX_DIR to a larger tmpfs",
                      what, length, md->dir,
                      (unsigned long long)vfs.f_bavail * vfs.f_frsize,
                      (unsigned long long)vfs.f_blocks * vfs.f_frsize, md->dir);
        } else {
            ucs_error("posix: cannot reserve %zu bytes for the %s in %s: %s; "
                      "check its size and the memory limits",
                      length, what, md->dir, strerror(ret));
        }
        goto err_close;
    }

    if (fstat(fd, &st) != 0) {
        ucs_error("posix: fstat of the %s failed: %m", what);
        goto err_close;
    }

    address = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (address == MAP_FAILED) {
        ucs_error("posix: mmap of the %s (%zu bytes) failed: %m; check the "
                  "memory limits (ulimit -v, vm.max_map_count)",
                  what, length);
        goto err_close;
    }

    seg->address      = address;
    seg->length       = length;
    seg->fd           = fd;
    seg->ref.id       = (uint64_t)fd;
    seg->ref.check    = st.st_ino;
    seg->ref.length   = length;
    seg->ref.pid      = (uint32_t)getpid();
    seg->ref.reserved = 0;
    return UCS_OK;

err_close:
    close(fd);
    return UCS_ERR_SHMEM_SEGMENT;
}

static void uct_mm_posix_destroy(uct_mm_seg_t *seg)
{
    munmap(seg->address, seg->length);
    close(seg->fd);
}

static ucs_status_t uct_mm_posix_attach(const uct_mm_seg_ref_t *ref,
                                        uct_mm_seg_t *seg)
{
    char path[64];
    struct stat st;
    void *address;
    int fd;

    if ((ref->id > INT32_MAX) || (ref->pid == 0) || (ref->pid > INT32_MAX) ||
        (ref->length == 0) || (ref->length > UCT_MM_SEG_MAX_LENGTH)) {
        ucs_debug("posix: malformed segment reference");
        return UCS_ERR_INVALID_ADDR;
    }

    snprintf(path, sizeof(path), "/proc/%u/fd/%u", ref->pid, (unsigned)ref->id);
    fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        ucs_debug("posix: cannot open %s: %m", path);
        return UCS_ERR_UNREACHABLE;
    }

    if (fstat(fd, &st) != 0) {
        ucs_debug("posix: fstat(%s) failed: %m", path);
        goto err_close;
    }

    /* the file the peer named, ours alone, as long as it said */
    if (!S_ISREG(st.st_mode) || (st.st_uid != geteuid()) ||
        (st.st_mode & (S_IRWXG | S_IRWXO)) || (st.st_ino != ref->check) ||
        ((uint64_t)st.st_size < ref->length)) {
        ucs_debug("posix: %s is not the segment the peer named (mode 0%o "
                  "uid %u inode %" PRIu64 " size %lld)",
                  path, (unsigned)st.st_mode, (unsigned)st.st_uid,
                  (uint64_t)st.st_ino, (long long)st.st_size);
        goto err_close;
    }

    address =
        mmap(NULL, ref->length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (address == MAP_FAILED) {
        ucs_error("posix: mmap of a peer's segment (%" PRIu64 " bytes) "
                  "failed: %m; check the memory limits (ulimit -v, "
                  "vm.max_map_count)",
                  ref->length);
        close(fd);
        return UCS_ERR_NO_MEMORY;
    }

    close(fd);
    seg->address = address;
    seg->length  = ref->length;
    seg->fd      = -1;
    seg->ref     = *ref;
    return UCS_OK;

err_close:
    close(fd);
    return UCS_ERR_UNREACHABLE;
}

static void uct_mm_posix_detach(uct_mm_seg_t *seg)
{
    munmap(seg->address, seg->length);
}

static int uct_mm_posix_usable(uct_mm_md_t *md, char *why, size_t max)
{
    char path[64];
    int fd, fd2;

    fd = uct_mm_posix_open_tmp(md, "probe segment");
    if (fd < 0) {
        snprintf(why, max,
                 "posix: cannot create files in UCX_POSIX_DIR=%s (%m): point "
                 "it to a writable tmpfs",
                 md->dir);
        return 0;
    }

    snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)getpid(), fd);
    fd2 = open(path, O_RDWR | O_CLOEXEC);
    if (fd2 < 0) {
        snprintf(why, max,
                 "posix: peers cannot open segments through /proc/<pid>/fd "
                 "here (%m): use the sysv transport (UCX_TLS=sysv)");
        close(fd);
        return 0;
    }

    close(fd2);
    close(fd);
    return 1;
}

const uct_mm_mapper_t uct_mm_posix_mapper = {.name    = UCT_MM_POSIX_NAME,
                                             .create  = uct_mm_posix_create,
                                             .destroy = uct_mm_posix_destroy,
                                             .attach  = uct_mm_posix_attach,
                                             .detach  = uct_mm_posix_detach,
                                             .usable  = uct_mm_posix_usable};

/* ------------------------------------------------------------------------
 * sysv
 */

static void uct_mm_sysv_create_error(size_t length, const char *what)
{
    long shmmax = 0, shmmni = 0, shmall = 0;

    (void)ucs_read_file_number(&shmmax, 1, "/proc/sys/kernel/shmmax");
    (void)ucs_read_file_number(&shmmni, 1, "/proc/sys/kernel/shmmni");
    (void)ucs_read_file_number(&shmall, 1, "/proc/sys/kernel/shmall");

    if (errno == EINVAL) {
        ucs_error("sysv: the %s needs %zu bytes, more than kernel.shmmax "
                  "(%ld): raise it (sysctl kernel.shmmax=...) or lower "
                  "UCX_SYSV_FIFO_SIZE / UCX_SYSV_SEG_SIZE",
                  what, length, shmmax);
    } else if (errno == ENOSPC) {
        ucs_error("sysv: cannot create the %s: all segments allowed by "
                  "kernel.shmmni (%ld) or pages by kernel.shmall (%ld) are "
                  "in use: raise them with sysctl or use UCX_TLS=posix",
                  what, shmmni, shmall);
    } else if (errno == ENOMEM) {
        ucs_error("sysv: no memory for the %s (%zu bytes): free memory or "
                  "lower UCX_SYSV_FIFO_SIZE / UCX_SYSV_SEG_SIZE",
                  what, length);
    } else {
        ucs_error("sysv: shmget of the %s (%zu bytes) failed: %m", what,
                  length);
    }
}

static ucs_status_t uct_mm_sysv_create(uct_mm_md_t *md, size_t length,
                                       const char *what, uct_mm_seg_t *seg)
{
    void *address;
    int id;

    id = shmget(IPC_PRIVATE, length, IPC_CREAT | IPC_EXCL | 0600);
    if (id < 0) {
        uct_mm_sysv_create_error(length, what);
        return UCS_ERR_SHMEM_SEGMENT;
    }

    address = shmat(id, NULL, 0);
    if (address == (void *)-1) {
        ucs_error("sysv: shmat of the %s failed: %m; check the memory "
                  "limits (ulimit -v, vm.max_map_count)",
                  what);
        shmctl(id, IPC_RMID, NULL);
        return UCS_ERR_SHMEM_SEGMENT;
    }

    /* gone from the system as soon as the last process detaches or dies */
    if (shmctl(id, IPC_RMID, NULL) != 0) {
        ucs_error("sysv: cannot mark the %s for removal: %m", what);
        shmdt(address);
        return UCS_ERR_SHMEM_SEGMENT;
    }

    seg->address      = address;
    seg->length       = length;
    seg->fd           = -1;
    seg->ref.id       = (uint64_t)id;
    seg->ref.check    = 0;
    seg->ref.length   = length;
    seg->ref.pid      = (uint32_t)getpid();
    seg->ref.reserved = 0;
    return UCS_OK;
}

static void uct_mm_sysv_destroy(uct_mm_seg_t *seg)
{
    shmdt(seg->address);
}

static ucs_status_t uct_mm_sysv_attach(const uct_mm_seg_ref_t *ref,
                                       uct_mm_seg_t *seg)
{
    struct shmid_ds ds;
    void *address;
    uid_t uid = geteuid();

    if ((ref->id > INT32_MAX) || (ref->check != 0) || (ref->length == 0) ||
        (ref->length > UCT_MM_SEG_MAX_LENGTH)) {
        ucs_debug("sysv: malformed segment reference");
        return UCS_ERR_INVALID_ADDR;
    }

    if (shmctl((int)ref->id, IPC_STAT, &ds) != 0) {
        ucs_debug("sysv: segment %" PRIu64 ": %m", ref->id);
        return UCS_ERR_UNREACHABLE;
    }

    if ((ds.shm_perm.uid != uid) || (ds.shm_perm.cuid != uid) ||
        (ds.shm_perm.mode & 077) || (ds.shm_segsz < ref->length) ||
        ((uint32_t)ds.shm_cpid != ref->pid)) {
        ucs_debug("sysv: segment %" PRIu64 " is not the one the peer named "
                  "(uid %u mode 0%o size %zu creator %d)",
                  ref->id, (unsigned)ds.shm_perm.uid,
                  (unsigned)ds.shm_perm.mode, (size_t)ds.shm_segsz,
                  (int)ds.shm_cpid);
        return UCS_ERR_UNREACHABLE;
    }

    address = shmat((int)ref->id, NULL, 0);
    if (address == (void *)-1) {
        ucs_debug("sysv: shmat of segment %" PRIu64 " failed: %m", ref->id);
        return UCS_ERR_UNREACHABLE;
    }

    seg->address = address;
    seg->length  = ref->length;
    seg->fd      = -1;
    seg->ref     = *ref;
    return UCS_OK;
}

static void uct_mm_sysv_detach(uct_mm_seg_t *seg)
{
    shmdt(seg->address);
}

static int uct_mm_sysv_usable(uct_mm_md_t *md, char *why, size_t max)
{
    int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | IPC_EXCL | 0600);

    if (id < 0) {
        snprintf(why, max,
                 "sysv: cannot create segments here (shmget: %m): check "
                 "kernel.shmmni and kernel.shmall, or use UCX_TLS=posix");
        return 0;
    }
    shmctl(id, IPC_RMID, NULL);
    return 1;
}

const uct_mm_mapper_t uct_mm_sysv_mapper = {.name    = UCT_MM_SYSV_NAME,
                                            .create  = uct_mm_sysv_create,
                                            .destroy = uct_mm_sysv_destroy,
                                            .attach  = uct_mm_sysv_attach,
                                            .detach  = uct_mm_sysv_detach,
                                            .usable  = uct_mm_sysv_usable};
