// The model input every command that runs a model takes: --ids, --text or --image, plus the
// BERT family's --type-ids and --attend and the encoder-decoders' --target-text, --target-ids
// (decoder input ids used exactly) and --max-new-tokens (greedy decoding's limit, default 32);
// the image-text models (CLIP, SigLIP) take --image with --text (or --ids), and SigLIP --pad-text-to N.
// One place, so attention, metrics and export agree.
#pragma once

#include "args.h"

#include "attnscope/analysis/gradient_sources.h"
#include "attnscope/models/model.h"

#include <memory>
#include <optional>
#include <set>
#include <string>

namespace attnscope {
class Trace;
}

namespace attnscope::cli {

// The largest --max-new-tokens.
constexpr long long kMaxNewTokens = 4096;

// options plus ids, text, image, type-ids, attend, target-text, target-ids, max-new-tokens, pad-text-to.
std::set<std::string> withInputOptions(std::set<std::string> options);

class ModelInput {
public:
    // Checks what can be checked before a model loads: one of --ids/--text/--image, well-formed
    // ids, type ids and padding flags, and a readable image file.
    explicit ModelInput(const Args& args);

    // Runs the model on the input; image models without --image are a usage error.
    std::shared_ptr<const Trace> run(const Model& model, const RunOptions& options = {}) const;
    // The same input for the gradient sources (ids with types and padding, or the image); the
    // encoder-decoders' target options are a usage error here.
    GradientInput gradientInput(const Model& model) const;

private:
    bool hasTargetOptions() const;

    const Args& args_;
    std::optional<RgbImage> image_;
};

}  // namespace attnscope::cli
