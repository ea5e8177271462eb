// NVMe over Fabrics (NVMe/TCP and NVMe/RDMA): an rpm::nvmf::Target exports
// block devices, files and PM regions as NVMe namespaces to any NVMe/TCP or
// NVMe/RDMA host (the Linux kernel's included); an rpm::nvmf::Host reads
// and writes namespaces of any NVMe/TCP target (the kernel's nvmet-tcp
// included). docs/nvmf.md says what
// of the specification is implemented.
//
//   rpm::nvmf::TargetOptions o;
//   o.port = 4420;
//   o.subsystems.push_back({.nqn = "nqn.2026-11.io.rpm:disk",
//                           .namespaces = {{.nsid = 1, .path = "/dev/nvme0n1"}}});
//   auto target = rpm::nvmf::Target::start(o);   // serves until destroyed
//
//   auto host = rpm::nvmf::Host::connect({.port = 4420, .subnqn = "nqn.2026-11.io.rpm:disk"});
//   host->write(1, 0, bytes);                     // completes once the target says so
#pragma once

#include <rpm/export.hpp>
#include <rpm/nvmf_offload.hpp>
#include <rpm/result.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

RPM_API_BEGIN

namespace rpm::nvmf {

/// The NQN the host uses when none is given, and the target's default.
inline constexpr char default_host_nqn[] = "nqn.2026-11.io.rpm:host";

/// The fabric a target serves on.
enum class Transport : std::uint8_t {
    tcp,   ///< NVMe/TCP
    rdma,  ///< NVMe/RDMA: rdma_cm on an RDMA device's IP address (RoCE, iWARP, Soft-RoCE)
};

/// NVMe in-band authentication (DH-HMAC-CHAP) of one host (docs/nvmf.md,
/// "Authentication"). Secrets are in the NVMe text form
/// "DHHC-1:TT:<base64>:" (rpm-nvmf gen-secret, nvme gen-dhchap-key); read
/// them from files with read_dhchap_secret().
struct HostSecret {
    std::string hostnqn;
    /// The host's secret: a queue of this host serves no command but the
    /// authentication ones until the host proved it holds this.
    std::string secret;
    /// The controller's secret, for a host that asks the controller to prove
    /// itself too ("" = none: such a host is refused).
    std::string ctrl_secret;
};

/// One exported subsystem: an NQN and its namespaces.
struct SubsystemSpec {
    std::string nqn;
    std::vector<NamespaceSpec> namespaces;
    /// Host NQNs allowed to connect; empty allows any host.
    std::vector<std::string> allowed_hosts;
    /// Hosts that must authenticate (DH-HMAC-CHAP) on every queue; a host
    /// listed here is allowed (whatever allowed_hosts says), others connect
    /// as allowed_hosts says, without authentication.
    std::vector<HostSecret> host_secrets;
    std::string serial = "rpm0001";
    std::string model = "rpm NVMe-oF target";
};

struct TargetOptions {
    /// The fabric. NVMe/RDMA listens on `address` through rdma_cm: it must
    /// be the IP address of an RDMA device (`rdma link show`).
    Transport transport = Transport::tcp;
    /// Address and port to listen on (port 0: the OS chooses; see port()).
    std::string address = "127.0.0.1";
    std::uint16_t port = 4420;
    std::vector<SubsystemSpec> subsystems;
    /// Whether hosts may ask for header / data digests (CRC32C) in ICReq.
    bool allow_header_digest = true;
    bool allow_data_digest = true;
    /// In-capsule data the I/O queues accept (IOCCSZ = 64 + this, in 16-byte
    /// units). NVMe/RDMA receives every capsule into a buffer of 64 + this.
    std::uint32_t in_capsule_data = 8192;
    /// Largest transfer of one command (MDTS); a power of two, >= 4096.
    std::uint32_t max_io_size = 128 * 1024;
    /// Most H2CData bytes per PDU (ICResp maxh2cdata).
    std::uint32_t max_h2c_data = 128 * 1024;
    /// I/O queues per controller and entries per queue (CAP.MQES + 1).
    std::uint16_t max_io_queues = 8;
    std::uint16_t max_queue_size = 128;
    /// Root of the sysfs tree (PM persistence domain, P2P placement).
    std::filesystem::path sysfs_root = "/";
    /// The NIC the target serves through ("eth0", "rxe0", a BDF): staging
    /// buffers come from a P2P provider close to it and to the drives when
    /// there is one (empty: host memory).
    std::string nic;
    /// The offload engine; null uses a SoftwareEngine.
    std::shared_ptr<Engine> engine;
    /// Connection limits (docs/nvmf.md, "Limits"): a connection that has
    /// not completed ICReq and Connect within setup_timeout is closed;
    /// connected queues may idle (keep-alive governs them). Past
    /// max_connections at once, or max_setup_per_address connections from
    /// one address still in set-up, a new connection is closed as it is
    /// accepted. Each must be positive.
    std::chrono::milliseconds setup_timeout{10000};
    std::size_t max_connections = 256;
    std::size_t max_setup_per_address = 16;
};

/// Counters since start().
struct TargetStats {
    std::uint64_t connections = 0;           ///< TCP connections accepted, or RDMA connection requests checked
    std::uint64_t connections_terminated = 0;///< closed for a protocol error (TermReq sent)
    std::uint64_t controllers = 0;           ///< controllers created by Connect
    std::uint64_t keep_alive_expired = 0;    ///< controllers torn down by KATO
    std::uint64_t admin_commands = 0;
    std::uint64_t io_commands = 0;           ///< through the software path
    std::uint64_t offloaded_commands = 0;    ///< through the engine (enabled queues)
    std::uint64_t errors = 0;                ///< commands completed with an error status
    std::uint64_t digest_errors = 0;
    std::uint64_t connections_refused = 0;   ///< closed at accept: max_connections, max_setup_per_address
    std::uint64_t setup_timeouts = 0;        ///< closed for not completing ICReq + Connect (+ authentication) in time
    std::uint64_t auth_succeeded = 0;        ///< queues that authenticated (DH-HMAC-CHAP)
    std::uint64_t auth_failed = 0;           ///< authentication transactions that failed (each logged with its reason)
};

/// A running target. On a moved-from Target port() is 0, stats(),
/// staging() and namespaces() are empty, stop() does nothing; assigning to
/// it and destruction are valid.
class Target {
public:
    /// Open every namespace, create the subsystems in the engine, listen.
    ///
    /// RETURN VALUE: the running target (it serves on its own threads until
    /// destroyed), or an Error.
    /// ERRORS:
    /// - errc::invalid_argument: no subsystem, an empty or duplicate NQN, an
    ///   NQN over 223 bytes, nsid 0 or duplicate, a bad size option
    ///   (max_io_size not a power of two >= 4096; in_capsule_data not a
    ///   multiple of 16 from 1024 to max_io_size; max_h2c_data not a
    ///   multiple of 4 >= 4096; max_io_queues 0; max_queue_size outside
    ///   2..1024; setup_timeout, max_connections or max_setup_per_address
    ///   not positive); also the discovery NQN as a subsystem NQN, nsid
    ///   FFFFFFFFh, a namespace without a path, a host_secrets entry with an
    ///   empty, over-223-byte or repeated host NQN or a malformed secret, an
    ///   address that is not a numeric IP address (IPv4 for NVMe/RDMA), and
    ///   a namespace the engine cannot map (block_size not 512 or 4096, or
    ///   finer than the backend's logical block; a backend smaller than one
    ///   block)
    /// - errc::path_not_found / permission_denied / not_pmem / bad_size: a
    ///   namespace's backend could not be opened (detail names it); so can
    ///   invalid_argument, io_error and, for PM, granularity_not_supported
    ///   and pmem_failed: Engine::create_backend's errors
    /// - errc::unsupported: the engine cannot offer what the options ask
    ///   (software engine: max_io_size over 1 MiB; a staging buffer of
    ///   max_io_size x (max_io_queues + 1) bytes under 128 KiB or over
    ///   256 MiB; over 1024 namespaces in a subsystem)
    /// - errc::io_error: the address could not be bound
    ///   (also: the worker threads' epoll or eventfd could not be made; a
    ///   staging buffer could not be mapped; NVMe/RDMA: the address is not
    ///   an RDMA device's, or an rdma_cm or verbs call failed)
    /// A custom engine's errors pass through with their code, the detail
    /// prefixed by the subsystem's NQN (and nsid). On failure, subsystems
    /// already made in TargetOptions::engine stay there (the engine has no
    /// verb to destroy them).
    static Result<Target> start(TargetOptions options);

