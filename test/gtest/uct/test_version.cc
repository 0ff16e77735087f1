/*
 * The version macros as programs written for UCX use them: they choose
 * between API generations in the preprocessor, so the values must be
 * built the way UCX builds them and select the API this library has.
 */
#include <common/test.h>

#include <uct/api/uct.h>

/* The tests clients make, evaluated by the preprocessor */
#if UCT_API >= UCT_VERSION(1, 7)
static const bool uct_version_api_1_7 = true;
#else
static const bool uct_version_api_1_7 = false;
#endif

#if UCT_API >= UCT_VERSION(1, 9)
static const bool uct_version_api_1_9 = true;
#else
static const bool uct_version_api_1_9 = false;
#endif

#if UCT_API >= UCT_VERSION(2, 0)
static const bool uct_version_api_2_0 = true;
#else
static const bool uct_version_api_2_0 = false;
#endif

class uct_version : public ucs::test {};

TEST_F(uct_version, encoding_as_ucx)
{
    EXPECT_EQ(24UL, UCT_MAJOR_BIT);
    EXPECT_EQ(16UL, UCT_MINOR_BIT);
    EXPECT_EQ((1UL << 24) | (7UL << 16), (unsigned long)UCT_VERSION(1, 7));
    EXPECT_EQ((2UL << 24) | (1UL << 16), (unsigned long)UCT_VERSION(2, 1));
    EXPECT_EQ((unsigned long)UCT_VERSION(UCT_VERNO_MAJOR, UCT_VERNO_MINOR),
              (unsigned long)UCT_API);
}

TEST_F(uct_version, level_is_ucx_1_13)
{
    EXPECT_EQ(1, UCT_VERNO_MAJOR);
    EXPECT_EQ(13, UCT_VERNO_MINOR);
    char expect[32];
    snprintf(expect, sizeof(expect), "%d.%d.%d", UCT_VERNO_MAJOR,
             UCT_VERNO_MINOR, UCT_VERNO_PATCH);
    EXPECT_STREQ(expect, UCT_VERNO_STRING);
}

TEST_F(uct_version, preprocessor_tests_pick_the_modern_api)
{
    EXPECT_TRUE(uct_version_api_1_7);
    EXPECT_TRUE(uct_version_api_1_9);
    EXPECT_FALSE(uct_version_api_2_0);
}

TEST_F(uct_version, module_version_is_separate)
{
    /* the module interface keeps its own numbers, in the encoding of
     * UCS_MODULE_API_VERSION() */
    EXPECT_EQ(((unsigned)UCT_MODULE_API_MAJOR << 16) |
                  (unsigned)UCT_MODULE_API_MINOR,
              (unsigned)UCT_MODULE_API_VERSION);
    EXPECT_NE((unsigned long)UCT_API, (unsigned long)UCT_MODULE_API_VERSION);
    EXPECT_STRNE("", OPENUCT_VERSION_STRING);
}
