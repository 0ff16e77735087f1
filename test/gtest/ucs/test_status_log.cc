#include <common/test.h>

extern "C" {
#include <ucs/type/status.h>
#include <ucs/debug/log.h>
}

#include <cstring>

class test_status : public ucs::test {};

TEST_F(test_status, every_code_has_a_message) {
    for (int s = UCS_OK; s >= UCS_ERR_LAST; --s) {
        const char *str = ucs_status_string((ucs_status_t)s);
        ASSERT_NE(nullptr, str);
        EXPECT_GT(strlen(str), 0u);
    }
    EXPECT_STREQ("Success", ucs_status_string(UCS_OK));
    EXPECT_STREQ("Invalid parameter",
                 ucs_status_string(UCS_ERR_INVALID_PARAM));
    EXPECT_STREQ("Endpoint timeout",
                 ucs_status_string(UCS_ERR_ENDPOINT_TIMEOUT));
    EXPECT_NE(nullptr, strstr(ucs_status_string((ucs_status_t)-97), "-97"));
}

TEST_F(test_status, ptr_status) {
    void *err = UCS_STATUS_PTR(UCS_ERR_NO_MEMORY);
    int x;
    EXPECT_TRUE(UCS_PTR_IS_ERR(err));
    EXPECT_EQ(UCS_ERR_NO_MEMORY, UCS_PTR_STATUS(err));
    EXPECT_FALSE(UCS_PTR_IS_ERR(&x));
    EXPECT_EQ(UCS_INPROGRESS, UCS_PTR_STATUS(&x));
    EXPECT_FALSE(UCS_PTR_IS_ERR(NULL));
}

class test_log : public ucs::test {};

TEST_F(test_log, level_parse) {
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

TEST_F(test_log, capture_and_threshold) {
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

TEST_F(test_log, file_output) {
    char path[] = "/tmp/openuct-log-XXXXXX";
    int fd = mkstemp(path);
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
