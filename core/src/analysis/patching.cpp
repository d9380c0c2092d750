#include "attnscope/analysis/patching.h"

#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"
#include "models/family_common.h"
#include "models/layer_runner.h"

#include <cmath>
#include <string>

namespace attnscope {

namespace {

std::string lengthMessage(std::size_t clean, std::size_t corrupt) {
    return "the clean and corrupt inputs must have the same length (" + std::to_string(clean) + " and " +
           std::to_string(corrupt) + " tokens)";
}

// (a_clean − a_corrupt) · ∂LD/∂a over each site's elements, / span: [layers, cols].
std::vector<float> attributionScores(PatchWhat what, const LayerActivations& good, const LayerActivations& bad,
                                     const LayerActivations& grads, int d, int cols, double span) {
    const auto& pick = [&](const LayerActivations& a) -> const std::vector<at::Tensor>& {
        switch (what) {
            case PatchWhat::Heads: return a.context;
            case PatchWhat::Resid: return a.resid;
            case PatchWhat::AttnOut: return a.attnAdded;
            case PatchWhat::MlpOut: return a.mlpAdded;
        }
        return a.context;
    };
    std::vector<float> scores;
    const auto& g = pick(good);
    const auto& b = pick(bad);
    const auto& dg = pick(grads);
    for (std::size_t l = 0; l + (what == PatchWhat::Resid ? 1 : 0) < g.size(); ++l) {
        const at::Tensor terms = ((g[l].to(at::kCPU, at::kDouble) - b[l].to(at::kCPU, at::kDouble)) *
                                  dg[l].to(at::kCPU, at::kDouble));  // [n, width]
        // Heads: each head's columns over every position; otherwise each position's row.
        const at::Tensor site = what == PatchWhat::Heads
                                        ? terms.view({terms.size(0), cols, d}).sum(at::IntArrayRef{0, 2})
                                        : terms.sum(1);
        const at::Tensor s = (site / span).to(at::kFloat).contiguous();
        scores.insert(scores.end(), s.data_ptr<float>(), s.data_ptr<float>() + s.numel());
    }
    return scores;
}

}  // namespace

PatchResult activationPatching(const Model& model, const std::vector<std::int64_t>& clean,
                               const std::vector<std::int64_t>& corrupt, const PatchRequest& r) {
    const auto* runner = dynamic_cast<const LayerRunner*>(&model);
    if (!runner)
        throw Error("activation patching needs a decoder-only language model; " + model.info().family + " is not one");
    if (const std::string why = runner->patchingRefusal(); !why.empty()) throw Error(why);
    if (clean.size() != corrupt.size()) throw Error(lengthMessage(clean.size(), corrupt.size()));
    if (clean.empty()) throw Error("activation patching needs at least one token");
    const Readout& readout = runner->finalReadout();
    for (const auto& [name, id] :
         {std::pair<const char*, std::optional<std::int64_t>>{"--token", r.token}, {"--minus", r.minus}})
        if (id && (*id < 0 || *id >= readout.vocabSize()))
            throw Error(std::string(name) + " " + std::to_string(*id) + " is outside the vocabulary (0.." +
                        std::to_string(readout.vocabSize() - 1) + ")");
    const auto n = static_cast<std::int64_t>(clean.size());
    const std::int64_t P = r.position < 0 ? n - 1 : r.position;
    if (P >= n)
        throw Error("--position " + std::to_string(P) + " is outside the input (0.." + std::to_string(n - 1) + ")");

    const std::vector<std::int64_t> tokens =
            r.minus ? std::vector<std::int64_t>{r.token, *r.minus} : std::vector<std::int64_t>{r.token};
    const auto ld = [&](const at::Tensor& finalResid) {
        const at::Tensor z = readout.logitsOf(finalResid.narrow(0, P, 1), tokens).to(at::kCPU, at::kDouble);
        return z[0][0].item<double>() - (r.minus ? z[0][1].item<double>() : 0.0);
    };
    LayerActivations grads;
    const LayerActivations good = runner->runRecording(clean);
    const LayerActivations bad =
            r.attribution ? runner->runWithGradients(corrupt, P, tokens, grads) : runner->runRecording(corrupt);
    PatchResult out;
    out.position = P;
    out.ldClean = ld(good.resid.back());
    out.ldCorrupt = ld(bad.resid.back());
    const double span = out.ldClean - out.ldCorrupt;
    if (std::abs(span) < 1e-6)
        throw Error("the clean and corrupt runs give the same logit difference (" + std::to_string(out.ldClean) +
                    "): patching scores are undefined; choose other tokens or inputs");

    const int L = model.info().layers, H = model.info().heads, d = model.info().headDim;
    out.rows = L;
    out.cols = r.what == PatchWhat::Heads ? H : static_cast<int>(n);
    const long long total = static_cast<long long>(out.rows) * out.cols;
    if (r.attribution) {
        out.scores = attributionScores(r.what, good, bad, grads, d, out.cols, span);
        return out;
    }
    for (int l = 0; l < L; ++l)
        for (int c = 0; c < out.cols; ++c) {
            LayerPatch patch;
            patch.layer = l;
            at::Tensor entering = bad.resid[static_cast<std::size_t>(l)];
            switch (r.what) {
                case PatchWhat::Heads:
                    patch.site = LayerPatch::Site::Heads;
                    patch.head = c;
                    patch.value = good.context[static_cast<std::size_t>(l)].narrow(1, c * d, d);
                    break;
                case PatchWhat::Resid:
                    entering = entering.clone();
                    entering.select(0, c).copy_(good.resid[static_cast<std::size_t>(l)].select(0, c));
                    break;
                case PatchWhat::AttnOut:
                case PatchWhat::MlpOut: {
                    const bool attn = r.what == PatchWhat::AttnOut;
                    patch.site = attn ? LayerPatch::Site::AttnOut : LayerPatch::Site::MlpOut;
                    patch.position = c;
                    patch.value = (attn ? good.attnAdded : good.mlpAdded)[static_cast<std::size_t>(l)].select(0, c);
                    break;
                }
            }
            out.scores.push_back(
                    static_cast<float>((ld(runner->runFrom(corrupt, l, entering, patch)) - out.ldCorrupt) / span));
            reportProgress(r.progress, static_cast<long long>(l) * out.cols + c + 1, total);
        }
    return out;
}

}  // namespace attnscope
