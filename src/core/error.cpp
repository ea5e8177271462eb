// The "rpm" error category: each message says what went wrong and what the
// user can do about it, because an error is often all a user sees.
#include <rpm/error.hpp>

namespace rpm {
namespace {

// The arguments, files, devices, platform and configuration: what a call
// meets before any data moves. nullptr for the other codes.
const char* describe_setup(errc e) noexcept {
    switch (e) {
    case errc::invalid_argument:
        return "invalid argument; check the call against its documentation";
    case errc::path_not_found:
        return "no such file or device; check the path, or pass create with a size to make a file";
    case errc::permission_denied:
        return "permission denied; the OS refused access to a file or device (check its owner and mode), "
               "or a request came before the session authenticated";
    case errc::bad_size:
        return "bad size: a size is zero, larger than what holds it, or not aligned as required; "
               "the detail says which size";
    case errc::not_pmem:
        return "not persistent memory; use a devdax device, a file on a DAX file system, "
               "or a regular/tmpfs file";
    case errc::granularity_not_supported:
        return "the region cannot give the store granularity asked for; relax the requirement "
               "or use a region whose platform offers it";
    case errc::pmem_failed:
        return "libpmem2 failed; the detail names the call and its reason";
    case errc::deep_flush_failed:
        return "deep flush failed; the region's deep_flush control is missing or not writable";
    case errc::io_error:
        return "input/output error on a file, device or connection; the detail says which and why";
    case errc::sysfs_unreadable:
        return "a platform file could not be read; run as root or set an override";
    case errc::bad_override:
        return "malformed override; see docs/flush-methods.md for the variables and their values";
    case errc::bad_config:
        return "malformed configuration file; see docs/flush-methods.md for its keys";
    case errc::rdma_unavailable:
        return "no usable RDMA device; load a driver (or rdma_rxe for Soft-RoCE) or use tcp://";
    case errc::unsupported:
        return "not supported on this platform or build; run rpm-probe to see what this machine offers";
    default:
        return nullptr;
    }
}

// Moving data: replicas, the MR pool, P2P memory, NVMe, the peer and its
// protocol, fencing, authentication, ranges and alignment. nullptr for the
// other codes.
const char* describe_operation(errc e) noexcept {
    switch (e) {
    case errc::quorum_lost:
        return "too few replicas are live for the durability asked for; nothing was acknowledged, "
               "restart or reconnect replicas, or relax the durability";
    case errc::mr_budget_exhausted:
        return "the MR pool's registration budget is used up; raise MrPoolOptions::budget or "
               "return buffers";
    case errc::no_p2p_memory:
        return "no peer-to-peer memory suits these devices (see the explanation; rpm-probe --p2p)";
    case errc::nvme_status:
        return "the NVMe controller failed the command; the detail gives its status (SCT/SC)";
    case errc::protocol_error:
        return "the peer broke the wire protocol and the connection was closed; the detail says how";
    case errc::fenced:
        return "a primary with a newer term took this region over (fencing): this one's writes are refused "
               "from now on; stop acting as primary";
    case errc::auth_failed:
        return "authentication failed: one side does not hold the secret the other expects; check both "
               "sides' client id and secret (the detail says which side refused and why)";
    case errc::out_of_range:
        return "out of range: offset + length reaches past the end of the region; RemoteRegion::size() "
               "gives its size";
    case errc::misaligned:
        return "misaligned offset; an atomic write takes an offset that is a multiple of 8";
    case errc::would_deadlock:
        return "a synchronous call inside a callback of its own connection would wait for itself (that thread "
               "completes it); nothing was sent: use the callback form there, or call from another thread";
    default:
        return nullptr;
    }
}

const char* describe(errc e) noexcept {
    if (const char* d = describe_setup(e)) return d;
    if (const char* d = describe_operation(e)) return d;
    return "unknown rpm error";
}

class Category final : public std::error_category {
public:
    const char* name() const noexcept override { return "rpm"; }
    std::string message(int ev) const override { return describe(static_cast<errc>(ev)); }
};

} // namespace

const std::error_category& rpm_category() noexcept {
    static const Category category;
    return category;
}

std::error_code make_error_code(errc e) noexcept {
    return {static_cast<int>(e), rpm_category()};
}

std::string Error::message() const {
    if (!code_) return "success";
    if (detail_.empty()) return code_.message();
    return detail_ + ": " + code_.message();
}

} // namespace rpm
