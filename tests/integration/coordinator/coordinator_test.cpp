// rpm::Coordinator on a real 3-member etcd cluster (127.0.0.1): the term is
// the leader key's revision and grows with every election; a second
// candidate waits; resign hands over at once, a lease that is not renewed
// hands over after its TTL; watch follows; one member down changes
// nothing, two down stop elections; errors say what failed.
#include "coordinator/etcd_cluster.hpp"

#include <rpm/coordinator.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <future>
#include <mutex>

namespace {
using namespace rpm;
using namespace std::chrono_literals;

class CoordinatorTest : public ::testing::Test {
protected:
    void SetUp() override { ASSERT_TRUE(cluster.start()) << "etcd did not come up (is etcd-server installed? tools/install-deps)"; }

    std::unique_ptr<Coordinator> join(std::chrono::seconds ttl = 3s, std::function<void(const Error&)> on_lost = {},
                                      bool keep_alive = true) {
        CoordinatorOptions o;
        o.endpoints = cluster.endpoints();
        o.election = "rpm/test";
        o.lease_ttl = ttl;
        o.request_timeout = 1500ms;
        o.on_lost = std::move(on_lost);
        o.keep_alive = keep_alive;
        auto c = connect_etcd(o);
        EXPECT_TRUE(c) << c.error().message();
        return c ? std::move(*c) : nullptr;
    }

