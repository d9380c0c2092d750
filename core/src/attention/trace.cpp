#include "trace_impl.h"

#include "attnscope/runtime/error.h"
#include "favor.h"
#include "runtime/torch_errors.h"

#include <cmath>

namespace attnscope {

namespace {

void checkIndex(const char* what, int value, int count) {
    if (value < 0 || value >= count)
        throw Error(std::string(what) + " " + std::to_string(value) + " is out of range (0.." + std::to_string(count - 1) + ")");
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
const std::vector<float>& Trace::finalHidden() const { return impl_->finalHidden; }
int Trace::finalHiddenWidth() const { return impl_->finalHiddenWidth; }

const char* kindName(AttentionKind kind) {
    switch (kind) {
        case AttentionKind::Dot: return "dot";
        case AttentionKind::Additive: return "additive";
        case AttentionKind::Linear: return "linear";
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
    checkIndex("block", block, static_cast<int>(blocks.size()));
    const BlockInfo& info = infos[block];
    checkIndex("layer", layer, info.layers);
    checkIndex("head", head, info.heads);
    if (!(options.temperature > 0) || !std::isfinite(options.temperature))
        throw Error("temperature must be a finite number > 0, got " + std::to_string(options.temperature));
    const LayerCapture& cap = blocks[block].layers[layer];
    const MaskSpec& mask = cap.mask;
    const double temperature = options.temperature * cap.temperature;  // display × propagated
    const int group = info.kvGroup(head);
    MapVariant variant = options.variant;
    if (variant == MapVariant::Native)
        variant = cap.kind == AttentionKind::Linear ? MapVariant::Linear : MapVariant::Dot;
    if (cap.kind == AttentionKind::Additive) {
        if (options.variant != MapVariant::Native)
            throw Error("this layer uses additive attention; its captured projections only give its own map");
        return additiveProbs(cap.q[head], cap.k[head], cap.v[head], mask, temperature);
    }
    if (variant == MapVariant::Linear) {
        if (!cap.score.plain())
            throw Error("linear attention has no place for " + cap.score.extras() + " (layer " + std::to_string(layer) +
                        " of block '" + info.name + "' uses it); its map would silently drop it");
        // A Linear layer's own map uses elu+1, the feature map it was trained with.
        const FeatureMap fm = options.variant == MapVariant::Native ? FeatureMap::Elu : options.featureMap;
        // FAVOR+ estimates the softmax map, so it takes the layer's scale and the temperature.
        if (fm == FeatureMap::Favor)
            return favorProbs(cap.q[head], cap.k[group], mask, cap.score.scale / temperature, options.features, options.seed);
        return linearProbs(cap.q[head], cap.k[group], mask, fm);
    }
    return headProbs(cap.q[head], cap.k[group], mask, cap.score, head, temperature);
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

}  // namespace attnscope
