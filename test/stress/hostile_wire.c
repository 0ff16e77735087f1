/*
 * tcp_hostile: the attacker's side of the wire. The target's address file,
 * plain TCP sockets (from other loopback addresses when asked), the
 * handshake laid out byte by byte in protocol version 4 (or 3), the reply,
 * and waiting for the target to close a connection.
 */
#define _GNU_SOURCE

#include "hostile.h"

#include <common/hex_line.h>

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define HX_LINE_MAX  256
#define HX_EXTRA_MAX 1024 /* bytes hx_handshake() sends after the handshake */

double hx_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

uint64_t hx_random64(void)
{
    uint64_t value;

    if (getrandom(&value, sizeof(value), 0) != (ssize_t)sizeof(value)) {
        /* not secret, only different from run to run */
        value = ((uint64_t)getpid() << 32) ^ (uint64_t)(hx_now() * 1e9);
    }
    return value;
}

void hx_put_le(uint8_t *p, uint64_t value, unsigned bytes)
{
    unsigned i;

    for (i = 0; i < bytes; ++i) {
        p[i] = (uint8_t)(value >> (8 * i));
    }
}

static uint64_t hx_get_le(const uint8_t *p, unsigned bytes)
{
    uint64_t value = 0;
    unsigned i;

    for (i = 0; i < bytes; ++i) {
        value |= (uint64_t)p[i] << (8 * i);
    }
    return value;
}

size_t hx_hdr_pack(uint8_t *p, uint8_t id, uint8_t flags, uint16_t reserved,
                   uint32_t length)
{
    p[0] = id;
    p[1] = flags;
    hx_put_le(p + 2, reserved, 2);
    hx_put_le(p + 4, length, 4);
    return HX_HDR_LEN;
}

const char *hx_status_name(unsigned status)
{
    static const char *names[HX_HS_LAST] = {
        [HX_HS_ACCEPTED] = "ACCEPTED",     [HX_HS_BAD_VERSION] = "BAD_VERSION",
        [HX_HS_NO_EP] = "NO_EP",           [HX_HS_DUPLICATE] = "DUPLICATE",
        [HX_HS_BAD_SECRET] = "BAD_SECRET", [HX_HS_BAD_REQUEST] = "BAD_REQUEST"};

    return (status < HX_HS_LAST) ? names[status] : "unknown";
}

/* The device address: family byte, then 4 or 16 address bytes */
static int hx_set_dev(hx_target_t *t, const uint8_t *b, int len)
{
    memset(&t->addr, 0, sizeof(t->addr));
    if ((len == 5) && (b[0] == AF_INET)) {
        t->addr.in.sin_family = AF_INET;
        memcpy(&t->addr.in.sin_addr, b + 1, 4);
        t->addrlen = sizeof(t->addr.in);
    } else if ((len == 17) && (b[0] == AF_INET6)) {
        t->addr.in6.sin6_family = AF_INET6;
        memcpy(&t->addr.in6.sin6_addr, b + 1, 16);
        t->addrlen = sizeof(t->addr.in6);
    } else {
        return -1;
    }
    return 0;
}

/* Port (network order) and secret: the interface address, or the start
 * and end of an endpoint address */
static int hx_set_port_secret(hx_target_t *t, const uint8_t *port,
                              const uint8_t *secret, uint16_t *port_p)
{
    uint16_t nbo;

    memcpy(&nbo, port, sizeof(nbo));
    if ((*port_p != 0) &&
        ((nbo != *port_p) || (hx_get_le(secret, 8) != t->secret))) {
        return -1; /* the interface and endpoint addresses disagree */
    }
    *port_p   = nbo;
    t->secret = hx_get_le(secret, 8);
    return 0;
}

int hx_target_load(hx_target_t *t, const char *path, int proto)
{
    size_t ep_len = (proto == 3) ? HX_EP_ADDR_LEN_V3 : HX_EP_ADDR_LEN_V4;
    char line[HX_LINE_MAX], key[16], hex[HX_LINE_MAX];
    int have_dev = 0, have_port = 0, len, bad = 0;
    uint16_t port = 0;
    uint8_t b[64];
    FILE *file;

    memset(t, 0, sizeof(*t));
    t->proto = proto;
    file     = fopen(path, "r");
    if (file == NULL) {
        fprintf(stderr, "%s: cannot open the address file %s: %s\n", HX_PROG,
                path, strerror(errno));
        return -1;
    }
    while (!bad && (fgets(line, sizeof(line), file) != NULL)) {
        if (sscanf(line, "%15s %255s", key, hex) != 2) {
            continue;
        }
        len = test_hex_decode(hex, b, sizeof(b));
        if (!strcmp(key, "dev")) {
            bad      = (len < 0) || (hx_set_dev(t, b, len) != 0);
            have_dev = 1;
        } else if (!strcmp(key, "iface")) {
            bad = (len != HX_IFACE_ADDR_LEN) ||
                  (hx_set_port_secret(t, b, b + 2, &port) != 0);
            have_port = 1;
        } else if (!strcmp(key, "ep")) {
            bad = (len != (int)ep_len) ||
                  (hx_set_port_secret(t, b, b + ep_len - 8, &port) != 0);
            if (!bad) {
                t->have_ep   = 1;
                t->ep_id     = (uint32_t)hx_get_le(b + 2, 4);
                t->ep_cookie = hx_get_le(b + 6, (proto == 3) ? 4 : 8);
            }
            have_port = 1;
        }
    }
    fclose(file);
    if (bad || !have_dev || !have_port) {
        fprintf(stderr,
                "%s: %s: %s; it should hold the lines \"dev HEX\" and "
                "\"iface HEX\" or \"ep HEX\" (an ep address of %zu bytes in "
                "protocol %d)\n",
                HX_PROG, path, bad ? "malformed" : "incomplete", ep_len, proto);
        return -1;
    }
    if (t->addr.sa.sa_family == AF_INET) {
        t->addr.in.sin_port = port;
    } else {
        t->addr.in6.sin6_port = port;
    }
    return 0;
}