    /// Take over `other`'s target (its threads keep serving); `other` is
    /// left moved-from. RETURN VALUE: none (a constructor). ERRORS: none.
    Target(Target&& other) noexcept;
    /// Stop this object's target (as the destructor), then take over
    /// `other`'s. RETURN VALUE: *this. ERRORS: none.
    Target& operator=(Target&& other) noexcept;
    /// Stops the target (as stop()). ERRORS: none.
    ~Target();
    Target(const Target&) = delete;
    Target& operator=(const Target&) = delete;

    /// The TCP port it listens on.
    /// RETURN VALUE: the port listened on, NVMe/TCP or NVMe/RDMA (the OS's
    /// choice when TargetOptions::port was 0); 0 for a moved-from Target;
    /// never fails.
    [[nodiscard]] std::uint16_t port() const noexcept;
    /// RETURN VALUE: the counters since start(), each read atomically (not
    /// all at one instant); all 0 for a moved-from Target. ERRORS: none.
    [[nodiscard]] TargetStats stats() const;
    /// Where the staging buffers are and why.
    /// RETURN VALUE: the staging report of the first subsystem in
    /// TargetOptions::subsystems only (the others' are not reported); an
    /// empty report for a moved-from Target. ERRORS: none.
    [[nodiscard]] StagingReport staging() const;
    /// Every exported namespace, with how its backend is driven (O_DIRECT
    /// or buffered, the PM region's persistence).
    /// RETURN VALUE: the namespaces of every subsystem, in subsystem order,
    /// each subsystem's by nsid; none for a moved-from Target. ERRORS: none.
    [[nodiscard]] std::vector<NamespaceView> namespaces() const;
    /// Close every connection and stop listening (also done by the destructor).
    /// Returns once every connection has ended (a command in progress
    /// finishes first) and the threads have stopped; calling it again, or
    /// on a moved-from Target, does nothing. The getters above still work
    /// afterwards.
    /// RETURN VALUE: none. ERRORS: none.
    void stop();

