// The blocked CPU attention (blocked_attention.h) behind attendDot and headProbs, against the
// double-precision definition (reference_attention.h) and against the unblocked whole-score path
// (attentionProbs + additiveMask, what the forward used before), on sizes that cross block edges,
// keys beyond the queries, windows, grouped-query heads, padding masks, soft-cap and ALiBi, with
// every way of sharing blocks between cores; and the path other devices take (deviceBlockedAttend,
// ATen operations only), run here on the CPU.
#include "attention/attention_ops.h"
#include "attention/blocked_attention.h"
#include "reference_attention.h"

#include <catch2/catch.hpp>
#include <torch/version.h>

#include <ATen/ATen.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <c10/core/Allocator.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace test_blocked_attention {

using namespace attnscope;
using testref::maxDiff;
using testref::referenceMap;

namespace {

// Restores the process's blocked-attention configuration when a test is done with it.
struct ConfigScope {
    BlockedConfig saved = blockedConfig();
    ~ConfigScope() { setBlockedConfig(saved); }
};

struct Case {
    const char* name;
    std::int64_t n, m;
    bool causal;
    std::int64_t window;
    bool padding;
    double softcap;
    bool alibi;
};

// LibTorch CPU tensor bytes alive at once (workers report through the caller's thread-local hook).
class PeakMemory : public c10::MemoryReportingInfoBase {
public:
    // LibTorch 2 reports the allocator's totals as size_t, 1.x as int64_t.
#if TORCH_VERSION_MAJOR >= 2
    using Total = std::size_t;
#else
    using Total = std::int64_t;
#endif
    void reportMemoryUsage(void*, int64_t size, Total, Total, c10::Device) override {
        const std::int64_t now = current_ += size;
        std::int64_t seen = peak_.load();
        while (now > seen && !peak_.compare_exchange_weak(seen, now)) {
        }
    }
    bool memoryProfilingEnabled() const override { return true; }
    std::int64_t peak() const { return peak_.load(); }

private:
    std::atomic<std::int64_t> current_{0}, peak_{0};
};

}  // namespace

TEST_CASE("key spans stop causal blocks at the diagonal and windowed blocks at the window", "[attention][blocked]") {
    MaskSpec none;
    CHECK(keySpan(none, 1000, 1000, 128, 128).lo == 0);
    CHECK(keySpan(none, 1000, 1000, 128, 128).hi == 1000);
    MaskSpec causal;
    causal.causal = true;
    CHECK(keySpan(causal, 1000, 1000, 128, 128).hi == 256);   // rows 128..255 see keys 0..255
    CHECK(keySpan(causal, 10, 25, 0, 4).hi == 19);            // 15 keys before the first query
    CHECK(keySpan(causal, 1000, 1000, 896, 104).hi == 1000);  // the last, short block
    MaskSpec window = causal;
    window.window = 100;
    const KeySpan w = keySpan(window, 1000, 1000, 512, 128);  // row 512 sees 413..512, row 639 up to 639
    CHECK(w.lo == 413);
    CHECK(w.hi == 640);
    CHECK(keySpan(window, 1000, 1000, 0, 128).lo == 0);
}

