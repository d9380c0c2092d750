// The independent forward of the Swin fixture (fixtures_swin.h): plain loops in double precision
// written from Hugging Face's modeling_swin.py, window by window as SwinLayer runs them (nothing
// shared with core, which attends over the whole grid with the windows as a mask).
#include "fixtures_swin.h"
#include "reference_math.h"

#include <algorithm>
#include <cmath>

namespace attnscope::testing {

namespace {
namespace reference_swin {  // this file's helpers, apart from the other support files' in a unity build

using Vec = std::vector<double>;
using Grid = std::vector<std::vector<Vec>>;  // [row][col] -> channels

Vec affine(const Checkpoint& c, const std::string& name, const Vec& x) {
    const Tensor& w = c.get(name + ".weight");
    const auto bias = c.tensors.find(name + ".bias");  // the patch merging's reduction has none
    const std::size_t out = w.shape[0], in = w.shape[1];
    Vec y(out);
    for (std::size_t o = 0; o < out; ++o) {
        double s = bias == c.tensors.end() ? 0.0 : bias->second.values[o];
        for (std::size_t i = 0; i < in; ++i) s += w.values[o * in + i] * x[i];
        y[o] = s;
    }
    return y;
}

Vec norm(const Checkpoint& c, const std::string& name, const Vec& x, double eps) {
    return layerNorm(x, c.get(name + ".weight"), c.get(name + ".bias"), eps);
}

// SwinPatchEmbeddings: zero padding to a multiple of the patch, the strided convolution, then
// SwinEmbeddings.norm (nn.LayerNorm's default eps).
Grid embed(const Checkpoint& c, const SwinSpec& s, const std::string& pre, const Vec& pixels, int size) {
    const int p = s.patch, g = (size + p - 1) / p;
    const Tensor& w = c.get(pre + "embeddings.patch_embeddings.projection.weight");
    const Tensor& b = c.get(pre + "embeddings.patch_embeddings.projection.bias");
    Grid out(g, std::vector<Vec>(g));
    for (int gr = 0; gr < g; ++gr)
        for (int gc = 0; gc < g; ++gc) {
            Vec e(s.embed);
            for (int o = 0; o < s.embed; ++o) {
                double v = b.values[o];
                for (int ch = 0; ch < 3; ++ch)
                    for (int y = 0; y < p; ++y)
                        for (int x = 0; x < p; ++x) {
                            const int py = gr * p + y, px = gc * p + x;
                            if (py >= size || px >= size) continue;  // the padding is zero
                            v += w.values[((o * 3 + ch) * p + y) * p + x] * pixels[(ch * size + py) * size + px];
                        }
                e[o] = v;
            }
            out[gr][gc] = norm(c, pre + "embeddings.norm", e, 1e-5);
        }
    return out;
}

struct Layer {
    int window, shift, paddedRows, paddedCols;
};

Layer layerShape(int rows, int cols, int window, int block) {
    Layer L;
    if (std::min(rows, cols) <= window) {  // set_shift_and_window_size
        L.window = std::min(rows, cols);
        L.shift = 0;
    } else {
        L.window = window;
        L.shift = block % 2 == 1 ? window / 2 : 0;
    }
    L.paddedRows = (rows + L.window - 1) / L.window * L.window;  // maybe_pad
    L.paddedCols = (cols + L.window - 1) / L.window * L.window;
    return L;
}

// get_attn_mask's img_mask over the padded (shifted) grid: 0..8 by the slices
// [0, -w), [-w, -shift), [-shift, end) along each axis.
std::vector<std::vector<int>> regions(const Layer& L) {
    std::vector<std::vector<int>> mask(L.paddedRows, std::vector<int>(L.paddedCols, 0));
    if (L.shift == 0) return mask;
    const int hs[4] = {0, L.paddedRows - L.window, L.paddedRows - L.shift, L.paddedRows};
    const int ws[4] = {0, L.paddedCols - L.window, L.paddedCols - L.shift, L.paddedCols};
    int count = 0;
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b, ++count)
            for (int r = hs[a]; r < hs[a + 1]; ++r)
                for (int q = ws[b]; q < ws[b + 1]; ++q) mask[r][q] = count;
    return mask;
}

// One SwinLayer's attention over the normalised grid: returns the attention output on the
// unshifted, unpadded grid, and writes the maps (maps[h][i * n + j], tokens only).
Grid windowAttention(const Checkpoint& c, const std::string& p, const Grid& normed, const Layer& L, int H,
                     const SwinReferenceOptions& o, std::vector<Vec>& maps) {
    const int rows = static_cast<int>(normed.size()), cols = static_cast<int>(normed[0].size());
    const int C = static_cast<int>(normed[0][0].size()), d = C / H, w = L.window, n = rows * cols;
    const Tensor& table = c.get(p + "attention.self.relative_position_bias_table");
    const auto mask = regions(L);
    maps.assign(H, Vec(static_cast<std::size_t>(n) * n, 0.0));
    Grid out(rows, std::vector<Vec>(cols));
    for (int wr = 0; wr < L.paddedRows / w; ++wr)
        for (int wc = 0; wc < L.paddedCols / w; ++wc) {
            // The window's tokens in the shifted grid, and where each came from (torch.roll by -shift).
            std::vector<int> orow, ocol, region;
            std::vector<Vec> q, k, v;
            for (int t = 0; t < w * w; ++t) {
                const int r = wr * w + t / w, cc = wc * w + t % w;
                orow.push_back((r + L.shift) % L.paddedRows);
                ocol.push_back((cc + L.shift) % L.paddedCols);
                region.push_back(mask[r][cc]);
                const bool real = orow.back() < rows && ocol.back() < cols;
                const Vec x = real ? normed[orow.back()][ocol.back()] : Vec(C, 0.0);
                q.push_back(affine(c, p + "attention.self.query", x));
                k.push_back(affine(c, p + "attention.self.key", x));
                v.push_back(affine(c, p + "attention.self.value", x));
            }
            std::vector<Vec> context(w * w, Vec(C, 0.0));
            for (int h = 0; h < H; ++h)
                for (int a = 0; a < w * w; ++a) {
                    Vec score(w * w);
                    for (int b = 0; b < w * w; ++b) {
                        double dot = 0;
                        for (int e = 0; e < d; ++e) dot += q[a][h * d + e] * k[b][h * d + e];
                        const int index = (a / w - b / w + w - 1) * (2 * w - 1) + (a % w - b % w + w - 1);
                        score[b] = dot / std::sqrt(static_cast<double>(d)) + table.values[index * H + h];
                        if (o.shiftMask && region[a] != region[b]) score[b] += -100.0;
                        const bool padKey = orow[b] >= rows || ocol[b] >= cols;
                        if (!o.paddingKeys && padKey) score[b] = -INFINITY;
                    }
                    const double mx = *std::max_element(score.begin(), score.end());
                    double sum = 0;
                    for (double& z : score) sum += (z = std::exp(z - mx));
                    for (int b = 0; b < w * w; ++b) {
                        const double prob = score[b] / sum;
                        for (int e = 0; e < d; ++e) context[a][h * d + e] += prob * v[b][h * d + e];
                        const bool real = orow[a] < rows && ocol[a] < cols && orow[b] < rows && ocol[b] < cols;
                        if (real) maps[h][(orow[a] * cols + ocol[a]) * n + orow[b] * cols + ocol[b]] = prob;
                    }
                }
            for (int a = 0; a < w * w; ++a)  // window_reverse, the reverse roll and the crop
                if (orow[a] < rows && ocol[a] < cols)
                    out[orow[a]][ocol[a]] = affine(c, p + "attention.output.dense", context[a]);
        }
    return out;
}

Grid swinLayer(const Checkpoint& c, const SwinSpec& s, const std::string& p, const Grid& x, const Layer& L, int H,
               const SwinReferenceOptions& o, std::vector<Vec>& maps) {
    Grid normed = x;
    for (auto& row : normed)
        for (Vec& t : row) t = norm(c, p + "layernorm_before", t, s.eps);
    const Grid attn = windowAttention(c, p, normed, L, H, o, maps);
    Grid y = x;
    for (std::size_t r = 0; r < y.size(); ++r)
        for (std::size_t q = 0; q < y[r].size(); ++q) {
            Vec& t = y[r][q];
            for (std::size_t e = 0; e < t.size(); ++e) t[e] += attn[r][q][e];
            Vec inner = affine(c, p + "intermediate.dense", norm(c, p + "layernorm_after", t, s.eps));
            for (double& z : inner) z = activate(z, "gelu");
            const Vec mlp = affine(c, p + "output.dense", inner);
            for (std::size_t e = 0; e < t.size(); ++e) t[e] += mlp[e];
        }
    return y;
}

// SwinPatchMerging: zero padding to even sides, [x0, x1, x2, x3] = [0::2, 0::2], [1::2, 0::2],
// [0::2, 1::2], [1::2, 1::2], then norm (default eps) and the reduction.
Grid mergePatches(const Checkpoint& c, const std::string& p, const Grid& x) {
    const int rows = static_cast<int>(x.size()), cols = static_cast<int>(x[0].size());
    const std::size_t C = x[0][0].size();
    Grid out((rows + 1) / 2, std::vector<Vec>((cols + 1) / 2));
    for (int r = 0; r < (rows + 1) / 2; ++r)
        for (int q = 0; q < (cols + 1) / 2; ++q) {
            Vec cat;
            const std::pair<int, int> parts[4] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}};
            for (const auto& [dr, dc] : parts) {
                const int rr = 2 * r + dr, qq = 2 * q + dc;
                const Vec part = rr < rows && qq < cols ? x[rr][qq] : Vec(C, 0.0);
                cat.insert(cat.end(), part.begin(), part.end());
            }
            out[r][q] = affine(c, p + "downsample.reduction", norm(c, p + "downsample.norm", cat, 1e-5));
        }
    return out;
}

}  // namespace reference_swin
}  // namespace

