// The limits on fencing with a real rpm-server process (docs/replication.md,
// "Fencing"): a term implausibly far ahead is refused over the wire and
// kept nowhere, so the next real primary still opens; --fencer and
// --max-fencing-term-step reach the server; `rpm-server reset-term` is refused
// while a server serves the region, changes nothing without --yes, and
// with it brings a region from a huge term back to a small one; its bad
// input is refused with one line and status 2.
#include <rpm/client.hpp>
#include <rpm/server.hpp>

#include "tests/support/paths.hpp"
#include "tests/support/result.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <thread>

extern char** environ;

namespace {
using namespace rpm;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using rpm::test::code_of;
using rpm::test::ok;

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

struct CliRun {
    int status = -1;
    std::string out;  ///< stdout and stderr
};

// rpm-server with `args` (no shell quoting needed: the paths are plain).
CliRun rpm_server(const std::string& args) {
    const std::string cmd = rpm::test::bin_dir().string() + "/rpm-server " + args + " 2>&1";
    CliRun r;
    FILE* p = popen(cmd.c_str(), "r");
    if (p == nullptr) return r;
    char buf[4096];
    std::size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    const int st = pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

std::string slurp(const fs::path& f) {
    std::ifstream in(f);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// A serving rpm-server process: started with a port file, stopped with SIGTERM.
class ServerProcess {
public:
    ServerProcess() = default;
    ServerProcess(const ServerProcess&) = delete;
    ServerProcess& operator=(const ServerProcess&) = delete;
    ~ServerProcess() { stop(); }

    // RETURN VALUE: whether it listens (within 60 s: a sanitized build starts slowly).
    bool start(std::vector<std::string> args, const fs::path& work) {
        const fs::path port_file = work / "port";
        log_ = work / "server.log";
        fs::remove(port_file);
        args.insert(args.begin(), rpm::test::bin_dir() / "rpm-server");
        args.insert(args.end(), {"--port-file", port_file.string()});
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 1, log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        posix_spawn_file_actions_adddup2(&fa, 1, 2);
        const int rc = posix_spawn(&pid_, argv[0], &fa, nullptr, argv.data(), environ);
        posix_spawn_file_actions_destroy(&fa);
        if (rc != 0) return pid_ = -1, false;
        for (int i = 0; i < 1200; ++i) {
            if (fs::exists(port_file)) return port_ = static_cast<std::uint16_t>(std::stoi(slurp(port_file))), true;
            if (::waitpid(pid_, nullptr, WNOHANG) == pid_) return pid_ = -1, false;
            std::this_thread::sleep_for(50ms);
        }
        return false;
    }
    // Stop it and wait until it has exited (its locks are gone then).
    void stop() {
        if (pid_ <= 0) return;
        ::kill(pid_, SIGTERM);
        ::waitpid(pid_, nullptr, 0);
        pid_ = -1;
    }
    [[nodiscard]] std::uint16_t port() const { return port_; }
    [[nodiscard]] std::string log() const { return slurp(log_); }

private:
    pid_t pid_ = -1;
    std::uint16_t port_ = 0;
    fs::path log_;
};

class FenceProcess : public ::testing::Test {
protected:
    void SetUp() override {
        work = "/dev/shm/rpm-fence-proc-" + std::to_string(::getpid()) + "-" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name();
        fs::create_directories(work);
        region = work / "kv.pool";
        fence = work / "kv.pool.fence";
    }
    void TearDown() override {
        server.stop();
        fs::remove_all(work);
    }
    bool start(const std::vector<std::string>& extra = {}) {
        std::vector<std::string> args = {"--listen", "tcp://127.0.0.1:0", "--region", "kv=" + region.string() + ":1M",
                                         "--client", "app:app-secret", "--client", "other:other-secret"};
        args.insert(args.end(), extra.begin(), extra.end());
        const bool ok = server.start(args, work);
        if (!ok) ADD_FAILURE() << "rpm-server did not start:\n" << server.log();
        return ok;
    }
    Result<Connection> connect(const std::string& id = "app") {
        ClientOptions o;
        o.client_id = id;
        o.secret = id + "-secret";
        return Client(o).connect("tcp://127.0.0.1:" + std::to_string(server.port()));
    }
    static Result<RemoteRegion> open(Connection& c, std::uint64_t term) {
        RegionOptions o;
        o.fencing_term = term;
        return c.open_region("kv", o);
    }
    std::string reset(const std::string& rest) { return "reset-term --region kv=" + region.string() + " " + rest; }

    fs::path work, region, fence;
    ServerProcess server;
};

TEST_F(FenceProcess, TheLargestTermIsRefusedOverTheWireAndTermOneStillOpens) {
    ASSERT_TRUE(start());
    auto c = connect();
    ASSERT_TRUE(c) << c.error().message();
    auto huge = open(*c, kMax);
    ASSERT_FALSE(huge);
    EXPECT_EQ(huge.error().code(), errc::invalid_argument);
    EXPECT_NE(huge.error().message().find("max_fencing_term_step"), std::string::npos) << huge.error().message();
    EXPECT_FALSE(fs::exists(fence)) << slurp(fence);

    auto p = connect();
    ASSERT_TRUE(p) << p.error().message();
    auto r = open(*p, 1);
    ASSERT_TRUE(r) << r.error().message();
    ASSERT_TRUE(ok(r->persist(64, "term 1 wrote this")));
    char back[17] = {};
    ASSERT_TRUE(ok(r->read(64, back, 17)));
    EXPECT_EQ(std::string(back, 17), "term 1 wrote this");
    EXPECT_EQ(slurp(fence), "rpm-fence 1 1\n");
}

TEST_F(FenceProcess, TheFencerAndStepOptionsReachTheServer) {
    ASSERT_TRUE(start({"--fencer", "app", "--max-fencing-term-step", "5"}));
    auto o = connect("other");
    ASSERT_TRUE(o) << o.error().message();
    auto denied = open(*o, 1);
    ASSERT_FALSE(denied);
    EXPECT_EQ(denied.error().code(), errc::permission_denied);
    EXPECT_NE(denied.error().message().find("rpm-server --fencer other"), std::string::npos)
        << denied.error().message();
    auto a = connect();
    ASSERT_TRUE(a) << a.error().message();
    EXPECT_EQ(code_of(open(*a, 6)), errc::invalid_argument);  // 0 + 6 > 5
    auto r = open(*a, 5);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(code_of(open(*o, 0)), errc::fenced);  // term 0 meets the fence, as before
    EXPECT_EQ(slurp(fence), "rpm-fence 1 5\n");
}

TEST_F(FenceProcess, ResetTermIsRefusedWhileServingAndBringsAHugeTermBack) {
    // A region locked out by a huge term (kept before the bound, or by hand).
    const std::string huge = "rpm-fence 1 9223372036854775808\n";
    std::ofstream(fence) << huge;
    ASSERT_TRUE(start());
    auto c = connect();
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_EQ(code_of(open(*c, 1)), errc::fenced);
    for (const char* yes : {" --yes", ""}) {
        const CliRun r = rpm_server(reset("--fencing-term 1") + yes);
        EXPECT_EQ(r.status, 1) << r.out;
        EXPECT_EQ(r.out, "rpm-server reset-term: a server is serving kv (" + region.string() + "); stop it first\n");
    }
    EXPECT_EQ(slurp(fence), huge);
    server.stop();

    const CliRun dry = rpm_server(reset("--fencing-term 1"));
    EXPECT_EQ(dry.status, 1) << dry.out;
    for (const std::string& s : {fence.string(), std::string("current fencing term: 9223372036854775808"),
                                 std::string("new fencing term:     1"), std::string("Risk: a primary of a fencing term above"),
                                 std::string("Stop every primary"), std::string("Nothing was changed"),
                                 std::string("--yes")})
        EXPECT_NE(dry.out.find(s), std::string::npos) << "no '" << s << "' in:\n" << dry.out;
    EXPECT_EQ(slurp(fence), huge);

    const CliRun done = rpm_server(reset("--fencing-term 1 --yes"));
    EXPECT_EQ(done.status, 0) << done.out;
    EXPECT_NE(done.out.find("fencing term set to 1, was 9223372036854775808"), std::string::npos) << done.out;
    EXPECT_EQ(slurp(fence), "rpm-fence 1 1\n");

    ASSERT_TRUE(start());
    auto again = connect();
    ASSERT_TRUE(again) << again.error().message();
    auto r = open(*again, 1);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_TRUE(ok(r->persist(0, "served again")));
    EXPECT_EQ(code_of(open(*again, 0)), errc::fenced);
}

TEST_F(FenceProcess, AMalformedFenceFileIsOverwrittenOnlyWithYesInTheServersFenceDir) {
    const fs::path dir = work / "fences";
    fs::create_directories(dir);
    std::ofstream(region) << "region";
    fs::resize_file(region, 1 << 20);
    std::ofstream(dir / "kv.fence") << "garbage";
    const std::string args = reset("--fence-dir " + dir.string() + " --fencing-term 4");
    const CliRun refused = rpm_server(args);
    EXPECT_EQ(refused.status, 2) << refused.out;
    EXPECT_NE(refused.out.find("is malformed"), std::string::npos) << refused.out;
    EXPECT_NE(refused.out.find("with --yes, reset-term overwrites it"), std::string::npos) << refused.out;
    EXPECT_EQ(slurp(dir / "kv.fence"), "garbage");
    const CliRun done = rpm_server(args + " --yes");
    EXPECT_EQ(done.status, 0) << done.out;
    EXPECT_NE(done.out.find("the malformed file was overwritten"), std::string::npos) << done.out;
    // The server with that fence dir reads the term reset-term wrote.
    ASSERT_TRUE(start({"--fence-dir", dir.string()}));
    auto c = connect();
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_EQ(code_of(open(*c, 3)), errc::fenced);
    EXPECT_TRUE(open(*c, 4));
}

TEST_F(FenceProcess, BadInputIsRefusedWithOneLineAndStatus2) {
    std::ofstream(region) << "region";
    const std::string r = region.string();
    const std::vector<std::pair<std::string, std::string>> cases = {
        {reset(""), "--fencing-term N is required"},
        {reset("--fencing-term abc"), "--fencing-term abc: expected a whole number from 0 to 18446744073709551615"},
        {reset("--fencing-term -1"), "--fencing-term -1: expected"},
        {reset("--fencing-term 18446744073709551616"), "--fencing-term 18446744073709551616: expected"},
        {"reset-term --fencing-term 1", "--region NAME=PATH is required"},
        {"reset-term --region kv --fencing-term 1", "--region kv: expected NAME=PATH"},
        {"reset-term --region kv= --fencing-term 1", "--region kv=: no PATH"},
        {reset("--fence-dir " + r + " --fencing-term 1"), "fence dir " + r + " is not a directory"},
        {"reset-term --region kv=" + (work / "missing").string() + " --fencing-term 1", "missing does not exist"},
        {"reset-term --region n=/dev/null --fencing-term 1", "is not a regular file"},
        {"--listen tcp://127.0.0.1:0 " + reset("--fencing-term 1"), "--listen before reset-term is a serving option"},
        {"--listen tcp://127.0.0.1:0 --region kv=" + r + " --client a:b --max-fencing-term-step 0",
         "--max-fencing-term-step 0: expected a whole number from 1"},
        {"--listen tcp://127.0.0.1:0 --region kv=" + r + " --client a:b --max-fencing-term-step 1x",
         "--max-fencing-term-step 1x: expected"},
    };
    for (const auto& [args, says] : cases) {
        const CliRun run = rpm_server(args);
        EXPECT_EQ(run.status, 2) << args << "\n" << run.out;
        EXPECT_NE(run.out.find(says), std::string::npos) << args << ": no '" << says << "' in:\n" << run.out;
        EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 1) << args << "\n" << run.out;
    }
    EXPECT_FALSE(fs::exists(fence));
}

TEST(FenceOptions, StartRefusesAZeroStepAndAFencerWithoutASecret) {
    ServerOptions o;
    o.listen = {"tcp://127.0.0.1:0"};
    o.secrets = {{"app", "secret"}};
    o.regions = {{"r", "/dev/shm/rpm-fence-options-" + std::to_string(::getpid()), 4096, true, {}}};
    ServerOptions zero = o;
    zero.max_fencing_term_step = 0;
    auto s = Server::start(zero);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error(), errc::invalid_argument);
    EXPECT_NE(s.error().message().find("max_fencing_term_step"), std::string::npos) << s.error().message();
    ServerOptions stranger = o;
    stranger.fencers = std::set<std::string>{"app", "nobody"};
    s = Server::start(stranger);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error(), errc::invalid_argument);
    EXPECT_NE(s.error().message().find("'nobody'"), std::string::npos) << s.error().message();
    o.fencers = std::set<std::string>{};  // nobody may fence: valid
    {
        auto ok = Server::start(o);
        EXPECT_TRUE(ok) << ok.error().message();
    }
    fs::remove(o.regions[0].path);
}

} // namespace
