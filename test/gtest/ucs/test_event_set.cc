#include <common/test.h>

extern "C" {
#include <ucs/sys/event_set.h>
#include <ucs/time/time.h>
}

#include <fcntl.h>
#include <map>
#include <poll.h>
#include <unistd.h>

class ucs_event_set : public ucs::test {
protected:
    void SetUp() override
    {
        ucs::test::SetUp();
        ASSERT_EQ(UCS_OK, ucs_event_set_create(&m_set));
        for (int i = 0; i < NUM_PIPES; ++i) {
            ASSERT_EQ(0, pipe2(m_pipes[i], O_NONBLOCK | O_CLOEXEC));
        }
    }

    void TearDown() override
    {
        for (int i = 0; i < NUM_PIPES; ++i) {
            if (m_pipes[i][0] >= 0) {
                close(m_pipes[i][0]);
            }
            if (m_pipes[i][1] >= 0) {
                close(m_pipes[i][1]);
            }
        }
        ucs_event_set_cleanup(m_set);
        ucs::test::TearDown();
    }

    static void record(void *callback_data, ucs_event_set_types_t events,
                       void *arg)
    {
        ucs_event_set *self = static_cast<ucs_event_set *>(arg);
        self->m_events[callback_data] |= events;
        ++self->m_calls;
    }

    unsigned wait(int timeout_ms, unsigned max = 16)
    {
        unsigned num = max;
        m_events.clear();
        m_calls = 0;
        EXPECT_EQ(UCS_OK,
                  ucs_event_set_wait(m_set, &num, timeout_ms, record, this));
        EXPECT_EQ(num, m_calls);
        return num;
    }

    void write_byte(int i)
    {
        char c = 'x';
        ASSERT_EQ(1, write(m_pipes[i][1], &c, 1));
    }

    static const int NUM_PIPES = 3;
    ucs_sys_event_set_t *m_set;
    int m_pipes[NUM_PIPES][2];
    std::map<void *, int> m_events;
    unsigned m_calls;
};

TEST_F(ucs_event_set, read_event_carries_pointer)
{
    int tag;

    ASSERT_EQ(UCS_OK, ucs_event_set_add(m_set, m_pipes[0][0],
                                        UCS_EVENT_SET_EVREAD, &tag));
    EXPECT_EQ(0u, wait(0));

    write_byte(0);
    ASSERT_EQ(1u, wait(1000));
    EXPECT_EQ(UCS_EVENT_SET_EVREAD, m_events[&tag]);

    /* level-triggered: reported until the data is read */
    EXPECT_EQ(1u, wait(0));
    char c;
    ASSERT_EQ(1, read(m_pipes[0][0], &c, 1));
    EXPECT_EQ(0u, wait(0));
}

TEST_F(ucs_event_set, write_event_and_mod)
{
    int tag1, tag2;

    ASSERT_EQ(UCS_OK, ucs_event_set_add(m_set, m_pipes[0][1],
                                        UCS_EVENT_SET_EVWRITE, &tag1));
    ASSERT_EQ(1u, wait(0));
    EXPECT_EQ(UCS_EVENT_SET_EVWRITE, m_events[&tag1]);

    /* now only reads, with another pointer: a pipe's write end never reads */
    ASSERT_EQ(UCS_OK, ucs_event_set_mod(m_set, m_pipes[0][1],
                                        UCS_EVENT_SET_EVREAD, &tag2));
    EXPECT_EQ(0u, wait(0));

    ASSERT_EQ(UCS_OK, ucs_event_set_mod(m_set, m_pipes[0][1],
                                        UCS_EVENT_SET_EVWRITE, &tag2));
    ASSERT_EQ(1u, wait(0));
    EXPECT_EQ(1u, m_events.count(&tag2));

    ASSERT_EQ(UCS_OK, ucs_event_set_del(m_set, m_pipes[0][1]));
    EXPECT_EQ(0u, wait(0));
}

TEST_F(ucs_event_set, edge_triggered)
{
    ASSERT_EQ(UCS_OK, ucs_event_set_add(
                          m_set, m_pipes[0][0],
                          (ucs_event_set_types_t)(UCS_EVENT_SET_EVREAD |
                                                  UCS_EVENT_SET_EDGE_TRIGGERED),
                          NULL));
    write_byte(0);
    EXPECT_EQ(1u, wait(1000));
    EXPECT_EQ(0u, wait(0)); /* no new data, no new event */
    write_byte(0);
    EXPECT_EQ(1u, wait(1000));
}

TEST_F(ucs_event_set, hang_up_is_an_error_event)
{
    ASSERT_EQ(UCS_OK, ucs_event_set_add(m_set, m_pipes[0][0],
                                        UCS_EVENT_SET_EVREAD, NULL));
    close(m_pipes[0][1]);
    m_pipes[0][1] = -1;

    ASSERT_EQ(1u, wait(1000));
    EXPECT_TRUE(m_events[NULL] & UCS_EVENT_SET_EVERR);
}

TEST_F(ucs_event_set, max_events)
{
    int tags[NUM_PIPES];

    for (int i = 0; i < NUM_PIPES; ++i) {
        ASSERT_EQ(UCS_OK, ucs_event_set_add(m_set, m_pipes[i][0],
                                            UCS_EVENT_SET_EVREAD, &tags[i]));
        write_byte(i);
    }

    EXPECT_EQ(2u, wait(0, 2));
    EXPECT_EQ(0u, wait(0, 0));
    EXPECT_EQ((unsigned)NUM_PIPES, wait(0));
}

TEST_F(ucs_event_set, timeout)
{
    ASSERT_EQ(UCS_OK, ucs_event_set_add(m_set, m_pipes[0][0],
                                        UCS_EVENT_SET_EVREAD, NULL));

    double start = ucs_get_accurate_time();
    EXPECT_EQ(0u, wait(50));
    EXPECT_GE(ucs_get_accurate_time() - start, 0.045);
}

TEST_F(ucs_event_set, set_fd_is_pollable)
{
    struct pollfd pfd;

    ASSERT_EQ(UCS_OK, ucs_event_set_add(m_set, m_pipes[0][0],
                                        UCS_EVENT_SET_EVREAD, NULL));
    pfd.fd     = ucs_event_set_fd(m_set);
    pfd.events = POLLIN;
    EXPECT_GE(pfd.fd, 0);
    EXPECT_TRUE(fcntl(pfd.fd, F_GETFD) & FD_CLOEXEC);
    EXPECT_EQ(0, poll(&pfd, 1, 0));

    write_byte(0);
    EXPECT_EQ(1, poll(&pfd, 1, 1000));
}

TEST_F(ucs_event_set, errors)
{
    ASSERT_EQ(UCS_OK, ucs_event_set_add(m_set, m_pipes[0][0],
                                        UCS_EVENT_SET_EVREAD, NULL));
    EXPECT_EQ(
        UCS_ERR_ALREADY_EXISTS,
        ucs_event_set_add(m_set, m_pipes[0][0], UCS_EVENT_SET_EVREAD, NULL));

    ucs::scoped_log_capture capture;
    EXPECT_EQ(UCS_ERR_IO_ERROR, ucs_event_set_del(m_set, m_pipes[1][0]));
    EXPECT_EQ(UCS_ERR_IO_ERROR, ucs_event_set_mod(m_set, m_pipes[1][0],
                                                  UCS_EVENT_SET_EVREAD, NULL));
    EXPECT_EQ(UCS_ERR_IO_ERROR,
              ucs_event_set_add(m_set, -1, UCS_EVENT_SET_EVREAD, NULL));
    EXPECT_TRUE(capture.contains("epoll_ctl"));
}
