// Retrieval heads and needle-in-a-haystack (issue 33; Wu et al. 2024's retrieval score, the
// NIAH convention of context building). For each context length L and needle depth d:
//   - the context is the first L − |needle| haystack ids with the needle inserted after
//     ⌊d · (L − |needle|)⌋ of them, followed by the question;
//   - generation is greedy with the key/value cache for N tokens, stopping early only at the
//     model's end token;
//   - at each generated step t with token g_t, each head takes j* = the argmax over all keys of
//     the row that predicts g_t (the earlier key on ties); if j* lies in the needle's span and
//     token[j*] = g_t, the head's score grows by 1/|needle|;
//   - a run succeeds when the answer's ids (the needle's, if no answer is given) appear
//     contiguously in the generated ids.
// The retrieval score of a head is its mean over all runs.
#pragma once

#include "attnscope/attention/run_options.h"
#include "attnscope/runtime/progress.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attnscope {

class Model;
class Trace;

struct NeedleOptions {
    std::vector<std::int64_t> haystack, needle, question;
    std::vector<std::int64_t> answer;  // empty: the needle
    std::vector<int> lengths;          // context lengths L (> |needle|, at most |needle| + |haystack|)
    std::vector<double> depths;        // in [0, 1]
    int newTokens = 16;
    std::optional<std::int64_t> endToken;  // stops a run after it (endTokenOf gives the model's)
    RunOptions run;
    Progress progress;  // (runs done, runs)
};

// The context of length L at depth d (the question appended), and where the needle starts in it.
std::vector<std::int64_t> needleContext(const NeedleOptions& options, int length, double depth,
                                        std::int64_t& needleStart);

// Throws attnscope::Error with one line naming the option for a bad grid: no lengths or depths, a
// length not above the needle's or beyond what the haystack holds, a depth outside [0, 1] (or not
// finite), an empty needle or question, newTokens < 1.
void checkNeedleOptions(const NeedleOptions& options);

// The retrieval score's part from one generation, added into score [layers · heads] (row-major):
// `trace` holds the context and the generated ids but possibly the last (row p + t − 1 predicts
// generated[t]), p the context's length.
void addRetrievalScores(const Trace& trace, std::int64_t p, const std::vector<std::int64_t>& generated,
                        std::int64_t needleStart, std::int64_t needleLength, std::vector<double>& score);

// Whether `part` appears contiguously in `ids` (an empty part never does).
bool containsRun(const std::vector<std::int64_t>& ids, const std::vector<std::int64_t>& part);

struct NeedleRun {
    int length = 0;
    double depth = 0;
    bool success = false;
    std::int64_t needleStart = 0;
    std::vector<std::int64_t> generated;
};

struct NeedleResult {
    int layers = 0, heads = 0;
    std::vector<double> retrieval;  // [layers · heads], the mean over runs
    std::vector<NeedleRun> runs;    // lengths outer, depths inner, in the options' order
};

// The scan on a decoder-only language model with a key/value cache; throws attnscope::Error for
// other models, a bad grid or contexts longer than the model's positions; attnscope::Cancelled
// when progress returns false.
NeedleResult needleScan(const Model& model, const NeedleOptions& options);

// A piece of a context (haystack, needle, question, answer) as ids: the text through the model's
// tokenizer with no special tokens (the pieces are joined into one context), or Model::encodeText
// for models without one. Throws attnscope::Error naming `what` for an empty text or one that
// gives no tokens.
std::vector<std::int64_t> needlePieceIds(const Model& model, const std::string& text, const std::string& what);

// The end token the model's config.json names (eos_token_id: a number, or the first of a list),
// nullopt when it names none.
std::optional<std::int64_t> endTokenOf(const Model& model);

}  // namespace attnscope
