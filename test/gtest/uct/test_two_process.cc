/*
 * The peer process that holds a receiver of the two-processes pairs
 * (uct_test_peer.h): when it dies, the test gets an error it can report,
 * never a signal that ends the whole run.
 */
#include "uct_test.h"
#include "uct_test_peer.h"

#include <csignal>
#include <sys/wait.h>

class uct_two_process : public uct_test {};

TEST_P(uct_two_process, dead_peer_is_an_error)
{
    if (!two_processes(entity_params())) {
        GTEST_SKIP() << res().tl_name << " is not run in two processes "
                     << "(OPENUCT_TEST_TWO_PROCESS_TLS)";
    }

    entity *remote = create_entity_in_peer(entity_params());
    EXPECT_GE(remote->progress(), 0u);

    const std::shared_ptr<uct_test_peer_link> &peer = remote->peer();
    ASSERT_EQ(0, kill(peer->pid(), SIGKILL));
    /* Exited (its end of the socket closed; left for the link to reap)
     * before the next request, whose write must fail with an error, not
     * SIGPIPE */
    siginfo_t info;
    ASSERT_EQ(0, waitid(P_PID, peer->pid(), &info, WEXITED | WNOWAIT));

    EXPECT_THROW(remote->progress(), std::runtime_error);
    EXPECT_FALSE(peer->is_open());
}

UCT_INSTANTIATE_TEST_SUITE(uct_two_process);
