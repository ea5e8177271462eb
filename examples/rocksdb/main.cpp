// rpm-example-rocksdb: RocksDB with its write-ahead log replicated by rpm
// (docs/rocksdb.md). It opens the plug-in's file system over rpm-server
// replicas, opens a DB through it, writes a key with a synced write (which
// returns once a majority of the replicas hold the WAL bytes), reads it
// back and prints what the plug-in did.
//
//   rpm-example-rocksdb --replica 127.0.0.1:7001 --replica 127.0.0.1:7002
//       (continued) --replica 127.0.0.1:7003 --local /dev/shm/wal.pool
//       (continued) --client app --secret-file app.secret --db /tmp/db
//       (continued) --key colour --value blue
//
// Without --value it only reads the key: run it again after deleting the
// DB's *.log files (and the local pool) and the WAL comes back from the
// replicas. Each replica region needs at least the pool size printed on
// the first line. Exits 0 on success, 1 on a failure, 2 on a bad flag.
#include "../../tools/lib/parse_args.hpp"

#include <rpm_rocksdb/file_system.hpp>

#include <rocksdb/db.h>
#include <rocksdb/env.h>

#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>

namespace {

struct Args {
    std::vector<std::string> replicas;  // HOST:PORT
    std::string local, client = "default", secret_file, db, key = "example-key", value;
};

int fail(const std::string& what) {
    std::cerr << "rpm-example-rocksdb: " << what << '\n';
    return 1;
}

// What the plug-in replicates to. parse_uri("rpm://...") builds the same
// from the URI db_bench takes; here every field is spelled out.
rpm_rocksdb::Options plugin_options(const Args& a) {
    std::string secret;
    std::getline(std::ifstream(a.secret_file), secret);
    rpm_rocksdb::Options o;
    for (const auto& host_port : a.replicas) {
        rpm::ReplicaSpec r;
        r.uri = "tcp://" + host_port;  // region "default", as rpm-server's --region default=...
        r.client.client_id = a.client;
        r.client.secret = secret;
        o.replicas.push_back(std::move(r));
    }
    o.local_path = a.local;  // tmpfs or PM: a file on a disk would be msync'd at every Sync
    // Four WAL files of 8 MiB at most, sized for db_options below. A slot
    // holds one WAL file, about one memtable's writes: slot_size >= 2 x
    // write_buffer_size. It is freed when RocksDB deletes the file, after
    // its memtable was flushed: slots >= max_write_buffer_number + 2.
    // A full slot fails the write with NoSpace.
    o.slots = 4;
    o.slot_size = 8u << 20;
    // o.durability stays majority(false): the replicas only, since the
    // node itself is what a crash may take.
    return o;
}

rocksdb::Options db_options(rocksdb::Env* env) {
    rocksdb::Options o;
    o.create_if_missing = true;
    o.env = env;  // every file goes through the plug-in; only WAL files are replicated
    o.write_buffer_size = 4u << 20;
    o.max_write_buffer_number = 2;
    // Writers waiting for a group's leader sleep instead of spinning: the
    // leader's Sync waits on the network, which needs the CPU they would
    // spin on (docs/rocksdb.md, "Tuning").
    o.enable_write_thread_adaptive_yield = false;
    return o;
}

// Put (when there is a value) and Get through the open DB.
int use_db(rocksdb::DB& db, const Args& a) {
    if (!a.value.empty()) {
        rocksdb::WriteOptions w;
        w.sync = true;  // the WAL file's Sync: a commit to a majority of the replicas
        if (auto s = db.Put(w, a.key, a.value); !s.ok()) return fail("put: " + s.ToString());
    }
    std::string got;
    if (auto s = db.Get(rocksdb::ReadOptions(), a.key, &got); !s.ok()) return fail("get " + a.key + ": " + s.ToString());
    std::cout << "read back: " << a.key << " = " << got << '\n';
    return 0;
}

void print_stats(const rocksdb::FileSystem& fs) {
    const auto s = rpm_rocksdb::stats(fs);  // nullopt only for a file system open() did not make
    std::cout << "stats: wal_files=" << s->wal_files << " restored=" << s->restored
              << " restored_bytes=" << s->restored_bytes << " syncs=" << s->syncs << " commits=" << s->commits
              << " freed=" << s->freed << '\n';
}

int run(const Args& a) {
    const auto options = plugin_options(a);
    std::cout << "pool size: " << options.pool_size() << " bytes (each replica region and the local pool)\n";
    // Opening restores every WAL file the replicas hold that is missing or
    // shorter here, before RocksDB lists the DB's folder.
    auto fs = rpm_rocksdb::open(options);
    if (!fs) return fail(fs.error().message());
    std::cout << "rpm-rocksdb: " << rpm_rocksdb::describe(**fs) << '\n';
    // The Env RocksDB takes: the default one's threads and clock, our files.
    const std::unique_ptr<rocksdb::Env> env = rocksdb::NewCompositeEnv(*fs);

    rocksdb::DB* raw = nullptr;
    if (auto s = rocksdb::DB::Open(db_options(env.get()), a.db, &raw); !s.ok()) return fail("open " + a.db + ": " + s.ToString());
    int status = 0;
    {
        const std::unique_ptr<rocksdb::DB> db(raw);  // closed before env and fs go
        status = use_db(*db, a);
    }
    print_stats(**fs);
    return status;
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"rpm-example-rocksdb: a RocksDB whose WAL rpm replicates (docs/rocksdb.md)"};
    Args a;
    app.add_option("--replica", a.replicas, "HOST:PORT of an rpm-server with a region named default (repeat)")
        ->required();
    app.add_option("--local", a.local, "the local pool (tmpfs or PM), created when missing")->required();
    app.add_option("--client", a.client, "client id the servers know");
    app.add_option("--secret-file", a.secret_file, "file whose first line is the secret")
        ->required()->check(CLI::ExistingFile);
    app.add_option("--db", a.db, "the DB's folder")->required();
    app.add_option("--key", a.key, "key to write and read");
    app.add_option("--value", a.value, "value to write (none: only read the key)");
    if (auto done = rpm_tools::parse_args(app, argc, argv)) return *done;
    return run(a);
}
