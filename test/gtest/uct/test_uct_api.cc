/*
 * Core API behaviour that does not depend on one transport: argument
 * errors with their log lines, configuration get/modify, memory
 * allocation methods, worker progress callbacks, unknown field_mask bits,
 * and the ops-table rule (an operation a transport does not support
 * returns UCS_ERR_UNSUPPORTED) checked against every resource's
 * capability flags.
 */
#include "uct_test.h"

#include <chrono>
#include <cstring>

namespace {

typedef uct_test::entity entity;
typedef uct_test::entity_params entity_params;
typedef uct_test::mapped_buffer mapped_buffer;

const uint8_t AM_ID = 2;

size_t pack_nothing(void *dest, void *arg)
{
    return 0;
}

void unpack_nothing(void *arg, const void *data, size_t length)
{}

ucs_status_t pending_cb(uct_pending_req_t *self)
{
    return UCS_OK;
}

ucs_status_t count_am_cb(void *arg, void *data, size_t length, unsigned flags)
{
    ++*static_cast<unsigned *>(arg);
    return UCS_OK;
}

} // namespace

class uct_api : public ucs::test {
protected:
    /* The resource the single-transport tests use (self when there). */
    const resource *any_resource()
    {
        for (const std::vector<resource> *list :
             {&uct_test::enum_resources(), &uct_test::all_resources()}) {
            for (const resource &r : *list) {
                if (r.tl_name == "self") {
                    return &r;
                }
            }
            if (!list->empty()) {
                return &list->front();
            }
        }
        return NULL;
    }

    /* Progresses @a entities until @a cond or 10 s (failure). */
    bool wait_for(const std::vector<entity *> &entities,
                  const std::function<bool()> &cond)
    {
        auto timeout =
            std::chrono::seconds(ucs::running_on_valgrind() ? 50 : 10);
        auto deadline = std::chrono::steady_clock::now() + timeout;
        while (!cond()) {
            if (std::chrono::steady_clock::now() > deadline) {
                ADD_FAILURE() << "timed out";
                return false;
            }
            for (entity *e : entities) {
                e->progress();
            }
        }
        return true;
    }

    void test_mem_alloc(uct_alloc_method_t method, size_t length, bool may_fail,
                        uct_md_h md);
};

#define UCT_API_REQUIRE_RESOURCE(_r)                    \
    const resource *_r = any_resource();                \
    if (_r == NULL) {                                   \
        GTEST_SKIP() << "no transport resource at all"; \
    }

/* ------------------------------------------------------------------------
 * Resources and argument errors
 */

TEST_F(uct_api, query_components_null_args)
{
    uct_component_h *components;
    unsigned num;

    ucs::scoped_log_capture cap;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_query_components(NULL, &num));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_query_components(&components, NULL));
    EXPECT_TRUE(cap.contains("uct_query_components"));
}

TEST_F(uct_api, self_transport_present)
{
    bool found = false;
    for (const resource &r : uct_test::all_resources()) {
        if ((r.component_name == "self") && (r.md_name == "self") &&
            (r.tl_name == "self") && (r.dev_name == "memory")) {
            EXPECT_EQ(UCT_DEVICE_TYPE_SELF, r.dev_type);
            found = true;
        }
    }
    EXPECT_TRUE(found) << "component self / md self / transport self / "
                       << "device memory not found; is UCX_MODULE_DIR right?";
}

TEST_F(uct_api, md_open_unknown_md)
{
    UCT_API_REQUIRE_RESOURCE(r);
    uct_component_h component = uct_test::find_component(r->component_name);
    ASSERT_NE(nullptr, component);

    uct_md_config_t *config;
    ASSERT_EQ(UCS_OK, uct_md_config_read(component, NULL, NULL, &config));
    uct_md_h md = NULL;
    {
        ucs::scoped_log_capture cap;
        EXPECT_EQ(UCS_ERR_NO_DEVICE,
                  uct_md_open(component, "no_such_md", config, &md));
        EXPECT_TRUE(cap.contains("no_such_md"));
    }
    EXPECT_EQ(nullptr, md) << "md_p set on failure";
    uct_config_release(config);
}

