/*
 * tcp_hostile: what its files share. The program is described in
 * tcp_hostile.c; each file's header says what it holds.
 */
#ifndef TEST_STRESS_HOSTILE_H_
#define TEST_STRESS_HOSTILE_H_

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define HX_PROG "tcp_hostile"

/* Exit codes: the check passed, it failed, it could not run */
#define HX_EXIT_PASS  0
#define HX_EXIT_FAIL  1
#define HX_EXIT_SETUP 2

/* ------------------------------------------------------------------------
 * The tcp transport's wire format, written out here rather than taken
 * from src/uct/tcp/tcp.h: an attacker shares no header with its target,
 * and a change of the format on either side fails these checks instead
 * of being followed silently. Integers are little-endian on the wire,
 * ports and addresses in network order. Version 5 is the current one;
 * version 4 (-V 4) lacks the pairing nonce at the end of the handshake
 * (64 bytes), and version 3 (-V 3) also differs in the cookies (32 bits,
 * so its handshake is 56 bytes and its endpoint address 18); they are
 * spoken only to show what older builds let through.
 */
#define HX_MAGIC          0x706374756e65706full /* "openuctp" */
#define HX_VERSION        5
#define HX_HS_LEN_V5      72
#define HX_HS_LEN_V4      64
#define HX_HS_LEN_V3      56
#define HX_REPLY_LEN      16
#define HX_HDR_LEN        8
#define HX_PUT_HDR_LEN    16 /* remote address, rkey; the data follows */
#define HX_IFACE_ADDR_LEN 10 /* port, secret */
#define HX_EP_ADDR_LEN_V4 22 /* port, ep id, 64-bit cookie, secret */
#define HX_EP_ADDR_LEN_V3 18 /* port, ep id, 32-bit cookie, secret */
#define HX_AM_ID_MAX      32 /* ids below are active messages */

enum {
    HX_OP_PUT     = 0x40,
    HX_OP_ACK_REQ = 0x43 /* no payload: the peer answers with an ACK */
};

enum { HX_CONN_TO_IFACE = 1, HX_CONN_TO_EP = 2 };

/* Handshake reply status */
enum {
    HX_HS_ACCEPTED    = 0,
    HX_HS_BAD_VERSION = 1,
    HX_HS_NO_EP       = 2,
    HX_HS_DUPLICATE   = 3,
    HX_HS_BAD_SECRET  = 4,
    HX_HS_BAD_REQUEST = 5,
    HX_HS_LAST
};

/* What a handshake says; hx_handshake_pack() lays it out. Every field
 * that does not apply is zero in a well-formed one. */
typedef struct {
    uint8_t conn_type;
    uint8_t family;
    uint16_t listen_port; /* network order */
    uint16_t reserved;
    uint32_t dst_ep_id;
    uint32_t src_ep_id;
    uint64_t dst_ep_cookie;
    uint64_t src_ep_cookie;
    uint8_t listen_addr[16];
    uint64_t secret;
    uint64_t src_nonce; /* version 5: pairing nonce (CONN_TO_IFACE) */
} hx_handshake_t;

/* ------------------------------------------------------------------------
 * The process attacked, as its address file describes it
 */
typedef struct {
    int proto; /* protocol version spoken: 5, 4 or 3 */
    union {
        struct sockaddr sa;
        struct sockaddr_in in;
        struct sockaddr_in6 in6;
    } addr; /* where its interface listens */
    socklen_t addrlen;
    uint64_t secret; /* of its interface address */
    int have_ep;     /* an endpoint address was given: */
    uint32_t ep_id;
    uint64_t ep_cookie;
} hx_target_t;

/* ------------------------------------------------------------------------
 * hostile_wire.c: addresses, sockets, handshakes
 */

double hx_now(void);
uint64_t hx_random64(void);
void hx_put_le(uint8_t *p, uint64_t value, unsigned bytes);
/* Lays out a message header; returns HX_HDR_LEN */
size_t hx_hdr_pack(uint8_t *p, uint8_t id, uint8_t flags, uint16_t reserved,
                   uint32_t length);
