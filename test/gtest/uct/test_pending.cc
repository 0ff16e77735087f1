/*
 * Pending queue over every transport with UCT_IFACE_FLAG_PENDING:
 *  - uct_ep_pending_add returns UCS_ERR_BUSY while the ep has resources;
 *  - once a bounded send loop (no progress) gets UCS_ERR_NO_RESOURCE,
 *    queued requests are dispatched from progress in the order they were
 *    added, and uct_ep_pending_purge hands every unsent one to the purge
 *    callback, in order. Transports that never run out within the bound
 *    (self) skip that part.
 */
#include "uct_test.h"

#include <cstring>

namespace {

const uint8_t AM_ID = 9;
/* Sends tried before deciding the transport never runs out */
const unsigned MAX_SENDS = 16384;
const unsigned NUM_REQS  = 8;

struct test_req {
    uct_pending_req_t uct; /* keep first */
    unsigned index;
    uct_ep_h ep;
    bool bcopy;
    std::vector<unsigned> *order; /* indexes dispatched, in order */
    unsigned calls;
};

size_t pack_u64(void *dest, void *arg)
{
    memcpy(dest, arg, sizeof(uint64_t));
    return sizeof(uint64_t);
}

/* Sends a message carrying @a value; UCS_OK, NO_RESOURCE or an error. */
ucs_status_t send_u64(uct_ep_h ep, bool bcopy, uint64_t value)
{
    if (bcopy) {
        ssize_t ret = uct_ep_am_bcopy(ep, AM_ID, pack_u64, &value, 0);
        return (ret >= 0) ? UCS_OK : (ucs_status_t)ret;
    }
    return uct_ep_am_short(ep, AM_ID, value, NULL, 0);
}

ucs_status_t pending_send_cb(uct_pending_req_t *self)
{
    test_req *req = reinterpret_cast<test_req *>(self);
    ++req->calls;
    ucs_status_t status =
        send_u64(req->ep, req->bcopy, 0xf00d000000000000ull | req->index);
    if (status == UCS_OK) {
        req->order->push_back(req->index);
    }
    return status;
}

ucs_status_t pending_never_cb(uct_pending_req_t *self)
{
    ADD_FAILURE() << "a pending request ran although pending_add said BUSY";
    return UCS_OK;
}

struct purge_log {
    std::vector<unsigned> order; /* indexes purged, in order */
};

void purge_cb(uct_pending_req_t *self, void *arg)
{
    test_req *req   = reinterpret_cast<test_req *>(self);
    purge_log *plog = static_cast<purge_log *>(arg);
    plog->order.push_back(req->index);
}

} // namespace

class uct_pending : public uct_test {
protected:
    bool use_bcopy(const entity &e) const
    {
        return e.has_cap(UCT_IFACE_FLAG_AM_BCOPY);
    }

    /* Sends without progress until UCS_ERR_NO_RESOURCE; returns how many
     * went out, or MAX_SENDS if the transport never ran out. */
    unsigned exhaust(const pair &p)
    {
        bool bcopy = use_bcopy(*p.sender);
        for (unsigned i = 0; i < MAX_SENDS; ++i) {
            ucs_status_t status = send_u64(p.ep, bcopy, i);
            if (status == UCS_ERR_NO_RESOURCE) {
                return i;
            }
            if (status != UCS_OK) {
                ADD_FAILURE()
                    << "send " << i << " failed: " << ucs_status_string(status);
                return MAX_SENDS;
            }
        }
        return MAX_SENDS;
    }

    /*
     * Exhausts the ep and queues NUM_REQS requests. Returns false (after
     * GTEST_SKIP-worthy reason in @a why) if the transport never ran out.
     */
    bool exhaust_and_queue(const pair &p, std::vector<test_req> &reqs,
                           std::vector<unsigned> &order, std::string &why);
};

bool uct_pending::exhaust_and_queue(const pair &p, std::vector<test_req> &reqs,
                                    std::vector<unsigned> &order,
                                    std::string &why)
{
    reqs.resize(NUM_REQS);
    for (unsigned i = 0; i < NUM_REQS; ++i) {
        memset(&reqs[i].uct, 0, sizeof(reqs[i].uct));
        reqs[i].uct.func = pending_send_cb;
        reqs[i].index    = i;
        reqs[i].ep       = p.ep;
        reqs[i].bcopy    = use_bcopy(*p.sender);
        reqs[i].order    = &order;
        reqs[i].calls    = 0;
    }

    /* Resources may come back between the last send and the add (an
     * async thread): then exhaust again, a few times at most */
    for (int attempt = 0; attempt < 10; ++attempt) {
        if (exhaust(p) == MAX_SENDS) {
            why = p.sender->res().tl_name +
                  " never returned "
                  "UCS_ERR_NO_RESOURCE in " +
                  std::to_string(MAX_SENDS) + " sends";
            return false;
        }
        ucs_status_t status = uct_ep_pending_add(p.ep, &reqs[0].uct, 0);
        if (status == UCS_ERR_BUSY) {
            continue;
        }
        EXPECT_EQ(UCS_OK, status) << ucs_status_string(status);
        for (unsigned i = 1; i < NUM_REQS; ++i) {
            /* Something is queued: later adds must queue behind it */
            EXPECT_EQ(UCS_OK, uct_ep_pending_add(p.ep, &reqs[i].uct, 0))
                << "request " << i;
        }
        return true;
    }
    why = "resources kept coming back before pending_add";
    return false;
}

