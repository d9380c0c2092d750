// Model: a loaded transformer (weights, config) that runs a forward pass with capture.
//
// Model::load reads a folder (config.json + model.safetensors, or shards listed in
// model.safetensors.index.json), validates every tensor's shape
// against the config before anything runs, and returns an immutable model. forward() may be
// called from several threads at once. Weights are memory-mapped; tensors in the compute dtype
// are used without a copy.
#pragma once

#include "attnscope/attention/run_options.h"
#include "attnscope/io/input.h"
#include "attnscope/io/weight_plan.h"
#include "attnscope/runtime/device.h"
#include "attnscope/runtime/progress.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace attnscope {

class Tokenizer;
class Trace;

struct ModelInfo {
    std::string family;          // config.json model_type, e.g. "gpt2"
    std::filesystem::path path;  // the folder
    int layers = 0;
    int heads = 0;
    int kvHeads = 0;
    int headDim = 0;
    int hidden = 0;
    int vocabSize = 0;
    int maxPositions = 0;
    std::int64_t parameters = 0;  // distinct weights (a tied output embedding counts once)
    std::string dtype;            // storage dtype of the weights: "F32", "F16", "BF16" or "mixed"
    std::string device;           // where the weights live: "cpu", "cuda:0"
    // How the weights are held (LoadOptions::weights): "converted to float32", "streamed from
    // BF16 (one layer at a time …)", "float32 from the file (mapped, no copy)", "bfloat16 on cuda:0".
    std::string weights;
    std::string task;       // built-in models: "reverse" or "sentiment", else empty
    std::string attention;  // built-in models: "dot", "additive" or "linear", else empty
    // Image models (ViT, DeiT, DINOv2): forwardImage() takes an RGB image, preprocessed to
    // imageSize × imageSize pixels and cut into patches of patchSize; forward(ids) is an error for them.
    bool imageInput = false;
    // Image–text models (CLIP, SigLIP; imageInput too): forwardImageText() runs the vision tower on
    // an image and the text tower on ids (blocks "vision" and "text", SigLIP's "probe") and records
    // their similarity (attention/image_text.h); forwardImage and forward alone are errors.
    // maxPositions is then the text tower's.
    bool imageText = false;
    // The text tower's padding token for callers that pad the text (SigLIP's pad_token_id: the CLI's
    // --pad-text-to N); -1 when the model's text is not padded (CLIP, the other families).
    std::int64_t padTokenId = -1;
    // Encoder-decoder models (the built-in reverse models, T5, BART, mBART, Marian): blocks
    // "encoder", "decoder" and "cross"; TextInput::targetIds forces the decoder's input.
    bool encoderDecoder = false;
    int imageSize = 0;
    int patchSize = 0;
    // Image models: the labels of the tokens before the patches, in order ("[CLS]"; DeiT's
    // "[DIST]"; DINOv2's registers "[REG 1]" …). imageTokenLabels() gives the whole sequence.
    std::vector<std::string> imageSpecialTokens;
    // What the family does that matters for reading its maps, one short phrase each, e.g.
    // "sliding window 4096 on layers 0, 2, …", "soft-cap 50", "ALiBi", "rotary on 25% of dims",
    // "8 kv groups" (`info` and the GUI's model line show them).
    std::vector<std::string> notes;
    // DeBERTa v2/v3: the forward records its c2c, c2p and p2c score terms when RunOptions::scoreTerms
    // asks (attention/score_terms.h); the other families have no such terms.
    bool scoreTerms = false;
};

struct LoadOptions {
    DeviceChoice device = DeviceChoice::Auto;
    Progress progress;  // (tensors loaded, total)
    // The most memory loading may take, in bytes; 0 = what the device has available now
    // (MemAvailable on the CPU, free GPU memory). A model that needs more is refused with
    // attnscope::Error "... needs X GiB on DEVICE, Y GiB available" before anything is read.
    std::uint64_t memoryLimitBytes = 0;
    // Converted up front or streamed layer by layer (weight_plan.h). Auto streams a CPU model
    // only when converting would not fit memoryLimitBytes (or what is available); the families
    // that stream are the decoders (GPT-2, Llama, GPT-NeoX, GPT-J, GPT-Neo, Phi, OPT, BLOOM,
    // Falcon, Gemma, Qwen3, OLMo-2, Phi-3); others are converted.
    WeightPlan weights = WeightPlan::Auto;
};

