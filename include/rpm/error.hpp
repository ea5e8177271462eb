// rpm error codes: one enum, one std::error_category.
//
// Every failing call in rpm reports an rpm::errc through std::error_code on
// the data path, or an rpm::Error (code + detail naming the file, flag or
// request that was wrong) where there is context worth telling the user.
// The category's messages say what went wrong and what to do about it.
#pragma once

#include <rpm/export.hpp>

#include <string>
#include <system_error>
#include <utility>

RPM_API_BEGIN

namespace rpm {

enum class errc : int {
    // 0 is reserved for success, as std::error_code requires.
    invalid_argument = 1,      ///< a parameter is out of its documented range
    path_not_found,            ///< a file or device path does not exist
    permission_denied,         ///< the OS refused access to a file or device
    bad_size,                  ///< a size is zero, too large, unaligned, or does not match
    not_pmem,                  ///< a device that must be persistent memory is not
    granularity_not_supported, ///< the region cannot give the store granularity asked for
    pmem_failed,               ///< libpmem2 reported an error rpm has no closer code for
    deep_flush_failed,         ///< the WPQ deep flush could not be performed
    io_error,                  ///< a read or write of a file failed
    sysfs_unreadable,          ///< a platform file could not be read
    bad_override,              ///< an override (environment or configuration) is malformed
    bad_config,                ///< a configuration file is missing or malformed
    rdma_unavailable,          ///< no RDMA device, or the verbs library failed
    unsupported,               ///< the platform or build does not offer this operation
    quorum_lost,               ///< too few replicas are live to give the durability asked for
    mr_budget_exhausted,       ///< a registration would pass the MR pool's hard budget
    no_p2p_memory,             ///< no P2P provider suits the clients, or it has no room left
    nvme_status,               ///< an NVMe controller completed a command with an error status
    protocol_error,            ///< the peer broke the wire protocol; the connection was closed
    fenced,                    ///< a newer fencing term took the region over; this one may no longer change it
    auth_failed,               ///< authentication failed: rpm's handshake (unknown client id, wrong secret) or NVMe-oF DH-HMAC-CHAP
    out_of_range,              ///< a range (offset + length) reaches past the end of the region
    misaligned,                ///< an offset is not aligned as the operation requires (atomic_write: 8 bytes)
    would_deadlock,            ///< a synchronous call on the thread that must complete it (inside its connection's callback)
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

    /// RETURN VALUE: whether a's code is `e` (of rpm_category()); never
    /// fails.
    friend bool operator==(const Error& a, errc e) noexcept { return a.code_ == e; }

private:
    std::error_code code_;
    std::string detail_;
};

} // namespace rpm

RPM_API_END
