// Control frames over RDMA send/recv: one protocol frame per message.
#pragma once

#include "protocol/protocol.hpp"

#include <rpm/result.hpp>

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace rpm::rdma {

using Frame = std::pair<proto::Header, std::span<const std::byte>>;

/// One received message must be exactly one frame that fits a slot.
/// ERRORS: errc::invalid_argument / errc::bad_size (from parse_header), or
/// errc::invalid_argument when the length disagrees with the message.
Result<Frame> parse_frame(std::span<const std::byte> message, std::size_t slot_size);

/// A Response frame for a failed request: the error's code and detail.
/// (A success is proto::encode of a proto::Response{}.)
std::vector<std::byte> error_frame(std::uint32_t request_id, const Error& e);

/// Response.status (an rpm::errc value, 0 = success) as an error_code.
std::error_code status_code(std::uint32_t status) noexcept;

/// The status of a Response frame; a frame of another type is a protocol error.
std::error_code response_status(const proto::Header& h, std::span<const std::byte> body);

/// The error a request gets when the reply is not the `expected` frame: a
/// Response's status and message, or a protocol error.
Error unexpected_reply(const proto::Header& h, std::span<const std::byte> body, std::string_view expected);

} // namespace rpm::rdma
