// forEachRowBlock (attnscope/attention/map_rows.h): a head's map handed out block of query rows by block, so that
// measures over a whole map (core/src/analysis) never need the n×n map itself.
#include "attnscope/attention/map_rows.h"

#include "map_rows_internal.h"
#include "trace_impl.h"

#include "attnscope/runtime/error.h"
#include "blocked_attention.h"
#include "runtime/torch_errors.h"
#include "runtime/vector_math.h"

#include <algorithm>
#include <cmath>
#include <thread>

namespace attnscope {

namespace {

void checkRange(const char* what, int value, int count) {
    if (value < 0 || value >= count)
        throw Error(std::string(what) + " " + std::to_string(value) + " is out of range (0.." +
                    std::to_string(count - 1) + ")");
}

// φ(q)·φ(k) over the keys the rows may see, zero elsewhere, rows normalised: the rows of
// linearProbs (normaliseAllowed) for one block, the mask's limits shifted to the block. `rows`:
// the products φ(q)·φ(k) over the span, [len, span.size()]; m keys.
at::Tensor linearRows(at::Tensor rows, std::int64_t m, const MaskSpec& mask, std::int64_t n, std::int64_t start,
                      KeySpan span) {
    const std::int64_t offset = m - n;
    rows = rows.contiguous();
    if (mask.keyAllowed.defined())
        rows.mul_(mask.keyAllowed.narrow(0, span.lo, span.size()).to(rows.options()).unsqueeze(0));
    if (mask.blocked.defined())
        rows.masked_fill_(mask.blocked.narrow(0, start, rows.size(0)).narrow(1, span.lo, span.size()).to(rows.device()),
                          0.0);
    // Row r keeps columns [r + e, r + u] (the causal limit j <= r + u, the window j >= r + e),
    // zero elsewhere, then is divided by its sum (runtime/vector_math.h).
    const std::int64_t len = rows.size(0), W = rows.size(1);
    const std::int64_t u = start + offset - span.lo, e = start + offset - mask.window + 1 - span.lo;
    float* data = rows.data_ptr<float>();
    for (std::int64_t r = 0; r < len; ++r)
        vmath::normaliseRow(data + r * W, W, mask.window > 0 ? r + e : 0, mask.causal ? r + u + 1 : W);
    return rows;
}

}  // namespace

PackedKeys SharedKeys::packed(const LayerCapture& cap, int block, int layer, int group) {
    const std::lock_guard<std::mutex> lock(mutex_);
    PackedKeys& p = packed_[{block, layer, group}];
    if (p.empty()) p = packKeys(cap.k[group].to(at::kCPU, at::kFloat));
    return p;
}

at::Tensor SharedKeys::features(const LayerCapture& cap, int block, int layer, int group, FeatureMap map) {
    const std::lock_guard<std::mutex> lock(mutex_);
    at::Tensor& f = features_[{block, layer, group, static_cast<int>(map)}];
    if (!f.defined()) f = featureMap(cap.k[group].to(at::kCPU, at::kFloat), map).contiguous();
    return f;
}

PackedKeys SharedKeys::packedFeatures(const LayerCapture& cap, int block, int layer, int group, FeatureMap map) {
    const at::Tensor f = features(cap, block, layer, group, map);
    const std::lock_guard<std::mutex> lock(mutex_);
    PackedKeys& p = packedFeatures_[{block, layer, group, static_cast<int>(map)}];
    if (p.empty()) p = packKeys(f);
    return p;
}

// How to compute rows of the map `options` asks for, per block where the variant allows it.
RowsOf rowsOf(const Trace::Impl& impl, int block, int layer, int head, const MapOptions& options,
              SharedKeys* shared) {
    if (!(options.temperature > 0) || !std::isfinite(options.temperature))
        throw Error("temperature must be a finite number > 0, got " + std::to_string(options.temperature));
    const LayerCapture& cap = impl.blocks[block].layers[layer];
    const BlockInfo& info = impl.infos[block];
    MapVariant variant = options.variant;
    if (variant == MapVariant::Native)
        variant = cap.kind == AttentionKind::Linear ? MapVariant::Linear : MapVariant::Dot;
    const FeatureMap fm = options.variant == MapVariant::Native ? FeatureMap::Elu : options.featureMap;
    // Dot and linear rows are computed per block on the CPU, from a GPU trace too: one head's Q
    // and K come over (n × d values each) instead of its n × n map. Given maps: the whole-map path.
    const bool blocked = !cap.maps.defined();
    const std::int64_t n = cap.q.size(1);
    if (blocked && cap.kind != AttentionKind::Additive && variant == MapVariant::Dot) {
        const at::Tensor q = cap.q[head].to(at::kCPU, at::kFloat),
                         k = cap.k[info.kvGroup(head)].to(at::kCPU, at::kFloat);
        const double temperature = options.temperature * cap.temperature;
        const PackedKeys packed = shared ? shared->packed(cap, block, layer, info.kvGroup(head)) : packKeys(k);
        return [&cap, q, k, head, temperature, n, packed](std::int64_t start, std::int64_t len, KeySpan span,
                                                          at::Tensor* logs, float* into) {
            at::Tensor rows = blockProbs(q.narrow(0, start, len), k, cap.mask, cap.score, head, temperature, n, start,
                                         span, packed, logs, into)
                                      .to(at::kFloat)
                                      .contiguous();
            if (logs && logs->defined() && !(logs->scalar_type() == at::kFloat && logs->is_contiguous()))
                *logs = at::Tensor();
            return rows;
        };
    }
    if (blocked && cap.kind != AttentionKind::Additive && variant == MapVariant::Linear && fm != FeatureMap::Favor &&
        cap.score.plain()) {
        const at::Tensor q = cap.q[head].to(at::kCPU, at::kFloat);
        const int group = info.kvGroup(head);
        const at::Tensor phiK = shared ? shared->features(cap, block, layer, group, fm)
                                       : featureMap(cap.k[group].to(at::kCPU, at::kFloat), fm);
        const PackedKeys packed = shared ? shared->packedFeatures(cap, block, layer, group, fm) : packKeys(phiK);
        return [&cap, q, phiK, packed, fm, n](std::int64_t start, std::int64_t len, KeySpan span, at::Tensor* logs,
                                              float*) {
            if (logs) *logs = at::Tensor();
            const at::Tensor phiQ = featureMap(q.narrow(0, start, len), fm);
            at::Tensor products = !packed.empty() ? packedRowProducts(phiQ, packed, span)
                                                  : at::mm(phiQ, phiK.narrow(0, span.lo, span.size()).t());
            return linearRows(std::move(products), phiK.size(0), cap.mask, n, start, span);
        };
    }
    // FAVOR+ and additive maps: the whole map once (mapTensor also refuses what it must).
    const at::Tensor full = impl.mapTensor(block, layer, head, options).to(at::kCPU, at::kFloat).contiguous();
    return [full](std::int64_t start, std::int64_t len, KeySpan span, at::Tensor* logs, float*) {
        if (logs) *logs = at::Tensor();
        return full.narrow(0, start, len).narrow(1, span.lo, span.size()).contiguous();
    };
}

std::pair<int, int> mapShape(const Trace& trace, int block, int layer) {
    const Trace::Impl& impl = trace.impl();
    checkRange("block", block, static_cast<int>(impl.blocks.size()));
    checkRange("layer", layer, impl.infos[block].layers);
    const LayerCapture& cap = impl.blocks[block].layers[layer];
    return {static_cast<int>(cap.q.size(1)), static_cast<int>(cap.k.size(1))};
}

std::string linearMapRefusal(const Trace& trace, int block, int layer) {
    const Trace::Impl& impl = trace.impl();
    checkRange("block", block, static_cast<int>(impl.blocks.size()));
    checkRange("layer", layer, impl.infos[block].layers);
    return impl.blocks[block].layers[layer].score.extras();
}

void forEachRowBlock(const Trace& trace, int block, int layer, int head, const MapOptions& options, int workers,
                     const std::function<void(int, const MapRowBlock&)>& visit, const MapOptions* second, int rowBegin,
                     int rowEnd, bool withLogs) {
    const Trace::Impl& impl = trace.impl();
    checkRange("block", block, static_cast<int>(impl.blocks.size()));
    const BlockInfo& info = impl.infos[block];
    checkRange("layer", layer, info.layers);
    checkRange("head", head, info.heads);
    const LayerCapture& cap = impl.blocks[block].layers[layer];
    translateTorchErrors("computing an attention map", [&] {
        const RowsOf first = rowsOf(impl, block, layer, head, options);
        const RowsOf other = second ? rowsOf(impl, block, layer, head, *second) : RowsOf();
        const std::int64_t n = cap.q.size(1), m = cap.k.size(1);
        const std::int64_t r0 = rowBegin, r1 = rowEnd > 0 ? rowEnd : n;
        if (r0 < 0 || r1 > n || r0 >= r1)
            throw Error("map rows " + std::to_string(r0) + ".." + std::to_string(r1) + " are not inside the map's " +
                        std::to_string(n) + " rows");
        const std::int64_t rows = blockedConfig().rows, first0 = r0 / rows, blocks = (r1 + rows - 1) / rows - first0;
        const int cores = workers > 0 ? workers : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        // Small maps are not worth a thread start.
        const int threads = (r1 - r0) * m < (1 << 18) ? 1 : static_cast<int>(std::min<std::int64_t>(cores, blocks));
        stripedForEach(blocks, threads, [&](std::int64_t b) {
            // The whole block is computed, as Trace::map does (the products' rounding depends on
            // a row's place in its block), and rows [s, e) of it are handed out.
            const std::int64_t start = (first0 + b) * rows, len = std::min(rows, n - start);
            const std::int64_t s = std::max(r0, start), e = std::min(r1, start + len);
            const KeySpan span = keySpan(cap.mask, n, m, start, len);
            MapRowBlock out;
            out.rowBegin = static_cast<int>(s);
            out.rows = static_cast<int>(e - s);
            out.cols = static_cast<int>(m);
            out.colBegin = static_cast<int>(span.size() ? span.lo : 0);
            out.colEnd = static_cast<int>(span.size() ? span.hi : 0);
            at::Tensor a, c, logs;
            if (span.size()) {
                a = first(start, len, span, withLogs ? &logs : nullptr, nullptr);
                out.values = a.data_ptr<float>() + (s - start) * span.size();
                if (logs.defined()) out.logValues = logs.data_ptr<float>() + (s - start) * span.size();
                if (other) {
                    c = other(start, len, span, nullptr, nullptr);
                    out.second = c.data_ptr<float>() + (s - start) * span.size();
                }
            }
            visit(threads > 1 ? static_cast<int>(b % threads) : 0, out);
        });
    });
}

}  // namespace attnscope
