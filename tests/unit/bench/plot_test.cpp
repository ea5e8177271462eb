#include "plot.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace rpmbench::plot {
namespace {

std::size_t occurrences(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

TEST(PlotCdf, EmptyHistogramHasNoPoint) { EXPECT_TRUE(cdf_points(Histogram{}).empty()); }

TEST(PlotCdf, OnePointPerValueWithTheFractionAtOrBelowIt) {
    Histogram h;
    for (std::uint64_t ns : {100, 200, 200, 400}) h.record(ns);  // exact buckets below 256 ns
    const auto pts = cdf_points(h);
    ASSERT_EQ(pts.size(), 3u);
    EXPECT_DOUBLE_EQ(pts[0].us, 0.1);
    EXPECT_DOUBLE_EQ(pts[0].fraction, 0.25);
    EXPECT_DOUBLE_EQ(pts[1].us, 0.2);
    EXPECT_DOUBLE_EQ(pts[1].fraction, 0.75);
    EXPECT_DOUBLE_EQ(pts[2].us, 0.4);
    EXPECT_DOUBLE_EQ(pts[2].fraction, 1.0);
}

TEST(PlotCdf, AWideBucketIsClampedToTheSamplesSeen) {
    Histogram h;
    h.record(std::uint64_t{1'000'000});  // a 4 us wide bucket; its midpoint is not 1 ms
    const auto pts = cdf_points(h);
    ASSERT_EQ(pts.size(), 1u);
    EXPECT_DOUBLE_EQ(pts[0].us, 1000.0);
    EXPECT_DOUBLE_EQ(pts[0].fraction, 1.0);
}

// The curve crosses each fraction at the histogram's quantile: the picture
// and the table quote the same p50 and p99.
TEST(PlotCdf, CrossesEachFractionAtTheQuantile) {
    Histogram h;
    std::uint64_t x = 12345;
    for (int i = 0; i < 5000; ++i) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        h.record(1000 + (x >> 33) % 2'000'000);
    }
    const auto pts = cdf_points(h);
    for (std::size_t i = 1; i < pts.size(); ++i) {
        EXPECT_GE(pts[i].us, pts[i - 1].us);
        EXPECT_GT(pts[i].fraction, pts[i - 1].fraction);
    }
    EXPECT_DOUBLE_EQ(pts.back().fraction, 1.0);
    for (double q : {0.5, 0.99, 0.999}) {
        const auto first = std::find_if(pts.begin(), pts.end(), [q](const CdfPoint& p) { return p.fraction >= q; });
        ASSERT_NE(first, pts.end());
        EXPECT_DOUBLE_EQ(first->us, static_cast<double>(h.quantile(q)) / 1000.0) << q;
    }
}

void expect_ticks(const LogAxis& a, const std::vector<double>& ticks) {
    ASSERT_EQ(a.ticks.size(), ticks.size());
    for (std::size_t i = 0; i < ticks.size(); ++i) EXPECT_DOUBLE_EQ(a.ticks[i], ticks[i]) << i;
    EXPECT_DOUBLE_EQ(a.lo, ticks.front());
    EXPECT_DOUBLE_EQ(a.hi, ticks.back());
}

TEST(PlotAxis, UnderADecadeEveryDigit) { expect_ticks(log_axis(5.3, 8.7), {5, 6, 7, 8, 9}); }

TEST(PlotAxis, UpToThreeDecadesOneTwoFive) {
    expect_ticks(log_axis(3, 250), {2, 5, 10, 20, 50, 100, 200, 500});
    expect_ticks(log_axis(10, 1000), {10, 20, 50, 100, 200, 500, 1000});  // ends on ticks: not widened
}

TEST(PlotAxis, WiderRangesDecadesOnly) {
    expect_ticks(log_axis(0.5, 20000), {0.1, 1, 10, 100, 1000, 10000, 100000});
}

TEST(PlotAxis, OneValueStillHasTwoTicks) {
    expect_ticks(log_axis(7, 7), {7, 8});
    expect_ticks(log_axis(10, 10), {10, 20});
}

TEST(PlotAxis, NothingBelowANanosecond) {
    const auto a = log_axis(0, 0.004);
    EXPECT_DOUBLE_EQ(a.lo, 0.001);
    EXPECT_DOUBLE_EQ(a.hi, 0.004);
}

TEST(PlotAxis, TickLabelsHaveNoExponent) {
    EXPECT_EQ(tick_label(0.001), "0.001");
    EXPECT_EQ(tick_label(0.5), "0.5");
    EXPECT_EQ(tick_label(20), "20");
    EXPECT_EQ(tick_label(100000), "100000");
    EXPECT_EQ(tick_label(log_axis(0.02, 0.03).ticks.front()), "0.02");
}

TEST(PlotXml, EscapesMarkupAndQuotes) {
    EXPECT_EQ(xml_escape("a<b & \"c\" 'd'>"), "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;");
    EXPECT_EQ(xml_escape("&amp;"), "&amp;amp;");
    EXPECT_EQ(xml_escape("persist 64 B qd=1"), "persist 64 B qd=1");
}

TEST(PlotXml, ReplacesControlCharactersKeepsWhitespaceAndUtf8) {
    EXPECT_EQ(xml_escape(std::string("a\x01z\x1f", 4)), "a\xEF\xBF\xBDz\xEF\xBF\xBD");
    EXPECT_EQ(xml_escape(std::string("nul\0", 4)), "nul\xEF\xBF\xBD");
    EXPECT_EQ(xml_escape("t\tn\nr\r"), "t\tn\nr\r");
    EXPECT_EQ(xml_escape("\xC2\xB5s"), "\xC2\xB5s");  // "µs" passes through
}

TEST(PlotColour, EveryTestItsOwn) {
    std::set<std::string> seen;
    for (std::size_t i = 0; i < 64; ++i) {
        const auto c = colour(i);
        EXPECT_EQ(c.size(), 7u) << c;
        EXPECT_EQ(c[0], '#');
        seen.insert(c);
    }
    EXPECT_EQ(seen.size(), 64u);
}

Series two_curves(const std::string& name) {
    Histogram rpm, base;
    for (std::uint64_t ns : {9000, 10000, 30000}) rpm.record(ns);
    for (std::uint64_t ns : {5000, 6000, 7000}) base.record(ns);
    return {name, cdf_points(rpm), cdf_points(base), "tcp_round_trip"};
}

TEST(PlotSvg, OnePathPerCurveAndEscapedNames) {
    Figure f;
    f.title = "t & t";
    f.subtitle = "rpm-bench --plot 'a b.svg'";
    f.series.push_back(two_curves("write 64 B <1>"));
    f.series.push_back(two_curves("persist 64 B"));
    f.series.back().baseline.clear();  // unavailable: not drawn
    f.series.back().baseline_note = "rdma_read_round_trip (unavailable: none built in)";
    ASSERT_TRUE(has_curves(f));
    const auto svg = render_svg(f);
    EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
    EXPECT_NE(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
    EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
    EXPECT_EQ(occurrences(svg, "<path"), 3u);
    EXPECT_EQ(occurrences(svg, "stroke-dasharray=\"6 4\" d="), 1u);  // the one baseline drawn
    EXPECT_NE(svg.find(">write 64 B &lt;1&gt;<tspan"), std::string::npos);
    EXPECT_NE(svg.find(">persist 64 B<tspan"), std::string::npos);
    EXPECT_NE(svg.find("t &amp; t"), std::string::npos);
    EXPECT_EQ(svg.find("<1>"), std::string::npos);
    EXPECT_EQ(occurrences(svg, "<text"), occurrences(svg, "</text>"));
}

TEST(PlotSvg, NoCurveNoFigure) {
    Figure f;
    EXPECT_FALSE(has_curves(f));
    f.series.push_back({"write 64 B", {}, {}, "tcp_round_trip"});
    EXPECT_FALSE(has_curves(f));
    EXPECT_EQ(occurrences(render_svg(f), "<path"), 0u);  // still a valid, empty document
}

} // namespace
} // namespace rpmbench::plot
