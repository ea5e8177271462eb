// libpmem2 return codes as rpm errors.
#pragma once

#include <rpm/error.hpp>

#include <string_view>

namespace rpm::pmem::detail {

/// The rpm code for a libpmem2 return code (a PMEM2_E_* value or a negated
/// errno): granularity_not_supported, not_pmem, bad_size, permission_denied,
/// or pmem_failed for the rest.
errc pmem2_errc(int rc) noexcept;

/// An Error for a failed libpmem2 call: "<context>: <pmem2_errormsg()>".
/// Call it right after the failure, before another pmem2 call replaces the
/// thread's message.
Error pmem2_error(int rc, std::string_view context);

/// pmem2_errormsg() as a string ("" when libpmem2 has none).
std::string pmem2_message();

}  // namespace rpm::pmem::detail
