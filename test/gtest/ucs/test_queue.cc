#include <common/test.h>

#include <ucs/datastruct/queue.h>

#include <cstdlib>
#include <deque>
#include <vector>

/* Inside a namespace so that the fixtures may share the names of the C
 * structures they test (struct ucs_mpool, ...). */
namespace {

struct item {
    int value;
    ucs_queue_elem_t queue;
};

std::vector<int> to_vector(ucs_queue_head_t *queue)
{
    std::vector<int> result;
    item *it;

    ucs_queue_for_each(it, queue, queue) {
        result.push_back(it->value);
    }
    return result;
}

class ucs_queue : public ucs::test {
protected:
    virtual void SetUp()
    {
        ucs::test::SetUp();
        ucs_queue_head_init(&m_queue);
        m_items.resize(16);
        for (size_t i = 0; i < m_items.size(); ++i) {
            m_items[i].value = (int)i;
        }
    }

    void push_range(int first, int last)
    {
        for (int i = first; i <= last; ++i) {
            ucs_queue_push(&m_queue, &m_items[i].queue);
        }
    }

    /* The tail pointer must be right: a push must land at the end. */
    void check_tail_after(const std::vector<int> &expected)
    {
        ucs_queue_push(&m_queue, &m_items[15].queue);
        std::vector<int> with_tail = expected;
        with_tail.push_back(15);
        EXPECT_EQ(with_tail, to_vector(&m_queue));
        EXPECT_EQ(&m_items[15],
                  ucs_queue_tail_elem_non_empty(&m_queue, item, queue));
        EXPECT_EQ(UCS_OK, ucs_queue_remove(&m_queue, &m_items[15].queue));
    }

