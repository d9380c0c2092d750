// Per-head Hedgehog distillation (lab/hedgehog.h). The learned map is the one of
// attention/learned_features.h, differentiated by autograd; the loss is the distillation KL of the
// built-in students (models/builtin/distillation.h: mapKl), the reported KL the one of
// analysis/metrics.h.
#include "attnscope/lab/hedgehog.h"

#include "attnscope/analysis/metrics.h"
#include "attnscope/lab/interventions.h"
#include "attnscope/runtime/error.h"
#include "adam.h"
#include "attention/learned_features.h"
#include "attention/rng.h"
#include "attention/trace_impl.h"
#include "models/builtin/distillation.h"
#include "runtime/torch_errors.h"

#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <chrono>
#include <cmath>

namespace attnscope {

namespace {

// One input's distilled layers, heads of all layers stacked (G = layers · heads), on the CPU.
struct HedgehogSample {
    std::shared_ptr<const Trace> trace;
    at::Tensor q, k, target, allowed;  // [G, n, d], [G, m, d] (each head's key group), [G, n, m], [G, n, m]
};

std::vector<int> distilledLayers(const BlockInfo& info, std::vector<int> layers) {
    if (layers.empty())
        for (int l = 0; l < info.layers; ++l) layers.push_back(l);
    std::sort(layers.begin(), layers.end());
    for (std::size_t i = 0; i < layers.size(); ++i) {
        if (layers[i] < 0 || layers[i] >= info.layers)
            throw Error("layer " + std::to_string(layers[i]) + " is out of range: block '" + info.name +
                        "' has layers 0.." + std::to_string(info.layers - 1));
        if (i > 0 && layers[i] == layers[i - 1]) throw Error("layer " + std::to_string(layers[i]) + " is given twice");
    }
    return layers;
}

HedgehogSample recordSample(const Model& model, const std::vector<std::int64_t>& ids, int block,
                            const std::vector<int>& layers) {
    HedgehogSample s;
    s.trace = model.forward(ids);
    const Trace::Impl& impl = s.trace->impl();
    const BlockInfo& info = impl.infos[static_cast<std::size_t>(block)];
    std::vector<at::Tensor> q, k, p, allowed;
    const auto cpu = at::TensorOptions().dtype(at::kFloat);
    std::vector<std::int64_t> groups;
    for (int h = 0; h < info.heads; ++h) groups.push_back(info.kvGroup(h));
    const at::Tensor groupIndex = at::tensor(groups, at::TensorOptions().dtype(at::kLong));
    for (int l : layers) {
        const LayerCapture& cap = impl.blocks[static_cast<std::size_t>(block)].layers[static_cast<std::size_t>(l)];
        if (cap.kind != AttentionKind::Dot)
            throw Error("per-head distillation needs dot-product attention; layer " + std::to_string(l) + " of '" +
                        info.name + "' is " + kindName(cap.kind));
        q.push_back(cap.q.to(at::kCPU, at::kFloat));
        k.push_back(cap.k.to(at::kCPU, at::kFloat).index_select(0, groupIndex));
        std::vector<at::Tensor> maps;
        for (int h = 0; h < info.heads; ++h)
            maps.push_back(impl.mapTensor(block, l, h, MapOptions{}).to(at::kCPU, at::kFloat));
        p.push_back(at::stack(maps));
        const at::Tensor cells = allowedCells(cap.mask, cap.q.size(1), cap.k.size(1), cpu);
        allowed.push_back(cells.unsqueeze(0).expand({info.heads, cells.size(0), cells.size(1)}));
    }
    // Clones outside inference mode: the Trace's tensors may be inference tensors, which autograd
    // cannot save.
    s.q = at::cat(q).clone();
    s.k = at::cat(k).clone();
    s.target = at::cat(p).clone();
    s.allowed = at::cat(allowed).clone();
    return s;
}

struct FeatureParams {
    at::Tensor wq, bq, wk, bk;  // [G, d, d], [G, d]
    std::vector<at::Tensor*> all() { return {&wq, &bq, &wk, &bk}; }
};

FeatureParams identityParams(std::int64_t heads, std::int64_t d) {
    FeatureParams p;
    p.wq = at::eye(d, at::kFloat).unsqueeze(0).repeat({heads, 1, 1});
    p.wk = p.wq.clone();
    p.bq = at::zeros({heads, d}, at::kFloat);
    p.bk = p.bq.clone();
    return p;
}

at::Tensor learnedMapOf(const HedgehogSample& s, const FeatureParams& p) {
    return learnedLinearMapOver(learnedFeatures(s.q, p.wq, p.bq), learnedFeatures(s.k, p.wk, p.bk), s.allowed);
}

std::vector<float> tensorValues(const at::Tensor& t) {
    const at::Tensor c = t.detach().to(at::kCPU, at::kFloat).contiguous();
    return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

std::vector<LinearHead> linearHeadsOf(const FeatureParams& p, const std::string& block, const std::vector<int>& layers,
                                      int heads) {
    std::vector<LinearHead> out;
    const int d = static_cast<int>(p.wq.size(2));
    for (std::size_t li = 0; li < layers.size(); ++li)
        for (int h = 0; h < heads; ++h) {
            const std::int64_t g = static_cast<std::int64_t>(li) * heads + h;
            LinearHead head;
            head.head = {block, layers[li], h};
            head.query = {d, d, tensorValues(p.wq[g]), tensorValues(p.bq[g])};
            head.key = {d, d, tensorValues(p.wk[g]), tensorValues(p.bk[g])};
            out.push_back(std::move(head));
        }
    return out;
}

void fitFeatureMaps(FeatureParams& p, const std::vector<HedgehogSample>& train, const HedgehogOptions& o,
                    std::vector<double>& history) {
    for (at::Tensor* t : p.all()) t->requires_grad_(true);
    std::vector<Adam> adam(4);
    SplitMix rng(o.seed ^ 0x48656467ull);
    std::vector<std::size_t> order;
    std::size_t next = 0;
    const std::size_t batch = std::min<std::size_t>(static_cast<std::size_t>(o.batch), train.size());
    for (int step = 1; step <= o.steps; ++step) {
        if (o.progress && !o.progress(step - 1, o.steps)) throw Cancelled();
        at::Tensor loss;
        for (std::size_t b = 0; b < batch; ++b) {
            if (next == order.size()) {  // a new pass over the training inputs, shuffled
                order.resize(train.size());
                for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
                for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.next() % i]);
                next = 0;
            }
            const HedgehogSample& s = train[order[next++]];
            const at::Tensor kl = builtin::mapKl(s.target.unsqueeze(0), learnedMapOf(s, p).unsqueeze(0), {});
            loss = loss.defined() ? loss + kl : kl;
        }
        loss = loss / static_cast<double>(batch);
        history.push_back(loss.item<double>());
        loss.backward();
        at::NoGradGuard noGrad;
        const auto params = p.all();
        for (std::size_t i = 0; i < params.size(); ++i) {
            adam[i].step(*params[i], params[i]->grad(), o.learningRate, step);
            params[i]->grad().zero_();
        }
    }
    for (at::Tensor* t : p.all()) *t = t->detach();
}

HeadMap mapOfTensor(const at::Tensor& t) {
    const at::Tensor c = t.detach().to(at::kCPU, at::kFloat).contiguous();
    HeadMap out{static_cast<int>(c.size(0)), static_cast<int>(c.size(1)), {}};
    out.values.assign(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
    return out;
}

// Row-weighted mean KL(P ‖ map) per head over the samples; map(sample, g) gives head g's map.
template <class MapOf>
std::vector<double> headMeanKl(const std::vector<HedgehogSample>& samples, std::int64_t heads, const MapOf& mapOf) {
    std::vector<double> kl(static_cast<std::size_t>(heads), 0.0);
    double rows = 0;
    for (const HedgehogSample& s : samples) {
        const double n = static_cast<double>(s.q.size(1));
        for (std::int64_t g = 0; g < heads; ++g)
            kl[static_cast<std::size_t>(g)] += n * meanRowKl(mapOfTensor(s.target[g]), mapOf(s, g));
        rows += n;
    }
    for (double& v : kl) v /= rows;
    return kl;
}

OutputChangeSummary summariseOutputChange(const Model& model, const std::vector<HedgehogSample>& samples,
                                          const std::vector<LinearHead>& heads) {
    OutputChangeSummary sum;
    RunOptions options;
    options.linearHeads = heads;
    for (const HedgehogSample& s : samples) {
        const OutputChange c = rerun(model, *s.trace, options).change;
        sum.kind = c.kind;
        sum.meanKl += c.kl;
        sum.top1Agreement += c.sameTop ? 1 : 0;
        sum.meanMagnitude += c.magnitude();
        ++sum.inputs;
    }
    if (sum.inputs > 0) {
        sum.meanKl /= sum.inputs;
        sum.top1Agreement /= sum.inputs;
        sum.meanMagnitude /= sum.inputs;
    }
    return sum;
}

void checkHedgehogOptions(const HedgehogOptions& o, std::size_t inputs) {
    if (inputs == 0) throw Error("per-head distillation needs at least one input text");
    if (o.steps < 1 || o.batch < 1) throw Error("per-head distillation: steps and batch must be >= 1");
    if (!(o.learningRate > 0) || !std::isfinite(o.learningRate))
        throw Error("per-head distillation: the learning rate must be a finite number > 0");
}

double hedgehogSeconds(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

LinearHead identityLinearHead(const HeadRef& head, int dim) {
    LinearHead out;
    out.head = head;
    std::vector<float> eye(static_cast<std::size_t>(dim) * dim, 0.f);
    for (int i = 0; i < dim; ++i) eye[static_cast<std::size_t>(i) * dim + i] = 1.f;
    out.query = {dim, dim, eye, std::vector<float>(static_cast<std::size_t>(dim), 0.f)};
    out.key = out.query;
    return out;
}

HeadMap hedgehogMap(const Trace& trace, int block, int layer, int head, const LinearHead& maps) {
    const Trace::Impl& impl = trace.impl();
    (void)impl.mapTensor(block, layer, head, MapOptions{});  // checks the indices
    const LayerCapture& cap = impl.blocks[static_cast<std::size_t>(block)].layers[static_cast<std::size_t>(layer)];
    const BlockInfo& info = impl.infos[static_cast<std::size_t>(block)];
    if (impl.mapsOnly)
        throw Error(impl.source + ": the maps were read from this file, which holds no queries and keys");
    if (cap.kind != AttentionKind::Dot)
        throw Error("a learned linear map replaces dot-product attention; layer " + std::to_string(layer) + " of '" +
                    info.name + "' is " + kindName(cap.kind));
    return translateTorchErrors("computing a learned linear map", [&] {
        return mapOfTensor(linearHeadMap(cap.q[head], cap.k[info.kvGroup(head)], cap.mask, maps));
    });
}

HedgehogResult distilHeads(const Model& model, const std::vector<std::vector<std::int64_t>>& inputs,
                           const HedgehogOptions& options) {
    checkHedgehogOptions(options, inputs.size());
    HedgehogResult r;
    std::vector<HedgehogSample> train, eval;
    r.heldOut = inputs.size() >= 5;
    int block = 0;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (i == 0) {  // the block and layers, from the first trace
            const auto first = model.forward(inputs[0]);
            block = options.block.empty() ? 0 : first->blockIndex(options.block);
            const BlockInfo& info = first->blocks()[static_cast<std::size_t>(block)];
            r.block = info.name;
            r.layers = distilledLayers(info, options.layers);
            r.heads = info.heads;
        }
        HedgehogSample s = translateTorchErrors("recording input " + std::to_string(i + 1),
                                                [&] { return recordSample(model, inputs[i], block, r.layers); });
        (r.heldOut && i % 5 == 4 ? eval : train).push_back(std::move(s));
    }
    if (!r.heldOut) eval = train;
    r.trainInputs = static_cast<int>(train.size());
    r.evalInputs = static_cast<int>(eval.size());
    r.dim = static_cast<int>(train[0].q.size(2));
    const std::int64_t G = train[0].q.size(0);

    const auto start = std::chrono::steady_clock::now();
    FeatureParams params = identityParams(G, r.dim);
    const FeatureParams initial = identityParams(G, r.dim);
    translateTorchErrors("fitting the learned feature maps",
                         [&] { fitFeatureMaps(params, train, options, r.lossHistory); });
    r.fitted = linearHeadsOf(params, r.block, r.layers, r.heads);
    r.trainSeconds = hedgehogSeconds(start);

    const auto evalStart = std::chrono::steady_clock::now();
    const std::vector<LinearHead> initialHeads = linearHeadsOf(initial, r.block, r.layers, r.heads);
    const auto layerHead = [&](std::int64_t g) {
        return std::make_pair(r.layers[static_cast<std::size_t>(g / r.heads)], static_cast<int>(g % r.heads));
    };
    r.klElu = headMeanKl(eval, G, [&](const HedgehogSample& s, std::int64_t g) {
        MapOptions elu;
        elu.variant = MapVariant::Linear;
        elu.featureMap = FeatureMap::Elu;
        const auto [l, h] = layerHead(g);
        return s.trace->map(block, l, h, elu);
    });
    const auto learned = [&](const std::vector<LinearHead>& heads) {
        return [&, heads](const HedgehogSample& s, std::int64_t g) {
            const auto [l, h] = layerHead(g);
            return hedgehogMap(*s.trace, block, l, h, heads[static_cast<std::size_t>(g)]);
        };
    };
    r.klInitial = headMeanKl(eval, G, learned(initialHeads));
    r.klFitted = headMeanKl(eval, G, learned(r.fitted));
    r.trainKl = headMeanKl(train, G, learned(r.fitted));
    r.changeFitted = summariseOutputChange(model, eval, r.fitted);
    r.changeInitial = summariseOutputChange(model, eval, initialHeads);
    r.evalSeconds = hedgehogSeconds(evalStart);
    return r;
}

}  // namespace attnscope
