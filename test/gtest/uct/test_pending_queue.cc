/*
 * The pending-queue helpers transports build on (uct/base/uct_pending.h):
 * order per endpoint, fairness across endpoints, stop on
 * UCS_ERR_NO_RESOURCE, purge.
 */
#include <common/test.h>

extern "C" {
#include <uct/base/uct_pending.h>
}

#include <vector>

namespace {

struct pending_req {
    uct_pending_req_t super;
    int ep;
    int seq;
    std::vector<int> *log;
    int *budget; /* sends left before NO_RESOURCE */
};

ucs_status_t pending_run(uct_pending_req_t *self)
{
    pending_req *req = reinterpret_cast<pending_req *>(self);

    if (*req->budget == 0) {
        return UCS_ERR_NO_RESOURCE;
    }
    --*req->budget;
    req->log->push_back(req->ep * 100 + req->seq);
    return UCS_OK;
}

void purge_cb(uct_pending_req_t *self, void *arg)
{
    pending_req *req = reinterpret_cast<pending_req *>(self);
    static_cast<std::vector<int> *>(arg)->push_back(req->ep * 100 + req->seq);
}

class uct_pending_queue : public ucs::test {
protected:
    virtual void SetUp()
    {
        ucs::test::SetUp();
        ucs_arbiter_init(&m_arbiter);
        for (int i = 0; i < NUM_EPS; ++i) {
            ucs_arbiter_group_init(&m_groups[i]);
        }
    }

    virtual void TearDown()
    {
        for (int i = 0; i < NUM_EPS; ++i) {
            ucs_arbiter_group_cleanup(&m_groups[i]);
        }
        ucs_arbiter_cleanup(&m_arbiter);
        ucs::test::TearDown();
    }

    void push(int ep, int count)
    {
        for (int i = 0; i < count; ++i) {
            m_reqs.push_back(new pending_req());
            pending_req *req = m_reqs.back();
            req->super.func  = pending_run;
            req->ep          = ep;
            req->seq         = i;
            req->log         = &m_log;
            req->budget      = &m_budget;
            uct_pending_req_push(&m_arbiter, &m_groups[ep], &req->super);
        }
    }

    void dispatch()
    {
        ucs_arbiter_dispatch(&m_arbiter, 1, uct_pending_req_dispatch_cb, NULL);
    }

    virtual ~uct_pending_queue()
    {
        for (size_t i = 0; i < m_reqs.size(); ++i) {
            delete m_reqs[i];
        }
    }

    static const int NUM_EPS = 3;
    ucs_arbiter_t m_arbiter;
    ucs_arbiter_group_t m_groups[NUM_EPS];
    std::vector<pending_req *> m_reqs;
    std::vector<int> m_log;
    int m_budget = 1000;
};

TEST_F(uct_pending_queue, in_order_per_ep_round_robin_across)
{
    push(0, 3);
    push(1, 2);
    push(2, 1);
    while (!ucs_arbiter_is_empty(&m_arbiter)) {
        dispatch();
    }
    /* one request per endpoint per round, each endpoint in order */
    std::vector<int> expected = {0, 100, 200, 1, 101, 2};
    EXPECT_EQ(expected, m_log);
}

TEST_F(uct_pending_queue, stops_on_no_resource_and_resumes)
{
    push(0, 2);
    push(1, 2);
    m_budget = 1;
    dispatch();
    ASSERT_EQ(1u, m_log.size());
    EXPECT_EQ(0, m_log[0]);
    EXPECT_FALSE(ucs_arbiter_is_empty(&m_arbiter));

    m_budget = 1000;
    while (!ucs_arbiter_is_empty(&m_arbiter)) {
        dispatch();
    }
    ASSERT_EQ(4u, m_log.size());
    /* the request refused for lack of resources is retried, not lost */
    EXPECT_EQ(100, m_log[1]);
}

TEST_F(uct_pending_queue, desched_on_no_resource_leaves_others_running)
{
    int ep0_budget = 0; /* endpoint 0 is out of its own resources */
    push(0, 2);
    push(1, 2);
    for (pending_req *req : m_reqs) {
        if (req->ep == 0) {
            req->budget = &ep0_budget;
        }
    }

    while (!ucs_arbiter_is_empty(&m_arbiter)) {
        ucs_arbiter_dispatch(&m_arbiter, 1, uct_pending_req_dispatch_cb,
                             UCT_PENDING_DISPATCH_DESCHED);
    }
    /* endpoint 1 was not held up; endpoint 0 left the schedule */
    std::vector<int> expected = {100, 101};
    EXPECT_EQ(expected, m_log);
    EXPECT_FALSE(ucs_arbiter_group_is_empty(&m_groups[0]));
    EXPECT_FALSE(ucs_arbiter_group_is_scheduled(&m_groups[0]));

    /* its resources are back: the transport schedules it again */
    ep0_budget = 2;
    ucs_arbiter_group_schedule(&m_arbiter, &m_groups[0]);
    while (!ucs_arbiter_is_empty(&m_arbiter)) {
        ucs_arbiter_dispatch(&m_arbiter, 1, uct_pending_req_dispatch_cb,
                             UCT_PENDING_DISPATCH_DESCHED);
    }
    expected = {100, 101, 0, 1};
    EXPECT_EQ(expected, m_log);
}

TEST_F(uct_pending_queue, purge_calls_back_each_unsent_request)
{
    std::vector<int> purged;

    push(0, 3);
    push(1, 1);
    uct_pending_queue_purge(&m_arbiter, &m_groups[0], purge_cb, &purged);
    std::vector<int> expected = {0, 1, 2};
    EXPECT_EQ(expected, purged);
    EXPECT_TRUE(ucs_arbiter_group_is_empty(&m_groups[0]));

    /* the other endpoint's request still runs */
    while (!ucs_arbiter_is_empty(&m_arbiter)) {
        dispatch();
    }
    ASSERT_EQ(1u, m_log.size());
    EXPECT_EQ(100, m_log[0]);
}

TEST_F(uct_pending_queue, purge_without_callback)
{
    push(2, 2);
    uct_pending_queue_purge(&m_arbiter, &m_groups[2], NULL, NULL);
    EXPECT_TRUE(ucs_arbiter_group_is_empty(&m_groups[2]));
    dispatch();
    EXPECT_TRUE(m_log.empty());
}

} // namespace
