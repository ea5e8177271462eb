// The static scheme: each connection owns `per_connection` MRs, registered
// when it is admitted, on a private free list no other connection can
// draw from. Admission needs that many left in the budget (how iSER
// reserves 113 per session).
#include "sim.hpp"

#include <vector>

namespace rpmbench {
namespace {

class StaticScheme final : public MrScheme {
public:
    explicit StaticScheme(const MrpModel& m) : budget_(m.budget), share_(m.per_connection) {}

    std::string_view name() const noexcept override { return "static"; }

    bool admit() override {
        if (registered_ + share_ > budget_) return false;
        std::vector<std::uint32_t> list(share_);
        for (std::uint32_t i = 0; i < share_; ++i) list[i] = registered_ + i + 1;  // ids from 1: 0 is "none"
        free_.push_back(std::move(list));
        registered_ += share_;
        return true;
    }

    std::uintptr_t get(std::uint32_t c) noexcept override {
        auto& list = free_[c];
        if (list.empty()) return 0;
        const auto id = list.back();
        list.pop_back();
        return id;
    }

    void put(std::uint32_t c, std::uintptr_t mr) noexcept override {
        free_[c].push_back(static_cast<std::uint32_t>(mr));
    }

    std::uint32_t registered() const noexcept override { return registered_; }

private:
    std::uint32_t budget_, share_;
    std::uint32_t registered_ = 0;
    std::vector<std::vector<std::uint32_t>> free_;
};

} // namespace

std::unique_ptr<MrScheme> make_static_scheme(const MrpModel& m) { return std::make_unique<StaticScheme>(m); }

} // namespace rpmbench
