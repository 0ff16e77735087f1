/*
 * The memory event API (ucm/api/ucm.h): a handler sees every range the
 * program maps or releases (munmap of a whole or a partial mapping, mremap
 * that moves, madvise, the heap shrinking, shmdt, and ranges reported with
 * ucm_vm_munmap), handlers run by priority, ucm_unset_event_handler removes
 * exactly one (cb, arg) pair, and bad arguments are refused.
 */
#include <common/test.h>

extern "C" {
#include <ucm/api/ucm.h>
}

#include <cstdint>
#include <cstring>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <unistd.h>

namespace {

/* What handlers saw; written under libucm's lock, without allocating */
struct ucm_record {
    ucm_event_type_t type;
    void *address;
    size_t size;
    void *arg;
    int handler;
};

const int MAX_RECORDS = 4096;
ucm_record records[MAX_RECORDS];
int num_records;

void record(int handler, ucm_event_type_t type, ucm_event_t *event, void *arg)
{
    if (num_records < MAX_RECORDS) {
        records[num_records].type    = type;
        records[num_records].address = event->vm_unmapped.address;
        records[num_records].size    = event->vm_unmapped.size;
        records[num_records].arg     = arg;
        records[num_records].handler = handler;
        ++num_records;
    }
}

void handler_a(ucm_event_type_t type, ucm_event_t *event, void *arg)
{
    record(0, type, event, arg);
}

void handler_b(ucm_event_type_t type, ucm_event_t *event, void *arg)
{
    record(1, type, event, arg);
}

class ucm_events : public ucs::test {
protected:
    virtual void SetUp()
    {
        ucs::test::SetUp();
        m_page      = (size_t)sysconf(_SC_PAGESIZE);
        num_records = 0;
    }

    /* The number of records of @a type for exactly [addr, addr + size) */
    static int count(ucm_event_type_t type, const void *addr, size_t size,
                     int handler = 0)
    {
        int n = 0;

        for (int i = 0; i < num_records; ++i) {
            if ((records[i].type == type) && (records[i].address == addr) &&
                (records[i].size == size) && (records[i].handler == handler)) {
                ++n;
            }
        }
        return n;
    }

    /* Whether a record of @a type covers [addr, addr + size) */
    static bool covered(ucm_event_type_t type, const void *addr, size_t size)
    {
        uintptr_t start = (uintptr_t)addr;

        for (int i = 0; i < num_records; ++i) {
            uintptr_t rec = (uintptr_t)records[i].address;
            if ((records[i].type == type) && (rec <= start) &&
                (start + size - rec <= records[i].size)) {
                return true;
            }
        }
        return false;
    }

