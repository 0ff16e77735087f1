/*
 * loop_test: checks the loop example transport through the public API.
 *
 * Opens loop/loop0, connects an endpoint to its own interface and checks
 * that messages are delivered by progress (not inside the send), in
 * order, that a full ring returns UCS_ERR_NO_RESOURCE, that pending
 * requests run once there is room, and that flush and purge work.
 *
 * Run with UCX_MODULE_DIR pointing at the directory of libuct_loop.so.
 * Exit code 0 when every check passed, 1 otherwise.
 */
#define _POSIX_C_SOURCE 200809L /* POSIX calls in strict C11 */

#include <uct/api/uct.h>
#include <ucs/async/async.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOOP_TEST_AM_ID 3
#define LOOP_TEST_COUNT 100  /* messages of each kind */
#define LOOP_TEST_BCOPY 1000 /* bytes of each bcopy message */

typedef struct loop_test loop_test_t;

/* A pending request that sends messages until the ring is full again */
typedef struct {
    uct_pending_req_t super;
    loop_test_t *test;
    int runs;
} loop_test_req_t;

struct loop_test {
    ucs_async_context_t *async;
    uct_worker_h worker;
    uct_md_h md;
    uct_iface_h iface;
    uct_iface_attr_t attr;
    uct_ep_h ep;
    int bcopy;          /* kind of message sent now */
    uint64_t sent;      /* messages sent so far */
    uint64_t received;  /* messages delivered so far */
    uint64_t total;     /* messages the current phase sends */
    uint64_t ring_held; /* sends that fit before progress */
    int failed;
};

typedef struct {
    uct_completion_t super;
    int done;
} loop_test_comp_t;

