/*
 * The ib memory domain through the uct API: registration of 1 byte to
 * 64 MiB, access rights, remote keys (packed, unpacked, and used by a raw
 * verbs RC QP pair to write into registered memory), allocation, the
 * registration cache seen through the md, fork-init modes, and bad inputs.
 *
 * Every test runs with the registration cache off (UCX_IB_RCACHE=no) and
 * on (yes); the cached variant is skipped when the md has no cache. The
 * tests run on rxe_lo, as set up by test/rxe/run.sh, and skip without it.
 */
#include "ib_lookup.h"

#include <common/test.h>

extern "C" {
#include <uct/api/uct.h>
#include <uct/base/uct_component.h>
#include <uct/base/uct_md.h>
#include <uct/ib/base/ib_md.h>
#include <ucs/sys/sys.h>
#include <ucs/vfs/vfs.h>
}

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace {

const char *const TEST_DEVICE = "rxe_lo";
const unsigned GID_INDEX      = 1; /* ::ffff:127.0.0.1, RoCE v2 */

/*
 * Two RC QPs connected to each other on port 1 of a device: the requester
 * in a protection domain of its own, the responder in the md's, so that
 * an RDMA write names the md's memory by the rkey the md packed.
 */
class rc_qp_pair {
public:
    rc_qp_pair(struct ibv_context *md_ctx, struct ibv_pd *md_pd)
    {
        m_ok  = false;
        m_ctx = md_ctx;
        m_pd  = ibv_alloc_pd(m_ctx);
        m_cq  = ibv_create_cq(m_ctx, 16, NULL, NULL, 0);
        m_rcq = ibv_create_cq(m_ctx, 16, NULL, NULL, 0);
        if ((m_pd == NULL) || (m_cq == NULL) || (m_rcq == NULL)) {
            ADD_FAILURE() << "pd/cq creation failed: " << strerror(errno);
            return;
        }

        m_req = create_qp(m_pd, m_cq);
        m_rsp = create_qp(md_pd, m_rcq);
        if ((m_req == NULL) || (m_rsp == NULL)) {
            return;
        }

        m_ok = connect(m_req, m_rsp->qp_num) && connect(m_rsp, m_req->qp_num);
    }

    ~rc_qp_pair()
    {
        if (m_req != NULL) {
            ibv_destroy_qp(m_req);
        }
        if (m_rsp != NULL) {
            ibv_destroy_qp(m_rsp);
        }
        if (m_cq != NULL) {
            ibv_destroy_cq(m_cq);
        }
        if (m_rcq != NULL) {
            ibv_destroy_cq(m_rcq);
        }
        if (m_pd != NULL) {
            ibv_dealloc_pd(m_pd);
        }
    }

    bool ok() const
    {
        return m_ok;
    }

    struct ibv_pd *pd() const
    {
        return m_pd;
    }

    /*
     * RDMA write of @a length bytes from @a src (lkey) to @a remote_addr
     * with @a rkey; the work completion status, or -1 on a local failure.
     */
    int rdma_write(void *src, size_t length, uint32_t lkey,
                   uint64_t remote_addr, uint32_t rkey)
    {
        struct ibv_send_wr wr, *bad_wr;
        struct ibv_sge sge;
        struct ibv_wc wc;
        int ret;

        sge.addr   = (uintptr_t)src;
        sge.length = (uint32_t)length;
        sge.lkey   = lkey;

        memset(&wr, 0, sizeof(wr));
        wr.wr_id               = 1;
        wr.sg_list             = &sge;
        wr.num_sge             = 1;
        wr.opcode              = IBV_WR_RDMA_WRITE;
        wr.send_flags          = IBV_SEND_SIGNALED;
        wr.wr.rdma.remote_addr = remote_addr;
        wr.wr.rdma.rkey        = rkey;

        ret = ibv_post_send(m_req, &wr, &bad_wr);
        if (ret != 0) {
            ADD_FAILURE() << "ibv_post_send: " << strerror(ret);
            return -1;
        }

        auto deadline =
            std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (std::chrono::steady_clock::now() < deadline) {
            ret = ibv_poll_cq(m_cq, 1, &wc);
            if (ret < 0) {
                ADD_FAILURE() << "ibv_poll_cq failed";
                return -1;
            }
            if (ret == 1) {
                return wc.status;
            }
            usleep(100);
        }
        ADD_FAILURE() << "no completion of the RDMA write in 60 s";
        return -1;
    }

private:
    struct ibv_qp *create_qp(struct ibv_pd *pd, struct ibv_cq *cq)
    {
        struct ibv_qp_init_attr attr;
        struct ibv_qp *qp;

        memset(&attr, 0, sizeof(attr));
        attr.send_cq          = cq;
        attr.recv_cq          = cq;
        attr.qp_type          = IBV_QPT_RC;
        attr.cap.max_send_wr  = 8;
        attr.cap.max_recv_wr  = 8;
        attr.cap.max_send_sge = 1;
        attr.cap.max_recv_sge = 1;
        qp                    = ibv_create_qp(pd, &attr);
        if (qp == NULL) {
            ADD_FAILURE() << "ibv_create_qp: " << strerror(errno);
        }
        return qp;
    }

    bool connect(struct ibv_qp *qp, uint32_t remote_qpn)
    {
        struct ibv_qp_attr attr;
        union ibv_gid gid;
        int ret;

        ret = ibv_query_gid(m_ctx, 1, GID_INDEX, &gid);
        if (ret != 0) {
            ADD_FAILURE() << "ibv_query_gid: " << strerror(errno);
            return false;
        }

        memset(&attr, 0, sizeof(attr));
        attr.qp_state        = IBV_QPS_INIT;
        attr.pkey_index      = 0;
        attr.port_num        = 1;
        attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
                               IBV_ACCESS_REMOTE_READ |
                               IBV_ACCESS_REMOTE_ATOMIC;
        ret = ibv_modify_qp(qp, &attr,
                            IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                                IBV_QP_ACCESS_FLAGS);
        if (ret != 0) {
            ADD_FAILURE() << "INIT: " << strerror(ret);
            return false;
        }

        memset(&attr, 0, sizeof(attr));
        attr.qp_state               = IBV_QPS_RTR;
        attr.path_mtu               = IBV_MTU_1024;
        attr.dest_qp_num            = remote_qpn;
        attr.rq_psn                 = 0;
        attr.max_dest_rd_atomic     = 1;
        attr.min_rnr_timer          = 12;
        attr.ah_attr.is_global      = 1;
        attr.ah_attr.grh.dgid       = gid;
        attr.ah_attr.grh.sgid_index = GID_INDEX;
        attr.ah_attr.grh.hop_limit  = 64;
        attr.ah_attr.port_num       = 1;
        ret =
            ibv_modify_qp(qp, &attr,
                          IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                              IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                              IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
        if (ret != 0) {
            ADD_FAILURE() << "RTR: " << strerror(ret);
            return false;
        }

        memset(&attr, 0, sizeof(attr));
        attr.qp_state      = IBV_QPS_RTS;
        attr.timeout       = 18;
        attr.retry_cnt     = 7;
        attr.rnr_retry     = 7;
        attr.sq_psn        = 0;
        attr.max_rd_atomic = 1;
        ret                = ibv_modify_qp(qp, &attr,
                                           IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                                               IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                                               IBV_QP_MAX_QP_RD_ATOMIC);
        if (ret != 0) {
            ADD_FAILURE() << "RTS: " << strerror(ret);
            return false;
        }
        return true;
    }

    bool m_ok;
    struct ibv_context *m_ctx;
    struct ibv_pd *m_pd  = NULL;
    struct ibv_cq *m_cq  = NULL;
    struct ibv_cq *m_rcq = NULL;
    struct ibv_qp *m_req = NULL;
    struct ibv_qp *m_rsp = NULL;
};

} // namespace

/* Parameter: the value of UCX_IB_RCACHE */
class ib_md : public ib_md_fixture {
protected:
    ib_md() : ib_md_fixture(TEST_DEVICE)
    {}

    void SetUp() override
    {
        ib_md_fixture::SetUp();
        if (stopped()) {
            return;
        }

        m_md = open_md(GetParam(), true);
        ASSERT_TRUE(m_md != NULL);
        if (cached() && (uct_ib_md_rcache(m_md) == NULL)) {
            GTEST_SKIP() << "the registration cache could not be created "
                            "(UCX_IB_RCACHE=try went on without it)";
        }
    }

    bool cached() const
    {
        return GetParam() != "no";
    }

    /* Opens TEST_DEVICE with UCX_IB_RCACHE=@a rcache ("yes" is asked as
     * "try" so a build without the cache skips instead of failing) */
    uct_md_h open_md(const std::string &rcache, bool expect_ok)
    {
        ucs::scoped_setenv env("UCX_IB_RCACHE",
                               (rcache == "yes") ? "try" : rcache.c_str());
        uct_md_h md = NULL;

        ucs_status_t status = ib_lookup::open_md(TEST_DEVICE, &md);
        if (expect_ok) {
            EXPECT_EQ(UCS_OK, status);
        }
        return (status == UCS_OK) ? md : NULL;
    }

    uct_ib_md_t *ib() const
    {
        return uct_ib_md_from(m_md);
    }

    unsigned long num_reg() const
    {
        return __atomic_load_n(&ib()->num_reg, __ATOMIC_RELAXED);
    }

    unsigned long num_dereg() const
    {
        return __atomic_load_n(&ib()->num_dereg, __ATOMIC_RELAXED);
    }

    uct_mem_h reg(void *address, size_t length,
                  unsigned flags = UCT_MD_MEM_ACCESS_ALL)
    {
        uct_mem_h memh = UCT_MEM_HANDLE_NULL;
        EXPECT_EQ(UCS_OK, uct_md_mem_reg(m_md, address, length, flags, &memh))
            << address << " length " << length;
        return memh;
    }

    void dereg(uct_mem_h memh)
    {
        EXPECT_EQ(UCS_OK, uct_md_mem_dereg(m_md, memh));
    }

    uint32_t pack_unpack(uct_mem_h memh)
    {
        uct_md_attr_t attr;
        uct_rkey_bundle_t rkey;

        EXPECT_EQ(UCS_OK, uct_md_query(m_md, &attr));
        std::vector<uint8_t> buffer(attr.rkey_packed_size);
        EXPECT_EQ(UCS_OK, uct_md_mkey_pack(m_md, memh, buffer.data()));
        EXPECT_EQ(UCS_OK, uct_rkey_unpack(m_component, buffer.data(), &rkey));
        uint32_t value = uct_ib_md_direct_rkey(rkey.rkey);
        EXPECT_EQ(UCS_OK, uct_rkey_release(m_component, &rkey));
        return value;
    }

    /* Writes a pattern into [@a dst, +length) through an RC QP pair with
     * the rkey the md packed for @a memh; the completion status */
    int remote_write(void *dst, size_t length, uct_mem_h memh, char fill)
    {
        rc_qp_pair qps(ib()->dev.ibv_context, ib()->pd);
        if (!qps.ok()) {
            return -1;
        }

        std::vector<char> src(length, fill);
        struct ibv_mr *mr = ibv_reg_mr(qps.pd(), src.data(), length, 0);
        if (mr == NULL) {
            ADD_FAILURE() << "ibv_reg_mr: " << strerror(errno);
            return -1;
        }

        int status = qps.rdma_write(src.data(), length, mr->lkey,
                                    (uintptr_t)dst, pack_unpack(memh));
        ibv_dereg_mr(mr);
        return status;
    }
};

TEST_P(ib_md, query)
{
    uct_md_attr_t attr;

    ASSERT_EQ(UCS_OK, uct_md_query(m_md, &attr));
    EXPECT_STREQ(UCT_IB_COMPONENT_NAME, attr.component_name);
    EXPECT_TRUE(attr.cap.flags & UCT_MD_FLAG_REG);
    EXPECT_TRUE(attr.cap.flags & UCT_MD_FLAG_ALLOC);
    EXPECT_TRUE(attr.cap.flags & UCT_MD_FLAG_NEED_MEMH);
    EXPECT_TRUE(attr.cap.flags & UCT_MD_FLAG_NEED_RKEY);
    EXPECT_EQ(UCS_BIT(UCS_MEMORY_TYPE_HOST), attr.cap.reg_mem_types);
    EXPECT_EQ(sizeof(uint32_t), attr.rkey_packed_size);
    EXPECT_GT(attr.cap.max_reg, 64ul << 20);
    EXPECT_GT(attr.reg_cost.c, 0);

    uct_md_mem_attr_t mem_attr;
    char buf[64];
    mem_attr.field_mask =
        UCT_MD_MEM_ATTR_FIELD_MEM_TYPE | UCT_MD_MEM_ATTR_FIELD_SYS_DEV;
    ASSERT_EQ(UCS_OK, uct_md_mem_query(m_md, buf, sizeof(buf), &mem_attr));
    EXPECT_EQ(UCS_MEMORY_TYPE_HOST, mem_attr.mem_type);
}

TEST_P(ib_md, reg_dereg_sizes)
{
    for (size_t length :
         {(size_t)1, (size_t)7, (size_t)4096, (size_t)4097, (size_t)65536,
          (size_t)1 << 20, (size_t)16 << 20, (size_t)64 << 20}) {
        std::vector<char> buffer(length + 1);
        /* an odd start, so the range crosses page boundaries oddly */
        uct_mem_h memh = reg(buffer.data() + 1, length);
        ASSERT_TRUE(memh != UCT_MEM_HANDLE_NULL);
        uct_ib_mem_t *ib_memh = (uct_ib_mem_t *)memh;
        EXPECT_LE((uintptr_t)ib_memh->mr->addr, (uintptr_t)buffer.data() + 1);
        EXPECT_GE((uintptr_t)ib_memh->mr->addr + ib_memh->mr->length,
                  (uintptr_t)buffer.data() + 1 + length);
        EXPECT_EQ(ib_memh->mr->rkey, pack_unpack(memh));
        dereg(memh);
    }
}

TEST_P(ib_md, access_flags)
{
    static const unsigned flag_sets[] = {
        UCT_MD_MEM_ACCESS_LOCAL_READ,    UCT_MD_MEM_ACCESS_LOCAL_WRITE,
        UCT_MD_MEM_ACCESS_REMOTE_PUT,    UCT_MD_MEM_ACCESS_REMOTE_GET,
        UCT_MD_MEM_ACCESS_REMOTE_ATOMIC, UCT_MD_MEM_ACCESS_RMA,
        UCT_MD_MEM_ACCESS_ALL,           0};
    std::vector<char> buffer(8192);

    for (unsigned flags : flag_sets) {
        uct_mem_h memh = reg(buffer.data(), buffer.size(), flags);
        ASSERT_TRUE(memh != UCT_MEM_HANDLE_NULL)
            << "flags 0x" << std::hex << flags;
        dereg(memh);
    }
}

TEST_P(ib_md, remote_write_with_packed_rkey)
{
    const size_t length = 64 * 1024;
    std::vector<char> target(length, 0);

    uct_mem_h memh =
        reg(target.data(), length,
            UCT_MD_MEM_ACCESS_REMOTE_PUT | UCT_MD_MEM_ACCESS_LOCAL_WRITE);
    ASSERT_TRUE(memh != UCT_MEM_HANDLE_NULL);
    EXPECT_EQ(IBV_WC_SUCCESS, remote_write(target.data(), length, memh, 'x'));
    EXPECT_EQ(std::string(length, 'x'),
              std::string(target.begin(), target.end()));
    dereg(memh);
}

TEST_P(ib_md, remote_write_into_allocated_memory)
{
    uct_allocated_memory_t mem;

    ASSERT_EQ(UCS_OK, alloc_on_md(10000, "ib_md test", &mem));
    EXPECT_EQ(UCT_ALLOC_METHOD_MD, mem.method);
    EXPECT_EQ(m_md, mem.md);
    EXPECT_GE(mem.length, 10000u);
    EXPECT_EQ(0u, (uintptr_t)mem.address % ucs_get_page_size());

    memset(mem.address, 0, mem.length);
    EXPECT_EQ(IBV_WC_SUCCESS, remote_write(mem.address, 10000, mem.memh, 'a'));
    EXPECT_EQ(std::string(10000, 'a'), std::string((char *)mem.address, 10000));

    /* allocated memory is not deregistered, it is freed */
    {
        ucs::scoped_log_capture capture;
        EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_md_mem_dereg(m_md, mem.memh));
        EXPECT_TRUE(capture.contains("uct_mem_free"));
    }
    EXPECT_EQ(UCS_OK, uct_mem_free(&mem));
}

