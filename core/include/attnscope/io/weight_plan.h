// How a model holds its weights (LoadOptions::weights; ModelInfo::weights says which it got).
#pragma once

namespace attnscope {

enum class WeightPlan {
    Auto,     // converted to the compute dtype when that fits in memory, else streamed
    Convert,  // always converted up front (refused when it does not fit)
    Stream,   // half-precision matrices stay in the file and are converted one layer at a time
              // just before it runs (CPU; F32 checkpoints and GPUs are never streamed)
};

}  // namespace attnscope
