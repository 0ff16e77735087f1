#include <common/test.h>

#include <ucs/datastruct/list.h>

#include <vector>

/* Inside a namespace so that the fixtures may share the names of the C
 * structures they test (struct ucs_mpool, ...). */
namespace {

struct item {
    int value;
    ucs_list_link_t link;
};

std::vector<int> to_vector(ucs_list_link_t *head)
{
    std::vector<int> result;
    item *it;

    ucs_list_for_each(it, head, link) {
        result.push_back(it->value);
    }
    return result;
}

class ucs_list : public ucs::test {
protected:
    virtual void SetUp()
    {
        ucs::test::SetUp();
        ucs_list_head_init(&m_head);
        for (int i = 0; i < 5; ++i) {
            m_items[i].value = i;
        }
    }

    ucs_list_link_t m_head;
    item m_items[5];
};

TEST_F(ucs_list, static_head_is_empty)
{
    UCS_LIST_HEAD(head);
    EXPECT_TRUE(ucs_list_is_empty(&head));
    EXPECT_EQ(0u, ucs_list_length(&head));
    EXPECT_EQ(&head, head.next);
    EXPECT_EQ(&head, head.prev);
}

TEST_F(ucs_list, add_head_and_tail)
{
    ucs_list_add_tail(&m_head, &m_items[1].link);
    ucs_list_add_tail(&m_head, &m_items[2].link);
    ucs_list_add_head(&m_head, &m_items[0].link);
    EXPECT_FALSE(ucs_list_is_empty(&m_head));
    EXPECT_EQ(3u, ucs_list_length(&m_head));
    EXPECT_EQ((std::vector<int>{0, 1, 2}), to_vector(&m_head));
    EXPECT_EQ(&m_items[0], ucs_list_head(&m_head, item, link));
    EXPECT_EQ(&m_items[2], ucs_list_tail(&m_head, item, link));
}

TEST_F(ucs_list, insert_before_and_after)
{
    ucs_list_add_tail(&m_head, &m_items[0].link);
    ucs_list_add_tail(&m_head, &m_items[4].link);
    ucs_list_insert_after(&m_items[0].link, &m_items[1].link);
    ucs_list_insert_before(&m_items[4].link, &m_items[3].link);
    ucs_list_insert_after(&m_items[1].link, &m_items[2].link);
    EXPECT_EQ((std::vector<int>{0, 1, 2, 3, 4}), to_vector(&m_head));
    EXPECT_EQ(&m_items[2], ucs_list_next(&m_items[1].link, item, link));
    EXPECT_EQ(&m_items[0], ucs_list_prev(&m_items[1].link, item, link));
}

TEST_F(ucs_list, del_first_middle_last)
{
    for (int i = 0; i < 5; ++i) {
        ucs_list_add_tail(&m_head, &m_items[i].link);
    }
    ucs_list_del(&m_items[0].link);
    ucs_list_del(&m_items[2].link);
    ucs_list_del(&m_items[4].link);
    EXPECT_EQ((std::vector<int>{1, 3}), to_vector(&m_head));
    ucs_list_del(&m_items[1].link);
    ucs_list_del(&m_items[3].link);
    EXPECT_TRUE(ucs_list_is_empty(&m_head));
}

TEST_F(ucs_list, extract_head)
{
    for (int i = 0; i < 3; ++i) {
        ucs_list_add_tail(&m_head, &m_items[i].link);
    }
    for (int i = 0; i < 3; ++i) {
        item *it = ucs_list_extract_head(&m_head, item, link);
        EXPECT_EQ(i, it->value);
        EXPECT_EQ(2u - i, ucs_list_length(&m_head));
    }
    EXPECT_TRUE(ucs_list_is_empty(&m_head));
}

TEST_F(ucs_list, splice_tail)
{
    UCS_LIST_HEAD(other);

    ucs_list_splice_tail(&m_head, &other);
    EXPECT_TRUE(ucs_list_is_empty(&m_head));

    ucs_list_add_tail(&m_head, &m_items[0].link);
    ucs_list_add_tail(&m_head, &m_items[1].link);
    ucs_list_add_tail(&other, &m_items[2].link);
    ucs_list_add_tail(&other, &m_items[3].link);
    ucs_list_splice_tail(&m_head, &other);
    EXPECT_TRUE(ucs_list_is_empty(&other));
    EXPECT_EQ((std::vector<int>{0, 1, 2, 3}), to_vector(&m_head));

    /* splice into an empty list */
    ucs_list_splice_tail(&other, &m_head);
    EXPECT_TRUE(ucs_list_is_empty(&m_head));
    EXPECT_EQ((std::vector<int>{0, 1, 2, 3}), to_vector(&other));
    EXPECT_EQ(&m_items[3], ucs_list_tail(&other, item, link));
}

TEST_F(ucs_list, for_each_safe_deletes)
{
    item *it, *tmp;

    for (int i = 0; i < 5; ++i) {
        ucs_list_add_tail(&m_head, &m_items[i].link);
    }

    ucs_list_for_each_safe(it, tmp, &m_head, link) {
        if (it->value % 2 == 0) {
            ucs_list_del(&it->link);
        }
    }
    EXPECT_EQ((std::vector<int>{1, 3}), to_vector(&m_head));

    ucs_list_for_each_safe(it, tmp, &m_head, link) {
        ucs_list_del(&it->link);
    }
    EXPECT_TRUE(ucs_list_is_empty(&m_head));
}

TEST_F(ucs_list, for_each_on_empty_does_nothing)
{
    item *it, *tmp;
    int count = 0;

    ucs_list_for_each(it, &m_head, link) {
        ++count;
    }
    ucs_list_for_each_safe(it, tmp, &m_head, link) {
        ++count;
    }
    EXPECT_EQ(0, count);
}

TEST_F(ucs_list, many_elements)
{
    const unsigned count = ucs::test_scale(10000);
    std::vector<item> items(count);

    for (unsigned i = 0; i < count; ++i) {
        items[i].value = i;
        if (i % 2) {
            ucs_list_add_tail(&m_head, &items[i].link);
        } else {
            ucs_list_add_head(&m_head, &items[i].link);
        }
    }
    EXPECT_EQ(count, ucs_list_length(&m_head));

    /* evens in descending order, then odds ascending */
    std::vector<int> values = to_vector(&m_head);
    ASSERT_EQ(count, values.size());
    for (unsigned i = 1; i < values.size(); ++i) {
        if ((values[i - 1] % 2 == 0) && (values[i] % 2 == 0)) {
            EXPECT_GT(values[i - 1], values[i]);
        } else if ((values[i - 1] % 2) && (values[i] % 2)) {
            EXPECT_LT(values[i - 1], values[i]);
        }
    }
}

} // namespace
