#include "attnscope/models/generation.h"

#include "attention/rng.h"
#include "attention/trace_impl.h"
#include "kv_cache.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

namespace attnscope {

void validateSampling(const SamplingOptions& o) {
    if (!(o.temperature > 0) || !std::isfinite(o.temperature))
        throw Error("sampling temperature " + std::to_string(o.temperature) + " must be a finite number > 0");
    if (o.topK < 0) throw Error("top-k " + std::to_string(o.topK) + " must be >= 0 (0 keeps every token)");
    if (!(o.topP > 0 && o.topP <= 1)) throw Error("top-p " + std::to_string(o.topP) + " must be in (0, 1]");
}

namespace {

std::int64_t argmax(const std::vector<float>& logits) {
    return std::max_element(logits.begin(), logits.end()) - logits.begin();  // the first maximum
}

// The model's distribution at a step (softmax in double), its top entries and the chosen id's share.
StepOutput stepOutput(const std::vector<float>& logits, std::int64_t chosen, const GenerateOptions& o) {
    const double top = *std::max_element(logits.begin(), logits.end());
    std::vector<double> p(logits.size());
    double sum = 0;
    for (std::size_t i = 0; i < logits.size(); ++i) sum += p[i] = std::exp(double(logits[i]) - top);
    for (double& x : p) x /= sum;
    std::vector<std::int64_t> order(p.size());
    std::iota(order.begin(), order.end(), std::int64_t(0));
    const auto k = std::min<std::size_t>(std::size_t(o.topOutputs), order.size());
    std::partial_sort(
            order.begin(), order.begin() + std::ptrdiff_t(k), order.end(), [&](std::int64_t a, std::int64_t b) {
                return p[std::size_t(a)] > p[std::size_t(b)] || (p[std::size_t(a)] == p[std::size_t(b)] && a < b);
            });
    StepOutput out;
    for (std::size_t i = 0; i < k; ++i) out.top.emplace_back(order[i], p[std::size_t(order[i])]);
    out.chosenProbability = p[std::size_t(chosen)];
    out.samplingProbability = samplingDistribution(logits, o.sampling)[std::size_t(chosen)];
    return out;
}

}  // namespace

std::vector<double> samplingDistribution(const std::vector<float>& logits, const SamplingOptions& o) {
    validateSampling(o);
    if (logits.empty()) throw Error("sampling: the model gave no next-token logits");
    std::vector<double> p(logits.size(), 0.0);
    if (!o.sample) {
        p[static_cast<std::size_t>(argmax(logits))] = 1.0;
        return p;
    }
    // Softmax in double after subtracting the maximum, so no logit overflows.
    const double top = *std::max_element(logits.begin(), logits.end());
    double sum = 0;
    for (std::size_t i = 0; i < logits.size(); ++i) sum += p[i] = std::exp((double(logits[i]) - top) / o.temperature);
    for (double& v : p) v /= sum;

    // Most likely first, the lower id first among equals: the order top-k and top-p cut in.
    std::vector<std::size_t> order(p.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return p[a] > p[b]; });
    std::size_t keep = order.size();
    if (o.topK > 0) keep = std::min(keep, static_cast<std::size_t>(o.topK));
    if (o.topP < 1) {
        // Keep a token while the mass before it is below topP (so at least one is kept). The mass
        // is renormalised over the top-k survivors first, as HF's warpers see the filtered logits.
        double kept = 0;
        for (std::size_t r = 0; r < keep; ++r) kept += p[order[r]];
        double before = 0;
        std::size_t n = 0;
        while (n < keep && before < o.topP * kept) before += p[order[n++]];
        keep = n;
    }
    std::vector<double> out(p.size(), 0.0);
    double mass = 0;
    for (std::size_t r = 0; r < keep; ++r) mass += p[order[r]];
    for (std::size_t r = 0; r < keep; ++r) out[order[r]] = p[order[r]] / mass;
    return out;
}

std::int64_t chooseToken(const std::vector<float>& logits, const SamplingOptions& o, double u) {
    if (!o.sample) {
        validateSampling(o);
        if (logits.empty()) throw Error("sampling: the model gave no next-token logits");
        return argmax(logits);
    }
    const std::vector<double> p = samplingDistribution(logits, o);
    double cumulative = 0;
    std::int64_t last = -1;
    for (std::size_t i = 0; i < p.size(); ++i) {
        if (p[i] <= 0) continue;
        cumulative += p[i];
        last = static_cast<std::int64_t>(i);
        if (u < cumulative) return last;
    }
    return last;  // u within rounding of 1: the last token that has mass
}