    char *map(size_t size)
    {
        void *ptr = mmap(NULL, size, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        EXPECT_NE(MAP_FAILED, ptr) << strerror(errno);
        return static_cast<char *>(ptr);
    }

    size_t m_page;
};

TEST_F(ucm_events, interposition_works)
{
    EXPECT_EQ(UCS_OK, ucm_test_events(UCM_EVENT_VM_UNMAPPED));
    EXPECT_EQ(UCS_OK, ucm_test_events(UCM_EVENT_VM_MAPPED));
    EXPECT_EQ(UCS_OK, ucm_test_external_events(UCM_EVENT_VM_UNMAPPED));
    EXPECT_EQ(UCS_ERR_UNSUPPORTED, ucm_test_events(UCM_EVENT_MMAP));
}

TEST_F(ucm_events, munmap_whole_and_partial)
{
    char *buf = map(4 * m_page);

    ASSERT_EQ(UCS_OK,
              ucm_set_event_handler(UCM_EVENT_VM_UNMAPPED, 0, handler_a, this));
    ASSERT_EQ(0, munmap(buf + m_page, m_page));
    ASSERT_EQ(0, munmap(buf + 3 * m_page, m_page));
    ASSERT_EQ(0, munmap(buf, 4 * m_page));
    ucm_unset_event_handler(UCM_EVENT_VM_UNMAPPED, handler_a, this);

    EXPECT_EQ(1, count(UCM_EVENT_VM_UNMAPPED, buf + m_page, m_page));
    EXPECT_EQ(1, count(UCM_EVENT_VM_UNMAPPED, buf + 3 * m_page, m_page));
    EXPECT_EQ(1, count(UCM_EVENT_VM_UNMAPPED, buf, 4 * m_page));
}

TEST_F(ucm_events, mmap_is_mapped_event)
{
    ASSERT_EQ(UCS_OK,
              ucm_set_event_handler(UCM_EVENT_VM_MAPPED | UCM_EVENT_VM_UNMAPPED,
                                    0, handler_a, this));
    char *buf = map(2 * m_page);
    /* MAP_FIXED over a mapping replaces its pages */
    void *fixed = mmap(buf, m_page, PROT_READ,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    ASSERT_EQ((void *)buf, fixed);
    ASSERT_EQ(0, munmap(buf, 2 * m_page));
    ucm_unset_event_handler(UCM_EVENT_VM_MAPPED | UCM_EVENT_VM_UNMAPPED,
                            handler_a, this);

    EXPECT_EQ(1, count(UCM_EVENT_VM_MAPPED, buf, 2 * m_page));
    EXPECT_EQ(1, count(UCM_EVENT_VM_UNMAPPED, buf, m_page));
    EXPECT_EQ(1, count(UCM_EVENT_VM_MAPPED, buf, m_page));
    EXPECT_EQ(1, count(UCM_EVENT_VM_UNMAPPED, buf, 2 * m_page));
}

TEST_F(ucm_events, mremap_that_moves)
{
    char *buf = map(2 * m_page);
    /* a hole elsewhere, to move the first page to */
    char *dest = map(4 * m_page);
    ASSERT_EQ(0, munmap(dest, 4 * m_page));

    ASSERT_EQ(UCS_OK,
              ucm_set_event_handler(UCM_EVENT_VM_MAPPED | UCM_EVENT_VM_UNMAPPED,
                                    0, handler_a, this));
    void *moved =
        mremap(buf, m_page, 4 * m_page, MREMAP_MAYMOVE | MREMAP_FIXED, dest);
    ASSERT_EQ((void *)dest, moved) << strerror(errno);
    ucm_unset_event_handler(UCM_EVENT_VM_MAPPED | UCM_EVENT_VM_UNMAPPED,
                            handler_a, this);

    EXPECT_EQ(1, count(UCM_EVENT_VM_UNMAPPED, buf, m_page));
    EXPECT_TRUE(covered(UCM_EVENT_VM_UNMAPPED, dest, 4 * m_page));
    EXPECT_EQ(1, count(UCM_EVENT_VM_MAPPED, dest, 4 * m_page));
    munmap(dest, 4 * m_page);
    munmap(buf + m_page, m_page);
}

TEST_F(ucm_events, madvise_dontneed)
{
    char *buf = map(2 * m_page);

    ASSERT_EQ(UCS_OK,
              ucm_set_event_handler(UCM_EVENT_VM_UNMAPPED, 0, handler_a, this));
    ASSERT_EQ(0, madvise(buf + m_page, m_page, MADV_DONTNEED));
    /* advice that keeps the pages is not an event */
    ASSERT_EQ(0, madvise(buf, m_page, MADV_WILLNEED));
    ucm_unset_event_handler(UCM_EVENT_VM_UNMAPPED, handler_a, this);

    EXPECT_EQ(1, count(UCM_EVENT_VM_UNMAPPED, buf + m_page, m_page));
    EXPECT_EQ(0, count(UCM_EVENT_VM_UNMAPPED, buf, m_page));
    munmap(buf, 2 * m_page);
}

TEST_F(ucm_events, heap_grows_and_shrinks)
{
    ASSERT_EQ(UCS_OK,
              ucm_set_event_handler(UCM_EVENT_VM_MAPPED | UCM_EVENT_VM_UNMAPPED,
                                    0, handler_a, this));
    /* nothing in between allocates: the break is ours to move back */
    char *old_brk = static_cast<char *>(sbrk((intptr_t)m_page));
    ASSERT_NE((void *)-1, old_brk);
    ASSERT_EQ(old_brk + m_page, sbrk(-(intptr_t)m_page));
    ucm_unset_event_handler(UCM_EVENT_VM_MAPPED | UCM_EVENT_VM_UNMAPPED,
                            handler_a, this);

    EXPECT_EQ(1, count(UCM_EVENT_VM_MAPPED, old_brk, m_page));
    EXPECT_EQ(1, count(UCM_EVENT_VM_UNMAPPED, old_brk, m_page));
}

TEST_F(ucm_events, shmat_shmdt)
{
    int shmid = shmget(IPC_PRIVATE, 2 * m_page, IPC_CREAT | 0600);
    ASSERT_GE(shmid, 0) << strerror(errno);

    ASSERT_EQ(UCS_OK,
              ucm_set_event_handler(UCM_EVENT_VM_MAPPED | UCM_EVENT_VM_UNMAPPED,
                                    0, handler_a, this));
    void *addr = shmat(shmid, NULL, 0);
    EXPECT_NE((void *)-1, addr) << strerror(errno);
    shmctl(shmid, IPC_RMID, NULL);
    if (addr != (void *)-1) {
        EXPECT_EQ(0, shmdt(addr));
    }
    ucm_unset_event_handler(UCM_EVENT_VM_MAPPED | UCM_EVENT_VM_UNMAPPED,
                            handler_a, this);

    EXPECT_EQ(1, count(UCM_EVENT_VM_MAPPED, addr, 2 * m_page));
    EXPECT_EQ(1, count(UCM_EVENT_VM_UNMAPPED, addr, 2 * m_page));
}

/* A program with hooks of its own reports releases itself */
TEST_F(ucm_events, external_vm_munmap)
{
    int dummy;

    ucm_set_external_event(UCM_EVENT_VM_UNMAPPED);
    ASSERT_EQ(UCS_OK,
              ucm_set_event_handler(UCM_EVENT_VM_UNMAPPED, 0, handler_a, this));
    ucm_vm_munmap(&dummy, 12345);
    ucm_vm_munmap(&dummy, 0); /* nothing */
    ucm_unset_event_handler(UCM_EVENT_VM_UNMAPPED, handler_a, this);
    ucm_unset_external_event(UCM_EVENT_VM_UNMAPPED);
    /* after removal, no more */
    ucm_vm_munmap(&dummy, 12345);

    EXPECT_EQ(1, count(UCM_EVENT_VM_UNMAPPED, &dummy, 12345));
    EXPECT_EQ(0, count(UCM_EVENT_VM_UNMAPPED, &dummy, 0));
}

TEST_F(ucm_events, vm_mmap_reports_mapped)
{
    int dummy;

    ASSERT_EQ(UCS_OK,
              ucm_set_event_handler(UCM_EVENT_VM_MAPPED, 0, handler_a, this));
    ucm_vm_mmap(&dummy, 777);
    ucm_vm_munmap(&dummy, 777); /* not asked for */
    ucm_unset_event_handler(UCM_EVENT_VM_MAPPED, handler_a, this);

    EXPECT_EQ(1, count(UCM_EVENT_VM_MAPPED, &dummy, 777));
    EXPECT_EQ(0, count(UCM_EVENT_VM_UNMAPPED, &dummy, 777));
}

TEST_F(ucm_events, priorities_order_handlers)
{
    int dummy;
    int args[4];

    /* added out of order; equal priorities keep the order of addition */
    ASSERT_EQ(UCS_OK, ucm_set_event_handler(UCM_EVENT_VM_UNMAPPED, 5, handler_a,
                                            &args[3]));
    ASSERT_EQ(UCS_OK, ucm_set_event_handler(UCM_EVENT_VM_UNMAPPED, -3,
                                            handler_a, &args[0]));
    ASSERT_EQ(UCS_OK, ucm_set_event_handler(UCM_EVENT_VM_UNMAPPED, 0, handler_a,
                                            &args[1]));
    ASSERT_EQ(UCS_OK, ucm_set_event_handler(UCM_EVENT_VM_UNMAPPED, 0, handler_a,
                                            &args[2]));
    ucm_vm_munmap(&dummy, sizeof(dummy));
    for (int i = 0; i < 4; ++i) {
        ucm_unset_event_handler(UCM_EVENT_VM_UNMAPPED, handler_a, &args[i]);
    }

    std::vector<void *> order;
    for (int i = 0; i < num_records; ++i) {
        if (records[i].address == &dummy) {
            order.push_back(records[i].arg);
        }
    }
    ASSERT_EQ(4u, order.size());
    for (int i = 0; i < 4; ++i) {
        EXPECT_EQ((void *)&args[i], order[i]) << "position " << i;
    }
}

TEST_F(ucm_events, unset_removes_exactly_one_pair)
{
    int dummy, x, y;

    ASSERT_EQ(UCS_OK,
              ucm_set_event_handler(UCM_EVENT_VM_UNMAPPED, 0, handler_a, &x));
    ASSERT_EQ(UCS_OK,
              ucm_set_event_handler(UCM_EVENT_VM_UNMAPPED, 0, handler_a, &y));
    ASSERT_EQ(UCS_OK,
              ucm_set_event_handler(UCM_EVENT_VM_UNMAPPED | UCM_EVENT_VM_MAPPED,
                                    0, handler_b, &x));

    ucm_unset_event_handler(UCM_EVENT_VM_UNMAPPED, handler_a, &x);
    /* of handler_b's two events, only the unmapped one goes */
    ucm_unset_event_handler(UCM_EVENT_VM_UNMAPPED, handler_b, &x);
    /* no such pair: nothing happens */
    ucm_unset_event_handler(UCM_EVENT_VM_UNMAPPED, handler_b, &y);

    ucm_vm_munmap(&dummy, 1);
    ucm_vm_mmap(&dummy, 2);
    ucm_unset_event_handler(UCM_EVENT_VM_UNMAPPED, handler_a, &y);
    ucm_unset_event_handler(UCM_EVENT_VM_MAPPED, handler_b, &x);
    ucm_vm_munmap(&dummy, 3);
    ucm_vm_mmap(&dummy, 4);

    ASSERT_EQ(2, num_records);
    EXPECT_EQ(0, records[0].handler);
    EXPECT_EQ((void *)&y, records[0].arg);
    EXPECT_EQ(UCM_EVENT_VM_UNMAPPED, records[0].type);
    EXPECT_EQ(1, records[1].handler);
    EXPECT_EQ((void *)&x, records[1].arg);
    EXPECT_EQ(UCM_EVENT_VM_MAPPED, records[1].type);
}

TEST_F(ucm_events, bad_params)
{
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              ucm_set_event_handler(UCM_EVENT_VM_UNMAPPED, 0, NULL, NULL));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              ucm_set_event_handler(0, 0, handler_a, NULL));
    EXPECT_EQ(
        UCS_ERR_INVALID_PARAM,
        ucm_set_event_handler(UCM_EVENT_FLAG_NO_INSTALL, 0, handler_a, NULL));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              ucm_set_event_handler(UCM_EVENT_VM_UNMAPPED | (1 << 30), 0,
                                    handler_a, NULL));
    /* per-call and memory type events are not delivered */
    EXPECT_EQ(UCS_ERR_UNSUPPORTED,
              ucm_set_event_handler(UCM_EVENT_MUNMAP, 0, handler_a, NULL));
    EXPECT_EQ(
        UCS_ERR_UNSUPPORTED,
        ucm_set_event_handler(UCM_EVENT_VM_UNMAPPED | UCM_EVENT_MEM_TYPE_FREE,
                              0, handler_a, NULL));

