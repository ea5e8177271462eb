// The words of include/rpm/transport.hpp: the ones tools print and scripts
// parse (a URI's scheme, "atomic writes native"), read back exactly.
#include <rpm/transport.hpp>

#include <gtest/gtest.h>

namespace {
using rpm::AtomicWriteKind;
using rpm::Scheme;

TEST(TransportNames, SchemesAreTheirUriSpelling) {
    EXPECT_EQ(rpm::to_string(Scheme::tcp), "tcp");
    EXPECT_EQ(rpm::to_string(Scheme::rdma), "rdma");
    EXPECT_EQ(rpm::to_string(static_cast<Scheme>(7)), "invalid");
}

TEST(TransportNames, ParseSchemeReadsBackToStringAndNothingElse) {
    for (auto s : {Scheme::tcp, Scheme::rdma}) EXPECT_EQ(rpm::parse_scheme(rpm::to_string(s)), s);
    for (const char* junk : {"", "TCP", "tcp://", "rdma ", "invalid", "udp"})
        EXPECT_EQ(rpm::parse_scheme(junk), std::nullopt) << junk;
}

TEST(TransportNames, AtomicWriteKindsKeepTheWordsToolsPrinted) {
    // Before the enum, AtomicWriteStats::method held these very strings.
    EXPECT_EQ(rpm::to_string(AtomicWriteKind::server), "server");
    EXPECT_EQ(rpm::to_string(AtomicWriteKind::fenced_write), "fenced_write");
    EXPECT_EQ(rpm::to_string(AtomicWriteKind::native), "native");
    EXPECT_EQ(rpm::to_string(static_cast<AtomicWriteKind>(7)), "invalid");
}

TEST(TransportNames, ParseAtomicWriteKindReadsBackToStringAndNothingElse) {
    for (auto k : {AtomicWriteKind::server, AtomicWriteKind::fenced_write, AtomicWriteKind::native})
        EXPECT_EQ(rpm::parse_atomic_write_kind(rpm::to_string(k)), k);
    for (const char* junk : {"", "Native", "fenced-write", "invalid"})
        EXPECT_EQ(rpm::parse_atomic_write_kind(junk), std::nullopt) << junk;
}

} // namespace
