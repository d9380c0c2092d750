#include "attnscope/analysis/needle.h"

#include "attnscope/attention/map_rows.h"
#include "attnscope/attention/trace.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"
#include "attnscope/tokenizer/tokenizer.h"
#include "models/kv_cache.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>

namespace attnscope {

namespace {

std::string numberText(double v) {
    std::string s = std::to_string(v);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
}

}  // namespace

void checkNeedleOptions(const NeedleOptions& o) {
    if (o.needle.empty()) throw Error("niah: the needle is empty");
    if (o.question.empty()) throw Error("niah: the question is empty");
    if (o.newTokens < 1) throw Error("--max-new-tokens must be >= 1, got " + std::to_string(o.newTokens));
    if (o.lengths.empty()) throw Error("--lengths: no context length given");
    if (o.depths.empty()) throw Error("--depths: no depth given");
    const auto needle = static_cast<long long>(o.needle.size()), hay = static_cast<long long>(o.haystack.size());
    for (int L : o.lengths) {
        if (L <= needle)
            throw Error("--lengths: " + std::to_string(L) + " leaves no room beside the needle's " +
                        std::to_string(needle) + " ids");
        if (L - needle > hay)
            throw Error("--lengths: " + std::to_string(L) + " needs " + std::to_string(L - needle) +
                        " haystack ids, the haystack has " + std::to_string(hay));
    }
    for (double d : o.depths)
        if (!std::isfinite(d) || d < 0 || d > 1) throw Error("--depths: " + numberText(d) + " is outside [0, 1]");
}

std::vector<std::int64_t> needleContext(const NeedleOptions& o, int length, double depth, std::int64_t& needleStart) {
    const std::int64_t filler = length - static_cast<std::int64_t>(o.needle.size());
    needleStart = static_cast<std::int64_t>(std::floor(depth * static_cast<double>(filler)));
    std::vector<std::int64_t> ids(o.haystack.begin(), o.haystack.begin() + needleStart);
    ids.insert(ids.end(), o.needle.begin(), o.needle.end());
    ids.insert(ids.end(), o.haystack.begin() + needleStart, o.haystack.begin() + filler);
    ids.insert(ids.end(), o.question.begin(), o.question.end());
    return ids;
}

void addRetrievalScores(const Trace& trace, std::int64_t p, const std::vector<std::int64_t>& generated,
                        std::int64_t needleStart, std::int64_t needleLength, std::vector<double>& score) {
    const BlockInfo& b = trace.blocks().at(0);
    const auto T = static_cast<std::int64_t>(generated.size());
    if (T == 0) return;
    const std::vector<std::int64_t>& ids = trace.ids();
    const double step = 1.0 / static_cast<double>(needleLength);
    for (int l = 0; l < b.layers; ++l)
        for (int h = 0; h < b.heads; ++h) {
            double& s = score[static_cast<std::size_t>(l * b.heads + h)];
            forEachRowBlock(
                    trace, 0, l, h, MapOptions{}, 1,
                    [&](int, const MapRowBlock& r) {
                        const int w = r.colEnd - r.colBegin;
                        for (int i = 0; i < r.rows && w > 0; ++i) {
                            const float* row = r.values + static_cast<std::ptrdiff_t>(i) * w;
                            const std::int64_t j = r.colBegin + (std::max_element(row, row + w) - row);  // first max
                            const std::int64_t t = r.rowBegin + i - (p - 1);
                            if (j >= needleStart && j < needleStart + needleLength &&
                                ids[std::size_t(j)] == generated[std::size_t(t)])
                                s += step;
                        }
                    },
                    nullptr, static_cast<int>(p - 1), static_cast<int>(p - 1 + T));
        }
}

bool containsRun(const std::vector<std::int64_t>& ids, const std::vector<std::int64_t>& part) {
    return !part.empty() && std::search(ids.begin(), ids.end(), part.begin(), part.end()) != ids.end();
}

NeedleResult needleScan(const Model& model, const NeedleOptions& o) {
    checkNeedleOptions(o);
    const ModelInfo& info = model.info();
    const auto longest = *std::max_element(o.lengths.begin(), o.lengths.end());
    const long long total = static_cast<long long>(longest) + static_cast<long long>(o.question.size()) + o.newTokens;
    if (info.maxPositions > 0 && total > info.maxPositions)
        throw Error("niah: a context of " + std::to_string(longest) + " ids + the question + " +
                    std::to_string(o.newTokens) + " new tokens exceeds the model's " +
                    std::to_string(info.maxPositions) + " positions");
    NeedleResult result;
    result.layers = info.layers;
    result.heads = info.heads;
    result.retrieval.assign(static_cast<std::size_t>(info.layers * info.heads), 0.0);
    const long long runs = static_cast<long long>(o.lengths.size() * o.depths.size());
    const auto& answer = o.answer.empty() ? o.needle : o.answer;
    for (int L : o.lengths)
        for (double d : o.depths) {
            if (o.progress && !o.progress(static_cast<long long>(result.runs.size()), runs)) throw Cancelled();
            NeedleRun r;
            r.length = L;
            r.depth = d;
            const std::vector<std::int64_t> context = needleContext(o, L, d, r.needleStart);
            const auto p = static_cast<std::int64_t>(context.size());
            auto session = startKvSession(model, o.run, p, p + o.newTokens);
            if (!session)
                throw Error("niah needs a decoder-only language model with a key/value cache under these options; " +
                            info.family + " has none here");
            std::vector<float> logits = session->append(context);
            for (int t = 0; t < o.newTokens; ++t) {
                const auto next =
                        static_cast<std::int64_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
                r.generated.push_back(next);
                if ((o.endToken && next == *o.endToken) || t + 1 == o.newTokens) break;
                logits = session->append({next});
            }
            addRetrievalScores(*session->trace(), p, r.generated, r.needleStart,
                               static_cast<std::int64_t>(o.needle.size()), result.retrieval);
            r.success = containsRun(r.generated, answer);
            result.runs.push_back(std::move(r));
        }
    for (double& v : result.retrieval) v /= static_cast<double>(runs);
    if (o.progress && !o.progress(runs, runs)) throw Cancelled();
    return result;
}

std::vector<std::int64_t> needlePieceIds(const Model& model, const std::string& text, const std::string& what) {
    if (text.empty()) throw Error(what + ": the text is empty");
    const std::vector<std::int64_t> ids =
            model.tokenizer() ? model.tokenizer()->encode(text, false).ids : model.encodeText(text);
    if (ids.empty()) throw Error(what + ": the text gives no tokens");
    return ids;
}

std::optional<std::int64_t> endTokenOf(const Model& model) {
    std::ifstream in(model.info().path / "config.json");
    if (!in) return std::nullopt;
    const nlohmann::json c = nlohmann::json::parse(in, nullptr, false);
    if (c.is_discarded() || !c.is_object() || !c.contains("eos_token_id")) return std::nullopt;
    const nlohmann::json& e = c["eos_token_id"];
    if (e.is_number_integer()) return e.get<std::int64_t>();
    if (e.is_array() && !e.empty() && e[0].is_number_integer()) return e[0].get<std::int64_t>();
    return std::nullopt;
}

}  // namespace attnscope
