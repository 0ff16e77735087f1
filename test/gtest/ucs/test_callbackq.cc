#include <common/test.h>

#include <ucs/datastruct/callbackq.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

/* Inside a namespace so that the fixtures may share the names of the C
 * structures they test (struct ucs_mpool, ...). */
namespace {

class ucs_callbackq : public ucs::test {
protected:
    /* One registered callback and what happened to it. */
    struct entry {
        ucs_callbackq *owner;
        int id;
        unsigned count;   /* times called */
        unsigned result;  /* value returned */
        int remove_id;    /* removed (by id) when called, if set */
        bool remove_safe; /* use remove_safe for that */
        int add_flags;    /* add a new callback when called, if set */
        std::atomic<unsigned> atomic_count;
    };

    virtual void SetUp()
    {
        ucs::test::SetUp();
        ASSERT_EQ(UCS_OK, ucs_callbackq_init(&m_cbq));
        for (size_t i = 0; i < NUM_ENTRIES; ++i) {
            reset(&m_entries[i]);
        }
    }

    virtual void TearDown()
    {
        ucs_callbackq_cleanup(&m_cbq);
        ucs::test::TearDown();
    }

    void reset(entry *e)
    {
        e->owner       = this;
        e->id          = UCS_CALLBACKQ_ID_NULL;
        e->count       = 0;
        e->result      = 1;
        e->remove_id   = UCS_CALLBACKQ_ID_NULL;
        e->remove_safe = false;
        e->add_flags   = -1;
        e->atomic_count.store(0);
    }

    static unsigned callback(void *arg)
    {
        entry *e = static_cast<entry *>(arg);

        ++e->count;
        ++e->atomic_count;
        if (e->remove_id != UCS_CALLBACKQ_ID_NULL) {
            int id       = e->remove_id;
            e->remove_id = UCS_CALLBACKQ_ID_NULL;
            if (e->remove_safe) {
                EXPECT_EQ(UCS_OK,
                          ucs_callbackq_remove_safe(&e->owner->m_cbq, id));
            } else {
                EXPECT_EQ(UCS_OK, ucs_callbackq_remove(&e->owner->m_cbq, id));
            }
        }
        if (e->add_flags >= 0) {
            entry *added   = e->owner->last_entry();
            unsigned flags = (unsigned)e->add_flags;
            e->add_flags   = -1;
            if (e->remove_safe) {
                added->id = ucs_callbackq_add_safe(&e->owner->m_cbq, callback,
                                                   added, flags);
            } else {
                added->id =
                    ucs_callbackq_add(&e->owner->m_cbq, callback, added, flags);
            }
            EXPECT_NE(UCS_CALLBACKQ_ID_NULL, added->id);
        }
        return e->result;
    }

    int add(entry *e, unsigned flags)
    {
        e->id = ucs_callbackq_add(&m_cbq, callback, e, flags);
        EXPECT_NE(UCS_CALLBACKQ_ID_NULL, e->id);
        return e->id;
    }

    unsigned dispatch(unsigned times = 1)
    {
        unsigned total = 0;
        for (unsigned i = 0; i < times; ++i) {
            total += ucs_callbackq_dispatch(&m_cbq);
        }
        return total;
    }

    void remove_all_added()
    {
        for (size_t i = 0; i < NUM_ENTRIES; ++i) {
            if (m_entries[i].id != UCS_CALLBACKQ_ID_NULL) {
                ucs_callbackq_remove(&m_cbq, m_entries[i].id);
                m_entries[i].id = UCS_CALLBACKQ_ID_NULL;
            }
        }
    }

    entry *last_entry()
    {
        return &m_entries[NUM_ENTRIES - 1];
    }

    static const size_t NUM_ENTRIES = 64;