int hx_raise_fd_limit(unsigned needed)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
        fprintf(stderr, "%s: getrlimit: %s\n", HX_PROG, strerror(errno));
        return -1;
    }
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur < needed) {
        fprintf(stderr,
                "%s: %u files needed, the hard limit is %llu (ulimit -Hn)\n",
                HX_PROG, needed, (unsigned long long)rl.rlim_cur);
        return -1;
    }
    return 0;
}

int hx_connect(const hx_target_t *t, unsigned source)
{
    struct sockaddr_in local;
    int fd, one = 1, err;

    fd = socket(t->addr.sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return -1;
    }
    if ((source > 0) && (t->addr.sa.sa_family == AF_INET) &&
        ((ntohl(t->addr.in.sin_addr.s_addr) >> 24) == 127)) {
        memset(&local, 0, sizeof(local));
        local.sin_family      = AF_INET;
        local.sin_addr.s_addr = htonl(0x7f000001u + source);
        if (bind(fd, (struct sockaddr *)&local, sizeof(local)) != 0) {
            goto err;
        }
    }
    if ((setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0) ||
        (connect(fd, &t->addr.sa, t->addrlen) != 0)) {
        goto err;
    }
    return fd;

err:
    err = errno;
    close(fd);
    errno = err;
    return -1;
}

void hx_handshake_init(hx_handshake_t *hs, const hx_target_t *t, int fd,
                       uint8_t conn_type)
{
    union {
        struct sockaddr sa;
        struct sockaddr_in in;
        struct sockaddr_in6 in6;
    } local;
    socklen_t len = sizeof(local);

    memset(hs, 0, sizeof(*hs));
    memset(&local, 0, sizeof(local));
    hs->conn_type = conn_type;
    hs->family    = (uint8_t)t->addr.sa.sa_family;
    hs->secret    = t->secret;
    getsockname(fd, &local.sa, &len);
    if (local.sa.sa_family == AF_INET6) {
        hs->listen_port = local.in6.sin6_port;
        memcpy(hs->listen_addr, &local.in6.sin6_addr, 16);
    } else if (local.sa.sa_family == AF_INET) {
        hs->listen_port = local.in.sin_port;
        memcpy(hs->listen_addr, &local.in.sin_addr, 4);
    }
}

size_t hx_handshake_pack(const hx_target_t *t, const hx_handshake_t *hs,
                         uint8_t *out)
{
    unsigned cookie = (t->proto == 3) ? 4 : 8;
    uint8_t *p      = out;

    hx_put_le(p, HX_MAGIC, 8);
    hx_put_le(p + 8, (uint64_t)t->proto, 2);
    p[10] = hs->conn_type;
    p[11] = hs->family;
    memcpy(p + 12, &hs->listen_port, 2);
    hx_put_le(p + 14, hs->reserved, 2);
    p += 16;
    if (t->proto == 3) { /* id, cookie, id, cookie */
        hx_put_le(p, hs->dst_ep_id, 4);
        hx_put_le(p + 4, hs->dst_ep_cookie, cookie);
        hx_put_le(p + 8, hs->src_ep_id, 4);
        hx_put_le(p + 12, hs->src_ep_cookie, cookie);
    } else { /* ids, then cookies */
        hx_put_le(p, hs->dst_ep_id, 4);
        hx_put_le(p + 4, hs->src_ep_id, 4);
        hx_put_le(p + 8, hs->dst_ep_cookie, cookie);
        hx_put_le(p + 16, hs->src_ep_cookie, cookie);
    }
    p += 8 + 2 * cookie;
    memcpy(p, hs->listen_addr, 16);
    hx_put_le(p + 16, hs->secret, 8);
    if (t->proto >= 5) {
        hx_put_le(p + 24, hs->src_nonce, 8);
        return (size_t)(p + 32 - out);
    }
    return (size_t)(p + 24 - out);
}

