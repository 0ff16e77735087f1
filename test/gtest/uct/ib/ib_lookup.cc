/*
 * Finding the verbs devices and the ib memory domains (ib_lookup.h).
 */
#include "ib_lookup.h"
#include "../peer_process.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" {
#include <uct/ib/base/ib_md.h>
}

namespace ib_lookup {

namespace {

/* Calls @a fn with each verbs device present */
void for_each_device(const std::function<void(struct ibv_device *)> &fn)
{
    int num_devices;
    struct ibv_device **devices = ibv_get_device_list(&num_devices);

    if (devices == NULL) {
        return;
    }
    for (int i = 0; i < num_devices; ++i) {
        fn(devices[i]);
    }
    ibv_free_device_list(devices);
}

} // namespace

std::vector<std::string> device_names()
{
    std::vector<std::string> names;

    for_each_device([&](struct ibv_device *device) {
        names.push_back(ibv_get_device_name(device));
    });
    return names;
}

bool with_device(const std::string &name,
                 const std::function<void(struct ibv_device *)> &fn)
{
    bool found = false;

    for_each_device([&](struct ibv_device *device) {
        if (!found && (name == ibv_get_device_name(device))) {
            found = true;
            fn(device);
        }
    });
    return found;
}

bool have_device(const std::string &name)
{
    return with_device(name, [](struct ibv_device *) {});
}

uct_component_h component()
{
    return test_peer::find_component(UCT_IB_COMPONENT_NAME);
}

ucs_status_t md_names(std::vector<std::string> &names)
{
    uct_component_h ib = component();
    uct_component_attr_t attr;
    ucs_status_t status;

    names.clear();
    if (ib == NULL) {
        return UCS_ERR_NO_DEVICE;
    }
    attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
    status          = uct_component_query(ib, &attr);
    if (status != UCS_OK) {
        return status;
    }
    std::vector<uct_md_resource_desc_t> res(attr.md_resource_count + 1);
    attr.field_mask   = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
    attr.md_resources = res.data();
    status            = uct_component_query(ib, &attr);
    if (status != UCS_OK) {
        return status;
    }
    for (unsigned i = 0; i < attr.md_resource_count; ++i) {
        names.push_back(res[i].md_name);
    }
    return UCS_OK;
}

ucs_status_t open_md(const std::string &name, uct_md_h *md_p,
                     const config_list &modify)
{
    uct_component_h ib = component();
    uct_md_config_t *config;
    ucs_status_t status;

    if (ib == NULL) {
        return UCS_ERR_NO_DEVICE;
    }
    status = uct_md_config_read(ib, NULL, NULL, &config);
    if (status != UCS_OK) {
        return status;
    }
    for (const auto &setting : modify) {
        status = uct_config_modify(config, setting.first.c_str(),
                                   setting.second.c_str());
        if (status != UCS_OK) {
            uct_config_release(config);
            return status;
        }
    }
    status = uct_md_open(ib, name.c_str(), config, md_p);
    uct_config_release(config);
    return status;
}

std::string md_info(uct_md_h md)
{
    char *text   = NULL;
    size_t size  = 0;
    FILE *stream = open_memstream(&text, &size);

    if (stream == NULL) {
        return std::string();
    }
    uct_md_print_info(md, stream);
    fclose(stream);
    std::string info(text, size);
    free(text);
    return info;
}

} // namespace ib_lookup

void ib_md_fixture::SetUp()
{
    ucs::test::SetUp();
    if (!ib_lookup::have_device(m_dev_name)) {
        GTEST_SKIP() << "no RDMA device " << m_dev_name
                     << " here; run under test/rxe/run.sh";
    }

    m_component = ib_lookup::component();
    ASSERT_TRUE(m_component != NULL) << "the ib module was not loaded";
}

void ib_md_fixture::TearDown()
{
    if (m_md != NULL) {
        uct_md_close(m_md);
    }
    ucs::test::TearDown();
}

ucs_status_t ib_md_fixture::alloc_on_md(size_t length, const char *name,
                                        uct_allocated_memory_t *mem)
{
    uct_alloc_method_t method = UCT_ALLOC_METHOD_MD;
    uct_mem_alloc_params_t params;

    memset(&params, 0, sizeof(params));
    params.field_mask = UCT_MEM_ALLOC_PARAM_FIELD_FLAGS |
                        UCT_MEM_ALLOC_PARAM_FIELD_MDS |
                        UCT_MEM_ALLOC_PARAM_FIELD_NAME;
    params.flags     = UCT_MD_MEM_ACCESS_ALL;
    params.mds.mds   = &m_md;
    params.mds.count = 1;
    params.name      = name;
    return uct_mem_alloc(length, &method, 1, &params, mem);
}
