#include "pm_model_crash.hpp"

#include "pm_model_oracle.hpp"
#include "pm_model_rng.hpp"
#include "pm_model_server.hpp"

#include "transport/rdma/flush_ranges.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace rpm::test {
namespace {

using server::Range;
using server::TransportKind;

constexpr std::uint64_t kMaxWrite = 512;

// The client's half: what a transport does for each operation of the API.
class SimClient {
public:
    SimClient(ModelServer& server, const CrashCell& cell)
        : server_(server), model_(server.model()), kind_(cell.kind), method_(server.grant().method),
          skip_flush_(cell.skip_flush), short_ranges_(cell.short_ranges), flush_refused_(cell.flush_refused) {}

    Result<void> write(std::uint64_t offset, std::span<const std::byte> data) {
        if (kind_ == TransportKind::tcp) return server_.write(offset, data);
        model_.nic_write(offset, data);
        return {};
    }

    Result<void> atomic_write(std::uint64_t offset, std::uint64_t value) {
        if (kind_ == TransportKind::tcp) return server_.atomic_write(offset, value);
        std::byte bytes[8];
        std::memcpy(bytes, &value, sizeof bytes);
        model_.nic_write(offset, bytes);  // aligned and 8 bytes: one word, never torn
        return {};
    }

    Result<void> flush(std::span<const Range> ranges) {
        if (skip_flush_) return {};
        if (kind_ == TransportKind::tcp) return server_.flush(named(ranges));
        switch (method_) {
        case flush::Method::read_after_write:
            model_.nic_read();
            return {};
        case flush::Method::send_flush:
            model_.nic_receive();
            return server_.flush(named(ranges));
        case flush::Method::native_flush: return native_flush(named(ranges));
        }
        return {};
    }

    // What a transport does for RemoteRegion::persist(slices).
    Result<void> persist(std::span<const proto::Slice> slices) {
        if (kind_ == TransportKind::tcp && !skip_flush_) return server_.persist(slices);
        std::vector<Range> ranges;
        for (const auto& s : slices) {
            if (auto r = write(s.offset, s.data); !r) return r;
            ranges.push_back({s.offset, s.data.size()});
        }
        return flush(ranges);
    }

private:
    // What rdma:// puts on the wire for a native flush (flusher.cpp):
    // one FLUSH per range, adjacent and overlapping ranges joined, each
    // taking its lines to media at the responder. A FLUSH the responder
    // refuses (a control: memory registered without persistent FLUSH)
    // completes in error: nothing moves and the flush fails, as the
    // persist does over rdma:// (RC then fails the connection; the model
    // needs only that nothing was acknowledged).
    Result<void> native_flush(std::span<const Range> ranges) {
        if (flush_refused_) return Error(errc::io_error, "work request failed: remote access error");
        std::vector<Range> room(ranges.size());
        for (const auto& r : rdma::merge_flush_ranges(ranges, room)) model_.nic_native_flush(r.offset, r.length);
        return {};
    }

    // The ranges the flush request names: the written ones, or (as a
    // negative control) each one byte short.
    std::vector<Range> named(std::span<const Range> ranges) const {
        std::vector<Range> out(ranges.begin(), ranges.end());
        if (short_ranges_)
            for (auto& r : out) r.length -= 1;
        return out;
    }

    ModelServer& server_;
    PersistenceModel& model_;
    TransportKind kind_;
    flush::Method method_;
    bool skip_flush_;
    bool short_ranges_;
    bool flush_refused_;
};

std::vector<std::byte> random_bytes(ModelRng& rng, std::size_t n) {
    std::vector<std::byte> out(n);
    for (std::size_t i = 0; i < n; i += 8) {
        const std::uint64_t v = rng.next();
        std::memcpy(out.data() + i, &v, std::min<std::size_t>(8, n - i));
    }
    return out;
}

// One run: random ops until the crash, then the verdict.
class Run {
public:
    Run(const CrashCell& cell, ModelServer& server, ModelRng& rng, DurabilityOracle& oracle, CrashReport& rep)
        : cell_(cell), server_(server), client_(server, cell), rng_(rng), oracle_(oracle),
          rep_(rep) {}

