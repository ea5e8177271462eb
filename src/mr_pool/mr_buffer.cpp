// MrBuffer: a view of one pool entry.
#include "mr_pool/mr_entry.hpp"

namespace rpm {

std::byte* MrBuffer::data() const noexcept { return entry_->mem.data(); }
std::size_t MrBuffer::size() const noexcept { return entry_->mem.size(); }
void* MrBuffer::handle() const noexcept { return entry_->handle; }
std::uint32_t MrBuffer::id() const noexcept { return entry_->id; }

}  // namespace rpm
