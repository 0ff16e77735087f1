/*
 * uct_perftest: the out-of-band TCP socket of client/server mode. It
 * carries the run parameters (client to server), each side's addresses
 * and remote key, and one-byte barriers around every measured size.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "perftest.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PERF_OOB_CONNECT_TIMEOUT 30  /* seconds a client keeps retrying */
#define PERF_OOB_MAX_BLOB        (1024 * 1024)

/* The run parameters as they travel; fixed-width fields */
typedef struct {
    uint32_t test;
    uint32_t mode;
    uint32_t num_sizes;
    uint32_t window;
    uint64_t iters;
    uint64_t warmup;
    uint64_t sizes[PERF_MAX_SIZES];
} perf_wire_params_t;

int perf_oob_send(int sock, const void *data, size_t length)
{
    const char *p = data;
    ssize_t ret;

    while (length > 0) {
        ret = send(sock, p, length, MSG_NOSIGNAL);
        if (ret < 0) {
            if (errno == EINTR) {
                continue;
            }
            fprintf(stderr, "out-of-band send failed: %s\n",
                    strerror(errno));
            return -1;
        }
        p      += ret;
        length -= (size_t)ret;
    }
    return 0;
}

int perf_oob_recv(int sock, void *data, size_t length)
{
    char *p = data;
    ssize_t ret;

    while (length > 0) {
        ret = recv(sock, p, length, 0);
        if (ret == 0) {
            fprintf(stderr, "the peer closed the out-of-band connection\n");
            return -1;
        } else if (ret < 0) {
            if (errno == EINTR) {
                continue;
            }
            fprintf(stderr, "out-of-band receive failed: %s\n",
                    strerror(errno));
            return -1;
        }
        p      += ret;
        length -= (size_t)ret;
    }
    return 0;
}

