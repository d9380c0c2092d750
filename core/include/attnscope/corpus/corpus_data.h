// A corpus file: one example per line, as plain text or as JSONL objects, turned into model
// inputs. Bad lines (not JSON, missing or mistyped fields, more tokens than allowed) are reported
// with their 1-based line numbers and either skipped or refused, as the caller chooses.
#pragma once

#include "attnscope/io/input.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace attnscope {

class Model;

// One line of the file as written (before the model sees it).
//   text lines:  the whole line is `text`.
//   JSONL:       {"text": "...", "label": "positive" | 1, "target": "...", "ids": [3, 17]}: text
//                or ids (exactly one), the rest optional; other fields are ignored.
struct CorpusLine {
    int line = 0;  // 1-based line number in the file
    std::string text;
    std::vector<std::int64_t> ids;      // JSONL "ids" instead of text
    std::optional<std::string> label;   // class name, or an integer class index as its digits
    std::optional<std::string> target;  // encoder-decoders: the expected output text
};

struct BadLine {
    int line = 0;
    std::string reason;  // "not JSON (...)", "no \"text\" or \"ids\"", "41 tokens, more than --max-tokens 32"
};

enum class BadLinePolicy { Refuse, Skip };
enum class CorpusFormat { Auto, Text, Jsonl };  // Auto: JSONL for .jsonl/.json files, else text

struct CorpusReadOptions {
    CorpusFormat format = CorpusFormat::Auto;
    BadLinePolicy badLines = BadLinePolicy::Refuse;
};

struct CorpusFile {
    std::filesystem::path path;
    std::vector<CorpusLine> lines;  // the good lines, in file order
    std::vector<BadLine> bad;       // only with BadLinePolicy::Skip
};

// Reads the file. Blank lines are ignored (neither examples nor bad lines). With Refuse, the first
// bad line throws attnscope::Error "FILE:LINE: reason". Throws when the file cannot be read.
CorpusFile readCorpus(const std::filesystem::path& path, const CorpusReadOptions& options = {});

// A line made ready for the model.
struct CorpusExample {
    int index = 0;                        // position among the prepared examples, 0-based: what shards split
    int line = 0;                         // line number in the file
    TextInput input;                      // ids (and, with a target, the forced decoder ids in targetIds)
    std::string text;                     // the text as given (empty for ids lines)
    int label = -1;                       // class index, -1 without a label
    std::vector<std::int64_t> targetIds;  // encoder-decoders with a target: Model::encodeTarget
};

struct PrepareOptions {
    int maxTokens = 0;  // more tokens than this is a bad line; 0: the model's maximum positions
    BadLinePolicy badLines = BadLinePolicy::Refuse;
    // Class names of the model's output (Trace::classLabels); a label must be one of them or an
    // index into them. Empty: a line with a label is bad ("the model is no classifier").
    std::vector<std::string> classLabels;
};

// Encodes every line through the model (text → ids, target → decoder ids) and checks lengths and
// labels. Bad lines are added to file.bad (Skip) or throw "FILE:LINE: reason" (Refuse).
std::vector<CorpusExample> prepareCorpus(const Model& model, CorpusFile& file, const PrepareOptions& options);

}  // namespace attnscope
