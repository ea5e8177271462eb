// rpm-example-local-persist: open (or create) a persistent-memory region,
// say what it is, write a record, persist it and read it back.
//
//   rpm-example-local-persist [PATH [SIZE]]
//
// PATH defaults to /dev/shm/rpm-example.pool (emulated PM). SIZE is in MiB
// (default 64), or in the unit of a K, M or G suffix. A devdax device is
// opened whole, never created. Exits 0 on success, 1 with a message on
// failure.
#include <rpm/pmem.hpp>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include <unistd.h>

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kDefaultPath = "/dev/shm/rpm-example.pool";
constexpr std::size_t kDefaultSize = 64u << 20;

// A bare number is MiB, the unit pools are sized in.
std::optional<int> unit_shift(std::string_view suffix) {
    if (suffix.empty() || suffix == "M" || suffix == "m") return 20;
    if (suffix == "K" || suffix == "k") return 10;
    if (suffix == "G" || suffix == "g") return 30;
    return std::nullopt;
}

std::optional<std::size_t> parse_size(std::string_view s) {
    std::size_t value = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc() || value == 0) return std::nullopt;
    const auto shift =
        unit_shift(std::string_view(end, static_cast<std::size_t>(s.data() + s.size() - end)));
    if (!shift || value > (SIZE_MAX >> *shift)) return std::nullopt;
    return value << *shift;
}

// Files are created (or extended) to the size asked for; an existing
// device is opened as it is.
rpm::pmem::OpenOptions options_for(const fs::path& path, std::size_t size) {
    std::error_code ec;
    const auto status = fs::status(path, ec);
    rpm::pmem::OpenOptions opts;
    if (fs::is_character_file(status) || fs::is_block_file(status)) return opts;
    opts.create = true;
    opts.size = size;
    return opts;
}

void describe(const rpm::pmem::Region& region) {
    std::printf("region:      %s\n", region.path().c_str());
    std::printf("size:        %zu bytes\n", region.size());
    std::printf("kind:        %s\n", std::string(rpm::pmem::to_string(region.kind())).c_str());
    std::printf("granularity: %s\n", std::string(rpm::to_string(region.granularity())).c_str());
    std::printf("domain:      %s\n", std::string(rpm::to_string(region.domain())).c_str());
    std::printf("nd region:   %s\n",
                region.nd_region().empty() ? "(none)" : region.nd_region().c_str());
}

std::string make_record() {
    return "rpm example record: pid " + std::to_string(::getpid()) + ", time " +
           std::to_string(static_cast<long long>(std::time(nullptr)));
}

// Write the record at the start of the region and make it durable.
void write_record(const rpm::pmem::Region& region, const std::string& record) {
    std::memcpy(region.data(), record.c_str(), record.size() + 1);
    region.persist(region.data(), record.size() + 1);
}

int fail(const std::string& what) {
    std::fprintf(stderr, "rpm-example-local-persist: %s\n", what.c_str());
    return 1;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 3) return fail("usage: rpm-example-local-persist [PATH [SIZE]]");
    const fs::path path = argc > 1 ? fs::path(argv[1]) : fs::path(kDefaultPath);
    const auto size = argc > 2 ? parse_size(argv[2]) : std::optional<std::size_t>(kDefaultSize);
    if (!size)
        return fail(std::string("bad size '") + argv[2] + "' (want MiB, e.g. 64, or 512K, 1G)");

    auto region = rpm::pmem::Region::open(path, options_for(path, *size));
    if (!region) return fail("cannot open " + path.string() + ": " + region.error().message());
    describe(*region);

    const std::string record = make_record();
    if (record.size() + 1 > region->size()) return fail("region is too small for the record");
    write_record(*region, record);
    std::printf("wrote:       \"%s\" (persisted)\n", record.c_str());

    // Read it back through a fresh mapping: what the file now holds, not
    // what this mapping's cache lines hold.
    rpm::pmem::OpenOptions reopen;
    reopen.size = region->size();
    region = rpm::pmem::Region::open(path, reopen);
    if (!region) return fail("cannot reopen " + path.string() + ": " + region.error().message());
    const std::string read_back(static_cast<const char*>(region->data()), record.size());
    if (read_back != record) return fail("read back \"" + read_back + "\", expected the record");
    std::printf("read back:   \"%s\" (ok)\n", read_back.c_str());
    return 0;
}
