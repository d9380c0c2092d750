#include "model_text.h"

#include "attnscope/runtime/error.h"

namespace attnscope {

std::vector<std::int64_t> encodeModelText(const Tokenizer* tokenizer, const std::string& text, const ModelInfo& info) {
    if (!tokenizer)
        throw Error(info.family + " model at " + info.path.string() +
                    " has no tokenizer (tokenizer.json, vocab.json + merges.txt or vocab.txt); give token ids instead");
    if (text.empty()) throw Error("the text is empty: give at least one character");
    auto ids = tokenizer->encode(text).ids;
    if (ids.empty()) throw Error("the text gives no tokens with " + tokenizer->origin());
    return ids;
}

std::vector<std::string> displayLabels(const Tokenizer* tokenizer, const std::vector<std::int64_t>& ids,
                                       const std::vector<std::string>& raw) {
    if (!tokenizer) return raw;
    std::vector<std::string> out;
    out.reserve(ids.size());
    for (std::size_t i = 0; i < ids.size(); ++i) {
        if (tokenizer->idToToken(ids[i]))
            out.push_back(tokenizer->displayToken(ids[i]));
        else
            out.push_back(i < raw.size() ? raw[i] : std::to_string(ids[i]));
    }
    return out;
}

}  // namespace attnscope
