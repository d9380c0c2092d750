// Token ids typed by the user: "3, 1 4,1" -> {3, 1, 4, 1}. Plain functions, testable without a GUI.
#pragma once

#include <QString>

#include <memory>

#include <cstdint>
#include <vector>

struct TokenIdsParse {
    std::vector<std::int64_t> ids;
    QString error;  // empty on success; otherwise one sentence for the user
    bool ok() const { return error.isEmpty(); }
};

// Comma- and/or whitespace-separated decimal ids, by core's rules (attnscope::parseTokenIds, the
// CLI's --ids): its message for a malformed entry. vocabSize > 0 also checks each id is in
// [0, vocabSize); maxCount > 0 bounds how many ids there may be (the model's positions).
TokenIdsParse parseTokenIds(const QString& text, int vocabSize = 0, int maxCount = 0);

// "0 1 2 3" for a list of ids, the form the ids field shows.
QString formatTokenIds(const std::vector<std::int64_t>& ids);

namespace attnscope {
class Model;
}

// The model's input from what the user typed: token ids when asIds, else the text through the
// model's tokenizer (Model::encodeText). Throws attnscope::Error naming the problem (a bad id,
// an unknown symbol, no tokenizer). Runs on worker threads.
std::vector<std::int64_t> encodeInput(const attnscope::Model& model, const QString& text, bool asIds);

// The decoder's forced input from what the user typed in the target box: token ids (used as
// given, starting with the decoder start token) when asIds, else the target text through
// Model::encodeTarget. Throws attnscope::Error naming the problem. Runs on worker threads.
std::vector<std::int64_t> encodeTargetInput(const attnscope::Model& model, const QString& text, bool asIds);
