// Names of the P2P module's enums, as rpm-probe prints them (text and JSON).
#include <rpm/p2p.hpp>

namespace rpm::p2p {

std::string_view to_string(ProviderKind k) noexcept {
    switch (k) {
    case ProviderKind::p2pmem: return "p2pmem";
    case ProviderKind::nvme_cmb: return "nvme_cmb";
    case ProviderKind::nvme_pmr: return "nvme_pmr";
    }
    return "invalid";
}

std::string_view to_string(Source s) noexcept {
    switch (s) {
    case Source::p2pmem: return "p2pmem";
    case Source::bar: return "bar";
    case Source::host_hugepages: return "host_hugepages";
    case Source::host: return "host";
    }
    return "invalid";
}

} // namespace rpm::p2p