    /* none of them was added */
    int dummy;
    ucm_vm_munmap(&dummy, 1);
    EXPECT_EQ(0, num_records);
}

TEST_F(ucm_events, flags)
{
    int dummy;

    ASSERT_EQ(UCS_OK, ucm_set_event_handler(UCM_EVENT_VM_UNMAPPED |
                                                UCM_EVENT_FLAG_NO_INSTALL |
                                                UCM_EVENT_FLAG_EXISTING_ALLOC,
                                            0, handler_a, this));
    ucm_vm_munmap(&dummy, 1);
    ucm_unset_event_handler(UCM_EVENT_VM_UNMAPPED, handler_a, this);
    EXPECT_EQ(1, count(UCM_EVENT_VM_UNMAPPED, &dummy, 1));
}

/* The numbers clients compile in are UCX's */
TEST_F(ucm_events, numbering)
{
    EXPECT_EQ(1 << 1, UCM_EVENT_MUNMAP);
    EXPECT_EQ(1 << 7, UCM_EVENT_BRK);
    EXPECT_EQ(1 << 16, UCM_EVENT_VM_MAPPED);
    EXPECT_EQ(1 << 17, UCM_EVENT_VM_UNMAPPED);
    EXPECT_EQ(1 << 21, UCM_EVENT_MEM_TYPE_FREE);
    EXPECT_EQ(1 << 24, UCM_EVENT_FLAG_NO_INSTALL);
    EXPECT_EQ(1 << 25, UCM_EVENT_FLAG_EXISTING_ALLOC);
}

} // namespace
