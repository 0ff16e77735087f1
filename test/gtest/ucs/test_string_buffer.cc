#include <common/test.h>

#include <ucs/datastruct/string_buffer.h>

#include <cstring>
#include <string>

/* Inside a namespace so that the fixtures may share the names of the C
 * structures they test (struct ucs_mpool, ...). */
namespace {

class ucs_string_buffer : public ucs::test {
protected:
    virtual void SetUp()
    {
        ucs::test::SetUp();
        ucs_string_buffer_init(&m_strb);
    }

    virtual void TearDown()
    {
        ucs_string_buffer_cleanup(&m_strb);
        ucs::test::TearDown();
    }

    std::string str() const
    {
        return ucs_string_buffer_cstr(&m_strb);
    }

    ucs_string_buffer_t m_strb;
};

TEST_F(ucs_string_buffer, empty)
{
    ASSERT_NE(nullptr, ucs_string_buffer_cstr(&m_strb));
    EXPECT_EQ("", str());
    EXPECT_EQ(0u, ucs_string_buffer_length(&m_strb));
    ucs_string_buffer_rtrim(&m_strb, NULL);
    ucs_string_buffer_reset(&m_strb);
    EXPECT_EQ("", str());
}

TEST_F(ucs_string_buffer, appendf)
{
    EXPECT_EQ(UCS_OK, ucs_string_buffer_appendf(&m_strb, "%s=%d", "a", 1));
    EXPECT_EQ(UCS_OK,
              ucs_string_buffer_appendf(&m_strb, ", %s=%.1f", "b", 2.5));
    EXPECT_EQ(UCS_OK, ucs_string_buffer_appendf(&m_strb, "%s", ""));
    EXPECT_EQ("a=1, b=2.5", str());
    EXPECT_EQ(strlen("a=1, b=2.5"), ucs_string_buffer_length(&m_strb));
}

TEST_F(ucs_string_buffer, grows_for_long_text)
{
    std::string expected;

    for (int i = 0; i < 2000; ++i) {
        ASSERT_EQ(UCS_OK, ucs_string_buffer_appendf(&m_strb, "[%d]", i));
        expected += "[" + std::to_string(i) + "]";
    }
    EXPECT_EQ(expected, str());
    EXPECT_EQ(expected.size(), ucs_string_buffer_length(&m_strb));

    std::string big(100000, 'x');
    ASSERT_EQ(UCS_OK, ucs_string_buffer_appendf(&m_strb, "%s", big.c_str()));
    EXPECT_EQ(expected + big, str());
}

TEST_F(ucs_string_buffer, append_flags)
{
    static const char *names[] = {"read", "write", "exec", NULL};

    EXPECT_EQ(UCS_OK, ucs_string_buffer_append_flags(&m_strb, 0, names));
    EXPECT_EQ("", str());

    EXPECT_EQ(UCS_OK, ucs_string_buffer_append_flags(&m_strb, 0x7, names));
    EXPECT_EQ("read|write|exec", str());

    ucs_string_buffer_reset(&m_strb);
    EXPECT_EQ(UCS_OK, ucs_string_buffer_append_flags(&m_strb, 0x5, names));
    EXPECT_EQ("read|exec", str());

    /* bits without a name are written as numbers */
    ucs_string_buffer_reset(&m_strb);
    EXPECT_EQ(UCS_OK,
              ucs_string_buffer_append_flags(
                  &m_strb, UCS_BIT(1) | UCS_BIT(5) | UCS_BIT(63), names));
    EXPECT_EQ("write|5|63", str());

    ucs_string_buffer_reset(&m_strb);
    EXPECT_EQ(UCS_OK, ucs_string_buffer_append_flags(&m_strb, 0x9, NULL));
    EXPECT_EQ("0|3", str());

    /* appends after existing text */
    ucs_string_buffer_reset(&m_strb);
    ucs_string_buffer_appendf(&m_strb, "flags: ");
    EXPECT_EQ(UCS_OK, ucs_string_buffer_append_flags(&m_strb, 0x2, names));
    EXPECT_EQ("flags: write", str());
}

TEST_F(ucs_string_buffer, rtrim)
{
    ucs_string_buffer_appendf(&m_strb, "a b, c, \t\n");
    ucs_string_buffer_rtrim(&m_strb, NULL);
    EXPECT_EQ("a b, c,", str());
    ucs_string_buffer_rtrim(&m_strb, ", ");
    EXPECT_EQ("a b, c", str());
    ucs_string_buffer_rtrim(&m_strb, "xyz");
    EXPECT_EQ("a b, c", str());
    ucs_string_buffer_rtrim(&m_strb, "abc, ");
    EXPECT_EQ("", str());
    EXPECT_EQ(0u, ucs_string_buffer_length(&m_strb));

    ucs_string_buffer_appendf(&m_strb, "x|y|");
    ucs_string_buffer_rtrim(&m_strb, "|");
    EXPECT_EQ("x|y", str());
    EXPECT_EQ(3u, ucs_string_buffer_length(&m_strb));
}

TEST_F(ucs_string_buffer, reset_and_reuse)
{
    ucs_string_buffer_appendf(&m_strb, "first");
    ucs_string_buffer_reset(&m_strb);
    EXPECT_EQ("", str());
    ucs_string_buffer_appendf(&m_strb, "second");
    EXPECT_EQ("second", str());

    ucs_string_buffer_cleanup(&m_strb);
    EXPECT_EQ("", str());
    ucs_string_buffer_appendf(&m_strb, "third");
    EXPECT_EQ("third", str());
}

} // namespace