namespace {

// The largest |logit| of a head, in double: |scale·q·k| (or the soft-cap's bound) plus the ALiBi
// term slope·j at the last key, over the temperature.
double largestLogit(const at::Tensor& q, const at::Tensor& k, const Case& c, double scale, double slope,
                    double temperature) {
    double dot = at::mm(q.to(at::kDouble), k.to(at::kDouble).t()).abs().max().item<double>() * scale;
    if (c.softcap > 0) dot = std::min(dot, c.softcap);
    return (dot + std::abs(slope) * static_cast<double>(c.m - 1)) / temperature;
}

// The cases both paths are checked on: sizes that cross block edges, keys beyond the queries,
// windows, grouped-query heads (6 query heads over 2 groups), padding, soft-cap and ALiBi.
const std::vector<Case>& edgeCases() {
    static const std::vector<Case> cases = {
            {"causal, n = 300 (not a multiple of the block)", 300, 300, true, 0, false, 0.0, false},
            {"causal with a window of 100 and ALiBi", 257, 257, true, 100, false, 0.0, true},
            {"causal, 11 keys before the queries, soft-cap", 129, 140, true, 0, false, 4.0, false},
            {"bidirectional with padding, soft-cap and ALiBi", 200, 200, false, 0, true, 3.0, true},
            {"bidirectional window of 20", 131, 131, false, 20, false, 0.0, false},
            {"one token", 1, 1, true, 0, false, 0.0, false},
            {"causal, window 50, padding", 150, 150, true, 50, true, 0.0, false},
    };
    return cases;
}

constexpr std::int64_t kHeads = 6, kGroups = 2, kDim = 16, kValueDim = 8;
constexpr double kScale = 0.25, kTemperature = 0.8;
const std::vector<double> kSlopes = {0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625};

struct CaseInputs {
    at::Tensor q, k, v;  // [6, n, 16], [2, m, 16], [2, m, 8]
    MaskSpec mask;
    ScoreSpec score;
    std::vector<std::vector<double>> refs;  // each head's map from the definition, [n · m]
};

CaseInputs caseInputs(const Case& c) {
    CaseInputs in;
    at::manual_seed(static_cast<std::uint64_t>(c.n * 7 + c.m));
    in.q = at::randn({kHeads, c.n, kDim}) * 2;
    in.k = at::randn({kGroups, c.m, kDim}) * 2;
    in.v = at::randn({kGroups, c.m, kValueDim});
    in.mask.causal = c.causal;
    in.mask.window = c.window;
    if (c.padding) in.mask.keyAllowed = at::arange(c.m).remainder(5) != 3;  // key 0 and most others allowed
    in.score.scale = kScale;
    in.score.softcap = c.softcap;
    if (c.alibi) in.score.alibiSlopes = kSlopes;
    for (int h = 0; h < kHeads; ++h)
        in.refs.push_back(referenceMap(in.q[h], in.k[h / 3], in.mask, kScale, c.softcap, c.alibi ? kSlopes[h] : 0.0,
                                       kTemperature));
    return in;
}

// max |context - Σ_j p_ij v_j| over every head, with p from the definition; masked heads must be 0.
double contextError(const at::Tensor& ctx, const CaseInputs& in, const Case& c, const std::vector<int>& maskedHeads) {
    double worst = 0;
    for (int h = 0; h < kHeads; ++h) {
        const bool masked = std::find(maskedHeads.begin(), maskedHeads.end(), h) != maskedHeads.end();
        const at::Tensor P = at::tensor(in.refs[h], at::kDouble).view({c.n, c.m});
        const at::Tensor want =
                masked ? at::zeros({c.n, kValueDim}, at::kDouble) : at::mm(P, in.v[h / 3].to(at::kDouble));
        worst = std::max(worst, (ctx[h].to(at::kDouble) - want).abs().max().item<double>());
    }
    return worst;
}

}  // namespace

