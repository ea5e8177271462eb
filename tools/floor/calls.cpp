// Distinct functions from one template: step<I> for I in [0, kMaxCalls).
#include "calls.hpp"

#include <array>
#include <chrono>
#include <utility>

namespace rpm::floor {
namespace {

using Step = std::uint64_t (*)(std::uint64_t) noexcept;

template <unsigned I>
[[gnu::noinline]] std::uint64_t step(std::uint64_t x) noexcept {
    x = x * (2 * I + 3) + I;
    if (x & (1u << (I % 7))) x ^= I * 7919u;
    asm volatile("" : "+r"(x));  // keeps each function its own code
    return x;
}

template <unsigned... I>
constexpr std::array<Step, sizeof...(I)> table(std::integer_sequence<unsigned, I...>) noexcept {
    return {&step<I>...};
}

constexpr auto kSteps = table(std::make_integer_sequence<unsigned, kMaxCalls>{});

} // namespace

std::uint64_t run_calls(unsigned n, std::uint64_t x) noexcept {
    for (unsigned i = 0; i < n && i < kMaxCalls; ++i) x = kSteps[i](x);
    return x;
}

double calls_alone_ns(unsigned n) {
    constexpr int kRuns = 20000;
    std::uint64_t x = 1;
    const auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < kRuns; ++k) x = run_calls(n, x);
    const auto t = std::chrono::steady_clock::now() - t0;
    asm volatile("" : : "r"(x));
    return std::chrono::duration<double, std::nano>(t).count() / kRuns;
}

} // namespace rpm::floor