static int perf_oob_listen(int family, uint16_t port)
{
    struct sockaddr_storage ss;
    socklen_t len;
    int one = 1, zero = 0;
    int sock;

    memset(&ss, 0, sizeof(ss));
    if (family == AF_INET6) {
        struct sockaddr_in6 *a6 = (struct sockaddr_in6*)&ss;
        a6->sin6_family = AF_INET6;
        a6->sin6_addr   = in6addr_any;
        a6->sin6_port   = htons(port);
        len             = sizeof(*a6);
    } else {
        struct sockaddr_in *a4 = (struct sockaddr_in*)&ss;
        a4->sin_family      = AF_INET;
        a4->sin_addr.s_addr = htonl(INADDR_ANY);
        a4->sin_port        = htons(port);
        len                 = sizeof(*a4);
    }

    sock = socket(family, SOCK_STREAM, 0);
    if (sock < 0) {
        return -1;
    }
    if (family == AF_INET6) {
        /* Accept IPv4 clients too */
        setsockopt(sock, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
    }
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if ((bind(sock, (struct sockaddr*)&ss, len) < 0) ||
        (listen(sock, 1) < 0)) {
        close(sock);
        return -1;
    }
    return sock;
}

int perf_oob_accept(uint16_t port)
{
    int lsock, sock;

    lsock = perf_oob_listen(AF_INET6, port);
    if (lsock < 0) {
        lsock = perf_oob_listen(AF_INET, port);
    }
    if (lsock < 0) {
        fprintf(stderr, "cannot listen on port %u: %s; pick another with "
                "-p\n", port, strerror(errno));
        return -1;
    }

    do {
        sock = accept(lsock, NULL, NULL);
    } while ((sock < 0) && (errno == EINTR));
    if (sock < 0) {
        fprintf(stderr, "accept on port %u failed: %s\n", port,
                strerror(errno));
    }
    close(lsock);
    return sock;
}

int perf_oob_connect(const char *server, uint16_t port)
{
    struct timespec delay = {.tv_sec = 0, .tv_nsec = 100 * 1000 * 1000};
    time_t deadline       = time(NULL) + PERF_OOB_CONNECT_TIMEOUT;
    struct addrinfo hints, *res, *ai;
    char port_str[8];
    int sock, ret, err = 0;

    memset(&hints, 0, sizeof(hints));
    hints.ai_family   = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    snprintf(port_str, sizeof(port_str), "%u", port);

    ret = getaddrinfo(server, port_str, &hints, &res);
    if (ret != 0) {
        fprintf(stderr, "cannot resolve server '%s': %s\n", server,
                gai_strerror(ret));
        return -1;
    }

    /* The server may still be starting: retry refused connections */
    for (;;) {
        for (ai = res; ai != NULL; ai = ai->ai_next) {
            sock = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
            if (sock < 0) {
                err = errno;
                continue;
            }
            if (connect(sock, ai->ai_addr, ai->ai_addrlen) == 0) {
                freeaddrinfo(res);
                return sock;
            }
            err = errno;
            close(sock);
        }
        if ((err != ECONNREFUSED) || (time(NULL) >= deadline)) {
            break;
        }
        nanosleep(&delay, NULL);
    }

    freeaddrinfo(res);
    fprintf(stderr, "cannot connect to %s:%u: %s; is the server running?\n",
            server, port, strerror(err));
    return -1;
}

int perf_oob_send_blob(int sock, const perf_blob_t *blob)
{
    uint64_t length = blob->length;

    if ((perf_oob_send(sock, &length, sizeof(length)) != 0) ||
        (perf_oob_send(sock, blob->data, blob->length) != 0)) {
        return -1;
    }
    return 0;
}

int perf_oob_recv_blob(int sock, perf_blob_t *blob)
{
    uint64_t length;

    if (perf_oob_recv(sock, &length, sizeof(length)) != 0) {
        return -1;
    }
    if (length > PERF_OOB_MAX_BLOB) {
        fprintf(stderr, "the peer sent a %llu-byte address; is it "
                "uct_perftest of the same version?\n",
                (unsigned long long)length);
        return -1;
    }

    blob->length = length;
    blob->data   = malloc(length + 1);
    if (blob->data == NULL) {
        fprintf(stderr, "out of memory for the peer's address\n");
        return -1;
    }
    return perf_oob_recv(sock, blob->data, blob->length);
}

/*
 * Both sides send one byte and wait for the peer's, progressing the
 * worker meanwhile: the peer may need our progress to finish its part.
 */
int perf_oob_barrier(int sock, uct_worker_h worker)
{
    struct pollfd pfd = {.fd = sock, .events = POLLIN};
    char token        = 'b';
    int ret;

    if (perf_oob_send(sock, &token, 1) != 0) {
        return -1;
    }

    for (;;) {
        ret = poll(&pfd, 1, 0);
        if (ret > 0) {
            break;
        } else if ((ret < 0) && (errno != EINTR)) {
            fprintf(stderr, "poll on the out-of-band socket failed: %s\n",
                    strerror(errno));
            return -1;
        }
        if (worker != NULL) {
            uct_worker_progress(worker);
        }
    }

    if (perf_oob_recv(sock, &token, 1) != 0) {
        return -1;
    }
    if (token != 'b') {
        fprintf(stderr, "out-of-band protocol error: unexpected token\n");
        return -1;
    }
    return 0;
}

int perf_oob_send_params(int sock, const perf_params_t *params)
{
    perf_wire_params_t wire;
    unsigned i;

    memset(&wire, 0, sizeof(wire));
    wire.test      = params->test;
    wire.mode      = params->mode;
    wire.num_sizes = params->num_sizes;
    wire.window    = params->window;
    wire.iters     = params->iters;
    wire.warmup    = params->warmup;
    for (i = 0; i < params->num_sizes; ++i) {
        wire.sizes[i] = params->sizes[i];
    }
    return perf_oob_send(sock, &wire, sizeof(wire));
}

/* The server runs what the client asks for */
int perf_oob_recv_params(int sock, perf_params_t *params)
{
    perf_wire_params_t wire;
    unsigned i;

    if (perf_oob_recv(sock, &wire, sizeof(wire)) != 0) {
        return -1;
    }
    if ((wire.test >= PERF_TEST_LAST) || (wire.mode >= PERF_MODE_LAST) ||
        (wire.num_sizes == 0) || (wire.num_sizes > PERF_MAX_SIZES) ||
        (wire.window == 0)) {
        fprintf(stderr, "the client sent invalid parameters; is it "
                "uct_perftest of the same version?\n");
        return -1;
    }

    params->test      = (perf_test_t)wire.test;
    params->mode      = (perf_mode_t)wire.mode;
    params->num_sizes = wire.num_sizes;
    params->window    = wire.window;
    params->iters     = wire.iters;
    params->warmup    = wire.warmup;
    for (i = 0; i < wire.num_sizes; ++i) {
        params->sizes[i] = wire.sizes[i];
    }
    return 0;
}