const char *hx_status_name(unsigned status);
/* Reads the address file written by "tcp_hostile target -o" or
 * "uct_stream_check -a": lines "dev HEX", "iface HEX" and optionally
 * "ep HEX". 0, or -1 with a message. */
int hx_target_load(hx_target_t *t, const char *path, int proto);
/* Raises the soft limit of open files to the hard one; 0 if it reaches
 * @a needed, else -1 with a message. */
int hx_raise_fd_limit(unsigned needed);
/* A blocking TCP connection to the target, with TCP_NODELAY, from the
 * loopback address 127.0.0.(1 + @a source) when @a source > 0 and the
 * target listens on IPv4 loopback (each source is another host to the
 * target); -1 with errno set if it failed. */
int hx_connect(const hx_target_t *t, unsigned source);
/* A well-formed handshake for @a fd: our own address as the listening
 * one, the target's secret, the ep fields zero. */
void hx_handshake_init(hx_handshake_t *hs, const hx_target_t *t, int fd,
                       uint8_t conn_type);
/* Lays out @a hs in the target's protocol version; returns its length */
size_t hx_handshake_pack(const hx_target_t *t, const hx_handshake_t *hs,
                         uint8_t *out);
/* Sends all of @a length bytes; 0, or -1 (errno set) */
int hx_send_all(int fd, const void *data, size_t length);
/* Receives exactly @a length bytes within @a timeout_ms; 0, or -1 if the
 * connection closed or the time passed first */
int hx_recv_exact(int fd, void *data, size_t length, int timeout_ms);
/* The status of a 16-byte handshake reply, -1 if it is not one */
int hx_reply_status(const uint8_t *reply);
/* Waits up to @a timeout_ms for the 16-byte handshake reply; its status,
 * or -1 if the connection closed (or the time passed) before it came, or
 * it was not a reply */
int hx_recv_reply(int fd, int timeout_ms);
/* Waits up to @a timeout_ms for the target to close the connection,
 * reading and dropping what it sends meanwhile; 1 if it closed, else 0 */
int hx_wait_close(int fd, int timeout_ms);
/* Connects (hx_connect()) and fills @a hs with a well-formed handshake for
 * the connection (hx_handshake_init()); the socket, or -1 with a
 * message */
int hx_open(const hx_target_t *t, unsigned source, uint8_t conn_type,
            hx_handshake_t *hs);
/* Sends @a hs (and @a extra_len bytes after it, in the same write) and
 * waits for the reply: its status, or -1 (the connection closed without
 * a reply, or none came within 5 s: a message says which) */
int hx_handshake(int fd, const hx_target_t *t, const hx_handshake_t *hs,
                 const void *extra, size_t extra_len);

/* ------------------------------------------------------------------------
 * The checks (hostile_hijack.c, hostile_flood.c, hostile_stall.c,
 * hostile_reserved.c) and the process they attack (hostile_target.c);
 * each returns an HX_EXIT_* code
 */

int hx_target_main(int argc, char **argv);
int hx_hijack_main(int argc, char **argv);
int hx_flood_main(int argc, char **argv);
int hx_stall_main(int argc, char **argv);
int hx_reserved_main(int argc, char **argv);
/* Options common to the checks: -V VERSION, then the address file;
 * @a extra_opts are the check's own (getopt letters), handled by
 * @a handle (0, or -1: bad value). Returns 0, or -1 with a message. */
int hx_parse_check(int argc, char **argv, const char *extra_opts,
                   int (*handle)(int opt, const char *arg, void *arg_p),
                   void *arg_p, hx_target_t *t);
/* A whole number from @a min to @a max, else -1 with a message */
int hx_parse_uint(int opt, const char *str, unsigned long min,
                  unsigned long max, unsigned long *value_p);

#endif