/* Without remote write access, the responder refuses the write: the packed
 * rkey carries the rights asked for at registration (a cache region made
 * for a read-only request has remote read only) */
TEST_P(ib_md, remote_write_needs_put_access)
{
    std::vector<char> target(4096, 0);
    uct_mem_h memh =
        reg(target.data(), target.size(), UCT_MD_MEM_ACCESS_REMOTE_GET);
    ASSERT_TRUE(memh != UCT_MEM_HANDLE_NULL);
    EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
              remote_write(target.data(), target.size(), memh, 'z'));
    EXPECT_EQ(std::string(target.size(), '\0'),
              std::string(target.begin(), target.end()));
    dereg(memh);
}

/* Read-only memory registers for remote reads, not for writes */
TEST_P(ib_md, read_only_memory)
{
    const size_t length = 4 * ucs_get_page_size();
    void *area =
        mmap(NULL, length, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(MAP_FAILED, area);

    uct_mem_h memh = reg(area, length, UCT_MD_MEM_ACCESS_REMOTE_GET);
    ASSERT_TRUE(memh != UCT_MEM_HANDLE_NULL);
    EXPECT_EQ(((uct_ib_mem_t *)memh)->rkey, pack_unpack(memh));

    {
        ucs::scoped_log_capture capture;
        uct_mem_h wmemh = UCT_MEM_HANDLE_NULL;
        EXPECT_EQ(
            UCS_ERR_INVALID_ADDR,
            uct_md_mem_reg(m_md, area, length, UCT_MD_MEM_ACCESS_ALL, &wmemh));
        EXPECT_TRUE(wmemh == UCT_MEM_HANDLE_NULL);
        EXPECT_TRUE(capture.contains("read-only")) << "no hint";
    }

    dereg(memh);
    munmap(area, length);
}

TEST_P(ib_md, rkey_pack_unpack_round_trip)
{
    std::vector<char> buffer(4096);
    uct_mem_h memh = reg(buffer.data(), buffer.size());
    ASSERT_TRUE(memh != UCT_MEM_HANDLE_NULL);

    uint8_t packed[sizeof(uint32_t)];
    ASSERT_EQ(UCS_OK, uct_md_mkey_pack(m_md, memh, packed));
    uint32_t rkey32;
    memcpy(&rkey32, packed, sizeof(rkey32));
    EXPECT_EQ(((uct_ib_mem_t *)memh)->mr->rkey, rkey32);

    uct_rkey_bundle_t bundle;
    ASSERT_EQ(UCS_OK, uct_rkey_unpack(m_component, packed, &bundle));
    EXPECT_EQ(rkey32, uct_ib_md_direct_rkey(bundle.rkey));
    EXPECT_EQ((void *)m_component, bundle.type);
    EXPECT_EQ(UCS_OK, uct_rkey_release(m_component, &bundle));
    dereg(memh);
}

TEST_P(ib_md, register_again_and_subrange)
{
    const size_t length = 1 << 20;
    std::vector<char> buffer(length);
    unsigned long regs = num_reg();

    uct_mem_h memh1 = reg(buffer.data(), length);
    EXPECT_EQ(regs + 1, num_reg());

    /* the same buffer, and 4 KiB inside it */
    uct_mem_h memh2 = reg(buffer.data(), length);
    uct_mem_h memh3 = reg(buffer.data() + 8192, 4096);
    if (cached()) {
        EXPECT_EQ(regs + 1, num_reg()) << "the cache registered again";
        EXPECT_EQ(memh1, memh2);
        EXPECT_EQ(memh1, memh3);
    } else {
        EXPECT_EQ(regs + 3, num_reg());
    }
    EXPECT_EQ(((uct_ib_mem_t *)memh3)->rkey, pack_unpack(memh3));

    if (cached()) {
        ucs_rcache_stats_t stats;
        ucs_rcache_get_stats(uct_ib_md_rcache(m_md), &stats);
        EXPECT_EQ(1u, stats.misses);
        EXPECT_EQ(2u, stats.hits);
        EXPECT_EQ(1u, stats.regions);
    }

    /* the statistics as uct_info -d prints them */
    std::string info = ib_lookup::md_info(m_md);
    ASSERT_FALSE(info.empty());
    if (cached()) {
        EXPECT_NE(std::string::npos, info.find("hits 2 misses 1")) << info;
    } else {
        EXPECT_NE(std::string::npos, info.find("direct (no cache)")) << info;
    }

    /* and as the md's "rcache" file in the object tree shows them */
    const std::string path = std::string("/uct/md/") + TEST_DEVICE + "/rcache";
    ucs_string_buffer_t strb;
    ucs_string_buffer_init(&strb);
    ucs_status_t status = ucs_vfs_path_read_file(path.c_str(), &strb);
    std::string file    = ucs_string_buffer_cstr(&strb);
    ucs_string_buffer_cleanup(&strb);
    if (cached()) {
        ASSERT_EQ(UCS_OK, status) << path;
        EXPECT_EQ(0u, file.find("hits 2\nmisses 1\n")) << file;
        EXPECT_NE(std::string::npos, file.find("\nregions 1\n")) << file;
    } else {
        EXPECT_EQ(UCS_ERR_NO_ELEM, status) << path << ": " << file;
    }

    dereg(memh3);
    dereg(memh2);
    dereg(memh1);
}

TEST_P(ib_md, cache_keeps_unused_regions)
{
    if (!cached()) {
        GTEST_SKIP() << "without the cache each dereg deregisters";
    }

    std::vector<char> buffer(65536);
    unsigned long regs = num_reg(), deregs = num_dereg();

    dereg(reg(buffer.data(), buffer.size()));
    dereg(reg(buffer.data(), buffer.size()));
    EXPECT_EQ(regs + 1, num_reg());
    EXPECT_EQ(deregs, num_dereg()) << "an unused region left the cache";
}

TEST_P(ib_md, cache_eviction)
{
    if (!cached()) {
        GTEST_SKIP() << "no cache";
    }

    /* a cache of two regions: the third buffer evicts the oldest */
    uct_md_close(m_md);
    ucs::scoped_setenv env("UCX_IB_RCACHE_MAX_REGIONS", "2");
    m_md = open_md("yes", true);
    ASSERT_TRUE(m_md != NULL);

    const size_t page = ucs_get_page_size();
    /* separate pages with gaps, so no two requests merge */
    char *area = (char *)mmap(NULL, 6 * page, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(MAP_FAILED, (void *)area);
    unsigned long regs = num_reg(), deregs = num_dereg();

    dereg(reg(area, page));
    dereg(reg(area + 2 * page, page));
    EXPECT_EQ(deregs, num_dereg());
    dereg(reg(area + 4 * page, page));
    EXPECT_EQ(regs + 3, num_reg());
    EXPECT_EQ(deregs + 1, num_dereg()) << "nothing was evicted";

    /* the first one was evicted: registering it again is a miss */
    dereg(reg(area, page));
    EXPECT_EQ(regs + 4, num_reg());

    ucs_rcache_stats_t stats;
    ucs_rcache_get_stats(uct_ib_md_rcache(m_md), &stats);
    EXPECT_GE(stats.evictions, 2u);
    EXPECT_LE(stats.regions, 2u);
    munmap(area, 6 * page);
}

TEST_P(ib_md, cache_invalidation)
{
    if (!cached()) {
        GTEST_SKIP() << "no cache";
    }

    const size_t length = 1 << 20;
    char *area          = (char *)mmap(NULL, length, PROT_READ | PROT_WRITE,
                                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(MAP_FAILED, (void *)area);
    unsigned long regs = num_reg(), deregs = num_dereg();

    /* unmapping registered memory drops its region from the cache */
    dereg(reg(area, length));
    EXPECT_EQ(0, munmap(area, length));
    area = (char *)mmap(NULL, length, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(MAP_FAILED, (void *)area);
    uct_mem_h memh = reg(area, length);
    EXPECT_EQ(regs + 2, num_reg()) << "a stale region was returned";
    EXPECT_EQ(deregs + 1, num_dereg());

    /* explicit invalidation of a region in use: it stays registered until
     * its last dereg, and is not returned again */
    ucs_rcache_invalidate(uct_ib_md_rcache(m_md), area, 4096);
    EXPECT_EQ(deregs + 1, num_dereg());
    uct_mem_h memh2 = reg(area, length);
    EXPECT_NE(memh, memh2);
    EXPECT_EQ(regs + 3, num_reg());
    dereg(memh);
    EXPECT_EQ(deregs + 2, num_dereg());
    dereg(memh2);
    munmap(area, length);
}

TEST_P(ib_md, bad_inputs)
{
    uct_mem_h memh = UCT_MEM_HANDLE_NULL;
    char buf[64];

    ucs::scoped_log_capture capture;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_md_mem_reg(m_md, NULL, 64, UCT_MD_MEM_ACCESS_ALL, &memh));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_md_mem_reg(m_md, buf, 0, UCT_MD_MEM_ACCESS_ALL, &memh));
    EXPECT_EQ(
        UCS_ERR_INVALID_PARAM,
        uct_md_mem_reg(m_md, buf, sizeof(buf), UCT_MD_MEM_ACCESS_ALL, NULL));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_md_mem_dereg(m_md, UCT_MEM_HANDLE_NULL));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_md_mkey_pack(m_md, UCT_MEM_HANDLE_NULL, buf));
    EXPECT_TRUE(memh == UCT_MEM_HANDLE_NULL);

    /* memory that is not mapped */
    const size_t page = ucs_get_page_size();
    void *gone        = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(MAP_FAILED, gone);
    munmap(gone, 4 * page);
    EXPECT_EQ(
        UCS_ERR_INVALID_ADDR,
        uct_md_mem_reg(m_md, gone, 4 * page, UCT_MD_MEM_ACCESS_ALL, &memh));
    EXPECT_TRUE(memh == UCT_MEM_HANDLE_NULL);
    EXPECT_TRUE(capture.contains("ibv_reg_mr")) << "no error line";
    EXPECT_TRUE(capture.contains("not mapped"))
        << "no hint: "
        << (capture.messages().empty() ? "" : capture.messages().back());

    /* the same, asked to stay quiet */
    size_t before = capture.messages().size();
    EXPECT_EQ(UCS_ERR_INVALID_ADDR,
              uct_md_mem_reg(
                  m_md, gone, 4 * page,
                  UCT_MD_MEM_ACCESS_ALL | UCT_MD_MEM_FLAG_HIDE_ERRORS, &memh));
    EXPECT_EQ(before, capture.messages().size());
}

