#include <common/test.h>

extern "C" {
#include <ucs/type/cpu_set.h>
}

class ucs_cpuset : public ucs::test {};

TEST_F(ucs_cpuset, set_clear_count)
{
    ucs_cpu_set_t set;

    UCS_CPU_ZERO(&set);
    EXPECT_EQ(0u, ucs_cpu_set_count(&set));
    EXPECT_EQ(-1, ucs_cpu_set_first(&set));

    UCS_CPU_SET(3, &set);
    UCS_CPU_SET(64, &set);
    UCS_CPU_SET(1023, &set);
    UCS_CPU_SET(3, &set); /* twice */
    EXPECT_EQ(3u, ucs_cpu_set_count(&set));
    EXPECT_TRUE(UCS_CPU_ISSET(3, &set));
    EXPECT_TRUE(UCS_CPU_ISSET(64, &set));
    EXPECT_TRUE(UCS_CPU_ISSET(1023, &set));
    EXPECT_FALSE(UCS_CPU_ISSET(0, &set));
    EXPECT_FALSE(UCS_CPU_ISSET(63, &set));
    EXPECT_EQ(3, ucs_cpu_set_first(&set));

    UCS_CPU_CLR(3, &set);
    EXPECT_FALSE(UCS_CPU_ISSET(3, &set));
    EXPECT_EQ(2u, ucs_cpu_set_count(&set));
    EXPECT_EQ(64, ucs_cpu_set_first(&set));
}

TEST_F(ucs_cpuset, capacity_and_out_of_range)
{
    ucs_cpu_set_t set;

    EXPECT_GE(UCS_CPU_SETSIZE, 1024);
    EXPECT_GE(sizeof(set) * 8, (size_t)UCS_CPU_SETSIZE);

    UCS_CPU_ZERO(&set);
    UCS_CPU_SET(UCS_CPU_SETSIZE, &set); /* ignored */
    UCS_CPU_SET(UCS_CPU_SETSIZE + 7, &set);
    EXPECT_EQ(0u, ucs_cpu_set_count(&set));
    EXPECT_FALSE(UCS_CPU_ISSET(UCS_CPU_SETSIZE, &set));
    EXPECT_FALSE(UCS_CPU_ISSET(-1, &set));
    UCS_CPU_CLR(UCS_CPU_SETSIZE, &set);

    for (int cpu = 0; cpu < UCS_CPU_SETSIZE; ++cpu) {
        UCS_CPU_SET(cpu, &set);
    }
    EXPECT_EQ((unsigned)UCS_CPU_SETSIZE, ucs_cpu_set_count(&set));
}

TEST_F(ucs_cpuset, copy_by_value)
{
    ucs_cpu_set_t a, b;

    UCS_CPU_ZERO(&a);
    UCS_CPU_SET(17, &a);
    b = a;
    UCS_CPU_CLR(17, &a);
    EXPECT_TRUE(UCS_CPU_ISSET(17, &b));
    EXPECT_FALSE(UCS_CPU_ISSET(17, &a));
}
