#include "vocab_labels.h"

#include "attnscope/runtime/error.h"
#include "io/json_util.h"

#include <fstream>

namespace attnscope {

namespace {

void put(std::vector<std::string>& byId, const std::filesystem::path& file, const std::string& token,
         const nlohmann::json& id) {
    if (!id.is_number_integer() || id.get<std::int64_t>() < 0 || id.get<std::int64_t>() > (1 << 24))
        throw Error(file.string() + ": token '" + token + "' has an invalid id " + id.dump());
    const auto i = id.get<std::size_t>();
    if (byId.size() <= i) byId.resize(i + 1);
    byId[i] = token;
}

}  // namespace

VocabLabels VocabLabels::fromFolder(const std::filesystem::path& folder) {
    VocabLabels v;
    const auto tokenizerJson = folder / "tokenizer.json";
    const auto vocabJson = folder / "vocab.json";
    const auto vocabTxt = folder / "vocab.txt";
    if (std::filesystem::exists(tokenizerJson)) {
        const auto json = readJsonObject(tokenizerJson);
        const auto model = json.find("model");
        if (model != json.end() && model->is_object() && model->contains("vocab")) {
            const auto& vocab = model->at("vocab");
            if (vocab.is_object()) {
                for (auto it = vocab.begin(); it != vocab.end(); ++it) put(v.byId_, tokenizerJson, it.key(), it.value());
            } else if (vocab.is_array()) {  // Unigram: [[piece, score], ...], id = position
                for (std::size_t i = 0; i < vocab.size(); ++i)
                    if (vocab[i].is_array() && !vocab[i].empty() && vocab[i][0].is_string())
                        put(v.byId_, tokenizerJson, vocab[i][0].get<std::string>(), i);
            }
        }
        if (auto added = json.find("added_tokens"); added != json.end() && added->is_array())
            for (const auto& t : *added)
                if (t.is_object() && t.contains("content") && t["content"].is_string() && t.contains("id"))
                    put(v.byId_, tokenizerJson, t["content"].get<std::string>(), t["id"]);
    } else if (std::filesystem::exists(vocabJson)) {
        const auto json = readJsonObject(vocabJson);
        for (auto it = json.begin(); it != json.end(); ++it) put(v.byId_, vocabJson, it.key(), it.value());
    } else if (std::filesystem::exists(vocabTxt)) {  // WordPiece (BERT): one token per line, id = line
        std::ifstream in(vocabTxt, std::ios::binary);
        if (!in) throw Error(vocabTxt.string() + ": cannot be read");
        std::string line;
        while (std::getline(in, line)) {
            if (!line.empty() && line.back() == '\r') line.pop_back();
            v.byId_.push_back(line);
        }
    }
    return v;
}

std::vector<std::string> VocabLabels::labels(const std::vector<std::int64_t>& ids, std::int64_t vocabSize) const {
    std::vector<std::string> out;
    out.reserve(ids.size());
    for (auto id : ids) {
        if (id < 0 || id >= vocabSize)
            throw Error("token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                        std::to_string(vocabSize) + ")");
        const auto i = static_cast<std::size_t>(id);
        out.push_back(i < byId_.size() && !byId_[i].empty() ? byId_[i] : std::to_string(id));
    }
    return out;
}

void checkIds(const std::vector<std::int64_t>& ids, std::int64_t vocabSize, std::int64_t maxPositions) {
    if (ids.empty()) throw Error("the input is empty: give at least one token id");
    if (static_cast<std::int64_t>(ids.size()) > maxPositions)
        throw Error("the input has " + std::to_string(ids.size()) + " tokens but the model has only " +
                    std::to_string(maxPositions) + " positions");
    for (std::size_t i = 0; i < ids.size(); ++i)
        if (ids[i] < 0 || ids[i] >= vocabSize)
            throw Error("token id " + std::to_string(ids[i]) + " at position " + std::to_string(i) +
                        " is outside the vocabulary [0, " + std::to_string(vocabSize) + ")");
}

}  // namespace attnscope