TEST_F(uct_api, iface_config_read_unknown_tl)
{
    UCT_API_REQUIRE_RESOURCE(r);
    entity e(*r, entity_params());
    uct_iface_config_t *config = NULL;

    ucs::scoped_log_capture cap;
    EXPECT_EQ(UCS_ERR_NO_DEVICE, uct_md_iface_config_read(e.md(), "no_such_tl",
                                                          NULL, NULL, &config));
    EXPECT_TRUE(cap.contains("no_such_tl"));
    EXPECT_EQ(nullptr, config);
}

class uct_api_iface_open : public uct_api {
protected:
    /* Opens an iface of @a r's md with @a params; expects @a expected and
     * a log line containing @a text. */
    void expect_open_fails(entity &e, const uct_iface_params_t *params,
                           ucs_status_t expected, const std::string &text)
    {
        uct_iface_h iface = NULL;
        ucs::scoped_log_capture cap;
        ucs_status_t status =
            uct_iface_open(e.md(), e.worker(), params, NULL, &iface);
        EXPECT_EQ(expected, status) << ucs_status_string(status);
        EXPECT_TRUE(cap.contains(text))
            << "no log line containing '" << text << "'";
        EXPECT_EQ(nullptr, iface) << "iface_p set on failure";
        if (status == UCS_OK) {
            uct_iface_close(iface);
        }
    }

    uct_iface_params_t device_params(const char *tl, const char *dev)
    {
        uct_iface_params_t params;
        memset(&params, 0, sizeof(params));
        params.field_mask =
            UCT_IFACE_PARAM_FIELD_OPEN_MODE | UCT_IFACE_PARAM_FIELD_DEVICE;
        params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
        params.mode.device.tl_name  = tl;
        params.mode.device.dev_name = dev;
        return params;
    }
};

TEST_F(uct_api_iface_open, unknown_transport)
{
    UCT_API_REQUIRE_RESOURCE(r);
    entity e(*r, entity_params());
    uct_iface_params_t params =
        device_params("no_such_tl", r->dev_name.c_str());
    expect_open_fails(e, &params, UCS_ERR_NO_DEVICE, "no_such_tl");
}

TEST_F(uct_api_iface_open, unknown_device)
{
    UCT_API_REQUIRE_RESOURCE(r);
    entity e(*r, entity_params());
    uct_iface_params_t params =
        device_params(r->tl_name.c_str(), "no_such_dev");
    expect_open_fails(e, &params, UCS_ERR_NO_DEVICE, "no_such_dev");
}

TEST_F(uct_api_iface_open, null_params)
{
    UCT_API_REQUIRE_RESOURCE(r);
    entity e(*r, entity_params());
    expect_open_fails(e, NULL, UCS_ERR_INVALID_PARAM, "params");
}

TEST_F(uct_api_iface_open, no_open_mode)
{
    UCT_API_REQUIRE_RESOURCE(r);
    entity e(*r, entity_params());
    uct_iface_params_t params =
        device_params(r->tl_name.c_str(), r->dev_name.c_str());
    params.field_mask &= ~(uint64_t)UCT_IFACE_PARAM_FIELD_OPEN_MODE;
    expect_open_fails(e, &params, UCS_ERR_INVALID_PARAM, "open_mode");
}

TEST_F(uct_api, ep_create_without_iface)
{
    UCT_API_REQUIRE_RESOURCE(r);
    entity e(*r, entity_params());
    uct_ep_params_t params;
    uct_ep_h ep = NULL;

    memset(&params, 0, sizeof(params));
    params.iface = e.iface(); /* set, but the field bit is not */
    {
        ucs::scoped_log_capture cap;
        EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_ep_create(&params, &ep));
        EXPECT_TRUE(cap.contains("UCT_EP_PARAM_FIELD_IFACE"));
    }
    {
        ucs::scoped_log_capture cap;
        EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_ep_create(NULL, &ep));
        EXPECT_TRUE(cap.contains("uct_ep_create"));
    }
    EXPECT_EQ(nullptr, ep);
}

