// The server half of the crash test: a real rpm::server::Service serving one
// region whose ServedRegion is a PersistenceModel, and one authenticated session
// holding a grant from Service::open_region. Every server-side step of the
// simulated client goes through Service's request handlers (handle_write,
// handle_atomic_write, handle_flush, handle_read), the very code the TCP and
// RDMA listeners call; only the NIC's one-sided work bypasses the server,
// as it does on real hardware.
#pragma once

#include "persistence_model.hpp"
#include "server/service.hpp"

#include <rpm/flush.hpp>
#include <rpm/result.hpp>

#include <memory>
#include <optional>
#include <span>

namespace rpm::test {

struct ModelServerOptions {
    ModelConfig model;                      ///< domain, DDIO, size, seed of the target
    bool native_flush = false;              ///< the RNIC reports persistent FLUSH
    server::TransportKind kind = server::TransportKind::rdma;
    std::optional<flush::Method> force_method;  ///< asked for in OpenRegion, with unsafe = true
};

class ModelServer {
public:
    /// Builds the Service, authenticates a session and opens the region.
    /// ERRORS: whatever Service::authenticate or Service::open_region return.
    static Result<std::unique_ptr<ModelServer>> start(const ModelServerOptions& opts);

    Result<void> write(std::uint64_t offset, std::span<const std::byte> data);
    Result<void> atomic_write(std::uint64_t offset, std::uint64_t value);
    Result<void> flush(std::span<const server::Range> ranges);
    /// The persist request (tcp://): stores and the persist step in one handler.
    Result<void> persist(std::span<const proto::Slice> slices);
    Result<void> read(std::uint64_t offset, std::span<std::byte> out);

    /// What Service granted (method, step, reason).
    [[nodiscard]] const proto::RegionGrant& grant() const noexcept { return grant_; }
    /// Replace the session's persist step behind Service's back: only for
    /// negative controls that need a step no decision would grant.
    void override_step(flush::ServerPersist step);

    [[nodiscard]] PersistenceModel& model() noexcept { return *model_; }
    [[nodiscard]] server::Service& service() noexcept { return *service_; }
    [[nodiscard]] server::Session& session() noexcept { return session_; }

private:
    ModelServer() = default;

    std::unique_ptr<server::Service> service_;
    PersistenceModel* model_ = nullptr;  // owned by the Service's Region
    server::Session session_;
    proto::RegionGrant grant_;
};

/// Fills in what Server::start decides for a region in `domain` (mirrors
/// decide() in src/server/server.cpp, which is not callable from outside):
/// the detected domain input, the RDMA decision without a known RNIC, and
/// the step for the server's own stores.
void decide_model_region(server::Region& r, PersistenceDomain domain, std::uint64_t size);

/// An RNIC with the given DDIO state and native-flush capability.
platform::RdmaDevice model_rnic(Ddio ddio, bool native_flush);

} // namespace rpm::test
