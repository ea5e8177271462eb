#pragma once
// A subsystem's staging buffer (the seed's staging_buf_addr/len): one
// max_io_size slot per enabled queue. It comes from a P2P provider
// (rpm::p2p::Manager::allocate_p2p) when one suits every staging client,
// from host memory otherwise; report() says which and why.

#include <rpm/nvmf_offload.hpp>
#include <rpm/p2p.hpp>
#include <rpm/result.hpp>

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

namespace rpm::nvmf::detail {

class Staging {
public:
    /// attrs were checked against the caps: staging_bytes holds at least
    /// one max_io_size slot.
    /// RETURN VALUE: the buffer, carved into slots.
    /// ERRORS: errc::io_error when host memory cannot be mapped.
    static Result<std::unique_ptr<Staging>> create(const SubsystemAttrs& attrs);

    ~Staging();
    Staging(const Staging&) = delete;
    Staging& operator=(const Staging&) = delete;

    [[nodiscard]] const StagingReport& report() const noexcept { return report_; }
    /// A free slot's index, or nullopt when every slot is taken.
    std::optional<std::size_t> acquire();
    /// Give back a slot acquire() returned.
    void release(std::size_t slot);
    /// The slot's memory: max_io_size bytes, 4096-aligned.
    [[nodiscard]] std::span<std::byte> slot(std::size_t index) const noexcept;
    [[nodiscard]] std::size_t in_use() const;

private:
    Staging() = default;
    Result<void> place(const SubsystemAttrs& attrs);
    Result<void> map_host(std::size_t bytes, std::string why);

    std::optional<p2p::Buffer> device_;
    std::byte* host_ = nullptr;  ///< mmap'd when not device memory
    std::byte* base_ = nullptr;
    std::size_t slot_bytes_ = 0;
    StagingReport report_;
    mutable std::mutex mu_;
    std::vector<std::size_t> free_;  ///< LIFO: the most recently freed slot is still warm
};

} // namespace rpm::nvmf::detail
