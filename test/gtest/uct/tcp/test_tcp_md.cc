/*
 * The tcp memory domain: random keys, packed and unpacked remote keys, the
 * access check a peer's PUT and GET go through (ranges, edges, wrapping,
 * rights, deregistration), allocation, the object tree file, closing with
 * regions left, and registration racing with accesses on other threads.
 */
#include <common/test.h>

extern "C" {
#include <uct/api/uct.h>
#include <uct/base/uct_component.h>
#include <uct/base/uct_md.h>
#include <uct/tcp/tcp_md.h>
#include <ucs/sys/sys.h>
#include <ucs/vfs/vfs.h>
}

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <set>
#include <string>
#include <sys/mman.h>
#include <thread>
#include <vector>

namespace {

const unsigned PUT = UCT_MD_MEM_ACCESS_REMOTE_PUT;
const unsigned GET = UCT_MD_MEM_ACCESS_REMOTE_GET;

uct_component_h find_tcp_component()
{
    uct_component_h *components, found = NULL;
    unsigned num_components;

    if (uct_query_components(&components, &num_components) != UCS_OK) {
        return NULL;
    }
    for (unsigned i = 0; i < num_components; ++i) {
        if (!strcmp(components[i]->name, "tcp")) {
            found = components[i];
        }
    }
    uct_release_component_list(components);
    return found;
}

void collect_name(const char *name, void *arg)
{
    static_cast<std::vector<std::string> *>(arg)->push_back(name);
}

std::vector<std::string> vfs_list(const std::string &path)
{
    std::vector<std::string> names;
    ucs_vfs_path_list_dir(path.c_str(), collect_name, &names);
    std::sort(names.begin(), names.end());
    return names;
}

std::string vfs_read(const std::string &path)
{
    ucs_string_buffer_t strb;
    ucs_string_buffer_init(&strb);
    EXPECT_EQ(UCS_OK, ucs_vfs_path_read_file(path.c_str(), &strb)) << path;
    std::string content = ucs_string_buffer_cstr(&strb);
    ucs_string_buffer_cleanup(&strb);
    return content;
}

} // namespace

class test_tcp_md : public ucs::test {
protected:
    void SetUp() override
    {
        ucs::test::SetUp();
        m_component = find_tcp_component();
        ASSERT_NE(nullptr, m_component) << "the tcp module is not loaded";
        m_md = open_md();
        ASSERT_NE(nullptr, m_md);
        m_buffer.resize(4096);
    }

    void TearDown() override
    {
        for (uct_mem_h memh : m_memhs) {
            EXPECT_EQ(UCS_OK, uct_md_mem_dereg(m_md, memh));
        }
        m_memhs.clear();
        if (m_md != NULL) {
            uct_md_close(m_md);
        }
        ucs::test::TearDown();
    }

    uct_md_h open_md()
    {
        uct_md_config_t *config;
        uct_md_h md = NULL;

        EXPECT_EQ(UCS_OK, uct_md_config_read(m_component, NULL, NULL, &config));
        EXPECT_EQ(UCS_OK, uct_md_open(m_component, "tcp", config, &md));
        uct_config_release(config);
        return md;
    }

    uct_tcp_md_t *tcp_md() const
    {
        return uct_tcp_md(m_md);
    }

    /* Registers @a length bytes at @a address; deregistered at TearDown
     * unless dereg() is called */
    uct_mem_h reg(void *address, size_t length, unsigned flags)
    {
        uct_mem_h memh = UCT_MEM_HANDLE_NULL;
        EXPECT_EQ(UCS_OK, uct_md_mem_reg(m_md, address, length, flags, &memh));
        if (memh != UCT_MEM_HANDLE_NULL) {
            m_memhs.push_back(memh);
        }
        return memh;
    }

    void dereg(uct_mem_h memh)
    {
        m_memhs.erase(std::find(m_memhs.begin(), m_memhs.end(), memh));
        EXPECT_EQ(UCS_OK, uct_md_mem_dereg(m_md, memh));
    }

