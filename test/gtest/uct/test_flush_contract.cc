/*
 * The flush contract over every transport, where it can break: GETs,
 * fetching atomics and PUTs posted and followed at once by uct_ep_flush or
 * uct_iface_flush, without waiting for their own completions. When the
 * flush completes, every earlier operation's data is in place (the
 * initiator's buffer for a GET or a fetch, the target's for a PUT) and its
 * completion has run with UCS_OK; a completion never runs before its data
 * is in place. Endpoints are connected both ways, to the interface and to
 * the endpoint, as the transport allows, and to an interface in a peer
 * process for the transports uct_test runs in two processes; many GETs of
 * 8 B - 4 MiB are in flight at once.
 */
#include "uct_test.h"

#include <cstring>
#include <list>

namespace {

/* A completion that checks, when it runs, that its data is in place */
struct data_completion {
    uct_completion_t uct; /* first: the callback casts back */
    const void *buffer;
    size_t length;
    uint64_t seed; /* the pattern the buffer must hold */
    uint64_t word; /* or, with is_word, this 64-bit value */
    bool is_word;
    int calls;
    ucs_status_t status;
    bool in_place; /* the data was there when it ran */
    /* or the data is the pattern of seed in this buffer (which may be in
     * a peer process) */
    const uct_test::mapped_buffer *target;

    data_completion(const void *buf, size_t len, uint64_t pattern_seed)
        : buffer(buf), length(len), seed(pattern_seed), word(0), is_word(false),
          calls(0), status(UCS_OK), in_place(false), target(nullptr)
    {
        uct.func   = cb;
        uct.count  = 1;
        uct.status = UCS_OK;
    }

    data_completion(const uct_test::mapped_buffer &buf, uint64_t pattern_seed)
        : data_completion(nullptr, buf.length(), pattern_seed)
    {
        target = &buf;
    }

    bool data_ok() const
    {
        if (target != nullptr) {
            return target->pattern_matches(seed);
        }
        if (is_word) {
            return *(const volatile uint64_t *)buffer == word;
        }
        return uct_test::mapped_buffer::pattern_mismatch(buffer, length,
                                                         seed) == length;
    }

    static void cb(uct_completion_t *self)
    {
        data_completion *c = reinterpret_cast<data_completion *>(self);

        ++c->calls;
        c->status   = self->status;
        c->in_place = c->data_ok();
    }
};

/* A GET bcopy's unpack: copies into the buffer the completion checks */
struct unpack_target {
    void *buffer;
    size_t length;
    unsigned calls = 0;
};

void unpack_into(void *arg, const void *data, size_t length)
{
    unpack_target *t = static_cast<unpack_target *>(arg);

    if (length == t->length) {
        memcpy(t->buffer, data, length);
    }
    ++t->calls;
}

size_t pack_pattern(void *dest, void *arg)
{
    const uct_test::mapped_buffer *src =
        static_cast<const uct_test::mapped_buffer *>(arg);

    memcpy(dest, src->ptr(), src->length());
    return src->length();
}

enum conn_mode { CONN_IFACE, CONN_EP, CONN_IFACE_PEER };

enum flush_kind { FLUSH_EP, FLUSH_IFACE };

} // namespace

class uct_flush_contract : public uct_test {
protected:
    typedef uct_test::mapped_buffer mapped_buffer;

    /* Two entities (a sender and a receiver) with eps both ways in
     * @a mode (CONN_IFACE_PEER: the receiver in a peer process, an ep
     * from the sender only); false if the transport cannot connect that
     * way. */
    bool connect(conn_mode mode)
    {
        uint64_t cap = (mode == CONN_EP) ? UCT_IFACE_FLAG_CONNECT_TO_EP
                                         : UCT_IFACE_FLAG_CONNECT_TO_IFACE;

        m_sender = create_entity();
        if (mode == CONN_IFACE_PEER) {
            m_receiver = create_entity_in_peer(entity_params());
            m_ep       = m_sender->connect_to(*m_receiver);
            return m_ep != NULL;
        }
        m_receiver = create_entity();
        if (!m_sender->has_cap(cap) || !m_sender->is_reachable(*m_receiver)) {
            return false;
        }
        if (mode == CONN_IFACE) {
            m_ep      = m_sender->connect_to(*m_receiver);
            m_back_ep = m_receiver->connect_to(*m_sender);
        } else {
            m_ep      = m_sender->create_ep_for_ep();
            m_back_ep = m_receiver->create_ep_for_ep();
            EXPECT_EQ(UCS_OK,
                      m_sender->connect_ep_to(m_ep, *m_receiver, m_back_ep));
            EXPECT_EQ(UCS_OK,
                      m_receiver->connect_ep_to(m_back_ep, *m_sender, m_ep));
        }
        return (m_ep != NULL) && (m_back_ep != NULL);
    }

