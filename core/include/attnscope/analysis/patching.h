// Activation patching on a clean/corrupt prompt pair (issue 32's definition), for decoder-only
// language models. LD is logit(T) − logit(T2) (or logit(T)) at position P, before any final
// soft-cap; LD_clean and LD_corrupt come from the two runs. Each score is
// (LD_patched − LD_corrupt) / (LD_clean − LD_corrupt) for the corrupt run with one activation
// taken from the clean run:
//   Heads   — head (l, h)'s output z_{l,h} (α·V before W_O, every position): [L, H];
//   Resid   — the residual entering block l at position p: [L, n];
//   AttnOut — what layer l's attention adds to the residual at p (after W_O, its bias and any
//             post-norm): [L, n];
//   MlpOut  — what layer l's MLP adds at p (after any post-norm): [L, n].
// A patch in layer l runs only layers l … L−1 again, from the corrupt run's held residual.
#pragma once

#include "attnscope/runtime/progress.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace attnscope {

class Model;

enum class PatchWhat { Heads, Resid, AttnOut, MlpOut };

struct PatchRequest {
    PatchWhat what = PatchWhat::Heads;
    std::int64_t token = 0;
    std::optional<std::int64_t> minus;
    std::int64_t position = -1;  // where LD is read; -1: the last position
    // Attribution patching (a linear approximation): score ≈ (a_clean − a_corrupt) · ∂LD/∂a at the
    // corrupt run, summed over the patched activation's elements, / (LD_clean − LD_corrupt): one
    // clean run and one corrupt run with its backward pass instead of a run per patch.
    bool attribution = false;
    Progress progress;  // (patches done, total); returning false throws Cancelled
};

struct PatchResult {
    int rows = 0, cols = 0;     // [L, H] or [L, n]
    std::vector<float> scores;  // rows × cols
    double ldClean = 0, ldCorrupt = 0;
    std::int64_t position = 0;
};

// Throws attnscope::Error (one line) for a model that is not a decoder-only language model (or
// streams its weights), inputs of different lengths, a token or position out of range, and when
// |LD_clean − LD_corrupt| < 1e-6 (the scores are then undefined).
PatchResult activationPatching(const Model& model, const std::vector<std::int64_t>& clean,
                               const std::vector<std::int64_t>& corrupt, const PatchRequest& request);

}  // namespace attnscope
