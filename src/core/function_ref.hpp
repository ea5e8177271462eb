// A non-owning reference to a callable, for a parameter that is called
// during the call only (std::function_ref arrives in C++26).
//
// Why: a synchronous operation hands its "start" lambda down three layers
// (RemoteRegion, Transport::call, the transport's driver); as a
// std::function it was copied to the heap on every call, since a lambda
// that captures more than two words does not fit std::function's inline
// buffer. A FunctionRef is two words and never allocates. It must not
// outlive the callable it was made from (a temporary lambda lives to the
// end of the full expression: passing one as an argument is fine).
#pragma once

#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

namespace rpm {

template <class Sig>
class FunctionRef;

template <class R, class... Args>
class FunctionRef<R(Args...)> {
public:
    template <class F>
        requires(!std::is_same_v<std::remove_cvref_t<F>, FunctionRef> && std::is_invocable_r_v<R, F&, Args...>)
    FunctionRef(F&& f) noexcept  // NOLINT(google-explicit-constructor): stands in for a callable parameter
        : obj_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
          call_([](void* o, Args... a) -> R {
              return std::invoke(*static_cast<std::remove_reference_t<F>*>(o), std::forward<Args>(a)...);
          }) {}

    R operator()(Args... a) const { return call_(obj_, std::forward<Args>(a)...); }

private:
    void* obj_;
    R (*call_)(void*, Args...);
};

} // namespace rpm
