// rpm::p2p: the peer-to-peer (P2P) buffer manager (seeds 000 and 001).
//
// Device memory on a PCIe bus (an NVMe controller memory buffer, CMB, or
// persistent memory region, PMR; any BAR the kernel publishes as p2pmem)
// can take DMA from other devices directly, so data moving NIC -> drive
// never crosses host memory. Whether that works depends on the PCIe path
// between the devices, and Linux's P2PDMA code has the rules; rpm follows
// them:
//
//   distance 0   the provider is the client (same function)
//   distance 2   functions of one device (a common upstream bridge)
//   distance 4+  devices below a common switch (2 per extra bridge level)
//   through the host bridge: no common upstream bridge, or an ACS redirect
//   (request/completion redirect or egress control) on the path; allowed
//   only when both host bridges are whitelisted or the CPU is AMD Zen.
//
// Providers come from sysfs, always under a configurable root (a fixture
// tree in tests): p2pmem/ directories where the kernel has P2PDMA, and NVMe
// CMB/PMR BARs read from the controller registers where it has not. The
// manager allocates from a provider (mmap of p2pmem/allocate, or a mapping
// of the BAR with its own sub-allocator) and falls back to host memory,
// hugepages where it can, saying so.
#pragma once

#include <rpm/export.hpp>
#include <rpm/result.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

RPM_API_BEGIN

