#include <common/test.h>

extern "C" {
#include <ucs/async/async.h>
#include <ucs/time/time.h>
#include <ucs/type/spinlock.h>
}

#include <atomic>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <functional>
#include <sched.h>
#include <sys/eventfd.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

/* An eventfd whose handler counts calls and consumes the event. */
struct event_source {
    event_source()
        : fd(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)), calls(0), last_id(-1),
          last_events(0), consume(true)
    {}

    ~event_source()
    {
        close(fd);
    }

    void trigger()
    {
        uint64_t one = 1;
        ssize_t ret  = write(fd, &one, sizeof(one));
        (void)ret;
    }

    static void handler(int id, ucs_event_set_types_t events, void *arg)
    {
        event_source *self = static_cast<event_source *>(arg);
        uint64_t value;

        if (self->consume) {
            ssize_t ret = read(self->fd, &value, sizeof(value));
            (void)ret;
        }
        self->last_id     = id;
        self->last_events = events;
        ++self->calls;
    }

    int fd;
    std::atomic<int> calls;
    std::atomic<int> last_id;
    std::atomic<int> last_events;
    bool consume;
};

struct timer_source {
    timer_source() : calls(0), first_call(0)
    {}

    static void handler(int id, ucs_event_set_types_t events, void *arg)
    {
        timer_source *self = static_cast<timer_source *>(arg);
        if (self->calls++ == 0) {
            self->first_call = ucs_get_time();
        }
    }

    std::atomic<int> calls;
    std::atomic<ucs_time_t> first_call;
};

/* Threads of this process named like the async thread. */
unsigned num_async_threads()
{
    unsigned count = 0;
    DIR *dir       = opendir("/proc/self/task");
    struct dirent *entry;
    char path[300], comm[64];

    while ((entry = readdir(dir)) != NULL) {
        if (entry->d_name[0] == '.') {
            continue;
        }
        snprintf(path, sizeof(path), "/proc/self/task/%s/comm", entry->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL) {
            continue; /* exited meanwhile */
        }
        if ((fgets(comm, sizeof(comm), f) != NULL) &&
            !strncmp(comm, "ucs-async", 9)) {
            ++count;
        }
        fclose(f);
    }
    closedir(dir);
    return count;
}

/* The count once it reaches @a expected, or after a while: a joined thread
 * may stay listed in /proc for a moment. */
unsigned settled_num_async_threads(unsigned expected)
{
    double deadline = ucs_get_accurate_time() + 1.0;
    unsigned count;

    while (((count = num_async_threads()) != expected) &&
           (ucs_get_accurate_time() < deadline)) {
        usleep(1000);
    }
    return count;
}

} // namespace

class ucs_async : public ucs::test,
                  public testing::WithParamInterface<ucs_async_mode_t> {
protected:
    void SetUp() override
    {
        ucs::test::SetUp();
        ASSERT_EQ(UCS_OK, ucs_async_context_create(mode(), &m_async));
    }

    void TearDown() override
    {
        ucs_async_context_destroy(m_async);
        ucs::test::TearDown();
    }

    ucs_async_mode_t mode() const
    {
        return GetParam();
    }

    bool is_thread_mode() const
    {
        return mode() != UCS_ASYNC_MODE_POLL;
    }

    /* Progress @a async (as its owner would) until @a pred holds. */
    static bool progress_until(ucs_async_context_t *async,
                               const std::function<bool()> &pred,
                               double timeout_sec = 2.0)
    {
        double deadline = ucs_get_accurate_time() +
                          timeout_sec * (ucs::running_on_valgrind() ? 10 : 1);

        while (!pred()) {
            if (ucs_get_accurate_time() > deadline) {
                return false;
            }
            ucs_async_check_miss(async);
            usleep(100);
        }
        return true;
    }

    bool progress_until(const std::function<bool()> &pred,
                        double timeout_sec = 2.0)
    {
        return progress_until(m_async, pred, timeout_sec);
    }

    /* Progress for @a sec seconds. */
    void progress_for(double sec)
    {
        double end = ucs_get_accurate_time() + sec;
        while (ucs_get_accurate_time() < end) {
            ucs_async_check_miss(m_async);
            usleep(100);
        }
    }

    ucs_status_t add_fd(event_source &src,
                        ucs_event_set_types_t events = UCS_EVENT_SET_EVREAD)
    {
        return ucs_async_set_event_handler(
            mode(), src.fd, events, event_source::handler, &src, m_async);
    }

    ucs_async_context_t *m_async;
};

