// KV-eviction what-if (analysis/kv_eviction.h): each policy's scores and kept sets against a
// reference written here from the definitions over the independent double-precision Llama
// forward (tests/support), the evicted generation against full forwards with the evicted keys
// knocked out (RunOptions::knockouts: the same -inf logits), and the refusals.
#include "attnscope/analysis/kv_eviction.h"
#include "attnscope/attention/trace.h"
#include "attnscope/models/generation.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"
#include "family_checks.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace test_kv_eviction {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

const std::vector<long long> kPrompt = {3, 17, 0, 27, 22, 5, 5, 11, 30, 2, 41, 8};

// s_j for kv group g of layer l: Σ over query rows [from, n) of α_ij, averaged over the group's heads.
std::vector<double> referenceSums(const Reference& ref, const LlamaSpec& spec, int l, int g, int from, int n) {
    const int per = spec.heads / spec.kvHeads;
    std::vector<double> s(std::size_t(n), 0.0);
    for (int h = g * per; h < (g + 1) * per; ++h)
        for (int i = from; i < n; ++i)
            for (int j = 0; j <= i; ++j) s[std::size_t(j)] += ref.probs[l][h][std::size_t(i * n + j)] / per;
    return s;
}

// The top `count` of positions [lo, hi) by score, larger first, earlier on ties.
std::vector<int> topPositions(const std::vector<double>& s, int lo, int hi, int count) {
    std::vector<int> p(std::size_t(hi - lo));
    std::iota(p.begin(), p.end(), lo);
    std::sort(p.begin(), p.end(), [&](int a, int b) { return s[a] > s[b] || (s[a] == s[b] && a < b); });
    p.resize(std::size_t(std::min(count, hi - lo)));
    return p;
}

struct Expected {
    std::vector<double> scores;  // NaN where the policy has none
    std::vector<int> kept;       // 0/1
};

Expected expectedFor(const EvictionOptions& o, const Reference& ref, const LlamaSpec& spec, int l, int g, int n) {
    Expected e;
    e.kept.assign(std::size_t(n), 0);
    if (o.policy == EvictionPolicy::Streaming) {
        for (int j = 0; j < n; ++j) e.kept[j] = j < o.sinks || j >= n - (o.budget - o.sinks);
        for (int j = 0; j < n; ++j) e.scores.push_back(e.kept[j]);
    } else if (o.policy == EvictionPolicy::H2O) {
        const int R = o.recent >= 0 ? o.recent : o.budget / 2;
        e.scores = referenceSums(ref, spec, l, g, 0, n);
        for (int j = n - R; j < n; ++j) e.kept[j] = 1;
        for (int j : topPositions(e.scores, 0, n - R, o.budget - R)) e.kept[j] = 1;
    } else {
        const int W = o.window, before = n - W, half = o.kernel / 2;
        const std::vector<double> s = referenceSums(ref, spec, l, g, before, n);
        e.scores.assign(std::size_t(n), NAN);
        for (int j = 0; j < before; ++j) {
            double sum = 0;
            for (int t = j - half; t <= j + half; ++t)
                if (t >= 0 && t < before) sum += s[t];
            e.scores[j] = sum / o.kernel;
        }
        for (int j = before; j < n; ++j) e.kept[j] = 1;
        for (int j : topPositions(e.scores, 0, before, o.budget - W)) e.kept[j] = 1;
    }
    return e;
}

void requireSelectionMatches(const EvictionOptions& o) {
    LlamaSpec spec;  // 2 layers, 4 heads over 2 kv groups
    const Checkpoint c = makeLlama(spec, 5);
    auto model = writeAndLoad(c, "evict-llama");
    const auto trace = model->forward(ids64(kPrompt));
    const Reference ref = referenceLlama(c, spec, kPrompt);
    const int n = int(kPrompt.size());
    const EvictionSelection sel = selectKeys(*trace, o);
    REQUIRE(sel.layers == spec.layers);
    REQUIRE(sel.kvHeads == spec.kvHeads);
    REQUIRE(sel.n == n);
    int keptTotal = 0;
    for (int l = 0; l < spec.layers; ++l)
        for (int g = 0; g < spec.kvHeads; ++g) {
            const Expected e = expectedFor(o, ref, spec, l, g, n);
            for (int j = 0; j < n; ++j) {
                const std::size_t at = std::size_t((l * spec.kvHeads + g) * n + j);
                INFO(evictionPolicyName(o.policy) << " layer " << l << " group " << g << " key " << j);
                if (std::isnan(e.scores[j]))
                    CHECK(std::isnan(sel.scores[at]));
                else
                    CHECK(sel.scores[at] == Approx(e.scores[j]).margin(1e-5));
                CHECK(int(sel.kept[at]) == e.kept[j]);
                keptTotal += sel.kept[at];
            }
        }
    CHECK(keptTotal == spec.layers * spec.kvHeads * std::min(o.budget, n));
}

EvictionOptions policy(EvictionPolicy p, int budget) {
    EvictionOptions o;
    o.policy = p;
    o.budget = budget;
    o.newTokens = 5;
    return o;
}

}  // namespace

TEST_CASE("KV eviction: H2O, SnapKV and StreamingLLM scores and kept keys against the definitions", "[kv_eviction]") {
    requireSelectionMatches(policy(EvictionPolicy::H2O, 6));  // recent ⌊6/2⌋ = 3
    EvictionOptions h2o = policy(EvictionPolicy::H2O, 5);
    h2o.recent = 1;
    requireSelectionMatches(h2o);
    EvictionOptions snap = policy(EvictionPolicy::SnapKV, 7);
    snap.window = 3;
    snap.kernel = 3;
    requireSelectionMatches(snap);
    snap.kernel = 1;  // no pooling
    requireSelectionMatches(snap);
    EvictionOptions streaming = policy(EvictionPolicy::Streaming, 5);
    streaming.sinks = 2;
    requireSelectionMatches(streaming);
}

