// A user's task for the built-in architectures (train --task FILE): JSONL, one example per line,
// either {"text": ..., "label": ...} (classification: the encoder classifier, one class per
// distinct label in order of first appearance) or {"source": ..., "target": ...} (sequence to
// sequence: the encoder-decoder). Blank lines are skipped; every other line must be a JSON object
// of the file's one kind with non-empty string values (a label may also be an integer), else
// attnscope::Error "FILE:LINE: ..." names the line.
#pragma once

#include "attnscope/models/builtin.h"

#include <filesystem>
#include <string>
#include <vector>

namespace attnscope::builtin {

struct FileExample {
    std::string input;   // text or source
    std::string output;  // label or target
    int line = 0;
};

struct FileTask {
    bool seq2seq = false;
    bool perCharacter = false;         // the vocabulary's units: characters or words
    std::vector<FileExample> train;    // examples whose input does not hash held out (isHeldOut)
    std::vector<FileExample> heldOut;  // the rest; at least one (the last example when none hashes out)
    std::vector<std::string> labels;   // classification: class names
    std::vector<std::string> symbols;  // the vocabulary's units in order of first appearance
};

// vocabulary: "char", "word" or "auto" (words for classification, characters for seq2seq).
FileTask readTaskFile(const std::filesystem::path& file, const std::string& vocabulary);

// The units of a text as the vocabulary splits it: UTF-8 characters (spaces included), or words
// (lowercased, . , ! ? ; : and quotes dropped, split at whitespace).
std::vector<std::string> splitUnits(const std::string& text, bool perCharacter);

}  // namespace attnscope::builtin
