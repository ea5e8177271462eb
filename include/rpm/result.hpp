// rpm::Result<T>: a value or an rpm::Error, without exceptions.
//
// C++20 has no std::expected; this is the small subset rpm needs. value() on
// an error (or error() on a value) is a programming bug and aborts, because
// rpm's hot path is built without exception handling in mind.
#pragma once

#include <rpm/error.hpp>

#include <cstdlib>
#include <type_traits>
#include <utility>
#include <variant>

namespace rpm {

template <class T>
class [[nodiscard]] Result {
    static_assert(!std::is_same_v<T, Error>, "Result<Error> is ambiguous");

public:
    Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
    Result(Error err) : v_(std::in_place_index<1>, std::move(err)) {}
    Result(errc e, std::string detail = {}) : Result(Error(e, std::move(detail))) {}

    [[nodiscard]] bool has_value() const noexcept { return v_.index() == 0; }
    explicit operator bool() const noexcept { return has_value(); }

    T& value() & { check(true); return std::get<0>(v_); }
    const T& value() const& { check(true); return std::get<0>(v_); }
    T&& value() && { check(true); return std::get<0>(std::move(v_)); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }

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
    Result() = default;
    Result(Error err) : err_(std::move(err)), failed_(true) {}
    Result(errc e, std::string detail = {}) : Result(Error(e, std::move(detail))) {}

    [[nodiscard]] bool has_value() const noexcept { return !failed_; }
    explicit operator bool() const noexcept { return has_value(); }
    [[nodiscard]] const Error& error() const& {
        if (!failed_) std::abort();
        return err_;
    }

private:
    Error err_;
    bool failed_ = false;
};

} // namespace rpm
