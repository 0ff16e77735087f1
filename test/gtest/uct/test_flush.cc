/*
 * Flush and fence over every transport: iface and ep flush with and
 * without a completion (UCS_OK leaves it untouched, UCS_INPROGRESS runs it
 * exactly once), the comp.count rule for several operations sharing one
 * completion, flush after zcopy finishing the zcopy, fence returning OK.
 */
#include "uct_test.h"

#include <cstring>

namespace {

const uint8_t AM_ID = 3;

size_t pack_u64(void *dest, void *arg)
{
    memcpy(dest, arg, sizeof(uint64_t));
    return sizeof(uint64_t);
}

} // namespace

class uct_flush : public uct_test {
protected:
    typedef uct_test::mapped_buffer mapped_buffer;

    /* Flush without a completion: UCS_OK, or UCS_INPROGRESS until a later
     * call returns UCS_OK. */
    void flush_no_comp(const std::function<ucs_status_t()> &flush,
                       const std::string &what)
    {
        ucs_status_t status;
        wait_for(
            [&] {
                status = flush();
                return (status != UCS_INPROGRESS) &&
                       (status != UCS_ERR_NO_RESOURCE);
            },
            what + " without completion to return UCS_OK");
        EXPECT_EQ(UCS_OK, status) << what << ": " << ucs_status_string(status);
    }

    /*
     * Posts @a n zcopy operations (put, else AM) sharing @a comp, armed
     * with count n + 1: every op that completes at once (UCS_OK) takes its
     * share off comp.count by hand, as the API asks, and the extra share
     * keeps the count above 0 until the test drops it. Returns how many
     * returned UCS_INPROGRESS, or -1 if the transport has no zcopy.
     */
    int post_zcopy(const pair &p, counted_completion &comp,
                   mapped_buffer &local, mapped_buffer &remote, int n);
};

int uct_flush::post_zcopy(const pair &p, counted_completion &comp,
                          mapped_buffer &local, mapped_buffer &remote, int n)
{
    const uct_iface_attr_t &attr = p.sender->iface_attr();
    bool put = p.sender->has_cap(UCT_IFACE_FLAG_PUT_ZCOPY) &&
               (local.length() >= attr.cap.put.min_zcopy) &&
               (local.length() <= attr.cap.put.max_zcopy);
    bool am = p.sender->has_cap(UCT_IFACE_FLAG_AM_ZCOPY) &&
              (local.length() >= attr.cap.am.min_zcopy) &&
              (local.length() <= attr.cap.am.max_zcopy);
    int in_progress = 0;

    if (!put && !am) {
        return -1;
    }

    comp.reset(n + 1);
    for (int i = 0; i < n; ++i) {
        uct_iov_t iov       = local.iov(0, local.length());
        ucs_status_t status = (ucs_status_t)retry_no_resource(
            [&] {
                return put ? (ssize_t)uct_ep_put_zcopy(p.ep, &iov, 1,
                                                       remote.addr(),
                                                       remote.rkey(), comp)
                           : (ssize_t)uct_ep_am_zcopy(p.ep, AM_ID, NULL, 0,
                                                      &iov, 1, 0, comp);
            },
            put ? "uct_ep_put_zcopy" : "uct_ep_am_zcopy");
        if (status == UCS_OK) {
            --comp.uct.count;
        } else if (status == UCS_INPROGRESS) {
            ++in_progress;
        } else {
            ADD_FAILURE() << "zcopy failed: " << ucs_status_string(status);
            --comp.uct.count;
        }
    }
    return in_progress;
}

TEST_P(uct_flush, iface_flush_idle)
{
    entity *e = create_entity();

    flush_no_comp([e] { return uct_iface_flush(e->iface(), 0, NULL); },
                  "uct_iface_flush");

    counted_completion comp;
    ucs_status_t status = (ucs_status_t)retry_no_resource(
        [&] { return (ssize_t)uct_iface_flush(e->iface(), 0, comp); },
        "uct_iface_flush");
    wait_completion(status, comp, "uct_iface_flush with completion");
}

TEST_P(uct_flush, ep_flush_idle)
{
    UCT_TEST_INIT_PAIRS();

    for (const pair &p : m_pairs) {
        SCOPED_TRACE(p.name);
        uct_ep_h ep = p.ep;
        flush_no_comp([ep] { return uct_ep_flush(ep, 0, NULL); },
                      "uct_ep_flush");

        counted_completion comp;
        ucs_status_t status = (ucs_status_t)retry_no_resource(
            [&] { return (ssize_t)uct_ep_flush(ep, 0, comp); }, "uct_ep_flush");
        wait_completion(status, comp, "uct_ep_flush with completion");
    }
}

TEST_P(uct_flush, ep_flush_after_am)
{
    UCT_TEST_INIT_PAIRS();

    for (const pair &p : m_pairs) {
        SCOPED_TRACE(p.name);
        am_recorder &rec   = install_recorder(*p.receiver, AM_ID);
        const unsigned num = 16;

        for (uint64_t i = 0; i < num; ++i) {
            ssize_t ret;
            if (p.sender->has_cap(UCT_IFACE_FLAG_AM_BCOPY)) {
                ret = retry_no_resource(
                    [&] {
                        return uct_ep_am_bcopy(p.ep, AM_ID, pack_u64, &i, 0);
                    },
                    "uct_ep_am_bcopy");
                ASSERT_EQ((ssize_t)sizeof(i), ret);
            } else if (p.sender->has_cap(UCT_IFACE_FLAG_AM_SHORT)) {
                ret = retry_no_resource(
                    [&] {
                        return (ssize_t)uct_ep_am_short(p.ep, AM_ID, i, NULL,
                                                        0);
                    },
                    "uct_ep_am_short");
                ASSERT_EQ(UCS_OK, ret);
            } else {
                GTEST_SKIP() << "no AM short or bcopy";
            }
        }

        flush_ep(*p.sender, p.ep);
        wait_for([&] { return rec.count() == num; },
                 "every message sent before the flush");
    }
}

