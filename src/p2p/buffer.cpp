// Buffer: memory from the P2P manager, given back on destruction.
#include "p2p/manager_state.hpp"

namespace rpm::p2p {
namespace {

const std::string& empty() noexcept {
    static const std::string s;
    return s;
}

} // namespace

Buffer::Buffer(std::unique_ptr<State> s) noexcept : s_(std::move(s)) {}
Buffer::Buffer(Buffer&&) noexcept = default;

Buffer& Buffer::operator=(Buffer&& o) noexcept {
    if (this != &o) {
        Buffer old(std::move(*this));  // frees what this held, after the move
        s_ = std::move(o.s_);
    }
    return *this;
}

// The manager's state outlives the release: the last buffer of a dropped manager
// unmaps the provider's BAR only after its own memory went back.
Buffer::~Buffer() {
    if (!s_) return;
    const auto state = s_->manager;
    if (state) state->release(*s_);
    s_.reset();
}

std::byte* Buffer::data() const noexcept { return s_ ? s_->data : nullptr; }
std::size_t Buffer::size() const noexcept { return s_ ? s_->size : 0; }
Source Buffer::source() const noexcept { return s_ ? s_->source : Source::host; }
const std::string& Buffer::provider() const noexcept { return s_ ? s_->provider : empty(); }
std::uint64_t Buffer::offset() const noexcept { return s_ ? s_->offset : 0; }
const std::string& Buffer::why() const noexcept { return s_ ? s_->why : empty(); }

} // namespace rpm::p2p