TEST_P(ucs_async, fd_handler_fires)
{
    event_source src;

    ASSERT_EQ(UCS_OK, add_fd(src));
    src.trigger();
    EXPECT_TRUE(progress_until([&] { return src.calls > 0; }));
    EXPECT_EQ(src.fd, src.last_id);
    EXPECT_TRUE(src.last_events & UCS_EVENT_SET_EVREAD);

    /* again: level-triggered fds stay armed */
    src.trigger();
    EXPECT_TRUE(progress_until([&] { return src.calls > 1; }));
    EXPECT_EQ(UCS_OK, ucs_async_remove_handler(src.fd, 1));

    /* removed: no more calls */
    int calls = src.calls;
    src.trigger();
    progress_for(0.02);
    EXPECT_EQ(calls, src.calls);
}

TEST_P(ucs_async, timer_fires_at_interval)
{
    const double interval = 0.01;
    timer_source timer;
    int timer_id = -1;

    ucs_time_t start = ucs_get_time();
    ASSERT_EQ(UCS_OK, ucs_async_add_timer(mode(), ucs_time_from_sec(interval),
                                          timer_source::handler, &timer,
                                          m_async, &timer_id));
    EXPECT_GE(timer_id, UCS_ASYNC_TIMER_ID_MIN);

    progress_for(0.3);
    ucs_time_t end = ucs_get_time();
    EXPECT_EQ(UCS_OK, ucs_async_remove_handler(timer_id, 1));

    double expected = ucs_time_to_sec(end - start) / interval;
    int calls       = timer.calls;
    /* it fires repeatedly, but never more often than its interval (a
     * lower bound on the rate would only measure the machine's load) */
    EXPECT_GE(calls, 2);
    EXPECT_LE(calls, (int)(expected * 1.1) + 2);
    if (calls > 0) {
        /* not before the first interval has passed */
        EXPECT_GE(ucs_time_to_sec(timer.first_call - start), interval * 0.9);
    }
}

TEST_P(ucs_async, timers_with_different_intervals)
{
    timer_source fast, slow;
    int fast_id, slow_id;

    ASSERT_EQ(UCS_OK, ucs_async_add_timer(mode(), ucs_time_from_msec(2),
                                          timer_source::handler, &fast, m_async,
                                          &fast_id));
    ASSERT_EQ(UCS_OK, ucs_async_add_timer(mode(), ucs_time_from_msec(40),
                                          timer_source::handler, &slow, m_async,
                                          &slow_id));
    EXPECT_NE(fast_id, slow_id);
    progress_for(0.2);
    EXPECT_EQ(UCS_OK, ucs_async_remove_handler(fast_id, 1));
    EXPECT_EQ(UCS_OK, ucs_async_remove_handler(slow_id, 1));

    EXPECT_GE(slow.calls, 1);
    EXPECT_LE(slow.calls, 6);
    EXPECT_GT(fast.calls, 2 * slow.calls);
}

/* After a sync removal the handler never runs again, even when it fires
 * continuously right up to the removal. */
TEST_P(ucs_async, remove_sync_stops_handler)
{
    unsigned iterations = ucs::test_scale(50);

    for (unsigned i = 0; i < iterations; ++i) {
        timer_source timer;
        int timer_id;

        ASSERT_EQ(UCS_OK, ucs_async_add_timer(mode(), ucs_time_from_usec(20),
                                              timer_source::handler, &timer,
                                              m_async, &timer_id));
        ASSERT_TRUE(progress_until([&] { return timer.calls > 0; }));
        ASSERT_EQ(UCS_OK, ucs_async_remove_handler(timer_id, 1));

        int calls = timer.calls;
        progress_for(0.001);
        ASSERT_EQ(calls, timer.calls) << "iteration " << i;
    }
}