    /* The key of @a memh, through mkey_pack and rkey_unpack */
    uint64_t key_of(uct_mem_h memh)
    {
        uint8_t packed[UCT_TCP_MD_RKEY_SIZE];
        uct_rkey_bundle_t bundle;

        EXPECT_EQ(UCS_OK, uct_md_mkey_pack(m_md, memh, packed));
        EXPECT_EQ(UCS_OK, uct_rkey_unpack(m_component, packed, &bundle));
        EXPECT_EQ(UCS_OK, uct_rkey_release(m_component, &bundle));
        return bundle.rkey;
    }

    /* Whether the md's lock is free (not held by an access) */
    bool lock_is_free()
    {
        if (pthread_rwlock_trywrlock(&tcp_md()->lock) != 0) {
            return false;
        }
        pthread_rwlock_unlock(&tcp_md()->lock);
        return true;
    }

    /* Whether an access is granted; checks that a refusal leaves the lock
     * free and a grant holds it until the access ends */
    bool granted(uint64_t key, uint64_t address, uint64_t length,
                 unsigned access)
    {
        ucs_status_t status =
            uct_tcp_md_access_begin(tcp_md(), key, address, length, access);
        if (status != UCS_OK) {
            EXPECT_EQ(UCS_ERR_INVALID_ADDR, status);
            EXPECT_TRUE(lock_is_free()) << "a refused access holds the lock";
            EXPECT_FALSE(uct_tcp_md_access_check(tcp_md(), key, address, length,
                                                 access));
            return false;
        }

        EXPECT_FALSE(lock_is_free()) << "a granted access holds no lock";
        uct_tcp_md_access_end(tcp_md());
        EXPECT_TRUE(lock_is_free());
        EXPECT_TRUE(
            uct_tcp_md_access_check(tcp_md(), key, address, length, access));
        EXPECT_TRUE(lock_is_free());
        return true;
    }

    uint64_t buffer_address() const
    {
        return (uintptr_t)m_buffer.data();
    }

    uct_component_h m_component = NULL;
    uct_md_h m_md               = NULL;
    std::vector<uct_mem_h> m_memhs;
    std::vector<char> m_buffer;
};

TEST_F(test_tcp_md, query_reports_keyed_registration_and_allocation)
{
    uct_md_attr_t attr;

    ASSERT_EQ(UCS_OK, uct_md_query(m_md, &attr));
    EXPECT_STREQ("tcp", attr.component_name);
    EXPECT_TRUE(attr.cap.flags & UCT_MD_FLAG_REG);
    EXPECT_TRUE(attr.cap.flags & UCT_MD_FLAG_ALLOC);
    EXPECT_TRUE(attr.cap.flags & UCT_MD_FLAG_NEED_RKEY);
    EXPECT_FALSE(attr.cap.flags & UCT_MD_FLAG_NEED_MEMH);
    EXPECT_FALSE(attr.cap.flags & UCT_MD_FLAG_RKEY_PTR);
    EXPECT_EQ(8u, attr.rkey_packed_size);
    EXPECT_EQ(UCS_BIT(UCS_MEMORY_TYPE_HOST), attr.cap.reg_mem_types);
    EXPECT_EQ(UCS_BIT(UCS_MEMORY_TYPE_HOST), attr.cap.alloc_mem_types);
    EXPECT_GT(attr.cap.max_reg, 0u);
    EXPECT_GT(attr.cap.max_alloc, 0u);
    EXPECT_GT(attr.reg_cost.c, 0.0);
    EXPECT_LT(attr.reg_cost.c, 1e-4);
}

