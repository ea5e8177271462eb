// The plug-in's URI and its names for WAL files: what parses, and the one
// clear line for what does not.
#include "file_system.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>

namespace rpm_rocksdb {
namespace {

std::string detail_of(std::string_view uri) {
    auto o = parse_uri(uri);
    return o ? std::string("parsed") : o.error().message();
}

TEST(RocksdbUri, ReplicasKeysAndDefaults) {
    char tmpl[] = "/tmp/rpm-rocksdb-secret.XXXXXX";
    const int fd = ::mkstemp(tmpl);
    ASSERT_GE(fd, 0);
    ::close(fd);
    std::ofstream(tmpl) << "s3cret\n";
    auto o = parse_uri(std::string("rpm://10.0.0.1:7001,h2:7002/wal?local=/dev/shm/p&slots=3&slot_size=2M&durability=2-local"
                                   "&client=db1&secret_file=") + tmpl + "&fencing_term=9&failure_timeout_ms=250");
    std::filesystem::remove(tmpl);
    ASSERT_TRUE(o) << o.error().message();
    ASSERT_EQ(o->replicas.size(), 2u);
    EXPECT_EQ(o->replicas[0].uri, "tcp://10.0.0.1:7001");
    EXPECT_EQ(o->replicas[0].region, "default");
    EXPECT_EQ(o->replicas[1].uri, "tcp://h2:7002");
    EXPECT_EQ(o->replicas[1].region, "wal");
    EXPECT_EQ(o->replicas[1].client.client_id, "db1");
    EXPECT_EQ(o->replicas[1].client.secret, "s3cret");
    EXPECT_EQ(o->local_path, "/dev/shm/p");
    EXPECT_EQ(o->slots, 3u);
    EXPECT_EQ(o->slot_size, 2u << 20);
    EXPECT_EQ(o->durability.kind, rpm::Durability::Kind::k_of_n);
    EXPECT_EQ(o->durability.k, 2u);
    EXPECT_FALSE(o->durability.include_local);
    EXPECT_EQ(o->fencing_term, 9u);
    EXPECT_EQ(o->failure_timeout, std::chrono::milliseconds(250));
    EXPECT_EQ(o->pool_size(), 4096u + 4096u + 3u * (2u << 20));

    auto d = parse_uri("rpm://h:1?local=/x&transport=rdma");
    ASSERT_TRUE(d) << d.error().message();
    EXPECT_EQ(d->replicas[0].uri, "rdma://h:1");
    EXPECT_EQ(d->durability.kind, rpm::Durability::Kind::majority);
    EXPECT_FALSE(d->durability.include_local) << "the node itself may be the one lost";
    EXPECT_EQ(d->slots, 8u);
}

TEST(RocksdbUri, EachMistakeIsNamed) {
    EXPECT_NE(detail_of("file:///x").find("must start with rpm://"), std::string::npos);
    EXPECT_NE(detail_of("rpm://?local=/x").find("is not HOST:PORT"), std::string::npos);
    EXPECT_NE(detail_of("rpm://h?local=/x").find("'h' is not HOST:PORT"), std::string::npos);
    EXPECT_NE(detail_of("rpm://h:0?local=/x").find("port from 1 to 65535"), std::string::npos);
    EXPECT_NE(detail_of("rpm://h:99999?local=/x").find("port from 1 to 65535"), std::string::npos);
    EXPECT_NE(detail_of("rpm://h:1").find("local=PATH"), std::string::npos);
    EXPECT_NE(detail_of("rpm://h:1?local=/x&colour=red").find("unknown key 'colour'"), std::string::npos);
    EXPECT_NE(detail_of("rpm://h:1?local=/x&slots=0").find("slots must be from 1"), std::string::npos);
    EXPECT_NE(detail_of("rpm://h:1?local=/x&slots=two").find("slots=two is not a number"), std::string::npos);
    EXPECT_NE(detail_of("rpm://h:1?local=/x&slot_size=1K").find("at least 64K"), std::string::npos);
    EXPECT_NE(detail_of("rpm://h:1?local=/x&slot_size=65540").find("multiple of 8"), std::string::npos);
    EXPECT_NE(detail_of("rpm://h:1?local=/x&durability=most").find("most"), std::string::npos);
    EXPECT_NE(detail_of("rpm://h:1?local=/x&transport=udp").find("tcp or rdma"), std::string::npos);
    EXPECT_NE(detail_of("rpm://h:1?local=/x;id=y").find("';'"), std::string::npos);
    EXPECT_NE(detail_of("rpm://h:1?local").find("not KEY=VALUE"), std::string::npos);
    EXPECT_NE(detail_of("rpm://h:1?local=/x&secret_file=/nonexistent/s").find("cannot be read"), std::string::npos);
    auto missing = parse_uri("rpm://h:1?local=/x&secret_file=/nonexistent/s");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error(), rpm::errc::path_not_found);
    EXPECT_EQ(parse_uri("rpm://h:1?local=/x&tls=2").error(), rpm::errc::invalid_argument);
}

TEST(RocksdbWalNames, DigitsDotLogOnly) {
    EXPECT_TRUE(is_wal("/db/000012.log"));
    EXPECT_TRUE(is_wal("000012.log"));
    EXPECT_TRUE(is_wal("/db/archive/7.log"));
    EXPECT_FALSE(is_wal("/db/LOG"));
    EXPECT_FALSE(is_wal("/db/LOG.old.1669"));
    EXPECT_FALSE(is_wal("/db/.log"));
    EXPECT_FALSE(is_wal("/db/12a.log"));
    EXPECT_FALSE(is_wal("/db/000012.sst"));
    EXPECT_FALSE(is_wal("/db/000012.log.trash"));
    EXPECT_EQ(wal_key("/db/./x/../000001.log"), "/db/000001.log");
    EXPECT_EQ(wal_key("rel/000001.log"), (std::filesystem::current_path() / "rel/000001.log").string());
}

} // namespace
} // namespace rpm_rocksdb