namespace rpm::p2p {

enum class ProviderKind {
    p2pmem,    ///< the kernel's P2PDMA published it (p2pmem/ in sysfs)
    nvme_cmb,  ///< an NVMe controller memory buffer, found from CMBLOC/CMBSZ
    nvme_pmr,  ///< an NVMe persistent memory region, found from PMRCAP
};
/// RETURN VALUE: "p2pmem", "nvme_cmb" or "nvme_pmr"; "invalid" for a value
/// outside the enum; never fails.
std::string_view to_string(ProviderKind k) noexcept;

/// A device offering memory for P2P DMA.
struct Provider {
    std::string bdf;                 ///< "0000:00:03.0"
    ProviderKind kind = ProviderKind::p2pmem;
    std::uint64_t size = 0;          ///< bytes offered
    std::uint64_t available = 0;     ///< bytes free (p2pmem/available, or the sub-allocator's)
    bool published = false;          ///< p2pmem/published: usable from user space
    int bar = -1;                    ///< the BAR holding it (CMB/PMR)
    std::uint64_t bar_offset = 0;    ///< where in the BAR it starts
    bool write_data = true;          ///< CMB: CMBSZ.WDS (writes to the buffer are allowed)
    bool read_data = true;           ///< CMB: CMBSZ.RDS
    std::string detail;              ///< what the registers or files said
};

/// Where a PCI device is: its chain of bridges and what is set on them.
/// Clients are named by BDF ("0000:03:00.0") or by a device name that has
/// a PCI parent in sysfs ("nvme0", "mlx5_0", "eth0").
struct Placement {
    std::string bdf;
    std::vector<std::string> upstream;  ///< bridges from the device's parent up to the root port
    std::string host_bridge;            ///< "pci0000:00"
};

/// One provider as judged for a set of clients.
struct Verdict {
    std::string provider;            ///< BDF
    bool usable = false;
    bool through_host_bridge = false;
    int distance = -1;               ///< sum over the clients (the kernel's), -1 when not usable
    std::string reason;              ///< "same switch (0000:02:00.0) as 0000:03:00.0, distance 4"
};

/// The answer of find(): the chosen provider (if any) and every verdict.
struct Choice {
    std::optional<Provider> provider;
    std::vector<Verdict> verdicts;   ///< one per provider, closest first
    std::string explanation;         ///< one paragraph: what was chosen and why
    std::vector<std::string> clients;///< as named to Manager::find (for fallback reasons)
};

struct ManagerOptions {
    std::filesystem::path root = "/";         ///< sysfs and /proc are read under it
    /// Extra host bridges (vendor, device) to treat as whitelisted.
    std::vector<std::pair<std::uint16_t, std::uint16_t>> extra_whitelist;
    /// Map NVMe BARs (resourceN) for CMB/PMR providers; off = discovery only.
    bool map_bars = true;
    /// Host fallback: try hugepages (MAP_HUGETLB) before normal pages.
    bool hugepages = true;
};

/// A provider's free space now (Manager::usage), as its buffers left it.
struct ProviderUsage {
    std::string bdf;
    ProviderKind kind = ProviderKind::p2pmem;
    std::uint64_t size = 0;
    std::uint64_t free_bytes = 0;    ///< p2pmem: the kernel's p2pmem/available
    std::uint64_t largest_free = 0;  ///< the largest extent one buffer can have
    double fragmentation = 0.0;      ///< 1 - largest_free / free_bytes
    std::size_t buffers = 0;         ///< live buffers from this manager
};

/// Where a buffer's memory is.
enum class Source { p2pmem, bar, host_hugepages, host };
/// RETURN VALUE: "p2pmem", "bar", "host_hugepages" or "host"; "invalid"
/// for a value outside the enum; never fails.
std::string_view to_string(Source s) noexcept;

class Manager;
namespace detail { class RPM_INTERNAL ManagerState; }

/// Memory from the manager. Freed (back to its provider) on destruction;
/// it keeps the provider's mapping alive even after its Manager is gone.
/// A moved-from buffer is empty (data() nullptr, size() 0).
class Buffer {
public:
    /// Take over `other`'s memory; `other` is left empty. ERRORS: none.
    Buffer(Buffer&&) noexcept;
    /// Give back the memory this held (as the destructor), then take over
    /// `other`'s; `other` is left empty. RETURN VALUE: *this.
    /// ERRORS: none.
    Buffer& operator=(Buffer&&) noexcept;
    /// Give the memory back: to its provider's sub-allocator (bar), by
    /// unmapping it (p2pmem, host), and out of the manager's figures. An
    /// empty buffer does nothing. ERRORS: none.
    ~Buffer();
    /// RETURN VALUE: the first byte, aligned as allocate was asked; nullptr
    /// for an empty buffer; never fails.
    [[nodiscard]] std::byte* data() const noexcept;
    /// RETURN VALUE: the size asked of allocate (the mapping may be larger,
    /// rounded to pages); 0 for an empty buffer; never fails.
    [[nodiscard]] std::size_t size() const noexcept;
    /// RETURN VALUE: {data(), size()}; never fails.
    [[nodiscard]] std::span<std::byte> bytes() const noexcept { return {data(), size()}; }
    /// RETURN VALUE: where the memory is; Source::host for an empty buffer;
    /// never fails.
    [[nodiscard]] Source source() const noexcept;
    /// RETURN VALUE: true for host memory (host or host_hugepages), and
    /// also for an empty buffer, whose source() is host; never fails.
    [[nodiscard]] bool is_fallback() const noexcept { return source() == Source::host || source() == Source::host_hugepages; }
    /// RETURN VALUE: the provider's BDF; empty for host memory and for an
    /// empty buffer; never fails.
    [[nodiscard]] const std::string& provider() const noexcept;  ///< BDF, empty for host memory
    /// RETURN VALUE: the offset into the provider's memory (bar: from the
    /// sub-allocator); 0 for p2pmem, host memory and an empty buffer; never
    /// fails.
    [[nodiscard]] std::uint64_t offset() const noexcept;         ///< into the provider's memory (p2pmem: 0, the kernel does not say)
    /// RETURN VALUE: for a fallback, why no P2P memory was used (and why no
    /// hugepages, when they were tried); empty otherwise; never fails.
    [[nodiscard]] const std::string& why() const noexcept;       ///< for a fallback: why not P2P

private:
    friend class detail::ManagerState;
    struct RPM_INTERNAL State;
    explicit Buffer(std::unique_ptr<State> s) noexcept;
    std::unique_ptr<State> s_;
};

/// Bytes moved through manager buffers, as the user reports them with
/// Manager::account: what P2P kept off host memory (the seed's "CPU memory
/// bandwidth" column).
struct Accounting {
    std::uint64_t device_bytes = 0;     ///< moved through provider memory
    std::uint64_t host_staged_bytes = 0;///< moved through host fallback buffers
    std::uint64_t allocations = 0;
    std::uint64_t fallbacks = 0;        ///< allocations served from host memory
    std::uint64_t bytes_allocated = 0;  ///< live, all sources
};

/// A moved-from Manager is safe to use: its Result calls fail with
/// errc::invalid_argument ("<call> on a moved-from p2p::Manager"), its
/// lists are empty, account() records nothing and accounting() is zero.
class Manager {
public:
    /// Discover providers under opts.root.
    /// RETURN VALUE: a manager (possibly with no providers). Devices whose
    /// files cannot be read are listed in skipped(), not returned as errors.
    /// ERRORS: errc::path_not_found when the root has no sys/bus/pci/devices
    /// (also when that path exists but cannot be resolved: an unreadable
    /// link, a loop, a link above the root).
    static Result<Manager> discover(ManagerOptions opts = {});

    /// Take over `other`'s state; `other` is left moved-from: every call
    /// on it is still safe (see each call), and it can be assigned to.
    /// ERRORS: none.
    Manager(Manager&&) noexcept;
    /// Let go of this manager's state, then take over `other`'s; `other`
    /// is left moved-from, as after the move constructor.
    /// RETURN VALUE: *this. ERRORS: none.
    Manager& operator=(Manager&&) noexcept;
    /// Let go of the manager; a provider's BAR stays mapped until its last
    /// Buffer is gone too. ERRORS: none.
    ~Manager();

