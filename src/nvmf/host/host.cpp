// rpm::nvmf::Host: the connect sequence a Linux host follows (admin queue
// Connect, CAP, CC.EN, CSTS.RDY, Identify, Number of Queues, I/O queue
// Connect), I/O on queue 1, and a keep-alive thread at half the KATO.
#include "nvmf/host/impl.hpp"

#include <thread>

namespace rpm::nvmf {

using host::Queue;

Host::Host(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Host::Host(Host&&) noexcept = default;
Host& Host::operator=(Host&&) noexcept = default;
Host::~Host() = default;

// A moved-from Host has no impl_: it reports a default controller and no
// status (its Result calls refuse, see host::moved_from_host).
const ControllerInfo& Host::controller() const noexcept {
    static const ControllerInfo none;
    return impl_ ? impl_->info : none;
}
std::uint16_t Host::last_status() const noexcept { return impl_ ? impl_->last_status : 0; }

Host::Impl::~Impl() {
    {
        std::lock_guard lock(mu);
        stopping = true;
    }
    cv.notify_all();
    if (keep_alive_thread.joinable()) keep_alive_thread.join();
    // A normal shutdown (CC.SHN = 01) tells the controller we are done;
    // failures here change nothing for the caller.
    if (admin && !admin->broken()) {
        auto cc = host::property_get(*admin, wire::prop::cc, false);
        if (cc) (void)host::property_set(*admin, wire::prop::cc, (*cc & ~0xC000u) | 0x4000u, false);
    }
}

void Host::Impl::keep_alive_loop() {
    const auto period = std::chrono::milliseconds(std::max<std::uint32_t>(options.kato_ms / 2, 100));
    std::unique_lock lock(mu);
    while (!stopping) {
        if (cv.wait_for(lock, period, [this] { return stopping; })) break;
        lock.unlock();
        wire::Sqe s;
        s.set_opcode(wire::admin::keep_alive);
        (void)admin->submit(s, {}, {});
        lock.lock();
    }
}

Result<Host> Host::connect(const HostOptions& options) {
    if (options.subnqn.empty()) return Error(errc::invalid_argument, "no subsystem NQN to connect to");
    if (options.queue_size < 2) return Error(errc::invalid_argument, "queue_size must be >= 2");
    if (options.timeout.count() <= 0) return Error(errc::invalid_argument, "timeout must be positive");
    auto impl = std::make_unique<Impl>();
    impl->options = options;
    if (auto ok = host::bring_up(*impl); !ok) return ok.error();
    if (options.kato_ms) {
        auto* d = impl.get();
        d->keep_alive_thread = std::thread([d] { d->keep_alive_loop(); });
    }
    return Host(std::move(impl));
}

Result<Completion> Host::raw(std::uint16_t qid, std::span<const std::uint8_t, 64> sqe,
                             std::span<const std::byte> out_data, std::span<std::byte> in_data) {
    if (!impl_) return host::moved_from_host("raw");
    if (qid > 1) return Error(errc::invalid_argument, "qid " + std::to_string(qid) + ": this host has queues 0 and 1");
    if (!out_data.empty() && !in_data.empty()) return Error(errc::invalid_argument, "data in both directions");
    wire::Sqe s;
    std::copy(sqe.begin(), sqe.end(), s.b.begin());
    return (qid == 0 ? impl_->admin : impl_->io)->submit(s, out_data, in_data);
}

Result<void> Host::keep_alive() {
    if (!impl_) return host::moved_from_host("keep_alive");
    wire::Sqe s;
    s.set_opcode(wire::admin::keep_alive);
    return impl_->check(impl_->admin->submit(s, {}, {}), "Keep Alive");
}

} // namespace rpm::nvmf
