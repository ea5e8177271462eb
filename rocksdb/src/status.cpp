#include "status.hpp"

namespace rpm_rocksdb {

rocksdb::IOStatus to_io_status(const rpm::Error& e) {
    const std::string msg = "rpm: " + e.message();
    if (e == rpm::errc::fenced) return rocksdb::IOStatus::IOFenced(msg);
    if (e == rpm::errc::bad_size) return rocksdb::IOStatus::NoSpace(msg);
    return rocksdb::IOStatus::IOError(msg);
}

} // namespace rpm_rocksdb