    ucs_callbackq_t m_cbq;
    entry m_entries[NUM_ENTRIES];
};

TEST_F(ucs_callbackq, empty_dispatch)
{
    EXPECT_EQ(0u, dispatch());
    EXPECT_EQ(nullptr, m_cbq.fast_elems[0].cb);
}

TEST_F(ucs_callbackq, results_are_summed)
{
    m_entries[0].result = 3;
    m_entries[1].result = 5;
    m_entries[2].result = 0;
    add(&m_entries[0], UCS_CALLBACKQ_FLAG_FAST);
    add(&m_entries[1], 0);
    add(&m_entries[2], UCS_CALLBACKQ_FLAG_FAST);

    EXPECT_EQ(8u, dispatch());
    EXPECT_EQ(8u, dispatch());
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(2u, m_entries[i].count);
    }
    remove_all_added();
}

TEST_F(ucs_callbackq, fast_callbacks_need_no_proxy)
{
    add(&m_entries[0], UCS_CALLBACKQ_FLAG_FAST);
    add(&m_entries[1], UCS_CALLBACKQ_FLAG_FAST);
    EXPECT_EQ(&m_entries[0], m_cbq.fast_elems[0].arg);
    EXPECT_EQ(&m_entries[1], m_cbq.fast_elems[1].arg);
    EXPECT_EQ(nullptr, m_cbq.fast_elems[2].cb);

    /* a slow callback brings the proxy in; removing it takes it out */
    add(&m_entries[2], 0);
    EXPECT_NE(nullptr, m_cbq.fast_elems[2].cb);
    EXPECT_EQ(UCS_OK, ucs_callbackq_remove(&m_cbq, m_entries[2].id));
    m_entries[2].id = UCS_CALLBACKQ_ID_NULL;
    EXPECT_EQ(nullptr, m_cbq.fast_elems[2].cb);
    remove_all_added();
}

TEST_F(ucs_callbackq, more_fast_than_fit)
{
    const unsigned count = UCS_CALLBACKQ_FAST_COUNT * 3;
    std::set<int> ids;

    for (unsigned i = 0; i < count; ++i) {
        ids.insert(add(&m_entries[i], UCS_CALLBACKQ_FLAG_FAST));
    }
    EXPECT_EQ(count, ids.size());
    EXPECT_EQ(count, dispatch());
    for (unsigned i = 0; i < count; ++i) {
        EXPECT_EQ(1u, m_entries[i].count) << i;
    }

    /* remove every other, in both arrays */
    for (unsigned i = 0; i < count; i += 2) {
        EXPECT_EQ(UCS_OK, ucs_callbackq_remove(&m_cbq, m_entries[i].id));
        m_entries[i].id = UCS_CALLBACKQ_ID_NULL;
    }
    EXPECT_EQ(count / 2, dispatch());
    for (unsigned i = 0; i < count; ++i) {
        EXPECT_EQ((i % 2) ? 2u : 1u, m_entries[i].count) << i;
    }
    remove_all_added();
}

TEST_F(ucs_callbackq, remove_bad_ids)
{
    int id = add(&m_entries[0], 0);

    EXPECT_EQ(UCS_ERR_NO_ELEM, ucs_callbackq_remove(&m_cbq, -1));
    EXPECT_EQ(UCS_ERR_NO_ELEM, ucs_callbackq_remove(&m_cbq, 1000));
    EXPECT_EQ(UCS_ERR_NO_ELEM, ucs_callbackq_remove_safe(&m_cbq, id + 1));
    EXPECT_EQ(UCS_OK, ucs_callbackq_remove(&m_cbq, id));
    EXPECT_EQ(UCS_ERR_NO_ELEM, ucs_callbackq_remove(&m_cbq, id));
    EXPECT_EQ(UCS_ERR_NO_ELEM, ucs_callbackq_remove_safe(&m_cbq, id));
    EXPECT_EQ(0u, dispatch());
    EXPECT_EQ(0u, m_entries[0].count);
}

