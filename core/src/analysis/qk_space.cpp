// Joint PCA of a head's (or a layer's) queries and translated keys (qk_space.h).
#include "attnscope/analysis/qk_space.h"

#include "attention/trace_impl.h"
#include "attnscope/runtime/error.h"
#include "runtime/torch_errors.h"

#include <cmath>

namespace attnscope {

QkSpace qkSpace(const Trace& trace, int block, int layer, const QkSpaceOptions& options) {
    const Trace::Impl& impl = trace.impl();
    const int blocks = static_cast<int>(impl.blocks.size());
    if (block < 0 || block >= blocks)
        throw Error("query-key space: block " + std::to_string(block) + " is out of range");
    const BlockInfo& info = impl.infos[block];
    if (layer < 0 || layer >= info.layers)
        throw Error("query-key space: layer " + std::to_string(layer) + " is out of range (0.." +
                    std::to_string(info.layers - 1) + ")");
    if (options.head < -1 || options.head >= info.heads)
        throw Error("query-key space: head " + std::to_string(options.head) + " is out of range (0.." +
                    std::to_string(info.heads - 1) + ", or -1 for all)");
    const LayerCapture& cap = impl.blocks[block].layers[layer];
    if (cap.kind == AttentionKind::Additive)
        throw Error("query-key space: layer " + std::to_string(layer) + " of block '" + info.name +
                    "' uses additive attention; its captured projections are no query and key vectors");

    QkSpace out;
    out.block = block;
    out.layer = layer;
    translateTorchErrors("projecting queries and keys", [&] {
        std::vector<at::Tensor> parts;
        const int first = options.head < 0 ? 0 : options.head, last = options.head < 0 ? info.heads - 1 : options.head;
        for (int h = first; h <= last; ++h) {
            const at::Tensor q = cap.q[h].to(at::kCPU, at::kDouble);
            at::Tensor k = cap.k[info.kvGroup(h)].to(at::kCPU, at::kDouble);
            if (options.translateKeys) k = k - k.mean(0, true) + q.mean(0, true);
            parts.push_back(q);
            parts.push_back(k);
            for (int i = 0; i < q.size(0); ++i) {
                out.position.push_back(i);
                out.head.push_back(h);
                out.isKey.push_back(false);
            }
            for (int j = 0; j < k.size(0); ++j) {
                out.position.push_back(j);
                out.head.push_back(h);
                out.isKey.push_back(true);
            }
        }
        const at::Tensor X = at::cat(parts, 0);  // [points, d]
        out.dim = static_cast<int>(X.size(1));
        const at::Tensor mean = X.mean(0);
        const at::Tensor centred = X - mean.unsqueeze(0);
        const auto svd = at::linalg_svd(centred, /*full_matrices=*/false);
        const at::Tensor S = std::get<1>(svd), Vh = std::get<2>(svd);
        const std::int64_t rank = std::min<std::int64_t>(2, Vh.size(0));
        at::Tensor axes = at::zeros({2, X.size(1)}, X.options());
        for (std::int64_t a = 0; a < rank; ++a) {
            at::Tensor v = Vh[a];
            const auto big = v.abs().argmax().item<std::int64_t>();
            if (v[big].item<double>() < 0) v = -v;
            axes[a].copy_(v);
        }
        const at::Tensor coords = at::matmul(centred, axes.t()).to(at::kFloat).contiguous();  // [points, 2]
        const double total = S.pow(2).sum().item<double>();
        for (std::int64_t a = 0; a < rank; ++a)
            out.explained[a] = total > 0 ? std::pow(S[a].item<double>(), 2) / total : 0.0;
        const float* c = coords.data_ptr<float>();
        out.x.resize(static_cast<std::size_t>(coords.size(0)));
        out.y.resize(out.x.size());
        for (std::size_t p = 0; p < out.x.size(); ++p) {
            out.x[p] = c[2 * p];
            out.y[p] = c[2 * p + 1];
        }
        const at::Tensor a = axes.contiguous();
        out.axes.assign(a.data_ptr<double>(), a.data_ptr<double>() + a.numel());
        const at::Tensor mc = mean.contiguous();
        out.mean.assign(mc.data_ptr<double>(), mc.data_ptr<double>() + mc.numel());
        return 0;
    });
    return out;
}

}  // namespace attnscope
