/*
 * Event fd and arm semantics over every transport. With
 * UCT_IFACE_FLAG_EVENT_FD: the iface gives an fd; arming for
 * UCT_EVENT_RECV succeeds when nothing is pending; a message then makes
 * the fd readable, and arm says UCS_ERR_BUSY while that event is pending.
 * Without it, both calls return UCS_ERR_UNSUPPORTED.
 */
#include "uct_test.h"

#include <cstring>

namespace {

const uint8_t AM_ID = 11;

} // namespace

class uct_event : public uct_test {
protected:
    /* Arms @a e for @a events, progressing while the iface says BUSY
     * (events from earlier activity); returns the final status. */
    ucs_status_t arm_when_idle(entity &e, unsigned events)
    {
        ucs_status_t status = UCS_ERR_BUSY;
        wait_for(
            [&] {
                status = e.event_arm(events);
                return status != UCS_ERR_BUSY;
            },
            "uct_iface_event_arm to stop returning UCS_ERR_BUSY");
        return status;
    }

    ucs_status_t send_one(const pair &p, uint64_t value)
    {
        if (p.sender->has_cap(UCT_IFACE_FLAG_AM_SHORT)) {
            return (ucs_status_t)retry_no_resource(
                [&] {
                    return (ssize_t)uct_ep_am_short(p.ep, AM_ID, value, NULL,
                                                    0);
                },
                "uct_ep_am_short");
        }
        return (ucs_status_t)retry_no_resource(
            [&] {
                ssize_t ret = uct_ep_am_bcopy(
                    p.ep, AM_ID,
                    [](void *dest, void *arg) -> size_t {
                        memcpy(dest, arg, sizeof(uint64_t));
                        return sizeof(uint64_t);
                    },
                    &value, 0);
                return (ret >= 0) ? (ssize_t)UCS_OK : ret;
            },
            "uct_ep_am_bcopy");
    }
};

TEST_P(uct_event, unsupported_without_event_fd)
{
    entity *e = create_entity();
    if (e->has_event_cap(UCT_IFACE_FLAG_EVENT_FD)) {
        GTEST_SKIP() << res().tl_name << " has UCT_IFACE_FLAG_EVENT_FD";
    }

    int fd = -12345;
    EXPECT_EQ(UCS_ERR_UNSUPPORTED, uct_iface_event_fd_get(e->iface(), &fd));
    EXPECT_EQ(-12345, fd) << "fd_p written although unsupported";
    EXPECT_EQ(UCS_ERR_UNSUPPORTED,
              uct_iface_event_arm(e->iface(), UCT_EVENT_RECV));
}

TEST_P(uct_event, recv_makes_fd_readable)
{
    UCT_TEST_INIT_PAIRS();
    entity *receiver = m_pairs[0].receiver;
    if (!receiver->has_event_cap(UCT_IFACE_FLAG_EVENT_FD) ||
        !receiver->has_event_cap(UCT_IFACE_FLAG_EVENT_RECV)) {
        GTEST_SKIP() << res().tl_name << " has no EVENT_FD + EVENT_RECV";
    }
    if (!receiver->has_cap(UCT_IFACE_FLAG_AM_SHORT) &&
        !receiver->has_cap(UCT_IFACE_FLAG_AM_BCOPY)) {
        GTEST_SKIP() << "no AM short or bcopy";
    }

    for (const pair &p : m_pairs) {
        SCOPED_TRACE(p.name);
        am_recorder &rec = install_recorder(*p.receiver, AM_ID);
        int fd = -1, fd2 = -1;

        ASSERT_EQ(UCS_OK, p.receiver->event_fd_get(&fd));
        ASSERT_GE(fd, 0);
        ASSERT_EQ(UCS_OK, p.receiver->event_fd_get(&fd2));
        EXPECT_EQ(fd, fd2) << "the event fd changed between calls";

        bool arm_sender = (p.sender != p.receiver) &&
                          p.sender->has_event_cap(UCT_IFACE_FLAG_EVENT_FD);
        if (arm_sender) {
            ASSERT_EQ(UCS_OK, p.sender->event_fd_get(&fd2));
        }

        for (uint64_t round = 0; round < 3; ++round) {
            SCOPED_TRACE("round " + std::to_string(round));

            /* Nothing pending: arm succeeds. A sender on another iface
             * is armed too, as a process that sleeps must arm every
             * iface it used (a transport may hold a send until then). */
            ASSERT_EQ(UCS_OK, arm_when_idle(*p.receiver, UCT_EVENT_RECV));
            if (arm_sender) {
                ASSERT_EQ(UCS_OK,
                          arm_when_idle(*p.sender, UCT_EVENT_SEND_COMP));
            }

            /* A message arrives: the fd wakes a sleeper (in the
             * receiver's process) */
            ASSERT_EQ(UCS_OK, send_one(p, round));
            EXPECT_TRUE(p.receiver->event_wait((int)(DEFAULT_TIMEOUT * 1000)))
                << "event fd not readable after a message was sent";

            /* The event is pending: arm refuses, so nobody sleeps on it */
            EXPECT_EQ(UCS_ERR_BUSY, p.receiver->event_arm(UCT_EVENT_RECV));

            ASSERT_TRUE(wait_for([&] { return rec.count() == round + 1; },
                                 "the message"));
        }

        /* Drained: arm works again */
        EXPECT_EQ(UCS_OK, arm_when_idle(*p.receiver, UCT_EVENT_RECV));
    }
}

UCT_INSTANTIATE_TEST_SUITE(uct_event);
