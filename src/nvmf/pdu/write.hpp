#pragma once
// Sending one NVMe/TCP PDU: header, data and its data digest in one gather
// write, shared by the target's NVMe/TCP queues and the host's.

#include "nvmf/pdu/pdu.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/asio/write.hpp>

#include <array>

namespace rpm::nvmf::pdu {

/// Write `header` (digest and padding included), then `data` and, when
/// `ddgst` and there is data, crc32c(data).
/// RETURN VALUE: the write's error code (empty on success).
template <class Socket>
boost::system::error_code write_pdu(Socket& socket, std::span<const std::uint8_t> header,
                                    std::span<const std::uint8_t> data, bool ddgst) {
    std::array<std::uint8_t, wire::digest_len> digest{};
    std::array<boost::asio::const_buffer, 3> bufs{boost::asio::buffer(header.data(), header.size()),
                                                  boost::asio::buffer(data.data(), data.size()),
                                                  boost::asio::buffer(digest)};
    std::size_t count = data.empty() ? 1 : 2;
    if (!data.empty() && ddgst) {
        wire::put32(digest.data(), crc32c(data));
        count = 3;
    }
    boost::system::error_code ec;
    boost::asio::write(socket, std::span(bufs.data(), count), ec);
    return ec;
}

} // namespace rpm::nvmf::pdu
