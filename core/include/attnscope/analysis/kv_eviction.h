// KV-eviction what-if (issue 33): after the prompt's forward, each layer's kv heads keep a budget
// of the prompt's keys chosen by a policy that scores them from attention, the others are removed
// from every later step, N tokens are generated greedily, and the run is compared with the full
// cache. Kept keys keep their original positions (no re-indexing). Eviction acts after the
// prompt's forward, so the first generated token always agrees.
//
// Policies, over the prompt of n positions (α the prompt's maps, as the model ran them):
//   H2O:       s_j = Σ_{i ≥ j} α_ij over the prompt's query rows, averaged over the query heads
//              of the kv group; keep the last R prompt positions plus the top B − R by s among
//              the positions before them.
//   SnapKV:    window = the last W prompt queries; s_j = Σ_{i in window} α_ij for j before the
//              window, averaged over the group's query heads, then average-pooled along j with
//              kernel K (stride 1, zero padding K/2, divided by K); keep the window plus the top
//              B − W by pooled s. The window's own keys have no score (NaN).
//   Streaming: keep the first S and the last B − S prompt positions (score 1 kept, 0 evicted).
// Ties in "top" go to the earlier position. A budget of n or more keeps every key.
#pragma once

#include "attnscope/attention/run_options.h"
#include "attnscope/runtime/progress.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace attnscope {

class Model;
class Trace;

enum class EvictionPolicy { H2O, SnapKV, Streaming };

// "h2o", "snapkv", "streaming"; the parser throws attnscope::Error naming the choices.
std::string evictionPolicyName(EvictionPolicy policy);
EvictionPolicy parseEvictionPolicy(const std::string& name);

struct EvictionOptions {
    EvictionPolicy policy = EvictionPolicy::H2O;
    int budget = 0;   // B: prompt keys each kv head keeps (>= 1)
    int recent = -1;  // H2O's R; -1: ⌊B/2⌋
    int window = 32;  // SnapKV's W (>= 1, at most the prompt)
    int kernel = 5;   // SnapKV's K (odd, >= 1)
    int sinks = 4;    // Streaming's S (>= 0)
    int newTokens = 1;
    RunOptions run;     // the forwards' options (inside temperature, masked heads, capture dtype)
    Progress progress;  // (steps done, 2 · newTokens)
};

// Throws attnscope::Error with one line naming the option when the options cannot apply to a
// prompt of n positions: a budget that cannot hold the forced keys (H2O's recent, SnapKV's
// window, Streaming's sinks), a window longer than the prompt, an even or non-positive kernel,
// negative counts, newTokens < 1.
void checkEvictionOptions(const EvictionOptions& options, std::int64_t n);

// The policy's scores and kept keys from a trace of the prompt, row-major [layers, kvHeads, n].
struct EvictionSelection {
    int layers = 0, kvHeads = 0;
    std::int64_t n = 0;
    std::vector<float> scores;
    std::vector<std::uint8_t> kept;  // 1 kept, 0 evicted
};
EvictionSelection selectKeys(const Trace& prompt, const EvictionOptions& options);

struct EvictionResult {
    EvictionSelection selection;
    // The prompt's trace, whose maps the policy scored (its captures are shared with the cache's).
    std::shared_ptr<const Trace> prompt;
    std::vector<std::int64_t> tokensFull, tokensEvicted;
    // Per step t: KL(p_full ‖ p_evicted) in nats of the next-token distributions, each run on
    // its own prefix (step 0 is 0: the prompt's forward is shared).
    std::vector<double> klPerStep;
    double agreement = 0;      // share of steps whose tokens are equal
    int firstDifference = -1;  // first step whose tokens differ; -1 when none
};

// The what-if on a decoder-only model with a key/value cache (kv_cache.h); throws
// attnscope::Error for other models, bad options (checkEvictionOptions) or ids the model
// refuses; attnscope::Cancelled when progress returns false.
EvictionResult evictionWhatIf(const Model& model, const std::vector<std::int64_t>& prompt,
                              const EvictionOptions& options);

}  // namespace attnscope