TEST_F(ucs_callbackq, null_callback_is_rejected)
{
    ucs::scoped_log_capture capture;

    EXPECT_EQ(UCS_CALLBACKQ_ID_NULL, ucs_callbackq_add(&m_cbq, NULL, NULL, 0));
    EXPECT_EQ(UCS_CALLBACKQ_ID_NULL,
              ucs_callbackq_add_safe(&m_cbq, NULL, NULL, 0));
    EXPECT_TRUE(capture.contains("NULL callback"));
}

TEST_F(ucs_callbackq, oneshot_runs_once)
{
    add(&m_entries[0], UCS_CALLBACKQ_FLAG_ONESHOT);
    add(&m_entries[1], UCS_CALLBACKQ_FLAG_ONESHOT | UCS_CALLBACKQ_FLAG_FAST);
    add(&m_entries[2], UCS_CALLBACKQ_FLAG_FAST);

    EXPECT_EQ(3u, dispatch());
    EXPECT_EQ(1u, dispatch(5) / 5);
    EXPECT_EQ(1u, m_entries[0].count);
    EXPECT_EQ(1u, m_entries[1].count);
    EXPECT_EQ(6u, m_entries[2].count);

    /* their ids are gone */
    EXPECT_EQ(UCS_ERR_NO_ELEM, ucs_callbackq_remove(&m_cbq, m_entries[0].id));
    m_entries[0].id = m_entries[1].id = UCS_CALLBACKQ_ID_NULL;
    remove_all_added();
    /* and the proxy is gone too */
    EXPECT_EQ(nullptr, m_cbq.fast_elems[0].cb);
}

TEST_F(ucs_callbackq, remove_self_from_callback)
{
    for (unsigned flags : {0u, (unsigned)UCS_CALLBACKQ_FLAG_FAST}) {
        for (bool safe : {false, true}) {
            reset(&m_entries[0]);
            reset(&m_entries[1]);
            reset(&m_entries[2]);
            add(&m_entries[0], flags);
            add(&m_entries[1], flags);
            add(&m_entries[2], flags);
            m_entries[1].remove_id   = m_entries[1].id;
            m_entries[1].remove_safe = safe;

            dispatch(4);
            EXPECT_EQ(1u, m_entries[1].count) << flags << safe;
            /* the neighbours may miss one pass at most */
            EXPECT_GE(m_entries[0].count, 3u);
            EXPECT_GE(m_entries[2].count, 3u);
            m_entries[1].id = UCS_CALLBACKQ_ID_NULL;
            remove_all_added();
            EXPECT_EQ(0u, dispatch());
        }
    }
}

TEST_F(ucs_callbackq, remove_other_from_callback)
{
    for (unsigned flags : {0u, (unsigned)UCS_CALLBACKQ_FLAG_FAST}) {
        for (bool safe : {false, true}) {
            for (int e = 0; e < 4; ++e) {
                reset(&m_entries[e]);
                add(&m_entries[e], flags);
            }
            /* 2 removes the one before it and the one after it */
            m_entries[2].remove_id   = m_entries[1].id;
            m_entries[2].remove_safe = safe;
            m_entries[0].remove_id   = m_entries[3].id;
            m_entries[0].remove_safe = safe;

            dispatch(3);
            EXPECT_EQ(1u, m_entries[1].count) << flags << safe;
            EXPECT_EQ(0u, m_entries[3].count) << flags << safe;
            EXPECT_EQ(3u, m_entries[0].count) << flags << safe;
            EXPECT_GE(m_entries[2].count, 2u) << flags << safe;
            m_entries[1].id = m_entries[3].id = UCS_CALLBACKQ_ID_NULL;
            remove_all_added();
        }
    }
}