    /// The providers as discovered (their `available` is not updated; see usage()).
    /// RETURN VALUE: that list, possibly empty; empty when moved-from;
    /// never fails.
    [[nodiscard]] const std::vector<Provider>& providers() const noexcept;
    /// Devices whose files could not be read during discovery, with the reason.
    /// RETURN VALUE: one line per such device; empty when moved-from;
    /// never fails.
    [[nodiscard]] const std::vector<std::string>& skipped() const noexcept;
    /// Free space now: one entry per provider in providers() order, then
    /// any provider only a hand-made Choice named. Thread-safe.
    /// RETURN VALUE: those entries (a BAR provider not yet allocated from
    /// reports its whole size free; p2pmem reads the kernel's
    /// p2pmem/available, or Provider::available when that is unreadable);
    /// empty when moved-from. ERRORS: none.
    [[nodiscard]] std::vector<ProviderUsage> usage() const;

    /// Where `device` sits. ERRORS: errc::path_not_found (no such device),
    /// errc::invalid_argument (not a PCI device).
    /// RETURN VALUE: its BDF, its bridges up to the root port and its host
    /// bridge.
    /// In full: errc::invalid_argument (an empty name, one with a '/', "."
    /// or ".."; a device with no PCI function above it, e.g. rxe, siw or a
    /// virtual device: the detail says which); errc::path_not_found (a BDF
    /// with no PCI device; a name found under none of sys/class/nvme,
    /// sys/class/infiniband, sys/class/net and sys/block);
    /// errc::sysfs_unreadable (a sysfs link on the way cannot be read,
    /// loops, or climbs above the root); errc::invalid_argument on a
    /// moved-from Manager.
    [[nodiscard]] Result<Placement> place(const std::string& device) const;

    /// The closest provider every client can reach (ties: most free space),
    /// with a verdict for each provider. No provider is not an error.
    /// ERRORS: errc::invalid_argument (no clients), the errors of place().
    /// RETURN VALUE: the choice (Choice::provider empty when none suits),
    /// its verdicts and explanation, and `clients` as given.
    /// That is: errc::invalid_argument (no clients); the error of the first
    /// client place() refuses (invalid_argument, path_not_found,
    /// sysfs_unreadable); errc::invalid_argument on a moved-from Manager.
    [[nodiscard]] Result<Choice> find(std::span<const std::string> clients) const;

    /// `size` bytes aligned to `align` (a power of two, at most 2 MiB) from
    /// the chosen provider, or from host memory when `choice` has none or it
    /// has no room (a fallback: Buffer::is_fallback, why()).
    /// ERRORS: errc::invalid_argument (size 0 or beyond SIZE_MAX / 2, bad
    /// alignment; a moved-from Manager), errc::io_error when neither the
    /// provider nor host memory can be mapped (the detail gives both
    /// reasons).
    /// RETURN VALUE: the buffer. The fallback is also taken when the
    /// provider cannot serve at all (ManagerOptions::map_bars off for a
    /// CMB/PMR, a CMB without WDS/RDS) or cannot be mapped. Host memory has
    /// 2 MiB pages when ManagerOptions::hugepages is set, size is at least
    /// 2 MiB and the pages can be had; normal pages otherwise. Thread-safe.
    Result<Buffer> allocate(const Choice& choice, std::size_t size, std::size_t align = 4096);
    /// Only from the provider: errc::no_p2p_memory instead of a fallback.
    /// RETURN VALUE: a buffer of the chosen provider's memory (Source::bar
    /// or Source::p2pmem). Thread-safe.
    /// ERRORS: errc::invalid_argument (as allocate, a moved-from Manager
    /// included); errc::no_p2p_memory
    /// (choice has no provider; the provider cannot serve: map_bars off, a
    /// CMB without WDS/RDS; its BAR or p2pmem/allocate cannot be mapped; no
    /// free extent fits: the detail says which and why).
    Result<Buffer> allocate_p2p(const Choice& choice, std::size_t size, std::size_t align = 4096);

    /// Record `bytes` moved through `b` (counted as device or host-staged).
    /// An empty buffer records nothing, nor does a moved-from Manager.
    /// Thread-safe. RETURN VALUE: none. ERRORS: none.
    void account(const Buffer& b, std::uint64_t bytes) noexcept;
    /// RETURN VALUE: the counters now: bytes accounted per kind, allocations
    /// and fallbacks so far, bytes of live buffers; all zero when
    /// moved-from. Thread-safe. ERRORS: none.
    [[nodiscard]] Accounting accounting() const;

private:
    RPM_INTERNAL explicit Manager(std::shared_ptr<detail::ManagerState> state) noexcept;
    std::shared_ptr<detail::ManagerState> state_;
};

} // namespace rpm::p2p

RPM_API_END
