#include <common/test.h>

#include <ucs/datastruct/ptr_array.h>

#include <cstdint>
#include <set>
#include <vector>

/* Inside a namespace so that the fixtures may share the names of the C
 * structures they test (struct ucs_mpool, ...). */
namespace {

void *value_of(uintptr_t v)
{
    return reinterpret_cast<void *>(v);
}

class ucs_ptr_array : public ucs::test {
protected:
    virtual void SetUp()
    {
        ucs::test::SetUp();
        ucs_ptr_array_init(&m_pa, "test");
    }

    virtual void TearDown()
    {
        ucs_ptr_array_cleanup(&m_pa, 1);
        ucs::test::TearDown();
    }

    unsigned insert(void *value)
    {
        unsigned index = UCS_PTR_ARRAY_NO_INDEX;
        EXPECT_EQ(UCS_OK, ucs_ptr_array_insert(&m_pa, value, &index));
        return index;
    }

    void remove_all()
    {
        void *value;
        unsigned index;

        ucs_ptr_array_for_each(value, index, &m_pa) {
            EXPECT_EQ(UCS_OK, ucs_ptr_array_remove(&m_pa, index, NULL));
        }
        (void)value;
    }

    ucs_ptr_array_t m_pa;
};

TEST_F(ucs_ptr_array, insert_lookup_remove)
{
    void *value;

    EXPECT_EQ(0u, ucs_ptr_array_count(&m_pa));
    EXPECT_FALSE(ucs_ptr_array_lookup(&m_pa, 0, &value));

    for (uintptr_t i = 0; i < 20; ++i) {
        EXPECT_EQ(i, insert(value_of((i + 1) * 16)));
    }
    EXPECT_EQ(20u, ucs_ptr_array_count(&m_pa));

    for (unsigned i = 0; i < 20; ++i) {
        ASSERT_TRUE(ucs_ptr_array_lookup(&m_pa, i, &value));
        EXPECT_EQ(value_of((i + 1) * 16), value);
    }

    ASSERT_EQ(UCS_OK, ucs_ptr_array_remove(&m_pa, 5, &value));
    EXPECT_EQ(value_of(6 * 16), value);
    EXPECT_FALSE(ucs_ptr_array_lookup(&m_pa, 5, &value));
    EXPECT_EQ(19u, ucs_ptr_array_count(&m_pa));
    remove_all();
    EXPECT_EQ(0u, ucs_ptr_array_count(&m_pa));
}

TEST_F(ucs_ptr_array, bad_index_and_double_remove)
{
    void *value = value_of(0x88);

    EXPECT_EQ(UCS_ERR_NO_ELEM, ucs_ptr_array_remove(&m_pa, 0, &value));
    insert(value_of(0x10));
    EXPECT_FALSE(ucs_ptr_array_lookup(&m_pa, 1000000, &value));
    EXPECT_FALSE(ucs_ptr_array_lookup(&m_pa, UCS_PTR_ARRAY_NO_INDEX, &value));
    EXPECT_EQ(UCS_ERR_NO_ELEM, ucs_ptr_array_remove(&m_pa, 1, &value));
    EXPECT_EQ(UCS_ERR_NO_ELEM, ucs_ptr_array_remove(&m_pa, 1000000, &value));
    EXPECT_EQ(value_of(0x88), value);

    EXPECT_EQ(UCS_OK, ucs_ptr_array_remove(&m_pa, 0, NULL));
    EXPECT_EQ(UCS_ERR_NO_ELEM, ucs_ptr_array_remove(&m_pa, 0, NULL));
    EXPECT_EQ(0u, ucs_ptr_array_count(&m_pa));
}

TEST_F(ucs_ptr_array, odd_value_is_rejected)
{
    unsigned index = 77;
    ucs::scoped_log_capture capture;

    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              ucs_ptr_array_insert(&m_pa, value_of(0x1001), &index));
    EXPECT_EQ(77u, index);
    EXPECT_EQ(0u, ucs_ptr_array_count(&m_pa));
    EXPECT_TRUE(capture.contains("low bit"));
}

TEST_F(ucs_ptr_array, null_value_is_stored)
{
    void *value    = value_of(0x40);
    unsigned index = insert(NULL);

    ASSERT_TRUE(ucs_ptr_array_lookup(&m_pa, index, &value));
    EXPECT_EQ(nullptr, value);
    EXPECT_EQ(UCS_OK, ucs_ptr_array_remove(&m_pa, index, NULL));
}