/* ------------------------------------------------------------------------
 * Configuration
 */

TEST_F(uct_api, config_get_modify)
{
    UCT_API_REQUIRE_RESOURCE(r);
    entity e(*r, entity_params());
    uct_iface_config_t *config;
    char value[256];

    ASSERT_EQ(UCS_OK, uct_md_iface_config_read(e.md(), r->tl_name.c_str(), NULL,
                                               NULL, &config));

    /* Known names round-trip */
    EXPECT_EQ(UCS_OK,
              uct_config_get(config, "MAX_NUM_EPS", value, sizeof(value)));
    EXPECT_EQ(UCS_OK, uct_config_modify(config, "MAX_NUM_EPS", "100"));
    EXPECT_EQ(UCS_OK,
              uct_config_get(config, "MAX_NUM_EPS", value, sizeof(value)));
    EXPECT_STREQ("100", value);

    EXPECT_EQ(UCS_OK, uct_config_modify(config, "ALLOC", "heap,mmap"));
    EXPECT_EQ(UCS_OK, uct_config_get(config, "ALLOC", value, sizeof(value)));
    EXPECT_STREQ("heap,mmap", value);

    /* Unknown names */
    {
        ucs::scoped_log_capture cap;
        EXPECT_EQ(UCS_ERR_NO_ELEM,
                  uct_config_get(config, "NO_SUCH_VAR", value, sizeof(value)));
        EXPECT_EQ(UCS_ERR_NO_ELEM,
                  uct_config_modify(config, "NO_SUCH_VAR", "1"));
    }

    /* A bad value is refused with an error naming it; the old one stays */
    {
        ucs::scoped_log_capture cap;
        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  uct_config_modify(config, "MAX_NUM_EPS", "lots"));
        EXPECT_TRUE(cap.contains("lots")) << "no error line naming the value";
    }
    EXPECT_EQ(UCS_OK,
              uct_config_get(config, "MAX_NUM_EPS", value, sizeof(value)));
    EXPECT_STREQ("100", value);

    /* The modified config takes effect */
    uct_iface_params_t params;
    memset(&params, 0, sizeof(params));
    params.field_mask =
        UCT_IFACE_PARAM_FIELD_OPEN_MODE | UCT_IFACE_PARAM_FIELD_DEVICE;
    params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = r->tl_name.c_str();
    params.mode.device.dev_name = r->dev_name.c_str();
    uct_iface_h iface;
    ASSERT_EQ(UCS_OK,
              uct_iface_open(e.md(), e.worker(), &params, config, &iface));
    uct_config_release(config);

    uct_iface_attr_t attr;
    ASSERT_EQ(UCS_OK, uct_iface_query(iface, &attr));
    EXPECT_GT(attr.max_num_eps, 0u);
    EXPECT_LE(attr.max_num_eps, 100u) << "MAX_NUM_EPS=100 was ignored";

    uct_allocated_memory_t mem;
    ASSERT_EQ(UCS_OK, uct_iface_mem_alloc(iface, 4096, UCT_MD_MEM_ACCESS_ALL,
                                          "gtest", &mem));
    EXPECT_EQ(UCT_ALLOC_METHOD_HEAP, mem.method) << "ALLOC=heap,mmap ignored";
    uct_iface_mem_free(&mem);
    uct_iface_close(iface);
}

/* ------------------------------------------------------------------------
 * Memory allocation
 */