    /* Posts @a op until it stops returning UCS_ERR_NO_RESOURCE; an
     * operation done at once completes @a comp by hand. */
    void post(const std::function<ucs_status_t()> &op, data_completion &comp,
              const std::string &what)
    {
        ucs_status_t status = (ucs_status_t)retry_no_resource(
            [&] { return (ssize_t)op(); }, what);
        if (status == UCS_OK) {
            comp.uct.count = 0;
            data_completion::cb(&comp.uct);
        } else {
            ASSERT_EQ(UCS_INPROGRESS, status)
                << what << ": " << ucs_status_string(status);
        }
    }

    /* Flushes (ep or iface) with a completion and progresses until it
     * runs; nothing else is waited for. */
    void flush_now(flush_kind kind)
    {
        counted_completion comp;
        ucs_status_t status;

        status = (ucs_status_t)retry_no_resource(
            [&] {
                return (
                    ssize_t)((kind == FLUSH_EP)
                                 ? uct_ep_flush(m_ep, 0, comp)
                                 : uct_iface_flush(m_sender->iface(), 0, comp));
            },
            "flush");
        if (status == UCS_INPROGRESS) {
            wait_for([&] { return comp.calls > 0; }, "the flush completion");
            EXPECT_EQ(UCS_OK, comp.status_at_call);
        } else {
            EXPECT_EQ(UCS_OK, status) << ucs_status_string(status);
        }
    }

    /* Every completion ran once with UCS_OK and found its data, which
     * is still in place. */
    static void check_done(const std::list<data_completion> &comps,
                           const std::string &what)
    {
        size_t i = 0;
        for (const data_completion &c : comps) {
            SCOPED_TRACE(what + " #" + std::to_string(i++) + " of " +
                         std::to_string(c.length) + " bytes");
            EXPECT_EQ(1, c.calls) << "its completion had not run when the "
                                     "flush completed";
            EXPECT_EQ(UCS_OK, c.status);
            EXPECT_TRUE(c.in_place || (c.calls == 0))
                << "its completion ran before the data was in place";
            EXPECT_TRUE(c.data_ok()) << "the data was not in place when the "
                                        "flush completed";
        }
    }

    /* Sizes from 8 B to 4 MiB within [@a min, @a max] */
    static std::vector<size_t> sizes(size_t min, size_t max)
    {
        std::vector<size_t> out;
        for (size_t s : {(size_t)8, (size_t)64, (size_t)1000, (size_t)4096,
                         (size_t)8192, (size_t)8193, (size_t)65536,
                         (size_t)(1 << 20), (size_t)(4 << 20)}) {
            if ((s >= std::max<size_t>(min, 1)) && (s <= max)) {
                out.push_back(s);
            }
        }
        return out;
    }

    void gets_then_flush(bool zcopy, flush_kind kind);
    void puts_then_flush(bool zcopy, flush_kind kind);
    void fetches_then_flush(flush_kind kind);
    void run_all(conn_mode mode);

    entity *m_sender   = nullptr;
    entity *m_receiver = nullptr;
    uct_ep_h m_ep      = nullptr;
    uct_ep_h m_back_ep = nullptr;
};

void uct_flush_contract::gets_then_flush(bool zcopy, flush_kind kind)
{
    const uct_iface_attr_t &attr = m_sender->iface_attr();
    uint64_t flag = zcopy ? UCT_IFACE_FLAG_GET_ZCOPY : UCT_IFACE_FLAG_GET_BCOPY;
    std::list<mapped_buffer> locals, remotes;
    std::list<unpack_target> targets;
    std::list<data_completion> comps;
    uint64_t seed = 1000;

    if (!m_sender->has_cap(flag)) {
        return;
    }
    /* twice over each size, all in flight together */
    for (int round = 0; round < 2; ++round) {
        for (size_t length :
             zcopy ? sizes(attr.cap.get.min_zcopy, attr.cap.get.max_zcopy)
                   : sizes(1, attr.cap.get.max_bcopy)) {
            locals.emplace_back(length, *m_sender);
            remotes.emplace_back(length, *m_receiver);
            mapped_buffer &local  = locals.back();
            mapped_buffer &remote = remotes.back();
            local.memset(0xee);
            remote.pattern_fill(++seed);
            comps.emplace_back(local.ptr(), length, seed);
            data_completion &comp = comps.back();
            if (zcopy) {
                uct_iov_t iov = local.iov(0, length);
                post(
                    [&] {
                        return uct_ep_get_zcopy(m_ep, &iov, 1, remote.addr(),
                                                remote.rkey(), &comp.uct);
                    },
                    comp, "uct_ep_get_zcopy");
            } else {
                targets.push_back({local.ptr(), length});
                unpack_target *t = &targets.back();
                post(
                    [&] {
                        return uct_ep_get_bcopy(m_ep, unpack_into, t, length,
                                                remote.addr(), remote.rkey(),
                                                &comp.uct);
                    },
                    comp, "uct_ep_get_bcopy");
            }
            if (HasFatalFailure()) {
                return;
            }
        }
    }
    flush_now(kind);
    check_done(comps, zcopy ? "GET zcopy" : "GET bcopy");
}

