#include <common/test.h>

#include "ucx_headers_c.h"

/* The headers a UCX program includes, by UCX's paths, next to uct.h */
#include <uct/api/uct.h>
#include <ucs/datastruct/linear_func.h>
#include <ucs/profile/profile_on.h>
#include <ucs/stats/stats_fwd.h>
#include <ucs/sys/math.h>
#include <ucs/sys/string.h>
#include <ucs/sys/sys.h>
#include <ucs/sys/topo/base/topo.h>

#include <climits>
#include <cstdint>
#include <cstring>
#include <string>
#include <unistd.h>

namespace {

class ucs_string : public ucs::test {
protected:
    /* A buffer with a guard after @a size bytes, to see overruns */
    struct guarded {
        explicit guarded(size_t size) : m_size(size)
        {
            memset(m_buf, 'X', sizeof(m_buf));
        }

        char *buf()
        {
            return m_buf;
        }

        bool intact() const
        {
            for (size_t i = m_size; i < sizeof(m_buf); ++i) {
                if (m_buf[i] != 'X') {
                    return false;
                }
            }
            return true;
        }

        size_t m_size;
        char m_buf[64];
    };

    static std::string memunits(size_t value)
    {
        char buf[32];
        return ucs_memunits_to_str(value, buf, sizeof(buf));
    }