// An image model's token labels: imageSpecialTokens, then the patches row by row, "rRcC" (row R,
// column C of the (imageSize / patchSize)² grid; analysis/overlay.h reads them back). Empty for
// other models.
std::vector<std::string> imageTokenLabels(const ModelInfo& info);

// The built-in models shipped under resources/builtin: name (e.g. "reverse-dot") and folder.
struct BuiltinModel {
    std::string name;
    std::filesystem::path folder;
};
std::vector<BuiltinModel> builtinModels();
// "builtin:NAME" -> its folder; any other string is returned as a path unchanged. Throws
// attnscope::Error listing the built-in names for an unknown one.
std::filesystem::path resolveModelPath(const std::string& spec);

class Model {
public:
    // folder is a model folder or "builtin:NAME" (see builtinModels()). Throws attnscope::Error
    // naming the file and what is wrong.
    static std::shared_ptr<const Model> load(const std::filesystem::path& folder, const LoadOptions& options = {});

    virtual ~Model();
    virtual const ModelInfo& info() const = 0;

    // Labels for ids: the vocabulary's strings when the folder has vocab.json or
    // tokenizer.json, else the ids themselves. Throws on an id outside the vocabulary.
    virtual std::vector<std::string> tokenLabels(const std::vector<std::int64_t>& ids) const = 0;

    // Text -> ids through the model's tokenizer, special tokens included as the model expects.
    // Throws attnscope::Error when the model has no tokenizer (the default) or the text is empty.
    virtual std::vector<std::int64_t> encodeText(const std::string& text) const;

    // Encoder-decoder models: a target text -> the decoder's input ids, tokenized as the model's
    // target side and shifted right the way Hugging Face's models do (decoder start token first).
    // Throws attnscope::Error for other models (the default), without a tokenizer or for an
    // empty text.
    virtual std::vector<std::int64_t> encodeTarget(const std::string& text) const;

    // The folder's tokenizer (tokenizer.json, or vocab.json + merges.txt, or vocab.txt), parsed
    // once when the model loaded; owned by the model and valid while it lives. nullptr when the
    // folder has none, for image models and for the built-in models (see hasTokenizer).
    virtual const Tokenizer* tokenizer() const;
    // Whether encodeText can split text: a tokenizer() or, for the built-in models, their own
    // symbol vocabulary (one symbol per character or word). Otherwise the input is token ids.
    virtual bool hasTokenizer() const;

    // One forward pass over ids, used exactly as given (no special tokens added). Throws
    // attnscope::Error for an empty input, an id outside [0, vocab), more ids than the model
    // has positions, or a failure inside LibTorch (out of memory, say); attnscope::Cancelled
    // when progress returns false.
    std::shared_ptr<const Trace> forward(const std::vector<std::int64_t>& ids, const RunOptions& options = {}) const;
    // forward() with token types and a padding mask. Models without token types or padding
    // (decoders) throw attnscope::Error when either is given.
    std::shared_ptr<const Trace> forwardText(const TextInput& input, const RunOptions& options = {}) const;
    // Image models: one forward over an image (info().imageInput). Text models throw
    // attnscope::Error saying they take token ids.
    std::shared_ptr<const Trace> forwardImage(const RgbImage& image, const RunOptions& options = {}) const;
    // Image–text models (info().imageText): both towers, the image and the text's ids (used as
    // given). Other models throw attnscope::Error.
    std::shared_ptr<const Trace> forwardImageText(const RgbImage& image, const TextInput& text,
                                                  const RunOptions& options = {}) const;
    // The same input as original (ids, text with types/padding, image, or image and text) with new options:
    // what interventions (propagated temperature, masked heads) compare against.
    std::shared_ptr<const Trace> rerun(const Trace& original, const RunOptions& options) const;

protected:
    // The family's forward; forward() validates nothing itself but turns LibTorch's exceptions
    // into attnscope::Error, so no family has to.
    virtual std::shared_ptr<const Trace> runForward(const std::vector<std::int64_t>& ids,
                                                    const RunOptions& options) const = 0;
    // Default: refuses typeIds / attend that differ from the defaults, else runForward(ids).
    virtual std::shared_ptr<const Trace> runForwardText(const TextInput& input, const RunOptions& options) const;
    // Default: throws "this model takes token ids, not an image".
    virtual std::shared_ptr<const Trace> runForwardImage(const RgbImage& image, const RunOptions& options) const;
    // Default: throws "FAMILY does not take an image and a text together".
    virtual std::shared_ptr<const Trace> runForwardImageText(const RgbImage& image, const TextInput& text,
                                                             const RunOptions& options) const;
};

}  // namespace attnscope