void uct_api::test_mem_alloc(uct_alloc_method_t method, size_t length,
                             bool may_fail, uct_md_h md)
{
    uct_mem_alloc_params_t params;
    uct_allocated_memory_t mem;

    memset(&params, 0, sizeof(params));
    params.field_mask =
        UCT_MEM_ALLOC_PARAM_FIELD_FLAGS | UCT_MEM_ALLOC_PARAM_FIELD_NAME;
    params.flags =
        UCT_MD_MEM_ACCESS_ALL | (may_fail ? UCT_MD_MEM_FLAG_HIDE_ERRORS : 0);
    params.name = "gtest";
    if (md != NULL) {
        params.field_mask |= UCT_MEM_ALLOC_PARAM_FIELD_MDS;
        params.mds.mds   = &md;
        params.mds.count = 1;
    }

    ucs_status_t status = uct_mem_alloc(length, &method, 1, &params, &mem);
    if (may_fail && (status != UCS_OK)) {
        GTEST_SKIP() << uct_alloc_method_names[method]
                     << " allocation is not available here: "
                     << ucs_status_string(status);
    }
    ASSERT_EQ(UCS_OK, status) << uct_alloc_method_names[method];
    EXPECT_EQ(method, mem.method);
    EXPECT_GE(mem.length, length);
    ASSERT_NE(nullptr, mem.address);
    EXPECT_EQ(UCS_MEMORY_TYPE_HOST, mem.mem_type);
    if (method == UCT_ALLOC_METHOD_MD) {
        EXPECT_EQ(md, mem.md);
    }
    memset(mem.address, 0x5a, length);
    EXPECT_EQ(UCS_OK, uct_mem_free(&mem));
}

TEST_F(uct_api, mem_alloc_heap)
{
    test_mem_alloc(UCT_ALLOC_METHOD_HEAP, 10000, false, NULL);
}

TEST_F(uct_api, mem_alloc_mmap)
{
    test_mem_alloc(UCT_ALLOC_METHOD_MMAP, 10000, false, NULL);
}

TEST_F(uct_api, mem_alloc_thp)
{
    test_mem_alloc(UCT_ALLOC_METHOD_THP, 4ul * 1024 * 1024, true, NULL);
}

TEST_F(uct_api, mem_alloc_huge)
{
    test_mem_alloc(UCT_ALLOC_METHOD_HUGE, 2ul * 1024 * 1024, true, NULL);
}

TEST_F(uct_api, mem_alloc_md)
{
    /* An md that can allocate, if any resource has one */
    for (const resource &r : uct_test::all_resources()) {
        entity e(r, entity_params());
        if (e.md_attr().cap.flags & UCT_MD_FLAG_ALLOC) {
            test_mem_alloc(UCT_ALLOC_METHOD_MD, 10000, false, e.md());
            return;
        }
    }

    /* None: asking for md memory fails with an error line */
    UCT_API_REQUIRE_RESOURCE(r);
    entity e(*r, entity_params());
    uct_alloc_method_t method = UCT_ALLOC_METHOD_MD;
    uct_mem_alloc_params_t params;
    uct_allocated_memory_t mem;
    uct_md_h md = e.md();
    memset(&params, 0, sizeof(params));
    params.field_mask = UCT_MEM_ALLOC_PARAM_FIELD_MDS;
    params.mds.mds    = &md;
    params.mds.count  = 1;
    ucs::scoped_log_capture cap;
    EXPECT_NE(UCS_OK, uct_mem_alloc(4096, &method, 1, &params, &mem));
    EXPECT_TRUE(cap.contains("failed to allocate"));
}

TEST_F(uct_api, mem_alloc_bad_args)
{
    uct_alloc_method_t method = UCT_ALLOC_METHOD_HEAP;
    uct_mem_alloc_params_t params;
    uct_allocated_memory_t mem;
    memset(&params, 0, sizeof(params));

    ucs::scoped_log_capture cap;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_mem_alloc(0, &method, 1, &params, &mem));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_mem_alloc(64, NULL, 1, &params, &mem));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_mem_alloc(64, &method, 0, &params, &mem));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_mem_alloc(64, &method, 1, NULL, &mem));
    EXPECT_TRUE(cap.contains("uct_mem_alloc"));
}

