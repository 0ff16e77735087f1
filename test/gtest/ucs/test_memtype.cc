#include <common/test.h>

extern "C" {
#include <ucs/memory/memory_type.h>
#include <ucs/type/thread_mode.h>
}

#include <set>
#include <string>

class ucs_memtype : public ucs::test {};

TEST_F(ucs_memtype, names)
{
    std::set<std::string> names;
    ucs_memory_type_t mem_type;
    unsigned count = 0;

    ucs_memory_type_for_each(mem_type) {
        ASSERT_NE(nullptr, ucs_memory_type_names[mem_type]);
        ASSERT_NE(nullptr, ucs_memory_type_descs[mem_type]);
        names.insert(ucs_memory_type_names[mem_type]);
        ++count;
    }
    EXPECT_EQ((unsigned)UCS_MEMORY_TYPE_LAST, count);
    EXPECT_EQ(count, names.size()); /* distinct */
    EXPECT_STREQ("host", ucs_memory_type_names[UCS_MEMORY_TYPE_HOST]);
    EXPECT_STREQ("cuda", ucs_memory_type_names[UCS_MEMORY_TYPE_CUDA]);
    EXPECT_STREQ("cuda-managed",
                 ucs_memory_type_names[UCS_MEMORY_TYPE_CUDA_MANAGED]);
    EXPECT_STREQ("ze-device", ucs_memory_type_names[UCS_MEMORY_TYPE_ZE_DEVICE]);
    EXPECT_EQ(UCS_MEMORY_TYPE_LAST, UCS_MEMORY_TYPE_UNKNOWN);
    EXPECT_STREQ("unknown", ucs_memory_type_names[UCS_MEMORY_TYPE_UNKNOWN]);
    EXPECT_EQ(9, UCS_MEMORY_TYPE_LAST);
}

TEST_F(ucs_memtype, from_str)
{
    ucs_memory_type_t mem_type;

    ucs_memory_type_for_each(mem_type) {
        EXPECT_EQ(mem_type,
                  ucs_memory_type_from_str(ucs_memory_type_names[mem_type]));
    }
    EXPECT_EQ(UCS_MEMORY_TYPE_ROCM_MANAGED,
              ucs_memory_type_from_str("ROCM_MANAGED"));
    EXPECT_EQ(UCS_MEMORY_TYPE_HOST, ucs_memory_type_from_str("Host"));
    EXPECT_EQ(UCS_MEMORY_TYPE_UNKNOWN, ucs_memory_type_from_str("hos"));
    EXPECT_EQ(UCS_MEMORY_TYPE_UNKNOWN, ucs_memory_type_from_str("hosts"));
    EXPECT_EQ(UCS_MEMORY_TYPE_UNKNOWN, ucs_memory_type_from_str(""));
    EXPECT_EQ(UCS_MEMORY_TYPE_UNKNOWN, ucs_memory_type_from_str(NULL));
}

TEST_F(ucs_memtype, cpu_accessible)
{
    uint64_t mask = UCS_MEMORY_TYPES_CPU_ACCESSIBLE;

    EXPECT_TRUE(mask & UCS_BIT(UCS_MEMORY_TYPE_HOST));
    EXPECT_TRUE(mask & UCS_BIT(UCS_MEMORY_TYPE_CUDA_MANAGED));
    EXPECT_TRUE(mask & UCS_BIT(UCS_MEMORY_TYPE_ROCM_MANAGED));
    EXPECT_FALSE(mask & UCS_BIT(UCS_MEMORY_TYPE_CUDA));
    EXPECT_FALSE(mask & UCS_BIT(UCS_MEMORY_TYPE_ROCM));
    EXPECT_FALSE(mask & UCS_BIT(UCS_MEMORY_TYPE_RDMA));
    EXPECT_FALSE(mask & UCS_BIT(UCS_MEMORY_TYPE_ZE_DEVICE));
}

TEST_F(ucs_memtype, thread_mode_names)
{
    EXPECT_STREQ("single", ucs_thread_mode_names[UCS_THREAD_MODE_SINGLE]);
    EXPECT_STREQ("serialized",
                 ucs_thread_mode_names[UCS_THREAD_MODE_SERIALIZED]);
    EXPECT_STREQ("multi", ucs_thread_mode_names[UCS_THREAD_MODE_MULTI]);
    EXPECT_EQ(nullptr, ucs_thread_mode_names[UCS_THREAD_MODE_LAST]);
}
