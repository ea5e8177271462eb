#include "transport/rdma/message_buffer.hpp"

namespace rpm::rdma {

MrBuffer* MessageBuffer::take_entry(MrPool& pool, MrPoolUser& user) {
    if (MrBuffer* b = user.get()) return b;
    // None free now: register one more here, on the connect/accept path,
    // rather than fail. Past the budget grow() fails, but the pool's thread
    // may have just added one: look again either way.
    (void)pool.grow(1);
    return user.get();
}

Result<MessageBuffer> MessageBuffer::take(MrPool* pool, const Api& api, Peer* peer, std::size_t size,
                                          std::string_view what) {
    MessageBuffer m;
    if (pool != nullptr && size <= pool->options().buffer_size) {
        if (auto user = pool->create_user(1); user) {
            m.user_.emplace(std::move(*user));
            m.entry_ = take_entry(*pool, *m.user_);
            if (m.entry_ != nullptr) return m;
            m.user_.reset();
        }
    }
    auto own = RegisteredBuffer::create(api, peer, size, kMessageUsage, std::string(what) + ": message buffers");
    if (!own) return own.error();
    m.own_.emplace(std::move(*own));
    return m;
}

MessageBuffer::MessageBuffer(MessageBuffer&& o) noexcept
    : user_(std::move(o.user_)), entry_(std::exchange(o.entry_, nullptr)), own_(std::move(o.own_)) {
    o.user_.reset();
    o.own_.reset();
}

std::byte* MessageBuffer::data() const noexcept { return entry_ ? entry_->data() : own_->data(); }

LocalMr* MessageBuffer::mr() const noexcept {
    return entry_ ? static_cast<LocalMr*>(entry_->handle()) : own_->mr();
}

void MessageBuffer::release() noexcept {
    if (entry_ != nullptr) user_->put(std::exchange(entry_, nullptr));
    user_.reset();
    own_.reset();
}

} // namespace rpm::rdma
