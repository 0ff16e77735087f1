/*
 * The base of the rc_verbs suites (test_rc.cc, test_rc_reach.cc): helpers
 * and the uct_rc fixture, which reads the transport's state through the
 * structs of src/uct/ib/rc/rc.h.
 */
#ifndef OPENUCT_TEST_UCT_IB_RC_TEST_H_
#define OPENUCT_TEST_UCT_IB_RC_TEST_H_

#include "../uct_test.h"

extern "C" {
#include <uct/ib/rc/rc.h>
}

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <endian.h>
#include <iostream>
#include <malloc.h>
#include <poll.h>
#include <set>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

namespace rc_test {

const uint8_t AM_ID = 7;

inline double now_sec()
{
    return std::chrono::duration<double>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

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

/* The 64-bit AM header of a recorded am_short */
inline uint64_t am_header(const uct_test::am_recorder::message &msg)
{
    uint64_t value = UINT64_MAX;

    if (msg.data.size() >= sizeof(value)) {
        memcpy(&value, msg.data.data(), sizeof(value));
    }
    return value;
}

/* Error handler calls of an interface */
struct err_log {
    std::vector<std::pair<uct_ep_h, ucs_status_t>> calls;

    size_t count(uct_ep_h ep) const
    {
        return std::count_if(calls.begin(), calls.end(),
                             [ep](const std::pair<uct_ep_h, ucs_status_t> &c) {
                                 return c.first == ep;
                             });
    }

    ucs_status_t status(uct_ep_h ep) const
    {
        for (const auto &c : calls) {
            if (c.first == ep) {
                return c.second;
            }
        }
        return UCS_OK;
    }
};

inline ucs_status_t err_cb(void *arg, uct_ep_h ep, ucs_status_t status)
{
    static_cast<err_log *>(arg)->calls.emplace_back(ep, status);
    return UCS_OK;
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

class uct_rc : public uct_test {
protected:
    void TearDown() override
    {
        for (uct_ep_h ep : m_raw_eps) {
            uct_ep_destroy(ep);
        }
        m_raw_eps.clear();
        uct_test::TearDown();
    }

    entity_params
    params(const std::vector<std::pair<std::string, std::string>> &config = {},
           bool err_handler = false)
    {
        entity_params p;
        p.config = config;
        if (err_handler) {
            p.err_handler     = err_cb;
            p.err_handler_arg = &m_errs;
        }
        return p;
    }

    /* The ep that the last connect_to() created on @a e (the peer side) */
    static uct_ep_h newest_ep(const entity &e)
    {
        return e.eps().back();
    }

    /* An ep of @a e not connected to anything, destroyed at the end */
    uct_ep_h raw_ep(const entity &e)
    {
        uct_ep_params_t p;
        uct_ep_h ep;

        memset(&p, 0, sizeof(p));
        p.field_mask        = UCT_EP_PARAM_FIELD_IFACE;
        p.iface             = e.iface();
        ucs_status_t status = uct_ep_create(&p, &ep);
        if (status != UCS_OK) {
            throw std::runtime_error(std::string("uct_ep_create: ") +
                                     ucs_status_string(status));
        }
        m_raw_eps.push_back(ep);
        return ep;
    }

    void destroy_raw_ep(uct_ep_h ep)
    {
        auto it = std::find(m_raw_eps.begin(), m_raw_eps.end(), ep);
        ASSERT_TRUE(it != m_raw_eps.end());
        m_raw_eps.erase(it);
        uct_ep_destroy(ep);
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

    /* Send am_short @a value on @a ep (retrying on NO_RESOURCE); false
     * (and a failure) when it did not go */
    bool send_short(uct_ep_h ep, uint64_t value)
    {
        ssize_t ret = retry_no_resource(
            [&] { return (ssize_t)uct_ep_am_short(ep, AM_ID, value, NULL, 0); },
            "uct_ep_am_short");
        EXPECT_EQ(UCS_OK, ret) << ucs_status_string((ucs_status_t)ret);
        return ret == UCS_OK;
    }

    /* Records every am_short header in order: the recorder's messages */
    static std::vector<uint64_t> headers(const am_recorder &rec)
    {
        std::vector<uint64_t> out;
        for (size_t i = 0; i < rec.count(); ++i) {
            out.push_back(am_header(rec.at(i)));
        }
        return out;
    }

    static std::vector<uint64_t> iota(uint64_t n)
    {
        std::vector<uint64_t> out;
        for (uint64_t i = 0; i < n; ++i) {
            out.push_back(i);
        }
        return out;
    }

    /* Destroys every ep and closes every iface now (a test that expects
     * log lines at close, such as the count of suppressed ones) */
    void close_all()
    {
        for (uct_ep_h ep : m_raw_eps) {
            uct_ep_destroy(ep);
        }
        m_raw_eps.clear();
        reset_entities();
    }

    void many_senders(unsigned rx_queue_len, bool stall_receiver);

    err_log m_errs;
    std::vector<uct_ep_h> m_raw_eps;
};

#endif
