/*
 * Configuration parser: value types, sources and their precedence, nested
 * tables, get/set/clone, printing, unknown variables, global options.
 */
#include <common/test.h>

extern "C" {
#include <ucs/config/global_opts.h>
#include <ucs/config/parser.h>
#include <ucs/config/types.h>
#include <ucs/debug/log.h>
}

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

namespace {

const char *test_colors[] = {"red", "green", "blue", NULL};
const char *test_flags[]  = {"alpha", "beta", "gamma", "delta", NULL};

struct test_sub_opts_t {
    unsigned queue_len;
    size_t seg_size;
    char *dev_name;
};

struct test_opts_t {
    char *str;
    int integer;
    unsigned uinteger;
    unsigned long ulong_val;
    unsigned long ulunits;
    double dbl;
    int flag;
    int ternary;
    int ternary_auto;
    unsigned color;
    unsigned flags;
    size_t mem;
    double time;
    double bw;
    ucs_config_names_array_t devices;
    ucs_config_allow_list_t tls;
    ucs_range_spec_t ports;
    int hidden;
    test_sub_opts_t sub;
};

/* Offsets inside test_sub_opts_t */
ucs_config_field_t test_sub_table[] = {
    {"QUEUE_LEN", "16", "Queue length", offsetof(test_sub_opts_t, queue_len),
     UCS_CONFIG_TYPE_UINT},
    {"SEG_SIZE", "8k", "Segment size", offsetof(test_sub_opts_t, seg_size),
     UCS_CONFIG_TYPE_MEMUNITS},
    {"DEV_NAME", "dev0", "Device name", offsetof(test_sub_opts_t, dev_name),
     UCS_CONFIG_TYPE_STRING},
    {NULL}};

ucs_config_field_t test_table[] = {
    {"STR", "hello", "A string\nwith two lines", offsetof(test_opts_t, str),
     UCS_CONFIG_TYPE_STRING},
    {"INT", "-7", "An integer", offsetof(test_opts_t, integer),
     UCS_CONFIG_TYPE_INT},
    {"UINT", "7", "An unsigned", offsetof(test_opts_t, uinteger),
     UCS_CONFIG_TYPE_UINT},
    {"ULONG", "70000000000", "An unsigned long",
     offsetof(test_opts_t, ulong_val), UCS_CONFIG_TYPE_ULONG},
    {"ULUNITS", "auto", "Unsigned long units", offsetof(test_opts_t, ulunits),
     UCS_CONFIG_TYPE_ULUNITS},
    {"DOUBLE", "2.5", "A double", offsetof(test_opts_t, dbl),
     UCS_CONFIG_TYPE_DOUBLE},
    {"FLAG", "y", "A boolean", offsetof(test_opts_t, flag),
     UCS_CONFIG_TYPE_BOOL},
    {"TERNARY", "try", "A ternary", offsetof(test_opts_t, ternary),
     UCS_CONFIG_TYPE_TERNARY},
    {"TERNARY_AUTO", "auto", "A ternary with auto",
     offsetof(test_opts_t, ternary_auto), UCS_CONFIG_TYPE_TERNARY_AUTO},
    {"COLOR", "green", "An enum", offsetof(test_opts_t, color),
     UCS_CONFIG_TYPE_ENUM(test_colors)},
    {"FLAGS", "alpha,gamma", "A bitmap", offsetof(test_opts_t, flags),
     UCS_CONFIG_TYPE_BITMAP(test_flags)},
    {"MEM", "64k", "Memory units", offsetof(test_opts_t, mem),
     UCS_CONFIG_TYPE_MEMUNITS},
    {"TIME", "10ms", "A time", offsetof(test_opts_t, time),
     UCS_CONFIG_TYPE_TIME},
    {"BW", "10Gbps", "A bandwidth", offsetof(test_opts_t, bw),
     UCS_CONFIG_TYPE_BW},
    {"DEVICES", "mlx5_0:1,eth0", "A string array",
     offsetof(test_opts_t, devices), UCS_CONFIG_TYPE_STRING_ARRAY},
    {"TLS", "all", "An allow list", offsetof(test_opts_t, tls),
     UCS_CONFIG_TYPE_ALLOW_LIST},
    {"PORTS", "1000-2000", "A range", offsetof(test_opts_t, ports),
     UCS_CONFIG_TYPE_RANGE},
    {"HIDDEN", "3", NULL, offsetof(test_opts_t, hidden), UCS_CONFIG_TYPE_INT},
    {"OLD_KNOB", NULL, "Removed", 0, UCS_CONFIG_TYPE_DEPRECATED},
    {"SUB_", "QUEUE_LEN=32;DEV_NAME=dev1", NULL, offsetof(test_opts_t, sub),
     UCS_CONFIG_TYPE_TABLE(test_sub_table)},
    {NULL}};

/* Registered for the whole process with the public macro */
UCS_CONFIG_REGISTER_TABLE(test_table, "Parser test", "CFGTEST_", test_opts_t)

const char *memunits_help = "memory units: <number>[b|kb|mb|gb|tb], \"inf\", "
                            "or \"auto\"";

/* Removes every UCX_CFGTEST_* variable a test may have left behind */
void unset_test_env()
{
    static const char *names[] = {"UCX_CFGTEST_STR",
                                  "UCX_CFGTEST_INT",
                                  "UCX_CFGTEST_UINT",
                                  "UCX_CFGTEST_MEM",
                                  "UCX_CFGTEST_TIME",
                                  "UCX_CFGTEST_OLD_KNOB",
                                  "UCX_CFGTEST_QUEUE_LEN",
                                  "UCX_SUB_QUEUE_LEN",
                                  "UCX_QUEUE_LEN",
                                  "UCX_INT",
                                  "UCX_MEM",
                                  NULL};
    for (int i = 0; names[i] != NULL; ++i) {
        unsetenv(names[i]);
    }
}

std::string write_temp_file(const std::string &text)
{
    char path[] = "/tmp/openuct-cfg-XXXXXX";
    int fd      = mkstemp(path);
    EXPECT_GE(fd, 0);
    if (fd >= 0) {
        EXPECT_EQ((ssize_t)text.size(), write(fd, text.data(), text.size()));
        close(fd);
    }
    return path;
}

} // namespace