int hx_send_all(int fd, const void *data, size_t length)
{
    const char *p = data;
    ssize_t ret;

    while (length > 0) {
        ret = send(fd, p, length, MSG_NOSIGNAL);
        if (ret < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -1;
        }
        p += ret;
        length -= (size_t)ret;
    }
    return 0;
}

int hx_recv_exact(int fd, void *data, size_t length, int timeout_ms)
{
    double deadline   = hx_now() + timeout_ms * 1e-3;
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    char *p           = data;
    ssize_t ret;
    int wait_ms;

    while (length > 0) {
        wait_ms = (int)((deadline - hx_now()) * 1e3);
        if ((wait_ms <= 0) || (poll(&pfd, 1, wait_ms) == 0)) {
            return -1;
        }
        ret = recv(fd, p, length, MSG_DONTWAIT);
        if (ret > 0) {
            p += ret;
            length -= (size_t)ret;
        } else if ((ret == 0) || ((errno != EAGAIN) && (errno != EINTR))) {
            return -1;
        }
    }
    return 0;
}

int hx_reply_status(const uint8_t *reply)
{
    return (hx_get_le(reply, 8) == HX_MAGIC) ? (int)hx_get_le(reply + 10, 2)
                                             : -1;
}

int hx_recv_reply(int fd, int timeout_ms)
{
    uint8_t reply[HX_REPLY_LEN];

    if (hx_recv_exact(fd, reply, sizeof(reply), timeout_ms) != 0) {
        return -1;
    }
    return hx_reply_status(reply);
}

int hx_wait_close(int fd, int timeout_ms)
{
    double deadline   = hx_now() + timeout_ms * 1e-3;
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    char scratch[4096];
    ssize_t ret;
    int wait_ms;

    for (;;) {
        wait_ms = (int)((deadline - hx_now()) * 1e3);
        if ((wait_ms <= 0) || (poll(&pfd, 1, wait_ms) == 0)) {
            return 0;
        }
        ret = recv(fd, scratch, sizeof(scratch), MSG_DONTWAIT);
        if ((ret == 0) ||
            ((ret < 0) && (errno != EAGAIN) && (errno != EINTR))) {
            return 1; /* closed, or reset */
        }
    }
}

int hx_handshake(int fd, const hx_target_t *t, const hx_handshake_t *hs,
                 const void *extra, size_t extra_len)
{
    uint8_t buf[HX_HS_LEN_V5 + HX_EXTRA_MAX];
    size_t len;
    int status;

    if (extra_len > HX_EXTRA_MAX) {
        fprintf(stderr, "%s: %zu bytes after a handshake, at most %d\n",
                HX_PROG, extra_len, HX_EXTRA_MAX);
        return -1;
    }
    len = hx_handshake_pack(t, hs, buf);
    if (extra_len > 0) {
        memcpy(buf + len, extra, extra_len);
    }
    if (hx_send_all(fd, buf, len + extra_len) != 0) {
        fprintf(stderr, "%s: sending a handshake: %s\n", HX_PROG,
                strerror(errno));
        return -1;
    }
    status = hx_recv_reply(fd, 5000);
    if (status < 0) {
        fprintf(stderr,
                "%s: the target closed the connection without a "
                "handshake reply, or sent none within 5 s\n",
                HX_PROG);
    }
    return status;
}

int hx_open(const hx_target_t *t, unsigned source, uint8_t conn_type,
            hx_handshake_t *hs)
{
    int fd;

    fd = hx_connect(t, source);
    if (fd < 0) {
        fprintf(stderr, "%s: connect: %s\n", HX_PROG, strerror(errno));
        return -1;
    }
    hx_handshake_init(hs, t, fd, conn_type);
    return fd;
}

int hx_parse_uint(int opt, const char *str, unsigned long min,
                  unsigned long max, unsigned long *value_p)
{
    unsigned long value;
    char *end;

    errno = 0;
    value = strtoul(str, &end, 10);
    if ((*str == '\0') || (*str == '-') || (*end != '\0') || (errno != 0) ||
        (value < min) || (value > max)) {
        fprintf(stderr, "%s: -%c wants a number from %lu to %lu, not '%s'\n",
                HX_PROG, opt, min, max, str);
        return -1;
    }
    *value_p = value;
    return 0;
}

int hx_parse_check(int argc, char **argv, const char *extra_opts,
                   int (*handle)(int opt, const char *arg, void *arg_p),
                   void *arg_p, hx_target_t *t)
{
    unsigned long proto = HX_VERSION;
    char opts[32];
    int c;

    snprintf(opts, sizeof(opts), "V:%s", extra_opts);
    optind = 1;
    while ((c = getopt(argc, argv, opts)) != -1) {
        if (c == 'V') {
            if (hx_parse_uint(c, optarg, 3, 5, &proto) != 0) {
                return -1;
            }
        } else if ((c == '?') || (handle == NULL) ||
                   (handle(c, optarg, arg_p) != 0)) {
            return -1;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "%s %s: wants one address file (see -h)\n", HX_PROG,
                argv[0]);
        return -1;
    }
    return hx_target_load(t, argv[optind], (int)proto);
}
