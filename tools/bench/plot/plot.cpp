// The CDF figure as SVG, written by hand: a frame, grid lines, ticks and
// their labels, one <path> per curve, a legend. Coordinates are printed to
// 0.1 px, well under what a screen or a printer resolves, which keeps a
// figure of many tests small.
#include "plot.hpp"

#include "../text_format.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace rpmbench::plot {

std::vector<CdfPoint> cdf_points(const Histogram& h) {
    std::vector<CdfPoint> out;
    const auto s = h.summary();
    if (s.count == 0) return out;
    const auto& counts = h.counts();
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < counts.size(); ++i) {
        if (counts[i] == 0) continue;
        seen += counts[i];
        const auto ns = std::clamp(Histogram::bucket_low(i) + Histogram::bucket_width(i) / 2, s.min_ns, s.max_ns);
        out.push_back({static_cast<double>(ns) / 1000.0, static_cast<double>(seen) / static_cast<double>(s.count)});
    }
    return out;
}

namespace {

// 10^k as a double, by integer powers: 0.001 comes out as the double nearest
// 0.001 (as "0.001" parses), not as pow()'s approximation of it.
double power_of_ten(int k) {
    double p = 1;
    for (int i = 0; i < std::abs(k); ++i) p *= 10;
    return k >= 0 ? p : 1 / p;
}

// Every m x 10^k from a decade below `lo` to a decade above `hi`, ascending.
std::vector<double> tick_candidates(double lo, double hi, const std::vector<int>& mantissas) {
    std::vector<double> out;
    const int k0 = static_cast<int>(std::floor(std::log10(lo))) - 1;
    const int k1 = static_cast<int>(std::ceil(std::log10(hi))) + 1;
    for (int k = k0; k <= k1; ++k)
        for (int m : mantissas)
            out.push_back(k >= 0 ? m * power_of_ten(k) : m / power_of_ten(-k));
    return out;
}

} // namespace

LogAxis log_axis(double lo, double hi) {
    // A latency under 1 ns is a clock artefact; NaN and infinity (no value at all) become 1 ns too.
    if (!(lo >= 0.001) || std::isinf(lo)) lo = 0.001;
    if (!(hi >= lo) || std::isinf(hi)) hi = lo;
    const double decades = std::log10(hi / lo);
    const std::vector<int> mantissas = decades < 1    ? std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 9}
                                       : decades <= 3 ? std::vector<int>{1, 2, 5}
                                                      : std::vector<int>{1};
    const auto all = tick_candidates(lo, hi, mantissas);
    constexpr double slack = 1e-9;  // a value that prints as a tick is that tick
    LogAxis a;
    a.lo = all.front();
    for (double c : all)
        if (c <= lo * (1 + slack)) a.lo = c;
    a.hi = all.back();
    for (auto it = all.rbegin(); it != all.rend(); ++it)
        if (*it >= hi * (1 - slack) && *it > a.lo) a.hi = *it;
    for (double c : all)
        if (c >= a.lo && c <= a.hi) a.ticks.push_back(c);
    return a;
}

std::string tick_label(double us) { return us >= 1 ? fmt("%.0f", us) : fmt("%g", us); }

std::string xml_escape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&apos;"; break;
        default:
            // XML 1.0 allows no control character but tab, LF and CR, not even as &#N;.
            if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') out += "\xEF\xBF\xBD";
            else out += c;
        }
    }
    return out;
}

namespace {

// HSL (h in degrees, s and l in 0..1) as #rrggbb, for colours past the palette.
std::string hsl_hex(double h, double s, double l) {
    const double c = (1 - std::abs(2 * l - 1)) * s;
    const double hp = std::fmod(h, 360.0) / 60.0;
    const double x = c * (1 - std::abs(std::fmod(hp, 2.0) - 1));
    const std::array<std::array<double, 3>, 6> sector{{{c, x, 0}, {x, c, 0}, {0, c, x}, {0, x, c}, {x, 0, c}, {c, 0, x}}};
    const auto& rgb = sector[std::min<std::size_t>(5, static_cast<std::size_t>(hp))];
    const double m = l - c / 2;
    const auto byte = [m](double v) { return static_cast<int>(std::lround((v + m) * 255)); };
    return fmt("#%02x%02x%02x", byte(rgb[0]), byte(rgb[1]), byte(rgb[2]));
}

} // namespace

