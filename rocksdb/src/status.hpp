// rpm's errors as RocksDB's: the code picks the IOStatus kind, the message
// carries rpm's detail, so RocksDB's background error and its LOG say why.
#pragma once

#include <rpm/error.hpp>

#include <rocksdb/io_status.h>

namespace rpm_rocksdb {

/// errc::fenced → IOFenced (another writer took over: never retry);
/// errc::bad_size → NoSpace (a slot or the slots are full); anything else
/// → IOError. The message is "rpm: " and rpm::Error::message().
rocksdb::IOStatus to_io_status(const rpm::Error& e);

} // namespace rpm_rocksdb
