#include "figure/sourceview.h"

#include "attnscope/analysis/gradient_sources.h"
#include "attnscope/attention/trace.h"

#include <algorithm>
#include <cmath>
#include <limits>

SourceColors sourceColors(attnscope::MapSource source, Colormap chosen, ColorScaleType type, double minValue,
                          double maxValue) {
    if (attnscope::unitRangeSource(source)) return {chosen, ColorScale{type}};
    if (attnscope::signedSource(source)) {
        double m = std::max(std::abs(minValue), std::abs(maxValue));
        if (!(m > 0) || !std::isfinite(m)) m = 1.0;
        return {Colormap::RdBu, rangedScale(ColorScaleType::Linear, -m, m)};
    }
    return {chosen, rangedScale(type, minValue, maxValue)};
}

SourceColors sourceColors(attnscope::MapSource source, Colormap chosen, ColorScaleType type,
                          const std::vector<float>& values) {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (float v : values)
        if (std::isfinite(v)) lo = std::min(lo, double(v)), hi = std::max(hi, double(v));
    if (lo > hi) lo = 0, hi = 1;  // nothing finite
    return sourceColors(source, chosen, type, lo, hi);
}

QString sourceValueName(attnscope::MapSource source) {
    switch (source) {
        case attnscope::MapSource::Weights: return QStringLiteral("attention");
        case attnscope::MapSource::ValueNorm: return QStringLiteral("\u03b1\u00b7\u2016f(x)\u2016");
        case attnscope::MapSource::ValueNormLayer: return QStringLiteral("\u2016\u03a3 \u03b1 f(x)\u2016");
        case attnscope::MapSource::Alti:
        case attnscope::MapSource::AltiRollout: return QStringLiteral("contribution");
        case attnscope::MapSource::GradWeighted: return QStringLiteral("\u2202s/\u2202\u03b1 \u00b7 \u03b1");
        case attnscope::MapSource::Relevance: return QStringLiteral("relevance");
        case attnscope::MapSource::ScoreC2C: return QStringLiteral("score c2c");
        case attnscope::MapSource::ScoreC2P: return QStringLiteral("score c2p");
        case attnscope::MapSource::ScoreP2C: return QStringLiteral("score p2c");
    }
    return QStringLiteral("attention");
}

QString sourceTitleSuffix(attnscope::MapSource source) {
    if (source == attnscope::MapSource::Weights) return {};
    return QStringLiteral(" \u00b7 ") + QString::fromUtf8(attnscope::sourceLabel(source));
}

bool classTarget(const attnscope::Trace& trace) { return !trace.classLabels().empty(); }

attnscope::GradientTarget gradientTarget(const attnscope::Trace& trace, std::optional<std::int64_t> target) {
    attnscope::GradientTarget t;
    if (!target) return t;
    if (classTarget(trace))
        t.classIndex = int(*target);
    else
        t.token = *target;
    return t;
}
