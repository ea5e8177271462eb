// rpm/c/server.h, second half: the probe's flush decisions for this
// machine, as rpm-probe takes them (tools/probe/report.cpp: detect, the
// overrides of $RPM_CONFIG and RPM_*, plan).
#include "capi/handles.hpp"
#include "capi/status.hpp"

#include <rpm/overrides.hpp>
#include <rpm/platform.hpp>

#include <cstdlib>
#include <string>

using namespace rpm;
using namespace rpm::capi;

namespace {

Result<std::vector<flush::PlannedDecision>> decisions_of(const char* root) {
    auto ov = load_overrides(std::nullopt, [](const char* name) { return std::getenv(name); });
    if (!ov) return ov.error();
    platform::DetectOptions d;
    d.root = root;
    // Verbs describe this machine's devices, not a fixture tree's.
    d.query_verbs = d.root == "/";
    d.extra_iio_device_ids = ov->iio_root_port_ids;
    auto profile = platform::detect(d);
    if (!profile) return profile.error();
    return flush::plan(flush::regions_of(*profile), profile->rdma_devices, *ov);
}

} // namespace

extern "C" {

int rpm_probe_new(const char* sysfs_root, rpm_probe** out) {
    if (out == nullptr) return null_argument(__func__, "probe_out");
    return guard(__func__, [&] {
        auto d = decisions_of(sysfs_root != nullptr ? sysfs_root : "/");
        if (!d) return fail(d.error());
        *out = new rpm_probe{std::move(*d)};
        return 0;
    });
}

int rpm_probe_delete(rpm_probe** probe) { return delete_handle(__func__, probe); }

int rpm_probe_get_count(const rpm_probe* probe, size_t* count) {
    if (probe == nullptr) return null_argument(__func__, "probe");
    if (count == nullptr) return null_argument(__func__, "count");
    *count = probe->decisions.size();
    return 0;
}

int rpm_probe_get_decision(const rpm_probe* probe, size_t index, rpm_decision* out) {
    if (probe == nullptr) return null_argument(__func__, "probe");
    if (out == nullptr) return null_argument(__func__, "decision");
    if (index >= probe->decisions.size())
        return guard(__func__, [&] {
            return fail(errc::invalid_argument, ("rpm_probe_get_decision: decision " + std::to_string(index) + " of " +
                                                 std::to_string(probe->decisions.size()))
                                                    .c_str());
        });
    const auto& p = probe->decisions[index];
    *out = {p.region.c_str(),
            p.device ? p.device->c_str() : nullptr,
            static_cast<int>(p.decision.method),
            static_cast<int>(p.decision.server_persist),
            static_cast<int>(p.decision.effective_domain),
            p.decision.reason.c_str()};
    return 0;
}

} // extern "C"
