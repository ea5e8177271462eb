// Writes the seed corpora for the fuzz targets: one valid example of each
// message, in the input layouts fuzz_frames.cpp and fuzz_handshake.cpp
// describe. Usage: make_seeds OUTDIR  (creates OUTDIR/frames, OUTDIR/handshake).
// The committed tests/fuzz/corpus/ is this program's output.
#include "protocol/protocol.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace {
using namespace rpm::proto;
namespace fs = std::filesystem;

void save(const fs::path& file, std::uint8_t selector, std::span<const std::byte> bytes) {
    std::ofstream out(file, std::ios::binary);
    out.put(static_cast<char>(selector));
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

std::span<const std::byte> body(const std::vector<std::byte>& frame) {
    return std::span(frame).subspan(kHeaderSize);
}

struct Sample {
    std::string name;
    std::vector<std::byte> frame;
};

std::vector<Sample> samples() {
    static const std::string data = "0123456789abcdef";
    std::span<const std::byte> d(reinterpret_cast<const std::byte*>(data.data()), data.size());
    std::vector<Sample> s(13);
    encode(s[0].frame, 0, Hello{1, 1, {0x11, 0x22}});
    encode(s[1].frame, 0, Auth{1, "client-1", {0x33}, {0x44}});
    encode(s[2].frame, 0, Welcome{{0x55}, R"({"domain":"memory_controller"})"});
    encode(s[3].frame, 1, OpenRegion{"pool", rpm::flush::Method::send_flush, false});
    RegionGrant g;
    g.id = 1;
    g.size = 1 << 20;
    g.reason = "no ADR: send + flush + deep flush";
    g.rdma_mr = {1, 2, 3};
    encode(s[4].frame, 1, g);
    encode(s[5].frame, 2, Write{1, 64, d});
    encode(s[6].frame, 3, Read{1, 64, 16});
    encode(s[7].frame, 4, AtomicWrite{1, 8, 42});
    encode(s[8].frame, 5, Flush{1, {{0, 64}, {4096, 128}}});
    encode(s[9].frame, 6, Response{0, "", d});
    encode_message(s[10].frame, 7, d);
    encode(s[11].frame, 8, Goodbye{20, "taken over by term 2"});
    encode(s[12].frame, 9, Persist{1, {{0, d.first(12)}, {64, d.last(4)}}});
    const char* names[] = {"hello", "auth", "welcome", "open_region", "region", "write", "read",
                           "atomic_write", "flush", "response", "message", "goodbye", "persist"};
    for (std::size_t i = 0; i < s.size(); ++i) s[i].name = names[i];
    return s;
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
        return 2;
    }
    const fs::path frames = fs::path(argv[1]) / "frames";
    const fs::path handshake = fs::path(argv[1]) / "handshake";
    fs::create_directories(frames);
    fs::create_directories(handshake);
    auto all = samples();
    std::vector<std::byte> stream;
    for (std::size_t i = 0; i < all.size(); ++i) {
        const auto type = std::to_integer<std::uint8_t>(all[i].frame[4]);  // the header's type byte
        save(frames / ("body-" + all[i].name), type, body(all[i].frame));
        // Selector 0x30 | type: the frame itself, read 4 bytes at a time.
        save(frames / ("frame-" + all[i].name), static_cast<std::uint8_t>(0x30 | type), all[i].frame);
        if (i < 5) save(handshake / all[i].name, static_cast<std::uint8_t>(i), body(all[i].frame));
        stream.insert(stream.end(), all[i].frame.begin(), all[i].frame.end());
    }
    save(frames / "stream-all", 0x70, stream);  // every frame, 8-byte chunks
    return 0;
}