TEST_CASE("KV eviction: the evicted run equals full forwards with the evicted keys knocked out", "[kv_eviction]") {
    auto model = writeAndLoad(makeLlama(LlamaSpec{}, 5), "evict-llama-run");
    const int n = int(kPrompt.size());
    EvictionOptions o = policy(EvictionPolicy::Streaming, 4);  // the same keys in every layer and kv head
    o.sinks = 1;
    const EvictionResult r = evictionWhatIf(*model, ids64(kPrompt), o);
    std::vector<std::int64_t> evicted;
    for (int j = 1; j < n - 3; ++j) evicted.push_back(j);
    GenerateOptions plain;
    plain.tokens = o.newTokens;
    plain.cache = false;
    const Generation full = generate(*model, ids64(kPrompt), plain);
    CHECK(r.tokensFull == full.generated);
    REQUIRE(r.tokensEvicted.size() == std::size_t(o.newTokens));
    CHECK(r.tokensEvicted[0] == r.tokensFull[0]);  // eviction acts after the prompt's forward
    CHECK(r.klPerStep.at(0) == 0.0);
    std::vector<std::int64_t> ids = ids64(kPrompt);
    int same = 0, first = -1;
    for (int t = 0; t < o.newTokens; ++t) {
        RunOptions run;
        if (t > 0) {
            Knockout k;
            for (int q = n; q < n + t; ++q) k.queries.push_back(q);
            k.keys = evicted;
            k.lastLayer = 1;
            run.knockouts = {k};
        }
        const auto cut = model->forward(ids, run);
        const auto whole = model->forward([&] {
            std::vector<std::int64_t> f = ids64(kPrompt);
            f.insert(f.end(), full.generated.begin(), full.generated.begin() + t);
            return f;
        }());
        // KL(p_full ‖ p_evicted) from the two forwards, in double.
        const auto logp = [](const std::vector<float>& l) {
            const double top = *std::max_element(l.begin(), l.end());
            double z = 0;
            for (float v : l) z += std::exp(v - top);
            std::vector<double> out;
            for (float v : l) out.push_back(v - top - std::log(z));
            return out;
        };
        const auto p = logp(whole->nextTokenLogits()), q = logp(cut->nextTokenLogits());
        double kl = 0;
        for (std::size_t i = 0; i < p.size(); ++i) kl += std::exp(p[i]) * (p[i] - q[i]);
        CHECK(r.klPerStep.at(std::size_t(t)) == Approx(kl).margin(1e-5));
        const auto next = std::max_element(cut->nextTokenLogits().begin(), cut->nextTokenLogits().end()) -
                          cut->nextTokenLogits().begin();
        CHECK(r.tokensEvicted[std::size_t(t)] == next);
        ids.push_back(r.tokensEvicted[std::size_t(t)]);
        if (r.tokensEvicted[std::size_t(t)] == r.tokensFull[std::size_t(t)])
            ++same;
        else if (first < 0)
            first = t;
    }
    CHECK(r.agreement == Approx(double(same) / o.newTokens));
    CHECK(r.firstDifference == first);
    double later = 0;
    for (std::size_t t = 1; t < r.klPerStep.size(); ++t) later += r.klPerStep[t];
    CHECK(later > 1e-6);  // removing 7 of 12 keys changes the distribution
    // A budget that holds the whole prompt evicts nothing.
    const EvictionResult all = evictionWhatIf(*model, ids64(kPrompt), policy(EvictionPolicy::H2O, n));
    CHECK(all.agreement == 1.0);
    CHECK(all.firstDifference == -1);
    for (double kl : all.klPerStep) CHECK(kl < 1e-9);
}

TEST_CASE("KV eviction: budgets that cannot hold the forced keys and bad options are refused", "[kv_eviction]") {
    const auto refusal = [](const EvictionOptions& o, std::int64_t n = 12) {
        try {
            checkEvictionOptions(o, n);
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("(no error)");
    };
    EvictionOptions h2o = policy(EvictionPolicy::H2O, 4);
    h2o.recent = 5;
    CHECK(refusal(h2o) == "--budget 4 cannot hold the 5 recent keys (--recent)");
    EvictionOptions snap = policy(EvictionPolicy::SnapKV, 8);
    CHECK(refusal(snap, 40) == "--budget 8 cannot hold the 32 window keys (--window)");
    CHECK(refusal(snap) == "--window 32 is longer than the prompt's 12 positions");
    snap.window = 4;
    snap.kernel = 4;
    CHECK(refusal(snap) == "--kernel must be an odd number >= 1, got 4");
    EvictionOptions streaming = policy(EvictionPolicy::Streaming, 3);
    CHECK(refusal(streaming) == "--budget 3 cannot hold the 4 sink keys (--sinks)");
    CHECK(refusal(policy(EvictionPolicy::H2O, 0)) == "--budget must be >= 1, got 0");
    CHECK_THROWS_WITH(parseEvictionPolicy("lru"), "--policy: 'lru' is not a policy (h2o, snapkv or streaming)");
    auto model = writeAndLoad(makeLlama(LlamaSpec{}, 5), "evict-llama-refuse");
    CHECK_THROWS_WITH(evictionWhatIf(*model, ids64(kPrompt), streaming),
                      "--budget 3 cannot hold the 4 sink keys (--sinks)");
}

}  // namespace test_kv_eviction
