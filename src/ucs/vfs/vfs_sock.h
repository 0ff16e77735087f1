/**
 * @file
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
 *
 * Included by libucs's daemon connection and by the uct_vfs tool. The
 * functions keep no state; one socket must not be read (or written) by
 * two threads at once.
 */
#ifndef UCS_VFS_SOCK_H_
#define UCS_VFS_SOCK_H_

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

BEGIN_C_DECLS

/** First word of every header: "UVFS" in little-endian order. */
#define UCS_VFS_SOCK_MAGIC 0x53465655u /* "UVFS" */
/** Protocol version; a header with another one is refused. */
#define UCS_VFS_SOCK_VERSION 1
/** Largest payload; larger: UCS_ERR_EXCEEDS_LIMIT when sending, a bad
 *  header when receiving. */
#define UCS_VFS_SOCK_MAX_PAYLOAD (4u << 20)
/** File name of the daemon's socket in the socket directory. */
#define UCS_VFS_SOCK_NAME "vfs.sock"

/** Message kinds; a reply carries the op of its request. */
typedef enum {
    UCS_VFS_SOCK_OP_HELLO    = 1, /**< Process introduces itself. */
    UCS_VFS_SOCK_OP_GET_INFO = 2, /**< Type and size of a path. */
    UCS_VFS_SOCK_OP_LIST     = 3, /**< Entries of a directory. */
    UCS_VFS_SOCK_OP_READ     = 4, /**< Content of a file. */
    UCS_VFS_SOCK_OP_READLINK = 5  /**< Target of a link. */
} ucs_vfs_sock_op_t;

/** Header of every message. */
typedef struct {
    uint32_t magic;    /**< UCS_VFS_SOCK_MAGIC. */
    uint16_t version;  /**< UCS_VFS_SOCK_VERSION. */
    uint16_t op;       /**< ucs_vfs_sock_op_t. */
    uint32_t seq;      /**< Request number, echoed by the reply. */
    int32_t status;    /**< Replies: ucs_status_t; requests: 0. */
    uint32_t length;   /**< Payload bytes that follow. */
    uint32_t reserved; /**< Zero. */
} ucs_vfs_sock_hdr_t;

/** Payload of HELLO, before the program name. */
typedef struct {
    uint32_t pid;      /**< Process id of the sender. */
    uint32_t reserved; /**< Zero. */
} ucs_vfs_sock_hello_t;

/** Payload of a successful GET_INFO reply. */
typedef struct {
    uint32_t type;     /**< ucs_vfs_node_type_t. */
    uint32_t reserved; /**< Zero. */
    uint64_t size;     /**< As ucs_vfs_path_info_t::size. */
} ucs_vfs_sock_info_t;

/**
 * The socket's directory: $XDG_RUNTIME_DIR/openuct when XDG_RUNTIME_DIR is
 * set, else /tmp/openuct-UID; UCX_VFS_SOCK_DIR overrides both.
 *
 * @param [out] buf  Receives the path.
 * @param [in]  max  Size of @a buf.
 *
 * @return UCS_OK, or UCS_ERR_EXCEEDS_LIMIT if it does not fit in @a max
 *         bytes.
 */
ucs_status_t ucs_vfs_sock_dir(char *buf, size_t max);

/**
 * The socket's path: the directory of ucs_vfs_sock_dir() followed by
 * "/vfs.sock".
 *
 * @param [out] buf  Receives the path.
 * @param [in]  max  Size of @a buf.
 *
 * @return UCS_OK, or UCS_ERR_EXCEEDS_LIMIT if it does not fit.
 */
ucs_status_t ucs_vfs_sock_path(char *buf, size_t max);

/**
 * Checks that @a dir is a directory owned by the calling user (effective
 * uid) with no access for group or others (a process of another user could
 * otherwise listen there), and that no other user can replace it: not a
 * symbolic link, its parents root's or the user's own (see
 * ucs_sys_dir_check_private()). With @a create, makes it (mode 0700) when
 * missing. Logs what is wrong and how to fix it.
 *
 * @param [in] dir     Directory to check.
 * @param [in] create  Nonzero to create it when missing.
 *
 * @return UCS_OK; UCS_ERR_NO_ELEM (missing, and not @a create; not
 *         logged); UCS_ERR_IO_ERROR (unsafe, or cannot be checked or made).
 */
ucs_status_t ucs_vfs_sock_check_dir(const char *dir, int create);

/**
 * Sends a header and its payload in full (MSG_NOSIGNAL: a closed peer is
 * an error, not a signal). Blocking; retries on EINTR.
 *
 * @param [in] fd       Connected unix stream socket.
 * @param [in] op       ucs_vfs_sock_op_t.
 * @param [in] seq      Request number.
 * @param [in] status   ucs_status_t of a reply, 0 for a request.
 * @param [in] payload  Payload bytes; may be NULL when @a length is 0.
 * @param [in] length   Payload length.
 *
 * @return UCS_OK; UCS_ERR_EXCEEDS_LIMIT if @a length is above
 *         UCS_VFS_SOCK_MAX_PAYLOAD (nothing sent); UCS_ERR_CONNECTION_RESET
 *         if the peer is gone; UCS_ERR_IO_ERROR.
 */
ucs_status_t ucs_vfs_sock_send(int fd, uint16_t op, uint32_t seq,
                               int32_t status, const void *payload,
                               size_t length);

/**
 * Receives one header and checks magic, version and the payload limit.
 * Blocking; retries on EINTR.
 *
 * @param [in]  fd   Connected unix stream socket.
 * @param [out] hdr  The header, set on success only.
 *
 * @return UCS_OK, UCS_ERR_CONNECTION_RESET (closed or reset),
 *         UCS_ERR_IO_ERROR, UCS_ERR_INVALID_PARAM (a bad header).
 */
ucs_status_t ucs_vfs_sock_recv_hdr(int fd, ucs_vfs_sock_hdr_t *hdr);

/**
 * Receives exactly @a length bytes into @a buf. Blocking; retries on
 * EINTR.
 *
 * @param [in]  fd      Connected unix stream socket.
 * @param [out] buf     Receives the bytes.
 * @param [in]  length  Number of bytes.
 *
 * @return UCS_OK, UCS_ERR_CONNECTION_RESET (closed before @a length bytes
 *         came, or reset), UCS_ERR_IO_ERROR.
 */
ucs_status_t ucs_vfs_sock_recv_all(int fd, void *buf, size_t length);

END_C_DECLS

#endif
