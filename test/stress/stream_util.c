/*
 * uct_stream_check: time, the one-line error report, the data pattern,
 * message sizes and size options.
 */
#include "stream_check.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Pattern: word k of a message (or of a PUT half) with key K */
#define SC_PATTERN_MUL  0x9e3779b97f4a7c15ull
#define SC_PATTERN_STEP 0xd1b54a32d192ed03ull
#define SC_KEY_PUT      (1ull << 47)

const char *sc_mode_names[] = {
    [SC_MODE_AM] = "am", [SC_MODE_PUT] = "put", [SC_MODE_BOTH] = "both"};

const char *sc_connect_names[] = {[SC_CONNECT_AUTO]  = "auto",
                                  [SC_CONNECT_IFACE] = "iface",
                                  [SC_CONNECT_EP]    = "ep"};

const char *sc_op_names[] = {
    [SC_OP_AM_SHORT] = "am_short",   [SC_OP_AM_BCOPY] = "am_bcopy",
    [SC_OP_AM_ZCOPY] = "am_zcopy",   [SC_OP_PUT_SHORT] = "put_short",
    [SC_OP_PUT_BCOPY] = "put_bcopy", [SC_OP_PUT_ZCOPY] = "put_zcopy"};

double sc_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + (ts.tv_nsec * 1e-9);
}

int sc_is_client(const sc_ctx_t *ctx)
{
    return ctx->server != NULL;
}

const char *sc_side(const sc_ctx_t *ctx)
{
    return sc_is_client(ctx) ? "client" : "server";
}

/* Prints one error line and stops the run with @a code. The first stop
 * wins; a NULL @a fmt stops silently. */
void sc_stop(sc_ctx_t *ctx, int code, const char *fmt, ...)
{
    va_list ap;

    if (ctx->stopped) {
        return;
    }
    ctx->stopped   = 1;
    ctx->exit_code = code;
    if (fmt == NULL) {
        return;
    }
    va_start(ap, fmt);
    if (code == SC_EXIT_PEER_FAILED) {
        printf("%s: ", sc_side(ctx));
        vprintf(fmt, ap);
        printf("\n");
    } else {
        fflush(stdout);
        fprintf(stderr, "%s: error: ", sc_side(ctx));
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, "\n");
    }
    va_end(ap);
}

int sc_fail(sc_ctx_t *ctx, const char *what, ucs_status_t status)
{
    sc_stop(ctx, SC_EXIT_ERROR, "%s failed: %s", what,
            ucs_status_string(status));
    return -1;
}

/* Keys differ between endpoints and between AMs and PUTs, so data that
 * lands in the wrong stream or place does not match */
uint64_t sc_am_key(unsigned ep, uint64_t seq)
{
    return ((uint64_t)ep << 48) ^ seq;
}

uint64_t sc_put_key(unsigned ep, uint64_t round)
{
    return ((uint64_t)ep << 48) ^ SC_KEY_PUT ^ round;
}

static uint64_t sc_pattern_word(uint64_t key, uint64_t index)
{
    return ((key + 1) * SC_PATTERN_MUL) ^ (index * SC_PATTERN_STEP) ^ index;
}

/* Writes @a length pattern bytes: word @a word onward of key @a key */
void sc_fill(void *dest, size_t length, uint64_t key, uint64_t word)
{
    char *p = dest;
    uint64_t w;

    for (; length >= sizeof(w); length -= sizeof(w), p += sizeof(w)) {
        w = sc_pattern_word(key, word++);
        memcpy(p, &w, sizeof(w));
    }
    if (length > 0) {
        w = sc_pattern_word(key, word);
        memcpy(p, &w, length);
    }
}

/* Offset of the first byte that differs from the pattern, or @a length */
size_t sc_check(const void *src, size_t length, uint64_t key, uint64_t word,
                uint8_t *got, uint8_t *expected)
{
    const uint8_t *p = src;
    size_t offset, i, n;
    uint8_t w[8];
    uint64_t v;

    for (offset = 0; offset < length; offset += n) {
        n = ((length - offset) < sizeof(w)) ? (length - offset) : sizeof(w);
        v = sc_pattern_word(key, word++);
        memcpy(w, &v, sizeof(w));
        if (memcmp(p + offset, w, n) == 0) {
            continue;
        }
        for (i = 0; i < n; ++i) {
            if (p[offset + i] != w[i]) {
                *got      = p[offset + i];
                *expected = w[i];
                return offset + i;
            }
        }
    }
    return length;
}

/* Packs a data message or PUT chunk (a uct_pack_callback_t for bcopy) */
size_t sc_pack_data(void *dest, void *arg)
{
    const sc_pack_t *pack = arg;
    size_t length         = pack->length;
    char *p               = dest;
    sc_msg_hdr_t hdr;

    if (pack->with_hdr) {
        hdr.seq    = pack->seq;
        hdr.length = (uint32_t)pack->length;
        hdr.ep     = pack->ep;
        hdr.magic  = SC_MSG_MAGIC;
        memcpy(p, &hdr, sizeof(hdr));
        p += sizeof(hdr);
        length -= sizeof(hdr);
    }
    sc_fill(p, length, pack->key, pack->word);
    return pack->length;
}

uint64_t sc_rand(uint64_t *rng)
{
    /* xorshift64*: sizes only, not a secret */
    *rng ^= *rng >> 12;
    *rng ^= *rng << 25;
    *rng ^= *rng >> 27;
    return *rng * 0x2545f4914f6cdd1dull;
}

/* A size in [min, max]: mostly spread over the range, sometimes an edge */
size_t sc_pick_size(uint64_t *rng, size_t min, size_t max)
{
    uint64_t r = sc_rand(rng);

    if (max <= min) {
        return max;
    }
    switch (r % 8) {
    case 0:
        return min;
    case 1:
        return max;
    default:
        return min + ((r >> 8) % (max - min + 1));
    }
}

/* A byte count with an optional k/m/g suffix */
int sc_parse_size(const char *str, uint64_t *value_p)
{
    unsigned long long value;
    char *end;

    errno = 0;
    value = strtoull(str, &end, 10);
    if ((errno != 0) || (end == str) || (*str == '-')) {
        return -1;
    }
    switch (*end) {
    case 'k':
    case 'K':
        value <<= 10;
        ++end;
        break;
    case 'm':
    case 'M':
        value <<= 20;
        ++end;
        break;
    case 'g':
    case 'G':
        value <<= 30;
        ++end;
        break;
    default:
        break;
    }
    if (*end != '\0') {
        return -1;
    }
    *value_p = value;
    return 0;
}