TEST_F(uct_api, iface_mem_alloc)
{
    UCT_API_REQUIRE_RESOURCE(r);
    for (const char *alloc : {"", "mmap"}) {
        SCOPED_TRACE(std::string("ALLOC=") + alloc);
        entity_params params;
        if (*alloc != '\0') {
            params.config.push_back({"ALLOC", alloc});
        }
        entity e(*r, params);
        uct_allocated_memory_t mem;
        const size_t length = 65536;

        ASSERT_EQ(UCS_OK,
                  uct_iface_mem_alloc(e.iface(), length, UCT_MD_MEM_ACCESS_ALL,
                                      "gtest", &mem));
        ASSERT_NE(nullptr, mem.address);
        EXPECT_GE(mem.length, length);
        if (*alloc != '\0') {
            EXPECT_EQ(UCT_ALLOC_METHOD_MMAP, mem.method);
        }
        /* memory of another method has a handle when the md registers;
         * an md that only allocates (posix, sysv) gives one to its own */
        if ((mem.method == UCT_ALLOC_METHOD_MD) ||
            (e.md_attr().cap.flags & UCT_MD_FLAG_REG)) {
            EXPECT_TRUE(mem.memh != UCT_MEM_HANDLE_NULL)
                << "iface memory not registered with the md";
        }
        memset(mem.address, 0x3c, length);
        uct_iface_mem_free(&mem);
    }
}

/* ------------------------------------------------------------------------
 * Worker progress callbacks
 */

namespace {

struct progress_state {
    unsigned calls;
    bool unregister_self;
    uct_worker_h worker;
    uct_worker_cb_id_t id;
};

unsigned progress_cb(void *arg)
{
    progress_state *s = static_cast<progress_state *>(arg);
    ++s->calls;
    if (s->unregister_self) {
        uct_worker_progress_unregister_safe(s->worker, &s->id);
    }
    return 1;
}

} // namespace

TEST_F(uct_api, worker_progress_register_safe)
{
    uct_worker_h worker;
    ASSERT_EQ(UCS_OK, uct_worker_create(NULL, UCS_THREAD_MODE_SINGLE, &worker));

    progress_state a = {0, false, worker, UCS_CALLBACKQ_ID_NULL};
    progress_state b = {0, true, worker, UCS_CALLBACKQ_ID_NULL};

    uct_worker_progress_register_safe(worker, progress_cb, &a, 0, &a.id);
    EXPECT_NE(UCS_CALLBACKQ_ID_NULL, a.id);
    EXPECT_EQ(1u, uct_worker_progress(worker));
    EXPECT_EQ(1u, uct_worker_progress(worker));
    EXPECT_EQ(2u, a.calls);

    /* Registering again with a live id does not add a second callback */
    uct_worker_progress_register_safe(worker, progress_cb, &a, 0, &a.id);
    uct_worker_progress(worker);
    EXPECT_EQ(3u, a.calls);

    /* A callback that unregisters itself runs once */
    uct_worker_progress_register_safe(worker, progress_cb, &b, 0, &b.id);
    uct_worker_progress(worker);
    uct_worker_progress(worker);
    uct_worker_progress(worker);
    EXPECT_EQ(1u, b.calls);
    EXPECT_EQ(UCS_CALLBACKQ_ID_NULL, b.id);
    EXPECT_EQ(6u, a.calls);

    uct_worker_progress_unregister_safe(worker, &a.id);
    EXPECT_EQ(UCS_CALLBACKQ_ID_NULL, a.id);
    EXPECT_EQ(0u, uct_worker_progress(worker));
    EXPECT_EQ(6u, a.calls);

    /* Unregistering twice is harmless */
    uct_worker_progress_unregister_safe(worker, &a.id);
    uct_worker_destroy(worker);
}

/* ------------------------------------------------------------------------
 * field_mask bits the library does not know are ignored
 */

