// Uses the installed public API only: the flush decision and a PM region.
#include <rpm/flush.hpp>
#include <rpm/pmem.hpp>

#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
    rpm::flush::Inputs in;
    in.domain.value = rpm::PersistenceDomain::memory_controller;
    in.ddio.value = rpm::Ddio::on;
    auto d = rpm::flush::decide(in);
    if (d.method != rpm::flush::Method::send_flush) return 1;
    if (argc < 2) return 2;
    rpm::pmem::OpenOptions o;
    o.create = true;
    o.size = 1 << 20;
    auto region = rpm::pmem::Region::open(argv[1], o);
    if (!region) {
        std::fprintf(stderr, "%s\n", region.error().message().c_str());
        return 3;
    }
    std::memcpy(region->data(), "hello", 6);
    region->persist(region->data(), 6);
    std::printf("consumer: %s, %s\n", std::string(rpm::flush::to_string(d.method)).c_str(),
                std::string(rpm::pmem::to_string(region->kind())).c_str());
    return 0;
}