TEST_F(test_tcp_md, keys_are_random_distinct_and_never_reserved)
{
    const unsigned count = 512;
    std::set<uint64_t> keys;
    uint64_t all_or = 0, all_and = UINT64_MAX;

    for (unsigned i = 0; i < count; ++i) {
        /* the same memory registered again gets a key of its own */
        uct_mem_h memh = reg(m_buffer.data() + (i % 7), 64, 0);
        ASSERT_TRUE(memh != UCT_MEM_HANDLE_NULL);
        uint64_t key = key_of(memh);
        EXPECT_NE(0u, key);
        EXPECT_NE((uint64_t)UCT_INVALID_RKEY, key);
        keys.insert(key);
        all_or |= key;
        all_and &= key;
    }

    EXPECT_EQ(count, keys.size());
    /* every bit is set in some key and clear in another (a constant bit
     * in 512 random keys has probability 64 * 2^-511) */
    EXPECT_EQ(UINT64_MAX, all_or);
    EXPECT_EQ(0u, all_and);
}

TEST_F(test_tcp_md, packed_key_is_the_key_little_endian_and_unpacks_to_it)
{
    uct_mem_h memh = reg(m_buffer.data(), m_buffer.size(), 0);
    uint64_t key   = static_cast<uct_tcp_region_t *>(memh)->key;
    uint8_t packed[UCT_TCP_MD_RKEY_SIZE];
    uct_rkey_bundle_t bundle;

    ASSERT_EQ(UCS_OK, uct_md_mkey_pack(m_md, memh, packed));
    for (unsigned i = 0; i < sizeof(packed); ++i) {
        EXPECT_EQ((uint8_t)(key >> (8 * i)), packed[i]) << "byte " << i;
    }

    ASSERT_EQ(UCS_OK, uct_rkey_unpack(m_component, packed, &bundle));
    EXPECT_EQ(key, bundle.rkey);
    EXPECT_EQ(nullptr, bundle.handle);
    EXPECT_EQ(UCS_OK, uct_rkey_release(m_component, &bundle));

    void *ptr = NULL;
    EXPECT_EQ(UCS_ERR_UNSUPPORTED,
              uct_rkey_ptr(m_component, &bundle, buffer_address(), &ptr));
}

TEST_F(test_tcp_md, rkey_unpack_refuses_zero_and_all_ones)
{
    for (uint8_t fill : {0x00, 0xff}) {
        uint8_t packed[UCT_TCP_MD_RKEY_SIZE];
        uct_rkey_bundle_t bundle;

        memset(packed, fill, sizeof(packed));
        bundle.rkey   = 42;
        bundle.handle = &bundle;
        ucs::scoped_log_capture capture;
        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  uct_rkey_unpack(m_component, packed, &bundle));
        EXPECT_TRUE(capture.contains("invalid key"));
        EXPECT_EQ(42u, bundle.rkey) << "output set on failure";
        EXPECT_EQ(&bundle, bundle.handle);
    }
}

TEST_F(test_tcp_md, access_inside_and_at_both_edges_is_granted)
{
    const uint64_t start  = buffer_address() + 100;
    const uint64_t length = 1000;
    uct_mem_h memh        = reg((void *)start, length, 0);
    const uint64_t key    = key_of(memh);

    for (unsigned access : {PUT, GET}) {
        EXPECT_TRUE(granted(key, start, length, access));
        EXPECT_TRUE(granted(key, start, 1, access));
        EXPECT_TRUE(granted(key, start + length - 1, 1, access));
        EXPECT_TRUE(granted(key, start + 10, 500, access));
        EXPECT_TRUE(granted(key, start + 1, length - 1, access));
        /* zero bytes touch nothing: anywhere from start to end */
        EXPECT_TRUE(granted(key, start, 0, access));
        EXPECT_TRUE(granted(key, start + length, 0, access));
    }
    EXPECT_TRUE(granted(key, start, length, PUT | GET));
}