TEST_F(uct_api, unknown_field_mask_bits_ignored)
{
    UCT_API_REQUIRE_RESOURCE(r);
    const uint64_t unknown = UCS_BIT(62);
    entity_params params;
    params.extra_field_mask = unknown;

    entity receiver(*r, params);
    entity sender(*r, params);
    entity *from = sender.is_reachable(receiver) ? &sender : &receiver;
    uct_ep_h ep  = from->connect_to(receiver, unknown);
    ASSERT_NE(nullptr, ep) << "cannot connect to " << *r;

    unsigned count = 0;
    ASSERT_EQ(UCS_OK, receiver.set_am_handler(AM_ID, count_am_cb, &count));
    if (from->has_cap(UCT_IFACE_FLAG_AM_SHORT)) {
        ucs_status_t status;
        ASSERT_TRUE(wait_for({&sender, &receiver}, [&] {
            status = uct_ep_am_short(ep, AM_ID, 0, NULL, 0);
            return status != UCS_ERR_NO_RESOURCE;
        }));
        ASSERT_EQ(UCS_OK, status);
        EXPECT_TRUE(wait_for({&sender, &receiver}, [&] { return count == 1; }));
    }
    sender.destroy_eps();
    receiver.destroy_eps();
}

/* ------------------------------------------------------------------------
 * The ops-table rule: an op without its capability says UNSUPPORTED
 */

