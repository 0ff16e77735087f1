#include <common/test.h>

#include <ucs/datastruct/arbiter.h>

#include <algorithm>
#include <functional>
#include <utility>
#include <vector>

/* Inside a namespace so that the fixtures may share the names of the C
 * structures they test (struct ucs_arbiter, ...). */
namespace {

struct req {
    ucs_arbiter_elem_t elem;
    int group;
    int seq;
    bool heap; /* allocated with new, freed on removal */
};

typedef std::pair<int, int> event_t; /* (group, seq) */

class ucs_arbiter : public ucs::test {
protected:
    typedef std::function<ucs_arbiter_cb_result_t(req *)> action_t;

    static const int NUM_GROUPS = 8;

    virtual void SetUp()
    {
        ucs::test::SetUp();
        ucs_arbiter_init(&m_arbiter);
        for (int g = 0; g < NUM_GROUPS; ++g) {
            ucs_arbiter_group_init(&m_groups[g]);
        }
    }

    virtual void TearDown()
    {
        for (int g = 0; g < NUM_GROUPS; ++g) {
            ucs_arbiter_group_purge(&m_arbiter, &m_groups[g], purge_cb, this);
            ucs_arbiter_group_cleanup(&m_groups[g]);
        }
        ucs_arbiter_cleanup(&m_arbiter);
        for (size_t i = 0; i < m_reqs.size(); ++i) {
            delete m_reqs[i];
        }
        ucs::test::TearDown();
    }

    /* A request owned by the fixture (released at teardown). */
    req *make_req(int group, int seq)
    {
        req *r   = new req();
        r->group = group;
        r->seq   = seq;
        r->heap  = false;
        ucs_arbiter_elem_init(&r->elem);
        m_reqs.push_back(r);
        return r;
    }

    /* A request freed by whoever removes it from the arbiter. */
    static req *make_heap_req(int group, int seq)
    {
        req *r   = new req();
        r->group = group;
        r->seq   = seq;
        r->heap  = true;
        ucs_arbiter_elem_init(&r->elem);
        return r;
    }

    void push(int group, int seq)
    {
        ucs_arbiter_group_push_elem(&m_groups[group],
                                    &make_req(group, seq)->elem);
    }

    void push_n(int group, int count, int first_seq = 0)
    {
        for (int i = 0; i < count; ++i) {
            push(group, first_seq + i);
        }
    }

    void schedule(int group)
    {
        ucs_arbiter_group_schedule(&m_arbiter, &m_groups[group]);
    }

    unsigned dispatch(unsigned per_group)
    {
        return ucs_arbiter_dispatch(&m_arbiter, per_group, dispatch_cb, this);
    }

    static ucs_arbiter_cb_result_t dispatch_cb(ucs_arbiter_t *arbiter,
                                               ucs_arbiter_group_t *group,
                                               ucs_arbiter_elem_t *elem,
                                               void *arg)
    {
        ucs_arbiter *self = static_cast<ucs_arbiter *>(arg);
        req *r            = ucs_container_of(elem, req, elem);
        ucs_arbiter_cb_result_t result;

        EXPECT_EQ(&self->m_arbiter, arbiter);
        EXPECT_EQ(&self->m_groups[r->group], group);
        EXPECT_FALSE(ucs_arbiter_elem_is_queued(elem));
        self->m_events.push_back(event_t(r->group, r->seq));

        result = self->m_action ? self->m_action(r)
                                : UCS_ARBITER_CB_RESULT_REMOVE_ELEM;
        if ((result == UCS_ARBITER_CB_RESULT_REMOVE_ELEM) && r->heap) {
            delete r;
        }
        return result;
    }

    static ucs_arbiter_cb_result_t purge_cb(ucs_arbiter_t *arbiter,
                                            ucs_arbiter_group_t *group,
                                            ucs_arbiter_elem_t *elem, void *arg)
    {
        req *r = ucs_container_of(elem, req, elem);

        if (r->heap) {
            delete r;
        }
        return UCS_ARBITER_CB_RESULT_REMOVE_ELEM;
    }

    std::vector<event_t> take_events()
    {
        std::vector<event_t> events;
        events.swap(m_events);
        return events;
    }

