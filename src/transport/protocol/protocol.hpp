// rpm's wire protocol: frames and message bodies, shared by both transports.
//
// TCP carries every operation as a frame. RDMA carries only the control
// messages (handshake, region grants, send_flush requests, responses,
// application messages) as frames in send/receive buffers; its data moves
// one-sided. docs/protocol.md is the normative description; this header is
// its code. All integers are little-endian. Every decoder checks every
// length against the bytes it was given and returns errc::invalid_argument
// (detail: what was malformed) rather than reading past the end.
#pragma once

#include <rpm/flush.hpp>
#include <rpm/persistence.hpp>
#include <rpm/result.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rpm::proto {

inline constexpr std::uint32_t kMagic = 0x314D5052;  // "RPM1" in little-endian byte order
inline constexpr std::uint16_t kVersion = 1;          // the only version today
inline constexpr std::size_t kHeaderSize = 16;
inline constexpr std::size_t kMacSize = 32;           // HMAC-SHA256
inline constexpr std::size_t kNonceSize = 32;
inline constexpr std::size_t kMaxName = 255;          // region names, client ids
inline constexpr std::uint32_t kDefaultMaxPayload = (1u << 20) + 4096;  // 1 MiB of data + slack
inline constexpr std::size_t kMaxMessage = 1024;      // Response.message bytes (encode truncates)

enum class Type : std::uint8_t {
    hello = 1,       ///< server -> client: versions, challenge
    auth = 2,        ///< client -> server: chosen version, id, nonce, MAC
    welcome = 3,     ///< server -> client: server proof, platform profile
    open_region = 4, ///< client -> server: name, forced method
    region = 5,      ///< server -> client: the grant
    write = 6,       ///< client -> server (TCP): region, offset, data
    read = 7,        ///< client -> server (TCP): region, offset, length
    atomic_write = 8,///< client -> server (TCP): region, offset, 8-byte value
    flush = 9,       ///< client -> server: region, ranges (the send of send_flush)
    message = 10,    ///< either way: application payload (send / recv)
    response = 11,   ///< server -> client: status for request_id, optional data
    goodbye = 12,    ///< either way: orderly close
};

/// "hello", "auth", ... (for logs and error details); "invalid" otherwise.
std::string_view type_name(Type t) noexcept;

/// The 16-byte frame header: magic u32, type u8, flags u8, reserved u16 (0),
/// request_id u32, payload length u32.
struct Header {
    Type type = Type::response;
    std::uint8_t flags = 0;
    std::uint32_t request_id = 0;
    std::uint32_t length = 0;  ///< payload bytes after the header
};

/// Parse a header. ERRORS: errc::invalid_argument for a bad magic, an
/// unknown type, a non-zero reserved field; errc::bad_size when length >
/// max_payload (the frame is oversized; the connection must be dropped).
Result<Header> parse_header(std::span<const std::byte> bytes, std::uint32_t max_payload);
void write_header(std::span<std::byte, kHeaderSize> out, const Header& h) noexcept;

struct Range {
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
};

struct Hello {
    std::uint16_t min_version = kVersion;
    std::uint16_t max_version = kVersion;
    std::array<std::uint8_t, kNonceSize> challenge{};
};

struct Auth {
    std::uint16_t version = kVersion;
    std::string client_id;
    std::array<std::uint8_t, kNonceSize> client_nonce{};
    std::array<std::uint8_t, kMacSize> mac{};  ///< auth_mac(secret, challenge, client_id, client_nonce)
};

struct Welcome {
    std::array<std::uint8_t, kMacSize> server_proof{};  ///< server_mac(secret, client_nonce, challenge)
    std::string profile_json;                           ///< the server's platform profile
};

struct OpenRegion {
    std::string name;
    std::optional<flush::Method> force_method;
    bool unsafe = false;  ///< accept a forced method that is unsafe for the region
};

struct RegionGrant {
    std::uint32_t id = 0;
    std::uint64_t size = 0;
    flush::Method method = flush::Method::send_flush;
    flush::ServerPersist server_persist = flush::ServerPersist::cache_flush_sfence_deep_flush;
    PersistenceDomain domain = PersistenceDomain::unknown;
    bool forced = false;  ///< the method is the client's forced one, not the decision's
    std::string reason;
    std::vector<std::uint8_t> rdma_mr;        ///< rpma_mr descriptor (RDMA only, else empty)
    std::vector<std::uint8_t> rdma_peer_cfg;  ///< rpma_peer_cfg descriptor (RDMA only)
};

struct Write {
    std::uint32_t region = 0;
    std::uint64_t offset = 0;
    std::span<const std::byte> data;  ///< points into the decoded buffer
};

struct Read {
    std::uint32_t region = 0;
    std::uint64_t offset = 0;
    std::uint32_t length = 0;
};