void uct_flush_contract::puts_then_flush(bool zcopy, flush_kind kind)
{
    const uct_iface_attr_t &attr = m_sender->iface_attr();
    uint64_t flag = zcopy ? UCT_IFACE_FLAG_PUT_ZCOPY : UCT_IFACE_FLAG_PUT_BCOPY;
    std::list<mapped_buffer> locals, remotes;
    std::list<data_completion> comps;
    uint64_t seed = 2000;

    if (!m_sender->has_cap(flag)) {
        return;
    }
    for (size_t length :
         zcopy ? sizes(attr.cap.put.min_zcopy, attr.cap.put.max_zcopy)
               : sizes(1, attr.cap.put.max_bcopy)) {
        locals.emplace_back(length, *m_sender);
        remotes.emplace_back(length, *m_receiver);
        mapped_buffer &local  = locals.back();
        mapped_buffer &remote = remotes.back();
        local.pattern_fill(++seed);
        remote.memset(0xee);
        /* the completion checks the target */
        comps.emplace_back(remote, seed);
        data_completion &comp = comps.back();
        if (zcopy) {
            uct_iov_t iov = local.iov(0, length);
            post(
                [&] {
                    return uct_ep_put_zcopy(m_ep, &iov, 1, remote.addr(),
                                            remote.rkey(), &comp.uct);
                },
                comp, "uct_ep_put_zcopy");
        } else {
            post(
                [&] {
                    ssize_t ret =
                        uct_ep_put_bcopy(m_ep, pack_pattern, &local,
                                         remote.addr(), remote.rkey());
                    return (ret < 0) ? (ucs_status_t)ret : UCS_OK;
                },
                comp, "uct_ep_put_bcopy");
            /* a bcopy PUT has no completion: the flush is the only
             * promise, so the early check must not count */
            comp.in_place = true;
        }
        if (HasFatalFailure()) {
            return;
        }
    }
    flush_now(kind);
    for (data_completion &c : comps) {
        /* a zcopy PUT completes when its source may be reused, before
         * the target has it: only the flush promises the target */
        c.in_place = true;
    }
    check_done(comps, zcopy ? "PUT zcopy" : "PUT bcopy");
}

void uct_flush_contract::fetches_then_flush(flush_kind kind)
{
    const uct_iface_attr_t &attr = m_sender->iface_attr();
    std::list<mapped_buffer> remotes;
    std::list<uint64_t> results;
    std::list<data_completion> comps;

    if (!(attr.cap.atomic64.fop_flags & UCS_BIT(UCT_ATOMIC_OP_ADD))) {
        return;
    }
    for (uint64_t i = 0; i < 64; ++i) {
        remotes.emplace_back(sizeof(uint64_t), *m_receiver);
        mapped_buffer &remote = remotes.back();
        remote.store<uint64_t>(1000 * i);
        results.push_back(~0ull);
        uint64_t *result = &results.back();
        comps.emplace_back(result, sizeof(*result), 0);
        data_completion &comp = comps.back();
        comp.is_word          = true;
        comp.word             = 1000 * i;
        post(
            [&] {
                return uct_ep_atomic64_fetch(m_ep, UCT_ATOMIC_OP_ADD, 7, result,
                                             remote.addr(), remote.rkey(),
                                             &comp.uct);
            },
            comp, "uct_ep_atomic64_fetch");
        if (HasFatalFailure()) {
            return;
        }
    }
    flush_now(kind);
    check_done(comps, "fetch-add");
    uint64_t i = 0;
    for (const mapped_buffer &remote : remotes) {
        EXPECT_EQ(1000 * i + 7, remote.load<uint64_t>()) << "word " << i;
        ++i;
    }
}

void uct_flush_contract::run_all(conn_mode mode)
{
    if (!connect(mode)) {
        GTEST_SKIP() << res().tl_name << " cannot connect "
                     << ((mode == CONN_EP) ? "to an endpoint"
                                           : "to an interface");
    }
    for (flush_kind kind : {FLUSH_EP, FLUSH_IFACE}) {
        SCOPED_TRACE((kind == FLUSH_EP) ? "uct_ep_flush" : "uct_iface_flush");
        for (bool zcopy : {true, false}) {
            gets_then_flush(zcopy, kind);
            puts_then_flush(zcopy, kind);
        }
        fetches_then_flush(kind);
    }
}

TEST_P(uct_flush_contract, connected_to_iface)
{
    run_all(CONN_IFACE);
}

TEST_P(uct_flush_contract, connected_to_ep)
{
    run_all(CONN_EP);
}

TEST_P(uct_flush_contract, connected_to_iface_in_peer_process)
{
    if (!two_processes(entity_params())) {
        GTEST_SKIP() << res().tl_name << " is not run in two processes "
                     << "(OPENUCT_TEST_TWO_PROCESS_TLS)";
    }
    run_all(CONN_IFACE_PEER);
}

UCT_INSTANTIATE_TEST_SUITE(uct_flush_contract);
