// The verbs layer's test fixture: an Api over the fake rdma-core, a client
// connection built the way the transport builds one, and helpers to check
// a posted work request field by field.
#pragma once

#include "fake_verbs.hpp"
#include "transport/rdma/verbs/objects.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <vector>

namespace rpm::rdma::verbs::test {

inline const void* tag(std::uintptr_t n) noexcept { return reinterpret_cast<const void*>(n); }

inline constexpr unsigned kSig = IBV_SEND_SIGNALED;
inline constexpr unsigned kInline = IBV_SEND_INLINE;
inline constexpr unsigned kFence = IBV_SEND_FENCE;
inline constexpr std::uint64_t kAtomicWriteCap = 1ULL << 40;  // IB_UVERBS_DEVICE_ATOMIC_WRITE

/// The peer's region the tests write to, as its grant's descriptor names
/// it: a made-up address (8-aligned) and key, nothing of this process.
inline constexpr std::uint64_t kRemoteAddr = 0x7f1200100000;
inline constexpr std::uint64_t kRemoteSize = 1 << 20;
inline constexpr std::uint32_t kRemoteRkey = 0x00beef01;
inline constexpr int kRemoteUsage = kUsageWriteDst | kUsageReadSrc | kUsageFlushVisibility | kUsageFlushPersistent;
inline constexpr int kLocalUsage = kUsageWriteSrc | kUsageReadDst | kUsageSend | kUsageRecv;

/// A remote registration's descriptor, encoded independently of the layer:
/// address (8 bytes), size (8), rkey (4), little-endian, then the usage byte.
std::vector<std::uint8_t> descriptor(std::uint64_t addr, std::uint64_t size, std::uint32_t rkey, int usage);

/// What a posted send work request must hold, every field.
struct WantWr {
    std::uint64_t wr_id = 0;
    ibv_wr_opcode opcode{};
    unsigned send_flags = 0;
    int num_sge = 1;
    ibv_sge sge{};  ///< checked when num_sge == 1
    std::uint64_t remote_addr = 0;
    std::uint32_t rkey = 0;
};
void expect_wr(const fake::SendWr& got, const WantWr& want);
/// Exactly one receive posted, alone in its chain, with `wr_id` and one
/// scatter entry `sge` (every field). Fatal failures: ASSERT_NO_FATAL_FAILURE.
void expect_one_recv(std::uint64_t wr_id, const ibv_sge& sge);

/// Exactly `doorbells` post_send calls, the last one carrying `len` requests.
::testing::AssertionResult posted(std::size_t doorbells, std::size_t len);

struct Options {
    std::uint64_t cap_flags = 0;  ///< the device's device_cap_flags_ex
    long granted_inline = 64;     ///< what the queue pair is granted
    bool direct = true;           ///< the remote peer cfg's direct write to PMem (applied)
    bool apply_peer_cfg = true;
    int remote_usage = kRemoteUsage;
};

class VerbsTest : public ::testing::Test {
protected:
    static constexpr std::size_t kBuf = 4096;

    void SetUp() override;
    /// close(), then: nothing the fake would refuse was done.
    void TearDown() override;

    /// A client connected as the transport connects one: device context,
    /// peer, a local registration of buf, the remote region from its
    /// descriptor, a connection request, connect, the remote peer cfg.
    void open(const Options& o = {});
    /// Undo open() (whatever part of it is left), checking each return.
    void close();

    /// The fake's registration of buf, and the connection's flush buffer.
    const ibv_mr& local() const;
    fake::Registration flush_buffer() const;
    /// buf's address plus off, as an sge or remote address holds it.
    std::uint64_t at(std::size_t off) const { return reinterpret_cast<std::uintptr_t>(buf.data()) + off; }
    ibv_sge local_sge(std::size_t off, std::uint32_t len) const { return {at(off), len, local().lkey}; }
    int conn_fd() const;
    int cq_fd() const;

    Api api = make_api<&fake_verbs>();
    ibv_context* ctx = nullptr;
    Peer* peer = nullptr;
    ConnCfg* cfg = nullptr;
    LocalMr* mr = nullptr;
    RemoteMr* remote = nullptr;
    Conn* conn = nullptr;
    alignas(64) std::array<char, kBuf> buf{};
};

} // namespace rpm::rdma::verbs::test
