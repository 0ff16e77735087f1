/*
 * uct_vfs wire protocol: the socket's place, its directory's safety, and
 * sending/receiving whole messages.
 */
#include <ucs/vfs/vfs_sock.h>
#include <ucs/debug/log.h>
#include <ucs/sys/dir.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

ucs_status_t ucs_vfs_sock_dir(char *buf, size_t max)
{
    const char *dir = getenv("UCX_VFS_SOCK_DIR");
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    int n;

    if ((dir != NULL) && (dir[0] != '\0')) {
        n = snprintf(buf, max, "%s", dir);
    } else if ((xdg != NULL) && (xdg[0] != '\0')) {
        n = snprintf(buf, max, "%s/openuct", xdg);
    } else {
        n = snprintf(buf, max, "/tmp/openuct-%u", (unsigned)getuid());
    }
    if ((n < 0) || ((size_t)n >= max)) {
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    return UCS_OK;
}

ucs_status_t ucs_vfs_sock_path(char *buf, size_t max)
{
    char dir[256];
    ucs_status_t status;
    int n;

    status = ucs_vfs_sock_dir(dir, sizeof(dir));
    if (status != UCS_OK) {
        return status;
    }
    n = snprintf(buf, max, "%s/%s", dir, UCS_VFS_SOCK_NAME);
    if ((n < 0) || ((size_t)n >= max)) {
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    return UCS_OK;
}

ucs_status_t ucs_vfs_sock_check_dir(const char *dir, int create)
{
    ucs_sys_dir_check_t check = {
        .what      = "vfs: the socket directory",
        .hint      = "choose another with UCX_VFS_SOCK_DIR (uct_vfs: -s)",
        .forbidden = S_IRWXG | S_IRWXO,
        .create    = create};
    char real[PATH_MAX];

    return ucs_sys_dir_check_private(dir, &check, real, sizeof(real), NULL);
}

static ucs_status_t ucs_vfs_sock_errno_status(void)
{
    return ((errno == EPIPE) || (errno == ECONNRESET))
               ? UCS_ERR_CONNECTION_RESET
               : UCS_ERR_IO_ERROR;
}

static ucs_status_t ucs_vfs_sock_send_all(int fd, const void *buf,
                                          size_t length)
{
    const char *p = buf;
    ssize_t ret;

    while (length > 0) {
        ret = send(fd, p, length, MSG_NOSIGNAL);
        if (ret < 0) {
            if (errno == EINTR) {
                continue;
            }
            return ucs_vfs_sock_errno_status();
        }
        p += ret;
        length -= (size_t)ret;
    }
    return UCS_OK;
}

ucs_status_t ucs_vfs_sock_send(int fd, uint16_t op, uint32_t seq,
                               int32_t status, const void *payload,
                               size_t length)
{
    ucs_vfs_sock_hdr_t hdr;
    ucs_status_t ret;

    if (length > UCS_VFS_SOCK_MAX_PAYLOAD) {
        return UCS_ERR_EXCEEDS_LIMIT;
    }

    memset(&hdr, 0, sizeof(hdr));
    hdr.magic   = UCS_VFS_SOCK_MAGIC;
    hdr.version = UCS_VFS_SOCK_VERSION;
    hdr.op      = op;
    hdr.seq     = seq;
    hdr.status  = status;
    hdr.length  = (uint32_t)length;

    ret = ucs_vfs_sock_send_all(fd, &hdr, sizeof(hdr));
    if ((ret != UCS_OK) || (length == 0)) {
        return ret;
    }
    return ucs_vfs_sock_send_all(fd, payload, length);
}

ucs_status_t ucs_vfs_sock_recv_all(int fd, void *buf, size_t length)
{
    char *p = buf;
    ssize_t ret;

    while (length > 0) {
        ret = recv(fd, p, length, 0);
        if (ret == 0) {
            return UCS_ERR_CONNECTION_RESET;
        }
        if (ret < 0) {
            if (errno == EINTR) {
                continue;
            }
            return ucs_vfs_sock_errno_status();
        }
        p += ret;
        length -= (size_t)ret;
    }
    return UCS_OK;
}

ucs_status_t ucs_vfs_sock_recv_hdr(int fd, ucs_vfs_sock_hdr_t *hdr)
{
    ucs_vfs_sock_hdr_t tmp;
    ucs_status_t status;

    status = ucs_vfs_sock_recv_all(fd, &tmp, sizeof(tmp));
    if (status != UCS_OK) {
        return status;
    }
    if ((tmp.magic != UCS_VFS_SOCK_MAGIC) ||
        (tmp.version != UCS_VFS_SOCK_VERSION) ||
        (tmp.length > UCS_VFS_SOCK_MAX_PAYLOAD)) {
        ucs_debug("vfs: bad message header (magic 0x%x version %u length "
                  "%u)",
                  tmp.magic, tmp.version, tmp.length);
        return UCS_ERR_INVALID_PARAM;
    }
    *hdr = tmp;
    return UCS_OK;
}
