/*
 * The base of the ud_verbs suites (test_ud*.cc in this folder): helpers,
 * packets as a stranger builds them, a UD QP of the test's own (the
 * stranger), and the uct_ud fixture. ud_test.cc holds their code and the
 * suite's instances; the peer process of the peer_process_* tests is
 * ib_peer.h's.
 *
 * The tests read the transport's state through the structs of
 * src/uct/ib/ud/ud.h. They run on the ud_verbs resources only, which exist
 * on the Soft-RoCE devices of test/rxe/run.sh; elsewhere the suite has no
 * instances.
 */
#ifndef OPENUCT_TEST_UCT_IB_UD_TEST_H_
#define OPENUCT_TEST_UCT_IB_UD_TEST_H_

#include "ib_test.h"

extern "C" {
#include <uct/ib/ud/ud.h>
#include <ucs/time/time.h>
}

#include <infiniband/verbs.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace uct_ud_test {

const uint8_t AM_ID = 5;

std::string hex(uint32_t value);

/* ------------------------------------------------------------------------
 * Packets as a stranger builds them
 */

std::vector<uint8_t> ud_packet(uint32_t dest_id, uint8_t type, uint16_t psn,
                               uint16_t ack_psn, const void *body = NULL,
                               size_t body_len = 0);

/* An active message for ep @a dest_id with the 64-bit header @a value */
std::vector<uint8_t> am_packet(uint32_t dest_id, uint16_t psn, uint64_t value);

std::vector<uint8_t> creq_packet(uint64_t secret, uint32_t src_id,
                                 uint32_t conn_sn,
                                 const uct_ib_device_addr_t &dev_addr);

std::vector<uint8_t> crep_packet(uint32_t dest_id, uint32_t src_id,
                                 uint32_t conn_sn);

/* A DISC or DISC_REP (@a type) from ep @a src_id to ep @a dest_id */
std::vector<uint8_t> disc_packet(uint32_t dest_id, uint8_t type,
                                 uint32_t src_id);

/* What a CREP says */
struct crep_info {
    uint32_t dest_id;
    uint32_t src_id;
    uint32_t conn_sn;
};

bool parse_crep(const std::vector<uint8_t> &pkt, crep_info *info);

/* What a CREQ says: the requester's ep and its connection number */
bool parse_creq(const std::vector<uint8_t> &pkt, crep_info *info);

/* The type of a received packet (without flags), or 0xff when short */
uint8_t packet_type(const std::vector<uint8_t> &pkt);

/* A packet with something set that ud_verbs does not define */
struct reserved_case {
    std::string what;
    std::vector<uint8_t> pkt;
    bool imm; /* sent with immediate data */
};

/* ------------------------------------------------------------------------
 * A UD QP of our own on the device of an iface: its own context, PD, CQ
 * and address handles, Q_Key UCT_UD_QKEY
 */
class raw_ud_qp {
public:
    static constexpr size_t BUF_SIZE   = UCT_UD_GRH_LEN + 4096;
    static constexpr unsigned NUM_RECV = 16;

    raw_ud_qp(const std::string &dev_name, uint8_t port, unsigned gid_index);

    ~raw_ud_qp();

    uint32_t qp_num() const
    {
        return m_qp->qp_num;
    }

    /* Sends @a pkt to QP @a qpn at @a dest, waits for its completion;
     * with @a imm, as a send with that immediate data */
    void send(const uct_ib_device_addr_t &dest, uint32_t qpn,
              const std::vector<uint8_t> &pkt, bool solicited = false,
              const uint32_t *imm = NULL);

    /* The next datagram (without the GRH area) within @a timeout s */
    bool recv(std::vector<uint8_t> &pkt, double timeout);

private:
    static constexpr uint64_t SEND_WR_ID = UINT64_MAX;

    void post_recv(unsigned i);

    void poll(int);

    struct ibv_ah *ah(const uct_ib_device_addr_t &dest);

    void cleanup();

    struct ibv_context *m_ctx;
    struct ibv_pd *m_pd;
    struct ibv_cq *m_cq;
    struct ibv_qp *m_qp;
    struct ibv_mr *m_mr;
    struct ibv_ah *m_ah;
    uint8_t m_ah_gid[16];
    uint8_t m_port;
    unsigned m_gid_index;
    std::vector<uint8_t> m_buf;
    std::vector<std::vector<uint8_t>> m_received;
    bool m_send_done = false;
};

/* A value of @a e's iface read under its lock */
template <typename T>
T ud_read(const uct_test::entity &e,
          const std::function<T(const uct_ud_iface_t *)> &f)
{
    uct_ud_iface_t *iface = uct_ud_iface(e.iface());

    uct_ud_enter(iface);
    T value = f(iface);
    uct_ud_leave(iface);
    return value;
}

} // namespace uct_ud_test

/* The fixture and the suites use these names unqualified. */
using namespace uct_ud_test;

