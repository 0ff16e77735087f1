#include <common/test.h>

#include <ucs/datastruct/hash.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>

/* Inside a namespace so that the fixtures may share the names of the C
 * structures they test (struct ucs_mpool, ...). */
namespace {

void *value_of(uintptr_t v)
{
    return reinterpret_cast<void *>(v);
}

class ucs_hash : public ucs::test {
protected:
    virtual void SetUp()
    {
        ucs::test::SetUp();
        ASSERT_EQ(UCS_OK, ucs_hash_init(&m_hash, 0));
    }

    virtual void TearDown()
    {
        ucs_hash_cleanup(&m_hash);
        ucs::test::TearDown();
    }

    ucs_hash_t m_hash;
};

TEST_F(ucs_hash, put_get_remove)
{
    void *value;

    EXPECT_EQ(0u, ucs_hash_size(&m_hash));
    EXPECT_EQ(UCS_OK, ucs_hash_put(&m_hash, 7, value_of(0x70)));
    EXPECT_EQ(UCS_OK, ucs_hash_put(&m_hash, 0, value_of(0x0)));
    EXPECT_EQ(UCS_OK, ucs_hash_put(&m_hash, UINT64_MAX, value_of(0xff)));
    EXPECT_EQ(3u, ucs_hash_size(&m_hash));

    ASSERT_EQ(UCS_OK, ucs_hash_get(&m_hash, 7, &value));
    EXPECT_EQ(value_of(0x70), value);
    ASSERT_EQ(UCS_OK, ucs_hash_get(&m_hash, 0, &value));
    EXPECT_EQ(nullptr, value);
    ASSERT_EQ(UCS_OK, ucs_hash_get(&m_hash, UINT64_MAX, &value));
    EXPECT_EQ(value_of(0xff), value);

    ASSERT_EQ(UCS_OK, ucs_hash_remove(&m_hash, 7, &value));
    EXPECT_EQ(value_of(0x70), value);
    EXPECT_EQ(2u, ucs_hash_size(&m_hash));
    EXPECT_EQ(UCS_OK, ucs_hash_remove(&m_hash, 0, NULL));
    EXPECT_EQ(1u, ucs_hash_size(&m_hash));
}

TEST_F(ucs_hash, missing_key_leaves_output_alone)
{
    void *value = value_of(0x1234);

    EXPECT_EQ(UCS_ERR_NO_ELEM, ucs_hash_get(&m_hash, 5, &value));
    EXPECT_EQ(UCS_ERR_NO_ELEM, ucs_hash_remove(&m_hash, 5, &value));
    EXPECT_EQ(value_of(0x1234), value);

    ASSERT_EQ(UCS_OK, ucs_hash_put(&m_hash, 5, value_of(8)));
    ASSERT_EQ(UCS_OK, ucs_hash_remove(&m_hash, 5, NULL));
    EXPECT_EQ(UCS_ERR_NO_ELEM, ucs_hash_get(&m_hash, 5, &value));
    EXPECT_EQ(UCS_ERR_NO_ELEM, ucs_hash_remove(&m_hash, 5, NULL));
    EXPECT_EQ(value_of(0x1234), value);
}

TEST_F(ucs_hash, duplicate_put_is_rejected)
{
    void *value;

    ASSERT_EQ(UCS_OK, ucs_hash_put(&m_hash, 42, value_of(1)));
    EXPECT_EQ(UCS_ERR_ALREADY_EXISTS, ucs_hash_put(&m_hash, 42, value_of(2)));
    ASSERT_EQ(UCS_OK, ucs_hash_get(&m_hash, 42, &value));
    EXPECT_EQ(value_of(1), value);
    EXPECT_EQ(1u, ucs_hash_size(&m_hash));
}

TEST_F(ucs_hash, grows_from_small_capacity)
{
    const uint64_t count = ucs::test_scale(50000);
    void *value;

    for (uint64_t i = 0; i < count; ++i) {
        ASSERT_EQ(UCS_OK, ucs_hash_put(&m_hash, i * 0x10001, value_of(i)));
    }
    EXPECT_EQ(count, ucs_hash_size(&m_hash));
    EXPECT_GE(m_hash.num_buckets * 3 / 4, count);

    for (uint64_t i = 0; i < count; ++i) {
        ASSERT_EQ(UCS_OK, ucs_hash_get(&m_hash, i * 0x10001, &value));
        ASSERT_EQ(value_of(i), value);
    }
    EXPECT_EQ(UCS_ERR_NO_ELEM, ucs_hash_get(&m_hash, 3, &value));
}

TEST_F(ucs_hash, initial_capacity_avoids_growth)
{
    ucs_hash_t hash;
    size_t buckets;

    ASSERT_EQ(UCS_OK, ucs_hash_init(&hash, 1000));
    buckets = hash.num_buckets;
    for (uint64_t i = 0; i < 1000; ++i) {
        ASSERT_EQ(UCS_OK, ucs_hash_put(&hash, i, value_of(i)));
    }
    EXPECT_EQ(buckets, hash.num_buckets);
    ucs_hash_cleanup(&hash);
}

TEST_F(ucs_hash, huge_capacity_is_rejected)
{
    ucs_hash_t hash;
    ucs::scoped_log_capture capture;

    EXPECT_EQ(UCS_ERR_INVALID_PARAM, ucs_hash_init(&hash, SIZE_MAX / 2));
    EXPECT_TRUE(capture.contains("too large"));
}

TEST_F(ucs_hash, churn_does_not_grow_forever)
{
    const unsigned rounds = ucs::test_scale(20000);
    void *value;

    /* A steady population with constant insert/remove turnover must reuse
     * tombstones instead of doubling the table again and again. */
    for (uint64_t i = 0; i < 10; ++i) {
        ASSERT_EQ(UCS_OK, ucs_hash_put(&m_hash, i, value_of(i)));
    }
    for (uint64_t i = 10; i < 10 + rounds; ++i) {
        ASSERT_EQ(UCS_OK, ucs_hash_put(&m_hash, i, value_of(i)));
        ASSERT_EQ(UCS_OK, ucs_hash_remove(&m_hash, i - 10, &value));
        ASSERT_EQ(value_of(i - 10), value);
        ASSERT_EQ(10u, ucs_hash_size(&m_hash));
    }
    EXPECT_LE(m_hash.num_buckets, 64u);
    for (uint64_t i = rounds; i < rounds + 10; ++i) {
        ASSERT_EQ(UCS_OK, ucs_hash_get(&m_hash, i, &value));
        EXPECT_EQ(value_of(i), value);
    }
}

TEST_F(ucs_hash, iteration_visits_each_entry_once)
{
    std::map<uint64_t, void *> seen;
    ucs_hash_iter_t iter;
    uint64_t key;
    void *value;

    for (uint64_t i = 1; i <= 100; ++i) {
        ASSERT_EQ(UCS_OK, ucs_hash_put(&m_hash, i * 977, value_of(i)));
    }

    ucs_hash_for_each(key, value, iter, &m_hash) {
        EXPECT_TRUE(seen.insert(std::make_pair(key, value)).second);
    }
    ASSERT_EQ(100u, seen.size());
    for (auto &kv : seen) {
        EXPECT_EQ(value_of(kv.first / 977), kv.second);
    }

    /* the cursor stays at the end */
    EXPECT_EQ(0, ucs_hash_next(&m_hash, &iter, &key, &value));
}

TEST_F(ucs_hash, remove_during_iteration)
{
    std::set<uint64_t> seen;
    ucs_hash_iter_t iter;
    uint64_t key;
    void *value;

    for (uint64_t i = 0; i < 200; ++i) {
        ASSERT_EQ(UCS_OK, ucs_hash_put(&m_hash, i, value_of(i)));
    }

    ucs_hash_for_each(key, value, iter, &m_hash) {
        EXPECT_TRUE(seen.insert(key).second);
        if (key % 2) {
            EXPECT_EQ(UCS_OK, ucs_hash_remove(&m_hash, key, NULL));
        }
    }
    EXPECT_EQ(200u, seen.size());
    EXPECT_EQ(100u, ucs_hash_size(&m_hash));

    seen.clear();
    ucs_hash_for_each(key, value, iter, &m_hash) {
        EXPECT_EQ(0u, key % 2);
        seen.insert(key);
    }
    EXPECT_EQ(100u, seen.size());
}

TEST_F(ucs_hash, random_ops_match_model)
{
    const unsigned num_ops = ucs::test_scale(50000);
    std::map<uint64_t, uintptr_t> model;
    void *value;

    srand(7);
    for (unsigned op = 0; op < num_ops; ++op) {
        uint64_t key = rand() % 512;
        uintptr_t v  = rand();
        switch (rand() % 3) {
        case 0: {
            ucs_status_t status = ucs_hash_put(&m_hash, key, value_of(v));
            if (model.count(key)) {
                ASSERT_EQ(UCS_ERR_ALREADY_EXISTS, status);
            } else {
                ASSERT_EQ(UCS_OK, status);
                model[key] = v;
            }
            break;
        }
        case 1:
            if (model.count(key)) {
                ASSERT_EQ(UCS_OK, ucs_hash_get(&m_hash, key, &value));
                ASSERT_EQ(value_of(model[key]), value);
            } else {
                ASSERT_EQ(UCS_ERR_NO_ELEM, ucs_hash_get(&m_hash, key, &value));
            }
            break;
        case 2:
            if (model.count(key)) {
                ASSERT_EQ(UCS_OK, ucs_hash_remove(&m_hash, key, &value));
                ASSERT_EQ(value_of(model[key]), value);
                model.erase(key);
            } else {
                ASSERT_EQ(UCS_ERR_NO_ELEM,
                          ucs_hash_remove(&m_hash, key, &value));
            }
            break;
        }
        ASSERT_EQ(model.size(), ucs_hash_size(&m_hash));
    }
}

TEST_F(ucs_hash, string_hash_function)
{
    EXPECT_EQ(ucs_hash_string("endpoint"), ucs_hash_string("endpoint"));
    EXPECT_NE(ucs_hash_string("endpoint"), ucs_hash_string("endpoinu"));
    EXPECT_NE(ucs_hash_string(""), ucs_hash_string("a"));
    EXPECT_NE(ucs_hash_u64(1), ucs_hash_u64(2));
}

class ucs_hash_str : public ucs::test {
protected:
    virtual void SetUp()
    {
        ucs::test::SetUp();
        ASSERT_EQ(UCS_OK, ucs_hash_str_init(&m_hash, 4));
    }