class ucs_config_parser_test : public ucs::test {
protected:
    void SetUp() override
    {
        ucs::test::SetUp();
        unset_test_env();
        memset(&m_opts, 0, sizeof(m_opts));
        ASSERT_EQ(UCS_OK, ucs_config_parser_fill_opts(&m_opts, test_table, NULL,
                                                      "CFGTEST_", 0));
        m_filled = true;
    }

    void TearDown() override
    {
        if (m_filled) {
            ucs_config_parser_release_opts(&m_opts, test_table);
        }
        unset_test_env();
        ucs::test::TearDown();
    }

    std::string get(const char *name)
    {
        char value[256];
        EXPECT_EQ(UCS_OK, ucs_config_parser_get_value(&m_opts, test_table, name,
                                                      value, sizeof(value)));
        return value;
    }

    ucs_status_t set(const char *name, const char *value)
    {
        return ucs_config_parser_set_value(&m_opts, test_table, name, value);
    }

    /* set() a good value and check how it reads back */
    void check_good(const char *name, const char *value, const char *written)
    {
        EXPECT_EQ(UCS_OK, set(name, value)) << name << "=" << value;
        EXPECT_EQ(written, get(name)) << name << "=" << value;
    }

    /* set() a bad value: refused with the error line, old value kept */
    void check_bad(const char *name, const char *value, const std::string &help)
    {
        std::string before = get(name);
        ucs::scoped_log_capture capture;
        EXPECT_EQ(UCS_ERR_INVALID_PARAM, set(name, value))
            << name << "=" << value;
        EXPECT_TRUE(capture.contains(std::string("invalid value for ") + name +
                                     ": '" + value + "' (expected: " + help +
                                     ")"))
            << name << "=" << value;
        EXPECT_EQ(before, get(name));
    }

    std::string print(unsigned flags, const char *title = "Test options")
    {
        char *buf    = NULL;
        size_t size  = 0;
        FILE *stream = open_memstream(&buf, &size);
        ucs_config_parser_print_opts(stream, title, &m_opts, test_table,
                                     "CFGTEST_", NULL, flags);
        fclose(stream);
        std::string text(buf, size);
        free(buf);
        return text;
    }

    test_opts_t m_opts;
    bool m_filled;
};

TEST_F(ucs_config_parser_test, defaults)
{
    EXPECT_STREQ("hello", m_opts.str);
    EXPECT_EQ(-7, m_opts.integer);
    EXPECT_EQ(7u, m_opts.uinteger);
    EXPECT_EQ(70000000000ul, m_opts.ulong_val);
    EXPECT_EQ(UCS_ULUNITS_AUTO, m_opts.ulunits);
    EXPECT_DOUBLE_EQ(2.5, m_opts.dbl);
    EXPECT_EQ(1, m_opts.flag);
    EXPECT_EQ(UCS_TRY, m_opts.ternary);
    EXPECT_EQ(UCS_AUTO, m_opts.ternary_auto);
    EXPECT_EQ(1u, m_opts.color);
    EXPECT_EQ((1u << 0) | (1u << 2), m_opts.flags);
    EXPECT_EQ(65536u, m_opts.mem);
    EXPECT_DOUBLE_EQ(0.01, m_opts.time);
    EXPECT_DOUBLE_EQ(10.0 * 1024 * 1024 * 1024 / 8, m_opts.bw);
    ASSERT_EQ(2u, m_opts.devices.count);
    EXPECT_STREQ("mlx5_0:1", m_opts.devices.names[0]);
    EXPECT_STREQ("eth0", m_opts.devices.names[1]);
    EXPECT_EQ(UCS_CONFIG_ALLOW_LIST_ALLOW_ALL, m_opts.tls.mode);
    EXPECT_EQ(1000u, m_opts.ports.first);
    EXPECT_EQ(2000u, m_opts.ports.last);
    EXPECT_EQ(3, m_opts.hidden);
    /* the table field's default overrides the sub-table's defaults */
    EXPECT_EQ(32u, m_opts.sub.queue_len);
    EXPECT_EQ(8192u, m_opts.sub.seg_size);
    EXPECT_STREQ("dev1", m_opts.sub.dev_name);
}

TEST_F(ucs_config_parser_test, scalar_types)
{
    check_good("STR", "", "");
    check_good("STR", "a b,c", "a b,c");
    check_good("INT", "-2147483648", "-2147483648");
    check_good("INT", "+12", "12");
    check_good("UINT", "4294967295", "4294967295");
    check_good("ULONG", "18446744073709551615", "18446744073709551615");
    check_good("ULUNITS", "inf", "inf");
    EXPECT_EQ(UCS_ULUNITS_INF, m_opts.ulunits);
    check_good("ULUNITS", "AUTO", "auto");
    check_good("ULUNITS", "123", "123");
    check_good("DOUBLE", "-1e-3", "-0.001");
    check_good("DOUBLE", "1234567", "1234567");

    check_bad("INT", "2147483648", "integer");
    check_bad("INT", "12abc", "integer");
    check_bad("INT", "", "integer");
    check_bad("INT", " 1", "integer");
    check_bad("UINT", "-1", "unsigned integer");
    check_bad("UINT", "4294967296", "unsigned integer");
    check_bad("ULONG", "18446744073709551616", "unsigned long integer");
    check_bad("ULUNITS", "lots",
              "unsigned long: <number>, \"inf\", or "
              "\"auto\"");
    check_bad("DOUBLE", "1.5x", "floating point number");
    check_bad("DOUBLE", "nan", "floating point number");
}

