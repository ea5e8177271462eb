// Test support: a memory ServedRegion that records persist calls, a Service serving
// such targets, and a harness that runs the real RDMA listener and client
// against the fake fabric.
#pragma once

#include "fake_rpma.hpp"
#include "server/service.hpp"
#include "transport/rdma/client.hpp"
#include "transport/rdma/frames.hpp"
#include "transport/rdma/server.hpp"

#include "tests/support/result.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace rpm::rdma::test {

using namespace std::chrono_literals;
using rpm::test::code_of;
using rpm::test::fails_with;
using rpm::test::ok;

/// `r` failed, and its error's detail holds `part`.
template <class T>
::testing::AssertionResult detail_has(const Result<T>& r, std::string_view part) {
    if (r.has_value()) return ::testing::AssertionFailure() << "succeeded; expected a failure saying \"" << part << "\"";
    if (r.error().detail().find(part) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "the detail \"" << r.error().detail() << "\" does not say \"" << part << "\"";
}
/// `r` failed, and its error's detail does not hold `part`.
template <class T>
::testing::AssertionResult detail_lacks(const Result<T>& r, std::string_view part) {
    if (r.has_value()) return ::testing::AssertionFailure() << "succeeded; expected a failure";
    if (r.error().detail().find(part) == std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "the detail \"" << r.error().detail() << "\" says \"" << part << "\"";
}

/// A region in plain memory that records the server's persist steps.
class MemTarget final : public server::ServedRegion {
public:
    explicit MemTarget(std::size_t size) : mem_(size) {}
    [[nodiscard]] std::uint64_t size() const noexcept override { return mem_.size(); }
    void store(std::uint64_t off, std::span<const std::byte> d) noexcept override {
        std::memcpy(mem_.data() + off, d.data(), d.size());
    }
    void load(std::uint64_t off, std::span<std::byte> out) const noexcept override {
        std::memcpy(out.data(), mem_.data() + off, out.size());
    }
    void store8(std::uint64_t off, std::uint64_t v) noexcept override { std::memcpy(mem_.data() + off, &v, 8); }
    Result<void> persist(flush::ServerPersist step, std::span<const server::Range> ranges) noexcept override {
        {
            std::unique_lock gate(gate_mu_);
            gate_cv_.wait(gate, [this] { return !held_; });
        }
        if (fail_persist_) return Error(errc::io_error, "persist failed (injected)");
        std::lock_guard lock(mu_);
        persists_.push_back({step, {ranges.begin(), ranges.end()}});
        return {};
    }
    [[nodiscard]] std::byte* base() noexcept override { return registrable_ ? mem_.data() : nullptr; }

    struct Persist {
        flush::ServerPersist step;
        std::vector<server::Range> ranges;
    };
    std::vector<Persist> persists() const {
        std::lock_guard lock(mu_);
        return persists_;
    }
    std::vector<std::byte>& bytes() noexcept { return mem_; }
    /// While held, persist() waits: the server has not answered yet.
    void hold_persists(bool on) {
        {
            std::lock_guard gate(gate_mu_);
            held_ = on;
        }
        gate_cv_.notify_all();
    }
    bool registrable_ = true;
    /// While set, every persist step fails (the server answers with an error).
    std::atomic<bool> fail_persist_{false};

private:
    std::mutex gate_mu_;
    std::condition_variable gate_cv_;
    bool held_ = false;
    std::vector<std::byte> mem_;
    mutable std::mutex mu_;
    std::vector<Persist> persists_;
};

struct RegionSpec {
    std::string name;
    PersistenceDomain domain;
    std::size_t size = 1 << 20;
    bool registrable = true;
};

/// A region whose platform says `domain` (DDIO comes from the RNIC).
std::unique_ptr<server::Region> make_region(const RegionSpec& spec, MemTarget** target_out);

inline const char* kSecret = "s3cret";
inline const char* kClientId = "alice";
inline const char* kHost = "192.0.2.10";

/// Fabric + Service + listener, and clients connected to it.
struct Harness {
    /// `platform` may change what the server detected and what its
    /// transports can do (a fake RNIC with native FLUSH, in native_flush_test).
    using PlatformTune = std::function<void(platform::Profile&, server::TransportCaps&)>;
    explicit Harness(std::vector<RegionSpec> specs, std::filesystem::path sysfs_root = "/",
                     rpm::Overrides ov = {}, const std::function<void(ServerOptions&)>& tune = {},
                     const PlatformTune& platform = {});
    ~Harness();
    /// Start listening on kHost (port 0 = pick).
    void listen(std::uint16_t port = 0, ServerLimits limits = {});
    Result<std::unique_ptr<client::Transport>> connect(ClientOptions opts = {}, ClientLimits limits = {});
    std::unique_ptr<client::Transport> connect_ok(ClientLimits limits = {});

    fake::Fabric fabric;
    std::map<std::string, MemTarget*> targets;
    std::unique_ptr<server::Service> service;
    std::unique_ptr<server::Listener> listener;
    std::vector<std::vector<std::byte>> messages;  // what on_message saw
    std::mutex mu;
};

/// A harness serving one region, listening, with one client connected
/// (`limits`) and the region opened: the common start of a client test.
struct OneRegion {
    explicit OneRegion(RegionSpec spec, ClientLimits limits = {});
    Harness h;
    std::unique_ptr<client::Transport> t;
    proto::RegionGrant g;
};

/// Wait for one Done callback. get() keeps the error_code form (truthy on
/// failure, {} for success) that most tests check; result() is the whole
/// Result, for checks of the failure's detail.
struct Waiter {
    std::shared_ptr<std::promise<Result<void>>> p = std::make_shared<std::promise<Result<void>>>();
    std::future<Result<void>> f = p->get_future();
    client::Done done() {
        return [p = p](Result<void> r) { p->set_value(std::move(r)); };
    }
    /// RETURN VALUE: what `done` got, or std::errc::timed_out when it has
    /// not run within `t`. Callable more than once.
    Result<void> result(std::chrono::milliseconds t = 5s) {
        if (!got_) {
            if (f.wait_for(t) != std::future_status::ready)
                return Error(std::make_error_code(std::errc::timed_out), "Waiter: the callback did not run");
            r_ = f.get();
            got_ = true;
        }
        return r_;
    }
    /// RETURN VALUE: code_of(result(t)): {} for success.
    std::error_code get(std::chrono::milliseconds t = 5s) { return rpm::test::code_of(result(t)); }

private:
    Result<void> r_;
    bool got_ = false;
};

/// Both ends in one completion mode (the test's parameter): a
/// read_after_write region "pm" (g_, remote_) and a send_flush region "adr"
/// (adr_), one client connected with both opened. tune() adds to the
/// server's options.
class ModeTest : public ::testing::TestWithParam<CompletionMode> {
protected:
    void SetUp() override;
    virtual void tune(ServerOptions&) {}

    std::unique_ptr<Harness> h_;
    std::unique_ptr<client::Transport> t_;
    proto::RegionGrant g_;
    proto::RegionGrant adr_;
    MemTarget* remote_ = nullptr;
};

/// Keeps a connection's one direct operation (client_direct.cpp) on the
/// wire, so that every read or write after it goes through the op queue:
/// an 8-byte read at offset 0 posted with the client's completions held.
/// release() lets completions flow again (queued ones too) and returns
/// the read's status.
class DirectHeld {
public:
    DirectHeld(Harness& h, client::Transport& t, const proto::RegionGrant& g);
    ~DirectHeld() { (void)release(); }
    DirectHeld(const DirectHeld&) = delete;
    DirectHeld& operator=(const DirectHeld&) = delete;
    std::error_code release();

private:
    Harness& h_;
    std::vector<std::byte> out_ = std::vector<std::byte>(8);
    Waiter w_;
    bool released_ = false;
};

/// The wr_id a direct operation is posted with.
inline const void* direct_ctx() { return reinterpret_cast<const void*>(kDirectTag); }

/// The client connections' pools on the fake device (null while none is open).
std::shared_ptr<DevicePools> client_pools(const Harness& h);
/// The registrations made with `peer` for `usage`, in order.
std::vector<fake::MrRegCall> regs_with(const Harness& h, const Peer* peer, int usage);
/// `mr` is one of the registrations of the client device's bounce pool.
bool is_bounce_entry(const Harness& h, const LocalMr* mr);
/// How often `call` ("rpma_mr_dereg", ...) was made.
std::size_t count_calls(const Harness& h, std::string_view call);

/// Wait until `pred` holds (polling), up to `t`.
bool eventually(const std::function<bool()>& pred, std::chrono::milliseconds t = 5s);

std::vector<std::byte> bytes_of(std::string_view s);

/// Open `name` with the server's decision; a failure fails the test (and
/// returns an empty grant).
proto::RegionGrant open(client::Transport& t, const std::string& name);

} // namespace rpm::rdma::test