    /* The parsed size, or "invalid" */
    static std::string parse(const char *str)
    {
        size_t value = 12345;
        char buf[32];

        if (ucs_str_to_memunits(str, &value) != UCS_OK) {
            EXPECT_EQ(12345u, value) << "output set on failure: " << str;
            return "invalid";
        }

        snprintf(buf, sizeof(buf), "%zu", value);
        return buf;
    }
};

TEST_F(ucs_string, snprintf_safe)
{
    guarded g(5);

    ucs_snprintf_safe(g.buf(), 0, "%s", "abc");
    EXPECT_EQ('X', g.buf()[0]);

    ucs_snprintf_safe(g.buf(), 1, "%s", "abc");
    EXPECT_STREQ("", g.buf());

    ucs_snprintf_safe(g.buf(), 5, "%d-%s", 12, "abcdef");
    EXPECT_STREQ("12-a", g.buf());
    EXPECT_TRUE(g.intact());

    ucs_snprintf_safe(g.buf(), 5, "%d", 7);
    EXPECT_STREQ("7", g.buf());
    EXPECT_EQ('\0', g.buf()[1]);
    EXPECT_EQ('-', g.buf()[2]); /* the rest is left alone */
}

TEST_F(ucs_string, snprintf_zero)
{
    guarded g(8);

    ucs_snprintf_zero(g.buf(), 0, "%s", "abc");
    EXPECT_EQ('X', g.buf()[0]);

    ucs_snprintf_zero(g.buf(), 8, "%s", "ab");
    EXPECT_STREQ("ab", g.buf());
    for (size_t i = 2; i < 8; ++i) {
        EXPECT_EQ('\0', g.buf()[i]) << i;
    }
    EXPECT_TRUE(g.intact());

    ucs_snprintf_zero(g.buf(), 8, "%s", "0123456789");
    EXPECT_STREQ("0123456", g.buf());
    EXPECT_TRUE(g.intact());
}

TEST_F(ucs_string, strncpy_zero)
{
    guarded g(6);

    ucs_strncpy_zero(g.buf(), "abc", 0);
    EXPECT_EQ('X', g.buf()[0]);

    ucs_strncpy_zero(g.buf(), "abc", 1);
    EXPECT_STREQ("", g.buf());

    ucs_strncpy_zero(g.buf(), "ab", 6);
    EXPECT_STREQ("ab", g.buf());
    for (size_t i = 2; i < 6; ++i) {
        EXPECT_EQ('\0', g.buf()[i]) << i;
    }

    ucs_strncpy_zero(g.buf(), "abcdefgh", 6);
    EXPECT_STREQ("abcde", g.buf());
    EXPECT_TRUE(g.intact());
}

TEST_F(ucs_string, strncpy_safe)
{
    guarded g(4);
    /* not terminated: only the first len - 1 bytes may be read */
    const char unterminated[3] = {'x', 'y', 'z'};

    EXPECT_EQ(g.buf(), ucs_strncpy_safe(g.buf(), "abc", 0));
    EXPECT_EQ('X', g.buf()[0]);

    ucs_strncpy_safe(g.buf(), "abc", 1);
    EXPECT_STREQ("", g.buf());

    ucs_strncpy_safe(g.buf(), "ab", 4);
    EXPECT_STREQ("ab", g.buf());
    EXPECT_EQ('X', g.buf()[3]); /* not zero-filled */

    ucs_strncpy_safe(g.buf(), "abcdef", 4);
    EXPECT_STREQ("abc", g.buf());
    EXPECT_TRUE(g.intact());

    ucs_strncpy_safe(g.buf(), unterminated, 4);
    EXPECT_STREQ("xyz", g.buf());
}

TEST_F(ucs_string, memunits_to_str)
{
    EXPECT_EQ("0", memunits(0));
    EXPECT_EQ("1", memunits(1));
    EXPECT_EQ("1000", memunits(1000));
    EXPECT_EQ("1K", memunits(1024));
    EXPECT_EQ("1536", memunits(1536));
    EXPECT_EQ("3K", memunits(3 * UCS_KBYTE));
    EXPECT_EQ("1025K", memunits(1025 * UCS_KBYTE));
    EXPECT_EQ("64M", memunits(64 * UCS_MBYTE));
    EXPECT_EQ("4G", memunits(4 * UCS_GBYTE));
    EXPECT_EQ("3T", memunits(3 * UCS_TBYTE));
    EXPECT_EQ("1024T", memunits(UCS_PBYTE)); /* T is the largest unit */
    EXPECT_EQ("inf", memunits(UCS_MEMUNITS_INF));
    EXPECT_EQ("auto", memunits(UCS_MEMUNITS_AUTO));
    EXPECT_EQ("18446744073709551613", memunits(SIZE_MAX - 2));

    guarded g(3);
    EXPECT_EQ(g.buf(), ucs_memunits_to_str(123456, g.buf(), 3));
    EXPECT_STREQ("12", g.buf());
    ucs_memunits_to_str(UCS_MEMUNITS_INF, g.buf(), 3);
    EXPECT_STREQ("in", g.buf());
    EXPECT_TRUE(g.intact());
    ucs_memunits_to_str(1, g.buf(), 0);
    EXPECT_EQ('i', g.buf()[0]);
}

TEST_F(ucs_string, memunits_range_str)
{
    char buf[32];

    EXPECT_STREQ("4K", ucs_memunits_range_str(4096, 4096, buf, sizeof(buf)));
    EXPECT_STREQ("1K..4K",
                 ucs_memunits_range_str(1024, 4096, buf, sizeof(buf)));
    EXPECT_STREQ("0..inf",
                 ucs_memunits_range_str(0, UCS_MEMUNITS_INF, buf, sizeof(buf)));
    EXPECT_STREQ("1K.", ucs_memunits_range_str(1024, 4096, buf, 4));
}

TEST_F(ucs_string, str_to_memunits)
{
    EXPECT_EQ("0", parse("0"));
    EXPECT_EQ("64", parse("64"));
    EXPECT_EQ("64", parse("64b"));
    EXPECT_EQ("8192", parse("8k"));
    EXPECT_EQ("8192", parse("8K"));
    EXPECT_EQ("8192", parse("8kb"));
    EXPECT_EQ("8192", parse("8KB"));
    EXPECT_EQ("2097152", parse("2MB"));
    EXPECT_EQ("1073741824", parse("1g"));
    EXPECT_EQ("3298534883328", parse("3T"));
    EXPECT_EQ("18446744073709551615", parse("inf"));
    EXPECT_EQ("18446744073709551615", parse("INF"));
    EXPECT_EQ("18446744073709551614", parse("auto"));
    EXPECT_EQ("18446744073709551614", parse("Auto"));

    EXPECT_EQ("invalid", parse(""));
    EXPECT_EQ("invalid", parse("k"));
    EXPECT_EQ("invalid", parse("abc"));
    EXPECT_EQ("invalid", parse("-1"));
    EXPECT_EQ("invalid", parse("1x"));
    EXPECT_EQ("invalid", parse("1kk"));
    EXPECT_EQ("invalid", parse("1kib"));
    EXPECT_EQ("invalid", parse("1P"));
    EXPECT_EQ("invalid", parse("infinity"));
}

TEST_F(ucs_string, str_to_memunits_overflow)
{
    /* The largest size that is neither inf nor auto */
    EXPECT_EQ("18446744073709551613", parse("18446744073709551613"));
    /* The numbers of auto and inf themselves are refused */
    EXPECT_EQ("invalid", parse("18446744073709551614"));
    EXPECT_EQ("invalid", parse("18446744073709551615"));
    /* Past 64 bits, in the number or after the unit */
    EXPECT_EQ("invalid", parse("18446744073709551616"));
    EXPECT_EQ("invalid", parse("99999999999999999999999"));
    EXPECT_EQ("invalid", parse("16777216T"));    /* 2^64 */
    EXPECT_EQ("invalid", parse("17179869184G")); /* 2^64 */
    EXPECT_EQ("18446744072635809792", parse("17179869183G"));
    EXPECT_EQ("invalid", parse("18014398509481984k"));
}

TEST_F(ucs_string, memunits_round_trip)
{
    static const size_t values[] = {0,
                                    1,
                                    1023,
                                    1024,
                                    1536,
                                    4096,
                                    3 * UCS_MBYTE,
                                    5 * UCS_GBYTE,
                                    7 * UCS_TBYTE,
                                    UCS_PBYTE,
                                    SIZE_MAX - 2,
                                    UCS_MEMUNITS_INF,
                                    UCS_MEMUNITS_AUTO};

    for (size_t value : values) {
        char buf[32];
        size_t parsed = 0;

        ucs_memunits_to_str(value, buf, sizeof(buf));
        ASSERT_EQ(UCS_OK, ucs_str_to_memunits(buf, &parsed)) << buf;
        EXPECT_EQ(value, parsed) << buf;
    }
}

TEST_F(ucs_string, quantity_prefix)
{
    EXPECT_EQ(1u, ucs_string_quantity_prefix_value('B'));
    EXPECT_EQ(1u, ucs_string_quantity_prefix_value('b'));
    EXPECT_EQ(UCS_KBYTE, ucs_string_quantity_prefix_value('K'));
    EXPECT_EQ(UCS_MBYTE, ucs_string_quantity_prefix_value('m'));
    EXPECT_EQ(UCS_GBYTE, ucs_string_quantity_prefix_value('G'));
    EXPECT_EQ(UCS_TBYTE, ucs_string_quantity_prefix_value('t'));
    EXPECT_EQ(0u, ucs_string_quantity_prefix_value('X'));
    EXPECT_EQ(0u, ucs_string_quantity_prefix_value('\0'));
}

TEST_F(ucs_string, strtrim)
{
    char s1[] = "  a b \t\n";
    char s2[] = " \t ";
    char s3[] = "";
    char s4[] = "abc";

    EXPECT_STREQ("a b", ucs_strtrim(s1));
    EXPECT_STREQ("", ucs_strtrim(s2));
    EXPECT_STREQ("", ucs_strtrim(s3));
    EXPECT_EQ(s4, ucs_strtrim(s4));
    EXPECT_STREQ("abc", s4);
}

TEST_F(ucs_string, str_dump_hex)
{
    uint8_t data[10];
    char buf[64];

    for (size_t i = 0; i < sizeof(data); ++i) {
        data[i] = (uint8_t)(i * 0x11 + 0xa0);
    }

    EXPECT_STREQ(
        "a0b1c2d3:e4f50617:2839",
        ucs_str_dump_hex(data, sizeof(data), buf, sizeof(buf), SIZE_MAX));
    EXPECT_STREQ("a0b1c2d3\ne4f50617\n2839",
                 ucs_str_dump_hex(data, sizeof(data), buf, sizeof(buf), 4));
    EXPECT_STREQ("a0b1c2\nd3:e4f5\n0617:28\n39",
                 ucs_str_dump_hex(data, sizeof(data), buf, sizeof(buf), 3));
    EXPECT_STREQ("a0b1c2d3:e4f50617:2839",
                 ucs_str_dump_hex(data, sizeof(data), buf, sizeof(buf), 0));
    EXPECT_STREQ("", ucs_str_dump_hex(data, 0, buf, sizeof(buf), 16));

    /* Truncated: whole bytes only, always terminated, never past max */
    for (size_t max = 1; max < 24; ++max) {
        guarded g(max);
        std::string full = "a0b1c2d3:e4f50617:2839";

        ucs_str_dump_hex(data, sizeof(data), g.buf(), max, SIZE_MAX);
        std::string out = g.buf();
        EXPECT_LT(out.size(), max);
        EXPECT_EQ(full.substr(0, out.size()), out) << max;
        EXPECT_NE(':', out.empty() ? 0 : out.back()) << max;
        /* stops only when the next byte does not fit */
        EXPECT_GE(out.size() + 4, std::min<size_t>(max, full.size() + 1))
            << max;
        EXPECT_EQ(0u, out.size() % 9 % 2) << out;
        EXPECT_TRUE(g.intact()) << max;
    }

    guarded g(0);
    ucs_str_dump_hex(data, sizeof(data), g.buf(), 0, SIZE_MAX);
    EXPECT_TRUE(g.intact());
}

TEST_F(ucs_string, flags_str)
{
    const char *names[] = {"read", "write", "exec", NULL};
    char buf[32];

    EXPECT_STREQ("read,exec", ucs_flags_str(buf, sizeof(buf), 5, names));
    EXPECT_STREQ("write", ucs_flags_str(buf, sizeof(buf), 2, names));
    EXPECT_STREQ("", ucs_flags_str(buf, sizeof(buf), 0, names));
    /* bits past the table are ignored */
    EXPECT_STREQ("read", ucs_flags_str(buf, sizeof(buf), 0x11, names));
    EXPECT_STREQ("read,w", ucs_flags_str(buf, 7, 7, names));

    guarded g(1);
    ucs_flags_str(g.buf(), 1, 7, names);
    EXPECT_STREQ("", g.buf());
    EXPECT_TRUE(g.intact());
}

TEST_F(ucs_string, mask_str)
{
    ucs_string_buffer_t strb;

    ucs_string_buffer_init(&strb);
    EXPECT_STREQ("<none>", ucs_mask_str(0, &strb));
    ucs_string_buffer_reset(&strb);
    EXPECT_STREQ("0, 3, 5", ucs_mask_str(0x29, &strb));
    ucs_string_buffer_reset(&strb);
    EXPECT_STREQ("63", ucs_mask_str(UCS_BIT(63), &strb));
    /* appends */
    EXPECT_STREQ("631", ucs_mask_str(UCS_BIT(1), &strb));
    ucs_string_buffer_cleanup(&strb);
}

TEST_F(ucs_string, count_prefix_paths)
{
    char common[64];

    EXPECT_EQ(3u, ucs_string_count_char("/a/b/c", '/'));
    EXPECT_EQ(0u, ucs_string_count_char("", '/'));
    EXPECT_EQ(2u, ucs_string_common_prefix_len("abcd", "abxd"));
    EXPECT_EQ(0u, ucs_string_common_prefix_len("", "abc"));
    EXPECT_EQ(3u, ucs_string_common_prefix_len("abc", "abc"));

    ucs_path_get_common_parent("/sys/ab12", "/sys/ab23", common);
    EXPECT_STREQ("/sys", common);
    ucs_path_get_common_parent("/sys/a/b", "/sys/a/c/d", common);
    EXPECT_STREQ("/sys/a", common);
    ucs_path_get_common_parent("/a", "/b", common);
    EXPECT_STREQ("", common);

    EXPECT_EQ(3u, ucs_path_calc_distance("/a/b/c/d", "/a/x/y"));
    EXPECT_EQ(1u, ucs_path_calc_distance("/a/b/c/d", "/a/b/c/e"));
    EXPECT_EQ(0u, ucs_path_calc_distance("/a/b/c", "/a/b/c"));
    EXPECT_EQ(1u, ucs_path_calc_distance("/a/b/c", "/a/b/c/d"));
    EXPECT_EQ(1u, ucs_path_calc_distance("/a/bc", "/a/bd"));
}

TEST_F(ucs_string, find_split_misc)
{
    const char *list[] = {"tcp", "self", "RC_verbs", NULL};
    char str[]         = "a,b;c,d";
    char empty[]       = "";
    char *t1, *t2, *t3;
    char path[] = "/usr/lib/x86_64/libuct.so";
    char buf[64];

    EXPECT_EQ(1, ucs_string_find_in_list("self", list, 1));
    EXPECT_EQ(-1, ucs_string_find_in_list("rc_verbs", list, 1));
    EXPECT_EQ(2, ucs_string_find_in_list("rc_verbs", list, 0));
    EXPECT_EQ(-1, ucs_string_find_in_list("ud", list, 0));

    EXPECT_STREQ("c,d", ucs_string_split(str, ",;", 2, &t1, &t2));
    EXPECT_STREQ("a", t1);
    EXPECT_STREQ("b", t2);
    EXPECT_EQ(nullptr, ucs_string_split(empty, ",", 2, &t1, &t2));
    EXPECT_STREQ("", t1);
    EXPECT_EQ(nullptr, t2);
    char str2[] = "x:y";
    EXPECT_EQ(nullptr, ucs_string_split(str2, ":", 3, &t1, &t2, &t3));
    EXPECT_STREQ("x", t1);
    EXPECT_STREQ("y", t2);
    EXPECT_EQ(nullptr, t3);

    EXPECT_TRUE(ucs_string_is_empty(""));
    EXPECT_FALSE(ucs_string_is_empty("a"));
    EXPECT_STREQ("libuct.so", ucs_basename(path));
    EXPECT_STREQ("name", ucs_basename("name"));
    EXPECT_STREQ("", ucs_basename("dir/"));
    EXPECT_STREQ("/usr/lib", ucs_dirname(path, 2));

    uint64_t id = ucs_string_to_id("abcdefghij");
    EXPECT_EQ(0, memcmp(&id, "abcdefg", 8)); /* 7 characters and a '\0' */
    EXPECT_EQ(0u, ucs_string_to_id(""));

    ucs_fill_filename_template("f.%p.%%.%h", buf, sizeof(buf));
    EXPECT_EQ("f." + std::to_string(getpid()) + ".%." + ucs_get_host_name(),
              std::string(buf));
    guarded g(4);
    ucs_fill_filename_template("abcdef", g.buf(), 4);
    EXPECT_STREQ("abc", g.buf());
    EXPECT_TRUE(g.intact());

    ucs_expand_path("/abs/path", buf, sizeof(buf));
    EXPECT_STREQ("/abs/path", buf);
    char full[4096];
    ucs_expand_path("rel", full, sizeof(full));
    EXPECT_EQ('/', full[0]);
    EXPECT_STREQ("rel", ucs_basename(full));
}

class ucs_math : public ucs::test {};

TEST_F(ucs_math, constants_rounding)
{
    EXPECT_EQ(1024ull, UCS_KBYTE);
    EXPECT_EQ(1024ull * 1024, UCS_MBYTE);
    EXPECT_EQ(1024ull * UCS_MBYTE, UCS_GBYTE);
    EXPECT_EQ(1024ull * UCS_GBYTE, UCS_TBYTE);
    EXPECT_EQ(1024ull * UCS_TBYTE, UCS_PBYTE);

    EXPECT_EQ(3, ucs_min(3, 7));
    EXPECT_EQ(7, ucs_max(3, 7));
    EXPECT_EQ(16u, ucs_align_up(13u, 8u));
    EXPECT_EQ(15u, ucs_align_up(13u, 5u));
    EXPECT_EQ(8u, ucs_align_down(13u, 8u));
    EXPECT_EQ(16u, ucs_align_up_pow2(13u, 8u));
    EXPECT_EQ(8u, ucs_align_down_pow2(13u, 8u));
    EXPECT_EQ(3u, ucs_padding(13u, 8u));
    EXPECT_EQ(0u, ucs_padding(16u, 8u));
    EXPECT_EQ(2u, ucs_padding(13u, 5u));
    EXPECT_EQ(5u, ucs_padding_pow2(13u, 8u));
    EXPECT_EQ(0u, ucs_check_if_align_pow2(64u, 64u));

    char area[64];
    char *p = area + 5;
    EXPECT_EQ(0u, (uintptr_t)ucs_align_up_pow2_ptr(p, 16) % 16);
    EXPECT_LE(p, ucs_align_up_pow2_ptr(p, 16));
    EXPECT_GE(p, ucs_align_down_pow2_ptr(p, 16));
    EXPECT_EQ(0u, (uintptr_t)ucs_align_down_pow2_ptr(p, 16) % 16);

    EXPECT_EQ(0u, ucs_div_round_up(0u, 4u));
    EXPECT_EQ(1u, ucs_div_round_up(1u, 4u));
    EXPECT_EQ(2u, ucs_div_round_up(8u, 4u));
    EXPECT_EQ(3u, ucs_div_round_up(9u, 4u));
    /* no overflow near the top of the type */
    EXPECT_EQ(SIZE_MAX / 2 + 1, ucs_div_round_up(SIZE_MAX, (size_t)2));
    EXPECT_EQ(1u, ucs_div_round_up(UINT32_MAX, UINT32_MAX));

    EXPECT_EQ(-1, ucs_signum(-5));
    EXPECT_EQ(0, ucs_signum(0));
    EXPECT_EQ(1, ucs_signum(9));
    EXPECT_EQ(-1, ucs_signum(-0.5));

    EXPECT_EQ(3u, ucs_double_to_sizet(2.5, 100));
    EXPECT_EQ(2u, ucs_double_to_sizet(2.4, 100));
    EXPECT_EQ(100u, ucs_double_to_sizet(1e30, 100));
    EXPECT_EQ(0u, ucs_double_to_sizet(-3.0, 100));
    EXPECT_DOUBLE_EQ(10.0, ucs_log2(1024.0));
}

TEST_F(ucs_math, pow2_and_bits)
{
    EXPECT_TRUE(ucs_is_pow2(1));
    EXPECT_TRUE(ucs_is_pow2(64));
    EXPECT_FALSE(ucs_is_pow2(0));
    EXPECT_FALSE(ucs_is_pow2(12));
    EXPECT_TRUE(ucs_is_pow2_or_zero(0u));
    EXPECT_TRUE(ucs_is_pow2_or_zero(32u));
    EXPECT_FALSE(ucs_is_pow2_or_zero(33u));

    EXPECT_EQ(0u, ucs_ilog2(1));
    EXPECT_EQ(3u, ucs_ilog2(15));
    EXPECT_EQ(4u, ucs_ilog2(16));
    EXPECT_EQ(63u, ucs_ilog2(UINT64_MAX));
    EXPECT_EQ(0u, ucs_ilog2_or0(0));
    EXPECT_EQ(5u, ucs_ilog2_or0(32));

    EXPECT_EQ(1u, ucs_roundup_pow2(0u));
    EXPECT_EQ(1u, ucs_roundup_pow2(1u));
    EXPECT_EQ(16u, ucs_roundup_pow2(9u));
    EXPECT_EQ(16u, ucs_roundup_pow2(16u));
    EXPECT_EQ(UCS_BIT(63), ucs_roundup_pow2(UCS_BIT(62) + 1));
    EXPECT_EQ(0u, ucs_roundup_pow2_or0(0u));
    EXPECT_EQ(8u, ucs_roundup_pow2_or0(5u));
    EXPECT_EQ(8u, ucs_rounddown_pow2(15u));
    EXPECT_EQ(16u, ucs_rounddown_pow2(16u));
    EXPECT_EQ(1u, ucs_rounddown_pow2(1u));
    /* the result keeps the argument's type */
    uint8_t small = 100;
    EXPECT_EQ(sizeof(uint8_t), sizeof(ucs_roundup_pow2(small)));
    EXPECT_EQ(128, ucs_roundup_pow2(small));

    EXPECT_EQ(0u, ucs_popcount(0));
    EXPECT_EQ(3u, ucs_popcount(0x83));
    EXPECT_EQ(64u, ucs_popcount(UINT64_MAX));
    EXPECT_EQ(2u, ucs_ffs32(0x4c));
    EXPECT_EQ(40u, ucs_ffs64(UCS_BIT(40) | UCS_BIT(50)));
    EXPECT_EQ(64u, ucs_ffs64_safe(0));
    EXPECT_EQ(4u, ucs_count_trailing_zero_bits(16));
    EXPECT_EQ(27u, ucs_count_leading_zero_bits((uint32_t)16));
    EXPECT_EQ(59u, ucs_count_leading_zero_bits((uint64_t)16));

    EXPECT_EQ(0x7ull, UCS_MASK_SAFE(3));
    EXPECT_EQ(UINT64_MAX, UCS_MASK_SAFE(64));
    EXPECT_EQ(UINT64_MAX, UCS_MASK_SAFE(70));

    std::string bits;
    unsigned bit;
    ucs_for_each_bit(bit, UCS_BIT(0) | UCS_BIT(7) | UCS_BIT(63)) {
        bits += std::to_string(bit) + " ";
    }
    EXPECT_EQ("0 7 63 ", bits);
    ucs_for_each_bit(bit, 0) {
        ADD_FAILURE() << bit;
    }

    uint64_t sub, seen = 0;
    unsigned count = 0;
    ucs_for_each_submask(sub, 0xb) {
        EXPECT_EQ(sub, sub & 0xb);
        EXPECT_FALSE(seen & UCS_BIT(sub));
        seen |= UCS_BIT(sub);
        ++count;
    }
    EXPECT_EQ(8u, count);
    count = 0;
    ucs_for_each_submask(sub, 0) {
        EXPECT_EQ(0u, sub);
        ++count;
    }
    EXPECT_EQ(1u, count);
    count = 0;
    ucs_for_each_submask(sub, UCS_BIT(63) | 1) {
        ++count;
    }
    EXPECT_EQ(4u, count);
}

TEST_F(ucs_math, flags_and_circular)
{
    EXPECT_EQ(0x10, ucs_convert_flag(0x3, 0x2, 0x10));
    EXPECT_EQ(0, ucs_convert_flag(0x1, 0x2, 0x10));
    EXPECT_TRUE(ucs_test_flags(0x5, 0x2, 0x4));
    EXPECT_FALSE(ucs_test_flags(0x5, 0x2, 0x8));
    EXPECT_TRUE(
        ucs_test_flags(0x100, 1, 2, 4, 8, 0x10, 0x20, 0x40, 0x80, 0x100));
    EXPECT_TRUE(ucs_test_all_flags(0x7, 0x5));
    EXPECT_FALSE(ucs_test_all_flags(0x3, 0x5));

    uint8_t a8 = 250, b8 = 3; /* b8 wrapped past a8 */
    EXPECT_TRUE(UCS_CIRCULAR_COMPARE8(a8, <, b8));
    EXPECT_FALSE(UCS_CIRCULAR_COMPARE8(a8, >, b8));
    uint16_t a16 = 65535, b16 = 0;
    EXPECT_TRUE(UCS_CIRCULAR_COMPARE16(b16, >, a16));
    uint32_t a32 = 10, b32 = 10;
    EXPECT_TRUE(UCS_CIRCULAR_COMPARE32(a32, ==, b32));
    EXPECT_TRUE(UCS_CIRCULAR_COMPARE32(a32, <=, b32));
    uint64_t a64 = UINT64_MAX, b64 = 1;
    EXPECT_TRUE(UCS_CIRCULAR_COMPARE64(a64, <, b64));
}

/* Profiled code: the macros must leave values and effects untouched */
int profiled_calls;

UCS_PROFILE_FUNC(int, profiled_mul, (a, b), int a, int b)
{
    ++profiled_calls;
    return a * b;
}

static UCS_PROFILE_FUNC_VOID(profiled_add, (n), int n)
{
    profiled_calls += n;
}

int profiled_next(int *counter)
{
    return ++(*counter);
}

class ucs_profile_macros : public ucs::test {};

TEST_F(ucs_profile_macros, keep_code)
{
    int counter = 0;
    int value;

    profiled_calls = 0;
    UCS_PROFILE_SCOPE_BEGIN();
    value = UCS_PROFILE_CALL(profiled_mul, 6, 7);
    UCS_PROFILE_SCOPE_END("mul");
    EXPECT_EQ(42, value);
    EXPECT_EQ(1, profiled_calls);

    /* arguments with side effects are evaluated exactly once */
    EXPECT_EQ(1, UCS_PROFILE_NAMED_CALL("next", profiled_next, &counter));
    EXPECT_EQ(1, counter);
    UCS_PROFILE_CALL_VOID(profiled_add, profiled_next(&counter));
    EXPECT_EQ(3, profiled_calls);
    EXPECT_EQ(2, counter);
    UCS_PROFILE_NAMED_CALL_VOID("add", profiled_add, 10);
    EXPECT_EQ(13, profiled_calls);

    UCS_PROFILE_CODE("block")
    {
        ++counter;
    }
    EXPECT_EQ(3, counter);

    /* usable as the body of an if without braces */
    if (counter == 3)
        UCS_PROFILE_SAMPLE("three");
    else
        ADD_FAILURE();

    UCS_PROFILE_REQUEST_NEW(&counter, "req", 0);
    UCS_PROFILE_REQUEST_EVENT(&counter, "progress", 1);
    UCS_PROFILE_REQUEST_EVENT_CHECK_STATUS(&counter, "done", 2, UCS_OK);
    UCS_PROFILE_REQUEST_FREE(&counter);
    UCS_PROFILE(UCS_PROFILE_TYPE_SAMPLE, "x", 0, 0);
    EXPECT_EQ(3, counter);
    EXPECT_EQ(13, profiled_calls);
}

/* The UCX header paths and the helpers, compiled as C */
TEST_F(ucs_profile_macros, c_program)
{
    char buf[16];
    ucs_stats_node_t *root     = NULL;
    ucs_stats_counter_t ctr    = 5;
    ucs_stats_formats_t format = UCS_STATS_SUMMARY;
    ucs_profile_type_t type    = UCS_PROFILE_TYPE_SCOPE_END;

    EXPECT_EQ(42, ucs_test_ucx_headers_c(buf, sizeof(buf)));
    EXPECT_STREQ("2M", buf);
    EXPECT_EQ(nullptr, root);
    EXPECT_EQ(5u, ctr);
    EXPECT_EQ(UCS_STATS_SUMMARY, format);
    EXPECT_EQ(UCS_PROFILE_TYPE_SCOPE_END, type);
}

} // namespace