/* remove(sync) waits for a call in progress on another thread. */
TEST_P(ucs_async, remove_sync_waits_for_running_handler)
{
    if (!is_thread_mode()) {
        GTEST_SKIP() << "poll-mode handlers run on the caller's thread";
    }

    struct slow_handler {
        std::atomic<bool> entered{false};
        std::atomic<bool> finished{false};

        static void cb(int id, ucs_event_set_types_t events, void *arg)
        {
            slow_handler *self = static_cast<slow_handler *>(arg);
            self->entered      = true;
            usleep(50000);
            self->finished = true;
        }
    } slow;
    event_source src;

    ASSERT_EQ(UCS_OK,
              ucs_async_set_event_handler(mode(), src.fd, UCS_EVENT_SET_EVREAD,
                                          slow_handler::cb, &slow, m_async));
    src.trigger();
    ASSERT_TRUE(progress_until([&] { return slow.entered.load(); }));
    EXPECT_EQ(UCS_OK, ucs_async_remove_handler(src.fd, 1));
    EXPECT_TRUE(slow.finished);
}

/* While the owner is inside a blocked section the handler waits; the owner
 * runs it from ucs_async_check_miss() afterwards. */
TEST_P(ucs_async, blocked_owner_defers_handler)
{
    if (!is_thread_mode()) {
        GTEST_SKIP() << "poll-mode handlers run from the owner itself; see "
                        "blocked_by_other_thread_defers_handler";
    }

    event_source src;
    ASSERT_EQ(UCS_OK, add_fd(src));

    ucs_async_block(m_async);
    src.trigger();
    double deadline = ucs_get_accurate_time() + 2.0;
    while ((__atomic_load_n(&m_async->num_missed, __ATOMIC_RELAXED) == 0) &&
           (ucs_get_accurate_time() < deadline)) {
        usleep(100);
    }
    EXPECT_EQ(1u, __atomic_load_n(&m_async->num_missed, __ATOMIC_RELAXED));
    usleep(10000);
    EXPECT_EQ(0, src.calls); /* not while blocked */
    ucs_async_unblock(m_async);

    ucs_async_check_miss(m_async);
    EXPECT_EQ(1, src.calls);
    EXPECT_TRUE(src.last_events & UCS_EVENT_SET_EVREAD);

    /* the fd is watched again after the deferred call */
    src.trigger();
    EXPECT_TRUE(progress_until([&] { return src.calls > 1; }));
    EXPECT_EQ(UCS_OK, ucs_async_remove_handler(src.fd, 1));
}

/* Another thread holds the context: nothing runs until it lets go. */
TEST_P(ucs_async, blocked_by_other_thread_defers_handler)
{
    event_source src;
    std::atomic<int> state(0);

    ASSERT_EQ(UCS_OK, add_fd(src));
    std::thread blocker([&] {
        ucs_async_block(m_async);
        state = 1;
        while (state != 2) {
            usleep(100);
        }
        ucs_async_unblock(m_async);
    });

    while (state != 1) {
        usleep(100);
    }
    EXPECT_FALSE(ucs_async_is_blocked(m_async)); /* not by this thread */
    src.trigger();
    progress_for(0.03);
    EXPECT_EQ(0, src.calls);

    state = 2;
    blocker.join();
    EXPECT_TRUE(progress_until([&] { return src.calls == 1; }));
    EXPECT_EQ(UCS_OK, ucs_async_remove_handler(src.fd, 1));
}

/* Stress: handlers firing all the time never overlap a blocked section. */
TEST_P(ucs_async, handler_never_concurrent_with_block)
{
    struct checker {
        std::atomic<int> inside_block{0};
        std::atomic<int> violations{0};
        std::atomic<int> calls{0};

        static void cb(int id, ucs_event_set_types_t events, void *arg)
        {
            checker *self = static_cast<checker *>(arg);
            if (self->inside_block) {
                ++self->violations;
            }
            ++self->calls;
        }
    } check;
    std::atomic<bool> stop(false);
    int timer_id;

    ASSERT_EQ(UCS_OK,
              ucs_async_add_timer(mode(), ucs_time_from_usec(10), checker::cb,
                                  &check, m_async, &timer_id));

    /* In poll mode another thread drives the context concurrently; it may
     * run handlers only when the owner is outside its blocked sections. */
    std::thread poller;
    if (!is_thread_mode()) {
        poller = std::thread([&] {
            while (!stop) {
                ucs_async_poll(m_async);
                if (ucs::running_on_valgrind()) {
                    sched_yield();
                }
            }
        });
    }

    /* run until enough handler calls had a chance to collide */
    unsigned min_iterations = ucs::test_scale(20000);
    int min_calls           = (int)ucs::test_scale(1000);
    double deadline =
        ucs_get_accurate_time() + (ucs::running_on_valgrind() ? 2.0 : 0.5);
    for (unsigned i = 0;
         (i < min_iterations) ||
         ((check.calls < min_calls) && (ucs_get_accurate_time() < deadline));
         ++i) {
        ucs_async_block(m_async);
        check.inside_block = 1;
        for (volatile int spin = 0; spin < 200; ++spin) {
        }
        check.inside_block = 0;
        ucs_async_unblock(m_async);
        ucs_async_check_miss(m_async);
        if (ucs::running_on_valgrind()) {
            sched_yield(); /* valgrind runs one thread at a time */
        }
    }

    stop = true;
    if (poller.joinable()) {
        poller.join();
    }
    EXPECT_EQ(UCS_OK, ucs_async_remove_handler(timer_id, 1));
    EXPECT_EQ(0, check.violations);
    EXPECT_GT(check.calls, 0);
}