Generation generate(const Model& model, const std::vector<std::int64_t>& prompt, const GenerateOptions& options) {
    const ModelInfo& info = model.info();
    if (info.encoderDecoder)
        throw Error(info.path.string() + ": generation is for decoder-only language models; " + info.family +
                    " is an encoder-decoder (it decodes its target itself)");
    if (info.imageInput)
        throw Error(info.path.string() + ": generation needs a language model, " + info.family + " takes images");
    if (prompt.empty()) throw Error("generate: the prompt is empty");
    if (options.tokens < 1)
        throw Error("generate: the number of new tokens must be >= 1, got " + std::to_string(options.tokens));
    validateSampling(options.sampling);
    const long long total = static_cast<long long>(prompt.size()) + options.tokens;
    if (info.maxPositions > 0 && total > info.maxPositions)
        throw Error("generate: " + std::to_string(prompt.size()) + " prompt ids + " + std::to_string(options.tokens) +
                    " new tokens exceed the model's " + std::to_string(info.maxPositions) + " positions");

    const bool replay = !options.forced.empty();
    if (replay && options.forced.size() != std::size_t(options.tokens))
        throw Error("generate: " + std::to_string(options.forced.size()) + " saved ids for " +
                    std::to_string(options.tokens) + " new tokens");
    if (options.topOutputs < 0) throw Error("generate: topOutputs must be >= 0");

    Generation g;
    g.prompt = prompt;
    std::vector<std::int64_t> ids = prompt;
    SplitMix rng(options.sampling.seed);
    // With a cache, the prompt runs once and each chosen token once more (the last one for the
    // trace's final row and logits); without, a forward over the whole sequence per step.
    const std::unique_ptr<KvSession> session =
            options.cache ? startKvSession(model, options.run, std::int64_t(prompt.size()), total) : nullptr;
    std::vector<float> cachedLogits;
    g.cached = session != nullptr;
    if (session) cachedLogits = session->append(prompt);
    for (int s = 0; s < options.tokens; ++s) {
        if (options.progress && !options.progress(s, options.tokens)) throw Cancelled();
        std::shared_ptr<const Trace> trace;
        if (!session) trace = model.forward(ids, options.run);
        const std::vector<float>& logits = session ? cachedLogits : trace->nextTokenLogits();
        if (logits.empty())
            throw Error(info.path.string() + ": " + info.family +
                        " gives no next-token logits; generation needs a language model head");
        // A draw per step even when greedy would not need one keeps the stream aligned per step.
        const double u = rng.uniform();
        const std::int64_t next = replay ? options.forced[std::size_t(s)] : chooseToken(logits, options.sampling, u);
        if (next < 0 || next >= std::int64_t(logits.size()))
            throw Error("generate: saved id " + std::to_string(next) + " at step " + std::to_string(s) +
                        " is outside the vocabulary of " + std::to_string(logits.size()));
        g.steps.push_back(stepOutput(logits, next, options));
        g.generated.push_back(next);
        ids.push_back(next);
        if (session) cachedLogits = session->append({next});
    }
    g.trace = session ? session->trace() : model.forward(ids, options.run);
    if (options.progress && !options.progress(options.tokens, options.tokens)) throw Cancelled();
    return g;
}

std::shared_ptr<const Trace> prefixTrace(const Trace& trace, int length, bool lastQueryOnly) {
    const Trace::Impl& src = trace.impl();
    const int n = static_cast<int>(src.ids.size());
    if (length < 1 || length > n)
        throw Error("prefix of " + std::to_string(length) + " positions: the trace has " + std::to_string(n));
    auto impl = std::make_unique<Trace::Impl>();
    const auto cut = [&](const std::vector<std::string>& v) {
        return v.empty() ? v : std::vector<std::string>(v.begin(), v.begin() + length);
    };
    impl->ids.assign(src.ids.begin(), src.ids.begin() + length);
    impl->tokens = cut(src.tokens);
    impl->displayTokens = cut(src.displayTokens);
    impl->device = src.device;
    for (std::size_t b = 0; b < src.infos.size(); ++b) {
        BlockInfo info = src.infos[b];
        if (!info.causal || info.queryTokens.size() != info.keyTokens.size() ||
            static_cast<int>(info.queryTokens.size()) != n)
            throw Error("prefix of a trace: block '" + info.name + "' is not causal self-attention over the input");
        const int first = lastQueryOnly ? length - 1 : 0, rows = length - first;
        info.queryTokens =
                std::vector<std::string>(info.queryTokens.begin() + first, info.queryTokens.begin() + length);
        info.keyTokens = cut(info.keyTokens);
        BlockCapture block;
        for (const LayerCapture& layer : src.blocks[b].layers) {
            LayerCapture c = layer;  // tensors are shared; narrow() makes views
            c.q = layer.q.narrow(1, first, rows);
            c.k = layer.k.narrow(1, 0, length);
            if (c.mask.keyAllowed.defined()) c.mask.keyAllowed = layer.mask.keyAllowed.narrow(0, 0, length);
            if (c.mask.blocked.defined()) c.mask.blocked = layer.mask.blocked.narrow(0, 0, length).narrow(1, 0, length);
            if (c.score.bias.defined()) c.score.bias = layer.score.bias.narrow(1, first, rows).narrow(2, 0, length);
            block.layers.push_back(std::move(c));
        }
        impl->infos.push_back(std::move(info));
        impl->blocks.push_back(std::move(block));
    }
    return std::make_shared<const Trace>(std::move(impl));
}

}  // namespace attnscope
