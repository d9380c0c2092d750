#include "figure/colormaps.h"

#include "attnscope/analysis/metrics.h"
#include "attnscope/attention/trace.h"
#include "attnscope/runtime/error.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>

namespace {

// 17 stops at i/16 of matplotlib's 256-entry tables (entries round(i·255/16)).
constexpr const char* kViridis[] = {"#440154", "#48186a", "#472d7b", "#424086", "#3b528b", "#33638d",
                                    "#2c728e", "#26828e", "#21918c", "#1f9f88", "#27ad81", "#3dbc74",
                                    "#5cc863", "#81d34d", "#aadc32", "#d5e21a", "#fde725"};
constexpr const char* kCividis[] = {"#00224e", "#002e6a", "#1a386f", "#32436d", "#434e6c", "#535a6d",
                                    "#61656f", "#6f7073", "#7d7c78", "#8b8778", "#9a9376", "#aaa073",
                                    "#bbad6d", "#ccba64", "#ddc858", "#efd748", "#fee838"};
constexpr const char* kMagma[] = {"#000004", "#0a0822", "#1d1147", "#36106b", "#51127c", "#6a1c81",
                                  "#832681", "#9c2e7f", "#b73779", "#cf4070", "#e55064", "#f4695c",
                                  "#fb8761", "#fea571", "#fec287", "#fde0a1", "#fcfdbf"};
constexpr const char* kGray[] = {"#000000", "#ffffff"};
// ColorBrewer's 11-class RdBu, reversed: negative blue, zero white (#f7f7f7, the 6th stop: exactly
// at t = 0.5), positive red. For signed maps on a scale centred at 0.
constexpr const char* kRdBu[] = {"#053061", "#2166ac", "#4393c3", "#92c5de", "#d1e5f0", "#f7f7f7",
                                 "#fddbc7", "#f4a582", "#d6604d", "#b2182b", "#67001f"};

struct Stops {
    const char* const* colors;
    int count;
};

Stops stopsOf(Colormap map) {
    switch (map) {
        case Colormap::Viridis: return {kViridis, int(std::size(kViridis))};
        case Colormap::Cividis: return {kCividis, int(std::size(kCividis))};
        case Colormap::Magma: return {kMagma, int(std::size(kMagma))};
        case Colormap::Gray: return {kGray, int(std::size(kGray))};
        case Colormap::RdBu: return {kRdBu, int(std::size(kRdBu))};
    }
    return {kViridis, int(std::size(kViridis))};
}

QString superscript(int n) {
    static const char16_t digits[] = {0x2070, 0x00B9, 0x00B2, 0x00B3, 0x2074, 0x2075, 0x2076, 0x2077, 0x2078, 0x2079};
    QString out;
    if (n < 0) out += QChar(char16_t(0x207B));
    for (QChar c : QString::number(std::abs(n))) out += QChar(digits[c.digitValue()]);
    return out;
}

}  // namespace

QString colormapName(Colormap map) {
    switch (map) {
        case Colormap::Viridis: return QStringLiteral("viridis");
        case Colormap::Cividis: return QStringLiteral("cividis");
        case Colormap::Magma: return QStringLiteral("magma");
        case Colormap::Gray: return QStringLiteral("gray");
        case Colormap::RdBu: return QStringLiteral("rdbu");
    }
    return {};
}

QStringList colormapNames() {
    return {colormapName(Colormap::Viridis), colormapName(Colormap::Cividis), colormapName(Colormap::Magma),
            colormapName(Colormap::Gray)};
}

std::optional<Colormap> parseColormap(const QString& name) {
    for (Colormap m : {Colormap::Viridis, Colormap::Cividis, Colormap::Magma, Colormap::Gray})
        if (name.compare(colormapName(m), Qt::CaseInsensitive) == 0) return m;
    if (name.compare(QStringLiteral("grey"), Qt::CaseInsensitive) == 0) return Colormap::Gray;
    return std::nullopt;
}

namespace {

// The stops parsed once (colormapColor runs for every cell of every thumbnail).
const std::vector<QColor>& parsedStops(Colormap map) {
    static const std::array<std::vector<QColor>, 5> parsed = [] {
        std::array<std::vector<QColor>, 5> out;
        for (int m = 0; m < 5; ++m) {
            const Stops s = stopsOf(Colormap(m));
            for (int i = 0; i < s.count; ++i) out[std::size_t(m)].emplace_back(s.colors[i]);
        }
        return out;
    }();
    return parsed[std::size_t(map)];
}

}  // namespace

QColor colormapColor(Colormap map, double t) {
    const std::vector<QColor>& stops = parsedStops(map);
    const int count = int(stops.size());
    if (!(t > 0)) t = 0;  // also NaN
    if (t > 1) t = 1;
    const double x = t * (count - 1);
    const int i = std::min(int(x), count - 2);
    const double f = x - i;
    const QColor& a = stops[std::size_t(i)];
    const QColor& b = stops[std::size_t(i) + 1];
    const auto mix = [f](int u, int v) { return int(std::lround(u + (v - u) * f)); };
    return QColor(mix(a.red(), b.red()), mix(a.green(), b.green()), mix(a.blue(), b.blue()));
}