TEST_P(ucs_async, remove_from_inside_handler)
{
    struct self_remover {
        std::atomic<int> calls{0};
        std::atomic<ucs_status_t> status{UCS_ERR_NO_MESSAGE};
        int id{-1};

        static void cb(int id, ucs_event_set_types_t events, void *arg)
        {
            self_remover *self = static_cast<self_remover *>(arg);
            if (self->calls++ == 0) {
                self->status = ucs_async_remove_handler(id, 1);
            }
        }

        bool removed() const
        {
            return status != UCS_ERR_NO_MESSAGE;
        }
    } timer, fd_handler;
    event_source src;

    ASSERT_EQ(UCS_OK, ucs_async_add_timer(mode(), ucs_time_from_usec(100),
                                          self_remover::cb, &timer, m_async,
                                          &timer.id));
    EXPECT_TRUE(progress_until([&] { return timer.removed(); }));
    progress_for(0.01);
    EXPECT_EQ(1, timer.calls);
    EXPECT_EQ(UCS_OK, timer.status);
    EXPECT_EQ(UCS_ERR_NO_ELEM, ucs_async_remove_handler(timer.id, 1));

    src.consume = false; /* stays readable */
    ASSERT_EQ(UCS_OK, ucs_async_set_event_handler(
                          mode(), src.fd, UCS_EVENT_SET_EVREAD,
                          self_remover::cb, &fd_handler, m_async));
    src.trigger();
    EXPECT_TRUE(progress_until([&] { return fd_handler.removed(); }));
    progress_for(0.01);
    EXPECT_EQ(1, fd_handler.calls);
    EXPECT_EQ(UCS_OK, fd_handler.status);
}

TEST_P(ucs_async, modify_handler)
{
    event_source src;

    /* watching for writes only: an eventfd written once does not report */
    ASSERT_EQ(UCS_OK, ucs_async_set_event_handler(
                          mode(), src.fd, (ucs_event_set_types_t)0,
                          event_source::handler, &src, m_async));
    src.trigger();
    progress_for(0.02);
    EXPECT_EQ(0, src.calls);

    ASSERT_EQ(UCS_OK, ucs_async_modify_handler(src.fd, UCS_EVENT_SET_EVREAD));
    EXPECT_TRUE(progress_until([&] { return src.calls > 0; }));
    EXPECT_EQ(UCS_OK, ucs_async_remove_handler(src.fd, 1));

    ucs::scoped_log_capture capture;
    EXPECT_EQ(UCS_ERR_NO_ELEM,
              ucs_async_modify_handler(src.fd, UCS_EVENT_SET_EVREAD));
}

TEST_P(ucs_async, edge_triggered_fd)
{
    event_source src;

    src.consume = false;
    ASSERT_EQ(
        UCS_OK,
        add_fd(src, (ucs_event_set_types_t)(UCS_EVENT_SET_EVREAD |
                                            UCS_EVENT_SET_EDGE_TRIGGERED)));
    src.trigger();
    EXPECT_TRUE(progress_until([&] { return src.calls > 0; }));
    progress_for(0.02);
    EXPECT_EQ(1, src.calls); /* still readable, but no new edge */
    src.trigger();
    EXPECT_TRUE(progress_until([&] { return src.calls > 1; }));
    EXPECT_EQ(UCS_OK, ucs_async_remove_handler(src.fd, 1));
}

