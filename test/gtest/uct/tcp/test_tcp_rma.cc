/*
 * Keyed remote memory access on tcp: a PUT or GET is applied only inside
 * a live region registered with the target's tcp memory domain, with the
 * key the initiator was given and the right access; anything else
 * touches nothing, fails the initiator's operation with
 * UCS_ERR_INVALID_ADDR and draws one warning on the target.
 */
#include "tcp_test.h"

#include <algorithm>

extern "C" {
#include <uct/api/uct.h>
#include <uct/tcp/tcp.h>
}

class uct_tcp_rma : public uct_tcp {
protected:
    /* A buffer registered with @a access on @a e's md, and its rkey */
    struct region {
        std::vector<char> buf;
        uct_mem_h memh = UCT_MEM_HANDLE_NULL;
        uct_rkey_bundle_t rkey;
        const entity *owner = nullptr;

        uint64_t addr() const
        {
            return (uintptr_t)buf.data();
        }
    };

    region &make_region(const entity &e, size_t length, unsigned access)
    {
        m_regions.emplace_back();
        region &r = m_regions.back();
        r.buf.assign(length, 'r');
        r.owner = &e;
        EXPECT_EQ(UCS_OK, uct_md_mem_reg(e.md(), r.buf.data(), length, access,
                                         &r.memh));
        std::vector<char> packed(e.md_attr().rkey_packed_size);
        EXPECT_EQ(UCS_OK, uct_md_mkey_pack(e.md(), r.memh, packed.data()));
        EXPECT_EQ(UCS_OK,
                  uct_rkey_unpack(e.component(), packed.data(), &r.rkey));
        return r;
    }

    void dereg(region &r)
    {
        EXPECT_EQ(UCS_OK, uct_md_mem_dereg(r.owner->md(), r.memh));
        r.memh = UCT_MEM_HANDLE_NULL;
    }

    void TearDown() override
    {
        for (region &r : m_regions) {
            uct_rkey_release(r.owner->component(), &r.rkey);
            if (r.memh != UCT_MEM_HANDLE_NULL) {
                uct_md_mem_dereg(r.owner->md(), r.memh);
            }
        }
        m_regions.clear();
        uct_tcp::TearDown();
    }

    /* Flushes @a ep and returns the status the flush completed with */
    ucs_status_t flush_wait(uct_ep_h ep)
    {
        counted_completion &comp = make_comp();
        ucs_status_t status;

        while ((status = uct_ep_flush(ep, 0, comp)) == UCS_ERR_NO_RESOURCE) {
            progress();
        }
        if (status != UCS_INPROGRESS) {
            return status;
        }
        wait_for([&] { return comp.calls > 0; }, "the flush");
        return comp.status_at_call;
    }

    ucs_status_t put(uct_ep_h ep, const std::string &data, uint64_t addr,
                     uct_rkey_t rkey)
    {
        return (ucs_status_t)retry_no_resource(
            [&] {
                return (ssize_t)uct_ep_put_short(ep, data.data(), data.size(),
                                                 addr, rkey);
            },
            "uct_ep_put_short");
    }

    /* A GET of @a length bytes; its completion status, data in @a out */
    ucs_status_t get(uct_ep_h ep, size_t length, uint64_t addr, uct_rkey_t rkey,
                     std::string *out)
    {
        unpack_arg &ua           = make_unpack_arg();
        counted_completion &comp = make_comp();
        ucs_status_t status      = (ucs_status_t)retry_no_resource(
            [&] {
                return (ssize_t)uct_ep_get_bcopy(ep, unpack_to_string, &ua,
                                                      length, addr, rkey, comp);
            },
            "uct_ep_get_bcopy");
        if (status == UCS_INPROGRESS) {
            wait_for([&] { return comp.calls > 0; }, "the GET");
            status = comp.status_at_call;
        }
        *out = ua.data;
        return status;
    }

    /* A client ep to a server, both fresh */
    void connect()
    {
        m_server = add_entity();
        m_client = add_entity();
        m_rec    = &install_recorder(*m_server, GOOD_AM_ID);
        m_ep     = m_client->connect_to(*m_server);
        ASSERT_NE(nullptr, m_ep);
    }

    /* The ep still carries traffic after a refusal */
    void check_ep_alive()
    {
        EXPECT_TRUE(send_am_and_wait(m_ep, GOOD_AM_ID, 99, *m_rec));
    }

    std::list<region> m_regions;
    entity *m_server   = nullptr;
    entity *m_client   = nullptr;
    am_recorder *m_rec = nullptr;
    uct_ep_h m_ep      = nullptr;
};

