// Per-head metrics of any map source (analysis/source_metrics.h). Plain C++ over HeadMaps.
#include "attnscope/analysis/source_metrics.h"

#include "attnscope/analysis/alti.h"
#include "attnscope/analysis/value_norm.h"
#include "attnscope/attention/score_terms.h"
#include "attnscope/runtime/error.h"
#include "row_measures.h"

#include <cmath>
#include <limits>
#include <memory>

namespace attnscope {

MapProvider traceMapProvider(const Trace& trace, MapSource source) {
    if (source != MapSource::AltiRollout)
        return [&trace, source](int block, int layer, int head) {
            return sourceMap(trace, source, block, layer, std::max(head, 0));
        };
    struct Carried {
        int block = -1, layer = -1;
        HeadMap rollout;
    };
    auto carried = std::make_shared<Carried>();
    return [&trace, carried](int block, int layer, int) {
        Carried& c = *carried;
        if (c.block != block || layer < c.layer) c = Carried{block, -1, {}};
        while (c.layer < layer) c.rollout = altiRolloutStep(trace, block, ++c.layer, c.rollout);
        return c.rollout;
    };
}

std::vector<int> sourceCoveredBlocks(const Trace& trace, MapSource source) {
    const int count = static_cast<int>(trace.blocks().size());
    std::vector<int> blocks;
    for (int b = 0; b < count; ++b) {
        const bool covered = source == MapSource::Weights                                    ? true
                             : gradientSource(source)                                        ? b == 0
                             : scoreTermSource(source) ? b == 0 && !traceScoreTerms(trace).empty()
                             : source == MapSource::Alti || source == MapSource::AltiRollout ? hasAltiInputs(trace, b)
                                                                                             : hasValues(trace, b);
        if (covered) blocks.push_back(b);
    }
    if (blocks.empty() && count > 0 && !gradientSource(source)) sourceMap(trace, source, 0, 0, 0);  // throws why
    if (blocks.empty()) throw Error(std::string(sourceName(source)) + ": the trace has no block whose maps it covers");
    return blocks;
}

namespace {

// |x| / Σ_j |x_ij| per row (all-zero rows stay 0).
HeadMap rowShares(HeadMap map) {
    for (int i = 0; i < map.rows; ++i) {
        float* row = map.values.data() + static_cast<std::size_t>(i) * map.cols;
        double total = 0;
        for (int j = 0; j < map.cols; ++j) total += std::abs(row[j]);
        for (int j = 0; j < map.cols; ++j) row[j] = total > 0 ? static_cast<float>(std::abs(row[j]) / total) : 0.0f;
    }
    return map;
}

HeadMetrics measure(const HeadMap& map, const BlockInfo& block, int layer, int head, const MetricsOptions& options) {
    checkMapShape(map, "metrics");
    const std::vector<int> separators = separatorColumns(block, options.separatorLabels);
    RowMeasures sums(map.rows, map.cols, RowMeasures::All & ~RowMeasures::Kl, separators, options.thresholds);
    sums.addMap(map);
    HeadMetrics m = sums.headMetrics(block.name, layer, head, !separators.empty());
    m.klDotLinear = std::numeric_limits<double>::quiet_NaN();
    return m;
}

}  // namespace

std::vector<HeadMetrics> sourceHeadMetrics(const Trace& trace, MapSource source, const MapProvider& maps,
                                           const std::vector<int>& blocks, const MetricsOptions& options) {
    const bool perHead = perHeadSource(source), shares = !unitRangeSource(source);
    long long total = 0, done = 0;
    for (int b : blocks) {
        if (b < 0 || b >= static_cast<int>(trace.blocks().size()))
            throw Error("metrics: block " + std::to_string(b) + " is out of range");
        total += static_cast<long long>(trace.blocks()[b].layers) * (perHead ? trace.blocks()[b].heads : 1);
    }
    std::vector<HeadMetrics> out;
    for (int b : blocks) {
        const BlockInfo& info = trace.blocks()[b];
        for (int l = 0; l < info.layers; ++l)
            for (int h = perHead ? 0 : -1; h < (perHead ? info.heads : 0); ++h) {
                const HeadMap map = maps(b, l, h);
                out.push_back(measure(shares ? rowShares(map) : map, info, l, h, options));
                if (options.onHead) options.onHead(out.back());
                if (options.progress && !options.progress(++done, total)) throw Cancelled();
            }
    }
    return out;
}

}  // namespace attnscope
