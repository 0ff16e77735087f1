/**
 * @file
 * The tcp connection manager: connects by IP address and port over plain
 * sockets and carries each side's private data in a small handshake. The
 * wire format and its checks are here so that the fuzz harness can drive
 * the parser without sockets. Included by tcp_cm.c, tcp_md.c and
 * test/fuzz.
 */
#ifndef UCT_TCP_CM_H_
#define UCT_TCP_CM_H_

#include <uct/base/uct_cm.h>
#include <ucs/type/status.h>

#include <stddef.h>
#include <stdint.h>

BEGIN_C_DECLS

/** "OUCM" in network order: the first bytes of every message */
#define UCT_TCP_CM_MAGIC 0x4f55434du
/** Wire version of the handshake */
#define UCT_TCP_CM_VERSION 1
/** Largest private data UCX_TCP_CM_PRIV_DATA_LEN may set */
#define UCT_TCP_CM_PRIV_DATA_MAX (64 * 1024)

/** Message types */
enum {
    UCT_TCP_CM_MSG_REQUEST = 1, /* client -> server, with private data */
    UCT_TCP_CM_MSG_ACCEPT,      /* server -> client, with private data */
    UCT_TCP_CM_MSG_REJECT,      /* server -> client */
    UCT_TCP_CM_MSG_NOTIFY,      /* client -> server: the client is ready */
    UCT_TCP_CM_MSG_DISCONNECT,  /* either way: the connection ends */
    UCT_TCP_CM_MSG_LAST
};

/** The header of every message; all fields in network byte order */
typedef struct uct_tcp_cm_hdr {
    uint32_t magic;    /* UCT_TCP_CM_MAGIC */
    uint8_t version;   /* UCT_TCP_CM_VERSION */
    uint8_t type;      /* UCT_TCP_CM_MSG_* */
    uint16_t reserved; /* 0 */
    uint32_t length;   /* bytes of private data that follow */
} uct_tcp_cm_hdr_t;

/**
 * Check a received header against what the receiver expects.
 * @param [in]  hdr          the header as received (network order).
 * @param [in]  types        UCS_BIT(UCT_TCP_CM_MSG_*) the receiver accepts
 *                           now.
 * @param [in]  max_length   most private data the receiver takes.
 * @param [out] type_p       the message type, on success.
 * @param [out] length_p     the payload length, on success.
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for a bad magic, version or
 *         reserved field, or a type not expected now; UCS_ERR_EXCEEDS_LIMIT
 *         for a payload longer than @a max_length or on a message that
 *         carries none.
 */
ucs_status_t uct_tcp_cm_hdr_check(const uct_tcp_cm_hdr_t *hdr, unsigned types,
                                  size_t max_length, unsigned *type_p,
                                  size_t *length_p);

/**
 * Fill a header to send.
 * @param [out] hdr    the header.
 * @param [in]  type   UCT_TCP_CM_MSG_*.
 * @param [in]  length bytes of private data that follow.
 */
void uct_tcp_cm_hdr_pack(uct_tcp_cm_hdr_t *hdr, unsigned type, size_t length);

/** Configuration of the tcp cm (UCX_TCP_CM_*) */
typedef struct uct_tcp_cm_config {
    size_t priv_data_len; /* PRIV_DATA_LEN: max_conn_priv */
    double timeout;       /* TIMEOUT: deadline of each handshake step */
    unsigned max_pending; /* MAX_PENDING: connections not yet taken */
} uct_tcp_cm_config_t;

/** cm_open of the tcp component */
ucs_status_t uct_tcp_cm_open(uct_component_t *component, uct_worker_h worker,
                             const uct_cm_config_t *config, uct_cm_h *cm_p);

/** Configuration table of the tcp cm (UCX_TCP_CM_*) */
extern ucs_config_field_t uct_tcp_cm_config_table[];

END_C_DECLS

#endif