    ucs_arbiter_t m_arbiter;
    ucs_arbiter_group_t m_groups[NUM_GROUPS];
    std::vector<req *> m_reqs;
    std::vector<event_t> m_events;
    action_t m_action;
};

std::vector<event_t> events(std::initializer_list<event_t> list)
{
    return std::vector<event_t>(list);
}

TEST_F(ucs_arbiter, elem_fits_in_pending_req_priv)
{
    EXPECT_LE(sizeof(ucs_arbiter_elem_t), 32u);
}

TEST_F(ucs_arbiter, empty_dispatch)
{
    EXPECT_TRUE(ucs_arbiter_is_empty(&m_arbiter));
    EXPECT_EQ(0u, dispatch(1));
    EXPECT_TRUE(m_events.empty());
}

TEST_F(ucs_arbiter, push_needs_schedule)
{
    push(0, 0);
    EXPECT_FALSE(ucs_arbiter_group_is_empty(&m_groups[0]));
    EXPECT_FALSE(ucs_arbiter_group_is_scheduled(&m_groups[0]));
    EXPECT_EQ(0u, dispatch(1));
    EXPECT_TRUE(m_events.empty());

    schedule(0);
    EXPECT_TRUE(ucs_arbiter_group_is_scheduled(&m_groups[0]));
    EXPECT_FALSE(ucs_arbiter_is_empty(&m_arbiter));
    EXPECT_EQ(1u, dispatch(1));
    EXPECT_EQ(events({{0, 0}}), take_events());

    /* emptied: off the schedule */
    EXPECT_TRUE(ucs_arbiter_group_is_empty(&m_groups[0]));
    EXPECT_FALSE(ucs_arbiter_group_is_scheduled(&m_groups[0]));
    EXPECT_TRUE(ucs_arbiter_is_empty(&m_arbiter));
}

TEST_F(ucs_arbiter, schedule_is_idempotent)
{
    schedule(0); /* empty group: no-op */
    EXPECT_FALSE(ucs_arbiter_group_is_scheduled(&m_groups[0]));
    EXPECT_TRUE(ucs_arbiter_is_empty(&m_arbiter));

    push(0, 0);
    schedule(0);
    schedule(0);
    EXPECT_EQ(1u, ucs_list_length(&m_arbiter.schedule));
    EXPECT_EQ(1u, dispatch(10));
    EXPECT_EQ(1u, take_events().size());

    /* desched of an unscheduled group is a no-op */
    ucs_arbiter_group_desched(&m_arbiter, &m_groups[0]);
    EXPECT_TRUE(ucs_arbiter_is_empty(&m_arbiter));
}

TEST_F(ucs_arbiter, elem_helpers)
{
    req *r = make_req(2, 0);

    EXPECT_FALSE(ucs_arbiter_elem_is_queued(&r->elem));
    EXPECT_FALSE(ucs_arbiter_elem_is_scheduled(&r->elem));
    EXPECT_EQ(nullptr, ucs_arbiter_elem_group(&r->elem));
    EXPECT_EQ(nullptr, ucs_arbiter_group_head(&m_groups[2]));
    EXPECT_EQ(0u, ucs_arbiter_group_num_elems(&m_groups[2]));

    ucs_arbiter_group_push_elem(&m_groups[2], &r->elem);
    EXPECT_TRUE(ucs_arbiter_elem_is_queued(&r->elem));
    EXPECT_FALSE(ucs_arbiter_elem_is_scheduled(&r->elem));
    EXPECT_EQ(&m_groups[2], ucs_arbiter_elem_group(&r->elem));
    EXPECT_EQ(&r->elem, ucs_arbiter_group_head(&m_groups[2]));

    push(2, 1);
    EXPECT_EQ(2u, ucs_arbiter_group_num_elems(&m_groups[2]));
    EXPECT_EQ(&r->elem, ucs_arbiter_group_head(&m_groups[2]));

    schedule(2);
    EXPECT_TRUE(ucs_arbiter_elem_is_scheduled(&r->elem));
    dispatch(10);
    EXPECT_FALSE(ucs_arbiter_elem_is_queued(&r->elem));
}

TEST_F(ucs_arbiter, in_order_within_group)
{
    push_n(0, 5);
    schedule(0);
    EXPECT_EQ(5u, dispatch(100));
    EXPECT_EQ(events({{0, 0}, {0, 1}, {0, 2}, {0, 3}, {0, 4}}), take_events());
}

TEST_F(ucs_arbiter, push_head)
{
    ucs_arbiter_group_push_head_elem(&m_groups[0], &make_req(0, 1)->elem);
    push(0, 2);
    ucs_arbiter_group_push_head_elem(&m_groups[0], &make_req(0, 0)->elem);
    push(0, 3);
    schedule(0);
    dispatch(100);
    EXPECT_EQ(events({{0, 0}, {0, 1}, {0, 2}, {0, 3}}), take_events());
}

TEST_F(ucs_arbiter, round_robin_one_per_group)
{
    for (int g = 0; g < 3; ++g) {
        push_n(g, 3);
        schedule(g);
    }

    for (int seq = 0; seq < 3; ++seq) {
        EXPECT_EQ(3u, dispatch(1));
        EXPECT_EQ(events({{0, seq}, {1, seq}, {2, seq}}), take_events());
    }
    EXPECT_TRUE(ucs_arbiter_is_empty(&m_arbiter));
}

TEST_F(ucs_arbiter, per_group_limit)
{
    push_n(0, 5);
    push_n(1, 5);
    schedule(0);
    schedule(1);

    EXPECT_EQ(4u, dispatch(2));
    EXPECT_EQ(events({{0, 0}, {0, 1}, {1, 0}, {1, 1}}), take_events());
    EXPECT_EQ(4u, dispatch(2));
    EXPECT_EQ(events({{0, 2}, {0, 3}, {1, 2}, {1, 3}}), take_events());
    EXPECT_EQ(2u, dispatch(2));
    EXPECT_EQ(events({{0, 4}, {1, 4}}), take_events());
    EXPECT_TRUE(ucs_arbiter_is_empty(&m_arbiter));
}

TEST_F(ucs_arbiter, next_group_keeps_elem_and_place)
{
    bool refused = false;

    for (int g = 0; g < 3; ++g) {
        push_n(g, 2);
        schedule(g);
    }

    m_action = [&](req *r) {
        if ((r->group == 0) && !refused) {
            refused = true;
            return UCS_ARBITER_CB_RESULT_NEXT_GROUP;
        }
        return UCS_ARBITER_CB_RESULT_REMOVE_ELEM;
    };

    EXPECT_EQ(2u, dispatch(1));
    EXPECT_EQ(events({{0, 0}, {1, 0}, {2, 0}}), take_events());
    EXPECT_EQ(3u, ucs_list_length(&m_arbiter.schedule));

    /* group 0 is still first, with the same element */
    EXPECT_EQ(3u, dispatch(1));
    EXPECT_EQ(events({{0, 0}, {1, 1}, {2, 1}}), take_events());
    EXPECT_EQ(1u, dispatch(1));
    EXPECT_EQ(events({{0, 1}}), take_events());
}

TEST_F(ucs_arbiter, resched_group_goes_last)
{
    bool resched = false;

    for (int g = 0; g < 3; ++g) {
        push_n(g, 3);
        schedule(g);
    }

    m_action = [&](req *r) {
        if ((r->group == 0) && !resched) {
            resched = true;
            return UCS_ARBITER_CB_RESULT_RESCHED_GROUP;
        }
        return UCS_ARBITER_CB_RESULT_REMOVE_ELEM;
    };

    EXPECT_EQ(2u, dispatch(1));
    EXPECT_EQ(events({{0, 0}, {1, 0}, {2, 0}}), take_events());
    EXPECT_EQ(3u, dispatch(1));
    EXPECT_EQ(events({{1, 1}, {2, 1}, {0, 0}}), take_events());
}

TEST_F(ucs_arbiter, desched_group)
{
    bool desched = false;

    for (int g = 0; g < 3; ++g) {
        push_n(g, 2);
        schedule(g);
    }

    m_action = [&](req *r) {
        if ((r->group == 1) && !desched) {
            desched = true;
            return UCS_ARBITER_CB_RESULT_DESCHED_GROUP;
        }
        return UCS_ARBITER_CB_RESULT_REMOVE_ELEM;
    };

    EXPECT_EQ(2u, dispatch(1));
    EXPECT_EQ(events({{0, 0}, {1, 0}, {2, 0}}), take_events());
    EXPECT_FALSE(ucs_arbiter_group_is_scheduled(&m_groups[1]));
    EXPECT_EQ(2u, ucs_arbiter_group_num_elems(&m_groups[1]));

    EXPECT_EQ(2u, dispatch(1));
    EXPECT_EQ(events({{0, 1}, {2, 1}}), take_events());
    EXPECT_EQ(0u, dispatch(1));

    schedule(1);
    EXPECT_EQ(2u, dispatch(5));
    EXPECT_EQ(events({{1, 0}, {1, 1}}), take_events());
}

TEST_F(ucs_arbiter, stop_resumes_from_same_group)
{
    bool stopped = false;

    for (int g = 0; g < 3; ++g) {
        push_n(g, 3);
        schedule(g);
    }

    m_action = [&](req *r) {
        if ((r->group == 1) && !stopped) {
            stopped = true;
            return UCS_ARBITER_CB_RESULT_STOP;
        }
        return UCS_ARBITER_CB_RESULT_REMOVE_ELEM;
    };

    EXPECT_EQ(1u, dispatch(1));
    EXPECT_EQ(events({{0, 0}, {1, 0}}), take_events());
    EXPECT_EQ(3u, dispatch(1));
    EXPECT_EQ(events({{1, 0}, {2, 0}, {0, 1}}), take_events());
}

TEST_F(ucs_arbiter, fair_under_stop_budget)
{
    const int num_groups = 7;
    const int per_group  = 40;
    const int budget     = 5;
    int removed_in_pass  = 0;
    std::vector<int> served(num_groups, 0);

    for (int g = 0; g < num_groups; ++g) {
        push_n(g, per_group);
        schedule(g);
    }

    /* Every dispatch may remove only "budget" elements, like a transport
     * that runs out of send credits. */
    m_action = [&](req *r) {
        if (removed_in_pass == budget) {
            return UCS_ARBITER_CB_RESULT_STOP;
        }
        ++removed_in_pass;
        ++served[r->group];
        return UCS_ARBITER_CB_RESULT_REMOVE_ELEM;
    };

    for (int pass = 0; pass < 20; ++pass) {
        removed_in_pass = 0;
        EXPECT_EQ((unsigned)budget, dispatch(1));
        int most  = *std::max_element(served.begin(), served.end());
        int least = *std::min_element(served.begin(), served.end());
        ASSERT_LE(most - least, 1) << "pass " << pass;
    }

    /* and in order within every group */
    std::vector<int> next_seq(num_groups, 0);
    for (auto &e : m_events) {
        if (next_seq[e.first] == e.second) {
            ++next_seq[e.first];
        } else {
            /* only a refused element may repeat */
            ASSERT_EQ(next_seq[e.first], e.second + 1);
        }
    }
    m_events.clear();
}

TEST_F(ucs_arbiter, push_during_dispatch)
{
    std::vector<event_t> expected_order;
    bool pushed = false;

    push_n(0, 2);
    push_n(2, 1);
    schedule(0);
    schedule(2);

    /* on the first element, push more work: to its own group, to an empty
     * unscheduled group (then schedule it), and to a scheduled group */
    m_action = [&](req *r) {
        if ((r->group == 0) && (r->seq == 0) && !pushed) {
            pushed = true;
            push(0, 2);
            push(1, 0);
            push(1, 1);
            schedule(1);
            push(2, 1);
            schedule(2); /* already scheduled: no-op */
        }
        return UCS_ARBITER_CB_RESULT_REMOVE_ELEM;
    };

    unsigned total = 0;
    for (int i = 0; (i < 10) && !ucs_arbiter_is_empty(&m_arbiter); ++i) {
        total += dispatch(1);
    }
    EXPECT_EQ(7u, total);
    EXPECT_TRUE(ucs_arbiter_is_empty(&m_arbiter));

    std::vector<event_t> all = take_events();
    ASSERT_EQ(7u, all.size());
    std::vector<int> next_seq(3, 0);
    for (auto &e : all) {
        EXPECT_EQ(next_seq[e.first], e.second) << e.first;
        ++next_seq[e.first];
    }
    EXPECT_EQ((std::vector<int>{3, 2, 2}), next_seq);
}

TEST_F(ucs_arbiter, callback_frees_removed_elements)
{
    for (int g = 0; g < 3; ++g) {
        for (int i = 0; i < 4; ++i) {
            ucs_arbiter_group_push_elem(&m_groups[g],
                                        &make_heap_req(g, i)->elem);
        }
        schedule(g);
    }

    EXPECT_EQ(6u, dispatch(2));
    EXPECT_EQ(6u, take_events().size());
    /* the rest are freed by the purge in TearDown */
}

TEST_F(ucs_arbiter, callback_requeues_its_element)
{
    int offers = 0;

    push(0, 0);
    push(0, 1);
    schedule(0);

    /* element 0 moves itself behind element 1 once */
    m_action = [&](req *r) {
        ++offers;
        if ((r->seq == 0) && (offers == 1)) {
            ucs_arbiter_group_push_elem(&m_groups[0], &r->elem);
            return UCS_ARBITER_CB_RESULT_REMOVE_ELEM;
        }
        return UCS_ARBITER_CB_RESULT_REMOVE_ELEM;
    };

    EXPECT_EQ(3u, dispatch(10));
    EXPECT_EQ(events({{0, 0}, {0, 1}, {0, 0}}), take_events());
    EXPECT_TRUE(ucs_arbiter_group_is_empty(&m_groups[0]));
}

TEST_F(ucs_arbiter, callback_moves_element_to_other_group)
{
    req *moved = NULL;

    push(0, 0);
    push(0, 1);
    schedule(0);

    m_action = [&](req *r) {
        if ((r->group == 0) && (r->seq == 0) && (moved == NULL)) {
            moved    = r;
            r->group = 1;
            ucs_arbiter_group_push_elem(&m_groups[1], &r->elem);
            /* "keep" it: the arbiter must not put it back in group 0 */
            return UCS_ARBITER_CB_RESULT_NEXT_GROUP;
        }
        return UCS_ARBITER_CB_RESULT_REMOVE_ELEM;
    };

    EXPECT_EQ(0u, dispatch(1));
    EXPECT_EQ(&m_groups[1], ucs_arbiter_elem_group(&moved->elem));
    EXPECT_EQ(1u, ucs_arbiter_group_num_elems(&m_groups[0]));
    EXPECT_EQ(1u, ucs_arbiter_group_num_elems(&m_groups[1]));
    schedule(1);
    EXPECT_EQ(2u, dispatch(1));
    EXPECT_EQ(events({{0, 0}, {0, 1}, {1, 0}}), take_events());
}

TEST_F(ucs_arbiter, callback_desches_own_group_on_remove)
{
    push_n(0, 3);
    schedule(0);

    m_action = [&](req *r) {
        ucs_arbiter_group_desched(&m_arbiter, &m_groups[0]);
        return UCS_ARBITER_CB_RESULT_REMOVE_ELEM;
    };

    EXPECT_EQ(1u, dispatch(10));
    EXPECT_FALSE(ucs_arbiter_group_is_scheduled(&m_groups[0]));
    EXPECT_EQ(2u, ucs_arbiter_group_num_elems(&m_groups[0]));
    take_events();
}

TEST_F(ucs_arbiter, callback_desches_other_group)
{
    push_n(0, 1);
    push_n(1, 1);
    schedule(0);
    schedule(1);

    m_action = [&](req *r) {
        if (r->group == 0) {
            ucs_arbiter_group_desched(&m_arbiter, &m_groups[1]);
        }
        return UCS_ARBITER_CB_RESULT_REMOVE_ELEM;
    };

    EXPECT_EQ(1u, dispatch(10));
    EXPECT_EQ(events({{0, 0}}), take_events());
    EXPECT_TRUE(ucs_arbiter_is_empty(&m_arbiter));
    EXPECT_EQ(1u, ucs_arbiter_group_num_elems(&m_groups[1]));
}

TEST_F(ucs_arbiter, purge_keeps_or_removes)
{
    std::vector<int> purged;

    for (int i = 0; i < 6; ++i) {
        ucs_arbiter_group_push_elem(&m_groups[0], &make_heap_req(0, i)->elem);
    }
    schedule(0);

    auto purge_evens = [](ucs_arbiter_t *arbiter, ucs_arbiter_group_t *group,
                          ucs_arbiter_elem_t *elem, void *arg) {
        req *r = ucs_container_of(elem, req, elem);
        static_cast<std::vector<int> *>(arg)->push_back(r->seq);
        if (r->seq % 2) {
            return UCS_ARBITER_CB_RESULT_NEXT_GROUP;
        }
        delete r;
        return UCS_ARBITER_CB_RESULT_REMOVE_ELEM;
    };

    ucs_arbiter_group_purge(&m_arbiter, &m_groups[0], purge_evens, &purged);
    EXPECT_EQ((std::vector<int>{0, 1, 2, 3, 4, 5}), purged);
    EXPECT_EQ(3u, ucs_arbiter_group_num_elems(&m_groups[0]));
    EXPECT_TRUE(ucs_arbiter_group_is_scheduled(&m_groups[0]));

    EXPECT_EQ(3u, dispatch(10));
    EXPECT_EQ(events({{0, 1}, {0, 3}, {0, 5}}), take_events());
}

TEST_F(ucs_arbiter, purge_all_deschedules)
{
    for (int i = 0; i < 4; ++i) {
        ucs_arbiter_group_push_elem(&m_groups[3], &make_heap_req(3, i)->elem);
    }
    schedule(3);
    push(4, 0);
    schedule(4);

    ucs_arbiter_group_purge(&m_arbiter, &m_groups[3], purge_cb, NULL);
    EXPECT_TRUE(ucs_arbiter_group_is_empty(&m_groups[3]));
    EXPECT_FALSE(ucs_arbiter_group_is_scheduled(&m_groups[3]));

    /* purging an empty group is harmless */
    ucs_arbiter_group_purge(&m_arbiter, &m_groups[3], purge_cb, NULL);

    EXPECT_EQ(1u, dispatch(10));
    EXPECT_EQ(events({{4, 0}}), take_events());
}

TEST_F(ucs_arbiter, purge_other_group_during_dispatch)
{
    for (int i = 0; i < 3; ++i) {
        ucs_arbiter_group_push_elem(&m_groups[1], &make_heap_req(1, i)->elem);
    }
    push(0, 0);
    schedule(0);
    schedule(1);

    m_action = [&](req *r) {
        if (r->group == 0) {
            ucs_arbiter_group_purge(&m_arbiter, &m_groups[1], purge_cb, NULL);
        }
        return UCS_ARBITER_CB_RESULT_REMOVE_ELEM;
    };

    EXPECT_EQ(1u, dispatch(10));
    EXPECT_EQ(events({{0, 0}}), take_events());
    EXPECT_TRUE(ucs_arbiter_is_empty(&m_arbiter));
}

TEST_F(ucs_arbiter, cleanup_warnings)
{
    ucs_arbiter_t arbiter;
    ucs_arbiter_group_t group;
    req *r = make_req(0, 0);

    ucs_arbiter_init(&arbiter);
    ucs_arbiter_group_init(&group);
    ucs_arbiter_group_push_elem(&group, &r->elem);
    ucs_arbiter_group_schedule(&arbiter, &group);
    {
        ucs::scoped_log_capture capture;
        ucs_arbiter_group_cleanup(&group);
        ucs_arbiter_cleanup(&arbiter);
        EXPECT_TRUE(capture.contains("1 element(s) left"));
        EXPECT_TRUE(capture.contains("still scheduled"));
        EXPECT_TRUE(capture.contains("1 group(s) still scheduled"));
    }
    ucs_arbiter_group_purge(&arbiter, &group, purge_cb, NULL);
    EXPECT_TRUE(ucs_arbiter_is_empty(&arbiter));
}

} // namespace