TEST_F(ucs_callbackq, add_from_callback)
{
    for (unsigned flags : {0u, (unsigned)UCS_CALLBACKQ_FLAG_FAST}) {
        for (bool safe : {false, true}) {
            entry *added = last_entry();
            reset(&m_entries[0]);
            reset(added);
            add(&m_entries[0], flags);
            m_entries[0].add_flags   = flags;
            m_entries[0].remove_safe = safe;

            dispatch();
            EXPECT_NE(UCS_CALLBACKQ_ID_NULL, added->id);
            EXPECT_LE(added->count, 1u);
            unsigned before = added->count;
            dispatch(3);
            EXPECT_EQ(before + 3, added->count) << flags << safe;
            EXPECT_EQ(4u, m_entries[0].count);
            remove_all_added();
        }
    }
}

TEST_F(ucs_callbackq, fast_added_from_slow_callback)
{
    for (bool safe : {false, true}) {
        entry *added = last_entry();
        reset(&m_entries[0]);
        reset(added);
        add(&m_entries[0], 0);
        m_entries[0].add_flags   = UCS_CALLBACKQ_FLAG_FAST;
        m_entries[0].remove_safe = safe;

        /* the slow callback still runs exactly once per pass */
        for (unsigned pass = 1; pass <= 4; ++pass) {
            dispatch();
            EXPECT_EQ(pass, m_entries[0].count) << safe;
        }
        EXPECT_GE(added->count, 2u) << safe;
        EXPECT_EQ(added, m_cbq.fast_elems[0].arg) << safe;
        remove_all_added();
        EXPECT_EQ(nullptr, m_cbq.fast_elems[0].cb);
    }
}

TEST_F(ucs_callbackq, fast_callback_after_proxy_is_not_skipped)
{
    /* the proxy comes first, then a fast callback; when the proxy runs out
     * of work and leaves, the fast callback must still run in that pass */
    add(&m_entries[0], UCS_CALLBACKQ_FLAG_ONESHOT);
    add(&m_entries[1], UCS_CALLBACKQ_FLAG_FAST);
    EXPECT_EQ(2u, dispatch());
    EXPECT_EQ(1u, m_entries[1].count);
    EXPECT_EQ(nullptr, m_cbq.fast_elems[1].cb);
    remove_all_added();
}

TEST_F(ucs_callbackq, oneshot_added_from_oneshot)
{
    entry *added = last_entry();

    add(&m_entries[0], UCS_CALLBACKQ_FLAG_ONESHOT);
    m_entries[0].add_flags = UCS_CALLBACKQ_FLAG_ONESHOT;
    dispatch();
    EXPECT_EQ(1u, m_entries[0].count);
    /* added during the walk: waits for the next pass */
    EXPECT_EQ(0u, added->count);
    dispatch(3);
    EXPECT_EQ(1u, added->count);
    EXPECT_EQ(1u, m_entries[0].count);
    EXPECT_EQ(nullptr, m_cbq.fast_elems[0].cb);
}

TEST_F(ucs_callbackq, remove_safe_before_dispatch)
{
    int id1 = ucs_callbackq_add_safe(&m_cbq, callback, &m_entries[0],
                                     UCS_CALLBACKQ_FLAG_FAST);
    int id2 = add(&m_entries[1], UCS_CALLBACKQ_FLAG_FAST);
    ASSERT_NE(UCS_CALLBACKQ_ID_NULL, id1);
    EXPECT_NE(id1, id2);

    /* still pending */
    EXPECT_EQ(UCS_OK, ucs_callbackq_remove_safe(&m_cbq, id1));
    /* active */
    EXPECT_EQ(UCS_OK, ucs_callbackq_remove_safe(&m_cbq, id2));
    EXPECT_EQ(UCS_ERR_NO_ELEM, ucs_callbackq_remove_safe(&m_cbq, id2));
    m_entries[1].id = UCS_CALLBACKQ_ID_NULL;

    dispatch(3);
    EXPECT_EQ(0u, m_entries[0].count);
    EXPECT_EQ(0u, m_entries[1].count);
    EXPECT_EQ(nullptr, m_cbq.fast_elems[0].cb);
}

int match_arg(const ucs_callbackq_elem_t *elem, void *arg)
{
    return elem->arg == arg;
}