    struct RPM_INTERNAL Impl;
private:
    explicit Target(std::unique_ptr<Impl> impl) noexcept;
    /// Null once moved from. The threads and callbacks hold the Impl, never
    /// the Target, so a move leaves them serving.
    std::unique_ptr<Impl> impl_;
};

struct HostOptions {
    /// The fabric (NVMe/RDMA: `address` is reached through rdma_cm, from the
    /// RDMA device that routes to it).
    Transport transport = Transport::tcp;
    std::string address = "127.0.0.1";
    std::uint16_t port = 4420;
    /// The subsystem to connect to (ignored by discover()).
    std::string subnqn;
    std::string hostnqn = default_host_nqn;
    /// NVMe/TCP only: header and data digests (CRC32C).
    bool header_digest = false;
    bool data_digest = false;
    /// Entries per queue (sqsize + 1).
    std::uint16_t queue_size = 32;
    /// Keep-alive timeout asked for in Connect; 0 disables keep alive.
    std::uint32_t kato_ms = 10000;
    /// How long to wait for any one reply before failing with io_error.
    std::chrono::milliseconds timeout{10000};
    /// DH-HMAC-CHAP (docs/nvmf.md, "Authentication"): the host's secret,
    /// used when the controller asks for authentication ("" = none: such a
    /// controller cannot be connected to).
    std::string dhchap_secret;
    /// The controller's secret: when set, the controller must prove it holds
    /// it too, or connect() fails.
    std::string dhchap_ctrl_secret;
};

/// Reads a DH-HMAC-CHAP secret ("DHHC-1:TT:<base64>:") from a file that
/// only its owner may read or write.
/// RETURN VALUE: the secret's text.
/// ERRORS: errc::permission_denied (group or other permission bits set, or
/// the OS refused), errc::path_not_found, errc::invalid_argument (not a
/// secret: the detail says why, never quoting it), errc::io_error.
/// The text returned is the secret re-encoded (trailing newline and
/// spaces dropped). In detail: errc::permission_denied (any group or other
/// bit of the mode set; open(2) failed with EACCES); errc::path_not_found
/// (ENOENT); errc::invalid_argument (not a regular file; larger than a
/// secret can be; not "DHHC-1:TT:<base64>:" with TT 00 to 03, a 32, 48 or
/// 64-byte key and a matching CRC-32); errc::io_error (any other open(2)
/// or fstat(2) failure, e.g. ELOOP when `file` itself is a symbolic link,
/// which is not followed).
Result<std::string> read_dhchap_secret(const std::filesystem::path& file);

/// A new DH-HMAC-CHAP secret of key_length random bytes (32, 48 or 64),
/// transformed with SHA-256/384/512 (transform 1/2/3) or used as is (0).
/// RETURN VALUE: its text form.
/// ERRORS: errc::invalid_argument (another length or transform),
/// errc::io_error (no randomness).
/// (io_error: OpenSSL's RAND_bytes failed.)
Result<std::string> generate_dhchap_secret(std::size_t key_length, std::uint8_t transform);

/// One record of a discovery log page.
struct DiscoveryEntry {
    std::uint8_t trtype = 0;    ///< 1: RDMA, 3: TCP
    std::uint8_t adrfam = 0;    ///< 1: IPv4
    std::uint8_t subtype = 0;   ///< 2: NVMe subsystem, 3: current discovery subsystem
    std::uint16_t portid = 0;
    std::uint16_t cntlid = 0;
    std::string trsvcid;
    std::string traddr;
    std::string subnqn;
};

struct ControllerInfo {
    std::uint16_t cntlid = 0;
    std::string serial, model, firmware, subnqn;
    std::uint32_t max_transfer = 0;     ///< bytes (from MDTS), 0 = no limit
    std::uint32_t in_capsule_data = 0;  ///< bytes (IOCCSZ * 16 - 64)
    std::uint32_t namespaces = 0;       ///< NN
    bool volatile_write_cache = false;
    std::uint16_t oncs = 0;
};

struct NamespaceInfo {
    std::uint32_t nsid = 0;
    std::uint64_t blocks = 0;
    std::uint32_t block_size = 0;
};

/// A raw completion, for callers that want the status instead of an Error.
struct Completion {
    std::uint16_t status = 0;   ///< (DNR << 14) | (SCT << 8) | SC; 0 = success
    std::uint32_t dw0 = 0;
    std::uint32_t dw1 = 0;
};

/// A moved-from Host is safe to use: its Result calls fail with
/// errc::invalid_argument ("<call> on a moved-from nvmf::Host") and send
/// nothing; controller() is a default ControllerInfo; last_status() is 0.
class Host {
public:
    /// Read the discovery log of the target at options.address:port.
    ///
    /// RETURN VALUE: its records, or an Error.
    /// ERRORS: errc::io_error (no connection, timeout), errc::protocol_error
    /// (the target broke NVMe/TCP), errc::nvme_status (a command failed).
    /// Over options.transport (NVMe/RDMA too), with options.subnqn replaced
    /// by the discovery NQN and no keep alive; at most 1024 records.
    /// Also: errc::invalid_argument (options.timeout not positive: refused
    /// before any connection is opened, the detail names
    /// HostOptions::timeout; options.address is not a numeric IP address;
    /// a malformed dhchap secret); errc::auth_failed (the discovery
    /// controller asks for DH-HMAC-CHAP and it fails, or no secret is
    /// set); errc::nvme_status also for Connect refused, CSTS.CFS, or Get
    /// Log Page failing.
    static Result<std::vector<DiscoveryEntry>> discover(const HostOptions& options);

