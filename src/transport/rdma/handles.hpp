// RAII owners for the Api's objects. Each remembers the Api table it was
// created through, so a fake-made object is never freed by the real library.
#pragma once

#include "transport/rdma/api.hpp"

#include <utility>

namespace rpm::rdma {

/// Owns one Api object and frees it with the Api member `Free`
/// (peer_delete, mr_dereg, ...), which takes T**.
template <class T, auto Free>
class Owned {
public:
    Owned() noexcept = default;
    explicit Owned(const Api& api) noexcept : api_(&api) {}
    Owned(const Owned&) = delete;
    Owned& operator=(const Owned&) = delete;
    Owned(Owned&& o) noexcept : api_(o.api_), p_(std::exchange(o.p_, nullptr)) {}
    Owned& operator=(Owned&& o) noexcept {
        if (this != &o) {
            reset();
            api_ = o.api_;
            p_ = std::exchange(o.p_, nullptr);
        }
        return *this;
    }
    ~Owned() { reset(); }

    [[nodiscard]] T* get() const noexcept { return p_; }
    explicit operator bool() const noexcept { return p_ != nullptr; }
    /// Where an Api constructor stores the new object (frees any old one).
    T** out() noexcept {
        reset();
        return &p_;
    }
    /// The pointer's address for a call that consumes the object and sets
    /// it to NULL itself (conn_req_connect).
    T** consume() noexcept { return &p_; }
    void reset() noexcept {
        // The free functions' failures (ibv_dereg_mr, ...) leave nothing a
        // destructor could do better; the verbs layer recorded them.
        if (p_ != nullptr && api_ != nullptr) (void)(api_->*Free)(&p_);
        p_ = nullptr;
    }

private:
    const Api* api_ = nullptr;
    T* p_ = nullptr;
};

using PeerHandle = Owned<Peer, &Api::peer_delete>;
using PeerCfgHandle = Owned<PeerCfg, &Api::peer_cfg_delete>;
using MrHandle = Owned<LocalMr, &Api::mr_dereg>;
using RemoteMrHandle = Owned<RemoteMr, &Api::mr_remote_delete>;
using ConnCfgHandle = Owned<ConnCfg, &Api::conn_cfg_delete>;
using ConnReqHandle = Owned<ConnReq, &Api::conn_req_delete>;
using EpHandle = Owned<Ep, &Api::ep_shutdown>;

/// Owns a connection: disconnects it (if nobody did) before deleting it,
/// since only closed connections are deleted cleanly.
class ConnHandle {
public:
    ConnHandle() noexcept = default;
    explicit ConnHandle(const Api& api) noexcept : api_(&api) {}
    ConnHandle(const ConnHandle&) = delete;
    ConnHandle& operator=(const ConnHandle&) = delete;
    ~ConnHandle() { reset(); }

    [[nodiscard]] Conn* get() const noexcept { return p_; }
    explicit operator bool() const noexcept { return p_ != nullptr; }
    Conn** out() noexcept {
        reset();
        return &p_;
    }
    /// Initiate the disconnection once: the queue pair goes to the error
    /// state, so every posted work request completes (flushed).
    void disconnect() noexcept {
        if (p_ == nullptr || disconnected_) return;
        disconnected_ = true;
        (void)api_->conn_disconnect(p_);
    }
    [[nodiscard]] bool disconnected() const noexcept { return disconnected_; }
    void reset() noexcept {
        if (p_ == nullptr) return;
        disconnect();
        (void)api_->conn_delete(&p_);
        p_ = nullptr;
        disconnected_ = false;
    }

private:
    const Api* api_ = nullptr;
    Conn* p_ = nullptr;
    bool disconnected_ = false;
};

} // namespace rpm::rdma