TEST_P(ucs_async, many_contexts)
{
    unsigned num = ucs::test_scale(32);
    std::vector<ucs_async_context_t *> contexts(num);
    std::vector<timer_source> timers(num);
    std::vector<event_source> sources(num);
    std::vector<int> timer_ids(num);

    for (unsigned i = 0; i < num; ++i) {
        ASSERT_EQ(UCS_OK, ucs_async_context_create(mode(), &contexts[i]));
        ASSERT_EQ(UCS_OK, ucs_async_add_timer(mode(), ucs_time_from_msec(2),
                                              timer_source::handler, &timers[i],
                                              contexts[i], &timer_ids[i]));
        ASSERT_EQ(UCS_OK, ucs_async_set_event_handler(
                              mode(), sources[i].fd, UCS_EVENT_SET_EVREAD,
                              event_source::handler, &sources[i], contexts[i]));
        sources[i].trigger();
    }

    for (unsigned i = 0; i < num; ++i) {
        EXPECT_TRUE(progress_until(
            contexts[i],
            [&] { return (timers[i].calls > 0) && (sources[i].calls > 0); }))
            << "context " << i;
    }

    for (unsigned i = 0; i < num; ++i) {
        EXPECT_EQ(UCS_OK, ucs_async_remove_handler(timer_ids[i], 1));
        EXPECT_EQ(UCS_OK, ucs_async_remove_handler(sources[i].fd, 1));
        ucs_async_context_destroy(contexts[i]);
    }
}

/* Handlers of a context run only from its own owner in poll mode. */
TEST_P(ucs_async, poll_other_context_not_run)
{
    if (is_thread_mode()) {
        GTEST_SKIP() << "thread-mode handlers run on the async thread";
    }

    ucs_async_context_t *other;
    event_source src;

    ASSERT_EQ(UCS_OK, ucs_async_context_create(mode(), &other));
    ASSERT_EQ(UCS_OK,
              ucs_async_set_event_handler(mode(), src.fd, UCS_EVENT_SET_EVREAD,
                                          event_source::handler, &src, other));
    src.trigger();
    for (int i = 0; i < 100; ++i) {
        ucs_async_poll(m_async);
    }
    EXPECT_EQ(0, src.calls);

    ucs_async_check_miss(other); /* queued for it, or still ready */
    ucs_async_check_miss(other);
    EXPECT_EQ(1, src.calls);

    /* poll(NULL) serves every context */
    src.trigger();
    EXPECT_TRUE(progress_until(other, [&] {
        ucs_async_poll(NULL);
        return src.calls == 2;
    }));

    EXPECT_EQ(UCS_OK, ucs_async_remove_handler(src.fd, 1));
    ucs_async_context_destroy(other);
}

TEST_P(ucs_async, unlocked_handler_without_context)
{
    if (!is_thread_mode()) {
        GTEST_SKIP() << "poll mode needs a context";
    }

    event_source src;
    ASSERT_EQ(UCS_OK,
              ucs_async_set_event_handler(mode(), src.fd, UCS_EVENT_SET_EVREAD,
                                          event_source::handler, &src, NULL));
    ucs_async_block(m_async); /* unrelated */
    src.trigger();
    double deadline = ucs_get_accurate_time() + 2.0;
    while ((src.calls == 0) && (ucs_get_accurate_time() < deadline)) {
        usleep(100);
    }
    ucs_async_unblock(m_async);
    EXPECT_EQ(1, src.calls);
    EXPECT_EQ(UCS_OK, ucs_async_remove_handler(src.fd, 1));
}

/* The async thread exists only while thread-mode handlers do. */
TEST_P(ucs_async, thread_started_and_stopped)
{
    if (!is_thread_mode()) {
        GTEST_SKIP() << "poll mode has no thread";
    }

    timer_source timer;
    int timer_id;

    /* a cycle from this thread leaves no async thread behind */
    ASSERT_EQ(UCS_OK, ucs_async_add_timer(mode(), ucs_time_from_sec(10),
                                          timer_source::handler, &timer,
                                          m_async, &timer_id));
    ASSERT_EQ(UCS_OK, ucs_async_remove_handler(timer_id, 1));
    EXPECT_EQ(0u, settled_num_async_threads(0));

    for (unsigned i = 0; i < ucs::test_scale(20); ++i) {
        ASSERT_EQ(UCS_OK, ucs_async_add_timer(mode(), ucs_time_from_sec(10),
                                              timer_source::handler, &timer,
                                              m_async, &timer_id));
        EXPECT_EQ(1u, settled_num_async_threads(1));
        ASSERT_EQ(UCS_OK, ucs_async_remove_handler(timer_id, 1));
        EXPECT_EQ(0u, settled_num_async_threads(0));
    }
}