    rpm::test::EtcdCluster cluster;
};

TEST_F(CoordinatorTest, TheLeaderKeysRevisionIsTheTermAndGrowsWithEachElection) {
    auto a = join();
    auto b = join();
    ASSERT_TRUE(a && b);
    auto none = a->leader();
    ASSERT_TRUE(none) << none.error().message();
    EXPECT_FALSE(*none);
    auto la = a->campaign("node-a", 5s);
    ASSERT_TRUE(la) << la.error().message();
    EXPECT_GT(la->fencing_term, 0u);
    EXPECT_TRUE(a->leading());
    auto seen = b->leader();
    ASSERT_TRUE(seen && *seen);
    EXPECT_EQ((*seen)->name, "node-a");
    EXPECT_EQ((*seen)->fencing_term, la->fencing_term);

    // b waits while a leads, and says who does.
    auto early = b->campaign("node-b", 800ms);
    ASSERT_FALSE(early);
    EXPECT_EQ(early.error().code(), errc::io_error);
    EXPECT_NE(early.error().message().find("'node-a' leads"), std::string::npos) << early.error().message();
    EXPECT_FALSE(b->leading());

    auto later = std::async(std::launch::async, [&] { return b->campaign("node-b", 10s); });
    std::this_thread::sleep_for(300ms);
    ASSERT_TRUE(a->resign());
    EXPECT_FALSE(a->leading());
    auto lb = later.get();
    ASSERT_TRUE(lb) << lb.error().message();
    EXPECT_GT(lb->fencing_term, la->fencing_term);
    auto now = a->leader();
    ASSERT_TRUE(now && *now);
    EXPECT_EQ((*now)->name, "node-b");
}

TEST_F(CoordinatorTest, ALeaderThatStopsRenewingLosesAfterItsTtlAndAnotherIsElected) {
    std::promise<Error> lost;
    auto a = join(2s, [&lost](const Error& e) { lost.set_value(e); }, /*keep_alive=*/false);
    auto b = join(2s);
    ASSERT_TRUE(a && b);
    auto la = a->campaign("stalled", 5s);
    ASSERT_TRUE(la) << la.error().message();
    const auto t0 = std::chrono::steady_clock::now();
    auto lb = b->campaign("successor", 15s);
    ASSERT_TRUE(lb) << lb.error().message();
    const auto waited = std::chrono::steady_clock::now() - t0;
    EXPECT_GT(lb->fencing_term, la->fencing_term);
    EXPECT_GE(waited, 1s) << "elected before the stalled leader's lease could expire";
    auto f = lost.get_future();
    ASSERT_EQ(f.wait_for(5s), std::future_status::ready) << "the stalled leader was never told";
    EXPECT_NE(f.get().message().find("not renewed"), std::string::npos);
    EXPECT_FALSE(a->leading());
}

TEST_F(CoordinatorTest, ALeaderThatRenewsStaysLeaderPastItsTtl) {
    auto a = join(2s);
    auto b = join(2s);
    ASSERT_TRUE(a && b);
    auto la = a->campaign("steady", 5s);
    ASSERT_TRUE(la);
    const long before = cluster.renewals();
    std::this_thread::sleep_for(3500ms);  // past the TTL: only the renewals keep it
    EXPECT_TRUE(a->leading());
    // Renewed every TTL/3 (667 ms): about 5 in 3.5 s. A wait of TTL/3 in
    // whole seconds (0 for a TTL of 2 s) renewed hundreds of times a second.
    const long renewed = cluster.renewals() - before;
    ASSERT_GE(before, 0) << "etcd's /metrics did not answer";
    EXPECT_GE(renewed, 3);
    EXPECT_LE(renewed, 12);
    auto other = b->campaign("usurper", 1s);
    EXPECT_FALSE(other);
    auto seen = b->leader();
    ASSERT_TRUE(seen && *seen);
    EXPECT_EQ((*seen)->fencing_term, la->fencing_term);
}

TEST_F(CoordinatorTest, WatchFollowsEveryLeader) {
    auto w = join();
    auto a = join();
    auto b = join();
    ASSERT_TRUE(w && a && b);
    std::mutex mu;
    std::condition_variable cv;
    std::vector<Leader> seen;
    ASSERT_TRUE(w->watch([&](const Leader& l) {
        std::lock_guard lock(mu);
        seen.push_back(l);
        cv.notify_all();
    }));
    const auto saw = [&](const std::string& name) {
        std::unique_lock lock(mu);
        return cv.wait_for(lock, 10s, [&] { return !seen.empty() && seen.back().name == name; });
    };
    auto la = a->campaign("first", 5s);
    ASSERT_TRUE(la);
    ASSERT_TRUE(saw("first"));
    ASSERT_TRUE(a->resign());
    auto lb = b->campaign("second", 5s);
    ASSERT_TRUE(lb);
    ASSERT_TRUE(saw("second"));
    std::lock_guard lock(mu);
    EXPECT_EQ(seen.back().fencing_term, lb->fencing_term);
    EXPECT_EQ(seen.front().fencing_term, la->fencing_term);
}

TEST_F(CoordinatorTest, OneMemberDownChangesNothingTwoDownStopElections) {
    cluster.kill(0);  // the first endpoint every request tries
    auto a = join();
    ASSERT_TRUE(a);
    auto la = a->campaign("survivor", 5s);
    ASSERT_TRUE(la) << la.error().message();
    auto seen = a->leader();
    ASSERT_TRUE(seen && *seen) << (seen ? "" : seen.error().message());

    std::promise<Error> lost;
    auto leader = join(2s, [&lost](const Error& e) { lost.set_value(e); });
    ASSERT_TRUE(a->resign());
    ASSERT_TRUE(leader->campaign("before the loss", 5s));
    cluster.kill(1);  // no quorum now
    auto b = join();
    ASSERT_TRUE(b);
    auto refused = b->campaign("no quorum", 3s);
    ASSERT_FALSE(refused);
    EXPECT_TRUE(refused.error() == errc::quorum_lost || refused.error() == errc::io_error) << refused.error().message();
    // The running leader cannot renew: it is told within its TTL (+ one renewal period).
    auto f = lost.get_future();
    ASSERT_EQ(f.wait_for(6s), std::future_status::ready) << "the leader was not told it lost etcd";
    EXPECT_FALSE(leader->leading());
    (void)f.get();
}

// An "etcd" on 127.0.0.1 that answers every request 200 with `body`:
// answers of another shape than the gateway's.
class OddServer {
public:
    explicit OddServer(std::string body) : body_(std::move(body)) {
        fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
        EXPECT_EQ(::listen(fd_, 16), 0);
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
        port_ = ntohs(a.sin_port);
        thread_ = std::thread([this] { serve(); });
    }
    ~OddServer() {
        ::shutdown(fd_, SHUT_RDWR);
        ::close(fd_);
        thread_.join();
    }
    [[nodiscard]] std::string endpoint() const { return "127.0.0.1:" + std::to_string(port_); }

private:
    void serve() {
        for (int n = 0; n < 100; ++n) {  // bounded
            const int c = ::accept(fd_, nullptr, nullptr);
            if (c < 0) return;
            std::string req;
            char buf[4096];
            for (;;) {  // the header, then Content-Length bytes
                const auto h = req.find("\r\n\r\n");
                if (h != std::string::npos) {
                    const auto cl = req.find("Content-Length: ");
                    const std::size_t len = cl == std::string::npos ? 0 : std::stoul(req.substr(cl + 16));
                    if (req.size() >= h + 4 + len) break;
                }
                const ssize_t r = ::read(c, buf, sizeof buf);
                if (r <= 0) break;
                req.append(buf, static_cast<std::size_t>(r));
            }
            const std::string answer = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                                       std::to_string(body_.size()) + "\r\nConnection: close\r\n\r\n" + body_;
            (void)!::write(c, answer.data(), answer.size());
            ::close(c);
        }
    }
    std::string body_;
    int fd_ = -1;
    int port_ = 0;
    std::thread thread_;
};

TEST(CoordinatorErrors, AnswersOfAnotherShapeAreClearErrors) {
    for (const char* body : {"[]", "42", "{\"leader\": 7, \"kv\": [1], \"result\": \"x\"}"}) {
        OddServer odd(body);
        CoordinatorOptions o;
        o.endpoints = {odd.endpoint()};
        o.request_timeout = 1000ms;
        o.lease_ttl = 2s;
        auto c = connect_etcd(o);
        ASSERT_TRUE(c) << body << ": " << c.error().message();
        auto l = (*c)->leader();
        ASSERT_TRUE(l) << body;
        EXPECT_FALSE(*l) << body;
        auto won = (*c)->campaign("n", 1000ms);
        ASSERT_FALSE(won) << body;
        EXPECT_EQ(won.error().code(), errc::io_error) << won.error().message();
        EXPECT_FALSE((*c)->leading());
        ASSERT_TRUE((*c)->watch([](const Leader&) {}));
        std::this_thread::sleep_for(300ms);  // the observe stream reads the odd answer
    }
    OddServer junk("not json");
    CoordinatorOptions o;
    o.endpoints = {junk.endpoint()};
    o.request_timeout = 1000ms;
    auto c = connect_etcd(o);  // something answers, but not etcd
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().code(), errc::io_error);
    EXPECT_NE(c.error().message().find("not JSON"), std::string::npos) << c.error().message();
}

TEST(CoordinatorErrors, BadUrisAndUnreachableEtcdAreClear) {
    for (const char* bad : {"http://127.0.0.1:2379", "etcd://", "etcd://127.0.0.1", "etcd://127.0.0.1:0",
                            "etcd://127.0.0.1:2379,:5"}) {
        auto o = parse_coordinator_uri(bad);
        ASSERT_FALSE(o) << bad;
        EXPECT_EQ(o.error().code(), errc::invalid_argument);
    }
    auto o = parse_coordinator_uri("etcd://127.0.0.1:1,[::1]:1");
    ASSERT_TRUE(o) << o.error().message();
    EXPECT_EQ(o->endpoints.size(), 2u);
    o->request_timeout = 300ms;
    auto c = connect_etcd(*o);
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().code(), errc::io_error);
    EXPECT_NE(c.error().message().find("no etcd member answered"), std::string::npos) << c.error().message();
    EXPECT_NE(c.error().message().find("127.0.0.1:1"), std::string::npos);
    o->lease_ttl = 1s;
    EXPECT_EQ(connect_etcd(*o).error().code(), errc::invalid_argument);
}

} // namespace
