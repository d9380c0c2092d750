// What an image–text model (CLIP, SigLIP) records beside its two towers' maps: the similarity of
// the image and the text, and each patch's direct contribution to it (Trace::Impl::imageText),
// read with traceImageText(). Apart from trace.h so that what never reads it does not depend on it.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace attnscope {

class Trace;

// u the image embedding, t the text embedding (each tower's pooled output through its
// projection), û = u/‖u‖, t̂ = t/‖t‖:
//   cosine = û·t̂,   logit = exp(logit_scale)·cosine + logit_bias   (CLIP: logit_bias = 0)
//
// Patch contributions: the image embedding decomposed over one attention's heads h and the
// patches j it reads, the rest stated as a remainder, so that
//   logit = Σ_h Σ_j contribution[h][j] + remainder   (remainder = Σ of remainderParts)
// Every term is s·(piece)·t̂/‖u‖ with s = exp(logit_scale): the actual ‖u‖ is used (frozen), so
// the sum is exact.
//   CLIP: the last vision layer's heads at the [CLS] row: piece_hj = P·(γ ⊙ C(α_h,cls,j · v_j^h W_O^h))/σ,
//     v_j^h = head h's slice of v_proj(layer_norm1(x_j)) with its bias, W_O^h its rows of out_proj,
//     P the visual projection, γ post_layernorm's weight, C the centring (x − mean x, linear) and σ
//     post_layernorm's actual scale at [CLS] (frozen). Remainder parts: "residual" (what enters the
//     last layer at [CLS]: the embeddings and the earlier layers), "cls" (the heads' attention to
//     [CLS] itself), "out_bias" (out_proj's bias), "mlp" (the last layer's MLP), "norm_bias"
//     (post_layernorm's β through P), each through the same frozen map.
//   SigLIP: the MAP head's attention (the probe's row): piece_hj = α_h,j · v_j^h W_O^h, v_j the MAP
//     attention's values of the post-layernormed patch j; the image embedding is the MAP output
//     itself. Remainder parts: "out_bias" (the MAP attention's out_proj bias), "mlp" (the MAP
//     head's MLP residual, layernorm included), "logit_bias".
struct ImageTextScore {
    bool present = false;  // false: not an image–text model
    double cosine = 0, logit = 0;
    double logitScale = 1, logitBias = 0;  // exp(logit_scale) and logit_bias
    double imageNorm = 0, textNorm = 0;    // ‖u‖, ‖t‖
    // Which attention the contributions decompose: its Trace block and layer.
    std::string block;
    int layer = 0;
    int heads = 0;
    std::vector<std::string> positions;  // the columns: the patches rRcC, row by row
    std::vector<double> contributions;   // [heads, positions] row-major
    std::vector<std::pair<std::string, double>> remainderParts;

    double contribution(int head, int position) const {
        return contributions[static_cast<std::size_t>(head) * positions.size() + position];
    }
    double remainder() const {
        double r = 0;
        for (const auto& p : remainderParts) r += p.second;
        return r;
    }
};

// The trace's image–text score (CLIP, SigLIP); present == false for every other model.
const ImageTextScore& traceImageText(const Trace& trace);

}  // namespace attnscope