TEST_F(ucs_config_parser_test, bool_ternary)
{
    static const char *yes[] = {"y", "Yes", "1", "on", "ON"};
    static const char *no[]  = {"n", "NO", "0", "off"};

    for (const char *value : yes) {
        check_good("FLAG", value, "y");
        EXPECT_EQ(1, m_opts.flag);
        check_good("TERNARY", value, "y");
        EXPECT_EQ(UCS_YES, m_opts.ternary);
    }
    for (const char *value : no) {
        check_good("FLAG", value, "n");
        EXPECT_EQ(0, m_opts.flag);
        check_good("TERNARY", value, "n");
        EXPECT_EQ(UCS_NO, m_opts.ternary);
    }

    check_good("TERNARY", "try", "try");
    EXPECT_EQ(UCS_TRY, m_opts.ternary);
    check_good("TERNARY_AUTO", "y", "y");
    check_good("TERNARY_AUTO", "auto", "auto");
    EXPECT_EQ(UCS_AUTO, m_opts.ternary_auto);

    check_bad("FLAG", "maybe", "boolean: y|n (also yes|no, on|off, 1|0)");
    check_bad("FLAG", "2", "boolean: y|n (also yes|no, on|off, 1|0)");
    check_bad("TERNARY", "auto", "y|n|try");
    check_bad("TERNARY_AUTO", "sometimes", "y|n|try|auto");
}

TEST_F(ucs_config_parser_test, enum_bitmap)
{
    check_good("COLOR", "BLUE", "blue");
    EXPECT_EQ(2u, m_opts.color);
    check_good("COLOR", "red", "red");
    check_bad("COLOR", "purple", "one of: red|green|blue");
    check_bad("COLOR", "", "one of: red|green|blue");

    check_good("FLAGS", "delta,beta", "beta,delta");
    EXPECT_EQ((1u << 1) | (1u << 3), m_opts.flags);
    check_good("FLAGS", "", "");
    EXPECT_EQ(0u, m_opts.flags);
    check_bad("FLAGS", "alpha,omega",
              "comma-separated list of: alpha|beta|gamma|delta");
    check_bad("FLAGS", "alpha,",
              "comma-separated list of: alpha|beta|gamma|delta");
}

/* Found by test/fuzz/fuzz_config: names past the 32 bits of the value were
 * printed for the bits of their index modulo 32 (an undefined shift). */
TEST_F(ucs_config_parser_test, bitmap_with_more_names_than_bits)
{
    static const char *names[] = {
        "n0",  "n1",  "n2",  "n3",  "n4",  "n5",  "n6",  "n7",  "n8",
        "n9",  "n10", "n11", "n12", "n13", "n14", "n15", "n16", "n17",
        "n18", "n19", "n20", "n21", "n22", "n23", "n24", "n25", "n26",
        "n27", "n28", "n29", "n30", "n31", "n32", "n33", NULL};
    ucs_config_parser_t parser = UCS_CONFIG_TYPE_BITMAP(names);
    unsigned value             = 0;
    char buf[256];

    ASSERT_EQ(UCS_OK, parser.read("n0,n1,n31", &value, parser.arg));
    EXPECT_EQ(0x80000003u, value);
    parser.write(buf, sizeof(buf), &value, parser.arg);
    EXPECT_STREQ("n0,n1,n31", buf);

    /* a name past the bits of the value is refused, not wrapped */
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, parser.read("n32", &value, parser.arg));
    EXPECT_EQ(0x80000003u, value);
}

TEST_F(ucs_config_parser_test, memunits)
{
    static const struct {
        const char *value;
        size_t bytes;
        const char *written;
    } good[] = {{"0", 0, "0"},
                {"100", 100, "100"},
                {"10b", 10, "10"},
                {"1k", 1024, "1k"},
                {"2KB", 2048, "2k"},
                {"1536", 1536, "1536"},
                {"3m", 3ul << 20, "3m"},
                {"1mb", 1ul << 20, "1m"},
                {"1024m", 1ul << 30, "1g"},
                {"4G", 4ul << 30, "4g"},
                {"2gb", 2ul << 30, "2g"},
                {"1t", 1ul << 40, "1t"},
                {"inf", UCS_MEMUNITS_INF, "inf"},
                {"auto", UCS_MEMUNITS_AUTO, "auto"}};

    for (const auto &entry : good) {
        check_good("MEM", entry.value, entry.written);
        EXPECT_EQ(entry.bytes, m_opts.mem) << entry.value;
    }

    for (const char *bad : {"abc", "-1", "1x", "", "k", "1 k", "1.5k",
                            "99999999999t", "18446744073709551615"}) {
        check_bad("MEM", bad, memunits_help);
    }
}

