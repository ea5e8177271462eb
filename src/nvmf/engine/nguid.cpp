// make_nguid: a namespace's NGUID from its backend path and front-end nsid.
#include "nvmf/engine/subsystem.hpp"

#include <string>

namespace rpm::nvmf::detail {
namespace {

// FNV-1a (64 bit) over the bytes, from `basis`: fixed by its definition,
// unlike std::hash, so an NGUID stays the same across builds.
std::uint64_t fnv1a(std::uint64_t basis, const std::string& bytes) {
    std::uint64_t h = basis;
    for (unsigned char ch : bytes) {
        h ^= ch;
        h *= 0x100000001b3ull;
    }
    return h;
}

} // namespace

std::array<std::uint8_t, 16> make_nguid(const std::filesystem::path& backend_path, std::uint32_t fe_nsid) {
    std::string key = backend_path.string();
    key.push_back('\0');
    for (int i = 0; i < 4; ++i) key.push_back(static_cast<char>(fe_nsid >> (8 * i)));
    // A second basis gives the other half, so 16 bytes carry 128 bits of hash.
    const std::uint64_t halves[2] = {fnv1a(0xcbf29ce484222325ull, key), fnv1a(0x84222325cbf29ce4ull, key)};
    std::array<std::uint8_t, 16> out{};
    for (std::size_t i = 0; i < 16; ++i) out[i] = static_cast<std::uint8_t>(halves[i / 8] >> (8 * (i % 8)));
    if (halves[0] == 0 && halves[1] == 0) out[15] = 1;  // all zero means "no NGUID" to a host
    return out;
}

} // namespace rpm::nvmf::detail
