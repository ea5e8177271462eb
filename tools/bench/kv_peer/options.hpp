// rpm-kvbench's options (main.cpp parses them; the rest only reads them).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace kvbench {

struct Options {
    std::string target = "rpm-kvstore";  ///< rpm-kvstore, redis or etcd
    /// put, or ping: each "put" is a bare PING (RESP targets): one round
    /// trip to the server doing nothing, the floor under any put's latency
    std::string op = "put";
    std::vector<std::string> addrs;       ///< HOST:PORT; the load goes to the first
    int clients = 4;                      ///< connections, one thread and one put in flight each
    std::size_t value_size = 64;
    double duration = 5;                  ///< measured seconds
    double warmup = 1;                    ///< unmeasured seconds before them
    int wait_replicas = 2;                ///< redis: WAIT N
    double reply_timeout = 10;            ///< seconds without a reply before a put fails
    bool json = false;
};

} // namespace kvbench
