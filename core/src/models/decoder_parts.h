// Small pieces the GPT-NeoX, GPT-J, GPT-Neo and Phi families (gpt_neox.cpp, gptj.cpp, gpt_neo.cpp,
// phi.cpp) share: how many head dimensions rotate, and the phrases ModelInfo::notes uses for it.
#pragma once

#include "io/json_util.h"
#include "io/weights.h"

#include <ATen/ATen.h>

#include <initializer_list>
#include <string>
#include <vector>

namespace attnscope {

// Rotary dimensions per head from a fraction in (0, 1], as Hugging Face computes them:
// int(headDim · fraction). The fraction is rope_parameters.partial_rotary_factor when the newer
// layout has it, else the first of `keys` the config has (GPT-NeoX: rotary_pct before
// partial_rotary_factor), else `fallback`. Fails naming the key when the fraction is outside
// (0, 1] or gives an odd or zero count (the rotated pairs need an even number).
int partialRotaryDims(const JsonConfig& config, int headDim, std::initializer_list<const char*> keys, double fallback);

// "rotary on 25% of dims (16 of 64)" or "rotary on all 64 dims"; "interleaved pairs" appended for GPT-J.
std::string rotaryNote(int rotaryDim, int headDim, bool interleaved = false);

// "1, 3, 5, …": the first three layers of a list, then an ellipsis when there are more.
std::string layerListNote(const std::vector<int>& layers);

// The feed-forward activations these families' configs name (Hugging Face's ACT2FN keys that
// family_common's activate() computes); fails naming `key` for any other.
void requireActivation(const JsonConfig& config, const std::string& key, const std::string& value);

// Next-token logits of the final hidden state `last` [1, E] through an output projection with a
// bias (GPT-J's and Phi's lm_head: weight [vocab, E], bias [vocab]), float32 on the CPU.
std::vector<float> nextLogitsBiased(const at::Tensor& last, const Linear& head);

}  // namespace attnscope