    void execute() {
        const std::uint64_t ops = rng_.between(1, 2 * std::uint64_t{cell_.mean_ops} - 1);
        for (std::uint64_t i = 0; i < ops; ++i) {
            step();
            server_.model().drift(static_cast<unsigned>(rng_.below(3)));
        }
        rep_.ops += ops;
        check_reads();
        crash();
    }

private:
    void step() {
        const auto dice = rng_.below(100);
        if (dice >= 65 && !pending_.empty()) return flush();
        if (dice >= 55) return atomic_write();
        if (dice >= 45) return persist();
        write();
    }

    // A record and its commit word, or a few scattered pieces, made durable
    // by one persist.
    void persist() {
        const std::uint64_t size = server_.model().size();
        const std::uint64_t n = rng_.between(1, 3);
        std::vector<std::vector<std::byte>> datas;
        std::vector<proto::Slice> slices;
        for (std::uint64_t i = 0; i < n; ++i) {
            const std::uint64_t len = rng_.percent(25) ? rng_.between(1, 16) : rng_.between(1, kMaxWrite);
            const std::uint64_t off = rng_.below(size - len + 1);
            datas.push_back(random_bytes(rng_, len));
            slices.push_back({off, datas.back()});
        }
        const bool ok = static_cast<bool>(client_.persist(slices));
        // A persist whose flush failed (a refused FLUSH) still wrote: its
        // bytes may be found, but none is acknowledged.
        for (const auto& s : slices) oracle_.wrote(s.offset, s.data);
        if (!ok) return void(++rep_.server_errors);
        std::vector<Range> ranges;
        for (const auto& s : slices) {
            ranges.push_back({s.offset, s.data.size()});
            rep_.bytes_written += s.data.size();
            rep_.bytes_acknowledged += s.data.size();
        }
        oracle_.acknowledged(ranges);
        ++rep_.persists;
    }

    void write() {
        const std::uint64_t size = server_.model().size();
        // A quarter of the writes are small, so that words get shared.
        const std::uint64_t len = rng_.percent(25) ? rng_.between(1, 16) : rng_.between(1, kMaxWrite);
        const std::uint64_t off = rng_.below(size - len + 1);
        const auto data = random_bytes(rng_, len);
        if (!client_.write(off, data)) return void(++rep_.server_errors);
        oracle_.wrote(off, data);
        pending_.push_back({off, len});
        ++rep_.writes;
        rep_.bytes_written += len;
    }

    void atomic_write() {
        const std::uint64_t off = rng_.below(server_.model().size() / 8) * 8;
        const std::uint64_t value = rng_.next();
        if (!client_.atomic_write(off, value)) return void(++rep_.server_errors);
        std::byte bytes[8];
        std::memcpy(bytes, &value, sizeof bytes);
        oracle_.wrote(off, bytes);
        pending_.push_back({off, 8});
        ++rep_.atomic_writes;
        rep_.bytes_written += 8;
    }

    // Usually everything written since the last flush; sometimes only the
    // newest range, leaving older writes unacknowledged (the oracle must not
    // credit them, and a method must not depend on them being flushed).
    void flush() {
        std::vector<Range> ranges;
        if (pending_.size() == 1 || rng_.percent(75)) {
            ranges.swap(pending_);
        } else {
            ranges.push_back(pending_.back());
            pending_.pop_back();
        }
        if (!client_.flush(ranges)) return void(++rep_.server_errors);
        oracle_.acknowledged(ranges);
        ++rep_.flushes;
        for (const auto& r : ranges) rep_.bytes_acknowledged += r.length;
    }

