#include "pm_model_oracle.hpp"


namespace rpm::test {
namespace {
std::size_t bit(std::byte b) noexcept { return std::to_integer<std::size_t>(b); }
} // namespace

void DurabilityOracle::reset(std::span<const std::byte> initial) {
    initial_.assign(initial.begin(), initial.end());
    newest_ = initial_;
    if (acceptable_.size() != initial_.size()) {
        acceptable_.assign(initial_.size(), Values{});
        epoch_.assign(initial_.size(), 0);
        run_ = 0;
    }
    ++run_;
}

DurabilityOracle::Values& DurabilityOracle::values(std::size_t at) {
    if (epoch_[at] != run_) {
        epoch_[at] = run_;
        acceptable_[at].reset();
        acceptable_[at].set(bit(initial_[at]));
    }
    return acceptable_[at];
}

void DurabilityOracle::wrote(std::uint64_t offset, std::span<const std::byte> data) {
    for (std::size_t i = 0; i < data.size(); ++i) {
        const std::size_t at = offset + i;
        values(at).set(bit(data[i]));
        newest_[at] = data[i];
    }
}

void DurabilityOracle::acknowledged(std::span<const server::Range> ranges) {
    for (const auto& r : ranges) {
        for (std::size_t at = r.offset; at < r.offset + r.length; ++at) {
            Values& v = values(at);
            v.reset();
            v.set(bit(newest_[at]));
        }
    }
}

std::uint64_t DurabilityOracle::lost_bytes(std::span<const std::byte> image) const {
    std::uint64_t lost = 0;
    for (std::size_t at = 0; at < image.size() && at < initial_.size(); ++at) {
        const bool ok = epoch_[at] == run_ ? acceptable_[at].test(bit(image[at])) : image[at] == initial_[at];
        if (!ok) ++lost;
    }
    return lost;
}

} // namespace rpm::test