TEST_F(ucs_config_parser_test, time)
{
    static const struct {
        const char *value;
        double seconds;
        const char *written;
    } good[] = {{"2s", 2.0, "2s"},      {"3", 3.0, "3s"},
                {"1.5", 1.5, "1500ms"}, {"10ms", 0.01, "10ms"},
                {"5us", 5e-6, "5us"},   {"100ns", 1e-7, "100ns"},
                {"0", 0.0, "0"},        {"2.5US", 2.5e-6, "2500ns"}};

    for (const auto &entry : good) {
        check_good("TIME", entry.value, entry.written);
        EXPECT_NEAR(entry.seconds, m_opts.time, entry.seconds * 1e-12)
            << entry.value;
    }

    check_good("TIME", "inf", "inf");
    EXPECT_TRUE(std::isinf(m_opts.time));

    for (const char *bad : {"1min", "-1s", "abc", "", "10 ms", "s"}) {
        check_bad("TIME", bad,
                  "time value: <number>[s|ms|us|ns], or "
                  "\"inf\"");
    }
}

/* Found by test/fuzz/fuzz_config: a time within a millionth of a whole
 * number of some unit was printed as that number, and read back as
 * another value. */
TEST_F(ucs_config_parser_test, time_is_printed_exactly)
{
    check_good("TIME", ".5118446744073709551615ms", "511.844674407371us");
    EXPECT_NEAR(0.0005118446744073709551615, m_opts.time, 1e-18);
    check_good("TIME", "1.0000005ms", "1.0000005ms");
    EXPECT_NEAR(1.0000005e-3, m_opts.time, 1e-18);
    check_good("TIME", "1e300", "1e+300s");
    check_good("TIME", "0.25ns", "0.25ns");
    /* whole numbers still take the largest unit */
    check_good("TIME", "0.5", "500ms");
}

TEST_F(ucs_config_parser_test, bandwidth_is_printed_exactly)
{
    static const char *help = "bandwidth: <number>[K|M|G|T]<B|b>[ps|/s] "
                              "(B bytes, b bits, 1K=1024), or \"auto\"";

    /* used to print 6 digits: "1.23457KBs" */
    check_good("BW", "1.2345678KBs", "1.2345678KBs");
    EXPECT_DOUBLE_EQ(1.2345678 * 1024, m_opts.bw);
    check_good("BW", "0.5", "0.5Bs");
    check_good("BW", "0", "0Bs");
    /* used to be accepted as an infinite bandwidth, printed "infTBs" */
    check_bad("BW", "1e308TBs", help);
}

TEST_F(ucs_config_parser_test, bandwidth)
{
    const double gib        = 1024.0 * 1024 * 1024;
    static const char *help = "bandwidth: <number>[K|M|G|T]<B|b>[ps|/s] "
                              "(B bytes, b bits, 1K=1024), or \"auto\"";

    check_good("BW", "10Gbps", "1280MBs");
    EXPECT_DOUBLE_EQ(10 * gib / 8, m_opts.bw);
    check_good("BW", "1GBs", "1GBs");
    EXPECT_DOUBLE_EQ(gib, m_opts.bw);
    check_good("BW", "100MB/s", "100MBs");
    EXPECT_DOUBLE_EQ(100.0 * 1024 * 1024, m_opts.bw);
    check_good("BW", "12.5GB/s", "12800MBs");
    check_good("BW", "8kbps", "1KBs");
    check_good("BW", "512", "512Bs");
    check_good("BW", "2TB", "2TBs");
    check_good("BW", "auto", "auto");
    EXPECT_EQ(UCS_CONFIG_BW_AUTO, m_opts.bw);

    for (const char *bad :
         {"fast", "10G", "10Gbit", "-1GBs", "10GBps/s", "", "1XBs"}) {
        check_bad("BW", bad, help);
    }
}

TEST_F(ucs_config_parser_test, arrays_and_ranges)
{
    check_good("DEVICES", "a,b,c", "a,b,c");
    ASSERT_EQ(3u, m_opts.devices.count);
    EXPECT_STREQ("c", m_opts.devices.names[2]);
    EXPECT_EQ(1, ucs_config_names_search(&m_opts.devices, "b"));
    EXPECT_EQ(-1, ucs_config_names_search(&m_opts.devices, "d"));
    check_good("DEVICES", "", "");
    EXPECT_EQ(0u, m_opts.devices.count);
    check_bad("DEVICES", "a,,b", "comma-separated list of names");
    check_bad("DEVICES", "a,", "comma-separated list of names");

    check_good("TLS", "rc,ud", "rc,ud");
    EXPECT_EQ(UCS_CONFIG_ALLOW_LIST_ALLOW, m_opts.tls.mode);
    EXPECT_TRUE(ucs_config_allow_list_is_allowed(&m_opts.tls, "ud"));
    EXPECT_FALSE(ucs_config_allow_list_is_allowed(&m_opts.tls, "tcp"));
    check_good("TLS", "^ib", "^ib");
    EXPECT_EQ(UCS_CONFIG_ALLOW_LIST_NEGATE, m_opts.tls.mode);
    EXPECT_FALSE(ucs_config_allow_list_is_allowed(&m_opts.tls, "ib"));
    EXPECT_TRUE(ucs_config_allow_list_is_allowed(&m_opts.tls, "tcp"));
    check_good("TLS", "ALL", "all");
    EXPECT_TRUE(ucs_config_allow_list_is_allowed(&m_opts.tls, "anything"));
    check_good("TLS", "", "");
    EXPECT_FALSE(ucs_config_allow_list_is_allowed(&m_opts.tls, "tcp"));
    check_bad("TLS", "^a,,b",
              "comma-separated list of names, \"^\" in "
              "front to allow all but them, or \"all\"");

    check_good("PORTS", "5000-5010", "5000-5010");
    EXPECT_EQ(5000u, m_opts.ports.first);
    EXPECT_EQ(5010u, m_opts.ports.last);
    check_good("PORTS", "7", "7-7");
    for (const char *bad : {"10-5", "a-b", "1-", "-5", "1-2-3", ""}) {
        check_bad("PORTS", bad, "range: <first>-<last> (or one number)");
    }
}

