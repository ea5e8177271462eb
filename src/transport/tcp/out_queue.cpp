#include "transport/tcp/out_queue.hpp"

namespace rpm::tcp {
namespace {
// An arena grown past this by one large answer is given back once drained,
// so an idle connection does not keep a read's 1 MiB.
constexpr std::size_t kKeepArena = 256 * 1024;
} // namespace

void OutQueue::commit() {
    const std::size_t n = arena_.size() - committed_;
    if (n == 0) return;
    // Arena bytes right after arena bytes extend the same piece: one iovec.
    if (!empty() && pieces_.back().ptr == nullptr && pieces_.back().offset + pieces_.back().length == committed_)
        pieces_.back().length += n;
    else
        pieces_.push_back({nullptr, committed_, n});
    committed_ = arena_.size();
    bytes_ += n;
}

void OutQueue::borrow(std::span<const std::byte> data) {
    if (data.empty()) return;
    pieces_.push_back({data.data(), 0, data.size()});
    bytes_ += data.size();
}

std::span<const iovec> OutQueue::iovecs() {
    std::size_t k = 0;
    for (std::size_t i = head_; i < pieces_.size() && k < iov_.size(); ++i, ++k) {
        const Piece& p = pieces_[i];
        const std::byte* base = p.ptr ? p.ptr : arena_.data() + p.offset;
        iov_[k].iov_base = const_cast<std::byte*>(base);
        iov_[k].iov_len = p.length;
    }
    return std::span<const iovec>(iov_.data(), k);
}

void OutQueue::consume(std::size_t n) {
    bytes_ -= n;
    while (n > 0 && head_ < pieces_.size()) {
        Piece& p = pieces_[head_];
        const std::size_t take = n < p.length ? n : p.length;
        if (p.ptr) p.ptr += take;
        else p.offset += take;
        p.length -= take;
        n -= take;
        if (p.length == 0) ++head_;
    }
    reset_if_drained();
}

void OutQueue::reset_if_drained() noexcept {
    if (!empty() || committed_ != arena_.size()) return;
    pieces_.clear();
    head_ = 0;
    arena_.clear();
    committed_ = 0;
    if (arena_.capacity() > kKeepArena) arena_.shrink_to_fit();
}

void OutQueue::clear() noexcept {
    pieces_.clear();
    head_ = 0;
    bytes_ = 0;
    arena_.clear();
    committed_ = 0;
}

} // namespace rpm::tcp
