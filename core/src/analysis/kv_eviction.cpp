#include "attnscope/analysis/kv_eviction.h"

#include "attnscope/attention/map_rows.h"
#include "attnscope/attention/trace.h"
#include "attnscope/models/generation.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"
#include "models/kv_cache.h"

#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <thread>

namespace attnscope {

std::string evictionPolicyName(EvictionPolicy policy) {
    switch (policy) {
        case EvictionPolicy::H2O: return "h2o";
        case EvictionPolicy::SnapKV: return "snapkv";
        case EvictionPolicy::Streaming: return "streaming";
    }
    return "";
}

EvictionPolicy parseEvictionPolicy(const std::string& name) {
    for (auto p : {EvictionPolicy::H2O, EvictionPolicy::SnapKV, EvictionPolicy::Streaming})
        if (evictionPolicyName(p) == name) return p;
    throw Error("--policy: '" + name + "' is not a policy (h2o, snapkv or streaming)");
}

namespace {

int recentOf(const EvictionOptions& o) { return o.recent >= 0 ? o.recent : o.budget / 2; }

// Column sums over query rows [from, n) of each head's map, averaged over each kv group's
// query heads: [kvHeads][n] per layer.
std::vector<std::vector<double>> groupColumnSums(const Trace& trace, int layer, std::int64_t from) {
    const BlockInfo& b = trace.blocks().at(0);
    const int H = b.heads, G = b.kvHeads > 0 ? b.kvHeads : b.heads, per = H / G;
    const std::int64_t n = static_cast<std::int64_t>(b.keyTokens.size());
    const int workers = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    std::vector<std::vector<double>> sums(static_cast<std::size_t>(G), std::vector<double>(std::size_t(n), 0.0));
    std::vector<std::vector<double>> part(static_cast<std::size_t>(workers));  // one per worker, summed after
    for (int h = 0; h < H; ++h) {
        for (auto& p : part) p.assign(std::size_t(n), 0.0);
        forEachRowBlock(
                trace, 0, layer, h, MapOptions{}, workers,
                [&](int worker, const MapRowBlock& r) {
                    std::vector<double>& s = part[std::size_t(worker)];
                    const int w = r.colEnd - r.colBegin;
                    for (int i = 0; i < r.rows; ++i)
                        for (int j = 0; j < w; ++j) s[std::size_t(r.colBegin + j)] += r.values[i * w + j];
                },
                nullptr, static_cast<int>(from), static_cast<int>(n));
        std::vector<double>& s = sums[static_cast<std::size_t>(h / per)];
        for (const auto& p : part)
            for (std::size_t j = 0; j < p.size(); ++j) s[j] += p[j];
    }
    for (auto& s : sums)
        for (double& v : s) v /= per;
    return sums;
}

// The `count` positions in [lo, hi) with the largest scores (the earlier on ties), marked kept.
void keepTop(const std::vector<double>& score, std::int64_t lo, std::int64_t hi, std::int64_t count,
             std::uint8_t* kept) {
    std::vector<std::int64_t> order(static_cast<std::size_t>(std::max<std::int64_t>(0, hi - lo)));
    std::iota(order.begin(), order.end(), lo);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::int64_t a, std::int64_t b) { return score[std::size_t(a)] > score[std::size_t(b)]; });
    for (std::int64_t i = 0; i < std::min<std::int64_t>(count, std::int64_t(order.size())); ++i)
        kept[order[std::size_t(i)]] = 1;
}

// SnapKV's pooling of s over positions [0, len): mean over the kernel with zeros beyond the ends.
std::vector<double> pooled(const std::vector<double>& s, std::int64_t len, int kernel) {
    std::vector<double> out(s.size(), std::numeric_limits<double>::quiet_NaN());
    const std::int64_t half = kernel / 2;
    for (std::int64_t j = 0; j < len; ++j) {
        double sum = 0;
        for (std::int64_t t = j - half; t <= j + half; ++t)
            if (t >= 0 && t < len) sum += s[std::size_t(t)];
        out[std::size_t(j)] = sum / kernel;
    }
    return out;
}

