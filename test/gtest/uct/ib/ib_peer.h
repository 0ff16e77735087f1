/*
 * The peer process of the verbs suites (uct_rc, uct_ud): this test binary
 * started again (../peer_process.h) with an interface of the test's ib
 * transport on the test's device, so that a peer that is killed or
 * stopped is a real one.
 *
 * Once up, the peer sends its device and interface addresses and the
 * packed rkey and address of a buffer of BUFFER_SIZE bytes it registered
 * with UCT_MD_MEM_ACCESS_ALL. Then it progresses its worker and serves
 * the test's requests until it is killed or the test closes the socket:
 *  - connect_ep(): a new ep of the peer connected to an ep of the test
 *    (ep-to-ep transports: rc_verbs); its address goes back to the test;
 *  - connect_iface(): a new ep of the peer to the test's interface
 *    (ud_verbs), on which it echoes active messages when asked to
 *    (options::echo_am_id).
 * A request is a blob (peer_process.h) with its opcode, then one blob per
 * argument; each is answered once it is done. A peer that cannot do what
 * it is asked exits with a status that names the step (ib_peer.cc), and
 * the call says which.
 */
#ifndef OPENUCT_TEST_UCT_IB_IB_PEER_H_
#define OPENUCT_TEST_UCT_IB_IB_PEER_H_

#include "../peer_process.h"
#include "../uct_test.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ib_peer {

/* The size of the registered buffer of a peer */
const size_t BUFFER_SIZE = 4096;

/* How a peer opens its interface, and what it does with what it gets */
struct options {
    /* uct_iface_params_t::features of its interface */
    uint64_t features = UCT_IFACE_FEATURE_AM | UCT_IFACE_FEATURE_PUT;
    /* Active messages with this id are echoed: the 64-bit header of each
     * is sent back as an am_short with the same id, in order, on the ep
     * that connect_iface() made (held until it exists). Below 0: no
     * handler is set, an active message finds none. */
    int echo_am_id = -1;
};

/* A started peer and what it sent when it came up */
struct process : test_peer::process {
    std::vector<char> dev_addr;
    std::vector<char> iface_addr; /* empty if its transport has none */
    std::vector<char> rkey;       /* packed rkey of its buffer */
    uint64_t buffer_addr = 0;     /* the buffer's address in the peer */
};

/* Starts a peer with an interface of @a res (its md, transport and
 * device) opened with @a opts, and reads what it sends when it is up.
 * False, with the reason in @a error, if it did not come up; then the
 * process is stopped. */
bool start(const resource &res, const options &opts, process &peer,
           std::string &error);

/* The peer creates an ep, connects it to the test's ep at @a dev_addr /
 * @a ep_addr and puts its address in @a peer_ep_addr. False, with the
 * reason in @a error, if it did not. */
bool connect_ep(process &peer, const std::vector<char> &dev_addr,
                const std::vector<char> &ep_addr,
                std::vector<char> &peer_ep_addr, std::string &error);

/* The peer creates an ep to the test's interface at @a dev_addr /
 * @a iface_addr (echoes go out on it). False, with the reason in
 * @a error, if it did not. */
bool connect_iface(process &peer, const std::vector<char> &dev_addr,
                   const std::vector<char> &iface_addr, std::string &error);

} // namespace ib_peer

#endif
