// rpm_errormsg()'s thread-local text and the conversions to C codes.
#include "capi/status.hpp"

#include <rpm/error.hpp>

#include <string>
#include <string_view>

namespace rpm::capi {
namespace {

// Each thread's last failure. A std::string per thread, made on the
// thread's first failure; the text a caller got stays valid until that
// thread's next failure (rpm_errormsg's contract).
thread_local std::string last_failure;

int keep(int code, std::string_view text) noexcept {
    try {
        last_failure.assign(text);
    } catch (...) {
        // No memory for the text: the code still tells what failed.
        last_failure.clear();
    }
    return code;
}

} // namespace

int code_of(const Error& e) noexcept {
    const auto code = e.code();
    if (!code) return 0;
    // Only rpm's category maps onto rpm_errc; anything else (a std::errc a
    // lower layer passed through) is an input/output failure whose text
    // says which.
    return code.category() == rpm_category() && code.value() > 0 ? -code.value() : RPM_E_IO_ERROR;
}

int fail(const Error& e) noexcept {
    // A failed Result always fails in C, even one holding no code.
    const int c = code_of(e) != 0 ? code_of(e) : RPM_E_IO_ERROR;
    try {
        return keep(c, e.message());
    } catch (...) {
        return keep(c, e.detail());
    }
}

int fail(errc e, const char* detail) noexcept {
    try {
        return fail(Error(e, detail));
    } catch (...) {
        return keep(-static_cast<int>(e), detail);
    }
}

int out_of_memory(const char* function) noexcept {
    keep(RPM_E_NOMEM, function);
    try {
        last_failure.append(": out of memory");
    } catch (...) {
    }
    return RPM_E_NOMEM;
}

int null_argument(const char* function, const char* argument) noexcept {
    try {
        return fail(Error(errc::invalid_argument, std::string(function) + ": " + argument + " is NULL"));
    } catch (...) {
        return keep(RPM_E_INVALID_ARGUMENT, function);
    }
}

const char* last_message() noexcept { return last_failure.c_str(); }

} // namespace rpm::capi