TEST_P(ucs_async, is_blocked_and_recursion)
{
    EXPECT_FALSE(ucs_async_is_blocked(m_async));
    UCS_ASYNC_BLOCK(m_async);
    EXPECT_TRUE(ucs_async_is_blocked(m_async));
    ucs_async_block(m_async);
    EXPECT_TRUE(ucs_async_try_block(m_async));

    bool other_blocked = true, other_got = true;
    std::thread other([&] {
        other_blocked = ucs_async_is_blocked(m_async);
        other_got     = ucs_async_try_block(m_async);
    });
    other.join();
    EXPECT_FALSE(other_blocked);
    EXPECT_FALSE(other_got);

    ucs_async_unblock(m_async);
    ucs_async_unblock(m_async);
    EXPECT_TRUE(ucs_async_is_blocked(m_async));
    UCS_ASYNC_UNBLOCK(m_async);
    EXPECT_FALSE(ucs_async_is_blocked(m_async));
}

TEST_P(ucs_async, errors)
{
    event_source src;
    int id = -1;

    ASSERT_EQ(UCS_OK, add_fd(src));
    {
        ucs::scoped_log_capture capture;
        EXPECT_EQ(UCS_ERR_ALREADY_EXISTS, add_fd(src));
        EXPECT_TRUE(capture.contains("already"));
    }
    EXPECT_EQ(UCS_OK, ucs_async_remove_handler(src.fd, 1));
    EXPECT_EQ(UCS_ERR_NO_ELEM, ucs_async_remove_handler(src.fd, 1));
    EXPECT_EQ(UCS_ERR_NO_ELEM, ucs_async_remove_handler(12345678, 0));

    ucs::scoped_log_capture capture;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              ucs_async_add_timer(mode(), 0, timer_source::handler, NULL,
                                  m_async, &id));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, ucs_async_set_event_handler(
                                         mode(), -1, UCS_EVENT_SET_EVREAD,
                                         event_source::handler, &src, m_async));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              ucs_async_set_event_handler(mode(), src.fd, UCS_EVENT_SET_EVREAD,
                                          NULL, &src, m_async));
    ucs_async_mode_t other =
        is_thread_mode() ? UCS_ASYNC_MODE_POLL : UCS_ASYNC_MODE_THREAD_MUTEX;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, ucs_async_set_event_handler(
                                         other, src.fd, UCS_EVENT_SET_EVREAD,
                                         event_source::handler, &src, m_async));
    EXPECT_TRUE(capture.contains("differs from the mode"));
    EXPECT_EQ(-1, id);
}

TEST_P(ucs_async, destroy_with_registered_handlers)
{
    ucs_async_context_t *async;
    event_source src;
    timer_source timer;
    int timer_id;

    ASSERT_EQ(UCS_OK, ucs_async_context_create(mode(), &async));
    ASSERT_EQ(UCS_OK,
              ucs_async_set_event_handler(mode(), src.fd, UCS_EVENT_SET_EVREAD,
                                          event_source::handler, &src, async));
    ASSERT_EQ(UCS_OK, ucs_async_add_timer(mode(), ucs_time_from_usec(50),
                                          timer_source::handler, &timer, async,
                                          &timer_id));
    src.trigger();
    EXPECT_TRUE(progress_until(async, [&] { return timer.calls > 0; }));

    {
        ucs::scoped_log_capture capture;
        ucs_async_context_destroy(async);
        EXPECT_TRUE(capture.contains("2 handler(s) still registered"));
    }

    EXPECT_EQ(UCS_ERR_NO_ELEM, ucs_async_remove_handler(timer_id, 1));
    EXPECT_EQ(UCS_ERR_NO_ELEM, ucs_async_remove_handler(src.fd, 1));
}

INSTANTIATE_TEST_SUITE_P(
    , ucs_async,
    testing::Values(UCS_ASYNC_MODE_THREAD_SPINLOCK, UCS_ASYNC_MODE_THREAD_MUTEX,
                    UCS_ASYNC_MODE_POLL),
    [](const testing::TestParamInfo<ucs_async_mode_t> &info) {
        return std::string(ucs_async_mode_names[info.param]);
    });

class ucs_async_setup : public ucs::test {};

