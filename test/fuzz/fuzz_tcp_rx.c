/*
 * Harness of the tcp receive path (src/uct/tcp/tcp_rx.c, the handshake in
 * tcp_conn.c): a byte stream from a peer into a real tcp iface on lo, over
 * a real socket.
 *
 * The first byte of an input picks the mode (bit 0: a valid handshake with
 * the iface's secret is sent first, so the rest reaches the message
 * parser; bit 1: the peer reads nothing back; bit 2: that handshake
 * connects to the iface's endpoint that waits for its peer
 * (CONNECT_TO_EP) instead of to the iface). The rest is the stream; in
 * it, these 8-byte tokens are replaced before it is sent, so that the
 * fuzzer can write valid keyed PUTs and GETs and handshakes of its own:
 *
 *   "@KEY_RW@" the key of a registered region (PUT and GET allowed)
 *   "@KEY_RO@" the key of a region registered for remote GET only
 *   "@ADDR_RW" / "@ADDR_RO" the start address of that region
 *   "@SECRET@" the iface's address secret
 *   "@EP_ID@@" the waiting endpoint's id (32 bits), then 32 zero bits
 *   "@EPCOOK@" the waiting endpoint's address cookie
 *
 * The waiting endpoint is made anew for every input.
 *
 * Rules checked for every input: memory that was never registered (a
 * canary after each region) and the GET-only region are never written;
 * the process does not crash, leak or hang.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "fuzz.h"
#include "common/uct_md_find.h"

#include <ucs/async/async.h>
#include <ucs/debug/log.h>
#include <uct/api/uct.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define FUZZ_REGION_SIZE 65536
#define FUZZ_MAX_INPUT   (256 * 1024)
#define FUZZ_TOKEN_LEN   8

static struct {
    ucs_async_context_t *async;
    uct_worker_h worker;
    uct_component_h component;
    uct_md_h md;
    uct_iface_h iface;
    struct sockaddr_in addr;
    uint64_t secret;
    char *memory; /* rw region, canary, ro, canary */
    uct_mem_h memh_rw;
    uct_mem_h memh_ro;
    uint64_t key_rw;
    uint64_t key_ro;
    uint8_t *stream;
    uct_ep_h ep; /* waits for its peer (CONNECT_TO_EP) */
    uint32_t ep_id;
    uint64_t ep_cookie;
} fz;

static char *fuzz_rw(void)
{
    return fz.memory;
}

static char *fuzz_ro(void)
{
    return fz.memory + (2 * FUZZ_REGION_SIZE);
}

static char *fuzz_canary(unsigned i)
{
    return fz.memory + FUZZ_REGION_SIZE + (i * 2 * FUZZ_REGION_SIZE);
}

static int fuzz_untouched(const char *p)
{
    return (p[0] == 0x5a) && !memcmp(p, p + 1, FUZZ_REGION_SIZE - 1);
}

static ucs_status_t fuzz_am_cb(void *arg, void *data, size_t length,
                               unsigned flags)
{
    volatile char sum = 0;
    size_t i;

    for (i = 0; i < length; ++i) { /* the whole payload must be readable */
        sum += ((const char *)data)[i];
    }
    (void)sum;
    return UCS_OK;
}

static void fuzz_die(const char *what, ucs_status_t status)
{
    fprintf(stderr, "fuzz_tcp_rx: %s failed: %s\n", what,
            ucs_status_string(status));
    abort();
}

static uint64_t fuzz_register(void *address, unsigned access, uct_mem_h *memh_p)
{
    uct_rkey_bundle_t rkey;
    uint8_t packed[64];
    ucs_status_t status;
    uint64_t key;

    status = uct_md_mem_reg(fz.md, address, FUZZ_REGION_SIZE, access, memh_p);
    if (status != UCS_OK) {
        fuzz_die("uct_md_mem_reg", status);
    }
    status = uct_md_mkey_pack(fz.md, *memh_p, packed);
    if (status != UCS_OK) {
        fuzz_die("uct_md_mkey_pack", status);
    }
    status = uct_rkey_unpack(fz.component, packed, &rkey);
    if (status != UCS_OK) {
        fuzz_die("uct_rkey_unpack", status);
    }
    key = rkey.rkey;
    uct_rkey_release(fz.component, &rkey);
    return key;
}