TEST_F(uct_tcp_rma, md_has_real_rkeys)
{
    entity *e = add_entity();
    EXPECT_EQ(8u, e->md_attr().rkey_packed_size);
    EXPECT_TRUE(e->md_attr().cap.flags & UCT_MD_FLAG_NEED_RKEY);
    EXPECT_TRUE(e->md_attr().cap.flags & UCT_MD_FLAG_REG);
}

TEST_F(uct_tcp_rma, put_and_get_with_the_key)
{
    connect();
    region &r = make_region(*m_server, 64, UCT_MD_MEM_ACCESS_ALL);

    ASSERT_EQ(UCS_OK, put(m_ep, "keyed put", r.addr() + 8, r.rkey.rkey));
    ASSERT_EQ(UCS_OK, flush_wait(m_ep));
    EXPECT_EQ("keyed put", std::string(&r.buf[8], 9));

    std::string got;
    ASSERT_EQ(UCS_OK, get(m_ep, 9, r.addr() + 8, r.rkey.rkey, &got));
    EXPECT_EQ("keyed put", got);
}

/* A wrong key, a range one byte past the end or before the start: the
 * region is untouched, the flush fails, one warning names the peer. */
TEST_F(uct_tcp_rma, refused_puts_touch_nothing)
{
    connect();
    region &r = make_region(*m_server, 64, UCT_MD_MEM_ACCESS_ALL);
    const std::string before(r.buf.begin(), r.buf.end());
    struct {
        const char *what;
        uint64_t addr;
        uct_rkey_t rkey;
    } cases[] = {{"wrong key", r.addr(), r.rkey.rkey ^ 1},
                 {"past the end", r.addr() + 57, r.rkey.rkey},
                 {"before the start", r.addr() - 1, r.rkey.rkey},
                 {"wrapping", UINT64_MAX - 2, r.rkey.rkey}};

    for (const auto &c : cases) {
        SCOPED_TRACE(c.what);
        progress_for(1100); /* one warning per second per iface */
        ucs::scoped_log_capture capture;
        size_t mark = log_mark();

        ASSERT_EQ(UCS_OK, put(m_ep, "XXXXXXXX", c.addr, c.rkey));
        EXPECT_EQ(UCS_ERR_INVALID_ADDR, flush_wait(m_ep));
        EXPECT_EQ(before, std::string(r.buf.begin(), r.buf.end()));
        std::vector<std::string> warns = log_lines(mark, "warn");
        EXPECT_EQ(1u, warns.size()) << join(warns);
        EXPECT_TRUE(log_lines(mark, "error").empty());
        check_ep_alive();
        /* a flush with nothing refused since succeeds again */
        ASSERT_EQ(UCS_OK, put(m_ep, "ok", r.addr(), r.rkey.rkey));
        EXPECT_EQ(UCS_OK, flush_wait(m_ep));
        r.buf[0] = before[0];
        r.buf[1] = before[1];
    }
    /* exactly at the end is fine */
    ASSERT_EQ(UCS_OK, put(m_ep, "TAILTAIL", r.addr() + 56, r.rkey.rkey));
    EXPECT_EQ(UCS_OK, flush_wait(m_ep));
    EXPECT_EQ("TAILTAIL", std::string(&r.buf[56], 8));
}

TEST_F(uct_tcp_rma, access_rights_are_checked)
{
    connect();
    region &get_only = make_region(*m_server, 32, UCT_MD_MEM_ACCESS_REMOTE_GET);
    region &put_only = make_region(*m_server, 32, UCT_MD_MEM_ACCESS_REMOTE_PUT);
    std::string got;

    ucs::scoped_log_capture capture;
    ASSERT_EQ(UCS_OK, put(m_ep, "nope", get_only.addr(), get_only.rkey.rkey));
    EXPECT_EQ(UCS_ERR_INVALID_ADDR, flush_wait(m_ep));
    EXPECT_EQ(std::string(32, 'r'),
              std::string(get_only.buf.begin(), get_only.buf.end()));
    EXPECT_EQ(UCS_OK, get(m_ep, 4, get_only.addr(), get_only.rkey.rkey, &got));
    EXPECT_EQ("rrrr", got);

    progress_for(1100);
    got.clear();
    EXPECT_EQ(UCS_ERR_INVALID_ADDR,
              get(m_ep, 4, put_only.addr(), put_only.rkey.rkey, &got));
    EXPECT_TRUE(got.empty()) << "a refused GET delivered data";
    ASSERT_EQ(UCS_OK, put(m_ep, "yes!", put_only.addr(), put_only.rkey.rkey));
    EXPECT_EQ(UCS_OK, flush_wait(m_ep));
    EXPECT_EQ("yes!", std::string(put_only.buf.data(), 4));
    check_ep_alive();
}

