// What the image–text families (clip.cpp, siglip.cpp) share: a tower's config and its pre-LN
// layers on the shared stack (layer_stack.h) under CLIP's tensor names, which SigLIP keeps; a
// tower's forward into its own Trace block; the similarity; and the pieces of the patch
// contributions (attention/image_text.h says what they are).
#pragma once

#include "attnscope/attention/image_text.h"
#include "attnscope/runtime/error.h"
#include "family_common.h"
#include "io/image_preprocess.h"
#include "io/json_util.h"
#include "layer_stack.h"

#include <c10/core/InferenceMode.h>

#include <string>
#include <vector>

namespace attnscope {

// A tower's sizes from its sub-config; the defaults are the family's config class's.
struct TowerConfig {
    int hidden = 768, layers = 12, heads = 12, inner = 3072;
    double eps = 1e-5;
    std::string activation = "quick_gelu";
};

// config.json's object `key` ("text_config", "vision_config") as a JsonConfig whose messages
// name "config.json (key)"; an empty object when the key is absent (the class's defaults).
JsonConfig subConfig(const JsonConfig& config, const std::string& key);

// Reads hidden_size, intermediate_size, num_hidden_layers, num_attention_heads, layer_norm_eps and
// hidden_act over `defaults`; fails naming the key.
TowerConfig readTowerConfig(const JsonConfig& c, TowerConfig defaults);

// What CLIP's and SigLIP's configs read alike (their own defaults set by the family): both towers'
// sizes, the text's vocab_size and max_position_embeddings, the vision's image_size and
// patch_size (3 channels; image_size a multiple of patch_size).
struct ImageTextSizes {
    TowerConfig text, vision;
    std::int64_t vocab = 0;
    int positions = 0, imageSize = 224, patch = 16;
};
// Reads them over k's defaults from the text_config and vision_config objects; fails naming the key.
void readImageTextSizes(const JsonConfig& text, const JsonConfig& vision, ImageTextSizes& k);

// CLIPEncoderLayer's (and SiglipEncoderLayer's) names under encoder.layers.N.
extern const StackNames kClipLayerNames;

struct Tower {
    TowerConfig config;
    StackSpec spec;
    std::vector<StackLayer> layers;

    // Runs the layers over x [n, E] (after the memory check) and records them as Trace block
    // `name` over `labels` (queries and keys); `mask` the self-attention's (CLIP's text: causal).
    // lastInput, when given, receives the residual entering the last layer [n, E]. Returns the
    // last layer's output [n, E] (before any final norm).
    at::Tensor run(const at::Tensor& x, const MaskSpec& mask, const std::string& name,
                   const std::vector<std::string>& labels, const RunOptions& options, Trace::Impl& impl,
                   at::Tensor* lastInput = nullptr) const;
};

// The tower's layers under `prefix` ("vision_model.encoder.layers."), step() after each.
Tower loadTower(WeightStore& weights, const TowerConfig& config, const std::string& prefix,
                const std::function<void()>& step);

// The text tower as CLIP and SigLIP load it (text_model.): token and position embeddings, the
// layers, final_layer_norm.
struct TextTower {
    at::Tensor tokens, positions;
    Tower tower;
    Norm finalNorm;

    // The final states of ids [n, T] after final_layer_norm; the layers recorded as block "text"
    // under `mask` over `labels`.
    at::Tensor run(const std::vector<std::int64_t>& ids, const MaskSpec& mask, const std::vector<std::string>& labels,
                   const RunOptions& options, Trace::Impl& impl) const;
};
TextTower loadTextTower(WeightStore& weights, const ImageTextSizes& sizes, const std::function<void()>& step);

// logit_scale (and SigLIP's logit_bias): a scalar stored as [] or [1]; fails naming it otherwise.
double loadScalar(WeightStore& weights, const std::string& name);

// cosine, logit = scale·cosine + bias and the norms from the embeddings image [P] and text [P].
void scoreSimilarity(ImageTextScore& score, const at::Tensor& image, const at::Tensor& text, double scale, double bias);

// One attention's pieces for a single query row: α_hj · (v_j^h W_O^h), [H, m, E] in double on
// the CPU, recomputed from the attention's input (query [1, E], keys [m, E], as the block read
// them) with logits scaled by 1/√d and divided by `run`'s temperature; heads `run` masks give 0.
at::Tensor attentionPieces(const AttentionWeights& w, const at::Tensor& query, const at::Tensor& keys,
                           std::int64_t heads, const LayerRun& run);

// Throws unless the text is token ids only (no types, padding mask or target), 1 to `positions`
// long and inside [0, vocab); the messages name the family.
void checkImageText(const std::string& family, const TextInput& text, std::int64_t positions, std::int64_t vocab);
// Throws unless the preprocessor gives a fixed imageSize × imageSize image (no interpolated
// positions), naming the folder's preprocessor_config.json.
void checkFixedImageSize(const std::filesystem::path& folder, const ImagePreprocess& preprocess, int imageSize);

// CLIP's and SigLIP's Model base: the text side of TextFamilyModel (the folder's tokenizer and
// labels, the info), the image processor (`processor`'s defaults, a fixed input size), one input
// alone refused, and the forward's checks (Config has vocab, positions and imageSize); the family
// runs the towers over the preprocessed pixels into a labelled Trace.
template <class Config>
class ImageTextModel : public TextFamilyModel<Config> {
protected:
    ImageTextModel(Config config, const std::filesystem::path& folder, c10::Device device, std::string family,
                   const std::string& processor)
        : TextFamilyModel<Config>(std::move(config), folder, device), family_(std::move(family)) {
        preprocess_ = readPreprocessor(folder, processorDefaults(processor));
        checkFixedImageSize(folder, preprocess_, this->cfg_.imageSize);
    }

    std::shared_ptr<const Trace> runForward(const std::vector<std::int64_t>&, const RunOptions&) const override {
        throw Error(takesBoth());
    }
    std::shared_ptr<const Trace> runForwardImage(const RgbImage&, const RunOptions&) const override {
        throw Error(takesBoth());
    }
    std::shared_ptr<const Trace> runForwardImageText(const RgbImage& image, const TextInput& text,
                                                     const RunOptions& options) const override {
        checkImageText(family_, text, this->cfg_.positions, this->cfg_.vocab);
        const at::Tensor pixels = preprocessImage(image, preprocess_);
        c10::InferenceMode guard;
        auto impl = this->newTrace(text.ids);
        runTowers(pixels, text, options, *impl);
        return std::make_shared<const Trace>(std::move(impl));
    }
    virtual void runTowers(const at::Tensor& pixels, const TextInput& text, const RunOptions& options,
                           Trace::Impl& impl) const = 0;

    ImagePreprocess preprocess_;

private:
    std::string takesBoth() const {
        return family_ + " model at " + this->info_.path.string() +
               " takes an image and a text together (--image and --text)";
    }

    std::string family_;
};

// x in double on the CPU; weights of a norm or a linear the same (undefined stays undefined).
at::Tensor cpuDouble(const at::Tensor& x);
Norm cpuDouble(const Norm& n);
Linear cpuDouble(const Linear& l);

}  // namespace attnscope