static void fuzz_open_iface(void)
{
    uct_iface_config_t *config;
    uct_iface_params_t params;
    uint8_t dev_addr[32], iface_addr[64];
    ucs_status_t status;
    uint16_t port;
    unsigned id;

    status = uct_md_iface_config_read(fz.md, "tcp", NULL, NULL, &config);
    if (status != UCS_OK) {
        fuzz_die("uct_md_iface_config_read", status);
    }
    memset(&params, 0, sizeof(params));
    params.field_mask =
        UCT_IFACE_PARAM_FIELD_OPEN_MODE | UCT_IFACE_PARAM_FIELD_DEVICE;
    params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = "tcp";
    params.mode.device.dev_name = "lo";
    status = uct_iface_open(fz.md, fz.worker, &params, config, &fz.iface);
    uct_config_release(config);
    if (status != UCS_OK) {
        fuzz_die("uct_iface_open(tcp/lo)", status);
    }
    uct_iface_progress_enable(fz.iface, UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    for (id = 0; id < UCT_AM_ID_MAX; id += 2) { /* odd ids: no handler */
        uct_iface_set_am_handler(fz.iface, id, fuzz_am_cb, NULL, 0);
    }

    status =
        uct_iface_get_device_address(fz.iface, (uct_device_addr_t *)dev_addr);
    if (status == UCS_OK) {
        status =
            uct_iface_get_address(fz.iface, (uct_iface_addr_t *)iface_addr);
    }
    if ((status != UCS_OK) || (dev_addr[0] != AF_INET)) {
        fuzz_die("the IPv4 address of tcp/lo", status);
    }
    memcpy(&port, iface_addr, sizeof(port));
    memcpy(&fz.secret, iface_addr + sizeof(port), sizeof(fz.secret));
    fz.addr.sin_family = AF_INET;
    fz.addr.sin_port   = port;
    memcpy(&fz.addr.sin_addr, dev_addr + 1, 4);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    ucs_status_t status;

    /* short timeouts: a stalled input ends quickly */
    setenv("UCX_TCP_PEER_TIMEOUT", "100ms", 0);
    setenv("UCX_TCP_CONN_TIMEOUT", "100ms", 0);
    setenv("UCX_TCP_AF_PRIO", "inet", 0);
    fuzz_log_silence(UCS_LOG_LEVEL_DEBUG);

    status =
        ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK, &fz.async);
    if (status == UCS_OK) {
        status =
            uct_worker_create(fz.async, UCS_THREAD_MODE_SINGLE, &fz.worker);
    }
    if (status == UCS_OK) {
        status = test_uct_md_find("tcp", "lo", &fz.md, &fz.component);
    }
    if (status != UCS_OK) {
        fuzz_die("opening tcp/lo (is the tcp module built?)", status);
    }
    fuzz_open_iface();

    fz.memory = aligned_alloc(4096, 4 * FUZZ_REGION_SIZE);
    fz.stream = malloc(FUZZ_MAX_INPUT);
    if ((fz.memory == NULL) || (fz.stream == NULL)) {
        fuzz_die("malloc", UCS_ERR_NO_MEMORY);
    }
    memset(fz.memory, 0x5a, 4 * FUZZ_REGION_SIZE);
    fz.key_rw = fuzz_register(fuzz_rw(), UCT_MD_MEM_ACCESS_ALL, &fz.memh_rw);
    fz.key_ro =
        fuzz_register(fuzz_ro(), UCT_MD_MEM_ACCESS_REMOTE_GET, &fz.memh_ro);
    return 0;
}

/* A new endpoint waiting for its peer, and its id and cookie (the ep
 * address: port 2 bytes, id 4, cookie 8, secret 8) */
static void fuzz_new_ep(void)
{
    uct_ep_params_t params;
    uint8_t addr[64];
    ucs_status_t status;

    if (fz.ep != NULL) {
        uct_ep_destroy(fz.ep);
        fz.ep = NULL;
    }
    memset(&params, 0, sizeof(params));
    params.field_mask = UCT_EP_PARAM_FIELD_IFACE;
    params.iface      = fz.iface;
    status            = uct_ep_create(&params, &fz.ep);
    if (status == UCS_OK) {
        status = uct_ep_get_address(fz.ep, (uct_ep_addr_t *)addr);
    }
    if (status != UCS_OK) {
        fuzz_die("an endpoint waiting for its peer", status);
    }
    memcpy(&fz.ep_id, addr + 2, sizeof(fz.ep_id));
    memcpy(&fz.ep_cookie, addr + 6, sizeof(fz.ep_cookie));
}

/* Replaces the tokens of the header comment in @a buf */
static void fuzz_substitute(uint8_t *buf, size_t length)
{
    static const char *tokens[] = {"@KEY_RW@", "@KEY_RO@", "@ADDR_RW",
                                   "@ADDR_RO", "@SECRET@", "@EP_ID@@",
                                   "@EPCOOK@"};
    uint64_t values[7];
    size_t i, t;

    values[0] = fz.key_rw;
    values[1] = fz.key_ro;
    values[2] = (uintptr_t)fuzz_rw();
    values[3] = (uintptr_t)fuzz_ro();
    values[4] = fz.secret;
    values[5] = fz.ep_id; /* little endian: the id, then zeros */
    values[6] = fz.ep_cookie;
    for (i = 0; i + FUZZ_TOKEN_LEN <= length; ++i) {
        if (buf[i] != '@') {
            continue;
        }
        for (t = 0; t < sizeof(tokens) / sizeof(tokens[0]); ++t) {
            if (!memcmp(buf + i, tokens[t], FUZZ_TOKEN_LEN)) {
                memcpy(buf + i, &values[t], FUZZ_TOKEN_LEN);
                i += FUZZ_TOKEN_LEN - 1;
                break;
            }
        }
    }
}

