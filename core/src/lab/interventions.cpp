// Output change, head lists, re-runs and pruning by importance (see interventions.h).
#include "attnscope/lab/interventions.h"

#include "attnscope/runtime/error.h"
#include "attnscope/analysis/metrics.h"
#include "attnscope/attention/image_text.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

namespace attnscope {

namespace {

std::vector<double> softmax(const std::vector<float>& logits) {
    std::vector<double> p(logits.size());
    const double mx = logits.empty() ? 0.0 : *std::max_element(logits.begin(), logits.end());
    double sum = 0;
    for (std::size_t i = 0; i < logits.size(); ++i) sum += p[i] = std::exp(logits[i] - mx);
    for (double& v : p) v /= sum;
    return p;
}

std::vector<TokenProbability> topK(const std::vector<double>& p, int k, const Model* labels) {
    std::vector<std::int64_t> order(p.size());
    std::iota(order.begin(), order.end(), 0);
    k = std::min<int>(k, static_cast<int>(p.size()));
    std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](auto a, auto b) { return p[a] > p[b]; });
    std::vector<TokenProbability> out;
    for (int r = 0; r < k; ++r)
        out.push_back({order[r], labels ? labels->tokenLabels({order[r]})[0] : std::to_string(order[r]), p[order[r]]});
    return out;
}