TEST_F(ucs_config_parser_test, get_set_unknown_and_nested)
{
    char value[32];

    EXPECT_EQ(UCS_ERR_NO_ELEM,
              ucs_config_parser_get_value(&m_opts, test_table, "NOPE", value,
                                          sizeof(value)));
    EXPECT_EQ(UCS_ERR_NO_ELEM, set("NOPE", "1"));
    EXPECT_EQ(UCS_OK,
              ucs_config_parser_get_value(&m_opts, test_table, "MEM", NULL, 0));

    /* nested fields by plain name and with the table field's name */
    check_good("QUEUE_LEN", "64", "64");
    EXPECT_EQ(64u, m_opts.sub.queue_len);
    check_good("SUB_SEG_SIZE", "16k", "16k");
    EXPECT_EQ(16384u, m_opts.sub.seg_size);
    EXPECT_EQ("16k", get("SEG_SIZE"));

    /* a short buffer truncates */
    ASSERT_EQ(UCS_OK, ucs_config_parser_get_value(&m_opts, test_table, "STR",
                                                  value, 3));
    EXPECT_STREQ("he", value);

    {
        ucs::scoped_log_capture capture;
        EXPECT_EQ(UCS_OK, set("OLD_KNOB", "1"));
        EXPECT_TRUE(capture.contains("OLD_KNOB is deprecated"));
    }
}

TEST_F(ucs_config_parser_test, clone_is_deep)
{
    test_opts_t copy;

    memset(&copy, 0xff, sizeof(copy));
    ASSERT_EQ(UCS_OK, ucs_config_parser_clone_opts(&m_opts, &copy, test_table));
    ASSERT_EQ(UCS_OK, set("STR", "changed"));
    ASSERT_EQ(UCS_OK, set("DEVICES", "x"));
    ASSERT_EQ(UCS_OK, set("DEV_NAME", "other"));

    EXPECT_STREQ("hello", copy.str);
    ASSERT_EQ(2u, copy.devices.count);
    EXPECT_STREQ("eth0", copy.devices.names[1]);
    EXPECT_STREQ("dev1", copy.sub.dev_name);
    EXPECT_EQ(m_opts.mem, copy.mem);
    EXPECT_EQ(m_opts.ports.last, copy.ports.last);
    EXPECT_EQ(32u, copy.sub.queue_len);

    ucs_config_parser_release_opts(&copy, test_table);
    EXPECT_EQ(NULL, copy.str);
}

TEST_F(ucs_config_parser_test, env_table_prefix_and_fallback)
{
    test_opts_t opts;

    ucs::scoped_setenv generic_int("UCX_INT", "3");
    ucs::scoped_setenv generic_mem("UCX_MEM", "1m");
    ucs::scoped_setenv specific_mem("UCX_CFGTEST_MEM", "2m");
    ucs::scoped_setenv str("UCX_CFGTEST_STR", "from env");

    ASSERT_EQ(UCS_OK, ucs_config_parser_fill_opts(&opts, test_table, "UCX_",
                                                  "CFGTEST_", 0));
    EXPECT_EQ(3, opts.integer);    /* generic fallback */
    EXPECT_EQ(2u << 20, opts.mem); /* the prefixed name wins */
    EXPECT_STREQ("from env", opts.str);
    EXPECT_EQ(7u, opts.uinteger); /* untouched default */
    ucs_config_parser_release_opts(&opts, test_table);
}

TEST_F(ucs_config_parser_test, env_nested_table_precedence)
{
    test_opts_t opts;

    {
        ucs::scoped_setenv generic("UCX_QUEUE_LEN", "100");
        ASSERT_EQ(UCS_OK, ucs_config_parser_fill_opts(&opts, test_table, NULL,
                                                      "CFGTEST_", 0));
        EXPECT_EQ(100u, opts.sub.queue_len);
        ucs_config_parser_release_opts(&opts, test_table);

        ucs::scoped_setenv sub("UCX_SUB_QUEUE_LEN", "200");
        ASSERT_EQ(UCS_OK, ucs_config_parser_fill_opts(&opts, test_table, NULL,
                                                      "CFGTEST_", 0));
        EXPECT_EQ(200u, opts.sub.queue_len);
        ucs_config_parser_release_opts(&opts, test_table);

        ucs::scoped_setenv top("UCX_CFGTEST_QUEUE_LEN", "300");
        ASSERT_EQ(UCS_OK, ucs_config_parser_fill_opts(&opts, test_table, NULL,
                                                      "CFGTEST_", 0));
        EXPECT_EQ(300u, opts.sub.queue_len);
        ucs_config_parser_release_opts(&opts, test_table);
    }

    /* another environment prefix */
    ucs::scoped_setenv other("MYAPP_CFGTEST_UINT", "11");
    ASSERT_EQ(UCS_OK, ucs_config_parser_fill_opts(&opts, test_table, "MYAPP_",
                                                  "CFGTEST_", 0));
    EXPECT_EQ(11u, opts.uinteger);
    ucs_config_parser_release_opts(&opts, test_table);
}

