// Picks the client for --target (clients.hpp).
#include "clients.hpp"

#include "etcd_client.hpp"
#include "resp_client.hpp"

namespace kvbench {

std::unique_ptr<PutClient> connect_client(const Options& o, const Address& at, std::string& error) {
    return o.target == "etcd" ? connect_etcd(o, at, error) : connect_resp(o, at, error);
}

std::string probe(const Options& o, const Address& at) {
    return o.target == "etcd" ? probe_etcd(o, at) : probe_resp(o, at);
}

} // namespace kvbench
