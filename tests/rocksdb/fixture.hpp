// RocksDB over the plug-in against three in-process rpm servers on
// 127.0.0.1 (the replicator tests' nodes): a DB whose WAL the servers hold.
#pragma once

#include "file_system.hpp"
#include "replication/nodes.hpp"

#include <rocksdb/db.h>
#include <rocksdb/env.h>

#include <unistd.h>

namespace rpm_rocksdb::test {

using rpm::test::ReplicaNode;

class RocksdbTest : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/dev/shm/rpm-rocksdb-test.XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        db_path_ = (dir_ / "db").string();
        for (int i = 0; i < 3; ++i) {
            nodes_.push_back(std::make_unique<ReplicaNode>(dir_, "node" + std::to_string(i), options().pool_size()));
            nodes_.back()->start();
        }
    }
    void TearDown() override {
        close();
        nodes_.clear();
        std::filesystem::remove_all(dir_);
    }

    Options options() const {
        Options o;
        for (const auto& n : nodes_) o.replicas.push_back(rpm::test::spec_for(n->uri()));
        o.local_path = dir_ / "wal.pool";
        o.slots = 4;
        o.slot_size = 1u << 20;
        o.failure_timeout = std::chrono::milliseconds(500);
        return o;
    }
    /// The plug-in over the nodes alone.
    void open_fs(Options o) {
        auto fs = rpm_rocksdb::open(std::move(o));
        ASSERT_TRUE(fs) << fs.error().message();
        fs_ = *fs;
    }
    /// The plug-in over the nodes, and a DB through it.
    void open(Options o) {
        open_fs(std::move(o));
        if (!fs_) return;
        env_ = rocksdb::NewCompositeEnv(fs_);
        rocksdb::Options db_options;
        db_options.create_if_missing = true;
        db_options.env = env_.get();
        rocksdb::DB* db = nullptr;
        auto s = rocksdb::DB::Open(db_options, db_path_, &db);
        ASSERT_TRUE(s.ok()) << s.ToString();
        db_.reset(db);
    }
    void open() { open(options()); }
    /// RocksDB closes without flushing its memtable (the WAL holds it).
    void close() {
        db_.reset();
        env_.reset();
        fs_.reset();
    }
    /// What a crash of the node takes: its unsynced WAL files, and with
    /// `pool` the local copy of the replicated data too.
    void lose_local(bool pool) {
        for (const auto& e : std::filesystem::directory_iterator(db_path_))
            if (is_wal(e.path().string())) std::filesystem::remove(e.path());
        if (pool) std::filesystem::remove(dir_ / "wal.pool");
    }
    rocksdb::Status put(int i, const std::string& value = "value") {
        rocksdb::WriteOptions w;
        w.sync = true;
        return db_->Put(w, key(i), value + std::to_string(i));
    }
    static std::string key(int i) { return "key" + std::to_string(i); }
    /// How many of keys [0, n) the DB does not have.
    int missing(int n) {
        int lost = 0;
        for (int i = 0; i < n; ++i) {
            std::string v;
            if (!db_->Get(rocksdb::ReadOptions(), key(i), &v).ok()) ++lost;
        }
        return lost;
    }
    Stats stats() const { return *rpm_rocksdb::stats(*fs_); }

    std::filesystem::path dir_;
    std::string db_path_;
    std::vector<std::unique_ptr<ReplicaNode>> nodes_;
    std::shared_ptr<rocksdb::FileSystem> fs_;
    std::unique_ptr<rocksdb::Env> env_;
    std::unique_ptr<rocksdb::DB> db_;
};

} // namespace rpm_rocksdb::test