// One kv head's scores and kept keys (both n long) under the policy.
void selectHead(const EvictionOptions& o, const std::vector<double>& sums, std::int64_t n, float* scores,
                std::uint8_t* kept) {
    const std::int64_t B = o.budget;
    if (o.policy == EvictionPolicy::Streaming) {
        for (std::int64_t j = 0; j < n; ++j) kept[j] = j < o.sinks || j >= n - (B - o.sinks) || B >= n;
        for (std::int64_t j = 0; j < n; ++j) scores[j] = kept[j] ? 1.0f : 0.0f;
        return;
    }
    if (o.policy == EvictionPolicy::H2O) {
        const std::int64_t R = std::min<std::int64_t>(recentOf(o), n);
        for (std::int64_t j = 0; j < n; ++j) scores[j] = static_cast<float>(sums[std::size_t(j)]);
        for (std::int64_t j = n - R; j < n; ++j) kept[j] = 1;
        keepTop(sums, 0, n - R, B - R, kept);
        return;
    }
    const std::int64_t W = o.window, before = n - W;
    const std::vector<double> s = pooled(sums, before, o.kernel);
    for (std::int64_t j = 0; j < n; ++j) scores[j] = static_cast<float>(s[std::size_t(j)]);  // the window: NaN
    for (std::int64_t j = before; j < n; ++j) kept[j] = 1;
    keepTop(s, 0, before, B - W, kept);
}

// The next-token distribution's log-probabilities (double).
std::vector<double> logSoftmax(const std::vector<float>& logits) {
    const double top = *std::max_element(logits.begin(), logits.end());
    double sum = 0;
    for (float l : logits) sum += std::exp(double(l) - top);
    const double lse = top + std::log(sum);
    std::vector<double> out(logits.size());
    for (std::size_t i = 0; i < logits.size(); ++i) out[i] = double(logits[i]) - lse;
    return out;
}

double klDivergence(const std::vector<float>& full, const std::vector<float>& evicted) {
    const std::vector<double> p = logSoftmax(full), q = logSoftmax(evicted);
    double kl = 0;
    for (std::size_t i = 0; i < p.size(); ++i)
        if (std::isfinite(p[i])) kl += std::exp(p[i]) * (p[i] - q[i]);
    return std::max(0.0, kl);
}

std::unique_ptr<KvSession> sessionFor(const Model& model, const EvictionOptions& o, std::int64_t n) {
    auto session = startKvSession(model, o.run, n, n + o.newTokens);
    if (!session)
        throw Error("KV eviction needs a decoder-only language model with a key/value cache under these options; " +
                    model.info().family + " has none here");
    return session;
}

}  // namespace

void checkEvictionOptions(const EvictionOptions& o, std::int64_t n) {
    const auto refuse = [](const std::string& what) { throw Error(what); };
    if (o.budget < 1) refuse("--budget must be >= 1, got " + std::to_string(o.budget));
    if (o.newTokens < 1) refuse("--max-new-tokens must be >= 1, got " + std::to_string(o.newTokens));
    if (n < 1) refuse("the prompt is empty");
    switch (o.policy) {
        case EvictionPolicy::H2O:
            if (o.recent < -1) refuse("--recent must be >= 0, got " + std::to_string(o.recent));
            if (recentOf(o) > o.budget)
                refuse("--budget " + std::to_string(o.budget) + " cannot hold the " + std::to_string(recentOf(o)) +
                       " recent keys (--recent)");
            break;
        case EvictionPolicy::SnapKV:
            if (o.window < 1) refuse("--window must be >= 1, got " + std::to_string(o.window));
            if (o.kernel < 1 || o.kernel % 2 == 0)
                refuse("--kernel must be an odd number >= 1, got " + std::to_string(o.kernel));
            if (o.window > n)
                refuse("--window " + std::to_string(o.window) + " is longer than the prompt's " + std::to_string(n) +
                       " positions");
            if (o.window > o.budget)
                refuse("--budget " + std::to_string(o.budget) + " cannot hold the " + std::to_string(o.window) +
                       " window keys (--window)");
            break;
        case EvictionPolicy::Streaming:
            if (o.sinks < 0) refuse("--sinks must be >= 0, got " + std::to_string(o.sinks));
            if (o.sinks > o.budget)
                refuse("--budget " + std::to_string(o.budget) + " cannot hold the " + std::to_string(o.sinks) +
                       " sink keys (--sinks)");
            break;
    }
}

