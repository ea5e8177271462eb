// The bound: every connection draws from one free list of the whole
// budget, no per-connection cache, no buckets. No scheme that keeps each
// I/O's MR for its whole latency can carry more connections than this;
// the pool's count against it is what its caches cost.
#include "sim.hpp"

#include <vector>

namespace rpmbench {
namespace {

class SharedScheme final : public MrScheme {
public:
    explicit SharedScheme(const MrpModel& m) : budget_(m.budget) {
        free_.reserve(budget_);
        for (std::uint32_t i = budget_; i > 0; --i) free_.push_back(i);  // ids from 1: 0 is "none"
    }

    std::string_view name() const noexcept override { return "shared"; }
    bool admit() override { return true; }

    std::uintptr_t get(std::uint32_t) noexcept override {
        if (free_.empty()) return 0;
        const auto id = free_.back();
        free_.pop_back();
        return id;
    }

    void put(std::uint32_t, std::uintptr_t mr) noexcept override { free_.push_back(static_cast<std::uint32_t>(mr)); }
    std::uint32_t registered() const noexcept override { return budget_; }

private:
    std::uint32_t budget_;
    std::vector<std::uint32_t> free_;
};

} // namespace

std::unique_ptr<MrScheme> make_shared_scheme(const MrpModel& m) { return std::make_unique<SharedScheme>(m); }

} // namespace rpmbench
