// A small deterministic RNG for the persistence model and its crash test.
//
// std::uniform_int_distribution is implementation-defined, so a seed would
// give different crashes under libstdc++ and libc++; the negative controls
// promise a fixed loss count per seed, which needs the same stream
// everywhere. SplitMix64 is tiny, fast and good enough for simulation.
#pragma once

#include <cstdint>

namespace rpm::test {

class ModelRng {
public:
    explicit ModelRng(std::uint64_t seed) noexcept : state_(seed) {}

    std::uint64_t next() noexcept {
        std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }

    /// Uniform in [0, n) for n > 0 (the modulo bias is irrelevant here).
    std::uint64_t below(std::uint64_t n) noexcept { return next() % n; }

    /// Uniform in [lo, hi].
    std::uint64_t between(std::uint64_t lo, std::uint64_t hi) noexcept { return lo + below(hi - lo + 1); }

    /// True with probability percent/100.
    bool percent(unsigned percent) noexcept { return below(100) < percent; }

    bool coin() noexcept { return (next() >> 63) != 0; }

    /// An independent stream derived from this one (for per-run seeds).
    std::uint64_t fork() noexcept { return next() ^ 0xD1B54A32D192ED03ull; }

private:
    std::uint64_t state_;
};

} // namespace rpm::test
