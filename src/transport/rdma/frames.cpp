#include "transport/rdma/frames.hpp"

namespace rpm::rdma {

Result<Frame> parse_frame(std::span<const std::byte> message, std::size_t slot_size) {
    if (message.size() < proto::kHeaderSize)
        return Error(errc::invalid_argument, "a message of " + std::to_string(message.size()) +
                                                 " bytes is shorter than a frame header");
    const auto max_payload = static_cast<std::uint32_t>(slot_size - proto::kHeaderSize);
    auto h = proto::parse_header(message.first(proto::kHeaderSize), max_payload);
    if (!h) return h.error();
    if (proto::kHeaderSize + h->length != message.size())
        return Error(errc::invalid_argument, "a frame says " + std::to_string(h->length) +
                                                 " payload bytes but its message holds " +
                                                 std::to_string(message.size() - proto::kHeaderSize));
    return Frame{*h, message.subspan(proto::kHeaderSize)};
}

std::vector<std::byte> error_frame(std::uint32_t request_id, const Error& e) {
    std::vector<std::byte> out;
    proto::Response r;
    r.status = static_cast<std::uint32_t>(e.code().value());
    r.message = e.detail().empty() ? e.code().message() : e.detail();
    proto::encode(out, request_id, r);
    return out;
}

std::error_code status_code(std::uint32_t status) noexcept {
    if (status == 0) return {};
    return {static_cast<int>(status), rpm_category()};
}

std::error_code response_status(const proto::Header& h, std::span<const std::byte> body) {
    if (h.type != proto::Type::response) return errc::io_error;
    const auto r = proto::response_view(body);
    return r ? status_code(r->status) : std::error_code(errc::io_error);
}

Error unexpected_reply(const proto::Header& h, std::span<const std::byte> body, std::string_view expected) {
    if (h.type == proto::Type::response) {
        auto r = proto::decode_response(body);
        if (r && r->status != 0) return Error(status_code(r->status), r->message);
    }
    return Error(errc::io_error, "expected a " + std::string(expected) + " frame, got " +
                                     std::string(proto::type_name(h.type)));
}

} // namespace rpm::rdma