class uct_ud : public uct_ib_test {
protected:
    uct_ud() : uct_ib_test(AM_ID)
    {}

    /* The drop counters of an iface */
    struct ud_stats {
        uint64_t rx_dropped, rx_stale, rx_dup, rx_ooo, tx_resent, put_denied,
            creq_denied, rx_over_share, rx_evicted, rx_ooo_full;
    };

    /* A raw QP of the test that connected to an iface with its secret, as
     * a peer does: the iface made a private ep whose peer it is */
    struct raw_peer {
        std::unique_ptr<raw_ud_qp> qp;
        uint32_t own_id = 0; /* the ep id it said it has */
        uint32_t ep_id  = 0; /* the iface's ep for it */
    };

    void TearDown() override;

    static uct_ud_iface_t *ud(const entity &e)
    {
        return uct_ud_iface(e.iface());
    }

    static ud_stats stats(const entity &e);

    /* An iface with 64 send slots, RESEND_TIMEOUT 5 s (test_ud.cc) */
    entity *few_slots_entity();

    /* Connects 200 eps of @a a to @a b's iface and waits for all */
    bool connect_all(entity &a, entity &b, std::vector<uct_ep_h> &eps);

    static unsigned ep_count(const entity &e);

    /* Eps of @a e created by a peer's request and not taken by a user */
    static unsigned private_count(const entity &e);

    static uint16_t ep_flags(const entity &e, uct_ep_h ep);

    static bool connected(const entity &e, uct_ep_h ep)
    {
        return ep_flags(e, ep) & UCT_UD_EP_FLAG_CONNECTED;
    }

    static uint32_t iface_qpn(const entity &e);

    static uint64_t iface_secret(const entity &e);

    static uct_ib_device_addr_t dev_addr(const entity &e);

    /* A UD QP of the test on @a e's device and GID */
    raw_ud_qp &raw_qp(const entity &e);

    static std::unique_ptr<raw_ud_qp> new_raw_qp(const entity &e);

    /* The next packet of @a type that @a raw gets within @a timeout s,
     * progressing @a e meanwhile (others are skipped) */
    bool raw_recv_type(entity &e, raw_ud_qp &raw, uint8_t type,
                       std::vector<uint8_t> &pkt, double timeout = 5);

    /* A new raw QP on @a e's device connects to @a e's iface as ep
     * @a own_id (a CREQ with the secret, the CREP read). False (and a
     * failure) when no CREP came. */
    bool raw_connect(entity &e, raw_peer &peer, uint32_t own_id);

    /* Sends @a pkts from @a raw to @a e, then progresses @a e until it
     * took them: held after a gap or dropped (the count of both grew by
     * their number) */
    void send_gap_packets(entity &e, raw_ud_qp &raw,
                          const std::vector<std::vector<uint8_t>> &pkts);

    /* The headers of @a rec's messages in [@a lo, @a hi) */
    static std::vector<uint64_t> headers_between(const am_recorder &rec,
                                                 uint64_t lo, uint64_t hi);

    /* Packets held after a gap by @a e's ep of id @a ep_id */
    static unsigned held_by(const entity &e, uint32_t ep_id);

    /* Sends @a pkt from @a raw to @a e's QP; waits until @a e dropped it */
    void send_dropped(entity &e, raw_ud_qp &raw,
                      const std::vector<uint8_t> &pkt, ud_stats *before,
                      ud_stats *after);

    /* The counters other than @a changed (member pointers) are equal */
    static void expect_unchanged(const ud_stats &a, const ud_stats &b,
                                 std::vector<uint64_t ud_stats::*> changed);

    /* Starts the peer process, which echoes AM_ID, and connects it to
     * @a e's iface. False (and a failure) when it did not come up. */
    bool start_echo_peer(const entity &e);

    /* test_ud_hostile.cc */
    void hostile_setup();
    void hostile_check_alive(uint64_t value, size_t expected_count);

    /* Sends each case from @a raw to @a e: each is dropped and counted in
     * rx_dropped alone, and @a check (given the case) still holds; the
     * first drop's line in @a cap names the sender and says why */
    void
    send_reserved_cases(entity &e, raw_ud_qp &raw,
                        const std::vector<reserved_case> &cases,
                        const ucs::scoped_log_capture &cap,
                        const std::function<void(const std::string &)> &check);

    /* test_ud.cc */
    void simultaneous_connect(bool hold_async);

    /* An ep of @a a to @a b's iface, connected: its first message (header
     * 0) recorded by @a rec and acknowledged. NULL (and a failure) when
     * not. */
    uct_ep_h connect_first_message(entity &a, entity &b, am_recorder &rec);

    std::unique_ptr<raw_ud_qp> m_raw;

    /* hostile_setup(): a sends to b through m_ab; m_rec records b's AMs */
    entity *m_a        = NULL;
    entity *m_b        = NULL;
    uct_ep_h m_ab      = NULL;
    am_recorder *m_rec = NULL;
};

#endif
