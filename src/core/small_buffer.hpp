// A run of N elements on the stack, more on the heap.
//
// Why: a request's ranges or slices are one or two almost always (a record
// and its commit word); allocating a vector for them on every persist was
// a measurable share of a persist's instructions (docs/benchmarks-history.md,
// "Fewer allocations and completions per send_flush persist").
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <vector>

namespace rpm {

/// `n` value-initialised elements: in the object when n <= N, else on the heap.
template <class T, std::size_t N>
class SmallBuffer {
public:
    explicit SmallBuffer(std::size_t n) {
        if (n <= N) {
            all_ = std::span<T>(small_).first(n);
        } else {
            large_.resize(n);
            all_ = large_;
        }
    }
    SmallBuffer(const SmallBuffer&) = delete;
    SmallBuffer& operator=(const SmallBuffer&) = delete;
    [[nodiscard]] std::span<T> all() noexcept { return all_; }

private:
    std::array<T, N> small_{};
    std::vector<T> large_;
    std::span<T> all_;
};

} // namespace rpm
