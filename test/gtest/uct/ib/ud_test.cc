/*
 * The code of ud_test.h: helpers, packets, the stranger's UD QP, the
 * uct_ud fixture, and the suite's instances (one per ud_verbs resource)
 * for every test_ud*.cc.
 */
#include "ud_test.h"
#include "ib_lookup.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <endian.h>
#include <stdexcept>
#include <unistd.h>

namespace uct_ud_test {

std::string hex(uint32_t value)
{
    char buf[16];

    snprintf(buf, sizeof(buf), "0x%x", value);
    return buf;
}

/* ------------------------------------------------------------------------
 * Packets as a stranger builds them
 */

std::vector<uint8_t> ud_packet(uint32_t dest_id, uint8_t type, uint16_t psn,
                               uint16_t ack_psn, const void *body,
                               size_t body_len)
{
    uct_ud_hdr_t hdr;
    std::vector<uint8_t> pkt(sizeof(hdr) + body_len);

    uct_ud_u24_set(hdr.dest_id, dest_id);
    hdr.type = type;
    memcpy(&hdr.psn, &psn, sizeof(psn));
    memcpy(&hdr.ack_psn, &ack_psn, sizeof(ack_psn));
    memcpy(pkt.data(), &hdr, sizeof(hdr));
    if (body_len != 0) {
        memcpy(pkt.data() + sizeof(hdr), body, body_len);
    }
    return pkt;
}

std::vector<uint8_t> am_packet(uint32_t dest_id, uint16_t psn, uint64_t value)
{
    return ud_packet(dest_id, AM_ID, psn, 0, &value, sizeof(value));
}

std::vector<uint8_t> creq_packet(uint64_t secret, uint32_t src_id,
                                 uint32_t conn_sn,
                                 const uct_ib_device_addr_t &dev_addr)
{
    uct_ud_creq_t creq;

    memset(&creq, 0, sizeof(creq));
    memcpy(&creq.secret, &secret, sizeof(secret));
    uct_ud_u24_set(creq.src_id, src_id);
    memcpy(&creq.conn_sn, &conn_sn, sizeof(conn_sn));
    memcpy(&creq.dev_addr, &dev_addr, sizeof(dev_addr));
    return ud_packet(UCT_UD_EP_ID_NONE, UCT_UD_PKT_CREQ, 0, 0, &creq,
                     sizeof(creq));
}

std::vector<uint8_t> crep_packet(uint32_t dest_id, uint32_t src_id,
                                 uint32_t conn_sn)
{
    uct_ud_crep_t crep;

    memset(&crep, 0, sizeof(crep));
    uct_ud_u24_set(crep.src_id, src_id);
    memcpy(&crep.conn_sn, &conn_sn, sizeof(conn_sn));
    return ud_packet(dest_id, UCT_UD_PKT_CREP, 0, 0, &crep, sizeof(crep));
}

std::vector<uint8_t> disc_packet(uint32_t dest_id, uint8_t type,
                                 uint32_t src_id)
{
    uct_ud_disc_t disc;

    memset(&disc, 0, sizeof(disc));
    uct_ud_u24_set(disc.src_id, src_id);
    return ud_packet(dest_id, type, 0, 0, &disc, sizeof(disc));
}

uint8_t packet_type(const std::vector<uint8_t> &pkt)
{
    if (pkt.size() < sizeof(uct_ud_hdr_t)) {
        return 0xff;
    }
    return pkt[offsetof(uct_ud_hdr_t, type)] & UCT_UD_PKT_TYPE_MASK;
}

bool parse_creq(const std::vector<uint8_t> &pkt, crep_info *info)
{
    uct_ud_creq_t creq;

    if ((pkt.size() < sizeof(uct_ud_hdr_t) + sizeof(creq)) ||
        (packet_type(pkt) != UCT_UD_PKT_CREQ)) {
        return false;
    }
    memcpy(&creq, pkt.data() + sizeof(uct_ud_hdr_t), sizeof(creq));
    info->dest_id = UCT_UD_EP_ID_NONE;
    info->src_id  = uct_ud_u24_get(creq.src_id);
    memcpy(&info->conn_sn, &creq.conn_sn, sizeof(info->conn_sn));
    return true;
}

bool parse_crep(const std::vector<uint8_t> &pkt, crep_info *info)
{
    uct_ud_hdr_t hdr;
    uct_ud_crep_t crep;

    if (pkt.size() < sizeof(hdr) + sizeof(crep)) {
        return false;
    }
    memcpy(&hdr, pkt.data(), sizeof(hdr));
    memcpy(&crep, pkt.data() + sizeof(hdr), sizeof(crep));
    if ((hdr.type & UCT_UD_PKT_TYPE_MASK) != UCT_UD_PKT_CREP) {
        return false;
    }
    info->dest_id = uct_ud_u24_get(hdr.dest_id);
    info->src_id  = uct_ud_u24_get(crep.src_id);
    memcpy(&info->conn_sn, &crep.conn_sn, sizeof(info->conn_sn));
    return true;
}

/* ------------------------------------------------------------------------
 * The stranger's UD QP
 */

raw_ud_qp::raw_ud_qp(const std::string &dev_name, uint8_t port,
                     unsigned gid_index)
    : m_ctx(NULL), m_pd(NULL), m_cq(NULL), m_qp(NULL), m_mr(NULL), m_ah(NULL),
      m_port(port), m_gid_index(gid_index), m_buf((NUM_RECV + 1) * BUF_SIZE)
{
    ib_lookup::with_device(dev_name, [this](struct ibv_device *device) {
        m_ctx = ibv_open_device(device);
    });
    if (m_ctx == NULL) {
        throw std::runtime_error("cannot open " + dev_name);
    }
    m_pd = ibv_alloc_pd(m_ctx);
    m_cq = (m_pd != NULL) ? ibv_create_cq(m_ctx, 64, NULL, NULL, 0) : NULL;
    m_mr = (m_cq != NULL) ? ibv_reg_mr(m_pd, m_buf.data(), m_buf.size(),
                                       IBV_ACCESS_LOCAL_WRITE)
                          : NULL;
    if (m_mr == NULL) {
        cleanup();
        throw std::runtime_error("raw QP resources on " + dev_name);
    }

    struct ibv_qp_init_attr init;
    memset(&init, 0, sizeof(init));
    init.qp_type          = IBV_QPT_UD;
    init.send_cq          = m_cq;
    init.recv_cq          = m_cq;
    init.cap.max_send_wr  = 16;
    init.cap.max_recv_wr  = NUM_RECV;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    m_qp                  = ibv_create_qp(m_pd, &init);
    if (m_qp == NULL) {
        cleanup();
        throw std::runtime_error("ibv_create_qp (UD) failed");
    }

    struct ibv_qp_attr attr;
    memset(&attr, 0, sizeof(attr));
    attr.qp_state   = IBV_QPS_INIT;
    attr.pkey_index = 0;
    attr.port_num   = m_port;
    attr.qkey       = UCT_UD_QKEY;
    int ret         = ibv_modify_qp(m_qp, &attr,
                                    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                                        IBV_QP_QKEY);
    if (ret == 0) {
        attr.qp_state = IBV_QPS_RTR;
        ret           = ibv_modify_qp(m_qp, &attr, IBV_QP_STATE);
    }
    if (ret == 0) {
        attr.qp_state = IBV_QPS_RTS;
        attr.sq_psn   = 0;
        ret = ibv_modify_qp(m_qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
    }
    if (ret != 0) {
        cleanup();
        throw std::runtime_error("raw UD QP to RTS failed");
    }
    for (unsigned i = 0; i < NUM_RECV; ++i) {
        post_recv(i);
    }
}

raw_ud_qp::~raw_ud_qp()
{
    cleanup();
}

void raw_ud_qp::send(const uct_ib_device_addr_t &dest, uint32_t qpn,
                     const std::vector<uint8_t> &pkt, bool solicited,
                     const uint32_t *imm)
{
    struct ibv_send_wr wr, *bad_wr;
    struct ibv_sge sge;
    uint8_t *sbuf = m_buf.data() + NUM_RECV * BUF_SIZE;

    if (pkt.size() > BUF_SIZE) {
        throw std::runtime_error("raw packet too long");
    }
    memcpy(sbuf, pkt.data(), pkt.size());
    sge.addr   = (uintptr_t)sbuf;
    sge.length = (uint32_t)pkt.size();
    sge.lkey   = m_mr->lkey;
    memset(&wr, 0, sizeof(wr));
    wr.wr_id      = SEND_WR_ID;
    wr.sg_list    = &sge;
    wr.num_sge    = 1;
    wr.opcode     = (imm != NULL) ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED | (solicited ? IBV_SEND_SOLICITED : 0);
    if (imm != NULL) {
        wr.imm_data = htobe32(*imm);
    }
    wr.wr.ud.ah          = ah(dest);
    wr.wr.ud.remote_qpn  = qpn;
    wr.wr.ud.remote_qkey = UCT_UD_QKEY;
    if (ibv_post_send(m_qp, &wr, &bad_wr) != 0) {
        throw std::runtime_error("raw ibv_post_send failed");
    }
    double deadline = now_sec() + 10;
    while (!m_send_done) {
        poll(0);
        if (now_sec() > deadline) {
            throw std::runtime_error("raw send did not complete");
        }
    }
    m_send_done = false;
}

bool raw_ud_qp::recv(std::vector<uint8_t> &pkt, double timeout)
{
    double deadline = now_sec() + timeout;

    while (m_received.empty()) {
        poll(0);
        if (now_sec() > deadline) {
            return false;
        }
        usleep(100);
    }
    pkt = m_received.front();
    m_received.erase(m_received.begin());
    return true;
}

void raw_ud_qp::post_recv(unsigned i)
{
    struct ibv_recv_wr wr, *bad_wr;
    struct ibv_sge sge;

    sge.addr   = (uintptr_t)(m_buf.data() + i * BUF_SIZE);
    sge.length = BUF_SIZE;
    sge.lkey   = m_mr->lkey;
    memset(&wr, 0, sizeof(wr));
    wr.wr_id   = i;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    if (ibv_post_recv(m_qp, &wr, &bad_wr) != 0) {
        throw std::runtime_error("raw ibv_post_recv failed");
    }
}

void raw_ud_qp::poll(int)
{
    struct ibv_wc wc[8];
    int n = ibv_poll_cq(m_cq, 8, wc);

    for (int i = 0; i < n; ++i) {
        if (wc[i].wr_id == SEND_WR_ID) {
            if (wc[i].status != IBV_WC_SUCCESS) {
                throw std::runtime_error("raw send failed");
            }
            m_send_done = true;
            continue;
        }
        unsigned idx = (unsigned)wc[i].wr_id;
        if ((wc[i].status == IBV_WC_SUCCESS) &&
            (wc[i].byte_len >= UCT_UD_GRH_LEN)) {
            const uint8_t *p = m_buf.data() + idx * BUF_SIZE;
            m_received.emplace_back(p + UCT_UD_GRH_LEN, p + wc[i].byte_len);
        }
        post_recv(idx);
    }
}

struct ibv_ah *raw_ud_qp::ah(const uct_ib_device_addr_t &dest)
{
    if ((m_ah != NULL) && !memcmp(m_ah_gid, dest.gid, 16)) {
        return m_ah;
    }
    if (m_ah != NULL) {
        ibv_destroy_ah(m_ah);
        m_ah = NULL;
    }
    struct ibv_ah_attr attr;
    uint16_t lid;
    memcpy(&lid, &dest.lid, sizeof(lid));
    memset(&attr, 0, sizeof(attr));
    attr.dlid           = lid;
    attr.port_num       = m_port;
    attr.is_global      = 1;
    attr.grh.sgid_index = (uint8_t)m_gid_index;
    attr.grh.hop_limit  = 64;
    memcpy(attr.grh.dgid.raw, dest.gid, 16);
    m_ah = ibv_create_ah(m_pd, &attr);
    if (m_ah == NULL) {
        throw std::runtime_error("raw ibv_create_ah failed");
    }
    memcpy(m_ah_gid, dest.gid, 16);
    return m_ah;
}

void raw_ud_qp::cleanup()
{
    if (m_qp != NULL) {
        ibv_destroy_qp(m_qp);
    }
    if (m_ah != NULL) {
        ibv_destroy_ah(m_ah);
    }
    if (m_mr != NULL) {
        ibv_dereg_mr(m_mr);
    }
    if (m_cq != NULL) {
        ibv_destroy_cq(m_cq);
    }
    if (m_pd != NULL) {
        ibv_dealloc_pd(m_pd);
    }
    if (m_ctx != NULL) {
        ibv_close_device(m_ctx);
    }
    m_qp  = NULL;
    m_ah  = NULL;
    m_mr  = NULL;
    m_cq  = NULL;
    m_pd  = NULL;
    m_ctx = NULL;
}

} // namespace uct_ud_test

/* ------------------------------------------------------------------------
 * The fixture
 */

void uct_ud::TearDown()
{
    m_raw.reset();
    uct_ib_test::TearDown();
}

uct_ud::ud_stats uct_ud::stats(const entity &e)
{
    uct_ud_iface_t *iface = ud(e);
    ud_stats s;

    uct_ud_enter(iface);
    s.rx_dropped    = iface->stats.rx_dropped;
    s.rx_stale      = iface->stats.rx_stale;
    s.rx_dup        = iface->stats.rx_dup;
    s.rx_ooo        = iface->stats.rx_ooo;
    s.tx_resent     = iface->stats.tx_resent;
    s.put_denied    = iface->stats.put_denied;
    s.creq_denied   = iface->stats.creq_denied;
    s.rx_over_share = iface->stats.rx_over_share;
    s.rx_evicted    = iface->stats.rx_evicted;
    s.rx_ooo_full   = iface->stats.rx_ooo_full;
    uct_ud_leave(iface);
    return s;
}

unsigned uct_ud::ep_count(const entity &e)
{
    uct_ud_iface_t *iface = ud(e);

    uct_ud_enter(iface);
    unsigned count = iface->eps.count;
    uct_ud_leave(iface);
    return count;
}

unsigned uct_ud::private_count(const entity &e)
{
    uct_ud_iface_t *iface = ud(e);
    unsigned count        = 0;

    uct_ud_enter(iface);
    for (unsigned i = 0; i < iface->eps.size; ++i) {
        uct_ud_ep_t *ep = iface->eps.slots[i];
        if ((ep != NULL) && (ep->flags & UCT_UD_EP_FLAG_PRIVATE)) {
            ++count;
        }
    }
    uct_ud_leave(iface);
    return count;
}

uint16_t uct_ud::ep_flags(const entity &e, uct_ep_h ep)
{
    uct_ud_iface_t *iface = ud(e);

    uct_ud_enter(iface);
    uint16_t flags = uct_ud_ep(ep)->flags;
    uct_ud_leave(iface);
    return flags;
}

uint32_t uct_ud::iface_qpn(const entity &e)
{
    const uct_ud_iface_addr_t *addr =
        (const uct_ud_iface_addr_t *)e.iface_addr().data();
    return uct_ud_u24_get(addr->qp_num);
}

uint64_t uct_ud::iface_secret(const entity &e)
{
    const uct_ud_iface_addr_t *addr =
        (const uct_ud_iface_addr_t *)e.iface_addr().data();
    uint64_t secret;

    memcpy(&secret, &addr->secret, sizeof(secret));
    return secret;
}

uct_ib_device_addr_t uct_ud::dev_addr(const entity &e)
{
    uct_ib_device_addr_t addr;

    memcpy(&addr, e.dev_addr().data(), sizeof(addr));
    return addr;
}

std::unique_ptr<raw_ud_qp> uct_ud::new_raw_qp(const entity &e)
{
    std::string dev = e.res().dev_name;
    size_t colon    = dev.find(':');

    if (colon != std::string::npos) {
        dev = dev.substr(0, colon);
    }
    return std::unique_ptr<raw_ud_qp>(new raw_ud_qp(
        dev, ud(e)->super.port_num, ud(e)->super.gid_info.gid_index));
}

raw_ud_qp &uct_ud::raw_qp(const entity &e)
{
    m_raw = new_raw_qp(e);
    return *m_raw;
}

bool uct_ud::raw_recv_type(entity &e, raw_ud_qp &raw, uint8_t type,
                           std::vector<uint8_t> &pkt, double timeout)
{
    double deadline = now_sec() + timeout;

    do {
        e.progress();
        while (raw.recv(pkt, 0)) {
            if (packet_type(pkt) == type) {
                return true;
            }
        }
        usleep(1000);
    } while (now_sec() < deadline);
    return false;
}

bool uct_ud::raw_connect(entity &e, raw_peer &peer, uint32_t own_id)
{
    std::vector<uint8_t> pkt;
    crep_info crep;

    peer.qp     = new_raw_qp(e);
    peer.own_id = own_id;
    peer.qp->send(dev_addr(e), iface_qpn(e),
                  creq_packet(iface_secret(e), own_id, 0, dev_addr(e)));
    if (!raw_recv_type(e, *peer.qp, UCT_UD_PKT_CREP, pkt) ||
        !parse_crep(pkt, &crep) || (crep.dest_id != own_id)) {
        ADD_FAILURE() << "no connection reply to the raw peer";
        return false;
    }
    peer.ep_id = crep.src_id;
    return true;
}

void uct_ud::send_gap_packets(entity &e, raw_ud_qp &raw,
                              const std::vector<std::vector<uint8_t>> &pkts)
{
    ud_stats before = stats(e);

    for (const std::vector<uint8_t> &pkt : pkts) {
        raw.send(dev_addr(e), iface_qpn(e), pkt);
    }
    wait_for(
        [&] {
            ud_stats now = stats(e);
            return now.rx_ooo + now.rx_dropped >=
                   before.rx_ooo + before.rx_dropped + pkts.size();
        },
        "the packets after a gap taken");
}

std::vector<uint64_t> uct_ud::headers_between(const am_recorder &rec,
                                              uint64_t lo, uint64_t hi)
{
    std::vector<uint64_t> out;

    for (uint64_t h : headers(rec)) {
        if ((h >= lo) && (h < hi)) {
            out.push_back(h);
        }
    }
    return out;
}

unsigned uct_ud::held_by(const entity &e, uint32_t ep_id)
{
    uct_ud_iface_t *iface = ud(e);

    uct_ud_enter(iface);
    uct_ud_ep_t *ep = uct_ud_iface_ep(iface, ep_id);
    unsigned held   = (ep != NULL) ? ep->rx.ooo : 0;
    uct_ud_leave(iface);
    return held;
}

void uct_ud::send_dropped(entity &e, raw_ud_qp &raw,
                          const std::vector<uint8_t> &pkt, ud_stats *before,
                          ud_stats *after)
{
    *before = stats(e);
    raw.send(dev_addr(e), iface_qpn(e), pkt);
    wait_for([&] { return stats(e).rx_dropped > before->rx_dropped; },
             "the packet dropped");
    progress_for(50);
    *after = stats(e);
}

void uct_ud::expect_unchanged(const ud_stats &a, const ud_stats &b,
                              std::vector<uint64_t ud_stats::*> changed)
{
    static const std::pair<uint64_t ud_stats::*, const char *> all[] = {
        {&ud_stats::rx_dropped, "rx_dropped"},
        {&ud_stats::rx_stale, "rx_stale"},
        {&ud_stats::rx_dup, "rx_dup"},
        {&ud_stats::rx_ooo, "rx_ooo"},
        {&ud_stats::tx_resent, "tx_resent"},
        {&ud_stats::put_denied, "put_denied"},
        {&ud_stats::creq_denied, "creq_denied"},
        {&ud_stats::rx_over_share, "rx_over_share"},
        {&ud_stats::rx_evicted, "rx_evicted"},
        {&ud_stats::rx_ooo_full, "rx_ooo_full"}};

    for (const auto &m : all) {
        if (std::find(changed.begin(), changed.end(), m.first) ==
            changed.end()) {
            EXPECT_EQ(a.*m.first, b.*m.first) << m.second;
        }
    }
}

bool uct_ud::start_echo_peer(const entity &e)
{
    ib_peer::options opts;

    opts.features   = UCT_IFACE_FEATURE_AM;
    opts.echo_am_id = AM_ID;
    return start_peer(opts) && peer_connects_to(e);
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(uct_ud);
INSTANTIATE_TEST_SUITE_P(, uct_ud,
                         testing::ValuesIn(resources_of(UCT_UD_VERBS_NAME)),
                         uct_test::resource_name);