EvictionSelection selectKeys(const Trace& prompt, const EvictionOptions& o) {
    const BlockInfo& b = prompt.blocks().at(0);
    EvictionSelection sel;
    sel.layers = b.layers;
    sel.kvHeads = b.kvHeads > 0 ? b.kvHeads : b.heads;
    sel.n = static_cast<std::int64_t>(b.keyTokens.size());
    checkEvictionOptions(o, sel.n);
    const std::size_t per = static_cast<std::size_t>(sel.n);
    sel.scores.assign(static_cast<std::size_t>(sel.layers * sel.kvHeads) * per, 0.0f);
    sel.kept.assign(sel.scores.size(), 0);
    const std::int64_t from = o.policy == EvictionPolicy::SnapKV ? sel.n - o.window : 0;
    for (int l = 0; l < sel.layers; ++l) {
        const auto sums = o.policy == EvictionPolicy::Streaming
                                  ? std::vector<std::vector<double>>(std::size_t(sel.kvHeads))
                                  : groupColumnSums(prompt, l, from);
        for (int g = 0; g < sel.kvHeads; ++g) {
            const std::size_t at = (static_cast<std::size_t>(l * sel.kvHeads + g)) * per;
            selectHead(o, sums[std::size_t(g)], sel.n, sel.scores.data() + at, sel.kept.data() + at);
        }
    }
    return sel;
}

EvictionResult evictionWhatIf(const Model& model, const std::vector<std::int64_t>& prompt, const EvictionOptions& o) {
    const std::int64_t n = static_cast<std::int64_t>(prompt.size());
    checkEvictionOptions(o, n);
    const ModelInfo& info = model.info();
    if (info.maxPositions > 0 && n + o.newTokens > info.maxPositions)
        throw Error("evict: " + std::to_string(n) + " prompt ids + " + std::to_string(o.newTokens) +
                    " new tokens exceed the model's " + std::to_string(info.maxPositions) + " positions");
    EvictionResult result;
    const long long total = 2LL * o.newTokens;
    // Greedy steps on a session; `each` sees step t's logits before the token is appended.
    const auto run = [&](KvSession& session, std::vector<float> logits, std::vector<std::int64_t>& tokens,
                         std::vector<std::vector<float>>& steps, long long done) {
        for (int t = 0; t < o.newTokens; ++t) {
            if (o.progress && !o.progress(done + t, total)) throw Cancelled();
            const std::int64_t next = chooseToken(logits, SamplingOptions{}, 0.0);
            tokens.push_back(next);
            steps.push_back(logits);
            if (t + 1 < o.newTokens) logits = session.append({next});
        }
    };
    std::vector<std::vector<float>> fullSteps, evictedSteps;
    // The prompt runs once; the evicted run continues from a copy of its cache.
    auto full = sessionFor(model, o, n);
    const std::vector<float> first = full->append(prompt);
    result.prompt = full->trace();
    result.selection = selectKeys(*result.prompt, o);
    auto evicted = full->clone();
    run(*full, first, result.tokensFull, fullSteps, 0);
    full.reset();
    {
        c10::InferenceMode guard;
        const EvictionSelection& s = result.selection;
        std::vector<at::Tensor> keep;
        for (int l = 0; l < s.layers; ++l)
            keep.push_back(at::from_blob(const_cast<std::uint8_t*>(s.kept.data()) + std::size_t(l) * s.kvHeads * n,
                                         {s.kvHeads, n}, at::TensorOptions().dtype(at::kBool))
                                   .clone());
        evicted->keepKeys(keep);
    }
    run(*evicted, first, result.tokensEvicted, evictedSteps, o.newTokens);
    int same = 0;
    for (int t = 0; t < o.newTokens; ++t) {
        result.klPerStep.push_back(klDivergence(fullSteps[std::size_t(t)], evictedSteps[std::size_t(t)]));
        if (result.tokensFull[std::size_t(t)] == result.tokensEvicted[std::size_t(t)])
            ++same;
        else if (result.firstDifference < 0)
            result.firstDifference = t;
    }
    result.agreement = static_cast<double>(same) / o.newTokens;
    if (o.progress && !o.progress(total, total)) throw Cancelled();
    return result;
}

}  // namespace attnscope
