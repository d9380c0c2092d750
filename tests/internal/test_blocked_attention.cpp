// The blocked CPU attention (blocked_attention.h) behind attendDot and headProbs, against the
// double-precision definition (reference_attention.h) and against the unblocked whole-score path
// (attentionProbs + additiveMask, what the forward used before), on sizes that cross block edges,
// keys beyond the queries, windows, grouped-query heads, padding masks, soft-cap and ALiBi, with
// every way of sharing blocks between cores.
#include "attention/attention_ops.h"
#include "attention/blocked_attention.h"
#include "reference_attention.h"

#include <catch2/catch.hpp>

#include <ATen/ATen.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <c10/core/Allocator.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>
#include <vector>

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
    void reportMemoryUsage(void*, int64_t size, int64_t, int64_t, c10::Device) override {
        const std::int64_t now = current_ += size;
        std::int64_t seen = peak_.load();
        while (now > seen && !peak_.compare_exchange_weak(seen, now)) {}
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
    CHECK(keySpan(causal, 1000, 1000, 128, 128).hi == 256);    // rows 128..255 see keys 0..255
    CHECK(keySpan(causal, 10, 25, 0, 4).hi == 19);             // 15 keys before the first query
    CHECK(keySpan(causal, 1000, 1000, 896, 104).hi == 1000);  // the last, short block
    MaskSpec window = causal;
    window.window = 100;
    const KeySpan w = keySpan(window, 1000, 1000, 512, 128);   // row 512 sees 413..512, row 639 up to 639
    CHECK(w.lo == 413);
    CHECK(w.hi == 640);
    CHECK(keySpan(window, 1000, 1000, 0, 128).lo == 0);
}

namespace {

// The largest |logit| of a head, in double: |scale·q·k| (or the soft-cap's bound) plus the ALiBi
// term slope·j at the last key, over the temperature.
double largestLogit(const at::Tensor& q, const at::Tensor& k, const Case& c, double scale, double slope, double temperature) {
    double dot = at::mm(q.to(at::kDouble), k.to(at::kDouble).t()).abs().max().item<double>() * scale;
    if (c.softcap > 0) dot = std::min(dot, c.softcap);
    return (dot + std::abs(slope) * static_cast<double>(c.m - 1)) / temperature;
}

}  // namespace

TEST_CASE("blocked attention equals the definition and the unblocked path across block edges", "[attention][blocked]") {
    const std::vector<Case> cases = {
        {"causal, n = 300 (not a multiple of the block)", 300, 300, true, 0, false, 0.0, false},
        {"causal with a window of 100 and ALiBi", 257, 257, true, 100, false, 0.0, true},
        {"causal, 11 keys before the queries, soft-cap", 129, 140, true, 0, false, 4.0, false},
        {"bidirectional with padding, soft-cap and ALiBi", 200, 200, false, 0, true, 3.0, true},
        {"bidirectional window of 20", 131, 131, false, 20, false, 0.0, false},
        {"one token", 1, 1, true, 0, false, 0.0, false},
        {"causal, window 50, padding", 150, 150, true, 50, true, 0.0, false},
    };
    const std::int64_t H = 6, G = 2, d = 16, dv = 8;
    const double scale = 0.25, temperature = 0.8;
    const std::vector<double> slopes = {0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625};
    ConfigScope restore;
    for (const Case& c : cases) {
        INFO(c.name);
        at::manual_seed(static_cast<std::uint64_t>(c.n * 7 + c.m));
        const at::Tensor q = at::randn({H, c.n, d}) * 2, k = at::randn({G, c.m, d}) * 2, v = at::randn({G, c.m, dv});
        MaskSpec mask;
        mask.causal = c.causal;
        mask.window = c.window;
        if (c.padding) mask.keyAllowed = at::arange(c.m).remainder(5) != 3;  // key 0 and most others allowed
        ScoreSpec score;
        score.scale = scale;
        score.softcap = c.softcap;
        if (c.alibi) score.alibiSlopes = slopes;
        std::vector<std::vector<double>> refs;
        for (int h = 0; h < H; ++h)
            refs.push_back(referenceMap(q[h], k[h / 3], mask, scale, c.softcap, c.alibi ? slopes[h] : 0.0, temperature));
        // What the forward computed before blocks: every head's whole score matrix at once.
        const at::Tensor whole = attentionProbs(q, k, additiveMask(mask, c.n, c.m, q.options()), score, temperature);
        for (const Striping striping : {Striping::Blas, Striping::Heads, Striping::Rows}) {
            for (const std::int64_t rows : {std::int64_t{128}, std::int64_t{37}}) {
                INFO("striping " << static_cast<int>(striping) << ", " << rows << " rows per block");
                setBlockedConfig({rows, striping, 2});
                LayerRun run;
                run.temperature = temperature;
                run.maskedHeads = {4};
                const at::Tensor ctx = attendDot(q, k, v, mask, score, run);
                REQUIRE(ctx.sizes() == at::IntArrayRef({H, c.n, dv}));
                for (int h = 0; h < H; ++h) {
                    const at::Tensor P = at::tensor(refs[h], at::kDouble).view({c.n, c.m});
                    const at::Tensor want = h == 4 ? at::zeros({c.n, dv}, at::kDouble) : at::mm(P, v[h / 3].to(at::kDouble));
                    CHECK((ctx[h].to(at::kDouble) - want).abs().max().item<double>() < 1e-5);
                    const at::Tensor map = headProbs(q[h], k[h / 3], mask, score, h, temperature);
                    // Against the definition within float32's reach (logits here reach ~190 with
                    // ALiBi, so their rounding alone moves probabilities by ~1e-6); against what
                    // the forward computed before, within 1e-6 or, where the logits are large,
                    // half an ulp of the largest: a logit's rounding δ moves p by p(1 - p)·δ ≤ δ/4,
                    // and each path rounds once (the BLAS's kernels decide which way).
                    CHECK(maxDiff(map, refs[h]) < 5e-6);
                    const double halfUlp = 0.5 * std::ldexp(1.0, std::ilogb(largestLogit(q[h], k[h / 3], c, scale, c.alibi ? slopes[h] : 0.0, temperature)) - 23);
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
    for (const Striping striping : {Striping::Blas, Striping::Rows}) {
        setBlockedConfig({128, striping, 2});
        auto peak = std::make_shared<PeakMemory>();
        at::Tensor ctx;
        {
            c10::DebugInfoGuard guard(c10::DebugInfoKind::PROFILER_STATE, peak);
            ctx = attendDot(q, k, v, mask, score, LayerRun{});
        }
        // The context (0.5 MiB) plus one [128, 4096] block of logits and probabilities per worker.
        CHECK(peak->peak() < 16 * (1 << 20));
        CHECK(peak->peak() > 0);  // the hook saw the allocations
        // Row 4095 of head 1 against the definition (a full-length row at the last block).
        const auto ref = referenceMap(q[1].narrow(0, n - 1, 1), k[0], MaskSpec{}, 0.25, 0, 0, 1.0);
        const at::Tensor want = at::mm(at::tensor(ref, at::kDouble).view({1, n}), v[0].to(at::kDouble));
        CHECK((ctx[1].narrow(0, n - 1, 1).to(at::kDouble) - want).abs().max().item<double>() < 1e-5);
    }
}