    virtual void TearDown()
    {
        ucs_hash_str_cleanup(&m_hash);
        ucs::test::TearDown();
    }

    ucs_hash_str_t m_hash;
};

TEST_F(ucs_hash_str, keys_are_copied)
{
    char key[16];
    void *value;

    strcpy(key, "tcp");
    ASSERT_EQ(UCS_OK, ucs_hash_str_put(&m_hash, key, value_of(1)));
    strcpy(key, "self");
    ASSERT_EQ(UCS_OK, ucs_hash_str_put(&m_hash, key, value_of(2)));
    strcpy(key, "xxx");

    ASSERT_EQ(UCS_OK, ucs_hash_str_get(&m_hash, "tcp", &value));
    EXPECT_EQ(value_of(1), value);
    ASSERT_EQ(UCS_OK, ucs_hash_str_get(&m_hash, "self", &value));
    EXPECT_EQ(value_of(2), value);
    EXPECT_EQ(UCS_ERR_NO_ELEM, ucs_hash_str_get(&m_hash, "xxx", &value));
    EXPECT_EQ(2u, ucs_hash_str_size(&m_hash));
}

TEST_F(ucs_hash_str, duplicate_and_remove)
{
    void *value;

    ASSERT_EQ(UCS_OK, ucs_hash_str_put(&m_hash, "rc_verbs", value_of(4)));
    EXPECT_EQ(UCS_ERR_ALREADY_EXISTS,
              ucs_hash_str_put(&m_hash, "rc_verbs", value_of(6)));
    ASSERT_EQ(UCS_OK, ucs_hash_str_remove(&m_hash, "rc_verbs", &value));
    EXPECT_EQ(value_of(4), value);
    EXPECT_EQ(UCS_ERR_NO_ELEM, ucs_hash_str_remove(&m_hash, "rc_verbs", NULL));
    EXPECT_EQ(0u, ucs_hash_str_size(&m_hash));
    ASSERT_EQ(UCS_OK, ucs_hash_str_put(&m_hash, "rc_verbs", value_of(6)));
}

TEST_F(ucs_hash_str, many_keys_and_iteration)
{
    const unsigned count = ucs::test_scale(5000);
    std::set<std::string> seen;
    ucs_hash_iter_t iter;
    const char *key;
    void *value;

    for (unsigned i = 0; i < count; ++i) {
        std::string k = "key-" + std::to_string(i);
        ASSERT_EQ(UCS_OK, ucs_hash_str_put(&m_hash, k.c_str(), value_of(i)));
    }
    EXPECT_EQ(count, ucs_hash_str_size(&m_hash));

    ucs_hash_str_for_each(key, value, iter, &m_hash) {
        ASSERT_EQ(0, strncmp(key, "key-", 4));
        EXPECT_EQ(value_of(strtoul(key + 4, NULL, 10)), value);
        EXPECT_TRUE(seen.insert(key).second);
    }
    EXPECT_EQ(count, seen.size());

    for (unsigned i = 0; i < count; i += 2) {
        std::string k = "key-" + std::to_string(i);
        ASSERT_EQ(UCS_OK, ucs_hash_str_remove(&m_hash, k.c_str(), NULL));
    }
    EXPECT_EQ(count / 2, ucs_hash_str_size(&m_hash));
}

} // namespace
