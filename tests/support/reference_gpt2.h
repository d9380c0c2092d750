// An independent GPT-2 forward for tests: plain loops in double precision over the fixture's
// float weights, written from the GPT-2 definition (no LibTorch, nothing shared with core).
#pragma once

#include "gpt2_fixture.h"

#include <utility>
#include <vector>

namespace attnscope::testing {

struct Gpt2Reference {
    // scores[l][h][i * n + j] = q_i·k_j / √d before masking and softmax (j <= i only meaningful)
    std::vector<std::vector<std::vector<double>>> scores;
    std::vector<std::vector<std::vector<double>>> probs;  // same layout, softmax over j <= i
    std::vector<double> nextTokenLogits;                  // [vocab], from the last position
    // q[l][h][i * d + c], k likewise: the head's query and key vectors (unscaled)
    std::vector<std::vector<std::vector<double>>> q, k;
    // Hooks for the logit lens and DLA: residuals[l][i] the stream entering block l (then the
    // final one, before ln_f); headOut[l][h][i] head h's context through its rows of c_proj;
    // attnBias[l] c_proj's bias; mlpOut[l][i] the MLP's output.
    std::vector<std::vector<std::vector<double>>> residuals, mlpOut;
    std::vector<std::vector<std::vector<std::vector<double>>>> headOut;
    std::vector<std::vector<double>> attnBias;
    // v[l][h][j * d + c]: the head's value vectors x̃_j W_V^h + b_V^h (x̃ = ln_1 of the layer input)
    std::vector<std::vector<std::vector<double>>> v;
};

// What the model is asked to change inside its forward pass.
struct ReferenceRun {
    double temperature = 1.0;                      // inside the softmax of the chosen layers
    std::vector<int> temperatureLayers;            // empty = every layer
    std::vector<std::pair<int, int>> maskedHeads;  // (layer, head): output zeroed before c_proj
};

Gpt2Reference referenceGpt2(const Gpt2Checkpoint& checkpoint, const std::vector<long long>& ids);
// probs are then the maps the changed model used (softmax(scores / T) in the chosen layers).
Gpt2Reference referenceGpt2(const Gpt2Checkpoint& checkpoint, const std::vector<long long>& ids,
                            const ReferenceRun& run);

// softmax over j <= i of scores / temperature (causal), row-major n×n with zeros above the diagonal.
std::vector<double> causalSoftmax(const std::vector<double>& scores, int n, double temperature);

}  // namespace attnscope::testing