TEST_F(ucs_config_parser_test, env_bad_value)
{
    test_opts_t opts;

    ucs::scoped_setenv str("UCX_CFGTEST_STR", "allocated before failing");
    ucs::scoped_setenv mem("UCX_CFGTEST_MEM", "abc");
    {
        ucs::scoped_log_capture capture;
        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  ucs_config_parser_fill_opts(&opts, test_table, NULL,
                                              "CFGTEST_", 0));
        EXPECT_TRUE(capture.contains(
            std::string("invalid value for UCX_CFGTEST_MEM: 'abc' "
                        "(expected: ") +
            memunits_help + ")"));
    }

    /* ignore_errors: reported, default kept, call succeeds */
    {
        ucs::scoped_log_capture capture;
        ASSERT_EQ(UCS_OK, ucs_config_parser_fill_opts(&opts, test_table, NULL,
                                                      "CFGTEST_", 1));
        EXPECT_TRUE(capture.contains("invalid value for UCX_CFGTEST_MEM: "
                                     "'abc'"));
        EXPECT_TRUE(capture.contains("using the default '64k'"));
    }
    EXPECT_EQ(65536u, opts.mem);
    EXPECT_STREQ("allocated before failing", opts.str);
    ucs_config_parser_release_opts(&opts, test_table);
}

TEST_F(ucs_config_parser_test, deprecated_in_env)
{
    test_opts_t opts;
    ucs::scoped_setenv old("UCX_CFGTEST_OLD_KNOB", "5");
    ucs::scoped_log_capture capture;

    ASSERT_EQ(UCS_OK, ucs_config_parser_fill_opts(&opts, test_table, NULL,
                                                  "CFGTEST_", 0));
    EXPECT_TRUE(capture.contains("UCX_CFGTEST_OLD_KNOB is deprecated"));
    ucs_config_parser_release_opts(&opts, test_table);
}

TEST_F(ucs_config_parser_test, file_below_env)
{
    std::string path = write_temp_file("# a comment\n"
                                       "\n"
                                       "UCX_CFGTEST_INT = 5\n"
                                       "  UCX_CFGTEST_UINT=8   \n"
                                       "UCX_CFGTEST_STR = \"quoted value\"\n"
                                       "UCX_SEG_SIZE = 1m\n"
                                       "this line is broken\n"
                                       "UCX_CFGTEST_UINT = 9\n");
    test_opts_t opts;

    ucs::scoped_setenv env_int("UCX_CFGTEST_INT", "6");
    {
        ucs::scoped_log_capture capture;
        ASSERT_EQ(UCS_OK, ucs_config_parser_fill_opts_file(&opts, test_table,
                                                           NULL, "CFGTEST_",
                                                           path.c_str(), 0));
        EXPECT_TRUE(capture.contains(path + ":7: malformed line"));
    }

    EXPECT_EQ(6, opts.integer);   /* environment wins */
    EXPECT_EQ(9u, opts.uinteger); /* the last assignment wins */
    EXPECT_STREQ("quoted value", opts.str);
    EXPECT_EQ(1u << 20, opts.sub.seg_size);
    ucs_config_parser_release_opts(&opts, test_table);
    unlink(path.c_str());
}

TEST_F(ucs_config_parser_test, file_bad_value_and_missing_file)
{
    std::string path = write_temp_file("UCX_CFGTEST_TIME = soon\n");
    test_opts_t opts;

    {
        ucs::scoped_log_capture capture;
        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  ucs_config_parser_fill_opts_file(
                      &opts, test_table, NULL, "CFGTEST_", path.c_str(), 0));
        EXPECT_TRUE(capture.contains("invalid value for UCX_CFGTEST_TIME: "
                                     "'soon'"));
        EXPECT_TRUE(capture.contains(path + ":1"));
    }
    unlink(path.c_str());

    {
        ucs::scoped_log_capture capture;
        EXPECT_EQ(UCS_ERR_IO_ERROR,
                  ucs_config_parser_fill_opts_file(
                      &opts, test_table, NULL, "CFGTEST_", path.c_str(), 0));
        EXPECT_TRUE(capture.contains("cannot read configuration file " + path));
    }
}

TEST_F(ucs_config_parser_test, config_file_variable)
{
    std::string path = write_temp_file("UCX_CFGTEST_UINT = 42\n"
                                       "UCX_CFGTEST_INT = 1\n");
    test_opts_t opts;

    {
        ucs::scoped_setenv file("UCX_CONFIG_FILE", path.c_str());
        ucs::scoped_setenv env_int("UCX_CFGTEST_INT", "2");
        ucs_config_parser_reload_file();
        ASSERT_EQ(UCS_OK, ucs_config_parser_fill_opts(&opts, test_table, NULL,
                                                      "CFGTEST_", 0));
        EXPECT_EQ(42u, opts.uinteger);
        EXPECT_EQ(2, opts.integer);
        ucs_config_parser_release_opts(&opts, test_table);

        /* the file is read once: removing it changes nothing */
        unlink(path.c_str());
        ASSERT_EQ(UCS_OK, ucs_config_parser_fill_opts(&opts, test_table, NULL,
                                                      "CFGTEST_", 0));
        EXPECT_EQ(42u, opts.uinteger);
        ucs_config_parser_release_opts(&opts, test_table);
    }

    {
        /* an empty UCX_CONFIG_FILE disables the file */
        ucs::scoped_setenv file("UCX_CONFIG_FILE", "");
        ucs_config_parser_reload_file();
        ASSERT_EQ(UCS_OK, ucs_config_parser_fill_opts(&opts, test_table, NULL,
                                                      "CFGTEST_", 0));
        EXPECT_EQ(7u, opts.uinteger);
        ucs_config_parser_release_opts(&opts, test_table);
    }

    {
        ucs::scoped_setenv file("UCX_CONFIG_FILE", "/nonexistent/x.conf");
        ucs::scoped_log_capture capture;
        ucs_config_parser_reload_file();
        ASSERT_EQ(UCS_OK, ucs_config_parser_fill_opts(&opts, test_table, NULL,
                                                      "CFGTEST_", 0));
        EXPECT_TRUE(capture.contains("cannot read configuration file "
                                     "/nonexistent/x.conf"));
        ucs_config_parser_release_opts(&opts, test_table);
    }

    ucs_config_parser_reload_file();
}

