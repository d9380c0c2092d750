// The lab's variant over every head (lab_views.h): pooled thumbnails and per-head metrics.
#include "attnscope/lab/lab_views.h"

#include "analysis/row_measures.h"
#include "attention/pooled_map.h"
#include "attnscope/attention/attention_file.h"
#include "attnscope/attention/map_rows.h"
#include "attnscope/runtime/error.h"

#include <ATen/ATen.h>

#include <limits>
#include <string>

namespace attnscope {

const AdditiveFit* fitOf(const std::vector<HeadFit>& fits, int block, int layer, int head) {
    for (const HeadFit& f : fits)
        if (f.fit && f.block == block && f.layer == layer && f.head == head) return f.fit.get();
    return nullptr;
}

bool labMapAvailable(const BlockInfo& block, LabVariant variant, const AdditiveFit* fit) {
    return fit || !variantNeedsFit(block, variant);
}

namespace {

// The Trace's own variant that gives the lab's map on this block, when there is one: false for
// Hybrid and for Additive on a layer that is not additive (a fit's map, or a mix of two).
bool traceVariant(const BlockInfo& block, LabVariant variant, MapVariant& out) {
    switch (variant) {
        case LabVariant::Native: out = MapVariant::Native; return true;
        case LabVariant::Dot: out = MapVariant::Dot; return true;
        case LabVariant::Linear: out = MapVariant::Linear; return true;
        case LabVariant::Local: out = MapVariant::Local; return true;
        case LabVariant::TopK: out = MapVariant::TopK; return true;
        case LabVariant::Lsh: out = MapVariant::Lsh; return true;
        case LabVariant::Additive: out = MapVariant::Native; return block.kind == AttentionKind::Additive;
        case LabVariant::Hybrid: return false;
    }
    return false;
}

const BlockInfo& blockOf(const Trace& trace, int block) {
    if (block < 0 || block >= static_cast<int>(trace.blocks().size()))
        throw Error("block " + std::to_string(block) + " is out of range (the trace has " +
                    std::to_string(trace.blocks().size()) + ")");
    return trace.blocks()[static_cast<std::size_t>(block)];
}

}  // namespace

HeadMap poolHeadMap(const HeadMap& map, const PoolRequest& pool) {
    checkMapShape(map, "pooled map");
    const std::int64_t n = map.rows, m = map.cols;
    const PoolRect rect = resolvePoolRect(pool, n, m);
    const std::int64_t r0 = rect.rowBegin, r1 = rect.rowEnd, c0 = rect.colBegin, c1 = rect.colEnd;
    MapPooler pooler(r0, r1, c0, c1, pool.outRows, pool.outCols, pool.pooling);
    // The pooler reads the values in place (from_blob does not copy, and add() only reads).
    pooler.add(at::from_blob(const_cast<float*>(map.values.data()), {n, m}, at::kFloat), 0, 0);
    return pooler.result();
}

HeadMap labPooledMap(const Trace& trace, int block, int layer, int head, const PoolRequest& pool,
                     const VariantSpec& spec, const AdditiveFit* fit) {
    MapVariant variant = MapVariant::Native;
    if (traceVariant(blockOf(trace, block), spec.variant, variant)) {
        MapOptions o = spec.map;
        o.variant = variant;
        return trace.pooledMap(block, layer, head, pool, o);
    }
    return poolHeadMap(labMap(trace, block, layer, head, spec, fit).map, pool);
}

std::vector<HeadMetrics> labHeadMetrics(const Trace& trace, const VariantSpec& spec, const std::vector<HeadFit>& fits,
                                        MetricsOptions options) {
    options.map = spec.map;
    bool direct = true;
    MapVariant variant = MapVariant::Native;
    for (const BlockInfo& b : trace.blocks()) direct = traceVariant(b, spec.variant, variant) && direct;
    if (direct) {
        options.map.variant = variant;
        return headMetrics(trace, options);
    }
    // Each head's lab map whole (a fit's map is whole already), measured by the same sums
    // headMetrics uses (RowMeasures), its fields filled as headMetrics fills them.
    long long total = 0, done = 0;
    for (const BlockInfo& b : trace.blocks()) total += static_cast<long long>(b.layers) * b.heads;
    std::vector<HeadMetrics> out;
    const unsigned want = RowMeasures::Entropy | RowMeasures::Distance | RowMeasures::Patterns | RowMeasures::Keys |
                          RowMeasures::FirstKey | RowMeasures::Sink;
    for (int bi = 0; bi < static_cast<int>(trace.blocks().size()); ++bi) {
        const BlockInfo& b = trace.blocks()[static_cast<std::size_t>(bi)];
        const std::vector<int> separators = separatorColumns(b, options.separatorLabels);
        MapOptions dot = options.map, linear = options.map;
        dot.variant = MapVariant::Dot;
        linear.variant = MapVariant::Linear;
        linear.featureMap = options.compareFeatureMap;
        const bool compare = options.compareLinear && b.kind == AttentionKind::Dot && !mapsOnly(trace);
        for (int l = 0; l < b.layers; ++l)
            for (int h = 0; h < b.heads; ++h) {
                const AdditiveFit* fit = fitOf(fits, bi, l, h);
                if (labMapAvailable(b, spec.variant, fit)) {
                    const HeadMap map = labMap(trace, bi, l, h, spec, fit).map;
                    RowMeasures m(map.rows, map.cols, want, separators, options.thresholds);
                    m.addMap(map);
                    HeadMetrics r = m.headMetrics(b.name, l, h, !separators.empty());
                    // Not defined where the logits add what linear attention has no place for.
                    if (compare)
                        r.klDotLinear = linearMapRefusal(trace, bi, l).empty()
                                                ? variantKl(trace, bi, l, h, dot, linear)
                                                : std::numeric_limits<double>::quiet_NaN();
                    if (options.onHead) options.onHead(r);
                    out.push_back(std::move(r));
                }
                if (options.progress && !options.progress(++done, total)) throw Cancelled();
            }
    }
    return out;
}

}  // namespace attnscope
