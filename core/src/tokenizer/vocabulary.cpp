#include "vocabulary.h"

#include "attnscope/runtime/error.h"
#include "io/json_util.h"
#include "io/text_lines.h"
#include "decoding.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace attnscope::tok {

std::int64_t tokenIdLimit(std::uintmax_t fileBytes) {
    const auto bytes = static_cast<std::int64_t>(std::min<std::uintmax_t>(fileBytes, Vocabulary::kMaxId));
    return std::clamp(bytes, Vocabulary::kAlwaysAllowedId, Vocabulary::kMaxId);
}

std::string tokenIdLimitError(std::int64_t id, std::int64_t limit) {
    std::string s = "id " + std::to_string(id) + ", ";
    if (id < 0) return s + "below 0";
    s += "above the limit " + std::to_string(limit);
    if (limit > Vocabulary::kAlwaysAllowedId && limit < Vocabulary::kMaxId) s += " (the file's size in bytes)";
    return s;
}

void Vocabulary::add(const std::string& token, std::int64_t id, const std::string& where) {
    // Checked before the id -> token table grows for it (8 bytes per id).
    if (id < 0 || id > idLimit_) throw Error(where + ": token '" + token + "' has " + tokenIdLimitError(id, idLimit_));
    auto it = ids_.find(token);
    const std::string* stored;
    if (it != ids_.end()) {
        it->second = id;
        stored = &*std::find_if(storage_.begin(), storage_.end(), [&](const std::string& s) { return s == token; });
    } else {
        storage_.push_back(token);
        stored = &storage_.back();
        ids_.emplace(std::string_view(*stored), id);
    }
    const auto i = static_cast<std::size_t>(id);
    if (byId_.size() <= i) byId_.resize(i + 1, nullptr);
    byId_[i] = stored;
}

Vocabulary Vocabulary::fromJsonObject(const nlohmann::json& j, const std::string& where, std::int64_t idLimit) {
    if (!j.is_object()) throw Error(where + ": 'vocab' must be an object {token: id}");
    Vocabulary v(idLimit);
    v.ids_.reserve(j.size());
    for (auto it = j.begin(); it != j.end(); ++it) {
        if (!it.value().is_number_integer())
            throw Error(where + ": token '" + it.key() + "' has an invalid id " + jsonExcerpt(it.value()));
        v.add(it.key(), it.value().get<std::int64_t>(), where);
    }
    return v;
}

nlohmann::json readVocabJson(const std::filesystem::path& file) { return readJsonObject(file); }

std::vector<std::string> readUtf8Lines(const std::filesystem::path& file) {
    std::vector<std::string> lines = readTextLines(file);
    for (std::size_t n = 0; n < lines.size(); ++n) {
        std::size_t bad = 0;
        if (!isValidUtf8(lines[n], &bad))
            throw Error(file.string() + ": line " + std::to_string(n + 1) + " is not valid UTF-8 (byte " +
                        std::to_string(bad + 1) + " of the line)");
    }
    return lines;
}

nlohmann::json readVocabTxt(const std::filesystem::path& file) {
    nlohmann::json vocab = nlohmann::json::object();
    std::int64_t id = 0;
    for (const std::string& line : readUtf8Lines(file)) {
        if (!line.empty() && !vocab.contains(line)) vocab[line] = id;
        ++id;
    }
    return vocab;
}

}  // namespace attnscope::tok