/*
 * The version 5 handshake (72 bytes) of a peer at 127.0.0.1:1: to the
 * iface (with a pairing nonce: that address is lower than the iface's, so
 * the connection is kept for a pair), or with @a to_ep from endpoint 1
 * (cookie 2) to the waiting endpoint. Layout: magic 0, version 8,
 * connection type 10, family 11, port 12, reserved 14, ep ids 16
 * (destination) and 20 (source), cookies 24 and 32, address 40, secret
 * 56, nonce 64.
 */
static size_t fuzz_handshake(uint8_t *buf, int to_ep)
{
    uint64_t magic   = 0x706374756e65706full;
    uint16_t version = 5, port = htons(1);
    uint32_t src_id     = 1;
    uint64_t src_cookie = 2;
    uint64_t nonce      = 0x6e6f6e63656e6f6eull;

    memset(buf, 0, 72);
    memcpy(buf, &magic, 8);
    memcpy(buf + 8, &version, 2);
    buf[10] = to_ep ? 2 : 1; /* CONN_TO_EP or CONN_TO_IFACE */
    buf[11] = AF_INET;
    memcpy(buf + 12, &port, 2);
    if (to_ep) {
        memcpy(buf + 16, &fz.ep_id, 4);
        memcpy(buf + 20, &src_id, 4);
        memcpy(buf + 24, &fz.ep_cookie, 8);
        memcpy(buf + 32, &src_cookie, 8);
    }
    buf[40] = 127;
    buf[43] = 1;
    memcpy(buf + 56, &fz.secret, 8);
    if (!to_ep) {
        memcpy(buf + 64, &nonce, 8);
    }
    return 72;
}

static void fuzz_progress(unsigned n)
{
    while (n-- > 0) {
        uct_worker_progress(fz.worker);
    }
}

/* Sends @a length bytes to the iface, progressing it, and reads what it
 * answers unless @a deaf; then closes and lets the iface close its side. */
static void fuzz_run_stream(const uint8_t *buf, size_t length, int deaf)
{
    size_t sent = 0;
    char scratch[16384];
    unsigned rounds;
    ssize_t ret;
    int fd;

    fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    fuzz_check(fd >= 0, "socket: %m");
    ret = connect(fd, (struct sockaddr *)&fz.addr, sizeof(fz.addr));
    fuzz_check((ret == 0) || (errno == EINPROGRESS), "connect: %m");

    for (rounds = 0; (sent < length) && (rounds < 10000); ++rounds) {
        fuzz_progress(1);
        ret = send(fd, buf + sent, length - sent, MSG_NOSIGNAL);
        if (ret > 0) {
            sent += ret;
        } else if ((ret < 0) && (errno != EAGAIN) && (errno != ENOTCONN)) {
            break; /* the iface closed the connection */
        }
        if (!deaf) {
            while (recv(fd, scratch, sizeof(scratch), 0) > 0) {
            }
        }
    }
    fuzz_progress(4);
    shutdown(fd, SHUT_WR);

    /* the iface sees the end of the stream and closes its side */
    for (rounds = 0; rounds < 2000; ++rounds) {
        fuzz_progress(1);
        ret = recv(fd, scratch, sizeof(scratch), 0);
        if ((ret == 0) || ((ret < 0) && (errno != EAGAIN))) {
            break;
        }
    }
    close(fd);
    fuzz_progress(4);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t length = 0;

    if ((size < 1) || (size > FUZZ_MAX_INPUT - 72)) {
        return 0;
    }
    fuzz_new_ep();
    if (data[0] & 1) {
        length = fuzz_handshake(fz.stream, data[0] & 4);
    }
    memcpy(fz.stream + length, data + 1, size - 1);
    fuzz_substitute(fz.stream + length, size - 1);
    length += size - 1;

    fuzz_run_stream(fz.stream, length, data[0] & 2);

    fuzz_check(fuzz_untouched(fuzz_canary(0)) && fuzz_untouched(fuzz_canary(1)),
               "memory that was never registered was written");
    fuzz_check(fuzz_untouched(fuzz_ro()),
               "a region registered for GET only was written");
    return 0;
}
