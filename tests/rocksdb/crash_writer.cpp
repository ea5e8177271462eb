// The crash test's RocksDB program (crash_test.sh): `write URI DB` puts
// key0, key1, ... with sync=true through the plug-in and prints "ack N"
// once put N returned OK, until it is killed (or 200000 puts);
// `verify URI DB N` opens the DB through the plug-in (which restores the
// WAL files from the replicas) and prints how many of key0..key(N-1) are
// missing, exiting 1 when any is.
#include "rpm_rocksdb/file_system.hpp"

#include <rocksdb/db.h>
#include <rocksdb/env.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

struct Opened {
    std::unique_ptr<rocksdb::Env> env;
    std::unique_ptr<rocksdb::DB> db;
};

Opened open_db(const char* uri, const char* path) {
    auto o = rpm_rocksdb::parse_uri(uri);
    if (!o) std::fprintf(stderr, "crash_writer: %s\n", o.error().message().c_str()), std::exit(2);
    auto fs = rpm_rocksdb::open(std::move(*o));
    if (!fs) std::fprintf(stderr, "crash_writer: %s\n", fs.error().message().c_str()), std::exit(2);
    const auto st = rpm_rocksdb::stats(**fs);
    std::fprintf(stderr, "crash_writer: restored %llu WAL files\n", static_cast<unsigned long long>(st->restored));
    Opened out;
    out.env = rocksdb::NewCompositeEnv(*fs);
    rocksdb::Options options;
    options.create_if_missing = true;
    options.env = out.env.get();
    rocksdb::DB* db = nullptr;
    const auto s = rocksdb::DB::Open(options, path, &db);
    if (!s.ok()) std::fprintf(stderr, "crash_writer: open: %s\n", s.ToString().c_str()), std::exit(2);
    out.db.reset(db);
    return out;
}

int write(const char* uri, const char* path) {
    auto d = open_db(uri, path);
    rocksdb::WriteOptions w;
    w.sync = true;
    for (int i = 0; i < 200000; ++i) {
        const auto s = d.db->Put(w, "key" + std::to_string(i), "value" + std::to_string(i));
        if (!s.ok()) return std::fprintf(stderr, "crash_writer: put %d: %s\n", i, s.ToString().c_str()), 1;
        std::printf("ack %d\n", i);
        std::fflush(stdout);
    }
    return 0;
}

int verify(const char* uri, const char* path, int n) {
    auto d = open_db(uri, path);
    int missing = 0;
    for (int i = 0; i < n; ++i) {
        std::string v;
        const auto s = d.db->Get(rocksdb::ReadOptions(), "key" + std::to_string(i), &v);
        if (!s.ok() || v != "value" + std::to_string(i)) ++missing;
    }
    std::printf("missing %d of %d\n", missing, n);
    return missing == 0 ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "write" && argc == 4) return write(argv[2], argv[3]);
    if (mode == "verify" && argc == 5) return verify(argv[2], argv[3], std::atoi(argv[4]));
    std::fprintf(stderr, "usage: crash_writer write URI DB | verify URI DB N\n");
    return 2;
}
