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
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rpm::proto {

inline constexpr std::uint32_t kMagic = 0x314D5052;  // "RPM1" in little-endian byte order
// Version 2 added `persist` (write + flush in one request), version 3 the
// fencing term of `open_region` (docs/replication.md, "Fencing"). A server
// speaks only its own version: a client of another gets errc::unsupported.
inline constexpr std::uint16_t kVersion = 3;
inline constexpr std::size_t kHeaderSize = 16;
inline constexpr std::size_t kMacSize = 32;           // HMAC-SHA256
inline constexpr std::size_t kNonceSize = 32;
inline constexpr std::size_t kMaxName = 255;          // region names, client ids
// Before a client has authenticated, a server accepts only frames this
// small (an auth is under 400 bytes): an unauthenticated peer cannot make
// it buffer a large frame.
inline constexpr std::uint32_t kMaxHandshakePayload = 1024;
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
    persist = 13,    ///< client -> server (TCP): region, slices and their data; stored, then persisted
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
    /// The opener's fencing term (RegionOptions::fencing_term); 0 = none.
    /// A region that has seen one refuses opens with an older one
    /// (errc::fenced); a newer one revokes every session opened with an
    /// older one.
    std::uint64_t fencing_term = 0;
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

/// One slice of a Persist: `data` is stored at `offset`.
struct Slice {
    std::uint64_t offset = 0;
    std::span<const std::byte> data;  ///< points into the decoded buffer (or the caller's, encoding)
};

/// Writes and the region's persist step over them, answered once: what a
/// Write followed by a Flush of the same ranges does, in one round trip.
struct Persist {
    std::uint32_t region = 0;
    std::vector<Slice> slices;  ///< 1 to kMaxRanges
};
/// Bytes of a Persist body before the slices' data: region, count, and
/// (offset u64, length u32) per slice.
inline constexpr std::size_t persist_meta_size(std::size_t slices) noexcept { return 8 + 12 * slices; }

/// status 0 = success; otherwise an rpm::errc value, message says why.
struct Response {
    std::uint32_t status = 0;
    std::string message;
    std::span<const std::byte> data;  ///< READ data; points into the decoded buffer
};
/// A Response's status and data, without its message (response_view).
struct ResponseView {
    std::uint32_t status = 0;
    std::span<const std::byte> data;
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
/// A Flush frame from the ranges as they are (no Flush to build first).
void encode_flush(std::vector<std::byte>& out, std::uint32_t request_id, std::uint32_t region,
                  std::span<const Range> ranges);
void encode(std::vector<std::byte>& out, std::uint32_t request_id, const Response& m);
void encode(std::vector<std::byte>& out, std::uint32_t request_id, const Persist& m);
void encode_message(std::vector<std::byte>& out, std::uint32_t request_id,
                    std::span<const std::byte> payload);
// The head of a Write or a Persist frame: everything but the data, with the
// header's length counting the data. The sender sends the data from the
// caller's buffers right behind it (no copy into the frame).
void encode_write_head(std::vector<std::byte>& out, std::uint32_t request_id, std::uint32_t region,
                       std::uint64_t offset, std::size_t data_size);
void encode_persist_head(std::vector<std::byte>& out, std::uint32_t request_id, std::uint32_t region,
                         std::span<const Slice> slices);
/// The head of a successful Response carrying `data_size` bytes of data: the
/// sender puts the data right behind it (a read answer built in place).
void encode_response_head(std::vector<std::byte>& out, std::uint32_t request_id, std::size_t data_size);
/// Bytes of encode_response_head's output.
inline constexpr std::size_t kResponseHeadSize = kHeaderSize + 6;
/// `goodbye` with why the sender closes (status 0 and no message: an
/// orderly close; errc::fenced: the server revoked the session's regions).
struct Goodbye {
    std::uint32_t status = 0;
    std::string message;
};
void encode_goodbye(std::vector<std::byte>& out, std::uint32_t request_id);
void encode(std::vector<std::byte>& out, std::uint32_t request_id, const Goodbye& m);
/// An empty body is an orderly close (status 0). ERRORS: errc::invalid_argument.
Result<Goodbye> decode_goodbye(std::span<const std::byte> body);

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
/// Decodes into `out`, reusing its range vector (no allocation once it has
/// grown): the rdma:// session's hot path. ERRORS: as decode_flush.
Result<void> decode_flush(std::span<const std::byte> body, Flush& out);
Result<Response> decode_response(std::span<const std::byte> body);
/// A well-formed Response's status and data, without building its message
/// or an error (a client's every reply: the hot path). RETURN VALUE:
/// nullopt where decode_response would fail.
std::optional<ResponseView> response_view(std::span<const std::byte> body) noexcept;
/// Decodes into `out`, reusing its slice vector (no allocation once it has
/// grown): the server's hot path. ERRORS: as the others; a count of 0 or
/// over kMaxRanges, or lengths that do not add up to the body, are malformed.
Result<void> decode_persist(std::span<const std::byte> body, Persist& out);
Result<Persist> decode_persist(std::span<const std::byte> body);

/// A byte stream cut into frames: bytes go in (feed(), or received straight
/// into space() and commit()), whole frames come out of next(), in place.
/// Small frames are parsed where they landed; once the header of a frame
/// too large for the buffer is in, the buffer is grown to the whole frame
/// once, so the rest of it is received into its final place (no doubling,
/// no second copy). Oversized or malformed headers poison it (error() set).
class FrameReader {
public:
    /// `primary`: where small frames are received (e.g. a pinned buffer of
    /// an MrPool); empty = an owned one of kPrimarySize bytes.
    explicit FrameReader(std::uint32_t max_payload = kDefaultMaxPayload, std::span<std::byte> primary = {});
    FrameReader(const FrameReader&) = delete;
    FrameReader& operator=(const FrameReader&) = delete;
    static constexpr std::size_t kPrimarySize = 64 * 1024;

    /// Where the next bytes go: never empty unless poisoned. At least the
    /// rest of the frame being received, once its header is in.
    std::span<std::byte> space();
    /// `n` bytes were written at the start of space().
    void commit(std::size_t n);
    /// Copy `bytes` in (through space/commit).
    void feed(std::span<const std::byte> bytes);
    /// The next whole frame, if one is buffered: its header and payload
    /// (valid until the next space/commit/feed/next call).
    std::optional<std::pair<Header, std::span<const std::byte>>> next();
    [[nodiscard]] const std::optional<Error>& error() const noexcept { return error_; }
    /// Bytes received and not yet taken out by next().
    [[nodiscard]] std::size_t buffered() const noexcept { return end_ - pos_; }
    /// Bytes of buffer held beyond the primary one (a large frame's).
    [[nodiscard]] std::size_t held() const noexcept { return large_size_; }
    /// Give back a large frame's buffer (the connection is idle).
    void release_large() noexcept;
    /// The largest payload accepted from the next header on (a server
    /// raises it once its client has authenticated).
    void set_max_payload(std::uint32_t max_payload) noexcept { max_payload_ = max_payload; }

private:
    std::size_t frame_need() const;
    void relocate(std::size_t need);

    std::uint32_t max_payload_;
    std::vector<std::byte> owned_;  ///< the primary buffer when none was given
    std::span<std::byte> primary_;
    // A frame larger than primary_: not zero-filled (it is received into),
    // kept until release_large() (the transports call it when idle).
    std::unique_ptr<std::byte[]> large_;
    std::size_t large_size_ = 0;
    std::byte* data_ = nullptr;     ///< primary_ or large_
    std::size_t cap_ = 0;
    std::size_t pos_ = 0;  ///< first byte not taken by next()
    std::size_t end_ = 0;  ///< first byte not received
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