    /// Connect an admin queue and one I/O queue to options.subnqn and enable
    /// the controller (CC.EN, CSTS.RDY).
    ///
    /// RETURN VALUE: the connected host, or an Error.
    /// ERRORS: errc::invalid_argument (empty subnqn, queue_size < 2,
    /// timeout not positive: each refused before any connection is opened),
    /// errc::io_error, errc::protocol_error, errc::nvme_status (Connect
    /// refused: the detail names the subsystem and status).
    /// In detail: errc::invalid_argument also for an address that is not a
    /// numeric IP address (IPv4 for NVMe/RDMA) and a malformed dhchap
    /// secret; errc::io_error (cannot connect; no reply within
    /// options.timeout; NVMe/RDMA: no route or device, a verb failed, the
    /// controller rejected the queue; CSTS.RDY not set within CAP.TO);
    /// errc::protocol_error (a bad ICResp or PDU, a digest mismatch, a
    /// TermReq; Identify's cntlid differs from Connect's);
    /// errc::nvme_status (also Property Get/Set, Identify Controller, Set
    /// Features (Number of Queues) or the I/O queue's Connect failed, or
    /// CSTS.CFS); errc::auth_failed (a queue's DH-HMAC-CHAP failed, or the
    /// controller asks for it and options.dhchap_secret is empty).
    static Result<Host> connect(const HostOptions& options);