TEST_F(test_tcp_md, access_outside_the_region_is_refused)
{
    const uint64_t start  = buffer_address() + 100;
    const uint64_t length = 1000;
    uct_mem_h memh        = reg((void *)start, length, 0);
    const uint64_t key    = key_of(memh);

    /* one byte past the end */
    EXPECT_FALSE(granted(key, start, length + 1, PUT));
    EXPECT_FALSE(granted(key, start + length, 1, PUT));
    EXPECT_FALSE(granted(key, start + 1, length, GET));
    /* one byte before the start */
    EXPECT_FALSE(granted(key, start - 1, 1, GET));
    EXPECT_FALSE(granted(key, start - 1, 2, PUT));
    EXPECT_FALSE(granted(key, start - 1, 0, PUT));
    EXPECT_FALSE(granted(key, start + length + 1, 0, PUT));
    /* address + length wraps around 2^64 */
    EXPECT_FALSE(granted(key, start + 1, UINT64_MAX, PUT));
    EXPECT_FALSE(granted(key, start, UINT64_MAX - start + 1, PUT));
    EXPECT_FALSE(granted(key, start + 10, UINT64_MAX - start - 9, GET));
    EXPECT_FALSE(granted(key, UINT64_MAX, 2, PUT));
    EXPECT_FALSE(granted(key, 0, start + 10, PUT));
}

TEST_F(test_tcp_md, access_with_another_key_is_refused)
{
    const uint64_t start = buffer_address();
    uct_mem_h memh       = reg((void *)start, 64, 0);
    uct_mem_h other      = reg(m_buffer.data() + 2048, 64, 0);
    const uint64_t key   = key_of(memh);

    ASSERT_TRUE(granted(key, start, 64, PUT));
    EXPECT_FALSE(granted(key ^ 1, start, 64, PUT));
    EXPECT_FALSE(granted(key + 1, start, 64, PUT));
    EXPECT_FALSE(granted(0, start, 64, PUT));
    EXPECT_FALSE(granted(UINT64_MAX, start, 64, PUT));
    /* a live key of another region does not open this one */
    EXPECT_FALSE(granted(key_of(other), start, 64, PUT));
}

TEST_F(test_tcp_md, access_needs_the_right_the_region_grants)
{
    const uint64_t start = buffer_address();
    uint64_t get_only    = key_of(reg((void *)start, 64, GET));
    uint64_t put_only    = key_of(reg((void *)start, 64, PUT));
    uint64_t local_only  = key_of(
         reg((void *)start, 64,
             UCT_MD_MEM_ACCESS_LOCAL_READ | UCT_MD_MEM_ACCESS_LOCAL_WRITE));
    uint64_t all = key_of(reg((void *)start, 64, UCT_MD_MEM_ACCESS_ALL));

    EXPECT_TRUE(granted(get_only, start, 64, GET));
    EXPECT_FALSE(granted(get_only, start, 64, PUT));
    EXPECT_FALSE(granted(get_only, start, 64, PUT | GET));
    EXPECT_TRUE(granted(put_only, start, 64, PUT));
    EXPECT_FALSE(granted(put_only, start, 64, GET));
    EXPECT_FALSE(granted(local_only, start, 64, PUT));
    EXPECT_FALSE(granted(local_only, start, 64, GET));
    EXPECT_TRUE(granted(all, start, 64, PUT));
    EXPECT_TRUE(granted(all, start, 64, GET));
    /* an access must name a right */
    EXPECT_FALSE(granted(all, start, 64, 0));
}

TEST_F(test_tcp_md, flags_without_access_rights_grant_all_access)
{
    const uint64_t start = buffer_address();
    uint64_t zero        = key_of(reg((void *)start, 64, 0));
    uint64_t nonblock =
        key_of(reg((void *)start, 64, UCT_MD_MEM_FLAG_NONBLOCK));

    for (uint64_t key : {zero, nonblock}) {
        EXPECT_TRUE(granted(key, start, 64, PUT));
        EXPECT_TRUE(granted(key, start, 64, GET));
        EXPECT_TRUE(granted(key, start, 64, UCT_MD_MEM_ACCESS_REMOTE_ATOMIC));
    }
}