TEST_CASE("blocked attention equals the definition and the unblocked path across block edges", "[attention][blocked]") {
    ConfigScope restore;
    for (const Case& c : edgeCases()) {
        INFO(c.name);
        const CaseInputs in = caseInputs(c);
        // What the forward computed before blocks: every head's whole score matrix at once.
        const at::Tensor whole =
                attentionProbs(in.q, in.k, additiveMask(in.mask, c.n, c.m, in.q.options()), in.score, kTemperature);
        for (const Striping striping : {Striping::Blas, Striping::Heads, Striping::Rows}) {
            for (const std::int64_t rows : {std::int64_t{128}, std::int64_t{37}}) {
                INFO("striping " << static_cast<int>(striping) << ", " << rows << " rows per block");
                setBlockedConfig({rows, striping, 2});
                LayerRun run;
                run.temperature = kTemperature;
                run.maskedHeads = {4};
                const at::Tensor ctx = attendDot(in.q, in.k, in.v, in.mask, in.score, run);
                REQUIRE(ctx.sizes() == at::IntArrayRef({kHeads, c.n, kValueDim}));
                CHECK(contextError(ctx, in, c, run.maskedHeads) < 1e-5);
                for (int h = 0; h < kHeads; ++h) {
                    const at::Tensor map = headProbs(in.q[h], in.k[h / 3], in.mask, in.score, h, kTemperature);
                    // Against the definition within float32's reach (logits here reach ~190 with
                    // ALiBi, so their rounding alone moves probabilities by ~1e-6); against what
                    // the forward computed before, within 1e-6 or, where the logits are large,
                    // half an ulp of the largest: a logit's rounding δ moves p by p(1 - p)·δ ≤ δ/4,
                    // and each path rounds once (the BLAS's kernels decide which way).
                    CHECK(maxDiff(map, in.refs[h]) < 5e-6);
                    const double largest =
                            largestLogit(in.q[h], in.k[h / 3], c, kScale, c.alibi ? kSlopes[h] : 0.0, kTemperature);
                    const double halfUlp = 0.5 * std::ldexp(1.0, std::ilogb(largest) - 23);
                    CHECK((map - whole[h]).abs().max().item<double>() < std::max(1e-6, halfUlp));
                }
            }
        }
    }
}

TEST_CASE("blocked attention never holds a whole score matrix or mask", "[attention][blocked]") {
    // n = 4096: one head's float32 scores are 64 MiB, two heads' 128 MiB, the [n, n] mask 64 MiB.
    const std::int64_t H = 2, n = 4096, d = 16;
    at::manual_seed(5);
    const at::Tensor q = at::randn({H, n, d}), k = at::randn({1, n, d}), v = at::randn({1, n, d});
    MaskSpec mask;
    mask.causal = true;
    ScoreSpec score;
    score.scale = 0.25;
    ConfigScope restore;
    // The CPU's stripings with 128-row blocks, then the device path with [2, 128, 4096] blocks.
    for (const int path : {0, 1, 2}) {
        INFO(path);
        BlockedConfig config{128, path == 0 ? Striping::Blas : Striping::Rows, 2};
        config.deviceCells = 128 * H * n;
        setBlockedConfig(config);
        auto peak = std::make_shared<PeakMemory>();
        at::Tensor ctx;
        {
            c10::DebugInfoGuard guard(c10::DebugInfoKind::PROFILER_STATE, peak);
            ctx = path == 2 ? deviceBlockedAttend(q, k, v, mask, score, LayerRun{})
                            : attendDot(q, k, v, mask, score, LayerRun{});
        }
        // The context (0.5 MiB) plus one block's logits and probabilities per worker (the
        // device path: all heads' logits, probabilities, mask bands and products, about 16 MiB).
        CHECK(peak->peak() < (path == 2 ? 24 : 16) * (1 << 20));
        CHECK(peak->peak() > 0);  // the hook saw the allocations
        // Row 4095 of head 1 against the definition (a full-length row at the last block).
        const auto ref = referenceMap(q[1].narrow(0, n - 1, 1), k[0], MaskSpec{}, 0.25, 0, 0, 1.0);
        const at::Tensor want = at::mm(at::tensor(ref, at::kDouble).view({1, n}), v[0].to(at::kDouble));
        CHECK((ctx[1].narrow(0, n - 1, 1).to(at::kDouble) - want).abs().max().item<double>() < 1e-5);
    }
}