/* After uct_md_mem_dereg returns, the key opens nothing. */
TEST_F(uct_tcp_rma, dereg_takes_effect_at_once)
{
    connect();
    region &r     = make_region(*m_server, 64, UCT_MD_MEM_ACCESS_ALL);
    uint64_t addr = r.addr();
    std::string got;

    ASSERT_EQ(UCS_OK, put(m_ep, "before", addr, r.rkey.rkey));
    ASSERT_EQ(UCS_OK, flush_wait(m_ep));
    dereg(r);

    ucs::scoped_log_capture capture;
    ASSERT_EQ(UCS_OK, put(m_ep, "after!", addr, r.rkey.rkey));
    EXPECT_EQ(UCS_ERR_INVALID_ADDR, flush_wait(m_ep));
    EXPECT_EQ("before", std::string(r.buf.data(), 6));
    progress_for(1100); /* one warning per second */
    EXPECT_EQ(UCS_ERR_INVALID_ADDR, get(m_ep, 6, addr, r.rkey.rkey, &got));
    check_ep_alive();
}

/* A refused 1 MiB PUT is read and dropped: the stream stays in step and
 * the messages behind it arrive. */
TEST_F(uct_tcp_rma, large_refused_put_keeps_the_stream)
{
    connect();
    const size_t size = 1024 * 1024;
    region &r         = make_region(*m_server, size, UCT_MD_MEM_ACCESS_ALL);
    mapped_buffer src(size, *m_client);
    src.pattern_fill(7);

    ucs::scoped_log_capture capture;
    size_t mark              = log_mark();
    uct_iov_t iov            = src.iov(0, size);
    counted_completion &comp = make_comp();
    ucs_status_t status      = (ucs_status_t)retry_no_resource(
        [&] {
            return (ssize_t)uct_ep_put_zcopy(m_ep, &iov, 1, r.addr(),
                                                  r.rkey.rkey + 1, comp);
        },
        "uct_ep_put_zcopy");
    ASSERT_TRUE((status == UCS_OK) || (status == UCS_INPROGRESS))
        << ucs_status_string(status);
    EXPECT_EQ(UCS_ERR_INVALID_ADDR, flush_wait(m_ep));
    EXPECT_EQ(std::string(size, 'r'), std::string(r.buf.begin(), r.buf.end()));
    EXPECT_EQ(1u, log_lines(mark, "warn").size());
    check_ep_alive();

    /* the same with the right key streams into the region */
    comp.reset();
    status = (ucs_status_t)retry_no_resource(
        [&] {
            return (ssize_t)uct_ep_put_zcopy(m_ep, &iov, 1, r.addr(),
                                             r.rkey.rkey, comp);
        },
        "uct_ep_put_zcopy");
    ASSERT_TRUE((status == UCS_OK) || (status == UCS_INPROGRESS));
    EXPECT_EQ(UCS_OK, flush_wait(m_ep));
    EXPECT_EQ(0, memcmp(src.ptr(), r.buf.data(), size));
}

/* The iface flush reports a PUT refused on any of its eps */
TEST_F(uct_tcp_rma, iface_flush_reports_refusal)
{
    connect();
    region &r = make_region(*m_server, 16, UCT_MD_MEM_ACCESS_ALL);

    ucs::scoped_log_capture capture;
    ASSERT_EQ(UCS_OK, put(m_ep, "x", r.addr(), 12345));
    counted_completion &comp = make_comp();
    ucs_status_t status      = uct_iface_flush(m_client->iface(), 0, comp);
    ASSERT_EQ(UCS_INPROGRESS, status) << ucs_status_string(status);
    wait_for([&] { return comp.calls > 0; }, "the iface flush");
    EXPECT_EQ(UCS_ERR_INVALID_ADDR, comp.status_at_call);

    ASSERT_EQ(UCS_OK, put(m_ep, "y", r.addr(), r.rkey.rkey));
    comp.reset();
    status = uct_iface_flush(m_client->iface(), 0, comp);
    if (status == UCS_INPROGRESS) {
        wait_for([&] { return comp.calls > 0; }, "the iface flush");
        status = comp.status_at_call;
    }
    EXPECT_EQ(UCS_OK, status);
}