    ucs_queue_head_t m_queue;
    std::vector<item> m_items;
};

TEST_F(ucs_queue, empty)
{
    EXPECT_TRUE(ucs_queue_is_empty(&m_queue));
    EXPECT_EQ(0u, ucs_queue_length(&m_queue));
    EXPECT_EQ(nullptr, ucs_queue_pull(&m_queue));
    EXPECT_EQ(UCS_ERR_NO_ELEM, ucs_queue_remove(&m_queue, &m_items[0].queue));
}

TEST_F(ucs_queue, fifo_order)
{
    push_range(0, 4);
    EXPECT_EQ(5u, ucs_queue_length(&m_queue));
    EXPECT_EQ(&m_items[0],
              ucs_queue_head_elem_non_empty(&m_queue, item, queue));
    EXPECT_EQ(&m_items[4],
              ucs_queue_tail_elem_non_empty(&m_queue, item, queue));

    for (int i = 0; i < 5; ++i) {
        ucs_queue_elem_t *elem = ucs_queue_pull(&m_queue);
        ASSERT_NE(nullptr, elem);
        EXPECT_EQ(i, ucs_container_of(elem, item, queue)->value);
    }
    EXPECT_TRUE(ucs_queue_is_empty(&m_queue));
    EXPECT_EQ(nullptr, ucs_queue_pull(&m_queue));

    /* usable again after draining */
    check_tail_after({});
}

TEST_F(ucs_queue, pull_non_empty_last_resets_tail)
{
    ucs_queue_push(&m_queue, &m_items[0].queue);
    EXPECT_EQ(&m_items[0],
              ucs_queue_pull_elem_non_empty(&m_queue, item, queue));
    EXPECT_TRUE(ucs_queue_is_empty(&m_queue));
    check_tail_after({});
}

TEST_F(ucs_queue, push_head)
{
    ucs_queue_push_head(&m_queue, &m_items[1].queue);
    EXPECT_EQ(&m_items[1],
              ucs_queue_tail_elem_non_empty(&m_queue, item, queue));
    ucs_queue_push_head(&m_queue, &m_items[0].queue);
    ucs_queue_push(&m_queue, &m_items[2].queue);
    EXPECT_EQ((std::vector<int>{0, 1, 2}), to_vector(&m_queue));
    check_tail_after({0, 1, 2});
}

TEST_F(ucs_queue, remove_head_middle_tail)
{
    push_range(0, 4);
    EXPECT_EQ(UCS_OK, ucs_queue_remove(&m_queue, &m_items[0].queue));
    EXPECT_EQ(UCS_OK, ucs_queue_remove(&m_queue, &m_items[2].queue));
    EXPECT_EQ(UCS_OK, ucs_queue_remove(&m_queue, &m_items[4].queue));
    EXPECT_EQ(UCS_ERR_NO_ELEM, ucs_queue_remove(&m_queue, &m_items[4].queue));
    EXPECT_EQ((std::vector<int>{1, 3}), to_vector(&m_queue));
    check_tail_after({1, 3});

    EXPECT_EQ(UCS_OK, ucs_queue_remove(&m_queue, &m_items[3].queue));
    EXPECT_EQ(UCS_OK, ucs_queue_remove(&m_queue, &m_items[1].queue));
    EXPECT_TRUE(ucs_queue_is_empty(&m_queue));
    check_tail_after({});
}

TEST_F(ucs_queue, splice)
{
    ucs_queue_head_t other;

    ucs_queue_head_init(&other);
    ucs_queue_splice(&m_queue, &other);
    EXPECT_TRUE(ucs_queue_is_empty(&m_queue));

    push_range(0, 1);
    ucs_queue_push(&other, &m_items[2].queue);
    ucs_queue_push(&other, &m_items[3].queue);
    ucs_queue_splice(&m_queue, &other);
    EXPECT_TRUE(ucs_queue_is_empty(&other));
    EXPECT_EQ((std::vector<int>{0, 1, 2, 3}), to_vector(&m_queue));
    check_tail_after({0, 1, 2, 3});

    /* into an empty destination; source stays usable */
    ucs_queue_splice(&other, &m_queue);
    EXPECT_TRUE(ucs_queue_is_empty(&m_queue));
    EXPECT_EQ((std::vector<int>{0, 1, 2, 3}), to_vector(&other));
    check_tail_after({});
}

TEST_F(ucs_queue, for_each_safe_removes_some)
{
    ucs_queue_iter_t iter;
    item *it;

    push_range(0, 9);
    ucs_queue_for_each_safe(it, iter, &m_queue, queue) {
        if ((it->value % 3) == 0) {
            ucs_queue_del_iter(&m_queue, iter);
        }
    }
    /* 9 was the tail and was removed */
    EXPECT_EQ((std::vector<int>{1, 2, 4, 5, 7, 8}), to_vector(&m_queue));
    check_tail_after({1, 2, 4, 5, 7, 8});
}

TEST_F(ucs_queue, for_each_safe_removes_all)
{
    std::vector<int> seen;
    ucs_queue_iter_t iter;
    item *it;

    push_range(0, 5);
    ucs_queue_for_each_safe(it, iter, &m_queue, queue) {
        seen.push_back(it->value);
        ucs_queue_del_iter(&m_queue, iter);
        it->queue.next = NULL; /* the element may be reused at once */
    }
    EXPECT_EQ((std::vector<int>{0, 1, 2, 3, 4, 5}), seen);
    EXPECT_TRUE(ucs_queue_is_empty(&m_queue));
    check_tail_after({});
}

TEST_F(ucs_queue, for_each_safe_push_during_walk)
{
    std::vector<int> seen;
    ucs_queue_iter_t iter;
    item *it;

    push_range(0, 2);
    ucs_queue_for_each_safe(it, iter, &m_queue, queue) {
        seen.push_back(it->value);
        if (it->value == 2) {
            ucs_queue_del_iter(&m_queue, iter);
            ucs_queue_push(&m_queue, &m_items[10].queue);
        }
    }
    EXPECT_EQ((std::vector<int>{0, 1, 2, 10}), seen);
    EXPECT_EQ((std::vector<int>{0, 1, 10}), to_vector(&m_queue));
}

TEST_F(ucs_queue, random_ops_match_model)
{
    const unsigned num_ops = ucs::test_scale(20000);
    std::vector<item> items(64);
    std::deque<int> model;
    std::vector<bool> queued(items.size(), false);

    srand(42);
    for (size_t i = 0; i < items.size(); ++i) {
        items[i].value = (int)i;
    }

    for (unsigned op = 0; op < num_ops; ++op) {
        int idx = rand() % items.size();
        switch (rand() % 4) {
        case 0:
            if (!queued[idx]) {
                ucs_queue_push(&m_queue, &items[idx].queue);
                model.push_back(idx);
                queued[idx] = true;
            }
            break;
        case 1:
            if (!queued[idx]) {
                ucs_queue_push_head(&m_queue, &items[idx].queue);
                model.push_front(idx);
                queued[idx] = true;
            }
            break;
        case 2: {
            ucs_queue_elem_t *elem = ucs_queue_pull(&m_queue);
            if (model.empty()) {
                ASSERT_EQ(nullptr, elem);
            } else {
                ASSERT_NE(nullptr, elem);
                ASSERT_EQ(model.front(),
                          ucs_container_of(elem, item, queue)->value);
                queued[model.front()] = false;
                model.pop_front();
            }
            break;
        }
        case 3:
            if (queued[idx]) {
                ASSERT_EQ(UCS_OK,
                          ucs_queue_remove(&m_queue, &items[idx].queue));
                for (auto i = model.begin(); i != model.end(); ++i) {
                    if (*i == idx) {
                        model.erase(i);
                        break;
                    }
                }
                queued[idx] = false;
            } else {
                ASSERT_EQ(UCS_ERR_NO_ELEM,
                          ucs_queue_remove(&m_queue, &items[idx].queue));
            }
            break;
        }

        ASSERT_EQ(model.size(), ucs_queue_length(&m_queue));
        ASSERT_EQ(model.empty(), (bool)ucs_queue_is_empty(&m_queue));
        if (!model.empty()) {
            ASSERT_EQ(
                model.back(),
                ucs_queue_tail_elem_non_empty(&m_queue, item, queue)->value);
        }
    }

    std::vector<int> expected(model.begin(), model.end());
    std::vector<int> actual;
    item *it;
    ucs_queue_for_each(it, &m_queue, queue) {
        actual.push_back(it->value);
    }
    EXPECT_EQ(expected, actual);
}

} // namespace
