#include "learned_features.h"

#include "attnscope/runtime/error.h"

#include <string>

namespace attnscope {

at::Tensor learnedFeatures(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
    const at::Tensor u = at::matmul(x, weight.transpose(-1, -2)) + bias.unsqueeze(-2);
    return at::cat({at::softmax(u, -1), at::softmax(-u, -1)}, -1);
}

FeatureTensors featureTensors(const LearnedFeatureMap& map, c10::Device device, const std::string& what) {
    if (map.features < 1 || map.dim < 1 ||
        map.weight.size() != static_cast<std::size_t>(map.features) * static_cast<std::size_t>(map.dim) ||
        map.bias.size() != static_cast<std::size_t>(map.features))
        throw Error(what + ": a learned feature map needs " + std::to_string(map.features) + "×" +
                    std::to_string(map.dim) + " weights and " + std::to_string(map.features) + " biases, got " +
                    std::to_string(map.weight.size()) + " and " + std::to_string(map.bias.size()));
    const auto cpu = at::TensorOptions().dtype(at::kFloat);
    FeatureTensors t;
    t.weight = at::from_blob(const_cast<float*>(map.weight.data()), {map.features, map.dim}, cpu).clone().to(device);
    t.bias = at::from_blob(const_cast<float*>(map.bias.data()), {map.features}, cpu).clone().to(device);
    return t;
}

at::Tensor allowedCells(const MaskSpec& mask, std::int64_t n, std::int64_t m, const at::TensorOptions& options) {
    const at::Tensor additive = additiveMask(mask, n, m, options.dtype(at::kFloat));
    if (!additive.defined()) return at::ones({n, m}, options.dtype(at::kFloat));
    return (additive == 0).to(at::kFloat);
}

at::Tensor learnedLinearMap(const at::Tensor& phiQ, const at::Tensor& phiK, const MaskSpec& mask) {
    return learnedLinearMapOver(phiQ, phiK, allowedCells(mask, phiQ.size(-2), phiK.size(-2), phiQ.options()));
}

at::Tensor learnedLinearMapOver(const at::Tensor& phiQ, const at::Tensor& phiK, const at::Tensor& allowed) {
    const at::Tensor scores = at::matmul(phiQ, phiK.transpose(-1, -2)) * allowed;
    const at::Tensor sums = scores.sum(-1, /*keepdim=*/true);
    return scores / at::where(sums > 0, sums, at::ones_like(sums));
}

at::Tensor linearHeadMap(const at::Tensor& q, const at::Tensor& k, const MaskSpec& mask, const LinearHead& head) {
    const std::string what = "linear head " + std::to_string(head.head.layer) + ":" + std::to_string(head.head.head);
    if (head.query.dim != q.size(-1) || head.key.dim != k.size(-1))
        throw Error(what + ": its feature maps read vectors of width " + std::to_string(head.query.dim) +
                    ", the head's are " + std::to_string(q.size(-1)));
    if (head.query.features != head.key.features)
        throw Error(what + ": its query and key feature maps have different widths (" +
                    std::to_string(head.query.features) + ", " + std::to_string(head.key.features) + ")");
    const FeatureTensors fq = featureTensors(head.query, q.device(), what + " (queries)");
    const FeatureTensors fk = featureTensors(head.key, k.device(), what + " (keys)");
    return learnedLinearMap(learnedFeatures(q.to(at::kFloat), fq.weight, fq.bias),
                            learnedFeatures(k.to(at::kFloat), fk.weight, fk.bias), mask);
}

void replaceLinearHeads(at::Tensor& context, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                        const MaskSpec& mask, const std::vector<const LinearHead*>& heads) {
    if (heads.empty()) return;
    const std::int64_t H = q.size(0), group = H / k.size(0);
    for (const LinearHead* head : heads) {
        const int h = head->head.head;
        if (h < 0 || h >= H)
            throw Error("linear head " + std::to_string(head->head.layer) + ":" + std::to_string(h) +
                        ": the layer has heads 0.." + std::to_string(H - 1));
        const at::Tensor map = linearHeadMap(q[h], k[h / group], mask, *head);
        context[h].copy_(at::matmul(map.to(v.scalar_type()), v[h / group]));
    }
}

}  // namespace attnscope