TEST_F(test_tcp_md, deregistration_revokes_the_key_at_once)
{
    const uint64_t start = buffer_address();
    uct_mem_h memh       = reg((void *)start, 64, 0);
    uct_mem_h kept       = reg((void *)start, 64, 0);
    const uint64_t key   = key_of(memh);

    ASSERT_TRUE(granted(key, start, 64, PUT));
    dereg(memh);
    EXPECT_FALSE(granted(key, start, 64, PUT));
    EXPECT_FALSE(granted(key, start, 0, GET));
    /* another registration of the same memory is untouched */
    EXPECT_TRUE(granted(key_of(kept), start, 64, PUT));
}

TEST_F(test_tcp_md, deregistration_on_another_md_is_refused)
{
    uct_md_h other = open_md();
    ASSERT_NE(nullptr, other);
    uct_mem_h memh = reg(m_buffer.data(), 64, 0);

    {
        ucs::scoped_log_capture capture;
        EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_md_mem_dereg(other, memh));
        EXPECT_TRUE(capture.contains("not registered"));
    }
    EXPECT_TRUE(granted(key_of(memh), buffer_address(), 64, GET));
    uct_md_close(other);
}

TEST_F(test_tcp_md, bad_regions_are_refused)
{
    uct_mem_h memh = (uct_mem_h)&memh;
    ucs::scoped_log_capture capture;

    /* through the API, and straight to the md */
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_md_mem_reg(m_md, m_buffer.data(), 0, 0, &memh));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_md_mem_reg(m_md, NULL, 64, 0, &memh));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              m_md->ops->mem_reg(m_md, m_buffer.data(), 0, 0, &memh));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              m_md->ops->mem_reg(m_md, NULL, 64, 0, &memh));
    EXPECT_EQ(
        UCS_ERR_INVALID_PARAM,
        m_md->ops->mem_reg(m_md, (void *)(UINTPTR_MAX - 10), 64, 0, &memh));
    EXPECT_EQ((uct_mem_h)&memh, memh) << "output set on failure";
    EXPECT_TRUE(capture.contains("cannot register"));
    EXPECT_EQ(0u, ucs_hash_size(&tcp_md()->regions));
}

TEST_F(test_tcp_md, allocated_memory_is_registered_with_a_usable_key)
{
    const size_t page         = ucs_get_page_size();
    const size_t length       = page + 100;
    uct_alloc_method_t method = UCT_ALLOC_METHOD_MD;
    uct_mem_alloc_params_t params;
    uct_allocated_memory_t mem;

    params.field_mask =
        UCT_MEM_ALLOC_PARAM_FIELD_MDS | UCT_MEM_ALLOC_PARAM_FIELD_NAME;
    params.mds.mds   = &m_md;
    params.mds.count = 1;
    params.name      = "test_tcp_md";
    ASSERT_EQ(UCS_OK, uct_mem_alloc(length, &method, 1, &params, &mem));
    EXPECT_EQ(UCT_ALLOC_METHOD_MD, mem.method);
    EXPECT_EQ(m_md, mem.md);
    EXPECT_EQ(2 * page, mem.length) << "rounded up to whole pages";
    EXPECT_EQ(0u, (uintptr_t)mem.address % page);
    memset(mem.address, 0x5a, mem.length);

    const uint64_t start = (uintptr_t)mem.address;
    const uint64_t key   = key_of(mem.memh);
    EXPECT_TRUE(granted(key, start, mem.length, PUT));
    EXPECT_TRUE(granted(key, start, mem.length, GET));
    EXPECT_FALSE(granted(key, start, mem.length + 1, GET));

    {
        /* the handle of an allocation is released by uct_mem_free only */
        ucs::scoped_log_capture capture;
        EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_md_mem_dereg(m_md, mem.memh));
        EXPECT_TRUE(capture.contains("uct_mem_free"));
    }
    EXPECT_TRUE(granted(key, start, 1, PUT));

    EXPECT_EQ(UCS_OK, uct_mem_free(&mem));
    EXPECT_FALSE(granted(key, start, 1, PUT));
    EXPECT_EQ(0u, ucs_hash_size(&tcp_md()->regions));
}

