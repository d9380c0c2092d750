// What the analyses need of a decoder (decoder_model.h) beyond its forward, each a run of the one
// loop with its hooks: activation patching's recording and re-runs (layer_runner.h), attribution
// patching's gradients and the gradient sources' forward (gradient_runner.h), the last two with
// autograd through aliases of the weights.
#include "attnscope/runtime/error.h"
#include "decoder_model.h"

#include <c10/core/InferenceMode.h>

namespace attnscope {

namespace {

// The weights as ordinary tensors over the same memory (autogradAlias), which autograd may save for
// the backward pass: the loaded ones are inference tensors, which it may not.
NormWeights aliasedNorm(const NormWeights& n) { return {autogradAlias(n.weight), autogradAlias(n.bias), n.on}; }

}  // namespace

DecoderLayer aliasedLayer(const DecoderLayer& L) {
    DecoderLayer c = L;
    for (NormWeights* n : {&c.in, &c.attnOut, &c.ff, &c.ffOut, &c.qNorm, &c.kNorm}) *n = aliasedNorm(*n);
    for (Linear* p : {&c.q, &c.k, &c.v, &c.qkv, &c.o, &c.gate, &c.up, &c.gateUp, &c.down}) *p = autogradAlias(*p);
    if (L.routed) c.moe = mapMoeLayer(L.moe, [](const at::Tensor& t) { return autogradAlias(t); });
    return c;
}

std::shared_ptr<const Readout> DecoderModel::aliasedReadout() const {
    return makeDecoderReadout(aliasedNorm(finalNorm_), cfg_.norm, cfg_.eps, autogradAlias(projectOut_),
                              autogradAlias(head_));
}

LayerActivations DecoderModel::runRecording(const std::vector<std::int64_t>& ids) const {
    checkInput(ids, true);
    c10::InferenceMode guard;
    LayerActivations acts;
    LayerHooks hooks;
    hooks.record = &acts;
    hooks.resid = &acts.resid;
    runLayers(embedTokens(ids), 0, ropeTablesFor(static_cast<std::int64_t>(ids.size())), {}, nullptr, hooks);
    return acts;
}

at::Tensor DecoderModel::runFrom(const std::vector<std::int64_t>& ids, int from, const at::Tensor& entering,
                                 const LayerPatch& patch) const {
    c10::InferenceMode guard;
    LayerHooks hooks;
    hooks.patch = &patch;
    return runLayers(entering, from, ropeTablesFor(static_cast<std::int64_t>(ids.size())), {}, nullptr, hooks);
}

LayerActivations DecoderModel::runWithGradients(const std::vector<std::int64_t>& ids, std::int64_t position,
                                                const std::vector<std::int64_t>& tokens,
                                                LayerActivations& grads) const {
    checkInput(ids, true);
    at::AutoGradMode enable(true);
    LayerActivations acts;
    LayerHooks hooks;
    hooks.record = &acts;
    hooks.resid = &acts.resid;
    hooks.retainGrad = hooks.aliasWeights = true;
    const at::Tensor x = runLayers(embedTokens(ids).detach().requires_grad_(true), 0,
                                   ropeTablesFor(static_cast<std::int64_t>(ids.size())), {}, nullptr, hooks);
    // LD from the final norm (an alias) and the two unembedding rows (index_select makes new tensors).
    const at::Tensor z = aliasedReadout()->logitsOf(x.narrow(0, position, 1), tokens).reshape({-1});
    const at::Tensor ld = tokens.size() > 1 ? z[0] - z[1] : z[0];
    ld.backward();
    using List = std::vector<at::Tensor>;
    const std::pair<List*, List*> lists[] = {{&acts.resid, &grads.resid},
                                             {&acts.context, &grads.context},
                                             {&acts.attnAdded, &grads.attnAdded},
                                             {&acts.mlpAdded, &grads.mlpAdded}};
    for (const auto& [list, out] : lists)
        for (at::Tensor& t : *list) {
            out->push_back(t.grad().defined() ? t.grad() : at::zeros_like(t));
            t = t.detach();
        }
    return acts;
}

std::string DecoderModel::patchingRefusal() const {
    return stream_ ? "activation patching re-runs layers from held activations, but this model streams its "
                     "weights from the file (open it with --weights convert)"
                   : "";
}

std::string DecoderModel::gradientRefusal() const {
    return stream_ ? "this model streams its weights from the file, and the backward pass needs them held "
                     "(open it with --weights convert)"
                   : "";
}

// The forward with autograd through the weights' aliases; the logits at the last position are
// taken before any final soft-cap (issue 31's s).
GradientRun DecoderModel::runGradients(const TextInput& text, const std::optional<RgbImage>& image,
                                       const RunOptions& options) const {
    if (image) throw Error(cfg_.family + " takes token ids, not an image");
    requirePlainTokens(text, cfg_.family);
    checkInput(text.ids, true);
    checkKnockoutLayers(options.knockouts, cfg_.layers);
    at::AutoGradMode enable(true);
    GradientRun out;
    LayerHooks hooks;
    hooks.alphas = &out.alphas;
    hooks.aliasWeights = true;
    const std::int64_t n = static_cast<std::int64_t>(text.ids.size());
    const at::Tensor x = runLayers(embedTokens(text.ids).detach().requires_grad_(true), 0, ropeTablesFor(n), options,
                                   nullptr, hooks, options.progress);
    out.outputs = aliasedReadout()->logits(x.narrow(0, n - 1, 1)).reshape({-1});
    return out;
}

}  // namespace attnscope