int match_all(const ucs_callbackq_elem_t *elem, void *arg)
{
    return 1;
}

TEST_F(ucs_callbackq, remove_if)
{
    for (int i = 0; i < 12; ++i) {
        add(&m_entries[i], (i % 2) ? UCS_CALLBACKQ_FLAG_FAST : 0);
    }
    /* one more for entry 3, still pending */
    int pending_id = ucs_callbackq_add_safe(&m_cbq, callback, &m_entries[3], 0);
    ASSERT_NE(UCS_CALLBACKQ_ID_NULL, pending_id);

    EXPECT_EQ(2u, ucs_callbackq_remove_if(&m_cbq, match_arg, &m_entries[3]));
    EXPECT_EQ(1u, ucs_callbackq_remove_if(&m_cbq, match_arg, &m_entries[4]));
    EXPECT_EQ(0u, ucs_callbackq_remove_if(&m_cbq, match_arg, &m_entries[40]));
    m_entries[3].id = m_entries[4].id = UCS_CALLBACKQ_ID_NULL;

    dispatch();
    for (int i = 0; i < 12; ++i) {
        EXPECT_EQ(((i == 3) || (i == 4)) ? 0u : 1u, m_entries[i].count) << i;
    }

    EXPECT_EQ(10u, ucs_callbackq_remove_if(&m_cbq, match_all, NULL));
    for (int i = 0; i < 12; ++i) {
        m_entries[i].id = UCS_CALLBACKQ_ID_NULL;
    }
    EXPECT_EQ(0u, dispatch());
    EXPECT_EQ(nullptr, m_cbq.fast_elems[0].cb);
}

TEST_F(ucs_callbackq, ids_are_reused_but_unique)
{
    std::set<int> live;

    for (int round = 0; round < 3; ++round) {
        for (int i = 0; i < 20; ++i) {
            int id = add(&m_entries[i], (i % 3) ? 0 : UCS_CALLBACKQ_FLAG_FAST);
            EXPECT_TRUE(live.insert(id).second);
        }
        EXPECT_EQ(20u, dispatch());
        for (int i = 0; i < 20; ++i) {
            EXPECT_EQ(UCS_OK, ucs_callbackq_remove(&m_cbq, m_entries[i].id));
            live.erase(m_entries[i].id);
            m_entries[i].id = UCS_CALLBACKQ_ID_NULL;
        }
    }
    for (int i = 0; i < 20; ++i) {
        EXPECT_EQ(3u, m_entries[i].count);
    }
}

TEST_F(ucs_callbackq, cleanup_warns_about_leftovers)
{
    ucs_callbackq_t cbq;

    ASSERT_EQ(UCS_OK, ucs_callbackq_init(&cbq));
    ucs_callbackq_add(&cbq, callback, &m_entries[0], UCS_CALLBACKQ_FLAG_FAST);
    ucs_callbackq_add(&cbq, callback, &m_entries[1], 0);
    ucs_callbackq_add_safe(&cbq, callback, &m_entries[2], 0);
    int id = ucs_callbackq_add(&cbq, callback, &m_entries[3], 0);
    ucs_callbackq_remove_safe(&cbq, id);
    {
        ucs::scoped_log_capture capture;
        ucs_callbackq_cleanup(&cbq);
        EXPECT_TRUE(capture.contains("3 callback(s) still registered"));
    }
}

