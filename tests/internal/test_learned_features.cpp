// Hedgehog's learned feature map and linear map (attention/learned_features.h) on hand-computed
// values, the loss the fit minimises (builtin::mapKl of those maps) against a hand-computed KL,
// and its gradient reaching W and b.
#include "attention/learned_features.h"
#include "models/builtin/distillation.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <catch2/catch.hpp>

#include <cmath>

namespace test_learned_features {

using namespace attnscope;

TEST_CASE("learned features are [softmax(Wx + b), softmax(-(Wx + b))]", "[hedgehog]") {
    // x = (1, 0), W = I, b = (0, 1): u = (1, 1) -> both softmaxes (1/2, 1/2).
    // x = (2, 0), W = I, b = 0: u = (2, 0) -> (e²/(e²+1), 1/(e²+1)) and (1/(1+e²), e²/(1+e²)).
    const at::Tensor x = at::tensor(std::vector<float>{1, 0, 2, 0}, at::kFloat).view({2, 2});
    const at::Tensor w = at::eye(2, at::kFloat);
    const at::Tensor phi1 = learnedFeatures(x[0].view({1, 2}), w, at::tensor(std::vector<float>{0, 1}, at::kFloat));
    for (int c = 0; c < 4; ++c) REQUIRE(phi1[0][c].item<double>() == Approx(0.5).margin(1e-7));
    const at::Tensor phi2 = learnedFeatures(x[1].view({1, 2}), w, at::zeros({2}, at::kFloat));
    const double e2 = std::exp(2.0), hi = e2 / (e2 + 1), lo = 1 / (e2 + 1);
    const double expected[4] = {hi, lo, lo, hi};
    for (int c = 0; c < 4; ++c) REQUIRE(phi2[0][c].item<double>() == Approx(expected[c]).margin(1e-6));
}

TEST_CASE("the learned linear map and the fit's KL equal hand-computed values", "[hedgehog]") {
    // φq = [[1, 1], [2, 0]], φk = [[1, 0], [1, 2]], causal: row 0 sees key 0 only -> (1, 0);
    // row 1: scores (2, 2) -> (1/2, 1/2).
    const at::Tensor phiQ = at::tensor(std::vector<float>{1, 1, 2, 0}, at::kFloat).view({2, 2});
    const at::Tensor phiK = at::tensor(std::vector<float>{1, 0, 1, 2}, at::kFloat).view({2, 2});
    MaskSpec mask;
    mask.causal = true;
    const at::Tensor a = learnedLinearMap(phiQ, phiK, mask);
    const double expected[4] = {1, 0, 0.5, 0.5};
    for (int i = 0; i < 4; ++i) REQUIRE(a.view({4})[i].item<double>() == Approx(expected[i]).margin(1e-7));
    // Teacher P = [[1, 0], [0.25, 0.75]]: row 0 adds 0; row 1 0.25 ln(0.25/0.5) + 0.75 ln(0.75/0.5).
    const at::Tensor p = at::tensor(std::vector<float>{1, 0, 0.25f, 0.75f}, at::kFloat).view({1, 1, 2, 2});
    const double hand = (0.25 * std::log(0.5) + 0.75 * std::log(1.5)) / 2;  // 0.0654063
    REQUIRE(builtin::mapKl(p, a.view({1, 1, 2, 2}), {}).item<double>() == Approx(hand).margin(1e-7));
}

TEST_CASE("the fit's loss has gradients for W and b", "[hedgehog]") {
    at::AutoGradMode on(true);
    const at::Tensor q = at::tensor(std::vector<float>{0.3f, -1.2f, 0.8f, 0.1f, -0.5f, 0.9f}, at::kFloat).view({3, 2});
    at::Tensor w = at::eye(2, at::kFloat).requires_grad_(true), b = at::zeros({2}, at::kFloat).requires_grad_(true);
    MaskSpec mask;
    mask.causal = true;
    const at::Tensor a = learnedLinearMap(learnedFeatures(q, w, b), learnedFeatures(q, w, b), mask);
    const at::Tensor p = at::tensor(std::vector<float>{1, 0, 0, 0.9f, 0.1f, 0, 0.1f, 0.1f, 0.8f}, at::kFloat);
    builtin::mapKl(p.view({1, 1, 3, 3}), a.view({1, 1, 3, 3}), {}).backward();
    REQUIRE(w.grad().defined());
    REQUIRE(w.grad().abs().sum().item<double>() > 0);
    REQUIRE(b.grad().abs().sum().item<double>() > 0);
}

}  // namespace test_learned_features