SwinReference referenceSwin(const Checkpoint& c, const SwinSpec& s, const std::vector<double>& pixels, int size,
                            const SwinReferenceOptions& o) {
    using namespace reference_swin;
    const std::string pre = s.prefix ? "swin." : "";
    SwinReference ref;
    Grid x = embed(c, s, pre, pixels, size);
    const int stages = static_cast<int>(s.depths.size());
    for (int st = 0; st < stages; ++st) {
        const int rows = static_cast<int>(x.size()), cols = static_cast<int>(x[0].size());
        ref.rows.push_back(rows);
        ref.cols.push_back(cols);
        ref.maps.emplace_back();
        const std::string sp = pre + "encoder.layers." + std::to_string(st) + ".";
        for (int b = 0; b < s.depths[st]; ++b) {
            std::vector<Vec> maps;
            const Layer L = layerShape(rows, cols, s.window, b);
            x = swinLayer(c, s, sp + "blocks." + std::to_string(b) + ".", x, L, s.heads[st], o, maps);
            ref.maps.back().push_back(std::move(maps));
        }
        if (st + 1 < stages) x = mergePatches(c, sp, x);
    }
    Vec mean(x[0][0].size(), 0.0);
    double count = 0;
    for (const auto& row : x)
        for (const Vec& t : row) {
            ref.hidden.push_back(norm(c, pre + "layernorm", t, s.eps));
            for (std::size_t e = 0; e < mean.size(); ++e) mean[e] += ref.hidden.back()[e];
            ++count;
        }
    for (double& m : mean) m /= count;  // AdaptiveAvgPool1d(1) over the tokens
    if (s.labels > 0) ref.logits = affine(c, "classifier", mean);
    return ref;
}

}  // namespace attnscope::testing
