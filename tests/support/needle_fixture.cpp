#include "needle_fixture.h"

#include "gpt2_fixture.h"

#include <algorithm>
#include <cmath>

namespace attnscope::testing {

void writeCopyingGpt2(const std::filesystem::path& dir) {
    constexpr int kVocab = kCopyingVocab, kE = 32;
    Gpt2Spec spec;
    spec.vocab = kVocab;
    spec.embd = kE;
    spec.heads = 2;
    spec.layers = 1;
    spec.positions = 64;
    Gpt2Checkpoint c = makeGpt2(spec, 1);
    for (auto& [name, t] : c.tensors) std::fill(t.values.begin(), t.values.end(), 0.0f);
    const auto set = [&](const std::string& name, int row, int col, float v) {
        Tensor& t = c.tensors.at(name);
        t.values[std::size_t(row * t.shape[1] + col)] = v;
    };
    for (int t = 0; t < kVocab; ++t) set("wte.weight", t, t, 1.0f);
    // LayerNorm of a one-hot over 32 dims: the hot dim (1 - 1/32)/σ, every other -1/32/σ; the
    // bias 1/32/σ leaves only the hot one, h = a e_x.
    const double mean = 1.0 / kE, sigma = std::sqrt(mean - mean * mean + 1e-5);
    for (const std::string& ln : {"h.0.ln_1", "h.0.ln_2", "ln_f"})
        for (int d = 0; d < kE; ++d) {
            c.tensors.at(ln + ".weight").values[std::size_t(d)] = 1.0f;
            c.tensors.at(ln + ".bias").values[std::size_t(d)] = static_cast<float>(mean / sigma);
        }
    const std::string attn = "h.0.attn.c_attn.weight";  // [in, q | k | v], head h at h·16
    for (int x = 0; x < kVocab; ++x) {
        if (x + 1 < kVocab) set(attn, x, x + 1, 1.0f);  // head 0: q(x) = e_{x+1}
        set(attn, x, kE + x, 1.0f);                     // head 0: k(y) = e_y
        set(attn, x, 2 * kE + x, 1.0f);                 // head 0: v(y) = e_y
        set(attn, x, 16, 1.0f);                         // head 1: every query along one direction,
        if (x < 10) set(attn, x, kE + 16, 1.0f);        // which only the haystack's keys share
        set("h.0.attn.c_proj.weight", x, x, 3.0f);      // head 0's value into the residual
    }
    writeGpt2Folder(dir, c);
}

}  // namespace attnscope::testing
