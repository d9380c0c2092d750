// Per-head metrics, rollout/flow and similarity of a Trace's blocks and KL between variants
// (trace_metrics.h). Plain C++ over the public Trace API.
#include "attnscope/analysis/trace_metrics.h"

#include "attnscope/runtime/error.h"

#include <algorithm>
#include <string>

namespace attnscope {

double variantKl(const Trace& trace, int block, int layer, int head, const MapOptions& p, const MapOptions& q) {
    return meanRowKl(trace.map(block, layer, head, p), trace.map(block, layer, head, q));
}

std::vector<int> separatorColumns(const BlockInfo& block, const std::vector<std::string>& labels) {
    std::vector<int> cols;
    for (std::size_t j = 0; j < block.keyTokens.size(); ++j)
        if (std::find(labels.begin(), labels.end(), block.keyTokens[j]) != labels.end()) cols.push_back(static_cast<int>(j));
    return cols;
}

std::vector<HeadMetrics> headMetrics(const Trace& trace, const MetricsOptions& options) {
    long long total = 0, done = 0;
    for (const BlockInfo& b : trace.blocks()) total += static_cast<long long>(b.layers) * b.heads;
    std::vector<HeadMetrics> out;
    for (int bi = 0; bi < static_cast<int>(trace.blocks().size()); ++bi) {
        const BlockInfo& b = trace.blocks()[bi];
        const std::vector<int> separators = separatorColumns(b, options.separatorLabels);
        MapOptions dot = options.map, linear = options.map;
        dot.variant = MapVariant::Dot;
        linear.variant = MapVariant::Linear;
        linear.featureMap = options.compareFeatureMap;
        // On a dot-product block the Native map is the Dot map: reuse it rather than compute it twice.
        const bool mapIsDot = options.map.variant == MapVariant::Dot ||
                              (options.map.variant == MapVariant::Native && b.kind == AttentionKind::Dot);
        for (int l = 0; l < b.layers; ++l)
            for (int h = 0; h < b.heads; ++h) {
                const HeadMap map = trace.map(bi, l, h, options.map);
                HeadMetrics m;
                m.block = b.name;
                m.layer = l;
                m.head = h;
                m.entropy = meanRowEntropy(map);
                m.meanDistance = meanAttentionDistance(map);
                m.firstToken = attentionToKeys(map, {0});
                m.separator = separators.empty() ? 0.0 : attentionToKeys(map, separators);
                m.scores = patternScores(map, options.thresholds);
                m.pattern = classifyPattern(m.scores, map.cols, options.thresholds);
                if (options.compareLinear && b.kind == AttentionKind::Dot) {
                    const HeadMap linearMap = trace.map(bi, l, h, linear);
                    m.klDotLinear = mapIsDot ? meanRowKl(map, linearMap) : meanRowKl(trace.map(bi, l, h, dot), linearMap);
                }
                out.push_back(std::move(m));
                if (options.progress && !options.progress(++done, total)) throw Cancelled();
            }
    }
    return out;
}

std::vector<HeadMap> layerMaps(const Trace& trace, int block, int layer, const MapOptions& options) {
    if (block < 0 || block >= static_cast<int>(trace.blocks().size()))
        throw Error("block " + std::to_string(block) + " is out of range");
    std::vector<HeadMap> maps;
    for (int h = 0; h < trace.blocks()[block].heads; ++h) maps.push_back(trace.map(block, layer, h, options));
    return maps;
}

namespace {

std::vector<HeadMap> averagedLayers(const Trace& trace, int block, const MapOptions& options) {
    if (block < 0 || block >= static_cast<int>(trace.blocks().size()))
        throw Error("block " + std::to_string(block) + " is out of range");
    const BlockInfo& b = trace.blocks()[block];
    if (b.queryTokens.size() != b.keyTokens.size())
        throw Error("rollout and flow need a self-attention block; '" + b.name + "' maps " +
                    std::to_string(b.queryTokens.size()) + " queries onto " + std::to_string(b.keyTokens.size()) + " keys");
    std::vector<HeadMap> layers;
    for (int l = 0; l < b.layers; ++l) layers.push_back(averageHeads(layerMaps(trace, block, l, options)));
    return layers;
}

}  // namespace

HeadMap blockRollout(const Trace& trace, int block, const MapOptions& options, double residual) {
    return attentionRollout(averagedLayers(trace, block, options), residual);
}

HeadMap blockFlow(const Trace& trace, int block, const MapOptions& options, const FlowOptions& flow) {
    return attentionFlow(averagedLayers(trace, block, options), flow);
}

std::vector<double> blockSimilarity(const Trace& trace, int block, const MapOptions& options) {
    if (block < 0 || block >= static_cast<int>(trace.blocks().size()))
        throw Error("block " + std::to_string(block) + " is out of range");
    std::vector<HeadMap> maps;
    for (int l = 0; l < trace.blocks()[block].layers; ++l)
        for (HeadMap& m : layerMaps(trace, block, l, options)) maps.push_back(std::move(m));
    return similarityMatrix(maps);
}

}  // namespace attnscope