std::string colour(std::size_t index) {
    // D3's category10: distinct on screen and in greyscale print alike.
    static constexpr std::array<const char*, 10> palette{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                                         "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
    if (index < palette.size()) return palette[index];
    return hsl_hex(static_cast<double>(index) * 137.508, 0.7, 0.4);
}

bool has_curves(const Figure& f) {
    return std::any_of(f.series.begin(), f.series.end(),
                       [](const Series& s) { return !s.rpm.empty() || !s.baseline.empty(); });
}

namespace {

// Where things go on the page, in pixels. The legend sits right of the
// plot, one row per test; the page grows to fit it.
struct Frame {
    double left = 72, top = 64, width = 640, height = 400;
    double legend_x = 0, legend_width = 0, page_width = 0, page_height = 0;
    LogAxis x;

    [[nodiscard]] double px(double us) const {
        const double v = std::clamp(us, x.lo, x.hi);
        return left + std::log10(v / x.lo) / std::log10(x.hi / x.lo) * width;
    }
    [[nodiscard]] double py(double fraction) const { return top + (1 - fraction) * height; }
};

constexpr double kRow = 18;       // legend row height
constexpr double kCharWidth = 6.5;  // a generous average for 12 px sans-serif: no font metrics here

Frame layout(const Figure& f) {
    Frame fr;
    double lo = INFINITY, hi = 0;
    for (const auto& s : f.series)
        for (const auto* c : {&s.rpm, &s.baseline})
            if (!c->empty()) lo = std::min(lo, c->front().us), hi = std::max(hi, c->back().us);
    fr.x = log_axis(lo, hi);
    std::size_t longest = 24;
    for (const auto& s : f.series) longest = std::max(longest, s.name.size() + s.baseline_note.size() + 4);
    fr.legend_x = fr.left + fr.width + 24;
    fr.legend_width = 56 + kCharWidth * static_cast<double>(longest);
    fr.page_width = fr.legend_x + fr.legend_width + 16;
    const double legend_bottom = fr.top + kRow * static_cast<double>(f.series.size() + 2);
    fr.page_height = std::max(fr.top + fr.height + 64, legend_bottom + 16);
    return fr;
}

std::string line(double x1, double y1, double x2, double y2, const std::string& style) {
    return fmt("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" ", x1, y1, x2, y2) + style + "/>\n";
}

std::string text(double x, double y, const std::string& attrs, std::string_view content) {
    return fmt("<text x=\"%.1f\" y=\"%.1f\" ", x, y) + attrs + ">" + xml_escape(content) + "</text>\n";
}

std::string x_axis(const Frame& fr, const std::string& label) {
    std::string out;
    const double bottom = fr.py(0);
    for (double t : fr.x.ticks) {
        const double x = fr.px(t);
        out += line(x, fr.top, x, bottom, "stroke=\"#e4e4e4\"");
        out += line(x, bottom, x, bottom + 5, "stroke=\"#333\"");
        out += text(x, bottom + 18, "font-size=\"11\" text-anchor=\"middle\"", tick_label(t));
    }
    return out + text(fr.left + fr.width / 2, bottom + 40, "font-size=\"12\" text-anchor=\"middle\"", label);
}

std::string y_axis(const Frame& fr, const std::string& label) {
    std::string out;
    for (int i = 0; i <= 10; ++i) {
        const double y = fr.py(i / 10.0);
        out += line(fr.left, y, fr.left + fr.width, y, "stroke=\"#e4e4e4\"");
        out += line(fr.left - 5, y, fr.left, y, "stroke=\"#333\"");
        out += text(fr.left - 8, y + 4, "font-size=\"11\" text-anchor=\"end\"", i % 10 ? fmt("0.%d", i) : fmt("%d", i / 10));
    }
    const double cx = fr.left - 44, cy = fr.top + fr.height / 2;
    return out + text(cx, cy, fmt("font-size=\"12\" text-anchor=\"middle\" transform=\"rotate(-90 %.1f %.1f)\"", cx, cy),
                      label);
}

// A CDF as a staircase: the fraction holds until the next value, then
// rises there, so at every height the curve sits at that quantile.
std::string curve(const Frame& fr, const std::vector<CdfPoint>& pts, const std::string& style, const std::string& tip) {
    std::string d;
    std::string last;
    double fraction = 0;
    const auto to = [&](double us, double f) {
        auto p = fmt("%.1f %.1f", fr.px(us), fr.py(f));
        if (p == last) return;  // the same pixel: nothing to draw
        d += (d.empty() ? "M" : " L") + p;
        last = std::move(p);
    };
    for (const auto& p : pts) {
        to(p.us, fraction);
        fraction = p.fraction;
        to(p.us, fraction);
    }
    return "<path fill=\"none\" " + style + " d=\"" + d + "\"><title>" + xml_escape(tip) + "</title></path>\n";
}

std::string curves(const Frame& fr, const Figure& f) {
    std::string out;
    for (std::size_t i = 0; i < f.series.size(); ++i) {
        const auto& s = f.series[i];
        const auto stroke = "stroke=\"" + colour(i) + "\" stroke-width=\"1.6\"";
        if (!s.baseline.empty())
            out += curve(fr, s.baseline, stroke + " stroke-dasharray=\"6 4\"", s.name + ": baseline " + s.baseline_note);
        if (!s.rpm.empty()) out += curve(fr, s.rpm, stroke, s.name);
    }
    return out;
}

// One row per test: a solid and a dashed swatch in its colour, its name
// (alone in the text's first node: the smoke check looks for it there),
// then its baseline in grey (set off by dx: a leading space would be
// collapsed away by renderers that follow SVG 1.1's whitespace rules).
std::string legend(const Frame& fr, const Figure& f) {
    const double x = fr.legend_x;
    double y = fr.top + 4;
    std::string out = line(x, y, x + 22, y, "stroke=\"#333\" stroke-width=\"1.6\"") +
                      text(x + 28, y + 4, "font-size=\"12\"", "rpm test") +
                      line(x + 100, y, x + 122, y, "stroke=\"#333\" stroke-width=\"1.6\" stroke-dasharray=\"6 4\"") +
                      text(x + 128, y + 4, "font-size=\"12\"", "its baseline (same run)");
    y += kRow * 1.5;
    for (std::size_t i = 0; i < f.series.size(); ++i, y += kRow) {
        const auto& s = f.series[i];
        const auto stroke = "stroke=\"" + colour(i) + "\" stroke-width=\"1.6\"";
        out += line(x, y, x + 22, y, stroke) + line(x + 26, y, x + 48, y, stroke + " stroke-dasharray=\"6 4\"");
        const auto note = s.rpm.empty() ? "no sample" : s.baseline_note;
        out += fmt("<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">", x + 56, y + 4) + xml_escape(s.name) +
               "<tspan dx=\"6\" fill=\"#777\">vs " + xml_escape(note) + "</tspan></text>\n";
    }
    return out;
}

// The subtitle is one line of text: cut it to the page's width.
std::string fit(const std::string& s, double width) {
    const auto room = static_cast<std::size_t>(std::max(16.0, width / 6.2));
    return s.size() <= room ? s : s.substr(0, room - 3) + "...";
}

} // namespace

std::string render_svg(const Figure& f) {
    const Frame fr = layout(f);
    std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    out += fmt("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
               "font-family=\"sans-serif\">\n",
               fr.page_width, fr.page_height, fr.page_width, fr.page_height);
    out += "<title>" + xml_escape(f.title) + "</title>\n<desc>" + xml_escape(f.subtitle) + "</desc>\n";
    out += fmt("<rect width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n", fr.page_width, fr.page_height);
    out += text(fr.left, 26, "font-size=\"16\" font-weight=\"bold\"", f.title);
    out += text(fr.left, 46, "font-size=\"11\" fill=\"#555\"", fit(f.subtitle, fr.page_width - fr.left));
    out += x_axis(fr, f.x_label) + y_axis(fr, f.y_label);
    out += fmt("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#333\"/>\n", fr.left,
               fr.top, fr.width, fr.height);
    out += curves(fr, f) + legend(fr, f);
    return out + "</svg>\n";
}

} // namespace rpmbench::plot
