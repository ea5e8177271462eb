// rpm-bench --plot FILE.svg: each test's latency CDF (solid) next to the CDF
// of the baseline it is compared with (dashed, same colour), on a log
// latency axis. A ratio says how far apart two medians are; the picture
// shows where along the distribution the gap opens (a tail, a second mode).
//
// The figure is built in two steps so the drawing can be tested without a
// run: the reports turn into a Figure (report.cpp, which knows the
// report types), and render_svg() draws any Figure (plot.cpp, which knows
// only histograms). The SVG writer is our own, a few string functions: the
// picture needs lines, paths and text, not a library.
#pragma once

#include "../histogram.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace rpmbench {

struct Report;
struct ReplicationReport;

namespace plot {

/// One step of a CDF: `fraction` of the operations took at most `us`
/// microseconds.
struct CdfPoint {
    double us = 0;
    double fraction = 0;
};

/// The CDF of `h`: one point per non-empty bucket, at the value the
/// histogram reports for it (its midpoint, clamped to [min, max], as
/// Histogram::quantile does), so the curve crosses 0.5 at the table's p50.
/// Empty when `h` holds no sample.
std::vector<CdfPoint> cdf_points(const Histogram& h);

/// A log-scale axis: the range [lo, hi] widened outwards to ticks, and the
/// ticks in it.
struct LogAxis {
    double lo = 1, hi = 10;
    std::vector<double> ticks;
};
/// Ticks for values from `lo` to `hi` (> 0; lo is raised to 0.001, a
/// nanosecond, and hi to at least lo): 1..9 x 10^k when they span less than
/// a decade, 1, 2, 5 x 10^k up to 3 decades, else decades only, so that
/// there are always at least two ticks and rarely more than a dozen.
LogAxis log_axis(double lo, double hi);
/// A tick's label: "0.5", "20", "1000", "100000" (no exponent).
std::string tick_label(double us);

/// `text` with &, <, >, " and ' as entities, and the control characters XML
/// 1.0 forbids as U+FFFD, so any test name or command line is valid in an
/// element or an attribute.
std::string xml_escape(std::string_view text);

/// The stroke colour of series `index`: ten distinct colours, then hues a
/// golden angle apart, so no two tests share one.
std::string colour(std::size_t index);

/// One test: its own CDF and its baseline's. An empty curve is not drawn
/// (the legend says why: `baseline_note`, or no sample).
struct Series {
    std::string name;           ///< the test, as the legend names it
    std::vector<CdfPoint> rpm;  ///< the test's CDF
    std::vector<CdfPoint> baseline;
    std::string baseline_note;  ///< the baseline's kind, or why it is missing
};

struct Figure {
    std::string title;
    std::string subtitle;  ///< a line under the title (the command line)
    std::string x_label = "latency per operation, microseconds (log scale)";
    std::string y_label = "fraction of operations";
    std::vector<Series> series;
};

/// Whether `f` has any curve to draw (a figure without one is refused,
/// not written as an empty picture).
bool has_curves(const Figure& f);

/// The figure as a standalone SVG document. Only the curves are <path>
/// elements (2 per series with both measured): the smoke check counts them.
std::string render_svg(const Figure& f);

// report.cpp: the figures of the two reports with latencies (the
// --mr-pool report has none: main.cpp refuses --plot with it).
Figure figure_of(const Report& r);
Figure figure_of(const ReplicationReport& r);

/// Write `f` to `path` if `path` is not empty. RETURN VALUE: `status`, or
/// 1 (with a message) when it is 0 and the figure has no curve or the file
/// cannot be written. A failing run keeps its own status.
int write_plot(const std::string& path, const Figure& f, int status);

} // namespace plot
} // namespace rpmbench
