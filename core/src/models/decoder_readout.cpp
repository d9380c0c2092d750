#include "decoder_readout.h"

#include "attnscope/runtime/error.h"
#include "family_common.h"

#include <cmath>

namespace attnscope {

// The family's norm of x (the identity where the layout has none).
at::Tensor applyNorm(const at::Tensor& x, const NormWeights& n, DecoderSpec::Norm kind, double eps) {
    if (!n.on) return x;
    if (kind == DecoderSpec::Norm::Layer) return at::layer_norm(x, {x.size(-1)}, n.weight, n.bias, eps);
    return rmsNorm(x, n.weight, eps, kind != DecoderSpec::Norm::Rms);
}

// The norm at `row` [hidden] as a linear map of that row's components (readout.h).
LinearNorm linearised(const NormWeights& n, DecoderSpec::Norm kind, double eps, const at::Tensor& row) {
    const at::Tensor r = row.reshape({-1}).to(at::kCPU, at::kDouble);
    const auto dbl = at::TensorOptions().dtype(at::kDouble);
    LinearNorm out{at::ones({r.size(0)}, dbl), at::zeros({r.size(0)}, dbl), false};
    if (!n.on) return out;
    const at::Tensor weight = n.weight.defined() ? n.weight.to(at::kCPU, at::kDouble) : out.scale;
    if (kind == DecoderSpec::Norm::Layer) {
        out.centred = true;
        out.scale = weight / std::sqrt((r - r.mean()).pow(2).mean().item<double>() + eps);
        if (n.bias.defined()) out.bias = n.bias.to(at::kCPU, at::kDouble);
    } else {
        out.scale = weight / std::sqrt(r.pow(2).mean().item<double>() + eps);
    }
    return out;
}

at::Tensor residualRow(const at::Tensor& x, std::int64_t position) {
    return x.narrow(0, position, 1).reshape({-1}).to(at::kCPU, at::kDouble);
}

void checkDecomposable(const DecoderSpec& s, std::int64_t position, std::int64_t n) {
    if (position >= n)
        throw Error("attribution position " + std::to_string(position) + " is outside the input (0.." +
                    std::to_string(n - 1) + ")");
    if (s.blocks == DecoderSpec::Blocks::Post || s.residualAfterNorm)
        throw Error(s.family + " normalises its residual stream inside the blocks (post-norm), so the final "
                               "residual is not a sum of the blocks' outputs: direct logit attribution is "
                               "defined for pre-norm decoders");
}

void addAttentionParts(const DecoderSpec& s, const Linear& o, const NormWeights& attnOut, const at::Tensor& context,
                       const at::Tensor& attn, ResidualParts& parts) {
    const std::int64_t H = s.heads, d = s.headDim, E = s.hidden, P = parts.position;
    const at::Tensor z = residualRow(context, P).view({H, d});
    const at::Tensor w = o.weight.to(at::kCPU, at::kDouble);
    at::Tensor heads = s.conv1d ? at::einsum("hd,hde->he", {z, w.view({H, d, E})})
                                : at::einsum("hd,ehd->he", {z, w.view({E, H, d})});
    at::Tensor bias = o.bias.defined() ? o.bias.to(at::kCPU, at::kDouble)
                                       : at::zeros({E}, at::TensorOptions().dtype(at::kDouble));
    if (attnOut.on) {
        const LinearNorm post = linearised(attnOut, s.norm, s.eps, residualRow(attn, P));
        heads = post.apply(heads);
        bias = post.apply(bias) + post.bias;
    }
    parts.heads.push_back(heads);
    parts.attnBias.push_back(bias);
}

namespace {

// The final norm and unembedding (readout.h), holding the model's tensors.
class DecoderReadout final : public Readout {
public:
    DecoderReadout(NormWeights norm, DecoderSpec::Norm kind, double eps, at::Tensor projectOut, Linear head)
        : norm_(std::move(norm)), kind_(kind), eps_(eps), projectOut_(std::move(projectOut)), head_(std::move(head)) {}
    at::Tensor logits(const at::Tensor& rows) const override {
        at::Tensor x = applyNorm(rows, norm_, kind_, eps_);
        if (projectOut_.defined()) x = at::mm(x, projectOut_.t());
        return rowsMatmul(x, head_.weight, head_.bias).to(at::kFloat);
    }
    at::Tensor logitsOf(const at::Tensor& rows, const std::vector<std::int64_t>& tokens) const override {
        at::Tensor x = applyNorm(rows, norm_, kind_, eps_);
        if (projectOut_.defined()) x = at::mm(x, projectOut_.t());
        const at::Tensor w = gatherRows(head_.weight, tokens, x.device()).to(x.scalar_type());
        const at::Tensor ids = at::tensor(tokens, at::TensorOptions().dtype(at::kLong)).to(x.device());
        const at::Tensor b = head_.bias.defined() ? head_.bias.index_select(0, ids).to(x.scalar_type()) : at::Tensor();
        return at::linear(x, w, b).to(at::kFloat);
    }
    LinearNorm linearNormAt(const at::Tensor& row) const override { return linearised(norm_, kind_, eps_, row); }
    at::Tensor direction(std::int64_t token) const override {
        const at::Tensor w = denseRows(head_.weight, token, token + 1).reshape({-1}).to(at::kCPU, at::kDouble);
        return projectOut_.defined() ? at::mv(projectOut_.to(at::kCPU, at::kDouble).t(), w) : w;
    }
    double logitBias(std::int64_t token) const override {
        return head_.bias.defined() ? head_.bias[token].item<double>() : 0.0;
    }
    std::int64_t vocabSize() const override { return head_.weight.size(0); }

private:
    NormWeights norm_;
    DecoderSpec::Norm kind_;
    double eps_;
    at::Tensor projectOut_;
    Linear head_;
};

}  // namespace

std::shared_ptr<const Readout> makeDecoderReadout(NormWeights norm, DecoderSpec::Norm kind, double eps,
                                                  at::Tensor projectOut, Linear head) {
    return std::make_shared<DecoderReadout>(std::move(norm), kind, eps, std::move(projectOut), std::move(head));
}

}  // namespace attnscope
