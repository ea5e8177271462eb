// rpm::Result<T>: a value or an rpm::Error, without exceptions.
//
// C++20 has no std::expected; this is the small subset rpm needs. value() on
// an error (or error() on a value) is a programming bug and aborts, because
// rpm's hot path is built without exception handling in mind.
#pragma once

#include <rpm/export.hpp>
#include <rpm/error.hpp>

#include <cstdlib>
#include <type_traits>
#include <utility>
#include <variant>

RPM_API_BEGIN

namespace rpm {

template <class T>
class [[nodiscard]] Result {
    static_assert(!std::is_same_v<T, Error>, "Result<Error> is ambiguous");

public:
    /// A Result holding `value`. ERRORS: none.
    Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
    /// A Result holding `err`: has_value() is false, even for an Error
    /// whose code is {}. ERRORS: none.
    Result(Error err) : v_(std::in_place_index<1>, std::move(err)) {}
    /// A Result holding Error(e, detail). ERRORS: none.
    Result(errc e, std::string detail = {}) : Result(Error(e, std::move(detail))) {}

    /// RETURN VALUE: true when it holds a value, false when an Error;
    /// never fails.
    [[nodiscard]] bool has_value() const noexcept { return v_.index() == 0; }
    /// RETURN VALUE: has_value(); never fails.
    explicit operator bool() const noexcept { return has_value(); }

    /// RETURN VALUE: the value.
    /// ERRORS: none; on a Result holding an Error it aborts the process
    /// (std::abort): check has_value() first.
    T& value() & { check(true); return std::get<0>(v_); }
    /// RETURN VALUE: the value. ERRORS: none; aborts on an Error, as value().
    const T& value() const& { check(true); return std::get<0>(v_); }
    /// RETURN VALUE: the value, to move from. ERRORS: none; aborts on an
    /// Error, as value().
    T&& value() && { check(true); return std::get<0>(std::move(v_)); }
    /// RETURN VALUE: value(). ERRORS: none; aborts on an Error, as value().
    T& operator*() & { return value(); }
    /// RETURN VALUE: value(). ERRORS: none; aborts on an Error, as value().
    const T& operator*() const& { return value(); }
    /// RETURN VALUE: &value(). ERRORS: none; aborts on an Error, as value().
    T* operator->() { return &value(); }
    /// RETURN VALUE: &value(). ERRORS: none; aborts on an Error, as value().
    const T* operator->() const { return &value(); }

    /// RETURN VALUE: the Error.
    /// ERRORS: none; on a Result holding a value it aborts the process
    /// (std::abort): check has_value() first.
    [[nodiscard]] const Error& error() const& { check(false); return std::get<1>(v_); }

private:
    void check(bool want_value) const {
        if (has_value() != want_value) std::abort();
    }
    std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
public:
    /// Success. ERRORS: none.
    Result() = default;
    /// A failed Result holding `err` (failed even when err's code is {}).
    /// ERRORS: none.
    Result(Error err) : err_(std::move(err)), failed_(true) {}
    /// A failed Result holding Error(e, detail). ERRORS: none.
    Result(errc e, std::string detail = {}) : Result(Error(e, std::move(detail))) {}

    /// RETURN VALUE: true for success, false when it holds an Error; never
    /// fails.
    [[nodiscard]] bool has_value() const noexcept { return !failed_; }
    /// RETURN VALUE: has_value(); never fails.
    explicit operator bool() const noexcept { return has_value(); }
    /// RETURN VALUE: the Error.
    /// ERRORS: none; on success it aborts the process (std::abort): check
    /// has_value() first.
    [[nodiscard]] const Error& error() const& {
        if (!failed_) std::abort();
        return err_;
    }

private:
    Error err_;
    bool failed_ = false;
};

} // namespace rpm

RPM_API_END
