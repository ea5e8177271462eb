// The host's connect sequence, as the Linux host runs it: Connect the admin
// queue (dynamic controller), read CAP, set CC (EN, IOSQES 6, IOCQES 4),
// wait for CSTS.RDY, Identify Controller, then for an NVM subsystem ask for
// one I/O queue and Connect it.
#include "nvmf/host/impl.hpp"

#include <functional>
#include <thread>

namespace rpm::nvmf::host {

namespace {

// The admin queue's entries (the Linux host's NVME_AQ_DEPTH).
constexpr std::uint16_t admin_depth = 32;

std::string status_text(const Completion& c) { return describe_status(c.status); }

Result<std::uint64_t> value_or_status(Result<Completion> c, const std::string& what) {
    if (!c) return c.error();
    if (c->status) return Error(errc::nvme_status, what + ": " + status_text(*c));
    return std::uint64_t(c->dw0) | std::uint64_t(c->dw1) << 32;
}

Result<void> wait_ready(Queue& admin, std::uint64_t cap) {
    // CAP.TO is the worst case in 500 ms units.
    const auto limit = std::chrono::milliseconds(500 * std::max<std::uint64_t>((cap >> 24) & 0xFF, 1));
    const auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
        auto csts = property_get(admin, wire::prop::csts, false);
        if (!csts) return csts.error();
        if (*csts & 0x2) return Error(errc::nvme_status, "controller fatal status (CSTS.CFS) while enabling");
        if (*csts & 0x1) return {};
        if (std::chrono::steady_clock::now() > deadline) return Error(errc::io_error, "CSTS.RDY not set within CAP.TO");
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

Result<void> identify_controller(Host::Impl& h) {
    std::vector<std::byte> id(4096);
    wire::Sqe s;
    s.set_opcode(wire::admin::identify);
    s.set_cdw(10, wire::cns::ctrl);
    if (auto ok = h.check(h.admin->submit(s, {}, id), "Identify Controller"); !ok) return ok;
    h.info = parse_identify_controller({reinterpret_cast<const std::uint8_t*>(id.data()), id.size()}, h.mps);
    return {};
}

Result<void> open_io_queue(Host::Impl& h, std::uint64_t cap) {
    wire::Sqe s;
    s.set_opcode(wire::admin::set_features);
    s.set_cdw(10, wire::fid::num_queues);
    s.set_cdw(11, 0);  // one submission and one completion queue (0's based)
    if (auto ok = h.check(h.admin->submit(s, {}, {}), "Set Features (Number of Queues)"); !ok) return ok;
    const auto mqes = std::uint16_t(cap & 0xFFFF);  // 0's based
    const auto sqsize = std::uint16_t(std::min<std::uint32_t>(h.options.queue_size - 1u, mqes));
    auto q = Queue::open(h.options, 1, std::uint16_t(sqsize + 1));
    if (!q) return q.error();
    (*q)->set_in_capsule_limit(h.info.in_capsule_data);
    auto c = connect_queue(**q, h.options, 1, sqsize, h.info.cntlid);
    if (auto ok = h.check(c, "Connect (I/O queue 1)"); !ok) return ok;
    if (c->dw0 & wire::connect_authreq_atr)
        if (auto ok = authenticate(**q, h.options, 1); !ok) return ok;
    h.io = std::move(*q);
    return {};
}

} // namespace

Result<std::uint64_t> property_get(Queue& admin, std::uint32_t offset, bool wide) {
    wire::Sqe s;
    s.set_opcode(wire::admin::fabrics);
    s.set_fctype(wire::fctype::property_get);
    s.b[40] = wide ? 1 : 0;
    wire::put32(&s.b[44], offset);
    return value_or_status(admin.submit(s, {}, {}), "Property Get " + std::to_string(offset));
}

Result<void> property_set(Queue& admin, std::uint32_t offset, std::uint64_t value, bool wide) {
    wire::Sqe s;
    s.set_opcode(wire::admin::fabrics);
    s.set_fctype(wire::fctype::property_set);
    s.b[40] = wide ? 1 : 0;
    wire::put32(&s.b[44], offset);
    wire::put64(&s.b[48], value);
    auto v = value_or_status(admin.submit(s, {}, {}), "Property Set " + std::to_string(offset));
    if (!v) return v.error();
    return {};
}

Result<Completion> connect_queue(Queue& q, const HostOptions& o, std::uint16_t qid, std::uint16_t sqsize,
                                 std::uint16_t cntlid) {
    wire::Sqe s;
    s.set_opcode(wire::admin::fabrics);
    s.set_fctype(wire::fctype::connect);
    wire::put16(&s.b[42], qid);
    wire::put16(&s.b[44], sqsize);
    wire::put32(&s.b[48], qid == 0 ? o.kato_ms : 0);
    std::array<std::uint8_t, wire::connect_data_len> data{};
    // A host identifier stable for the host NQN: the NVMe-oF spec asks for
    // one per host, and targets use it to tell hosts apart.
    const auto h = std::hash<std::string>{}(o.hostnqn);
    wire::put64(&data[0], h);
    wire::put64(&data[8], h * 0x9E3779B97F4A7C15ull);
    wire::put16(&data[16], cntlid);
    std::copy_n(o.subnqn.begin(), std::min<std::size_t>(o.subnqn.size(), 255), data.begin() + 256);
    std::copy_n(o.hostnqn.begin(), std::min<std::size_t>(o.hostnqn.size(), 255), data.begin() + 512);
    return q.submit(s, std::as_bytes(std::span(data)), {});
}

Result<std::unique_ptr<Queue>> open_admin(const HostOptions& o, std::uint16_t& cntlid) {
    auto q = Queue::open(o, 0, admin_depth);
    if (!q) return q.error();
    auto c = connect_queue(**q, o, 0, admin_depth - 1, wire::dynamic_cntlid);
    if (!c) return c.error();
    if (c->status) return Error(errc::nvme_status, "Connect to '" + o.subnqn + "' refused: " + status_text(*c));
    cntlid = std::uint16_t(c->dw0 & 0xFFFF);
    if (c->dw0 & wire::connect_authreq_atr)
        if (auto ok = authenticate(**q, o, 0); !ok) return ok.error();
    auto cap = property_get(**q, wire::prop::cap, true);
    if (!cap) return cap.error();
    // EN, CSS NVM, MPS 4 KiB, IOSQES 2^6, IOCQES 2^4.
    if (auto ok = property_set(**q, wire::prop::cc, 1u | 6u << 16 | 4u << 20, false); !ok) return ok.error();
    if (auto ok = wait_ready(**q, *cap); !ok) return ok.error();
    return q;
}

Result<void> bring_up(Host::Impl& h) {
    std::uint16_t cntlid = 0;
    auto admin = open_admin(h.options, cntlid);
    if (!admin) return admin.error();
    h.admin = std::move(*admin);
    auto cap = property_get(*h.admin, wire::prop::cap, true);
    if (!cap) return cap.error();
    h.mps = 4096u << ((*cap >> 48) & 0xF);
    if (auto ok = identify_controller(h); !ok) return ok;
    if (h.info.cntlid != cntlid) return Error(errc::protocol_error, "Identify cntlid differs from Connect's");
    return open_io_queue(h, *cap);
}

} // namespace rpm::nvmf::host