int parseIndex(const std::string& text, const std::string& entry, const char* what) {
    std::size_t used = 0;
    int v = -1;
    try {
        v = std::stoi(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (text.empty() || used != text.size() || v < 0)
        throw Error(std::string(what) + " '" + entry + "': '" + text + "' is not a non-negative integer");
    return v;
}

std::vector<std::string> splitTrim(const std::string& text, char sep) {
    std::vector<std::string> out;
    std::string part;
    std::istringstream in(text);
    while (std::getline(in, part, sep)) {
        part.erase(0, part.find_first_not_of(" \t"));
        part.erase(part.find_last_not_of(" \t") + 1);
        out.push_back(part);
    }
    if (!text.empty() && text.back() == sep) out.push_back("");
    return out;
}

// 1 − cos(a, b) for two rows of width w, in double; two zero rows are identical.
double cosineDistance(const float* a, const float* b, int w) {
    double dot = 0, na = 0, nb = 0;
    for (int i = 0; i < w; ++i) {
        dot += static_cast<double>(a[i]) * b[i];
        na += static_cast<double>(a[i]) * a[i];
        nb += static_cast<double>(b[i]) * b[i];
    }
    if (na == 0 || nb == 0) return na == nb ? 0.0 : 1.0;
    return std::clamp(1.0 - dot / std::sqrt(na * nb), 0.0, 2.0);
}

void compareHidden(const Trace& a, const Trace& b, OutputChange& c) {
    const int w = a.finalHiddenWidth();
    if (w != b.finalHiddenWidth() || a.finalHidden().size() != b.finalHidden().size())
        throw Error("comparing hidden states of different models");
    c.kind = "hidden";
    const std::size_t n = a.finalHidden().size() / w;
    for (std::size_t t = 0; t < n; ++t) {
        const double dist = cosineDistance(a.finalHidden().data() + t * w, b.finalHidden().data() + t * w, w);
        c.cosineDistances.push_back(dist);
        c.meanCosineDistance += dist / static_cast<double>(n);
        if (c.mostChangedToken < 0 || dist > c.maxCosineDistance) {
            c.maxCosineDistance = dist;
            c.mostChangedToken = static_cast<int>(t);
        }
    }
    if (c.mostChangedToken >= 0 && static_cast<std::size_t>(c.mostChangedToken) < a.displayTokens().size())
        c.mostChangedLabel = a.displayTokens()[c.mostChangedToken];
    c.sameTop = c.maxCosineDistance <= 1e-6;
}

OutputChange compareOutputsLabelled(const Trace& a, const Trace& b, int k, const Model* model) {
    if (a.ids() != b.ids()) throw Error("comparing outputs needs two runs on the same input");
    OutputChange c;
    if (!a.nextTokenLogits().empty()) {
        if (a.nextTokenLogits().size() != b.nextTokenLogits().size())
            throw Error("comparing outputs of different models");
        c.kind = "next-token";
        const auto p = softmax(a.nextTokenLogits()), q = softmax(b.nextTokenLogits());
        c.kl = klDivergence(p, q);
        c.originalTop = topK(p, k, model);
        c.changedTop = topK(q, k, model);
        c.sameTop = c.originalTop.empty() || c.originalTop[0].id == c.changedTop[0].id;
    } else if (!a.classProbabilities().empty()) {
        if (a.classLabels() != b.classLabels()) throw Error("comparing outputs of different classifiers");
        c.kind = "class";
        c.classLabels = a.classLabels();
        c.originalProbabilities.assign(a.classProbabilities().begin(), a.classProbabilities().end());
        c.changedProbabilities.assign(b.classProbabilities().begin(), b.classProbabilities().end());
        c.kl = klDivergence(c.originalProbabilities, c.changedProbabilities);
        auto best = [](const std::vector<double>& v) { return std::max_element(v.begin(), v.end()) - v.begin(); };
        c.sameTop = best(c.originalProbabilities) == best(c.changedProbabilities);
    } else if (!a.outputTokens().empty() || !b.outputTokens().empty()) {
        c.kind = "sequence";
        c.originalOutput = a.outputTokens();
        c.changedOutput = b.outputTokens();
        const std::size_t common = std::min(a.outputIds().size(), b.outputIds().size());
        for (std::size_t i = 0; i < common; ++i) c.changedPositions += a.outputIds()[i] != b.outputIds()[i];
        c.changedPositions += static_cast<int>(std::max(a.outputIds().size(), b.outputIds().size()) - common);
        c.sameTop = c.changedPositions == 0;
        const auto& ta = a.targetLogProbs();
        const auto& tb = b.targetLogProbs();
        if (!ta.empty() && ta.size() == tb.size()) {
            c.originalTargetLogProbs.assign(ta.begin(), ta.end());
            c.changedTargetLogProbs.assign(tb.begin(), tb.end());
            for (std::size_t i = 0; i < ta.size(); ++i)
                c.meanLogProbChange += std::abs(static_cast<double>(tb[i]) - ta[i]) / static_cast<double>(ta.size());
        }
    } else if (traceImageText(a).present && traceImageText(b).present) {  // CLIP, SigLIP
        c.kind = "similarity";
        c.originalLogit = traceImageText(a).logit;
        c.changedLogit = traceImageText(b).logit;
    } else if (a.finalHiddenWidth() > 0 || b.finalHiddenWidth() > 0) {
        compareHidden(a, b, c);
    } else {
        c.kind = "none";
    }
    return c;
}

}  // namespace

double OutputChange::magnitude() const {
    if (kind == "sequence") {
        if (!originalTargetLogProbs.empty()) return meanLogProbChange;
        const std::size_t len = std::max(originalOutput.size(), changedOutput.size());
        return len ? static_cast<double>(changedPositions) / len : 0.0;
    }
    if (kind == "hidden") return meanCosineDistance;
    if (kind == "similarity") return std::abs(changedLogit - originalLogit);
    return kl;
}

std::vector<TokenProbability> nextTokenTop(const Trace& trace, const Model& model, int k) {
    if (trace.nextTokenLogits().empty()) return {};
    return topK(softmax(trace.nextTokenLogits()), k, &model);
}

OutputChange compareOutputs(const Trace& original, const Trace& changed, int topK) {
    return compareOutputsLabelled(original, changed, topK, nullptr);
}

std::vector<HeadRef> parseHeadList(const std::string& text) {
    std::vector<HeadRef> heads;
    for (const std::string& entry : splitTrim(text, ',')) {
        const auto parts = splitTrim(entry, ':');
        if (parts.size() != 2 && parts.size() != 3)
            throw Error("head '" + entry + "' is not LAYER:HEAD or BLOCK:LAYER:HEAD (e.g. 0:3,2:1)");
        HeadRef h;
        if (parts.size() == 3) {
            if (parts[0].empty()) throw Error("head '" + entry + "': the block name is empty");
            h.block = parts[0];
        }
        h.layer = parseIndex(parts[parts.size() - 2], entry, "head");
        h.head = parseIndex(parts.back(), entry, "head");
        heads.push_back(h);
    }
    if (heads.empty()) throw Error("no heads given (expected e.g. 0:3,2:1)");
    return heads;
}

std::vector<int> parseLayerList(const std::string& text) {
    std::vector<int> layers;
    for (const std::string& entry : splitTrim(text, ',')) layers.push_back(parseIndex(entry, entry, "layer"));
    if (layers.empty()) throw Error("no layers given (expected e.g. 0,2)");
    return layers;
}

void validateHeads(const Trace& trace, const std::vector<HeadRef>& heads) {
    for (const HeadRef& h : heads) {
        const std::string name =
                (h.block.empty() ? "" : h.block + ":") + std::to_string(h.layer) + ":" + std::to_string(h.head);
        bool matched = false;
        for (const BlockInfo& b : trace.blocks()) {
            if (!h.block.empty() && h.block != b.name) continue;
            if (h.layer >= b.layers)
                throw Error("head " + name + ": layer " + std::to_string(h.layer) + " is out of range for block '" +
                            b.name + "' (0.." + std::to_string(b.layers - 1) + ")");
            if (h.head >= b.heads)
                throw Error("head " + name + ": head " + std::to_string(h.head) + " is out of range for block '" +
                            b.name + "' (0.." + std::to_string(b.heads - 1) + ")");
            matched = true;
        }
        if (!matched) trace.blockIndex(h.block);  // throws, listing the blocks
    }
}

void validateLayers(const Trace& trace, const std::vector<int>& layers) {
    int most = 0;
    for (const BlockInfo& b : trace.blocks()) most = std::max(most, b.layers);
    for (int l : layers)
        if (l < 0 || l >= most)
            throw Error("layer " + std::to_string(l) + " is out of range (0.." + std::to_string(most - 1) + ")");
}

Rerun rerun(const Model& model, const Trace& original, const RunOptions& options, int topK) {
    if (!(options.temperature > 0) || !std::isfinite(options.temperature))
        throw Error("temperature must be a finite number > 0, got " + std::to_string(options.temperature));
    validateHeads(original, options.maskHeads);
    validateLayers(original, options.temperatureLayers);
    for (const LinearHead& h : options.linearHeads) validateHeads(original, {h.head});
    Rerun r;
    r.trace = model.rerun(original, options);
    r.change = compareOutputsLabelled(original, *r.trace, topK, &model);
    return r;
}

std::vector<HeadScore> rankHeads(const Model& model, const Trace& original, Importance importance,
                                 const Progress& progress) {
    std::vector<HeadScore> scores;
    long long total = 0, done = 0;
    for (const BlockInfo& b : original.blocks()) total += static_cast<long long>(b.layers) * b.heads;
    for (int bi = 0; bi < static_cast<int>(original.blocks().size()); ++bi) {
        const BlockInfo& b = original.blocks()[bi];
        for (int l = 0; l < b.layers; ++l)
            for (int h = 0; h < b.heads; ++h) {
                HeadScore s{{b.name, l, h}, 0.0};
                if (importance == Importance::Entropy) {
                    s.score = -meanRowEntropy(original.map(bi, l, h));
                } else {
                    RunOptions options;
                    options.maskHeads = {s.head};
                    s.score = compareOutputsLabelled(original, *model.rerun(original, options), 1, nullptr).magnitude();
                }
                scores.push_back(s);
                if (progress && !progress(++done, total)) throw Cancelled();
            }
    }
    std::stable_sort(scores.begin(), scores.end(),
                     [](const HeadScore& a, const HeadScore& b) { return a.score > b.score; });
    return scores;
}

PruneResult pruneByImportance(const Model& model, const Trace& original, Importance importance, int count,
                              bool leastImportant, const RunOptions& base, int topK) {
    PruneResult r;
    r.ranking = rankHeads(model, original, importance, base.progress);
    if (count < 0 || count > static_cast<int>(r.ranking.size()))
        throw Error("cannot mask " + std::to_string(count) + " heads: the model has " +
                    std::to_string(r.ranking.size()));
    for (int i = 0; i < count; ++i) r.masked.push_back(r.ranking[leastImportant ? r.ranking.size() - 1 - i : i].head);
    RunOptions options = base;
    options.progress = {};
    options.maskHeads.insert(options.maskHeads.end(), r.masked.begin(), r.masked.end());
    Rerun run = rerun(model, original, options, topK);
    r.trace = run.trace;
    r.change = run.change;
    return r;
}

}  // namespace attnscope
