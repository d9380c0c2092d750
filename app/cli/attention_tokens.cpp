// tokens.json's description of a run for `attention` (attention_tokens.h).
#include "attention_tokens.h"

#include "attnscope/attention/window_padding.h"
#include "attnscope/models/model.h"

#include <algorithm>

namespace attnscope::cli {

nlohmann::json tokensJson(const Trace& trace, const Model& model) {
    nlohmann::json tokens = {{"ids", trace.ids()}, {"tokens", trace.tokens()}};
    // Encoder-decoder: "source" labels the columns of cross.npy, "target" its rows (the decoder's
    // inputs, starting with the start symbol); "output" is the decoded text without marks.
    for (const auto& block : trace.blocks())
        if (block.name == "cross") {
            tokens["source"] = block.keyTokens;
            tokens["target"] = block.queryTokens;
            tokens["output"] = trace.outputTokens();
            tokens["output_ids"] = trace.outputIds();
        }
    if (!trace.classLabels().empty()) {
        const auto& p = trace.classProbabilities();
        const auto best = std::max_element(p.begin(), p.end()) - p.begin();
        tokens["label"] = trace.classLabels()[best];
        tokens["labels"] = trace.classLabels();
        tokens["probabilities"] = p;
    }
    if (const TokenPredictions& p = trace.tokenPredictions(); p.k > 0) {  // a masked-LM head's guesses
        const std::vector<std::string> labels = model.tokenLabels(p.ids);
        nlohmann::json rows = nlohmann::json::array();
        for (std::size_t i = 0; i < p.ids.size(); i += static_cast<std::size_t>(p.k)) {
            const auto from = static_cast<std::ptrdiff_t>(i), to = from + p.k;
            rows.push_back({{"ids", std::vector<std::int64_t>(p.ids.begin() + from, p.ids.begin() + to)},
                            {"tokens", std::vector<std::string>(labels.begin() + from, labels.begin() + to)},
                            {"probabilities",
                             std::vector<float>(p.probabilities.begin() + from, p.probabilities.begin() + to)}});
        }
        tokens["predictions"] = rows;
    }
    for (const auto& block : trace.blocks()) {
        // Swin: the columns are the tokens; "padding_keys" names the window padding left out.
        const auto tokenKeys = block.keyTokens.end() - paddingKeys(block);
        tokens["blocks"][block.name] = {{"kind", kindName(block.kind)},
                                        {"queries", block.queryTokens},
                                        {"keys", std::vector<std::string>(block.keyTokens.begin(), tokenKeys)}};
        if (paddingKeys(block) > 0)
            tokens["blocks"][block.name]["padding_keys"] = std::vector<std::string>(tokenKeys, block.keyTokens.end());
    }
    return tokens;
}

}  // namespace attnscope::cli