TEST_F(test_tcp_md, allocation_honours_access_flags)
{
    uct_mem_h memh;
    size_t length = 10;
    void *address = NULL;

    ASSERT_EQ(UCS_OK, m_md->ops->mem_alloc(m_md, &length, &address,
                                           UCS_MEMORY_TYPE_HOST, GET,
                                           "get_only", &memh));
    EXPECT_EQ(ucs_get_page_size(), length);
    EXPECT_TRUE(granted(key_of(memh), (uintptr_t)address, length, GET));
    EXPECT_FALSE(granted(key_of(memh), (uintptr_t)address, length, PUT));

    {
        /* a registration is not released by mem_free */
        uct_mem_h reg_memh = reg(m_buffer.data(), 64, 0);
        ucs::scoped_log_capture capture;
        EXPECT_EQ(UCS_ERR_INVALID_PARAM, m_md->ops->mem_free(m_md, reg_memh));
        EXPECT_TRUE(capture.contains("uct_md_mem_dereg"));
    }
    EXPECT_EQ(UCS_OK, m_md->ops->mem_free(m_md, memh));
}

TEST_F(test_tcp_md, allocation_refuses_what_it_cannot_do)
{
    uct_mem_h memh = (uct_mem_h)&memh;
    void *address  = NULL;
    size_t length  = 4096;

    EXPECT_EQ(UCS_ERR_UNSUPPORTED,
              m_md->ops->mem_alloc(m_md, &length, &address,
                                   UCS_MEMORY_TYPE_CUDA, 0, "cuda", &memh));
    EXPECT_EQ(UCS_ERR_UNSUPPORTED,
              m_md->ops->mem_alloc(m_md, &length, &address,
                                   UCS_MEMORY_TYPE_HOST, UCT_MD_MEM_FLAG_FIXED,
                                   "fixed", &memh));
    {
        ucs::scoped_log_capture capture;
        length = 0;
        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  m_md->ops->mem_alloc(m_md, &length, &address,
                                       UCS_MEMORY_TYPE_HOST, 0, "empty",
                                       &memh));
        length = SIZE_MAX;
        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  m_md->ops->mem_alloc(m_md, &length, &address,
                                       UCS_MEMORY_TYPE_HOST, 0, "huge", &memh));
        EXPECT_TRUE(capture.contains("huge"));
    }
    EXPECT_EQ(nullptr, address);
    EXPECT_EQ((uct_mem_h)&memh, memh);
}

TEST_F(test_tcp_md, regions_file_counts_live_registrations)
{
    std::vector<std::string> before = vfs_list("/uct/md");
    uct_md_h md                     = open_md();
    ASSERT_NE(nullptr, md);
    std::vector<std::string> after = vfs_list("/uct/md"), added;
    std::set_difference(after.begin(), after.end(), before.begin(),
                        before.end(), std::back_inserter(added));
    ASSERT_EQ(1u, added.size());
    const std::string path = "/uct/md/" + added[0] + "/regions";

    EXPECT_EQ("count 0\nbytes 0\n", vfs_read(path));
    uct_mem_h a, b;
    ASSERT_EQ(UCS_OK, uct_md_mem_reg(md, m_buffer.data(), 100, 0, &a));
    ASSERT_EQ(UCS_OK, uct_md_mem_reg(md, m_buffer.data(), 250, 0, &b));
    EXPECT_EQ("count 2\nbytes 350\n", vfs_read(path));
    EXPECT_EQ(UCS_OK, uct_md_mem_dereg(md, a));
    EXPECT_EQ("count 1\nbytes 250\n", vfs_read(path));
    EXPECT_EQ(UCS_OK, uct_md_mem_dereg(md, b));
    EXPECT_EQ("count 0\nbytes 0\n", vfs_read(path));
    uct_md_close(md);
}

