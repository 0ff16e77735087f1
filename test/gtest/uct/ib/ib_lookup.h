/*
 * Finding the verbs devices and the ib memory domains: what the ib suites
 * ask before they test anything (is there a device, which component, open
 * its md), what the peer process of the rc and ud suites opens, and what
 * an md says of itself; ib_md_fixture, the base of the suites of one md
 * (test_ib_md.cc, test_ib_md_access.cc).
 */
#ifndef OPENUCT_TEST_UCT_IB_IB_LOOKUP_H_
#define OPENUCT_TEST_UCT_IB_IB_LOOKUP_H_

#include <common/test.h>

extern "C" {
#include <uct/api/uct.h>
}

#include <infiniband/verbs.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ib_lookup {

/* Config settings: name (without the UCX_ prefix of the environment) and
 * value */
typedef std::vector<std::pair<std::string, std::string>> config_list;

/* The names of the verbs devices present (ibv_get_device_list) */
std::vector<std::string> device_names();

/* Calls @a fn with the verbs device named @a name, while the device list
 * that holds it is alive; false (without calling it) when there is no
 * such device */
bool with_device(const std::string &name,
                 const std::function<void(struct ibv_device *)> &fn);

/* Is the verbs device @a name present? */
bool have_device(const std::string &name);

/* The ib component, or NULL when the ib module was not loaded */
uct_component_h component();

/* The md resources the ib component lists (one per verbs device) into
 * @a names; the status of the component query (UCS_ERR_NO_DEVICE without
 * the ib component) */
ucs_status_t md_names(std::vector<std::string> &names);

/* Opens the ib md @a name: its config is read from the environment, then
 * @a modify is applied. The status of the first step that failed (the ib
 * component missing is UCS_ERR_NO_DEVICE); *md_p is set on success only. */
ucs_status_t open_md(const std::string &name, uct_md_h *md_p,
                     const config_list &modify = config_list());

/* What uct_md_print_info() prints for @a md (uct_info -d shows it); empty
 * when it could not be captured */
std::string md_info(uct_md_h md);

} // namespace ib_lookup

/* The base of the suites of one ib md: SetUp skips the test where the
 * verbs device is missing and fails it where the ib component is; the
 * derived SetUp then opens m_md, which TearDown closes. The parameter is
 * the registration cache setting of the derived suite. */
class ib_md_fixture : public ucs::test,
                      public testing::WithParamInterface<std::string> {
protected:
    explicit ib_md_fixture(const char *dev_name) : m_dev_name(dev_name)
    {}

    void SetUp() override;
    void TearDown() override;

    /* uct_mem_alloc() of @a length bytes on m_md alone (method MD,
     * UCT_MD_MEM_ACCESS_ALL), named @a name */
    ucs_status_t alloc_on_md(size_t length, const char *name,
                             uct_allocated_memory_t *mem);

    /* Did the base SetUp() skip or fail the test? */
    bool stopped() const
    {
        return IsSkipped() || HasFatalFailure();
    }

    const char *const m_dev_name;
    uct_component_h m_component = NULL;
    uct_md_h m_md               = NULL;
};

#endif