struct AtomicWrite {
    std::uint32_t region = 0;
    std::uint64_t offset = 0;
    std::uint64_t value = 0;
};

struct Flush {
    std::uint32_t region = 0;
    std::vector<Range> ranges;  ///< at most kMaxRanges
};
inline constexpr std::size_t kMaxRanges = 256;

/// status 0 = success; otherwise an rpm::errc value, message says why.
struct Response {
    std::uint32_t status = 0;
    std::string message;
    std::span<const std::byte> data;  ///< READ data; points into the decoded buffer
};

// Encoders append one whole frame (header + body) to `out`. They cannot
// fail: Response.message is cut at kMaxMessage; a name over kMaxName or
// more than kMaxRanges ranges is sent as given, for the peer to refuse
// (never silently shortened).
void encode(std::vector<std::byte>& out, std::uint32_t request_id, const Hello& m);
void encode(std::vector<std::byte>& out, std::uint32_t request_id, const Auth& m);
void encode(std::vector<std::byte>& out, std::uint32_t request_id, const Welcome& m);
void encode(std::vector<std::byte>& out, std::uint32_t request_id, const OpenRegion& m);
void encode(std::vector<std::byte>& out, std::uint32_t request_id, const RegionGrant& m);
void encode(std::vector<std::byte>& out, std::uint32_t request_id, const Write& m);
void encode(std::vector<std::byte>& out, std::uint32_t request_id, const Read& m);
void encode(std::vector<std::byte>& out, std::uint32_t request_id, const AtomicWrite& m);
void encode(std::vector<std::byte>& out, std::uint32_t request_id, const Flush& m);
void encode(std::vector<std::byte>& out, std::uint32_t request_id, const Response& m);
void encode_message(std::vector<std::byte>& out, std::uint32_t request_id,
                    std::span<const std::byte> payload);
void encode_goodbye(std::vector<std::byte>& out, std::uint32_t request_id);

// Decoders take the payload (the bytes after the header) of a frame whose
// header said that type. ERRORS: errc::invalid_argument with a detail.
Result<Hello> decode_hello(std::span<const std::byte> body);
Result<Auth> decode_auth(std::span<const std::byte> body);
Result<Welcome> decode_welcome(std::span<const std::byte> body);
Result<OpenRegion> decode_open_region(std::span<const std::byte> body);
Result<RegionGrant> decode_region(std::span<const std::byte> body);
Result<Write> decode_write(std::span<const std::byte> body);
Result<Read> decode_read(std::span<const std::byte> body);
Result<AtomicWrite> decode_atomic_write(std::span<const std::byte> body);
Result<Flush> decode_flush(std::span<const std::byte> body);
Result<Response> decode_response(std::span<const std::byte> body);

/// A byte stream cut into frames: feed bytes as they arrive, take whole
/// frames out. Oversized or malformed headers poison it (error() set).
class FrameReader {
public:
    explicit FrameReader(std::uint32_t max_payload = kDefaultMaxPayload);
    void feed(std::span<const std::byte> bytes);
    /// The next whole frame, if one is buffered: its header and payload
    /// (valid until the next feed/next call).
    std::optional<std::pair<Header, std::span<const std::byte>>> next();
    [[nodiscard]] const std::optional<Error>& error() const noexcept { return error_; }
    [[nodiscard]] std::size_t buffered() const noexcept { return buf_.size() - pos_; }
    /// Bytes held, including frames already taken out: feed() drops those,
    /// so for a caller that drains next() after each feed this stays within
    /// one partial frame plus the latest feed.
    [[nodiscard]] std::size_t held() const noexcept { return buf_.size(); }

private:
    std::uint32_t max_payload_;
    std::vector<std::byte> buf_;
    std::size_t pos_ = 0;
    std::optional<Error> error_;
};

// Authentication (HMAC-SHA256, OpenSSL). The secret never crosses the wire:
// the client proves it knows the secret for client_id by a MAC over the
// server's fresh challenge; the server proves the same over the client's
// nonce, so a client never trusts an impostor's acknowledgements.
std::array<std::uint8_t, kMacSize> auth_mac(std::string_view secret,
                                            std::span<const std::uint8_t, kNonceSize> challenge,
                                            std::string_view client_id,
                                            std::span<const std::uint8_t, kNonceSize> client_nonce);
std::array<std::uint8_t, kMacSize> server_mac(std::string_view secret,
                                              std::span<const std::uint8_t, kNonceSize> client_nonce,
                                              std::span<const std::uint8_t, kNonceSize> challenge);
/// Constant-time comparison.
bool mac_equal(std::span<const std::uint8_t, kMacSize> a, std::span<const std::uint8_t, kMacSize> b) noexcept;
/// Cryptographically random nonce (OpenSSL RAND_bytes).
std::array<std::uint8_t, kNonceSize> random_nonce();

} // namespace rpm::proto
