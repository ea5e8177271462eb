// The names of the Api's return codes, and their translation into rpm errors.
#include "transport/rdma/api.hpp"

#include "transport/rdma/verbs/objects.hpp"

namespace rpm::rdma {

std::string error_name(int ret) {
    std::string name;
    switch (ret) {
    case kErrUnknown: name = "unknown error"; break;
    case kErrNoSupp: name = "not supported"; break;
    case kErrProvider: name = "provider error"; break;
    case kErrNoMem: name = "out of memory"; break;
    case kErrInval: name = "invalid argument"; break;
    case kErrNoCompletion: name = "no completion available"; break;
    case kErrNoEvent: name = "no event available"; break;
    case kErrAgain: name = "temporary error"; break;
    default: name = "error " + std::to_string(ret); break;
    }
    // What rdma-core said, when the verbs layer failed on this thread (a
    // fake table records nothing).
    if (auto why = verbs::take_last_failure(ret); !why.empty()) name += " (" + why + ")";
    return name;
}

std::error_code code_of(int ret) noexcept {
    switch (ret) {
    case 0: return {};
    case kErrInval: return errc::invalid_argument;
    case kErrNoSupp: return errc::unsupported;
    default: return errc::io_error;
    }
}

Error call_failure(errc code, std::string_view what, std::string_view call, int ret) {
    return Error(code, std::string(what) + ": " + std::string(call) + " failed: " + error_name(ret));
}

} // namespace rpm::rdma