    /// Take over `other`'s connection; `other` is left moved-from: every
    /// call on it is still safe (see each call), and it can be assigned
    /// to. ERRORS: none.
    Host(Host&&) noexcept;
    /// Disconnect this Host (as the destructor), then take over `other`'s
    /// connection; `other` is left moved-from, as after the move
    /// constructor. RETURN VALUE: *this. ERRORS: none.
    Host& operator=(Host&&) noexcept;
    /// Stop the keep-alive thread, then, when the admin queue still works,
    /// shut the controller down (CC.SHN normal) and close the queues. May
    /// wait for a keep alive in progress and for the two shutdown commands,
    /// each up to options.timeout; failures are ignored. ERRORS: none.
    ~Host();

    /// RETURN VALUE: what Identify Controller said at connect(); a default
    /// ControllerInfo (cntlid 0, empty strings) when moved-from; never
    /// fails.
    [[nodiscard]] const ControllerInfo& controller() const noexcept;

    /// RETURN VALUE / ERRORS (for every call below): success, or
    /// errc::nvme_status with the status in the detail (last_status() has
    /// it), errc::invalid_argument for a buffer that is not a whole number of
    /// blocks or over max_transfer, errc::io_error / errc::protocol_error when
    /// the connection failed (the Host is then unusable).
    /// (As the code stands, read() and write() do not refuse a buffer over
    /// max_transfer: they split it into several commands; see each below.
    /// Once a queue has failed, every later call on it fails with
    /// errc::io_error.) Each also fails with errc::invalid_argument on a
    /// moved-from Host, before its arguments are checked; nothing is sent.
    ///
    /// active_namespaces: Identify (CNS 02h, active namespace list) on the
    /// admin queue.
    /// RETURN VALUE: the active nsids as the controller lists them
    /// (increasing; at most 1024).
    /// ERRORS: errc::nvme_status; errc::io_error / errc::protocol_error (the
    /// connection failed); errc::invalid_argument on a moved-from Host.
    Result<std::vector<std::uint32_t>> active_namespaces();
    /// Identify Namespace `nsid` on the admin queue; read() and write()
    /// keep its block size.
    /// RETURN VALUE: its size in blocks and its block size.
    /// ERRORS: errc::nvme_status; errc::invalid_argument (the namespace is
    /// not active: NSZE 0); errc::protocol_error (an LBA size outside 512
    /// bytes to 64 KiB; here the connection goes on); errc::io_error /
    /// errc::protocol_error (the connection failed); errc::invalid_argument
    /// on a moved-from Host.
    Result<NamespaceInfo> identify(std::uint32_t nsid);
    /// Read out.size() bytes from `lba` on the I/O queue, as Read commands
    /// of at most max_transfer (and 1 MiB, and 65536 blocks) each.
    /// RETURN VALUE: success once `out` holds them.
    /// ERRORS: errc::invalid_argument (`out` empty or not a whole number of
    /// blocks; a moved-from Host); identify(nsid)'s errors, the first time
    /// this Host uses nsid; errc::nvme_status (a command failed: `out` may
    /// hold part); errc::io_error / errc::protocol_error (the connection
    /// failed).
    Result<void> read(std::uint32_t nsid, std::uint64_t lba, std::span<std::byte> out);
    /// Write `in` at `lba` on the I/O queue, as Write commands of at most
    /// max_transfer (and 1 MiB, and 65536 blocks) each; complete when the
    /// controller says so (durable only per its volatile write cache:
    /// flush() for that).
    /// RETURN VALUE: success once every command completed.
    /// ERRORS: errc::invalid_argument (`in` empty or not a whole number of
    /// blocks; a moved-from Host); identify(nsid)'s errors, the first time
    /// this Host uses nsid; errc::nvme_status (a command failed: the
    /// commands before it were written); errc::io_error /
    /// errc::protocol_error (the connection failed).
    Result<void> write(std::uint32_t nsid, std::uint64_t lba, std::span<const std::byte> in);
    /// Flush namespace `nsid` on the I/O queue (FFFFFFFFh: every namespace,
    /// where the controller takes it, as rpm's target does).
    /// RETURN VALUE: success once the controller made completed writes
    /// durable.
    /// ERRORS: errc::nvme_status; errc::io_error / errc::protocol_error (the
    /// connection failed); errc::invalid_argument on a moved-from Host.
    Result<void> flush(std::uint32_t nsid);
    /// Write Zeroes over `blocks` blocks at `lba`, one command.
    /// RETURN VALUE: success once it completed.
    /// ERRORS: errc::invalid_argument (blocks 0 or over 65536: nothing is
    /// sent; a moved-from Host); errc::nvme_status; errc::io_error /
    /// errc::protocol_error (the connection failed).
    Result<void> write_zeroes(std::uint32_t nsid, std::uint64_t lba, std::uint32_t blocks);
    /// Send one Keep Alive now (a thread already sends one every KATO / 2
    /// when HostOptions::kato_ms is not 0).
    /// RETURN VALUE: success once it completed.
    /// ERRORS: errc::nvme_status; errc::io_error / errc::protocol_error (the
    /// connection failed); errc::invalid_argument on a moved-from Host.
    Result<void> keep_alive();