/* Another thread adds and removes callbacks while this one dispatches. */
TEST_F(ucs_callbackq, add_remove_safe_from_other_thread)
{
    const unsigned rounds = ucs::test_scale(1000);
    std::atomic<bool> done(false);
    std::atomic<unsigned> oneshots_added(0);
    entry *persistent = &m_entries[0];
    entry *oneshot    = &m_entries[1];
    entry *transient  = &m_entries[2];

    add(&m_entries[3], UCS_CALLBACKQ_FLAG_FAST);

    std::thread thread([&]() {
        for (unsigned i = 0; i < rounds; ++i) {
            unsigned flags = (i % 2) ? UCS_CALLBACKQ_FLAG_FAST : 0;
            int id = ucs_callbackq_add_safe(&m_cbq, callback, transient, flags);
            EXPECT_NE(UCS_CALLBACKQ_ID_NULL, id);
            if (i % 3) {
                /* let the owner insert it first, sometimes */
                std::this_thread::yield();
            }
            EXPECT_EQ(UCS_OK, ucs_callbackq_remove_safe(&m_cbq, id));

            if (ucs_callbackq_add_safe(&m_cbq, callback, oneshot,
                                       UCS_CALLBACKQ_FLAG_ONESHOT) !=
                UCS_CALLBACKQ_ID_NULL) {
                ++oneshots_added;
            }
        }
        persistent->id = ucs_callbackq_add_safe(&m_cbq, callback, persistent,
                                                UCS_CALLBACKQ_FLAG_FAST);
        done           = true;
    });

    while (!done) {
        dispatch();
        std::this_thread::yield(); /* let the other thread run on a busy box */
    }
    thread.join();

    /* drain what the thread left behind */
    dispatch(3);
    EXPECT_EQ(rounds, oneshots_added.load());
    EXPECT_EQ(rounds, oneshot->atomic_count.load());
    EXPECT_GE(persistent->atomic_count.load(), 1u);

    /* the transient callbacks are all gone */
    unsigned transient_calls = transient->atomic_count.load();
    dispatch(3);
    EXPECT_EQ(transient_calls, transient->atomic_count.load());

    /* the persistent one keeps running until removed from the thread */
    unsigned before = persistent->atomic_count.load();
    dispatch(2);
    EXPECT_EQ(before + 2, persistent->atomic_count.load());
    std::thread remover([&]() {
        EXPECT_EQ(UCS_OK, ucs_callbackq_remove_safe(&m_cbq, persistent->id));
    });
    remover.join();
    persistent->id = UCS_CALLBACKQ_ID_NULL;
    before         = persistent->atomic_count.load();
    dispatch(3);
    EXPECT_EQ(before, persistent->atomic_count.load());
    remove_all_added();
    EXPECT_EQ(nullptr, m_cbq.fast_elems[0].cb);
}

/* Several threads hammer add_safe/remove_safe on one queue at once. */
TEST_F(ucs_callbackq, concurrent_safe_calls)
{
    const unsigned rounds = ucs::test_scale(1000);
    const int num_threads = 3;
    std::atomic<int> running(num_threads);
    std::vector<std::thread> threads;

    for (int t = 0; t < num_threads; ++t) {
        threads.push_back(std::thread([&, t]() {
            entry *e = &m_entries[10 + t];
            for (unsigned i = 0; i < rounds; ++i) {
                int id = ucs_callbackq_add_safe(
                    &m_cbq, callback, e, (i % 2) ? UCS_CALLBACKQ_FLAG_FAST : 0);
                EXPECT_NE(UCS_CALLBACKQ_ID_NULL, id);
                EXPECT_EQ(UCS_OK, ucs_callbackq_remove_safe(&m_cbq, id));
            }
            --running;
        }));
    }

    while (running > 0) {
        dispatch();
        std::this_thread::yield();
    }
    for (size_t t = 0; t < threads.size(); ++t) {
        threads[t].join();
    }

    dispatch(2);
    unsigned calls = 0;
    for (int t = 0; t < num_threads; ++t) {
        calls += m_entries[10 + t].atomic_count.load();
    }
    dispatch(2);
    unsigned calls_after = 0;
    for (int t = 0; t < num_threads; ++t) {
        calls_after += m_entries[10 + t].atomic_count.load();
    }
    EXPECT_EQ(calls, calls_after);
    EXPECT_EQ(nullptr, m_cbq.fast_elems[0].cb);
}

} // namespace