TEST_P(uct_flush, ep_flush_completes_zcopy)
{
    UCT_TEST_INIT_PAIRS();

    for (const pair &p : m_pairs) {
        SCOPED_TRACE(p.name);
        install_recorder(*p.receiver, AM_ID);
        const int n = 4;
        mapped_buffer local(1024, *p.sender);
        mapped_buffer remote(1024, *p.receiver);
        local.pattern_fill(3);
        counted_completion zcomp;

        int in_progress = post_zcopy(p, zcomp, local, remote, n);
        if (in_progress < 0) {
            GTEST_SKIP() << "no put or AM zcopy of 1024 bytes";
        }

        counted_completion fcomp;
        ucs_status_t status = (ucs_status_t)retry_no_resource(
            [&] { return (ssize_t)uct_ep_flush(p.ep, 0, fcomp); },
            "uct_ep_flush");
        if (status == UCS_INPROGRESS) {
            wait_for([&] { return fcomp.calls > 0; }, "the flush");
        } else {
            ASSERT_EQ(UCS_OK, status) << ucs_status_string(status);
        }

        /* When the flush is done, every zcopy is: only the extra share
         * is left, and the callback has not run */
        EXPECT_EQ(1, zcomp.uct.count)
            << "zcopy ops still outstanding after the flush (" << in_progress
            << " of " << n << " were in progress)";
        EXPECT_EQ(0, zcomp.calls) << "completion ran before count hit 0";
        EXPECT_EQ(UCS_OK, zcomp.uct.status);
        wait_completion(status, fcomp, "uct_ep_flush");
    }
}

TEST_P(uct_flush, iface_flush_completes_zcopy)
{
    UCT_TEST_INIT_PAIRS();

    for (const pair &p : m_pairs) {
        SCOPED_TRACE(p.name);
        install_recorder(*p.receiver, AM_ID);
        const int n = 3;
        mapped_buffer local(512, *p.sender);
        mapped_buffer remote(512, *p.receiver);
        counted_completion zcomp;

        int in_progress = post_zcopy(p, zcomp, local, remote, n);
        if (in_progress < 0) {
            GTEST_SKIP() << "no put or AM zcopy of 512 bytes";
        }

        counted_completion fcomp;
        ucs_status_t status = (ucs_status_t)retry_no_resource(
            [&] {
                return (ssize_t)uct_iface_flush(p.sender->iface(), 0, fcomp);
            },
            "uct_iface_flush");
        if (status == UCS_INPROGRESS) {
            wait_for([&] { return fcomp.calls > 0; }, "the iface flush");
        } else {
            ASSERT_EQ(UCS_OK, status) << ucs_status_string(status);
        }
        EXPECT_EQ(1, zcomp.uct.count)
            << "zcopy ops still outstanding after the iface flush ("
            << in_progress << " of " << n << " were in progress)";
        EXPECT_EQ(0, zcomp.calls);
        wait_completion(status, fcomp, "uct_iface_flush");
    }
}

/* One completion shared by a flush of each ep: the callback runs once,
 * when the last one is done. */
TEST_P(uct_flush, shared_completion_runs_once)
{
    UCT_TEST_INIT_PAIRS();

    counted_completion comp((int)m_pairs.size() + 1);
    int in_progress = 0;
    for (const pair &p : m_pairs) {
        ucs_status_t status = (ucs_status_t)retry_no_resource(
            [&] { return (ssize_t)uct_ep_flush(p.ep, 0, comp); },
            "uct_ep_flush");
        if (status == UCS_OK) {
            --comp.uct.count;
        } else {
            ASSERT_EQ(UCS_INPROGRESS, status) << ucs_status_string(status);
            ++in_progress;
        }
    }
    ucs_status_t status = (ucs_status_t)retry_no_resource(
        [&] {
            return (ssize_t)uct_iface_flush(m_pairs[0].sender->iface(), 0,
                                            comp);
        },
        "uct_iface_flush");
    if (status == UCS_OK) {
        --comp.uct.count;
    } else {
        ASSERT_EQ(UCS_INPROGRESS, status) << ucs_status_string(status);
        ++in_progress;
    }

    if (in_progress > 0) {
        wait_for([&] { return comp.calls > 0; }, "the shared completion");
        progress_for(1);
        EXPECT_EQ(1, comp.calls);
    } else {
        EXPECT_EQ(0, comp.calls) << "every flush returned UCS_OK";
    }
    EXPECT_EQ(0, comp.uct.count);
}

TEST_P(uct_flush, fence_returns_ok)
{
    UCT_TEST_INIT_PAIRS();

    for (const pair &p : m_pairs) {
        SCOPED_TRACE(p.name);
        EXPECT_EQ(UCS_OK, uct_ep_fence(p.ep, 0));
    }
    /* Every interface of this process, senders and receivers */
    for (const auto &e : m_entities) {
        if (!e->is_remote()) {
            EXPECT_EQ(UCS_OK, uct_iface_fence(e->iface(), 0));
        }
    }
}

UCT_INSTANTIATE_TEST_SUITE(uct_flush);
