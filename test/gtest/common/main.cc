/*
 * Test runner: googletest plus a watchdog that fails a hung test.
 */
#include "test.h"

#include <ucs/vfs/vfs.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <pthread.h>
#include <string>
#include <unistd.h>

namespace {

std::atomic<long> watchdog_started(0);
std::string watchdog_test;
pthread_mutex_t watchdog_lock = PTHREAD_MUTEX_INITIALIZER;
long watchdog_timeout         = 120;

long now_sec()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec;
}

class watchdog_listener : public testing::EmptyTestEventListener {
    void OnTestStart(const testing::TestInfo &info) override
    {
        pthread_mutex_lock(&watchdog_lock);
        watchdog_test = std::string(info.test_suite_name()) + "." + info.name();
        pthread_mutex_unlock(&watchdog_lock);
        watchdog_started = now_sec();
    }

    void OnTestEnd(const testing::TestInfo &) override
    {
        watchdog_started = 0;
    }
};

void *watchdog_thread(void *)
{
    for (;;) {
        sleep(1);
        long start = watchdog_started;
        if ((start != 0) && (now_sec() - start > watchdog_timeout)) {
            pthread_mutex_lock(&watchdog_lock);
            fprintf(stderr,
                    "\n[  WATCHDOG ] %s did not finish in %ld s; "
                    "failing the run\n",
                    watchdog_test.c_str(), watchdog_timeout);
            pthread_mutex_unlock(&watchdog_lock);
            fflush(stderr);
            _exit(3);
        }
    }
    return NULL;
}

} // namespace

int main(int argc, char **argv)
{
    pthread_t tid;
    const char *timeout;

    /* the object tree on, as with UCX_VFS_ENABLE=y, so that the tests can
     * look at every object (the test list made here loads the transports
     * already); the daemon connection stays off */
    ucs_vfs_set_enabled(1);
    testing::InitGoogleTest(&argc, argv);

    timeout = getenv("OPENUCT_TEST_TIMEOUT");
    if (timeout != NULL) {
        watchdog_timeout = atol(timeout);
    }
    if (ucs::running_on_valgrind()) {
        watchdog_timeout *= 10;
    }

    testing::UnitTest::GetInstance()->listeners().Append(
        new watchdog_listener());
    pthread_create(&tid, NULL, watchdog_thread, NULL);
    pthread_detach(tid);

    return RUN_ALL_TESTS();
}