TEST_F(ucs_config_parser_test, print_plain)
{
    ASSERT_EQ(UCS_OK, set("MEM", "1m"));
    std::string text = print(UCS_CONFIG_PRINT_CONFIG);

    EXPECT_NE(std::string::npos, text.find("UCX_CFGTEST_MEM=1m\n")) << text;
    EXPECT_NE(std::string::npos, text.find("UCX_CFGTEST_STR=hello\n"));
    EXPECT_NE(std::string::npos, text.find("UCX_CFGTEST_QUEUE_LEN=32\n"));
    EXPECT_NE(std::string::npos, text.find("UCX_CFGTEST_TLS=all\n"));
    EXPECT_EQ(std::string::npos, text.find("HIDDEN"));
    EXPECT_EQ(std::string::npos, text.find("OLD_KNOB"));
    EXPECT_EQ(std::string::npos, text.find('#'));

    text = print(UCS_CONFIG_PRINT_CONFIG | UCS_CONFIG_PRINT_HIDDEN);
    EXPECT_NE(std::string::npos, text.find("UCX_CFGTEST_HIDDEN=3\n"));

    text = print(UCS_CONFIG_PRINT_HEADER);
    EXPECT_EQ("#\n# Test options\n#\n", text);
}

TEST_F(ucs_config_parser_test, print_doc)
{
    std::string text = print(UCS_CONFIG_PRINT_CONFIG | UCS_CONFIG_PRINT_DOC |
                             UCS_CONFIG_PRINT_HEADER);

    EXPECT_EQ(0u, text.find("#\n# Test options\n#\n")) << text;
    EXPECT_NE(std::string::npos,
              text.find("#\n# Memory units\n#\n# syntax:    " +
                        std::string(memunits_help) +
                        "\n#\nUCX_CFGTEST_MEM=64k\n"))
        << text;
    EXPECT_NE(std::string::npos, text.find("# A string\n# with two lines\n"));
    EXPECT_NE(std::string::npos,
              text.find("# syntax:    one of: red|green|blue\n"));
}

namespace {

void find_test_entry(const ucs_config_global_list_entry_t *entry, void *arg)
{
    if (entry->table == test_table) {
        *(const ucs_config_global_list_entry_t **)arg = entry;
    }
}

} // namespace

TEST_F(ucs_config_parser_test, registry_and_print_all)
{
    const ucs_config_global_list_entry_t *entry = NULL;

    ucs_config_global_list_for_each(find_test_entry, &entry);
    ASSERT_NE(nullptr, entry);
    EXPECT_STREQ("CFGTEST_", entry->prefix);
    EXPECT_EQ(sizeof(test_opts_t), entry->size);

    ucs::scoped_setenv mem("UCX_CFGTEST_MEM", "3k");
    char *buf    = NULL;
    size_t size  = 0;
    FILE *stream = open_memstream(&buf, &size);
    ucs_config_parser_print_all_opts(
        stream, NULL, UCS_CONFIG_PRINT_CONFIG | UCS_CONFIG_PRINT_HEADER,
        "CFGTEST_");
    fclose(stream);
    std::string text(buf, size);
    free(buf);

    EXPECT_NE(std::string::npos, text.find("# Parser test\n")) << text;
    EXPECT_NE(std::string::npos, text.find("UCX_CFGTEST_MEM=3k\n"));
    EXPECT_EQ(std::string::npos, text.find("UCX_LOG_LEVEL="));

    buf    = NULL;
    stream = open_memstream(&buf, &size);
    ucs_config_parser_print_all_opts(stream, NULL, UCS_CONFIG_PRINT_CONFIG,
                                     NULL);
    fclose(stream);
    text = std::string(buf, size);
    free(buf);
    EXPECT_NE(std::string::npos, text.find("UCX_LOG_LEVEL=")) << text;
    EXPECT_NE(std::string::npos, text.find("UCX_MODULES=all\n"));
}

TEST_F(ucs_config_parser_test, unknown_env_vars)
{
    ucs::scoped_setenv typo("UCX_CFGTEST_MEMM", "1");
    ucs::scoped_setenv far("UCX_ZZYZX_QQQQQQ", "1");
    ucs::scoped_setenv known("UCX_CFGTEST_MEM", "1k");
    ucs::scoped_setenv generic("UCX_QUEUE_LEN", "1");
    ucs::scoped_setenv nested("UCX_SUB_SEG_SIZE", "1k");
    ucs::scoped_setenv global("UCX_LOG_FILE", "");
    ucs::scoped_setenv other_prefix("NOTUCX_FOO", "1");
    ucs::scoped_setenv config_file("UCX_CONFIG_FILE", "");

    ucs::scoped_log_capture capture;
    ucs_config_parser_warn_unused_env_vars(NULL);

    EXPECT_TRUE(capture.contains("unknown environment variable "
                                 "UCX_CFGTEST_MEMM (did you mean "
                                 "UCX_CFGTEST_MEM?); set "
                                 "UCX_WARN_UNUSED_ENV_VARS=n to silence"));
    EXPECT_TRUE(capture.contains("unknown environment variable "
                                 "UCX_ZZYZX_QQQQQQ; set "
                                 "UCX_WARN_UNUSED_ENV_VARS=n to silence"));
    EXPECT_FALSE(capture.contains("UCX_CFGTEST_MEM "));
    EXPECT_FALSE(capture.contains("UCX_CFGTEST_MEM;"));
    EXPECT_FALSE(capture.contains("UCX_QUEUE_LEN"));
    EXPECT_FALSE(capture.contains("UCX_SUB_SEG_SIZE"));
    EXPECT_FALSE(capture.contains("UCX_LOG_FILE"));
    EXPECT_FALSE(capture.contains("UCX_CONFIG_FILE"));
    EXPECT_FALSE(capture.contains("NOTUCX"));
}

