// Assertions on rpm::Result for tests: the code a Result holds (success: {},
// so EXPECT_EQ(code_of(r), errc::x) reads as the old error_code checks did),
// and ok(r), which prints the error's message and detail when it fails.
#pragma once

#include <rpm/result.hpp>

#include <gtest/gtest.h>

#include <system_error>

namespace rpm::test {

/// RETURN VALUE: {} for success, else the error's code.
template <class T>
std::error_code code_of(const Result<T>& r) {
    return r.has_value() ? std::error_code{} : r.error().code();
}

/// Success, or a failure naming the error (code, message and detail).
template <class T>
::testing::AssertionResult ok(const Result<T>& r) {
    if (r.has_value()) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << r.error().message();
}

/// A failure whose code is `want`; otherwise says what came instead.
template <class T>
::testing::AssertionResult fails_with(const Result<T>& r, errc want) {
    if (!r.has_value() && r.error() == want) return ::testing::AssertionSuccess();
    if (r.has_value()) return ::testing::AssertionFailure() << "succeeded, expected " << make_error_code(want).message();
    return ::testing::AssertionFailure() << r.error().message() << " (expected " << make_error_code(want).message() << ")";
}

} // namespace rpm::test