TEST_P(ib_md, fork_init_modes)
{
    for (const char *mode : {"no", "try", "yes"}) {
        ucs::scoped_setenv env("UCX_IB_FORK_INIT", mode);
        uct_md_h md = open_md(GetParam(), true);
        ASSERT_TRUE(md != NULL) << "UCX_IB_FORK_INIT=" << mode;
        std::vector<char> buffer(4096);
        uct_mem_h memh;
        ASSERT_EQ(UCS_OK, uct_md_mem_reg(md, buffer.data(), buffer.size(),
                                         UCT_MD_MEM_ACCESS_ALL, &memh));
        EXPECT_EQ(UCS_OK, uct_md_mem_dereg(md, memh));
        uct_md_close(md);
    }
}

TEST_P(ib_md, rcache_off_or_required)
{
    uct_md_h md = open_md("no", true);
    ASSERT_TRUE(md != NULL);
    EXPECT_TRUE(uct_ib_md_rcache(md) == NULL);
    uct_md_close(md);

    ucs::scoped_setenv env("UCX_IB_RCACHE", "yes");
    ASSERT_EQ(UCS_OK, ib_lookup::open_md(TEST_DEVICE, &md));
    EXPECT_TRUE(uct_ib_md_rcache(md) != NULL);
    uct_md_close(md);
}

INSTANTIATE_TEST_SUITE_P(, ib_md, testing::Values("no", "yes"),
                         [](const testing::TestParamInfo<std::string> &info) {
                             return info.param;
                         });
