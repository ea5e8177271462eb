// rpm-floor --calls N: N calls of N distinct small functions per operation,
// made before its post, so that the floor also shows what a library's own
// code costs there (docs/benchmarks-history.md, "A call costs more than its
// instructions in the lab"). Under QEMU's emulation a return is an indirect
// jump, looked up by address, and a function's code is a translation of its
// own: the cost of a library above the verbs layer goes with its calls and
// its code footprint more than with its instruction count. N trivial
// functions (about ten instructions each) give that cost a scale: rpm's
// synchronous read makes about 85 calls, the fake's included (callgrind, on
// the fake fabric).
#pragma once

#include <cstdint>

namespace rpm::floor {

/// The most calls --calls takes.
inline constexpr unsigned kMaxCalls = 512;

/// Make `n` (at most kMaxCalls) calls, each of a different function,
/// through a table. RETURN VALUE: `x` mixed by each, so none is optimised
/// away.
std::uint64_t run_calls(unsigned n, std::uint64_t x) noexcept;

/// Nanoseconds per run_calls(n) with nothing else around it (the mean of
/// 20,000, the code hot): the calls' own cost, against which the floor's
/// added latency shows how the rest of the operation slowed too.
double calls_alone_ns(unsigned n);

} // namespace rpm::floor