TEST_CASE("the device path (all heads per block) equals the definition", "[attention][blocked]") {
    // deviceBlockedAttend is what a GPU forward runs; written with ATen operations only, it runs
    // here on CPU tensors. deviceCells picks the block: 37 rows, 128 rows, or the whole map.
    ConfigScope restore;
    for (const Case& c : edgeCases()) {
        INFO(c.name);
        const CaseInputs in = caseInputs(c);
        for (const std::int64_t rows : {std::int64_t{37}, std::int64_t{128}, c.n}) {
            INFO(rows << " rows per block");
            BlockedConfig config;
            config.deviceCells = rows * kHeads * c.m;
            setBlockedConfig(config);
            REQUIRE(deviceBlockRows(kHeads, c.n, c.m) == std::min(rows, c.n));
            LayerRun run;
            run.temperature = kTemperature;
            run.maskedHeads = {1};
            const at::Tensor ctx = deviceBlockedAttend(in.q, in.k, in.v, in.mask, in.score, run);
            REQUIRE(ctx.sizes() == at::IntArrayRef({kHeads, c.n, kValueDim}));
            CHECK(contextError(ctx, in, c, run.maskedHeads) < 1e-5);
        }
    }
}

TEST_CASE("the device path takes a position bias block by block", "[attention][blocked]") {
    // T5's relative position bias is an [H, n, m] tensor: each block adds its own rows and keys.
    const std::int64_t H = 4, n = 90, d = 8, dv = 8;
    at::manual_seed(21);
    const at::Tensor q = at::randn({H, n, d}), k = at::randn({H, n, d}), v = at::randn({H, n, dv});
    ScoreSpec score;
    score.bias = at::randn({H, n, n}) * 3;
    MaskSpec mask;
    SECTION("bidirectional") {}
    SECTION("causal") { mask.causal = true; }
    const at::Tensor probs = attentionProbs(q.to(at::kDouble), k.to(at::kDouble), additiveMask(mask, n, n, at::kDouble),
                                            ScoreSpec{1.0, 0.0, {}, score.bias.to(at::kDouble)}, 1.3);
    const at::Tensor want = at::bmm(probs, v.to(at::kDouble));
    ConfigScope restore;
    BlockedConfig config;
    config.deviceCells = 16 * H * n;  // 16 rows per block: 6 blocks, the last one short
    setBlockedConfig(config);
    LayerRun run;
    run.temperature = 1.3;
    const at::Tensor ctx = deviceBlockedAttend(q, k, v, mask, score, run);
    CHECK((ctx.to(at::kDouble) - want).abs().max().item<double>() < 1e-5);
}

TEST_CASE("CUDA: the blocked forward on the GPU equals the CPU's", "[cuda]") {
    REQUIRE(at::hasCUDA());  // run by ctest's cuda_kernels entry only where a GPU is visible
    const auto gpu = at::TensorOptions().device(at::kCUDA);
    const std::int64_t H = 8, G = 2, n = 1500, d = 64, dv = 64;
    at::manual_seed(31);
    const at::Tensor q = at::randn({H, n, d}), k = at::randn({G, n, d}), v = at::randn({G, n, dv});
    ConfigScope restore;
    BlockedConfig config;
    config.deviceCells = 200 * H * n;  // 200 rows per block: 8 blocks, the last one short
    setBlockedConfig(config);
    for (int variant = 0; variant < 3; ++variant) {
        MaskSpec mask;
        mask.causal = variant != 2;
        if (variant == 1) mask.window = 333;
        ScoreSpec score;
        score.scale = 0.125;
        if (variant == 2) {
            mask.keyAllowed = at::arange(n) % 9 != 4;
            score.alibiSlopes = {0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625};
        }
        INFO("variant " << variant);
        LayerRun run;
        run.temperature = 0.9;
        const at::Tensor cpu = attendDot(q, k, v, mask, score, run);
        const at::Tensor onGpu = attendDot(q.to(gpu), k.to(gpu), v.to(gpu), mask, score, run);
        REQUIRE(onGpu.is_cuda());
        const double diff = (onGpu.cpu() - cpu).abs().max().item<double>();
        std::printf("cuda-check blocked forward variant %d max |gpu - cpu| = %.3g\n", variant, diff);
        CHECK(diff < 2e-5);
    }
}

}  // namespace test_blocked_attention
