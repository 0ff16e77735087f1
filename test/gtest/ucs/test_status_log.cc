#include <common/test.h>

extern "C" {
#include <ucs/type/status.h>
#include <ucs/debug/log.h>
#include <ucs/debug/log_limit.h>
}

#include <cstring>

class test_status : public ucs::test {};

TEST_F(test_status, every_code_has_a_message)
{
    for (int s = UCS_OK; s >= UCS_ERR_LAST; --s) {
        const char *str = ucs_status_string((ucs_status_t)s);
        ASSERT_NE(nullptr, str);
        EXPECT_GT(strlen(str), 0u);
    }
    EXPECT_STREQ("Success", ucs_status_string(UCS_OK));
    EXPECT_STREQ("Invalid parameter", ucs_status_string(UCS_ERR_INVALID_PARAM));
    EXPECT_STREQ("Endpoint timeout",
                 ucs_status_string(UCS_ERR_ENDPOINT_TIMEOUT));
    EXPECT_NE(nullptr, strstr(ucs_status_string((ucs_status_t)-97), "-97"));
}

TEST_F(test_status, ptr_status)
{
    void *err = UCS_STATUS_PTR(UCS_ERR_NO_MEMORY);
    int x;
    EXPECT_TRUE(UCS_PTR_IS_ERR(err));
    EXPECT_EQ(UCS_ERR_NO_MEMORY, UCS_PTR_STATUS(err));
    EXPECT_FALSE(UCS_PTR_IS_ERR(&x));
    EXPECT_EQ(UCS_INPROGRESS, UCS_PTR_STATUS(&x));
    EXPECT_FALSE(UCS_PTR_IS_ERR(NULL));
}

class test_log : public ucs::test {};

TEST_F(test_log, level_parse)
{
    ucs_log_level_t level;
    EXPECT_EQ(UCS_OK, ucs_log_level_parse("debug", &level));
    EXPECT_EQ(UCS_LOG_LEVEL_DEBUG, level);
    EXPECT_EQ(UCS_OK, ucs_log_level_parse("WARNING", &level));
    EXPECT_EQ(UCS_LOG_LEVEL_WARN, level);
    EXPECT_EQ(UCS_OK, ucs_log_level_parse("trace", &level));
    EXPECT_EQ(UCS_LOG_LEVEL_TRACE, level);
    level = UCS_LOG_LEVEL_INFO;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, ucs_log_level_parse("loud", &level));
    EXPECT_EQ(UCS_LOG_LEVEL_INFO, level);
}

TEST_F(test_log, capture_and_threshold)
{
    ucs_log_level_t saved = ucs_log_level;
    {
        ucs::scoped_log_capture capture;
        ucs_error("first %d", 42);
        EXPECT_TRUE(capture.contains("first 42"));
        ucs_log_set_level(UCS_LOG_LEVEL_FATAL);
        ucs_error("second");
        EXPECT_FALSE(capture.contains("second"));
    }
    ucs_log_set_level(saved);
}

TEST_F(test_log, file_output)
{
    char path[] = "/tmp/openuct-log-XXXXXX";
    int fd      = mkstemp(path);
    ASSERT_GE(fd, 0);
    close(fd);
    ASSERT_EQ(UCS_OK, ucs_log_set_file(path));
    ucs_log_dispatch(__FILE__, __LINE__, __func__, UCS_LOG_LEVEL_PRINT,
                     "to the file %s", "ok");
    ASSERT_EQ(UCS_OK, ucs_log_set_file("stderr"));
    FILE *f = fopen(path, "r");
    ASSERT_NE(nullptr, f);
    char line[256] = "";
    ASSERT_NE(nullptr, fgets(line, sizeof(line), f));
    fclose(f);
    unlink(path);
    EXPECT_STREQ("to the file ok\n", line);

    {
        ucs::scoped_log_capture capture;
        EXPECT_EQ(UCS_ERR_IO_ERROR,
                  ucs_log_set_file("/nonexistent-dir/x/log.txt"));
    }
}

static size_t count_containing(const ucs::scoped_log_capture &cap,
                               const std::string &text)
{
    size_t n = 0;
    for (const std::string &line : cap.messages()) {
        n += (line.find(text) != std::string::npos);
    }
    return n;
}

TEST_F(test_log, limited_lets_one_line_per_interval_through)
{
    ucs_log_limit_t limit = UCS_LOG_LIMIT_INITIALIZER;
    ucs::scoped_log_capture capture;

    for (int i = 0; i < 1000; ++i) {
        ucs_warn_limited(&limit, "flood line %d", i);
    }
    EXPECT_EQ(1u, count_containing(capture, "flood line"));
    EXPECT_TRUE(capture.contains("flood line 0"));
    EXPECT_EQ(999u, limit.suppressed);

    usleep(1100 * 1000);
    ucs_warn_limited(&limit, "flood line %d", 1000);
    EXPECT_EQ(2u, count_containing(capture, "flood line"));
    EXPECT_TRUE(capture.contains("flood line 1000 (999 similar lines "
                                 "suppressed)"));
    EXPECT_EQ(0u, limit.suppressed);
}

TEST_F(test_log, limited_causes_are_independent)
{
    ucs_log_limit_t a = UCS_LOG_LIMIT_INITIALIZER;
    ucs_log_limit_t b = UCS_LOG_LIMIT_INITIALIZER;
    ucs::scoped_log_capture capture;

    for (int i = 0; i < 10; ++i) {
        ucs_warn_limited(&a, "cause a");
        ucs_warn_limited(&b, "cause b");
    }
    EXPECT_EQ(1u, count_containing(capture, "cause a"));
    EXPECT_EQ(1u, count_containing(capture, "cause b"));
}

TEST_F(test_log, limited_flush_reports_the_rest)
{
    ucs_log_limit_t limit = UCS_LOG_LIMIT_INITIALIZER;
    ucs::scoped_log_capture capture;

    ucs_log_limit_flush(&limit, UCS_LOG_LEVEL_WARN, "nothing");
    EXPECT_EQ(0u, count_containing(capture, "nothing"));
    for (int i = 0; i < 5; ++i) {
        ucs_warn_limited(&limit, "some line");
    }
    ucs_log_limit_flush(&limit, UCS_LOG_LEVEL_WARN, "some cause");
    EXPECT_TRUE(capture.contains("some cause: 4 more lines like the last "
                                 "one were suppressed"));
    ucs_log_limit_flush(&limit, UCS_LOG_LEVEL_WARN, "again");
    EXPECT_EQ(0u, count_containing(capture, "again"));
}

TEST_F(test_log, limited_formats_nothing_below_the_level)
{
    ucs_log_limit_t limit = UCS_LOG_LIMIT_INITIALIZER;
    ucs_log_level_t saved = ucs_log_level;
    ucs::scoped_log_capture capture;

    ucs_log_set_level(UCS_LOG_LEVEL_ERROR);
    ucs_warn_limited(&limit, "hidden");
    ucs_log_set_level(saved);
    EXPECT_EQ(0u, count_containing(capture, "hidden"));
    /* a line that was not enabled does not use up the interval */
    ucs_warn_limited(&limit, "shown");
    EXPECT_EQ(1u, count_containing(capture, "shown"));
}