/* UCX_TCP_PUT_ENABLE=n on the target: incoming PUTs are refused even
 * with a valid key */
TEST_F(uct_tcp_rma, put_disabled_target_refuses)
{
    {
        ucs::scoped_setenv noput("UCX_TCP_PUT_ENABLE", "n");
        m_server = add_entity();
    }
    m_client = add_entity();
    m_rec    = &install_recorder(*m_server, GOOD_AM_ID);
    m_ep     = m_client->connect_to(*m_server);
    ASSERT_NE(nullptr, m_ep);
    EXPECT_FALSE(m_server->has_cap(UCT_IFACE_FLAG_PUT_SHORT));
    region &r = make_region(*m_server, 16, UCT_MD_MEM_ACCESS_ALL);

    ucs::scoped_log_capture capture;
    size_t mark = log_mark();
    ASSERT_EQ(UCS_OK, put(m_ep, "disabled", r.addr(), r.rkey.rkey));
    EXPECT_EQ(UCS_ERR_INVALID_ADDR, flush_wait(m_ep));
    EXPECT_EQ(std::string(16, 'r'), std::string(r.buf.begin(), r.buf.end()));
    std::string warns = join(log_lines(mark, "warn"));
    EXPECT_NE(std::string::npos, warns.find("UCX_TCP_PUT_ENABLE")) << warns;
    check_ep_alive();
}

/* Memory from uct_iface_mem_alloc with the md method is registered with
 * a key a peer can use */
TEST_F(uct_tcp_rma, md_allocated_memory_is_keyed)
{
    connect();
    uct_allocated_memory_t mem;
    ASSERT_EQ(UCS_OK, uct_iface_mem_alloc(m_server->iface(), 4096, 0,
                                          "rma test", &mem));
    EXPECT_EQ(UCT_ALLOC_METHOD_MD, mem.method);
    ASSERT_TRUE(mem.memh != UCT_MEM_HANDLE_NULL);
    std::vector<char> packed(8);
    ASSERT_EQ(UCS_OK,
              uct_md_mkey_pack(m_server->md(), mem.memh, packed.data()));
    uct_rkey_bundle_t rkey;
    ASSERT_EQ(UCS_OK,
              uct_rkey_unpack(m_server->component(), packed.data(), &rkey));

    ASSERT_EQ(UCS_OK,
              put(m_ep, "allocated", (uintptr_t)mem.address + 100, rkey.rkey));
    EXPECT_EQ(UCS_OK, flush_wait(m_ep));
    EXPECT_EQ("allocated", std::string((char *)mem.address + 100, 9));

    uct_rkey_release(m_server->component(), &rkey);
    uct_iface_mem_free(&mem);
}

/* An initiator keeps its outstanding GETs within what the target will
 * answer without stopping to read it: past that, UCS_ERR_NO_RESOURCE,
 * until answers come back. */
TEST_F(uct_tcp_rma, get_budget_holds_the_initiator_back)
{
    connect();
    const size_t size = 8192;
    region &r         = make_region(*m_server, size, UCT_MD_MEM_ACCESS_ALL);
    std::vector<counted_completion *> comps;
    ucs_status_t status = UCS_OK;

    for (int i = 0; i < 100; ++i) {
        unpack_arg &ua           = make_unpack_arg();
        counted_completion &comp = make_comp();
        status = uct_ep_get_bcopy(m_ep, unpack_to_string, &ua, size, r.addr(),
                                  r.rkey.rkey, comp);
        if (status != UCS_INPROGRESS) {
            break;
        }
        comps.push_back(&comp);
    }
    EXPECT_EQ(UCS_ERR_NO_RESOURCE, status) << ucs_status_string(status);
    /* 256 KiB of replies of 8 KiB + a header each */
    EXPECT_EQ(31u, comps.size());

    wait_for(
        [&] {
            return std::all_of(
                comps.begin(), comps.end(),
                [](counted_completion *c) { return c->calls > 0; });
        },
        "every GET");
    for (counted_completion *c : comps) {
        EXPECT_EQ(UCS_OK, c->status_at_call);
    }
    std::string got;
    EXPECT_EQ(UCS_OK, get(m_ep, size, r.addr(), r.rkey.rkey, &got));
    EXPECT_EQ(std::string(size, 'r'), got);
}

/* Endpoints that hold side state (uct_tcp_ep_ext_t) on @a e's iface */
static size_t side_states(const uct_test::entity &e)
{
    return ucs_list_length(&uct_tcp_iface(e.iface())->ext_list);
}

