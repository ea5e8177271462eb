// Loading librpm_rocksdb.so registers "rpm://..." with RocksDB's object
// registry, so a tool's --fs_uri (Debian's db_bench, under LD_PRELOAD)
// builds the file system from the URI. The registry lives in the shared
// librocksdb that the tool and this library both link: linking RocksDB
// statically would give the plug-in a registry nobody looks in.
#include "file_system.hpp"

#include <rocksdb/utilities/object_registry.h>

#include <cstdio>

namespace rpm_rocksdb {
namespace {

rocksdb::FileSystem* from_uri(const std::string& uri, std::unique_ptr<rocksdb::FileSystem>* guard, std::string* errmsg) {
    auto o = parse_uri(uri);
    if (!o) {
        *errmsg = o.error().message();
        return nullptr;
    }
    auto fs = make_file_system(*o, nullptr);
    if (!fs) {
        *errmsg = fs.error().message();
        return nullptr;
    }
    // A tool that silently fell back to another file system would measure
    // the wrong thing: this line says the plug-in is in use.
    std::fprintf(stderr, "rpm-rocksdb: %s\n", describe(**fs).c_str());
    *guard = std::move(*fs);
    return guard->get();
}

const bool registered = [] {
    rocksdb::ObjectLibrary::Default()->AddFactory<rocksdb::FileSystem>(
        rocksdb::ObjectLibrary::PatternEntry("rpm", false).AddSeparator("://"), from_uri);
    return true;
}();

} // namespace
} // namespace rpm_rocksdb
