// The public face of DH-HMAC-CHAP secrets (include/rpm/nvmf.hpp).
#include "nvmf/auth/auth.hpp"

#include <rpm/nvmf.hpp>

namespace rpm::nvmf {

Result<std::string> read_dhchap_secret(const std::filesystem::path& file) {
    auto s = auth::read_secret_file(file.string());
    if (!s) return s.error();
    return auth::format_secret(*s);
}

Result<std::string> generate_dhchap_secret(std::size_t key_length, std::uint8_t transform) {
    auto s = auth::generate_secret(key_length, transform);
    if (!s) return s.error();
    return auth::format_secret(*s);
}

} // namespace rpm::nvmf
