#pragma once
// A FabricQueue for tests of the command core: serving and bookkeeping
// answer nothing; a test's fake gives complete() and pull().
#include "nvmf/serve/fabric.hpp"

namespace rpm::nvmf::target::test {

class MovingOnly : public FabricQueue {
public:
    int fd() const override { return -1; }
    bool serve() override { return false; }
    void retire() override {}
    void close() override {}
    std::shared_ptr<Controller> controller() const override { return nullptr; }
    std::uint16_t qid() const override { return 0; }
    bool finished() const override { return false; }
    bool set_up() const override { return false; }
    std::chrono::steady_clock::time_point accepted() const override { return {}; }
    const std::string& peer() const override { return peer_; }

private:
    std::string peer_;
};

} // namespace rpm::nvmf::target::test
