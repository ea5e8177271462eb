#pragma once
// What the software engine offers (Engine::query) and the check of a
// subsystem's attributes against it.

#include <rpm/nvmf_offload.hpp>
#include <rpm/result.hpp>

namespace rpm::nvmf::detail {

/// The software engine's honest limits.
OffloadCaps software_caps() noexcept;

/// RETURN VALUE: success when `a` is within `caps`.
/// ERRORS: errc::unsupported, the detail naming the field, its value and
/// the range allowed.
Result<void> check_attrs(const SubsystemAttrs& a, const OffloadCaps& caps);

} // namespace rpm::nvmf::detail