QGradientStops colormapStops(Colormap map) {
    const Stops s = stopsOf(map);
    QGradientStops out;
    for (int i = 0; i < s.count; ++i) out.append({double(i) / (s.count - 1), QColor(s.colors[i])});
    return out;
}

double ColorScale::lower() const { return type == ColorScaleType::Log ? logFloor * hi : lo; }

double ColorScale::position(double value) const {
    if (type == ColorScaleType::Linear) {
        if (!(hi > lo)) return 0.0;
        return std::clamp((value - lo) / (hi - lo), 0.0, 1.0);
    }
    const double floor = lower();
    if (!(value > floor) || !(hi > floor)) return 0.0;
    return std::clamp(std::log10(value / floor) / std::log10(hi / floor), 0.0, 1.0);
}

double ColorScale::valueAt(double p) const {
    if (type == ColorScaleType::Linear) return lo + p * (hi - lo);
    return lower() * std::pow(hi / lower(), p);
}

QList<double> ColorScale::ticks() const {
    QList<double> out;
    if (type == ColorScaleType::Linear) {
        for (int i = 0; i <= 4; ++i) out << lo + i * 0.25 * (hi - lo);
        return out;
    }
    const int first = int(std::ceil(std::log10(lower()) - 1e-9));
    const int last = int(std::floor(std::log10(hi) + 1e-9));
    for (int e = first; e <= last; ++e) out << std::pow(10.0, e);
    return out;
}

ColorScale rangedScale(ColorScaleType type, double lo, double hi) {
    ColorScale s;
    s.type = type;
    if (!std::isfinite(lo) || !std::isfinite(hi)) lo = 0, hi = 1;
    if (type == ColorScaleType::Log) {
        s.lo = 0;
        s.hi = hi > 0 ? hi : 1.0;  // the floor follows: hi · 10⁻⁴
        return s;
    }
    if (!(hi > lo)) hi = lo + (lo == 0 ? 1.0 : std::abs(lo));  // a constant map: one colour, a usable bar
    s.lo = lo;
    s.hi = hi;
    return s;
}

QString tickLabel(const ColorScale& scale, double value) {
    if (scale.type == ColorScaleType::Linear) {
        if (std::abs(value) < 1e-12 * std::max(std::abs(scale.lo), std::abs(scale.hi))) value = 0;  // "-1.4e-17"
        return QString::number(value, 'g', 3);
    }
    const int e = int(std::lround(std::log10(value)));
    return e == 0 ? QStringLiteral("1") : QStringLiteral("10") + superscript(e);
}

PooledMap poolMap(const attnscope::HeadMap& map, int maxSide) {
    attnscope::checkMapShape(map, "map image");
    if (map.rows <= 0 || map.cols <= 0) return {};
    // Large maps are pooled (mean over blocks of cells) so a thumbnail stays cheap to draw.
    const int f = maxSide > 0 ? std::max(1, int(std::ceil(double(std::max(map.rows, map.cols)) / maxSide))) : 1;
    PooledMap out;
    out.width = (map.cols + f - 1) / f;
    out.height = (map.rows + f - 1) / f;
    out.values.reserve(std::size_t(out.width) * std::size_t(out.height));
    for (int y = 0; y < out.height; ++y)
        for (int x = 0; x < out.width; ++x) {
            double sum = 0;
            int n = 0;
            for (int q = y * f; q < std::min(map.rows, (y + 1) * f); ++q)
                for (int k = x * f; k < std::min(map.cols, (x + 1) * f); ++k, ++n) sum += map.at(q, k);
            out.values.push_back(sum / std::max(n, 1));
        }
    return out;
}

QImage pooledImage(const PooledMap& pooled, Colormap colormap, const ColorScale& scale) {
    if (pooled.width <= 0 || pooled.height <= 0) return {};
    if (pooled.values.size() != std::size_t(pooled.width) * std::size_t(pooled.height))
        throw attnscope::Error("map image: a pooled map of " + std::to_string(pooled.height) + "x" +
                               std::to_string(pooled.width) + " holds " + std::to_string(pooled.values.size()) +
                               " values");
    QImage img(pooled.width, pooled.height, QImage::Format_RGB32);
    for (int y = 0; y < pooled.height; ++y) {
        auto* line = reinterpret_cast<QRgb*>(img.scanLine(y));
        const double* row = pooled.values.data() + std::size_t(y) * std::size_t(pooled.width);
        for (int x = 0; x < pooled.width; ++x) line[x] = colormapColor(colormap, scale.position(row[x])).rgb();
    }
    return img;
}

QImage mapImage(const attnscope::HeadMap& map, Colormap colormap, const ColorScale& scale, int maxSide) {
    return pooledImage(poolMap(map, maxSide), colormap, scale);
}
