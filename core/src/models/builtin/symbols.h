// The vocabularies of the built-in models: specials first, then the task's symbols.
//   reverse:   <pad> <s> </s> 0-9 a-z      (one symbol per character)
//   sentiment: <pad> <cls> and the grammar's words (one symbol per word)
// Stored as vocab.json {"symbol": id} next to the weights.
#pragma once

#include "attnscope/models/builtin.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace attnscope::builtin {

inline constexpr std::int64_t kPad = 0;
inline constexpr std::int64_t kStart = 1;  // reverse: <s>, the decoder's first input
inline constexpr std::int64_t kEnd = 2;    // reverse: </s>, the decoder's last output
inline constexpr std::int64_t kCls = 1;    // sentiment: <cls>, prepended; its state is classified

class Symbols {
public:
    static Symbols forTask(BuiltinTask task);
    // A vocabulary built from a task file (task_file.h): the specials of `task` (Reverse: the
    // encoder-decoder's, Sentiment: the classifier's), then `units` split per character or word.
    static Symbols fromUnits(BuiltinTask task, const std::vector<std::string>& units, bool perCharacter);
    // Reads folder/vocab.json; it must hold exactly ids 0..vocabSize-1 and the task's specials.
    // fromFile: a vocabulary of a task file, split per character or per word.
    static Symbols read(const std::filesystem::path& folder, BuiltinTask task, int vocabSize, bool fromFile = false,
                        bool perCharacter = false);
    void write(const std::filesystem::path& folder) const;

    int size() const { return static_cast<int>(byId_.size()); }
    std::int64_t id(const std::string& symbol) const;  // -1 when absent
    const std::string& label(std::int64_t id) const { return byId_.at(static_cast<std::size_t>(id)); }
    std::vector<std::string> labels(const std::vector<std::int64_t>& ids) const;  // throws outside

    // Splits text per character (reverse) or per word (sentiment: lowercased, . , ! ? ; : and
    // quotes dropped; <cls> prepended). maxLength counts the ids returned. Throws attnscope::Error
    // naming an unknown symbol, an empty text or one too long.
    std::vector<std::int64_t> encode(const std::string& text, int maxLength) const;

private:
    std::vector<std::int64_t> encodeFileUnits(const std::string& text, int maxLength) const;

    BuiltinTask task_ = BuiltinTask::Reverse;
    bool fromFile_ = false;
    bool perCharacter_ = true;
    std::vector<std::string> byId_;
    std::map<std::string, std::int64_t> ids_;
};

}  // namespace attnscope::builtin
