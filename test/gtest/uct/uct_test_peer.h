/*
 * A receiver of the transport-parametrized suites in a peer process.
 *
 * uct_test_peer_link starts this binary again (peer_process.h) and opens
 * the test's resource there as a uct_test::entity. The test process then
 * drives it with requests over the socket pair: progress, AM recorders,
 * buffers registered (or allocated) with the peer's md, and reads and
 * writes of the peer's memory to check what a transport put there. Each
 * request waits for its reply; the peer does nothing between requests,
 * so a test decides when the receiver progresses, as with a local one.
 *
 * Requests and replies are frames: a 32-bit length in host order, then
 * the bytes (at most 256 MiB). A request starts with a 32-bit opcode; a
 * reply with one byte, 1 for success or 0 followed by the error text.
 * Any failure of the peer (an error reply, an exit, no reply within the
 * timeout) throws std::runtime_error in the test. A warning or error the
 * peer logs fails the test when the link closes, as one logged in the
 * test's process does (common/test.h).
 */
#ifndef OPENUCT_TEST_UCT_UCT_TEST_PEER_H_
#define OPENUCT_TEST_UCT_UCT_TEST_PEER_H_

#include "peer_process.h"
#include "uct_test.h"

#include <cstdint>
#include <string>
#include <vector>

class uct_test_peer_link {
public:
    /* Starts a peer process and opens @a res there with @a params (the
     * error handler cannot cross: it must be unset). Throws
     * std::runtime_error with the peer's reason if that fails. */
    uct_test_peer_link(const resource &res, const uct_entity_params &params);
    ~uct_test_peer_link();

    uct_test_peer_link(const uct_test_peer_link &)            = delete;
    uct_test_peer_link &operator=(const uct_test_peer_link &) = delete;

    bool is_open() const
    {
        return m_proc.sock >= 0;
    }
    pid_t pid() const
    {
        return m_proc.pid;
    }
    const uct_md_attr_t &md_attr() const
    {
        return m_md_attr;
    }
    const uct_iface_attr_t &iface_attr() const
    {
        return m_iface_attr;
    }
    const std::vector<char> &dev_addr() const
    {
        return m_dev_addr;
    }
    const std::vector<char> &iface_addr() const
    {
        return m_iface_addr;
    }

    /* Progresses the peer's worker; the number of events */
    unsigned progress();

    /* The event calls of uct_test::entity, made in the peer */
    ucs_status_t event_fd_get(int *fd);
    ucs_status_t event_arm(unsigned events);
    bool event_wait(int timeout_ms);

    /* AM recorders in the peer, numbered from 0 in install order */
    uint32_t recorder_install(uint8_t am_id);
    void recorder_keep(uint32_t rec, size_t headroom);
    void recorder_release(uint32_t rec);
    size_t recorder_count(uint32_t rec);
    uct_test::am_recorder::message recorder_at(uint32_t rec, size_t i);
    std::vector<void *> recorder_kept(uint32_t rec);

    /* A uct_test::mapped_buffer in the peer: its number, its address
     * there and its packed rkey (empty without UCT_MD_FLAG_NEED_RKEY) */
    void buffer_alloc(size_t length, size_t offset, uint32_t &id,
                      uint64_t &addr, std::vector<char> &packed_rkey);
    void buffer_free(uint32_t id);

    /* Bytes of the peer's memory (test buffers and delivered AM data) */
    std::string read(uint64_t addr, size_t length);
    void write(uint64_t addr, const void *data, size_t length);

    /* Asks the peer to exit and waits for it (kills it after a timeout);
     * later requests throw. Called by the destructor. */
    void close();

private:
    std::string call(uint32_t op, const std::string &args);

    test_peer::process m_proc;
    uct_md_attr_t m_md_attr;
    uct_iface_attr_t m_iface_attr;
    std::vector<char> m_dev_addr;
    std::vector<char> m_iface_addr;
};

#endif
