/*
 * The wire protocol between a process and the uct_vfs daemon, over a unix
 * stream socket in a directory private to the user.
 *
 * A process with UCX_VFS_ENABLE=y connects and sends HELLO; from then on
 * the daemon sends requests (GET_INFO, LIST, READ, READLINK with an
 * absolute tree path as payload) and the process answers each with one
 * reply carrying the same op and seq. Every message is a header followed
 * by @a length payload bytes:
 *
 *   HELLO     process -> daemon: ucs_vfs_sock_hello_t, then the program
 *             name (NUL-terminated)
 *   GET_INFO  reply: ucs_vfs_sock_info_t
 *   LIST      reply: the entry names, each NUL-terminated
 *   READ      reply: the file content
 *   READLINK  reply: the link target, NUL-terminated
 *
 * A reply's status is a ucs_status_t; a failed request has no payload.
 * Integers are in the host's byte order (both ends are on one machine).
 */
#ifndef UCS_VFS_SOCK_H_
#define UCS_VFS_SOCK_H_

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

BEGIN_C_DECLS

#define UCS_VFS_SOCK_MAGIC       0x53465655u /* "UVFS" */
#define UCS_VFS_SOCK_VERSION     1
#define UCS_VFS_SOCK_MAX_PAYLOAD (4u << 20)  /* larger: UCS_ERR_EXCEEDS_LIMIT */
#define UCS_VFS_SOCK_NAME        "vfs.sock"

typedef enum {
    UCS_VFS_SOCK_OP_HELLO    = 1,
    UCS_VFS_SOCK_OP_GET_INFO = 2,
    UCS_VFS_SOCK_OP_LIST     = 3,
    UCS_VFS_SOCK_OP_READ     = 4,
    UCS_VFS_SOCK_OP_READLINK = 5
} ucs_vfs_sock_op_t;

typedef struct {
    uint32_t magic;   /* UCS_VFS_SOCK_MAGIC */
    uint16_t version; /* UCS_VFS_SOCK_VERSION */
    uint16_t op;      /* ucs_vfs_sock_op_t */
    uint32_t seq;     /* request number, echoed by the reply */
    int32_t  status;  /* replies: ucs_status_t; requests: 0 */
    uint32_t length;  /* payload bytes that follow */
    uint32_t reserved;
} ucs_vfs_sock_hdr_t;

typedef struct {
    uint32_t pid;
    uint32_t reserved;
} ucs_vfs_sock_hello_t;

typedef struct {
    uint32_t type; /* ucs_vfs_node_type_t */
    uint32_t reserved;
    uint64_t size;
} ucs_vfs_sock_info_t;


/**
 * The socket's directory: $XDG_RUNTIME_DIR/openuct when XDG_RUNTIME_DIR is
 * set, else /tmp/openuct-<uid>; UCX_VFS_SOCK_DIR overrides both.
 * @return UCS_ERR_EXCEEDS_LIMIT if it does not fit in @a max bytes.
 */
ucs_status_t ucs_vfs_sock_dir(char *buf, size_t max);

/** <dir>/vfs.sock; the same errors. */
ucs_status_t ucs_vfs_sock_path(char *buf, size_t max);

/**
 * Checks that @a dir is a directory owned by the calling user (effective
 * uid) with no access for group or others (a process of another user could
 * otherwise listen there), and that no other user can replace it: not a
 * symbolic link, its parents root's or the user's own (see
 * ucs_sys_dir_check_private()). With @a create, makes it (mode 0700) when
 * missing. Logs what is wrong and how to fix it.
 * @return UCS_OK, UCS_ERR_NO_ELEM (missing), UCS_ERR_IO_ERROR (unsafe).
 */
ucs_status_t ucs_vfs_sock_check_dir(const char *dir, int create);

/**
 * Sends a header and its payload in full (MSG_NOSIGNAL: a closed peer is
 * an error, not a signal). Blocking; retries on EINTR.
 * @return UCS_OK, UCS_ERR_CONNECTION_RESET, UCS_ERR_IO_ERROR.
 */
ucs_status_t ucs_vfs_sock_send(int fd, uint16_t op, uint32_t seq,
                               int32_t status, const void *payload,
                               size_t length);

/**
 * Receives one header and checks magic, version and the payload limit.
 * @return UCS_OK, UCS_ERR_CONNECTION_RESET (orderly close),
 *         UCS_ERR_IO_ERROR, UCS_ERR_INVALID_PARAM (a bad header).
 */
ucs_status_t ucs_vfs_sock_recv_hdr(int fd, ucs_vfs_sock_hdr_t *hdr);

/** Receives exactly @a length bytes into @a buf; errors as above. */
ucs_status_t ucs_vfs_sock_recv_all(int fd, void *buf, size_t length);

END_C_DECLS

#endif