TEST_F(ucs_async_setup, signal_mode_is_refused)
{
    ucs_async_context_t *async = NULL;
    ucs_async_context_t embedded;

    ucs::scoped_log_capture capture;
    EXPECT_EQ(UCS_ERR_UNSUPPORTED,
              ucs_async_context_create(UCS_ASYNC_MODE_SIGNAL, &async));
    EXPECT_EQ(nullptr, async);
    EXPECT_EQ(UCS_ERR_UNSUPPORTED,
              ucs_async_context_init(&embedded, UCS_ASYNC_MODE_SIGNAL));
    EXPECT_TRUE(capture.contains("UCS_ASYNC_MODE_THREAD_SPINLOCK"));
}

TEST_F(ucs_async_setup, embedded_init_cleanup)
{
    ucs_async_context_t async;
    event_source src;

    ASSERT_EQ(UCS_OK,
              ucs_async_context_init(&async, UCS_ASYNC_MODE_THREAD_MUTEX));
    ASSERT_EQ(UCS_OK,
              ucs_async_set_event_handler(UCS_ASYNC_MODE_THREAD_MUTEX, src.fd,
                                          UCS_EVENT_SET_EVREAD,
                                          event_source::handler, &src, &async));
    src.trigger();
    double deadline = ucs_get_accurate_time() + 2.0;
    while ((src.calls == 0) && (ucs_get_accurate_time() < deadline)) {
        usleep(100);
    }
    EXPECT_EQ(1, src.calls);
    EXPECT_EQ(UCS_OK, ucs_async_remove_handler(src.fd, 1));
    ucs_async_context_cleanup(&async);
}

TEST_F(ucs_async_setup, mode_names)
{
    EXPECT_STREQ("signal", ucs_async_mode_names[UCS_ASYNC_MODE_SIGNAL]);
    EXPECT_STREQ("thread_spinlock",
                 ucs_async_mode_names[UCS_ASYNC_MODE_THREAD_SPINLOCK]);
    EXPECT_STREQ("thread_mutex",
                 ucs_async_mode_names[UCS_ASYNC_MODE_THREAD_MUTEX]);
    EXPECT_STREQ("poll", ucs_async_mode_names[UCS_ASYNC_MODE_POLL]);
    EXPECT_EQ(UCS_ASYNC_MODE_THREAD_SPINLOCK, UCS_ASYNC_MODE_THREAD);
}

class ucs_spinlocks : public ucs::test {};

TEST_F(ucs_spinlocks, recursive)
{
    ucs_recursive_spinlock_t lock;

    ASSERT_EQ(UCS_OK, ucs_recursive_spinlock_init(&lock, 0));
    EXPECT_FALSE(ucs_recursive_spin_is_owner(&lock, pthread_self()));
    ucs_recursive_spin_lock(&lock);
    ucs_recursive_spin_lock(&lock);
    EXPECT_TRUE(ucs_recursive_spin_trylock(&lock));
    EXPECT_TRUE(ucs_recursive_spin_is_owner(&lock, pthread_self()));

    bool other_got = true;
    std::thread other([&] { other_got = ucs_recursive_spin_trylock(&lock); });
    other.join();
    EXPECT_FALSE(other_got);

    {
        ucs::scoped_log_capture capture;
        EXPECT_EQ(UCS_ERR_BUSY, ucs_recursive_spinlock_destroy(&lock));
    }

    ucs_recursive_spin_unlock(&lock);
    ucs_recursive_spin_unlock(&lock);
    ucs_recursive_spin_unlock(&lock);
    EXPECT_FALSE(ucs_recursive_spin_is_owner(&lock, pthread_self()));
    EXPECT_EQ(UCS_OK, ucs_recursive_spinlock_destroy(&lock));
}

TEST_F(ucs_spinlocks, mutual_exclusion)
{
    ucs_spinlock_t lock;
    long counter        = 0;
    unsigned per_thread = ucs::test_scale(100000);

    ASSERT_EQ(UCS_OK, ucs_spinlock_init(&lock, 0));
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&] {
            for (unsigned i = 0; i < per_thread; ++i) {
                ucs_spin_lock(&lock);
                ++counter;
                ucs_spin_unlock(&lock);
            }
        });
    }
    for (auto &t : threads) {
        t.join();
    }
    EXPECT_EQ(4L * per_thread, counter);
    ucs_spinlock_destroy(&lock);
}