TEST_F(test_tcp_md, close_with_regions_left_frees_them_and_warns)
{
    uct_md_h md = open_md();
    ASSERT_NE(nullptr, md);
    uct_mem_h memh;
    for (int i = 0; i < 3; ++i) {
        ASSERT_EQ(UCS_OK, uct_md_mem_reg(md, m_buffer.data(), 64, 0, &memh));
    }

    uct_alloc_method_t method = UCT_ALLOC_METHOD_MD;
    uct_mem_alloc_params_t params;
    uct_allocated_memory_t mem;
    params.field_mask = UCT_MEM_ALLOC_PARAM_FIELD_MDS;
    params.mds.mds    = &md;
    params.mds.count  = 1;
    ASSERT_EQ(UCS_OK, uct_mem_alloc(100, &method, 1, &params, &mem));

    {
        ucs::scoped_log_capture capture;
        uct_md_close(md);
        EXPECT_TRUE(capture.contains("4 regions"));
        EXPECT_TRUE(capture.contains("still registered"));
    }

    /* the allocation stays mapped and usable */
    memset(mem.address, 0, mem.length);
    EXPECT_EQ(0, munmap(mem.address, mem.length));
}

/*
 * Two threads register and deregister regions while a third accesses
 * whatever key was registered last: an access granted for a key always
 * ends before the deregistration of that key returns.
 */
TEST_F(test_tcp_md, deregistration_waits_for_accesses_under_way)
{
    const unsigned iterations = ucs::test_scale(2000);
    const unsigned num_regs   = 2;
    std::atomic<uint64_t> live_key[num_regs], dead_key[num_regs];
    std::atomic<uint64_t> seen_key[num_regs];
    std::atomic<unsigned> violations(0), grants(0), failures(0);
    std::atomic<unsigned> regs_done(0);
    std::vector<std::vector<char>> buffers(num_regs, std::vector<char>(256, 0));
    std::vector<char> sink(256);
    std::vector<std::thread> threads;

    for (unsigned r = 0; r < num_regs; ++r) {
        live_key[r] = 0;
        dead_key[r] = 0;
        seen_key[r] = 0;
        threads.emplace_back([&, r]() {
            for (unsigned i = 0; i < iterations; ++i) {
                uct_mem_h memh;
                if (uct_md_mem_reg(m_md, buffers[r].data(), 256, 0, &memh) !=
                    UCS_OK) {
                    ++failures;
                    break;
                }
                uint64_t key = static_cast<uct_tcp_region_t *>(memh)->key;
                live_key[r].store(key);
                /* give the accessor a chance at this key (bounded) */
                for (int spin = 0; (spin < 1000) && (seen_key[r] != key);
                     ++spin) {
                    std::this_thread::yield();
                }
                if (uct_md_mem_dereg(m_md, memh) != UCS_OK) {
                    ++failures;
                    break;
                }
                dead_key[r].store(key);
            }
            ++regs_done;
        });
    }

    threads.emplace_back([&]() {
        uct_tcp_md_t *md = tcp_md();
        while (regs_done.load() < num_regs) {
            for (unsigned r = 0; r < num_regs; ++r) {
                uint64_t key     = live_key[r].load();
                uint64_t address = (uintptr_t)buffers[r].data();
                if (uct_tcp_md_access_begin(md, key, address, 256, PUT) !=
                    UCS_OK) {
                    continue;
                }
                if (dead_key[r].load() == key) {
                    ++violations;
                }
                memcpy(buffers[r].data(), sink.data(), 256);
                if (dead_key[r].load() == key) {
                    ++violations;
                }
                seen_key[r].store(key);
                uct_tcp_md_access_end(md);
                ++grants;
            }
        }
    });

    for (std::thread &t : threads) {
        t.join();
    }

    EXPECT_EQ(0u, failures.load());
    EXPECT_EQ(0u, violations.load());
    EXPECT_EQ(0u, ucs_hash_size(&tcp_md()->regions));
    EXPECT_TRUE(lock_is_free());
    /* the race was exercised */
    EXPECT_GT(grants.load(), 0u);
}
