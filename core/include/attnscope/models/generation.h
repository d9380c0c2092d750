// Generation for decoder-only language models: N new tokens after a prompt, greedy or sampled,
// and the Trace of the whole sequence (prompt + generated) for the maps of every step.
//
// Two temperatures live in AttnScope and they are different things:
//   SamplingOptions::temperature divides the next-token logits before sampling (which token is
//     chosen); it never touches attention.
//   MapOptions::temperature / RunOptions::temperature divide attention logits (what a map shows,
//     or what the model computes inside its softmax).
// Names, CLI options (--sample-temperature vs --temperature) and the GUI keep them apart.
#pragma once

#include "attnscope/attention/run_options.h"
#include "attnscope/runtime/progress.h"

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace attnscope {

class Model;
class Trace;

// How the next token is chosen from the next-token logits.
struct SamplingOptions {
    bool sample = false;       // false: greedy (argmax; the lowest id wins a tie)
    double temperature = 1.0;  // sampling temperature (> 0, finite): logits / temperature
    int topK = 0;              // keep the K most likely tokens; 0 = all
    double topP = 1.0;         // nucleus: the smallest set of most likely tokens whose mass >= topP, in (0, 1]
    std::uint64_t seed = 0;    // the same seed, model and prompt give the same tokens on every platform
};

// Throws attnscope::Error naming the field when a value is out of range: temperature not finite
// and > 0, topK < 0, topP outside (0, 1].
void validateSampling(const SamplingOptions& options);

// The distribution sampling draws from, over the whole vocabulary (double, sums to 1): softmax of
// logits / temperature, then top-k, then top-p (the order Hugging Face's generate applies them),
// the tokens left renormalised and every other token exactly 0. Ties at the top-k / top-p
// boundary are broken by the lower id. Greedy options give a one-hot at the argmax.
std::vector<double> samplingDistribution(const std::vector<float>& logits, const SamplingOptions& options);

// One draw from samplingDistribution with a uniform number u in [0, 1): the first id whose
// cumulative probability exceeds u (ids in ascending order). Greedy returns the argmax.
std::int64_t chooseToken(const std::vector<float>& logits, const SamplingOptions& options, double u);

struct GenerateOptions {
    int tokens = 1;  // how many new tokens, >= 1; prompt + tokens must fit the model's positions
    SamplingOptions sampling;
    RunOptions run;  // applied to every forward (capture dtype, inside-model temperature, masks)
    // A generation replayed (a workspace file's saved ids): when not empty, step s takes
    // forced[s] instead of choosing, so the maps and step outputs are those of that generation
    // whatever the sampling would pick now. Its size must equal tokens; ids must be in the vocabulary.
    std::vector<std::int64_t> forced;
    int topOutputs = 5;  // StepOutput::top keeps this many tokens (>= 0)
    // (tokens generated, tokens) after each step; returning false stops with attnscope::Cancelled.
    Progress progress;
    // Decoder-only families: run the prompt once and each new token against a key/value cache
    // (the same maps, logits and tokens as full forwards, to rounding). false: one full forward
    // per step, the reference the cache is tested against. Options a cache cannot honour
    // (knockouts, recorded residuals) fall back to full forwards.
    bool cache = true;
};

// What the model gave at one step, from that step's next-token logits.
struct StepOutput {
    // The most likely next tokens under the model's own distribution (softmax of the logits,
    // no sampling temperature), most likely first; ties by the lower id.
    std::vector<std::pair<std::int64_t, double>> top;
    double chosenProbability = 0;    // the chosen id's probability under that distribution
    double samplingProbability = 0;  // ... and under samplingDistribution (greedy: 1 at the argmax)
};

struct Generation {
    std::vector<std::int64_t> prompt;     // the prompt ids as given
    std::vector<std::int64_t> generated;  // the new ids, in order
    std::vector<StepOutput> steps;        // steps[s]: the output that chose generated[s]
    // One forward over prompt + generated. For a causal decoder row p + s - 1 (p = prompt length)
    // is the query that chose generated[s], over keys 0 .. p + s - 1: step s's map is the leading
    // (p + s) × (p + s) part of this trace's maps (prefixTrace(*trace, p + s)).
    std::shared_ptr<const Trace> trace;
    bool cached = false;  // the key/value cache ran (false: one full forward per step)
};

// Generates options.tokens ids after prompt: with the key/value cache the prompt runs once and
// each step one row per layer; without it (options.cache false, or a model that has none) one
// full forward per token. Either way each step's maps are those of a plain forward over the
// sequence so far. Throws attnscope::Error for
// models that are not decoder-only language models (encoder-decoders, encoders, image models),
// an empty prompt, tokens < 1, a sequence longer than the model's positions, or bad sampling
// options; attnscope::Cancelled when progress returns false.
Generation generate(const Model& model, const std::vector<std::int64_t>& prompt, const GenerateOptions& options);

// The trace of the first `length` positions of a causal decoder's trace: Q, K, masks and
// position terms cut to the prefix, shared with the original (no copy of the tensors). For a
// causal model its maps equal those of a forward over the prefix (each position sees only the
// positions before it), so step s of a Generation is prefixTrace(*g.trace, p + s).
// lastQueryOnly keeps only the prefix's last query row: maps of 1 × length, what step s's query
// (row p + s - 1) attends to over the prompt and the tokens generated before (the causal mask
// aligns the row with the last key, metrics.h). The prefix has no next-token logits. Throws
// attnscope::Error for a length outside 1..n or a trace whose blocks are not all causal
// self-attention over its ids.
std::shared_ptr<const Trace> prefixTrace(const Trace& trace, int length, bool lastQueryOnly = false);

}  // namespace attnscope
