#include "trace_impl.h"

#include "attnscope/runtime/error.h"
#include "blocked_attention.h"
#include "favor.h"
#include "kinds.h"
#include "pooled_map.h"
#include "runtime/torch_errors.h"

#include <cmath>
#include <memory>
#include <thread>
#include <vector>

namespace attnscope {

namespace {

void checkTraceIndex(const char* what, int value, int count) {
    if (value < 0 || value >= count)
        throw Error(std::string(what) + " " + std::to_string(value) + " is out of range (0.." +
                    std::to_string(count - 1) + ")");
}

// A captured q or k as maps use it: float32 on the CPU whatever the capture dtype
// (RunOptions::captureDtype), so maps are computed in float32.
at::Tensor forMap(const at::Tensor& t) { return t.is_cpu() && t.scalar_type() != at::kFloat ? t.to(at::kFloat) : t; }

// A given map at display temperature T: softmax(log p / T) = p^(1/T) renormalised per row, taken
// relative to the row's largest cell so that small T cannot underflow a whole row. A fresh
// float32 tensor: the given maps are a read-only file mapping that callers must not write.
at::Tensor givenProbs(const at::Tensor& given, double temperature) {
    at::Tensor p = given.to(at::kFloat, /*non_blocking=*/false, /*copy=*/true);
    if (temperature == 1.0) return p;
    const at::Tensor wide = given.to(at::kDouble);
    const at::Tensor rowMax = std::get<0>(wide.max(-1, /*keepdim=*/true)).clamp_min(1e-300);
    at::Tensor powered = (wide / rowMax).pow(1.0 / temperature);
    at::Tensor sums = powered.sum(-1, /*keepdim=*/true);
    sums.masked_fill_(sums <= 0, 1.0);
    return powered.div_(sums).to(at::kFloat);
}

// A hybrid layer's own map: g_i · additive + (1 - g_i) · dot per query row.
at::Tensor hybridProbs(const LayerCapture& cap, int head, int group, double temperature) {
    const at::Tensor dot = headProbs(forMap(cap.q[head]), forMap(cap.k[group]), cap.mask, cap.score, head, temperature);
    const at::Tensor add = additiveProbs(cap.qa[head], cap.ka[head], cap.v[head], cap.mask, temperature);
    const at::Tensor g = cap.gate[head].to(dot.options()).unsqueeze(-1);
    return g * add + (1 - g) * dot;
}

}  // namespace

Trace::Trace(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Trace::~Trace() = default;

const std::vector<std::int64_t>& Trace::ids() const { return impl_->ids; }
const std::vector<std::string>& Trace::tokens() const { return impl_->tokens; }
const std::vector<std::string>& Trace::displayTokens() const {
    return impl_->displayTokens.empty() ? impl_->tokens : impl_->displayTokens;
}
const std::vector<BlockInfo>& Trace::blocks() const { return impl_->infos; }
const std::vector<float>& Trace::nextTokenLogits() const { return impl_->nextTokenLogits; }
const std::vector<std::string>& Trace::classLabels() const { return impl_->classLabels; }
const std::vector<float>& Trace::classProbabilities() const { return impl_->classProbabilities; }
const std::vector<std::int64_t>& Trace::outputIds() const { return impl_->outputIds; }
const std::vector<std::string>& Trace::outputTokens() const { return impl_->outputTokens; }
const std::vector<float>& Trace::targetLogProbs() const { return impl_->targetLogProbs; }
const std::vector<float>& Trace::finalHidden() const { return impl_->finalHidden; }
int Trace::finalHiddenWidth() const { return impl_->finalHiddenWidth; }
const TokenPredictions& Trace::tokenPredictions() const { return impl_->tokenPredictions; }
const RouterTrace& traceRouter(const Trace& trace) { return trace.impl().router; }
const ScoreTerms& traceScoreTerms(const Trace& trace) { return trace.impl().scoreTerms; }
const ImageTextScore& traceImageText(const Trace& trace) { return trace.impl().imageText; }

const char* scoreTermName(int which) {
    static const char* const names[ScoreTerms::kTerms] = {"c2c", "c2p", "p2c"};
    return which >= 0 && which < ScoreTerms::kTerms ? names[which] : "";
}

HeadMap scoreTermMap(const Trace& trace, int which, int block, int layer, int head) {
    const ScoreTerms& t = traceScoreTerms(trace);
    if (which < 0 || which >= ScoreTerms::kTerms) throw Error("score term " + std::to_string(which) + " out of range");
    const auto what = [which] { return std::string("score term '") + scoreTermName(which) + "'"; };
    if (t.empty())
        throw Error(what() + ": the run recorded no score terms (DeBERTa v2/v3 with RunOptions::scoreTerms; the CLI's "
                             "attention --terms)");
    if (block != 0) throw Error(what() + ": the score terms cover the first attention block only");
    if (layer < 0 || layer >= t.layers || head < 0 || head >= t.heads)
        throw Error(what() + ": layer " + std::to_string(layer) + ", head " + std::to_string(head) + " out of range (" +
                    std::to_string(t.layers) + " layers, " + std::to_string(t.heads) + " heads)");
    const float* p = t.term(layer, head, which);
    return HeadMap{t.queries, t.keys, std::vector<float>(p, p + static_cast<std::size_t>(t.queries) * t.keys)};
}

const char* kindName(AttentionKind kind) {
    switch (kind) {
        case AttentionKind::Dot: return "dot";
        case AttentionKind::Additive: return "additive";
        case AttentionKind::Linear: return "linear";
        case AttentionKind::Local: return "local";
        case AttentionKind::TopK: return "topk";
        case AttentionKind::Lsh: return "lsh";
        case AttentionKind::Hybrid: return "hybrid";
    }
    return "?";
}
std::string Trace::device() const { return impl_->device.str(); }

int Trace::blockIndex(const std::string& name) const {
    std::string names;
    for (std::size_t i = 0; i < impl_->infos.size(); ++i) {
        if (impl_->infos[i].name == name) return static_cast<int>(i);
        names += (i ? ", " : "") + impl_->infos[i].name;
    }
    throw Error("this model has no '" + name + "' attention block (it has: " + names + ")");
}

at::Tensor Trace::Impl::mapTensor(int block, int layer, int head, const MapOptions& options) const {
    checkTraceIndex("block", block, static_cast<int>(blocks.size()));
    const BlockInfo& info = infos[block];
    checkTraceIndex("layer", layer, info.layers);
    checkTraceIndex("head", head, info.heads);
    if (!(options.temperature > 0) || !std::isfinite(options.temperature))
        throw Error("temperature must be a finite number > 0, got " + std::to_string(options.temperature));
    const LayerCapture& cap = blocks[block].layers[layer];
    const MaskSpec& mask = cap.mask;
    const double temperature = options.temperature * cap.temperature;  // display × propagated
    const int group = info.kvGroup(head);
    if (cap.maps.defined()) {
        if (options.variant != MapVariant::Native && options.variant != MapVariant::Dot)
            throw Error(source + ": the maps were read from this file, which holds no queries and keys; "
                                 "other attention variants need them");
        return givenProbs(cap.maps[head], temperature);
    }
    MapVariant variant = options.variant;
    SparseOptions sparse = options.sparse;
    if (variant == MapVariant::Native) {
        sparse = cap.sparse;
        switch (cap.kind) {
            case AttentionKind::Linear: variant = MapVariant::Linear; break;
            case AttentionKind::Local: variant = MapVariant::Local; break;
            case AttentionKind::TopK: variant = MapVariant::TopK; break;
            case AttentionKind::Lsh: variant = MapVariant::Lsh; break;
            case AttentionKind::Hybrid: return hybridProbs(cap, head, group, temperature);
            default: variant = MapVariant::Dot;
        }
    }
    if (cap.kind == AttentionKind::Additive) {
        if (options.variant != MapVariant::Native)
            throw Error("this layer uses additive attention; its captured projections only give its own map");
        return additiveProbs(cap.q[head], cap.k[head], cap.v[head], mask, temperature);
    }
    if (variant == MapVariant::Local || variant == MapVariant::TopK || variant == MapVariant::Lsh) {
        const at::Tensor q = forMap(cap.q[head]);
        const at::Tensor logits = headLogits(q, forMap(cap.k[group]), mask, cap.score, head, temperature);
        return softmaxKept(logits, sparseKeep(variant, sparse, logits, q, mask.causal));
    }
    if (variant == MapVariant::Linear) {
        if (!cap.score.plain())
            throw Error("linear attention has no place for " + cap.score.extras() + " (layer " + std::to_string(layer) +
                        " of block '" + info.name + "' uses it); its map would silently drop it");
        // A Linear layer's own map uses elu+1, the feature map it was trained with.
        const FeatureMap fm = options.variant == MapVariant::Native ? FeatureMap::Elu : options.featureMap;
        if (fm == FeatureMap::Cos) return cosProbs(forMap(cap.q[head]), forMap(cap.k[group]), mask);
        // FAVOR+ estimates the softmax map, so it takes the layer's scale and the temperature.
        if (fm == FeatureMap::Favor)
            return favorProbs(forMap(cap.q[head]), forMap(cap.k[group]), mask, cap.score.scale / temperature,
                              options.features, options.seed);
        return linearProbs(forMap(cap.q[head]), forMap(cap.k[group]), mask, fm);
    }
    return headProbs(forMap(cap.q[head]), forMap(cap.k[group]), mask, cap.score, head, temperature);
}

HeadMap Trace::map(int block, int layer, int head, const MapOptions& options) const {
    at::Tensor probs = translateTorchErrors("computing an attention map", [&] {
        return impl_->mapTensor(block, layer, head, options).to(at::kCPU, at::kFloat).contiguous();
    });
    HeadMap out;
    out.rows = static_cast<int>(probs.size(0));
    out.cols = static_cast<int>(probs.size(1));
    const float* p = probs.data_ptr<float>();
    out.values.assign(p, p + probs.numel());
    return out;
}

HeadMap Trace::pooledMap(int block, int layer, int head, const PoolRequest& pool, const MapOptions& options) const {
    checkTraceIndex("block", block, static_cast<int>(impl_->blocks.size()));
    const BlockInfo& info = impl_->infos[block];
    checkTraceIndex("layer", layer, info.layers);
    checkTraceIndex("head", head, info.heads);
    const LayerCapture& cap = impl_->blocks[block].layers[layer];
    const std::int64_t n = cap.q.size(1), m = cap.k.size(1);
    const PoolRect rect = resolvePoolRect(pool, n, m);
    const std::int64_t r0 = rect.rowBegin, r1 = rect.rowEnd, c0 = rect.colBegin, c1 = rect.colEnd;
    const bool dot = cap.kind == AttentionKind::Dot && !cap.maps.defined() &&
                     (options.variant == MapVariant::Native || options.variant == MapVariant::Dot);
    return translateTorchErrors("computing a pooled attention map", [&] {
        if (!dot) {  // other variants: pool the whole map
            MapPooler pooler(r0, r1, c0, c1, pool.outRows, pool.outCols, pool.pooling);
            pooler.add(impl_->mapTensor(block, layer, head, options).to(at::kCPU, at::kFloat), 0, 0);
            return pooler.result();
        }
        if (!(options.temperature > 0) || !std::isfinite(options.temperature))
            throw Error("temperature must be a finite number > 0, got " + std::to_string(options.temperature));
        const double temperature = options.temperature * cap.temperature;
        const at::Tensor q = forMap(cap.q[head]), k = forMap(cap.k[info.kvGroup(head)]);
        if (!q.device().is_cpu()) {
            // A GPU trace: blocks of rows as large as the device's budget allows, scored and
            // folded into the bins on the device; only the image comes back.
            MapPooler pooler(r0, r1, c0, c1, pool.outRows, pool.outCols, pool.pooling, /*onDevice=*/true);
            const std::int64_t rows = deviceBlockRows(1, n, m);
            for (std::int64_t start = r0 - r0 % rows; start < r1; start += rows) {
                const std::int64_t len = std::min(rows, n - start);
                const KeySpan span = keySpan(cap.mask, n, m, start, len);
                if (span.size() == 0 || span.hi <= c0 || span.lo >= c1) continue;
                pooler.add(
                        blockProbs(q.narrow(0, start, len), k, cap.mask, cap.score, head, temperature, n, start, span),
                        start, span.lo);
            }
            return pooler.result();
        }
        const PackedKeys packed = packKeys(k);
        const BlockedConfig config = blockedConfig();
        const std::int64_t rows = config.rows, first = r0 / rows, blocks = (r1 + rows - 1) / rows - first;
        const int threads = (r1 - r0) * (c1 - c0) < (1 << 18) || config.striping == Striping::Blas
                                    ? 1
                                    : static_cast<int>(std::min<std::int64_t>(
                                              blocks, std::max(1u, std::thread::hardware_concurrency())));
        std::vector<std::unique_ptr<MapPooler>> poolers;
        for (int t = 0; t < std::max(1, threads); ++t)
            poolers.push_back(std::make_unique<MapPooler>(r0, r1, c0, c1, pool.outRows, pool.outCols, pool.pooling));
        stripedForEach(blocks, threads, [&](std::int64_t b) {
            // Whole blocks, as Trace::map computes them (the products' rounding depends on a
            // row's place in its block), and every key the rows may see (the softmax needs
            // them all); the pooler keeps the rectangle's rows and keys.
            const std::int64_t start = (first + b) * rows, len = std::min(rows, n - start);
            const KeySpan span = keySpan(cap.mask, n, m, start, len);
            if (span.size() == 0 || span.hi <= c0 || span.lo >= c1) return;
            poolers[static_cast<std::size_t>(threads > 1 ? b % threads : 0)]->add(
                    blockProbs(q.narrow(0, start, len), k, cap.mask, cap.score, head, temperature, n, start, span,
                               packed),
                    start, span.lo);
        });
        for (std::size_t t = 1; t < poolers.size(); ++t) poolers[0]->merge(*poolers[t]);
        return poolers[0]->result();
    });
}

}  // namespace attnscope
