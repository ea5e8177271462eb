// detect(): the whole Profile, from cpuid, sysfs under the root and (on
// the real machine) libibverbs.
#include <rpm/platform.hpp>

#include "platform/cpuid.hpp"
#include "platform/nd_regions.hpp"
#include "platform/rdma_caps.hpp"
#include "platform/rdma_devices.hpp"

#include <system_error>

namespace rpm::platform {
namespace {

namespace fs = std::filesystem;

Tri tri(bool b) noexcept { return b ? Tri::yes : Tri::no; }

bool is_real_root(const fs::path& root) {
    return root.lexically_normal() == fs::path("/");
}

// Capabilities are only worth asking verbs for on the machine itself: a
// fixture tree's device names mean nothing to libibverbs.
void fill_caps(RdmaDevice& dev, const DetectOptions& opts, std::vector<std::string>& unreadable) {
    if (!is_real_root(opts.root)) {
        dev.caps_detail = "not queried: sysfs root is a fixture tree";
        return;
    }
    if (!opts.query_verbs) {
        dev.caps_detail = "not queried: verbs query turned off";
        return;
    }
    auto flags = query_device_cap_flags_ex(dev.name);
    if (!flags) {
        dev.caps_detail = flags.error().detail();
        unreadable.push_back(dev.name + " capabilities: " + flags.error().detail());
        return;
    }
    const RdmaCaps caps = caps_from_flags(*flags);
    dev.native_flush = tri(caps.native_flush);
    dev.atomic_write = tri(caps.atomic_write);
    dev.caps_detail = caps_detail(*flags);
}

Result<void> check_root(const fs::path& root) {
    std::error_code ec;
    if (fs::is_directory(root, ec)) return {};
    return Error(errc::path_not_found,
                 "sysfs root " + root.string() + ": " +
                     (ec ? ec.message() : std::string("not a directory")));
}

} // namespace

std::string_view to_string(Tri t) noexcept {
    switch (t) {
    case Tri::no: return "no";
    case Tri::yes: return "yes";
    case Tri::unknown: return "unknown";
    }
    return "unknown";
}

Result<Profile> detect(const DetectOptions& opts) {
    if (auto ok = check_root(opts.root); !ok) return ok.error();
    Profile p;
    p.root = opts.root;
    CpuReading cpu = read_cpu_flush();
    p.cpu = cpu.flush;
    p.cpu_detail = std::move(cpu.detail);
    p.regions = read_nd_regions(opts.root, p.unreadable);
    p.rdma_devices = read_rdma_devices(opts.root, opts.extra_iio_device_ids, p.unreadable);
    for (auto& dev : p.rdma_devices) fill_caps(dev, opts, p.unreadable);
    return p;
}

} // namespace rpm::platform
