// What the gradient map sources (analysis/gradient_sources.h) need of a model beyond forward():
// one forward with autograd through every layer's attention weights α. The families that may have
// an output to explain implement it (the decoders, the BERT family, ViT); the analysis finds it with dynamic_cast,
// as patching finds LayerRunner, so Model's public interface stays as it is.
#pragma once

#include "attnscope/attention/run_options.h"
#include "attnscope/io/input.h"

#include <ATen/ATen.h>

#include <optional>
#include <string>
#include <vector>

namespace attnscope {

// One forward with gradients. alphas[l]: layer l's α [H, n, n] as the model multiplied V with
// it (interventions applied), its gradient retained; outputs: the scores s is picked from,
// float32 [count] in the graph: the next-token logits at the last position before any final
// soft-cap (decoders) or the class logits (classifiers).
struct GradientRun {
    std::vector<at::Tensor> alphas;
    at::Tensor outputs;
};

class GradientRunner {
public:
    virtual ~GradientRunner() = default;
    // Whether the model has an output s can be (false: an encoder loaded without its task head).
    virtual bool hasOutputToExplain() const = 0;
    // Why this model's gradient sources cannot be computed otherwise ("" when they can): streamed weights.
    virtual std::string gradientRefusal() const = 0;
    // Whether outputs are classes (labels: classLabels()) rather than vocabulary ids.
    virtual bool explainsClasses() const = 0;
    virtual std::vector<std::string> classLabels() const { return {}; }
    // The positions the run will have for this input (for the memory check before it runs).
    virtual std::int64_t gradientTokens(const TextInput& text, const std::optional<RgbImage>& image) const = 0;
    // Runs with autograd enabled; throws attnscope::Error for an input the model does not take.
    virtual GradientRun runGradients(const TextInput& text, const std::optional<RgbImage>& image,
                                     const RunOptions& options) const = 0;
};

}  // namespace attnscope