#define LOOP_TEST_CHECK(_test, _cond, ...)                               \
    do {                                                                 \
        if (!(_cond)) {                                                  \
            fprintf(stderr, "loop_test: FAILED at line %d: ", __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                \
            fprintf(stderr, "\n");                                       \
            (_test)->failed = 1;                                         \
        }                                                                \
    } while (0)

static ucs_status_t loop_test_am_cb(void *arg, void *data, size_t length,
                                    unsigned flags)
{
    loop_test_t *test = arg;
    uint64_t seq;
    size_t i;

    memcpy(&seq, data, sizeof(seq));
    LOOP_TEST_CHECK(test, seq == test->received,
                    "message %llu arrived when %llu was expected",
                    (unsigned long long)seq,
                    (unsigned long long)test->received);

    if (test->bcopy) {
        LOOP_TEST_CHECK(test, length == LOOP_TEST_BCOPY,
                        "bcopy message of %zu bytes, expected %d", length,
                        LOOP_TEST_BCOPY);
        for (i = sizeof(seq); i < length; ++i) {
            if (((uint8_t *)data)[i] != (uint8_t)(seq + i)) {
                LOOP_TEST_CHECK(test, 0,
                                "bcopy byte %zu of message %llu "
                                "is wrong",
                                i, (unsigned long long)seq);
                break;
            }
        }
    } else {
        LOOP_TEST_CHECK(test, length == sizeof(seq) + sizeof(seq),
                        "short message of %zu bytes, expected %zu", length,
                        2 * sizeof(seq));
    }

    ++test->received;
    return UCS_OK;
}

static size_t loop_test_pack_cb(void *dest, void *arg)
{
    const loop_test_t *test = arg;
    uint64_t seq            = test->sent;
    size_t i;

    memcpy(dest, &seq, sizeof(seq));
    for (i = sizeof(seq); i < LOOP_TEST_BCOPY; ++i) {
        ((uint8_t *)dest)[i] = (uint8_t)(seq + i);
    }
    return LOOP_TEST_BCOPY;
}

/* Sends message number test->sent; UCS_OK advances test->sent */
static ucs_status_t loop_test_send_one(loop_test_t *test)
{
    uint64_t seq = test->sent;
    ucs_status_t status;
    ssize_t packed;

    if (test->bcopy) {
        packed = uct_ep_am_bcopy(test->ep, LOOP_TEST_AM_ID, loop_test_pack_cb,
                                 test, 0);
        status = (packed < 0) ? (ucs_status_t)packed : UCS_OK;
        if (status == UCS_OK) {
            LOOP_TEST_CHECK(test, packed == LOOP_TEST_BCOPY,
                            "am_bcopy returned %zd", packed);
        }
    } else {
        /* short: the header is the sequence number, so is the payload */
        status =
            uct_ep_am_short(test->ep, LOOP_TEST_AM_ID, seq, &seq, sizeof(seq));
    }

    if (status == UCS_OK) {
        ++test->sent;
    }
    return status;
}

static ucs_status_t loop_test_pending_cb(uct_pending_req_t *self)
{
    loop_test_req_t *req = ucs_container_of(self, loop_test_req_t, super);
    loop_test_t *test    = req->test;
    ucs_status_t status;

    ++req->runs;
    while (test->sent < test->total) {
        status = loop_test_send_one(test);
        if (status == UCS_ERR_NO_RESOURCE) {
            return UCS_ERR_NO_RESOURCE; /* stay queued */
        } else if (status != UCS_OK) {
            LOOP_TEST_CHECK(test, 0, "send from pending callback: %s",
                            ucs_status_string(status));
            return UCS_OK;
        }
    }
    return UCS_OK;
}

static void loop_test_comp_cb(uct_completion_t *self)
{
    loop_test_comp_t *comp = ucs_container_of(self, loop_test_comp_t, super);

    comp->done = 1;
}

static void loop_test_purge_cb(uct_pending_req_t *self, void *arg)
{
    ++(*(int *)arg);
}

/* Progresses until @a cond holds, or gives up after many idle rounds */
#define LOOP_TEST_PROGRESS_UNTIL(_test, _cond)                                 \
    do {                                                                       \
        unsigned long _idle = 0;                                               \
        while (!(_cond) && (_idle < 1000000)) {                                \
            _idle = uct_worker_progress((_test)->worker) ? 0 : _idle + 1;      \
        }                                                                      \
        LOOP_TEST_CHECK(_test, (_cond), "progress never reached: %s", #_cond); \
    } while (0)

/* Sends LOOP_TEST_COUNT messages: fills the ring, then lets a pending
 * request send the rest as progress makes room */
static void loop_test_send_phase(loop_test_t *test, int bcopy)
{
    loop_test_req_t req;
    ucs_status_t status;
    uint64_t in_ring;

    test->bcopy    = bcopy;
    test->sent     = 0;
    test->received = 0;
    test->total    = LOOP_TEST_COUNT;

    do {
        status = loop_test_send_one(test);
    } while ((status == UCS_OK) && (test->sent < test->total));

    LOOP_TEST_CHECK(test, status == UCS_ERR_NO_RESOURCE,
                    "%s: expected a full ring, got %s after %llu messages",
                    bcopy ? "bcopy" : "short", ucs_status_string(status),
                    (unsigned long long)test->sent);
    LOOP_TEST_CHECK(test, test->received == 0,
                    "messages were delivered inside the send call");
    in_ring         = test->sent;
    test->ring_held = in_ring;

    req.super.func = loop_test_pending_cb;
    req.test       = test;
    req.runs       = 0;
    status         = uct_ep_pending_add(test->ep, &req.super, 0);
    LOOP_TEST_CHECK(test, status == UCS_OK, "pending_add on a full ring: %s",
                    ucs_status_string(status));

    LOOP_TEST_PROGRESS_UNTIL(test, test->received == test->total);
    LOOP_TEST_CHECK(test, req.runs >= 1, "the pending request never ran");
    LOOP_TEST_CHECK(test, test->sent == test->total, "sent %llu of %llu",
                    (unsigned long long)test->sent,
                    (unsigned long long)test->total);
    printf("loop_test: %s: %llu messages in order (ring held %llu, pending "
           "request ran %d times)\n",
           bcopy ? "am_bcopy" : "am_short", (unsigned long long)test->received,
           (unsigned long long)in_ring, req.runs);
}

static void loop_test_flush_and_purge(loop_test_t *test)
{
    loop_test_req_t reqs[2];
    loop_test_comp_t comp;
    ucs_status_t status;
    int purged = 0;
    int i;

    /* Nothing in flight: flush completes at once */
    status = uct_iface_flush(test->iface, 0, NULL);
    LOOP_TEST_CHECK(test, status == UCS_OK, "idle iface flush: %s",
                    ucs_status_string(status));

    /* Room in the ring: pending_add tells the caller to send now */
    reqs[0].super.func = loop_test_pending_cb;
    reqs[0].test       = test;
    reqs[0].runs       = 0;
    status             = uct_ep_pending_add(test->ep, &reqs[0].super, 0);
    LOOP_TEST_CHECK(test, status == UCS_ERR_BUSY, "pending_add with room: %s",
                    ucs_status_string(status));

    /* Messages in flight: flush completes when they are delivered */
    test->bcopy    = 0;
    test->sent     = 0;
    test->received = 0;
    test->total    = (test->ring_held < 3) ? test->ring_held : 3;
    for (i = 0; i < (int)test->total; ++i) {
        status = loop_test_send_one(test);
        LOOP_TEST_CHECK(test, status == UCS_OK, "am_short: %s",
                        ucs_status_string(status));
    }

    comp.super.func   = loop_test_comp_cb;
    comp.super.count  = 1;
    comp.super.status = UCS_OK;
    comp.done         = 0;
    status            = uct_ep_flush(test->ep, 0, &comp.super);
    LOOP_TEST_CHECK(test, status == UCS_INPROGRESS, "busy ep flush: %s",
                    ucs_status_string(status));
    LOOP_TEST_PROGRESS_UNTIL(test, comp.done);
    LOOP_TEST_CHECK(test, test->received == test->total,
                    "flush completed with %llu of %llu messages delivered",
                    (unsigned long long)test->received,
                    (unsigned long long)test->total);
    LOOP_TEST_CHECK(test, comp.super.status == UCS_OK, "flush status: %s",
                    ucs_status_string(comp.super.status));

    /* Fill the ring, queue two requests, and purge them unsent */
    test->sent     = 0;
    test->received = 0;
    test->total    = UINT64_MAX;
    while (loop_test_send_one(test) == UCS_OK) {
    }
    for (i = 0; i < 2; ++i) {
        reqs[i].super.func = loop_test_pending_cb;
        reqs[i].test       = test;
        reqs[i].runs       = 0;
        status             = uct_ep_pending_add(test->ep, &reqs[i].super, 0);
        LOOP_TEST_CHECK(test, status == UCS_OK, "pending_add: %s",
                        ucs_status_string(status));
    }
    uct_ep_pending_purge(test->ep, loop_test_purge_cb, &purged);
    LOOP_TEST_CHECK(test, purged == 2, "purged %d requests, expected 2",
                    purged);

    test->total = test->sent;
    LOOP_TEST_PROGRESS_UNTIL(test, test->received == test->total);
    LOOP_TEST_CHECK(test, (reqs[0].runs == 0) && (reqs[1].runs == 0),
                    "a purged request ran");
    printf("loop_test: flush, pending_add and purge behave\n");
}

/* Finds the memory domain that offers loop/loop0 */
static int loop_test_open_md(loop_test_t *test)
{
    uct_component_h *components;
    uct_tl_resource_desc_t *resources;
    uct_component_attr_t attr;
    uct_md_config_t *config;
    unsigned c, r, num_components, num_resources;
    ucs_status_t status;
    uct_md_h md;

    status = uct_query_components(&components, &num_components);
    if (status != UCS_OK) {
        fprintf(stderr, "loop_test: uct_query_components: %s\n",
                ucs_status_string(status));
        return -1;
    }

    for (c = 0; (c < num_components) && (test->md == NULL); ++c) {
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
        if ((uct_component_query(components[c], &attr) != UCS_OK) ||
            strcmp(attr.name, "loop")) {
            continue;
        }

        if (uct_md_config_read(components[c], NULL, NULL, &config) != UCS_OK) {
            continue;
        }
        status = uct_md_open(components[c], "loop", config, &md);
        uct_config_release(config);
        if (status != UCS_OK) {
            continue;
        }

        if (uct_md_query_tl_resources(md, &resources, &num_resources) ==
            UCS_OK) {
            for (r = 0; r < num_resources; ++r) {
                if (!strcmp(resources[r].tl_name, "loop") &&
                    !strcmp(resources[r].dev_name, "loop0")) {
                    test->md = md;
                }
            }
            uct_release_tl_resource_list(resources);
        }
        if (test->md == NULL) {
            uct_md_close(md);
        }
    }

    uct_release_component_list(components);
    if (test->md == NULL) {
        fprintf(stderr, "loop_test: transport loop/loop0 not found; set "
                        "UCX_MODULE_DIR to the directory of libuct_loop.so\n");
        return -1;
    }
    return 0;
}

static int loop_test_setup(loop_test_t *test)
{
    uct_iface_config_t *config;
    uct_iface_params_t params;
    uct_ep_params_t ep_params;
    ucs_status_t status;
    uint64_t dev_addr[8], iface_addr[8], other[8];

    status =
        ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK, &test->async);
    if (status != UCS_OK) {
        test->async = NULL;
        fprintf(stderr, "loop_test: async context: %s\n",
                ucs_status_string(status));
        return -1;
    }

    status =
        uct_worker_create(test->async, UCS_THREAD_MODE_SINGLE, &test->worker);
    if (status != UCS_OK) {
        test->worker = NULL;
        fprintf(stderr, "loop_test: worker: %s\n", ucs_status_string(status));
        return -1;
    }

    if (loop_test_open_md(test) != 0) {
        return -1;
    }

    /* A ring far smaller than the message count, whatever the
     * environment says, so sends run out of room */
    status = uct_md_iface_config_read(test->md, "loop", NULL, NULL, &config);
    if (status != UCS_OK) {
        fprintf(stderr, "loop_test: reading the loop configuration: %s\n",
                ucs_status_string(status));
        return -1;
    }
    status = uct_config_modify(config, "RING_SIZE", "16");
    if (status != UCS_OK) {
        uct_config_release(config);
        fprintf(stderr, "loop_test: setting RING_SIZE: %s\n",
                ucs_status_string(status));
        return -1;
    }

    memset(&params, 0, sizeof(params));
    params.field_mask =
        UCT_IFACE_PARAM_FIELD_OPEN_MODE | UCT_IFACE_PARAM_FIELD_DEVICE;
    params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = "loop";
    params.mode.device.dev_name = "loop0";
    status =
        uct_iface_open(test->md, test->worker, &params, config, &test->iface);
    uct_config_release(config);
    if (status != UCS_OK) {
        test->iface = NULL;
        fprintf(stderr, "loop_test: uct_iface_open(loop/loop0): %s\n",
                ucs_status_string(status));
        return -1;
    }
    uct_iface_progress_enable(test->iface,
                              UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);

    status = uct_iface_query(test->iface, &test->attr);
    LOOP_TEST_CHECK(test, status == UCS_OK, "uct_iface_query: %s",
                    ucs_status_string(status));
    LOOP_TEST_CHECK(
        test,
        (test->attr.cap.flags &
         (UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_AM_BCOPY |
          UCT_IFACE_FLAG_PENDING | UCT_IFACE_FLAG_CONNECT_TO_IFACE)) ==
            (UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_AM_BCOPY |
             UCT_IFACE_FLAG_PENDING | UCT_IFACE_FLAG_CONNECT_TO_IFACE),
        "capability flags 0x%llx lack am short/bcopy, pending "
        "or connect to iface",
        (unsigned long long)test->attr.cap.flags);
    LOOP_TEST_CHECK(test,
                    (test->attr.device_addr_len <= sizeof(dev_addr)) &&
                        (test->attr.iface_addr_len <= sizeof(iface_addr)),
                    "addresses larger than expected");
    LOOP_TEST_CHECK(test, test->attr.cap.am.max_bcopy >= LOOP_TEST_BCOPY,
                    "max_bcopy %zu is below %d", test->attr.cap.am.max_bcopy,
                    LOOP_TEST_BCOPY);
    if (test->failed) {
        return -1;
    }

    status = uct_iface_set_am_handler(test->iface, LOOP_TEST_AM_ID,
                                      loop_test_am_cb, test, UCT_CB_FLAG_SYNC);
    if (status != UCS_OK) {
        fprintf(stderr, "loop_test: uct_iface_set_am_handler: %s\n",
                ucs_status_string(status));
        return -1;
    }

    memset(dev_addr, 0, sizeof(dev_addr));
    memset(iface_addr, 0, sizeof(iface_addr));
    if ((uct_iface_get_device_address(
             test->iface, (uct_device_addr_t *)dev_addr) != UCS_OK) ||
        (uct_iface_get_address(test->iface, (uct_iface_addr_t *)iface_addr) !=
         UCS_OK)) {
        fprintf(stderr, "loop_test: cannot read the interface addresses\n");
        return -1;
    }

    LOOP_TEST_CHECK(test,
                    uct_iface_is_reachable(test->iface,
                                           (uct_device_addr_t *)dev_addr,
                                           (uct_iface_addr_t *)iface_addr),
                    "own address is not reachable");

    /* Another process has another device address */
    memcpy(other, dev_addr, sizeof(other));
    other[0] ^= 1;
    LOOP_TEST_CHECK(test,
                    !uct_iface_is_reachable(test->iface,
                                            (uct_device_addr_t *)other,
                                            (uct_iface_addr_t *)iface_addr),
                    "a foreign device address is reachable");

    ep_params.field_mask = UCT_EP_PARAM_FIELD_IFACE |
                           UCT_EP_PARAM_FIELD_DEV_ADDR |
                           UCT_EP_PARAM_FIELD_IFACE_ADDR;
    ep_params.iface      = test->iface;
    ep_params.dev_addr   = (uct_device_addr_t *)dev_addr;
    ep_params.iface_addr = (uct_iface_addr_t *)iface_addr;
    status               = uct_ep_create(&ep_params, &test->ep);
    if (status != UCS_OK) {
        test->ep = NULL;
        fprintf(stderr, "loop_test: uct_ep_create: %s\n",
                ucs_status_string(status));
        return -1;
    }

    return test->failed ? -1 : 0;
}

static void loop_test_cleanup(loop_test_t *test)
{
    if (test->ep != NULL) {
        uct_ep_destroy(test->ep);
    }
    if (test->iface != NULL) {
        uct_iface_close(test->iface);
    }
    if (test->md != NULL) {
        uct_md_close(test->md);
    }
    if (test->worker != NULL) {
        uct_worker_destroy(test->worker);
    }
    if (test->async != NULL) {
        ucs_async_context_destroy(test->async);
    }
}

int main(int argc, char **argv)
{
    loop_test_t test;

    memset(&test, 0, sizeof(test));

    if (loop_test_setup(&test) == 0) {
        loop_test_send_phase(&test, 0);
        loop_test_send_phase(&test, 1);
        loop_test_flush_and_purge(&test);
    } else {
        test.failed = 1;
    }

    loop_test_cleanup(&test);

    if (test.failed) {
        fprintf(stderr, "loop_test: FAILED\n");
        return 1;
    }
    printf("loop_test: passed\n");
    return 0;
}