TEST_F(uct_api, unsupported_ops_return_unsupported)
{
    if (uct_test::enum_resources().empty()) {
        GTEST_SKIP() << "no transport resource selected";
    }

    for (const resource &r : uct_test::enum_resources()) {
        SCOPED_TRACE(r.test_name);
        entity e(r, entity_params());
        const uct_iface_attr_t &attr = e.iface_attr();
        uint64_t caps                = attr.cap.flags;
        unsigned checked             = 0;

#define EXPECT_UNSUPPORTED(_flag_set, _call)                       \
    if (!(_flag_set)) {                                            \
        ssize_t _ret = (ssize_t)(_call);                           \
        EXPECT_EQ((ssize_t)UCS_ERR_UNSUPPORTED, _ret)              \
            << #_call << " returned "                              \
            << ((_ret < 0) ? ucs_status_string((ucs_status_t)_ret) \
                           : std::to_string(_ret).c_str())         \
            << " without the capability";                          \
        ++checked;                                                 \
    }

        /* Interface calls */
        int fd;
        EXPECT_UNSUPPORTED(attr.cap.event_flags & UCT_IFACE_FLAG_EVENT_FD,
                           uct_iface_event_fd_get(e.iface(), &fd));
        EXPECT_UNSUPPORTED(attr.cap.event_flags != 0,
                           uct_iface_event_arm(e.iface(), UCT_EVENT_RECV));

        uct_ep_h ep = e.connect_to(e);
        if (ep == NULL) {
            continue;
        }

        ucs::scoped_log_capture cap; /* an op may log why it refuses */
        mapped_buffer buf(64, e);
        uct_iov_t iov  = buf.iov(0, 8);
        char small[64] = {0};
        uint32_t r32;
        uint64_t r64;
        counted_completion comp;
        uct_pending_req_t req;
        memset(&req, 0, sizeof(req));
        req.func = pending_cb;

        EXPECT_UNSUPPORTED(caps & UCT_IFACE_FLAG_AM_SHORT,
                           uct_ep_am_short(ep, AM_ID, 0, small, 8));
        EXPECT_UNSUPPORTED(caps & UCT_IFACE_FLAG_AM_SHORT,
                           uct_ep_am_short_iov(ep, AM_ID, &iov, 1));
        EXPECT_UNSUPPORTED(caps & UCT_IFACE_FLAG_AM_BCOPY,
                           uct_ep_am_bcopy(ep, AM_ID, pack_nothing, NULL, 0));
        EXPECT_UNSUPPORTED(
            caps & UCT_IFACE_FLAG_AM_ZCOPY,
            uct_ep_am_zcopy(ep, AM_ID, NULL, 0, &iov, 1, 0, comp));
        EXPECT_UNSUPPORTED(
            caps & UCT_IFACE_FLAG_PUT_SHORT,
            uct_ep_put_short(ep, small, 8, buf.addr(), buf.rkey()));
        EXPECT_UNSUPPORTED(
            caps & UCT_IFACE_FLAG_PUT_BCOPY,
            uct_ep_put_bcopy(ep, pack_nothing, NULL, buf.addr(), buf.rkey()));
        EXPECT_UNSUPPORTED(
            caps & UCT_IFACE_FLAG_PUT_ZCOPY,
            uct_ep_put_zcopy(ep, &iov, 1, buf.addr(), buf.rkey(), comp));
        EXPECT_UNSUPPORTED(
            caps & UCT_IFACE_FLAG_GET_SHORT,
            uct_ep_get_short(ep, small, 8, buf.addr(), buf.rkey()));
        EXPECT_UNSUPPORTED(caps & UCT_IFACE_FLAG_GET_BCOPY,
                           uct_ep_get_bcopy(ep, unpack_nothing, NULL, 8,
                                            buf.addr(), buf.rkey(), comp));
        EXPECT_UNSUPPORTED(
            caps & UCT_IFACE_FLAG_GET_ZCOPY,
            uct_ep_get_zcopy(ep, &iov, 1, buf.addr(), buf.rkey(), comp));
        EXPECT_UNSUPPORTED(caps & UCT_IFACE_FLAG_PENDING,
                           uct_ep_pending_add(ep, &req, 0));
        EXPECT_UNSUPPORTED(caps & UCT_IFACE_FLAG_EP_CHECK,
                           uct_ep_check(ep, 0, NULL));

        std::vector<char> ep_addr(std::max<size_t>(attr.ep_addr_len, 1));
        EXPECT_UNSUPPORTED(
            caps & UCT_IFACE_FLAG_CONNECT_TO_EP,
            uct_ep_get_address(ep, (uct_ep_addr_t *)ep_addr.data()));
        EXPECT_UNSUPPORTED(
            caps & UCT_IFACE_FLAG_CONNECT_TO_EP,
            uct_ep_connect_to_ep(ep,
                                 (const uct_device_addr_t *)e.dev_addr().data(),
                                 (const uct_ep_addr_t *)ep_addr.data()));

        for (int op = UCT_ATOMIC_OP_ADD; op < UCT_ATOMIC_OP_CSWAP; ++op) {
            SCOPED_TRACE("atomic op " + std::to_string(op));
            uct_atomic_op_t aop = (uct_atomic_op_t)op;
            EXPECT_UNSUPPORTED(
                attr.cap.atomic32.op_flags & UCS_BIT(op),
                uct_ep_atomic32_post(ep, aop, 1, buf.addr(), buf.rkey()));
            EXPECT_UNSUPPORTED(
                attr.cap.atomic64.op_flags & UCS_BIT(op),
                uct_ep_atomic64_post(ep, aop, 1, buf.addr(), buf.rkey()));
            EXPECT_UNSUPPORTED(attr.cap.atomic32.fop_flags & UCS_BIT(op),
                               uct_ep_atomic32_fetch(ep, aop, 1, &r32,
                                                     buf.addr(), buf.rkey(),
                                                     comp));
            EXPECT_UNSUPPORTED(attr.cap.atomic64.fop_flags & UCS_BIT(op),
                               uct_ep_atomic64_fetch(ep, aop, 1, &r64,
                                                     buf.addr(), buf.rkey(),
                                                     comp));
        }
        EXPECT_UNSUPPORTED(attr.cap.atomic32.fop_flags &
                               UCS_BIT(UCT_ATOMIC_OP_CSWAP),
                           uct_ep_atomic_cswap32(ep, 0, 1, buf.addr(),
                                                 buf.rkey(), &r32, comp));
        EXPECT_UNSUPPORTED(attr.cap.atomic64.fop_flags &
                               UCS_BIT(UCT_ATOMIC_OP_CSWAP),
                           uct_ep_atomic_cswap64(ep, 0, 1, buf.addr(),
                                                 buf.rkey(), &r64, comp));
#undef EXPECT_UNSUPPORTED

        EXPECT_EQ(0, comp.calls) << "an unsupported op ran the completion";
        RecordProperty(r.test_name + "_unsupported_ops_checked", (int)checked);
        e.destroy_eps();
    }
}

/* ------------------------------------------------------------------------
 * Tag-matching offload: declared as UCX declares it, offered by no
 * transport here
 */