    /// Send any command on the I/O queue (qid 1) or admin queue (qid 0) with
    /// optional data to send or receive; cid and the SGL are filled in. For
    /// tests and tools that need the status of a malformed command.
    /// RETURN VALUE: the completion, whatever its status: an error status
    /// is not an Error here, and last_status() is not set. NVMe/RDMA fills
    /// in_data only when the status is success.
    /// ERRORS: errc::invalid_argument (qid over 1; both out_data and
    /// in_data given; NVMe/RDMA: a transfer of 16 MiB or more; a moved-from
    /// Host: nothing is sent); errc::io_error / errc::protocol_error (the
    /// connection failed, e.g. the controller sent more data than in_data
    /// holds: the queue is then unusable).
    Result<Completion> raw(std::uint16_t qid, std::span<const std::uint8_t, 64> sqe,
                           std::span<const std::byte> out_data, std::span<std::byte> in_data);

    /// The status of the last command that failed with errc::nvme_status.
    /// RETURN VALUE: that status, kept until another such failure; 0 when
    /// none has failed yet (raw() never sets it) and on a moved-from Host;
    /// never fails.
    [[nodiscard]] std::uint16_t last_status() const noexcept;

    struct RPM_INTERNAL Impl;
private:
    explicit Host(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

/// "SCT 0x0 SC 0x80 (LBA Out of Range), DNR" for logs and error details.
/// RETURN VALUE: that text; the name is "unknown" for a code rpm has no
/// name for, and ", DNR" only when the DNR bit is set. ERRORS: none.
std::string describe_status(std::uint16_t status);

} // namespace rpm::nvmf

RPM_API_END