TEST_F(ucs_config_parser_test, unknown_env_vars_silenced_and_once)
{
    char old[16];
    ucs::scoped_setenv typo("UCX_CFGTEST_MEMM", "1");

    ASSERT_EQ(UCS_OK, ucs_config_parser_get_value(
                          &ucs_global_opts, ucs_global_opts_table,
                          "WARN_UNUSED_ENV_VARS", old, sizeof(old)));
    ASSERT_EQ(UCS_OK, ucs_config_parser_set_value(&ucs_global_opts,
                                                  ucs_global_opts_table,
                                                  "WARN_UNUSED_ENV_VARS", "n"));
    {
        ucs::scoped_log_capture capture;
        ucs_config_parser_warn_unused_env_vars(NULL);
        EXPECT_FALSE(capture.contains("UCX_CFGTEST_MEMM"));
    }
    ASSERT_EQ(UCS_OK, ucs_config_parser_set_value(&ucs_global_opts,
                                                  ucs_global_opts_table,
                                                  "WARN_UNUSED_ENV_VARS", "y"));

    {
        /* The first call in the process may have happened already */
        ucs::scoped_log_capture capture;
        ucs_config_parser_warn_unused_env_vars_once(NULL);
    }
    {
        ucs::scoped_log_capture capture;
        ucs_config_parser_warn_unused_env_vars_once(NULL);
        EXPECT_FALSE(capture.contains("UCX_CFGTEST_MEMM"));
    }

    ASSERT_EQ(UCS_OK, ucs_config_parser_set_value(&ucs_global_opts,
                                                  ucs_global_opts_table,
                                                  "WARN_UNUSED_ENV_VARS", old));
}

class ucs_global_opts_test : public ucs::test {
protected:
    void TearDown() override
    {
        /* back to the environment of the process */
        ucs_global_opts_init();
        ucs::test::TearDown();
    }
};

TEST_F(ucs_global_opts_test, log_level_applied)
{
    {
        ucs::scoped_setenv level("UCX_LOG_LEVEL", "error");
        ASSERT_EQ(UCS_OK, ucs_global_opts_init());
        EXPECT_EQ(UCS_LOG_LEVEL_ERROR, ucs_global_opts.log_level);
        EXPECT_EQ(UCS_LOG_LEVEL_ERROR, ucs_log_level);
    }
    {
        ucs::scoped_setenv level("UCX_LOG_LEVEL", "Warning");
        ASSERT_EQ(UCS_OK, ucs_global_opts_init());
        EXPECT_EQ(UCS_LOG_LEVEL_WARN, ucs_log_level);
    }
}

TEST_F(ucs_global_opts_test, bad_value_keeps_default)
{
    ucs::scoped_setenv level("UCX_LOG_LEVEL", "loud");
    ucs::scoped_setenv warn("UCX_WARN_UNUSED_ENV_VARS", "maybe");
    ucs::scoped_log_capture capture;

    ASSERT_EQ(UCS_OK, ucs_global_opts_init());
    EXPECT_TRUE(capture.contains("invalid value for UCX_LOG_LEVEL: 'loud' "
                                 "(expected: one of: fatal|error|warn|diag|"
                                 "info|debug|trace|data|poll)"));
    EXPECT_TRUE(capture.contains("invalid value for UCX_WARN_UNUSED_ENV_VARS: "
                                 "'maybe'"));
    EXPECT_EQ(UCS_LOG_LEVEL_WARN, ucs_global_opts.log_level);
    EXPECT_EQ(1, ucs_global_opts.warn_unused_env_vars);
}

TEST_F(ucs_global_opts_test, defaults)
{
    ucs::scoped_setenv level("UCX_LOG_LEVEL", NULL);
    ucs::scoped_setenv dir("UCX_MODULE_DIR", NULL);
    ucs::scoped_setenv modules("UCX_MODULES", NULL);
    ucs::scoped_setenv warn("UCX_WARN_UNUSED_ENV_VARS", NULL);
    ucs::scoped_setenv file("UCX_CONFIG_FILE", "");

    ucs_config_parser_reload_file();
    ASSERT_EQ(UCS_OK, ucs_global_opts_init());
    EXPECT_EQ(UCS_LOG_LEVEL_WARN, ucs_global_opts.log_level);
    EXPECT_STREQ("", ucs_global_opts.module_dir);
    EXPECT_EQ(UCS_CONFIG_ALLOW_LIST_ALLOW_ALL, ucs_global_opts.modules.mode);
    EXPECT_EQ(1, ucs_global_opts.warn_unused_env_vars);
    ucs_config_parser_reload_file();
}