TEST_P(uct_pending, add_busy_when_resources_free)
{
    UCT_TEST_INIT_PAIRS();
    UCT_TEST_REQUIRE_CAP(m_pairs[0].sender, UCT_IFACE_FLAG_PENDING);

    for (const pair &p : m_pairs) {
        SCOPED_TRACE(p.name);
        am_recorder &rec = install_recorder(*p.receiver, AM_ID);
        bool bcopy       = use_bcopy(*p.sender);
        if (!bcopy && !p.sender->has_cap(UCT_IFACE_FLAG_AM_SHORT)) {
            GTEST_SKIP() << "no AM short or bcopy";
        }

        /* One message through, everything flushed: resources are free */
        ASSERT_EQ(UCS_OK, (ucs_status_t)retry_no_resource(
                              [&] { return (ssize_t)send_u64(p.ep, bcopy, 1); },
                              "send"));
        flush_ep(*p.sender, p.ep);
        wait_for([&] { return rec.count() == 1; }, "the message");

        uct_pending_req_t req;
        memset(&req, 0, sizeof(req));
        req.func            = pending_never_cb;
        ucs_status_t status = uct_ep_pending_add(p.ep, &req, 0);
        EXPECT_EQ(UCS_ERR_BUSY, status) << ucs_status_string(status);
        if (status == UCS_OK) {
            uct_ep_pending_purge(p.ep, NULL, NULL);
        }
        progress_for(1);
    }
}

TEST_P(uct_pending, purge_empty_queue)
{
    UCT_TEST_INIT_PAIRS();
    UCT_TEST_REQUIRE_CAP(m_pairs[0].sender, UCT_IFACE_FLAG_PENDING);

    for (const pair &p : m_pairs) {
        SCOPED_TRACE(p.name);
        purge_log plog;
        uct_ep_pending_purge(p.ep, purge_cb, &plog);
        EXPECT_TRUE(plog.order.empty()) << "purge called back for nothing";
    }
}

TEST_P(uct_pending, dispatch_in_order)
{
    UCT_TEST_INIT_PAIRS();
    UCT_TEST_REQUIRE_CAP(m_pairs[0].sender, UCT_IFACE_FLAG_PENDING);

    for (const pair &p : m_pairs) {
        SCOPED_TRACE(p.name);
        am_recorder &rec = install_recorder(*p.receiver, AM_ID);
        if (!use_bcopy(*p.sender) &&
            !p.sender->has_cap(UCT_IFACE_FLAG_AM_SHORT)) {
            GTEST_SKIP() << "no AM short or bcopy";
        }

        std::vector<test_req> reqs;
        std::vector<unsigned> order;
        std::string why;
        if (!exhaust_and_queue(p, reqs, order, why)) {
            GTEST_SKIP() << why;
        }

        wait_for([&] { return order.size() == NUM_REQS; },
                 "every pending request to be dispatched");
        for (unsigned i = 0; i < order.size(); ++i) {
            EXPECT_EQ(i, order[i]) << "pending requests out of order";
        }

        /* The receiver sees the pending messages last, in order */
        flush_ep(*p.sender, p.ep);
        size_t total = 0;
        wait_for(
            [&] {
                total = rec.count();
                if (total < NUM_REQS) {
                    return false;
                }
                am_recorder::message m = rec.at(total - 1);
                uint64_t v;
                memcpy(&v, m.data.data(), sizeof(v));
                return v == (0xf00d000000000000ull | (NUM_REQS - 1));
            },
            "the last pending message at the receiver");
        for (unsigned i = 0; i < NUM_REQS; ++i) {
            uint64_t v;
            am_recorder::message m = rec.at(total - NUM_REQS + i);
            ASSERT_GE(m.data.size(), sizeof(v));
            memcpy(&v, m.data.data(), sizeof(v));
            EXPECT_EQ(0xf00d000000000000ull | i, v) << "message " << i;
        }
    }
}

TEST_P(uct_pending, purge_unsent_requests)
{
    UCT_TEST_INIT_PAIRS();
    UCT_TEST_REQUIRE_CAP(m_pairs[0].sender, UCT_IFACE_FLAG_PENDING);

    for (const pair &p : m_pairs) {
        SCOPED_TRACE(p.name);
        install_recorder(*p.receiver, AM_ID);
        if (!use_bcopy(*p.sender) &&
            !p.sender->has_cap(UCT_IFACE_FLAG_AM_SHORT)) {
            GTEST_SKIP() << "no AM short or bcopy";
        }

        std::vector<test_req> reqs;
        std::vector<unsigned> order;
        std::string why;
        if (!exhaust_and_queue(p, reqs, order, why)) {
            GTEST_SKIP() << why;
        }

        /* No progress in between: nothing was dispatched */
        purge_log plog;
        uct_ep_pending_purge(p.ep, purge_cb, &plog);
        ASSERT_EQ(NUM_REQS, plog.order.size()) << "purge callbacks";
        for (unsigned i = 0; i < NUM_REQS; ++i) {
            EXPECT_EQ(i, plog.order[i]) << "purge order";
            EXPECT_EQ(0u, reqs[i].calls) << "request " << i << " ran";
        }

        /* Purged requests never run */
        flush_ep(*p.sender, p.ep);
        progress_for(10);
        EXPECT_TRUE(order.empty()) << "a purged request was dispatched";
    }
}

UCT_INSTANTIATE_TEST_SUITE(uct_pending);
