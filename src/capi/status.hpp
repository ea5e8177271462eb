// The C API's one way of turning the C++ API's outcomes into C return
// values (0 or a negative rpm_errc) and of keeping the calling thread's
// last failure for rpm_errormsg(); and the guard that keeps every C++
// exception (std::bad_alloc, mostly) from crossing into C.
#pragma once

#include <rpm/rpm.h>
#include <rpm/result.hpp>

#include <cstdint>
#include <exception>
#include <new>
#include <string>
#include <utility>

namespace rpm::capi {

/// RETURN VALUE: the C code of `e`: -errc for rpm's category,
/// RPM_E_IO_ERROR for another (a std::errc passed through), 0 for none.
/// ERRORS: none.
int code_of(const Error& e) noexcept;

/// Keeps `e` as this thread's last failure.
/// RETURN VALUE: its C code: -errc for rpm's category, RPM_E_IO_ERROR for
/// another category (a std::errc passed through; the message keeps its
/// text). ERRORS: none.
int fail(const Error& e) noexcept;
/// RETURN VALUE: the calling thread's last failure's text ("" before
/// any). ERRORS: none.
const char* last_message() noexcept;

/// fail(Error(e, detail)).
int fail(errc e, const char* detail) noexcept;

/// RETURN VALUE: 0 for success, else fail(r.error()). ERRORS: none.
inline int status(const Result<void>& r) noexcept { return r ? 0 : fail(r.error()); }

/// RETURN VALUE: 0 and *out = the value, or fail(r.error()) leaving *out
/// alone; a NULL `out` only drops the value. ERRORS: none.
template <class T, class U>
int status(const Result<T>& r, U* out) noexcept {
    if (!r) return fail(r.error());
    if (out != nullptr) *out = *r;
    return 0;
}

/// The code of a C++ outcome handed to a C callback, with this thread's
/// last failure set to its detail first (rpm_errormsg() inside the
/// callback tells it). ERRORS: none.
inline int callback_status(const Result<void>& r) noexcept { return status(r); }

/// RETURN VALUE: RPM_E_NOMEM, kept as "<function>: out of memory".
int out_of_memory(const char* function) noexcept;

/// RETURN VALUE: RPM_E_INVALID_ARGUMENT, naming the function and the
/// argument ("rpm_region_write: buf is NULL").
int null_argument(const char* function, const char* argument) noexcept;

/// Runs `body` (returning the C status); an exception it throws becomes
/// RPM_E_NOMEM (std::bad_alloc) or RPM_E_IO_ERROR, named after `function`.
template <class F>
int guard(const char* function, F&& body) noexcept {
    try {
        return std::forward<F>(body)();
    } catch (const std::bad_alloc&) {
        return out_of_memory(function);
    } catch (const std::exception& e) {
        return fail(errc::io_error, (std::string(function) + ": unexpected error: " + e.what()).c_str());
    } catch (...) {
        return fail(errc::io_error, function);
    }
}

/// A handle made with new (std::nothrow) semantics.
/// RETURN VALUE: 0 and *out = the handle, or RPM_E_NOMEM.
template <class H, class... A>
int make_handle(const char* function, H** out, A&&... args) noexcept {
    return guard(function, [&] {
        *out = new H{std::forward<A>(args)...};
        return 0;
    });
}

/// Deletes *p and sets it to NULL (*p NULL: nothing to do).
/// RETURN VALUE: 0, or RPM_E_INVALID_ARGUMENT for a NULL p.
template <class H>
int delete_handle(const char* function, H** p) noexcept {
    if (p == nullptr) return null_argument(function, "the handle's address");
    delete *p;
    *p = nullptr;
    return 0;
}

} // namespace rpm::capi
