/*
 * The base of the rc_verbs suites (test_rc.cc, test_rc_reach.cc): helpers
 * and the uct_rc fixture, which reads the transport's state through the
 * structs of src/uct/ib/rc/rc.h.
 */
#ifndef OPENUCT_TEST_UCT_IB_RC_TEST_H_
#define OPENUCT_TEST_UCT_IB_RC_TEST_H_

#include "ib_test.h"

extern "C" {
#include <uct/ib/rc/rc.h>
}

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <endian.h>
#include <iostream>
#include <poll.h>
#include <set>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

namespace rc_test {

const uint8_t AM_ID = 7;

inline uct_rc_iface_t *rc_iface_of(const uct_test::entity &e)
{
    return uct_rc_iface(e.iface());
}

inline uct_rc_ep_t *rc_ep_of(uct_ep_h ep)
{
    return uct_rc_ep(ep);
}

/* Objects on a pool's free list */
inline unsigned mpool_free_count(const ucs_mpool_t *mp)
{
    unsigned count = 0;

    for (ucs_mpool_elem_t *elem = mp->freelist; elem != NULL;
         elem                   = elem->next) {
        ++count;
    }
    return count;
}

/* A pending request that sends an am_short carrying @a value */
struct pending_send {
    uct_pending_req_t uct; /* keep first */
    uct_ep_h ep;
    uint64_t value;
    std::vector<uint64_t> *order;
};

inline ucs_status_t pending_send_cb(uct_pending_req_t *self)
{
    pending_send *req   = reinterpret_cast<pending_send *>(self);
    ucs_status_t status = uct_ep_am_short(req->ep, AM_ID, req->value, NULL, 0);
    if (status == UCS_OK) {
        req->order->push_back(req->value);
    }
    return status;
}

/* A bcopy message: who sent it and its sequence */
struct bcopy_msg {
    uint32_t sender;
    uint32_t seq;
    char fill[96];
};

inline size_t pack_bcopy_msg(void *dest, void *arg)
{
    memcpy(dest, arg, sizeof(bcopy_msg));
    return sizeof(bcopy_msg);
}

struct pattern_arg {
    uint64_t seed;
    size_t length;
};

inline size_t pack_pattern(void *dest, void *arg)
{
    pattern_arg *p = static_cast<pattern_arg *>(arg);
    uct_test::mapped_buffer::pattern_fill(dest, p->length, p->seed);
    return p->length;
}

} // namespace rc_test

using namespace rc_test;

class uct_rc : public uct_ib_test {
protected:
    uct_rc() : uct_ib_test(AM_ID)
    {}

    /* The ep that the last connect_to() created on @a e (the peer side) */
    static uct_ep_h newest_ep(const entity &e)
    {
        return e.eps().back();
    }

    static std::vector<char> ep_address(uct_ep_h ep)
    {
        std::vector<char> addr(sizeof(uct_rc_ep_addr_t));
        EXPECT_EQ(UCS_OK, uct_ep_get_address(ep, (uct_ep_addr_t *)addr.data()));
        return addr;
    }

    static ucs_status_t connect(uct_ep_h ep, const std::vector<char> &dev,
                                const std::vector<char> &addr)
    {
        return uct_ep_connect_to_ep(ep, (const uct_device_addr_t *)dev.data(),
                                    (const uct_ep_addr_t *)addr.data());
    }

    /* Progress @a e alone for @a msec */
    static void progress_only(entity &e, double msec)
    {
        double deadline = now_sec() + msec / 1e3;
        do {
            e.progress();
        } while (now_sec() < deadline);
    }

    void many_senders(unsigned rx_queue_len, bool stall_receiver);
};

#endif
