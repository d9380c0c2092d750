#include "symbols.h"

#include "attnscope/io/atomic_file.h"
#include "attnscope/runtime/error.h"
#include "config.h"
#include "task_file.h"
#include "io/json_util.h"
#include "tokenizer/vocabulary.h"

#include <sstream>

namespace attnscope::builtin {

namespace {

// One UTF-8 character starting at text[i] (for messages; invalid bytes come out one at a time).
std::string characterAt(const std::string& text, std::size_t i) {
    std::size_t len = 1;
    while (i + len < text.size() && (static_cast<unsigned char>(text[i + len]) & 0xC0) == 0x80) ++len;
    return text.substr(i, len);
}

}  // namespace

Symbols Symbols::forTask(BuiltinTask task) {
    Symbols s;
    s.task_ = task;
    if (task == BuiltinTask::Reverse) {
        s.byId_ = {"<pad>", "<s>", "</s>"};
        for (const char* c = kReverseAlphabet; *c; ++c) s.byId_.emplace_back(1, *c);
    } else {
        s.byId_ = {"<pad>", "<cls>"};
        for (const auto& w : sentimentWords()) s.byId_.push_back(w);
    }
    for (std::size_t i = 0; i < s.byId_.size(); ++i) s.ids_[s.byId_[i]] = static_cast<std::int64_t>(i);
    return s;
}

Symbols Symbols::fromUnits(BuiltinTask task, const std::vector<std::string>& units, bool perCharacter) {
    Symbols s = forTask(task);
    s.byId_.resize(task == BuiltinTask::Reverse ? 3 : 2);
    s.byId_.insert(s.byId_.end(), units.begin(), units.end());
    s.ids_.clear();
    for (std::size_t i = 0; i < s.byId_.size(); ++i) s.ids_[s.byId_[i]] = static_cast<std::int64_t>(i);
    s.fromFile_ = true;
    s.perCharacter_ = perCharacter;
    return s;
}

Symbols Symbols::read(const std::filesystem::path& folder, BuiltinTask task, int vocabSize, bool fromFile,
                      bool perCharacter) {
    const auto file = folder / "vocab.json";
    const auto json = tok::readVocabJson(file);  // the entries are checked here, stricter than a tokenizer's
    Symbols s;
    s.task_ = task;
    s.fromFile_ = fromFile;
    s.perCharacter_ = fromFile ? perCharacter : task == BuiltinTask::Reverse;
    s.byId_.assign(static_cast<std::size_t>(vocabSize), "");
    for (auto it = json.begin(); it != json.end(); ++it) {
        const auto& v = it.value();
        if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() >= vocabSize)
            throw Error(file.string() + ": symbol '" + it.key() + "' has id " + jsonExcerpt(v) + ", outside [0, " +
                        std::to_string(vocabSize) + ") (vocab_size in config.json)");
        auto& slot = s.byId_[v.get<std::size_t>()];
        if (!slot.empty())
            throw Error(file.string() + ": id " + jsonExcerpt(v) + " is given to both '" + slot + "' and '" + it.key() +
                        "'");
        slot = it.key();
        s.ids_[it.key()] = v.get<std::int64_t>();
    }
    for (std::size_t i = 0; i < s.byId_.size(); ++i)
        if (s.byId_[i].empty()) throw Error(file.string() + ": no symbol has id " + std::to_string(i));
    const Symbols expected = forTask(task);
    const int specials = task == BuiltinTask::Reverse ? 3 : 2;
    for (int i = 0; i < specials; ++i)
        if (s.byId_[i] != expected.byId_[i])
            throw Error(file.string() + ": id " + std::to_string(i) + " must be '" + expected.byId_[i] + "', found '" +
                        s.byId_[i] + "'");
    return s;
}

void Symbols::write(const std::filesystem::path& folder) const {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < byId_.size(); ++i) j[byId_[i]] = i;
    writeFileAtomically(folder / "vocab.json", j.dump(1) + "\n");
}

std::int64_t Symbols::id(const std::string& symbol) const {
    const auto it = ids_.find(symbol);
    return it == ids_.end() ? -1 : it->second;
}

std::vector<std::string> Symbols::labels(const std::vector<std::int64_t>& ids) const {
    std::vector<std::string> out;
    for (auto id : ids) {
        if (id < 0 || id >= size())
            throw Error("token id " + std::to_string(id) + " is outside the vocabulary [0, " + std::to_string(size()) +
                        ")");
        out.push_back(byId_[static_cast<std::size_t>(id)]);
    }
    return out;
}

std::vector<std::int64_t> Symbols::encodeFileUnits(const std::string& text, int maxLength) const {
    const std::int64_t specials = task_ == BuiltinTask::Reverse ? 3 : 2;
    std::vector<std::int64_t> ids;
    if (task_ != BuiltinTask::Reverse) ids.push_back(kCls);
    for (const std::string& u : splitUnits(text, perCharacter_)) {
        const auto id = this->id(u);
        if (id < specials)
            throw Error("text: " + std::string(perCharacter_ ? "character '" : "word '") + u +
                        "' is not in this model's vocabulary (built from its training file)");
        ids.push_back(id);
    }
    const auto units = static_cast<int>(ids.size()) - (task_ != BuiltinTask::Reverse);
    if (units == 0) throw Error("text: empty");
    if (static_cast<int>(ids.size()) > maxLength)
        throw Error("text: " + std::to_string(units) + (perCharacter_ ? " characters" : " words") +
                    ", but this model reads at most " + std::to_string(maxLength - (ids.size() - units)));
    return ids;
}

std::vector<std::int64_t> Symbols::encode(const std::string& text, int maxLength) const {
    if (fromFile_) return encodeFileUnits(text, maxLength);
    std::vector<std::int64_t> ids;
    if (task_ == BuiltinTask::Reverse) {
        for (std::size_t i = 0; i < text.size();) {
            const std::string c = characterAt(text, i);
            const auto id = c.size() == 1 ? this->id(c) : -1;
            if (id < 3)  // unknown, or a special's name cannot be typed as one character anyway
                throw Error("text: symbol '" + c + "' at position " + std::to_string(ids.size()) +
                            " is not in this model's alphabet (digits 0-9 and lowercase letters a-z)");
            ids.push_back(id);
            i += c.size();
        }
        if (ids.empty()) throw Error("text: empty; give 1 to " + std::to_string(maxLength) + " symbols from 0-9 a-z");
        if (static_cast<int>(ids.size()) > maxLength)
            throw Error("text: " + std::to_string(ids.size()) + " symbols, but this model reads at most " +
                        std::to_string(maxLength));
        return ids;
    }
    std::string cleaned;
    for (char c : text) {
        if (std::string(".,!?;:\"").find(c) != std::string::npos) c = ' ';
        cleaned += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    }
    ids.push_back(kCls);
    std::istringstream words(cleaned);
    std::string word;
    while (words >> word) {
        const auto id = this->id(word);
        if (id < 2) {
            std::string known;
            for (std::size_t i = 2; i < byId_.size(); ++i) known += (i > 2 ? " " : "") + byId_[i];
            throw Error("text: word '" + word + "' is not in this model's vocabulary (it knows: " + known + ")");
        }
        ids.push_back(id);
    }
    if (ids.size() == 1) throw Error("text: no words; give a short English sentence such as 'the movie was not bad'");
    if (static_cast<int>(ids.size()) > maxLength)
        throw Error("text: " + std::to_string(ids.size() - 1) + " words, but this model reads at most " +
                    std::to_string(maxLength - 1));
    return ids;
}

}  // namespace attnscope::builtin