TEST_F(ucs_ptr_array, free_slots_are_reused)
{
    for (uintptr_t i = 0; i < 10; ++i) {
        insert(value_of(i * 8));
    }
    EXPECT_EQ(UCS_OK, ucs_ptr_array_remove(&m_pa, 3, NULL));
    EXPECT_EQ(UCS_OK, ucs_ptr_array_remove(&m_pa, 7, NULL));

    /* most recently freed first */
    EXPECT_EQ(7u, insert(value_of(0x700)));
    EXPECT_EQ(3u, insert(value_of(0x300)));
    EXPECT_EQ(10u, insert(value_of(0xa00)));
    EXPECT_EQ(11u, ucs_ptr_array_count(&m_pa));
    remove_all();
}

TEST_F(ucs_ptr_array, replace)
{
    void *old_value;
    unsigned index = insert(value_of(0x20));

    EXPECT_EQ(UCS_OK,
              ucs_ptr_array_replace(&m_pa, index, value_of(0x40), &old_value));
    EXPECT_EQ(value_of(0x20), old_value);
    EXPECT_EQ(UCS_ERR_NO_ELEM,
              ucs_ptr_array_replace(&m_pa, index + 1, value_of(0x40), NULL));
    {
        ucs::scoped_log_capture capture;
        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  ucs_ptr_array_replace(&m_pa, index, value_of(0x41), NULL));
    }
    EXPECT_EQ(UCS_OK, ucs_ptr_array_remove(&m_pa, index, &old_value));
    EXPECT_EQ(value_of(0x40), old_value);
}

TEST_F(ucs_ptr_array, for_each_in_order_with_removal)
{
    std::vector<unsigned> seen;
    unsigned index;
    char *value;

    for (uintptr_t i = 0; i < 30; ++i) {
        insert(value_of(i * 2));
    }
    for (unsigned i = 0; i < 30; i += 3) {
        ASSERT_EQ(UCS_OK, ucs_ptr_array_remove(&m_pa, i, NULL));
    }

    ucs_ptr_array_for_each(value, index, &m_pa) {
        EXPECT_EQ(reinterpret_cast<char *>(index * 2), value);
        seen.push_back(index);
        if (index % 2) {
            /* removing the current one does not disturb the walk */
            EXPECT_EQ(UCS_OK, ucs_ptr_array_remove(&m_pa, index, NULL));
        }
    }
    ASSERT_EQ(20u, seen.size());
    for (size_t i = 1; i < seen.size(); ++i) {
        EXPECT_LT(seen[i - 1], seen[i]);
        EXPECT_NE(0u, seen[i] % 3);
    }
    EXPECT_EQ(10u, ucs_ptr_array_count(&m_pa));
    remove_all();
}

TEST_F(ucs_ptr_array, grows_large)
{
    const unsigned count = ucs::test_scale(100000);
    std::set<unsigned> indexes;
    void *value;

    for (uintptr_t i = 0; i < count; ++i) {
        indexes.insert(insert(value_of(i << 1)));
    }
    EXPECT_EQ(count, indexes.size());
    EXPECT_EQ(count, ucs_ptr_array_count(&m_pa));
    for (unsigned i = 0; i < count; ++i) {
        ASSERT_TRUE(ucs_ptr_array_lookup(&m_pa, i, &value));
        ASSERT_EQ(value_of((uintptr_t)i << 1), value);
    }
    remove_all();
}

TEST_F(ucs_ptr_array, cleanup_warns_about_leftovers)
{
    ucs_ptr_array_t pa;

    ucs_ptr_array_init(&pa, "leaky");
    unsigned index;
    ASSERT_EQ(UCS_OK, ucs_ptr_array_insert(&pa, value_of(0x10), &index));
    ASSERT_EQ(UCS_OK, ucs_ptr_array_insert(&pa, value_of(0x20), &index));
    {
        ucs::scoped_log_capture capture;
        ucs_ptr_array_cleanup(&pa, 1);
        EXPECT_TRUE(capture.contains("'leaky': 2 value(s)"));
    }

    /* without leak check: silent */
    ucs_ptr_array_init(&pa, "quiet");
    ASSERT_EQ(UCS_OK, ucs_ptr_array_insert(&pa, value_of(0x10), &index));
    ucs_ptr_array_cleanup(&pa, 0);
}

} // namespace
