// ALiBi slopes as Hugging Face's BLOOM and Falcon compute them (build_alibi_tensor), for
// ScoreSpec::alibiSlopes. Shared by bloom.cpp and falcon.cpp.
#pragma once

#include <vector>

namespace attnscope {

// One slope per head, as float32 values (Hugging Face computes them in float32). With p the
// largest power of two <= heads: head h < p has slope 2^(-8(h+1)/p); the remaining heads take the
// odd-numbered slopes of 2p heads, 2^(-4(2i+1)/p) for i = 0 .. heads-p-1.
std::vector<double> alibiSlopes(int heads);

}  // namespace attnscope