/* An idle connected ep keeps only its small part: the state needed to
 * connect, to stream a large PUT in, and for GETs and flushes comes and
 * goes with them, and is freed by the idle deadline after the last. */
TEST_F(uct_tcp_rma, side_state_lives_while_needed)
{
    connect();
    check_ep_alive();
    /* the handshake reply ends the client's connection state */
    wait_for([&] { return uct_tcp_ep(m_ep)->ext == nullptr; },
             "the connection state freed once connected", 0.5);
    EXPECT_EQ(0u, side_states(*m_client));
    EXPECT_EQ(0u, side_states(*m_server));

    const size_t size = 1024 * 1024;
    region &r         = make_region(*m_server, size, UCT_MD_MEM_ACCESS_ALL);
    mapped_buffer src(size, *m_client);
    mapped_buffer dst(size, *m_client);
    src.pattern_fill(11);

    uct_iov_t iov            = src.iov(0, size);
    counted_completion &comp = make_comp();
    ucs_status_t status      = (ucs_status_t)retry_no_resource(
        [&] {
            return (ssize_t)uct_ep_put_zcopy(m_ep, &iov, 1, r.addr(),
                                                  r.rkey.rkey, comp);
        },
        "uct_ep_put_zcopy");
    ASSERT_TRUE((status == UCS_OK) || (status == UCS_INPROGRESS));
    EXPECT_EQ(UCS_OK, flush_wait(m_ep));
    EXPECT_EQ(0, memcmp(src.ptr(), r.buf.data(), size));
    /* the flush needed the client's, the streamed PUT the server's */
    EXPECT_EQ(1u, side_states(*m_client));
    EXPECT_EQ(1u, side_states(*m_server));

    uct_iov_t diov            = dst.iov(0, size);
    counted_completion &gcomp = make_comp();
    status                    = (ucs_status_t)retry_no_resource(
        [&] {
            return (ssize_t)uct_ep_get_zcopy(m_ep, &diov, 1, r.addr(),
                                                                r.rkey.rkey, gcomp);
        },
        "uct_ep_get_zcopy");
    ASSERT_EQ(UCS_INPROGRESS, status);
    EXPECT_NE(nullptr, uct_tcp_ep(m_ep)->ext);
    wait_for([&] { return gcomp.calls > 0; }, "the GET");
    EXPECT_EQ(UCS_OK, gcomp.status_at_call);
    EXPECT_EQ(0, memcmp(src.ptr(), dst.ptr(), size));

    /* idle: both sides let go at the housekeeping pass */
    wait_for(
        [&] {
            return (side_states(*m_client) == 0) &&
                   (side_states(*m_server) == 0);
        },
        "the side state freed at the idle deadline",
        UCT_TCP_HOUSEKEEPING_SEC * 3);
    EXPECT_EQ(nullptr, uct_tcp_ep(m_ep)->ext);

    /* and come back when needed again */
    std::string got;
    ASSERT_EQ(UCS_OK, get(m_ep, 16, r.addr(), r.rkey.rkey, &got));
    EXPECT_EQ(std::string((const char *)src.ptr(), 16), got);
    check_ep_alive();
}

/* An ep destroyed with a GET outstanding completes it as cancelled and
 * frees its side state with it. */
TEST_F(uct_tcp_rma, destroy_with_get_frees_side_state)
{
    connect();
    check_ep_alive();
    wait_for([&] { return side_states(*m_client) == 0; },
             "the connection state freed once connected", 0.5);
    region &r = make_region(*m_server, 64, UCT_MD_MEM_ACCESS_ALL);
    uct_ep_h ep;
    ASSERT_EQ(UCS_OK, create_ep_to(*m_client, *m_server, &ep));

    unpack_arg &ua           = make_unpack_arg();
    counted_completion &comp = make_comp();
    ucs_status_t status      = (ucs_status_t)retry_no_resource(
        [&] {
            return (ssize_t)uct_ep_get_bcopy(ep, unpack_to_string, &ua, 8,
                                                  r.addr(), r.rkey.rkey, comp);
        },
        "uct_ep_get_bcopy");
    ASSERT_EQ(UCS_INPROGRESS, status);
    EXPECT_EQ(1u, side_states(*m_client));

    destroy_own_ep(ep);
    EXPECT_EQ(1, comp.calls);
    EXPECT_EQ(UCS_ERR_CANCELED, comp.status_at_call);
    EXPECT_EQ(0u, side_states(*m_client));
    check_ep_alive();
}
