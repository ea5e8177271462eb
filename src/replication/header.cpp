// Encoding of the member header: little-endian fields at fixed offsets.
#include "replication/header.hpp"

#include <openssl/rand.h>

#include <cstdlib>
#include <cstring>

namespace rpm::replication {
namespace {

std::uint64_t load64(std::span<const std::byte> p, std::size_t off) noexcept {
    std::uint64_t v;
    std::memcpy(&v, p.data() + off, 8);
    return v;
}

void store64(std::byte* p, std::size_t off, std::uint64_t v) noexcept { std::memcpy(p + off, &v, 8); }

} // namespace

DecodedHeader decode_header(std::span<const std::byte> page) noexcept {
    DecodedHeader d;
    if (page.size() < kHeaderBytes || load64(page, kOffMagic) != kHeaderMagic) return d;
    if (static_cast<std::uint32_t>(load64(page, kOffVersion)) != kHeaderVersion) return d;
    std::memcpy(d.h.group.data(), page.data() + kOffGroup, d.h.group.size());
    d.h.generation = load64(page, kOffGeneration);
    d.h.high_water = load64(page, kOffHighWater);
    d.h.position = load64(page, kOffPosition);
    d.h.data_size = load64(page, kOffDataSize);
    d.valid = true;
    return d;
}

std::array<std::byte, kHeaderBytes> encode_header(const Header& h) noexcept {
    std::array<std::byte, kHeaderBytes> out{};
    store64(out.data(), kOffMagic, kHeaderMagic);
    store64(out.data(), kOffVersion, kHeaderVersion);
    std::memcpy(out.data() + kOffGroup, h.group.data(), h.group.size());
    store64(out.data(), kOffGeneration, h.generation);
    store64(out.data(), kOffHighWater, h.high_water);
    store64(out.data(), kOffPosition, h.position);
    store64(out.data(), kOffDataSize, h.data_size);
    return out;
}

GroupId random_group() {
    GroupId g{};
    // OpenSSL is already linked for the handshake; a failure of the CSPRNG
    // leaves nothing sensible to do.
    if (RAND_bytes(reinterpret_cast<unsigned char*>(g.data()), static_cast<int>(g.size())) != 1) std::abort();
    return g;
}

bool is_zero(const GroupId& g) noexcept {
    for (auto b : g)
        if (b != std::byte{0}) return false;
    return true;
}

} // namespace rpm::replication
