#include "terms_output.h"

#include "attnscope/io/npy.h"
#include "attnscope/runtime/error.h"

namespace attnscope::cli {

void requireScoreTerms(const ModelInfo& info, const std::string& what) {
    if (!info.scoreTerms)
        throw Error(
                what + " needs a model with disentangled attention (DeBERTa v2/v3, model_type deberta-v2); this is " +
                (info.family.empty() ? std::string("another kind of model") : "a " + info.family + " model"));
}

std::string writeScoreTerms(const ScoreTerms& terms, const std::filesystem::path& file, nlohmann::json& tokens) {
    if (terms.empty()) throw Error("--terms: the run recorded no score terms");
    const std::vector<std::int64_t> shape = {terms.layers, terms.heads, ScoreTerms::kTerms, terms.queries, terms.keys};
    NpyWriter npy(file, shape);
    npy.append(terms.values.data(), terms.values.size());
    npy.finish();
    for (int t = 0; t < ScoreTerms::kTerms; ++t) tokens["terms"].push_back(scoreTermName(t));
    std::string text;
    for (const std::int64_t s : shape) text += (text.empty() ? "[" : ", ") + std::to_string(s);
    return text + "]";
}

}  // namespace attnscope::cli
