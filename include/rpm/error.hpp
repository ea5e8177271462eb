// rpm error codes: one enum, one std::error_category.
//
// Every failing call in rpm reports an rpm::Error: an rpm::errc (as a
// std::error_code of rpm_category()) and a detail naming the file, flag,
// request, region or range that was wrong, and for a failed connection why
// it failed. Calls return it in an rpm::Result<T> (include/rpm/result.hpp),
// callbacks receive one, futures hold one. The category's messages say
// what went wrong and what to do about it.
#pragma once

#include <rpm/export.hpp>

#include <string>
#include <string_view>
#include <system_error>
#include <utility>

RPM_API_BEGIN

namespace rpm {

// What each code means. Where it differs by transport, "tcp://" and
// "rdma://" say how; a code not listed for a transport does not come from it.
// Every failing call returns an rpm::Error (directly, in a Result, to a
// callback or through a future) whose detail names the operation and what
// it was applied to; error.hpp's codes alone never are the whole story.
enum class errc : int {
    // 0 is reserved for success, as std::error_code requires.
    /// A parameter is out of its documented range, or the object was moved
    /// from; also a server's answer to a request it cannot take (an unknown
    /// region name: the same answer as a region not granted, so names do
    /// not leak). Nothing was done.
    invalid_argument = 1,
    path_not_found,            ///< a file or device path does not exist
    permission_denied,         ///< the OS refused access to a file or device; a server refused a term from a client not in its fencers
    /// A size is zero, too large, unaligned, or does not match: a region
    /// smaller than asked; a message larger than the buffer given to recv
    /// (it is dropped); rdma://: a send over 65520 bytes (nothing is sent);
    /// tcp://: a read part larger than the server's max_payload.
    bad_size,
    not_pmem,                  ///< a device that must be persistent memory is not
    granularity_not_supported, ///< the region cannot give the store granularity asked for
    pmem_failed,               ///< libpmem2 reported an error rpm has no closer code for
    deep_flush_failed,         ///< the WPQ deep flush could not be performed (a server's persist step: the data is stored, durability not assured)
    /// Input or output failed. Locally: a file or device read or write.
    /// On a connection (the data path's usual case): the connection failed
    /// or was closed: lost, closed by the peer, a malformed frame, a failed
    /// work request (rdma://), or a synchronous call that ran past
    /// ClientOptions::timeout (which closes it); every pending and later
    /// operation of that connection fails with it, and the detail says why
    /// the connection went. From a server's answer (the connection goes
    /// on): its persist step's msync failed, or it could not keep a term.
    io_error,
    sysfs_unreadable,          ///< a platform file could not be read
    bad_override,              ///< an override (environment or configuration) is malformed
    bad_config,                ///< a configuration file is missing or malformed
    rdma_unavailable,          ///< no RDMA device, or the verbs library failed (rdma:// set-up; tcp:// never)
    /// The platform, build or transport does not offer this operation: a
    /// forced native_flush over tcp:// (or an rdma:// build without
    /// ibv_wr_flush), rdma://'s read_after_write on memory that is not PM,
    /// TLS over rdma://, a term where the server keeps none.
    unsupported,
    quorum_lost,               ///< too few replicas are live to give the durability asked for
    mr_budget_exhausted,       ///< a registration would pass the MR pool's hard budget
    no_p2p_memory,             ///< no P2P provider suits the clients, or it has no room left
    nvme_status,               ///< an NVMe controller completed a command with an error status
    protocol_error,            ///< the peer broke the wire protocol; the connection was closed
    /// A newer fencing term took the region over; this opener may no
    /// longer change it. Both transports: the server answers a request
    /// that meets the fence with it, says goodbye and closes, so every
    /// pending and later operation of the connection fails with it
    /// (rdma://: the region's memory key is revoked too).
    fenced,
    auth_failed,               ///< authentication failed: rpm's handshake (unknown client id, wrong secret) or NVMe-oF DH-HMAC-CHAP
    out_of_range,              ///< a range (offset + length) reaches past the end of the region (refused by the client: nothing is sent)
    misaligned,                ///< an offset is not aligned as the operation requires (atomic_write: 8 bytes; nothing is sent)
    /// A synchronous call on the thread that must complete it (inside a
    /// callback of its own connection; tcp://: of any connection of its
    /// IoGroup): nothing is sent, the connection goes on.
    would_deadlock,
};

/// The category of rpm::errc ("rpm"). Its message(ev) says what went
/// wrong and what to do about it ("unknown rpm error" for a value that is
/// no errc).
/// RETURN VALUE: the one category object of the process; never fails.
const std::error_category& rpm_category() noexcept;

/// RETURN VALUE: `e` as a std::error_code of rpm_category() (what makes
/// std::error_code ec = errc::x work); never fails.
std::error_code make_error_code(errc e) noexcept;

} // namespace rpm

template <>
struct std::is_error_code_enum<rpm::errc> : std::true_type {};

namespace rpm {

/// An error code with the detail that makes it actionable: which path, which
/// variable, which value. message() = "<detail>: <category message>".
class Error {
public:
    /// An Error holding success (code() is {}) and no detail.
    /// ERRORS: none.
    Error() = default;
    /// An Error of any category (an rpm::errc, or e.g. a std::errc passed
    /// through) with its detail. ERRORS: none.
    Error(std::error_code code, std::string detail = {})
        : code_(code), detail_(std::move(detail)) {}
    /// An Error of rpm_category() with its detail. ERRORS: none.
    Error(errc e, std::string detail = {})
        : code_(make_error_code(e)), detail_(std::move(detail)) {}

    /// RETURN VALUE: the error code ({} for a default-made Error); never
    /// fails.
    [[nodiscard]] std::error_code code() const noexcept { return code_; }
    /// RETURN VALUE: the detail text, empty when none was given; never
    /// fails.
    [[nodiscard]] const std::string& detail() const noexcept { return detail_; }
    /// RETURN VALUE: "success" when code() is {}; the category's message
    /// alone when detail() is empty; "<detail>: <message>" otherwise.
    /// ERRORS: none.
    [[nodiscard]] std::string message() const;

    /// RETURN VALUE: this error with `context` before its detail
    /// ("<context>: <detail>", or just `context` when there was none): a
    /// caller names what it was doing when a call it made failed.
    /// ERRORS: none.
    [[nodiscard]] Error with_context(std::string_view context) const {
        std::string d(context);
        if (!detail_.empty()) d.append(": ").append(detail_);
        return Error(code_, std::move(d));
    }

    /// RETURN VALUE: whether a's code is `e` (of rpm_category()); never
    /// fails.
    friend bool operator==(const Error& a, errc e) noexcept { return a.code_ == e; }

private:
    std::error_code code_;
    std::string detail_;
};

} // namespace rpm

RPM_API_END