static void tag_ctx_called(uct_tag_context_t *self)
{
    ++*(int *)self->priv;
}

static void tag_ctx_completed(uct_tag_context_t *self, uct_tag_t stag,
                              uint64_t imm, size_t length, void *inline_data,
                              ucs_status_t status)
{
    ++*(int *)self->priv;
}

static void tag_ctx_rndv(uct_tag_context_t *self, uct_tag_t stag,
                         const void *header, unsigned header_length,
                         ucs_status_t status, unsigned flags)
{
    ++*(int *)self->priv;
}

TEST_F(uct_api, tag_offload_unsupported_on_every_transport)
{
    const uint64_t tag_flags =
        UCT_IFACE_FLAG_TAG_EAGER_SHORT | UCT_IFACE_FLAG_TAG_EAGER_BCOPY |
        UCT_IFACE_FLAG_TAG_EAGER_ZCOPY | UCT_IFACE_FLAG_TAG_RNDV_ZCOPY;

    if (uct_test::enum_resources().empty()) {
        GTEST_SKIP() << "no transport resource selected";
    }

    for (const resource &r : uct_test::enum_resources()) {
        SCOPED_TRACE(r.test_name);
        entity e(r, entity_params());
        const uct_iface_attr_t &attr = e.iface_attr();
        uct_iface_attr_t zero;

        memset(&zero, 0, sizeof(zero));
        EXPECT_EQ(0u, attr.cap.flags & tag_flags)
            << "a transport claims tag offload";
        EXPECT_EQ(0, memcmp(&attr.cap.tag, &zero.cap.tag, sizeof(zero.cap.tag)))
            << "cap.tag is not all zero";

        mapped_buffer buf(64, e);
        uct_iov_t iov = buf.iov(0, 8);
        uct_tag_context_t ctx;
        memset(&ctx, 0, sizeof(ctx));
        ctx.tag_consumed_cb = tag_ctx_called;
        ctx.completed_cb    = tag_ctx_completed;
        ctx.rndv_cb         = tag_ctx_rndv;
        EXPECT_EQ(
            UCS_ERR_UNSUPPORTED,
            uct_iface_tag_recv_zcopy(e.iface(), 0x11, ~0ull, &iov, 1, &ctx));
        EXPECT_EQ(UCS_ERR_UNSUPPORTED,
                  uct_iface_tag_recv_cancel(e.iface(), &ctx, 1));

        uct_ep_h ep = e.connect_to(e);
        if (ep == NULL) {
            continue;
        }
        char small[8] = {0};
        counted_completion comp;
        EXPECT_EQ(UCS_ERR_UNSUPPORTED,
                  uct_ep_tag_eager_short(ep, 0x11, small, sizeof(small)));
        EXPECT_EQ((ssize_t)UCS_ERR_UNSUPPORTED,
                  uct_ep_tag_eager_bcopy(ep, 0x11, 7, pack_nothing, NULL, 0));
        EXPECT_EQ(UCS_ERR_UNSUPPORTED,
                  uct_ep_tag_eager_zcopy(ep, 0x11, 7, &iov, 1, 0, comp));
        ucs_status_ptr_t op =
            uct_ep_tag_rndv_zcopy(ep, 0x11, small, 4, &iov, 1, 0, comp);
        ASSERT_TRUE(UCS_PTR_IS_ERR(op));
        EXPECT_EQ(UCS_ERR_UNSUPPORTED, UCS_PTR_STATUS(op));
        EXPECT_EQ(UCS_ERR_UNSUPPORTED, uct_ep_tag_rndv_cancel(ep, NULL));
        EXPECT_EQ(UCS_ERR_UNSUPPORTED,
                  uct_ep_tag_rndv_request(ep, 0x11, small, 4, 0));
        EXPECT_EQ(0, comp.calls) << "a refused tag send ran the completion";
        EXPECT_EQ(0, *(int *)ctx.priv) << "a refused receive ran a callback";
        e.destroy_eps();
    }
}
