// Core internals of the lab against independent computations written here with plain loops or
// plain LibTorch ops: FAVOR+ on small-norm inputs, the exponential-form additive logits, the
// chunked causal linear attention, and (tag [cuda]) the CUDA kernels against the CPU path.
#include "attention/attention_ops.h"
#include "attention/additive_cpu.h"
#include "attention/favor.h"
#include "attention/linear_attention.h"
#include "../cuda/attention_kernels.h"  // from core/src; plain C++ (its limits), built with or without CUDA

#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <cmath>

namespace test_lab_kernels {

using namespace attnscope;

namespace {

double maxAbsDiff(const at::Tensor& a, const at::Tensor& b) {
    return (a.to(at::kCPU, at::kDouble) - b.to(at::kCPU, at::kDouble)).abs().max().item<double>();
}

// softmax(q kᵀ·scale + causal mask) with plain ops.
at::Tensor softmaxMap(const at::Tensor& q, const at::Tensor& k, double scale, bool causal) {
    at::Tensor s = at::mm(q, k.t()) * scale;
    if (causal) s.masked_fill_(at::ones({q.size(0), k.size(0)}, at::kBool).triu(1), -INFINITY);
    return at::softmax(s, -1);
}

// Quadratic reference for linear attention: (masked φQ φKᵀ) V / row sums.
at::Tensor linearQuadratic(const at::Tensor& pq, const at::Tensor& pk, const at::Tensor& v, bool causal,
                           std::int64_t offset) {
    at::Tensor a = at::bmm(pq, pk.transpose(1, 2));
    if (causal) a = a * at::ones({pq.size(1), pk.size(1)}, pq.options()).tril(offset);
    return at::bmm(a, v) / a.sum(-1, true);
}

}  // namespace

TEST_CASE("FAVOR+ error shrinks like 1/sqrt(M) on small-norm inputs", "[lab][favor]") {
    at::manual_seed(1);
    const auto q = at::randn({64, 16}) * 0.5, k = at::randn({64, 16}) * 0.5;
    const double scale = 0.25;
    const at::Tensor exact = softmaxMap(q, k, scale, true);
    MaskSpec mask;
    mask.causal = true;
    std::vector<double> errors;
    for (int m : {16, 256, 4096}) {
        double e = 0;
        for (int seed = 0; seed < 4; ++seed)
            e += (favorProbs(q, k, mask, scale, m, seed) - exact).abs().mean().item<double>() / 4;
        errors.push_back(e);
    }
    INFO("mean |error| M=16 " << errors[0] << ", 256 " << errors[1] << ", 4096 " << errors[2]);
    CHECK(errors[1] < errors[0] / 2.5);  // 1/sqrt(16) = 4x expected; allow noise
    CHECK(errors[2] < errors[1] / 2.5);
    CHECK(errors[2] < 2e-3);

    SECTION("the features are orthogonal within a block and have Gaussian-sized norms") {
        const at::Tensor w = favorFeatures(16, 48, 9).to(at::kDouble);
        const at::Tensor block = w.narrow(0, 16, 16);
        const at::Tensor gram = at::mm(block, block.t());
        const at::Tensor offDiagonal = gram - at::diag(at::diagonal(gram));
        CHECK(offDiagonal.abs().max().item<double>() < 1e-4 * gram.diagonal().max().item<double>());
        // E‖ω‖² = d = 16 for ω ~ N(0, I): the mean over 48 rows lies well within 16 ± 4.
        CHECK(std::abs(w.pow(2).sum(1).mean().item<double>() - 16) < 4);
        CHECK(at::equal(favorFeatures(16, 48, 9), favorFeatures(16, 48, 9)));
    }
}

TEST_CASE("exponential-form additive logits equal vᵀ tanh(qa + ka)", "[lab][additive]") {
    at::manual_seed(2);
    const auto qa = at::randn({37, 24}) * 3, ka = at::randn({29, 24}) * 3, v = at::randn({24});
    const at::Tensor expected = at::matmul(at::tanh(qa.unsqueeze(1) + ka.unsqueeze(0)), v);
    const at::Tensor full = additiveLogitsCpu(qa, ka, v, false);
    CHECK(maxAbsDiff(full, expected) < 2e-5 * 24);
    // Causal with more keys than queries: query i sees keys j <= i + 29 - 37 < 0 ... use n <= m.
    const at::Tensor causal = additiveLogitsCpu(ka, qa, v, true);  // 29 queries, 37 keys, offset 8
    const at::Tensor expectedCausal =
            at::matmul(at::tanh(ka.unsqueeze(1) + qa.unsqueeze(0)), v) * at::ones({29, 37}).tril(8);
    CHECK(maxAbsDiff(causal, expectedCausal) < 2e-5 * 24);
    CHECK_FALSE(additiveLogitsCpu(qa * 10, ka, v, false).defined());  // |x| > 20: caller falls back
    // Long rows take the vectorised tiles of 64 keys (plus a tail), and the rows are split
    // over threads once n·m·w >= 1e6.
    const auto qb = at::randn({300, 40}) * 2, kb = at::randn({330, 40}) * 2, vb = at::randn({40});
    const at::Tensor expectedLong = at::matmul(at::tanh(qb.unsqueeze(1) + kb.unsqueeze(0)), vb);
    CHECK(maxAbsDiff(additiveLogitsCpu(qb, kb, vb, false), expectedLong) < 2e-5 * 40);
    CHECK(maxAbsDiff(additiveLogitsCpu(qb, kb, vb, true), expectedLong * at::ones({300, 330}).tril(30)) < 2e-5 * 40);

    SECTION("additiveProbs gives the same map on both paths") {
        MaskSpec mask;
        mask.causal = true;
        const at::Tensor fast = additiveProbs(qa.narrow(0, 0, 29), ka, v, mask, 0.7);
        const at::Tensor slow = additiveProbs((qa.narrow(0, 0, 29) * 10).div(10), ka, v, mask, 0.7);  // same values
        at::Tensor logits = at::matmul(at::tanh(qa.narrow(0, 0, 29).unsqueeze(1) + ka.unsqueeze(0)), v) / 0.7;
        logits.masked_fill_(at::ones({29, 29}, at::kBool).triu(1), -INFINITY);
        CHECK(maxAbsDiff(fast, at::softmax(logits, -1)) < 1e-5);
        CHECK(maxAbsDiff(slow, fast) < 1e-5);
        const at::Tensor big = additiveProbs(qa.narrow(0, 0, 29) * 10, ka, v, mask, 1.0);  // tanh fallback
        at::Tensor bigLogits = at::matmul(at::tanh((qa.narrow(0, 0, 29) * 10).unsqueeze(1) + ka.unsqueeze(0)), v);
        bigLogits.masked_fill_(at::ones({29, 29}, at::kBool).triu(1), -INFINITY);
        CHECK(maxAbsDiff(big, at::softmax(bigLogits, -1)) < 1e-5);
    }
}

TEST_CASE("chunked causal linear attention equals the quadratic form", "[lab][linear]") {
    at::manual_seed(3);
    const auto pq = at::rand({3, 70, 12}), pk = at::rand({3, 70, 12}), v = at::randn({3, 70, 5});
    MaskSpec causal;
    causal.causal = true;
    for (std::int64_t chunk : {1, 7, 64, 128})
        CHECK(maxAbsDiff(linearAttention(pq, pk, v, causal, chunk), linearQuadratic(pq, pk, v, true, 0)) < 1e-5);
    // Fewer queries than keys: query i sees keys j <= i + 10.
    const auto pq60 = pq.narrow(1, 10, 60);
    CHECK(maxAbsDiff(linearAttention(pq60, pk, v, causal, 16), linearQuadratic(pq60, pk, v, true, 10)) < 1e-5);
    CHECK(maxAbsDiff(linearAttention(pq, pk, v, MaskSpec{}), linearQuadratic(pq, pk, v, false, 0)) < 1e-5);
    // Padding: keys 60.. are not allowed.
    MaskSpec padded;
    padded.keyAllowed = at::arange(70) < 60;
    const at::Tensor expected = linearQuadratic(pq, pk.narrow(1, 0, 60), v.narrow(1, 0, 60), false, 0);
    CHECK(maxAbsDiff(linearAttention(pq, pk, v, padded), expected) < 1e-5);
    // A zero denominator gives 0, not NaN.
    const auto zeroK = at::zeros({1, 4, 3});
    CHECK(linearAttention(at::rand({1, 4, 3}), zeroK, at::randn({1, 4, 2}), causal).abs().sum().item<double>() == 0.0);
}

#ifdef ATTNSCOPE_WITH_CUDA_KERNELS
TEST_CASE("CUDA kernels refuse sizes above their limits before touching the GPU", "[cuda-limits]") {
    // No device needed: the checks come before any launch, so null pointers are never read.
    CHECK(cuda::additiveSoftmaxRows(nullptr, nullptr, nullptr, nullptr, nullptr, 4, 4, 600, 1.f, false) ==
          "CUDA additive softmax: width 600 is outside the kernel's 0..512");
    CHECK(cuda::causalLinearAttention(nullptr, nullptr, nullptr, nullptr, 1, 4, 2000, 8) ==
          "CUDA causal linear attention: 2000 features, outside the kernel's 1..1024");
    // Empty work is no work: nothing is launched and nothing fails.
    CHECK(cuda::softmaxRowsInPlace(nullptr, 0, 4, 1.f, true).empty());
}
#endif

// ctest's probe for the cuda_kernels entry (hidden): passes only where a GPU is visible.
TEST_CASE("CUDA probe", "[.cuda-probe]") { REQUIRE(at::hasCUDA()); }

TEST_CASE("CUDA kernels equal the CPU path", "[cuda]") {
    REQUIRE(at::hasCUDA());  // run by ctest's cuda_kernels entry only where a GPU is visible
    at::manual_seed(4);
    const auto gpu = at::TensorOptions().device(at::kCUDA);
    SECTION("fused scaled softmax with temperature") {
        const auto q = at::randn({300, 64}), k = at::randn({300, 64});
        MaskSpec mask;
        mask.causal = true;
        CHECK(maxAbsDiff(headProbs(q.to(gpu), k.to(gpu), mask, ScoreSpec{0.125}, 0, 0.7),
                         headProbs(q, k, mask, ScoreSpec{0.125}, 0, 0.7)) < 1e-5);
    }
    SECTION("a head dimension above the additive kernel's limit") {
        const auto q = at::randn({40, cuda::kMaxHeadDim + 88}), k = at::randn({40, cuda::kMaxHeadDim + 88});
        MaskSpec mask;
        mask.causal = true;
        CHECK(maxAbsDiff(headProbs(q.to(gpu), k.to(gpu), mask, ScoreSpec{0.04}, 0, 1.0),
                         headProbs(q, k, mask, ScoreSpec{0.04}, 0, 1.0)) < 1e-5);
    }
    SECTION("fused additive scores") {
        const auto qa = at::randn({257, 48}), ka = at::randn({300, 48}), v = at::randn({48});
        MaskSpec mask;
        mask.causal = true;
        mask.keyAllowed = at::arange(300) % 7 != 3;
        const at::Tensor cpu = additiveProbs(qa, ka, v, mask, 1.3);
        CHECK(maxAbsDiff(additiveProbs(qa.to(gpu), ka.to(gpu), v.to(gpu), mask, 1.3), cpu) < 1e-5);
    }
    SECTION("causal linear attention") {
        const auto pq = at::rand({4, 333, 40}), pk = at::rand({4, 333, 40}), v = at::randn({4, 333, 32});
        MaskSpec mask;
        mask.causal = true;
        const at::Tensor cpu = linearAttention(pq, pk, v, mask);
        CHECK(maxAbsDiff(linearAttention(pq.to(gpu), pk.to(gpu), v.to(gpu), mask), cpu) < 1e-4);
    }
}

}  // namespace test_lab_kernels