    // Before the power fails a reader must see every write: checks that the
    // handlers applied the bytes where the client asked (a CPU load, which
    // moves nothing, unlike an RDMA read).
    void check_reads() {
        std::vector<std::byte> seen(server_.model().size());
        if (!server_.read(0, seen)) return void(++rep_.server_errors);
        const auto& want = oracle_.newest();
        for (std::size_t i = 0; i < seen.size(); ++i)
            if (seen[i] != want[i]) ++rep_.read_mismatches;
    }

    void crash() {
        const auto image = server_.model().crash();
        const std::uint64_t lost = oracle_.lost_bytes(image);
        ++rep_.crashes;
        rep_.lost_bytes += lost;
        if (lost) ++rep_.runs_with_loss;
        rep_.torn_words += server_.model().stats().torn_words;
        rep_.drifted_lines += server_.model().stats().drifted_lines;
    }

    const CrashCell& cell_;
    ModelServer& server_;
    SimClient client_;
    ModelRng& rng_;
    DurabilityOracle& oracle_;
    CrashReport& rep_;
    std::vector<Range> pending_;  // written since their last flush
};

ModelServerOptions server_options(const CrashCell& cell, std::uint64_t seed) {
    ModelServerOptions o;
    o.model.domain = cell.domain;
    o.model.ddio = cell.ddio;
    o.model.size = cell.region_size;
    o.model.seed = seed;
    o.native_flush = cell.native_flush;
    o.kind = cell.kind;
    o.force_method = cell.force_method;
    return o;
}

const char* kind_name(TransportKind k) { return k == TransportKind::tcp ? "tcp" : "rdma"; }

} // namespace

CrashReport run_crash_cell(const CrashCell& cell) {
    CrashReport rep;
    ModelRng rng(cell.seed);
    DurabilityOracle oracle;
    for (unsigned i = 0; i < cell.runs; ++i) {
        auto server = ModelServer::start(server_options(cell, rng.fork()));
        if (!server) {
            rep.setup_error = server.error().message();
            return rep;
        }
        ModelServer& s = **server;
        if (cell.force_step) s.override_step(*cell.force_step);
        rep.method = s.grant().method;
        rep.step = s.grant().server_persist;
        rep.reason = s.grant().reason;

        // Contents that were durable before the run: random, so a crash
        // that falls back to them is visible.
        const auto initial = random_bytes(rng, s.model().size());
        s.model().preset(0, initial);
        oracle.reset(initial);

        Run(cell, s, rng, oracle, rep).execute();
        ++rep.runs;
    }
    return rep;
}

std::string summary(const CrashCell& cell, const CrashReport& r) {
    std::string s = cell.name + " [" + kind_name(cell.kind) + ", domain " + std::string(to_string(cell.domain)) +
                    ", DDIO " + std::string(to_string(cell.ddio)) + "]: " +
                    std::string(flush::to_string(r.method)) + " + server " + std::string(flush::to_string(r.step));
    if (cell.skip_flush) s += " (flush skipped)";
    if (cell.short_ranges) s += " (ranges one byte short)";
    if (cell.flush_refused) s += " (every FLUSH refused)";
    s += "; " + std::to_string(r.runs) + " runs, " + std::to_string(r.ops) + " ops (" + std::to_string(r.writes) +
         " writes, " + std::to_string(r.atomic_writes) + " atomic, " + std::to_string(r.flushes) + " flushes, " +
         std::to_string(r.persists) + " persists), " +
         std::to_string(r.crashes) + " crashes, " + std::to_string(r.torn_words) + " torn words; lost " +
         std::to_string(r.lost_bytes) + " bytes in " + std::to_string(r.runs_with_loss) + " runs";
    return s;
}

flush::Decision detected_decision(PersistenceDomain domain, Ddio ddio, bool native_flush) {
    flush::Inputs in;
    in.domain = {domain, flush::Source::detected, "test"};
    in.ddio = {ddio, flush::Source::detected, "test"};
    in.native_flush = {native_flush, flush::Source::detected, "test"};
    return flush::decide(in);
}

} // namespace rpm::test
