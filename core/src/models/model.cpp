#include "layer_runner.h"
#include "attnscope/io/gguf.h"
#include "kv_cache.h"
#include "attnscope/runtime/error.h"
#include "runtime/device.h"
#include "decoder_spec.h"
#include "families.h"
#include "family_common.h"
#include "runtime/torch_errors.h"
#include "attention/trace_impl.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace attnscope {

Model::~Model() = default;

std::vector<std::string> imageTokenLabels(const ModelInfo& info) {
    if (!info.imageInput || info.patchSize <= 0) return {};
    std::vector<std::string> labels = info.imageSpecialTokens;
    const int grid = info.imageSize / info.patchSize;
    for (int r = 0; r < grid; ++r)
        for (int c = 0; c < grid; ++c) labels.push_back("r" + std::to_string(r) + "c" + std::to_string(c));
    return labels;
}

namespace {

std::vector<std::filesystem::path> builtinSearchPath() {
    std::vector<std::filesystem::path> dirs;
    if (const char* env = std::getenv("ATTNSCOPE_BUILTIN_DIR"); env && *env) dirs.emplace_back(env);
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) dirs.push_back(exe.parent_path().parent_path() / "share" / "attnscope" / "builtin");
#ifdef ATTNSCOPE_SOURCE_BUILTIN_DIR
    dirs.emplace_back(ATTNSCOPE_SOURCE_BUILTIN_DIR);
#endif
    return dirs;
}

}  // namespace

std::vector<BuiltinModel> builtinModels() {
    std::error_code ec;
    for (const auto& dir : builtinSearchPath()) {
        if (!std::filesystem::is_directory(dir, ec)) continue;
        std::vector<BuiltinModel> out;
        for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
            if (entry.is_directory() && std::filesystem::exists(entry.path() / "config.json", ec))
                out.push_back({entry.path().filename().string(), entry.path()});
        std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
        if (!out.empty()) return out;
    }
    return {};
}

std::filesystem::path resolveModelPath(const std::string& spec) {
    static const std::string prefix = "builtin:";
    if (spec.compare(0, prefix.size(), prefix) != 0) return spec;
    const std::string name = spec.substr(prefix.size());
    std::string names;
    for (const auto& b : builtinModels()) {
        if (b.name == name) return b.folder;
        names += (names.empty() ? "" : ", ") + b.name;
    }
    if (names.empty())
        throw Error(spec + ": no built-in models found (looked in $ATTNSCOPE_BUILTIN_DIR, ../share/attnscope/builtin)");
    throw Error(spec + ": no such built-in model (built-in: " + names + ")");
}

std::vector<std::int64_t> Model::encodeText(const std::string&) const {
    throw Error(info().family + " model at " + info().path.string() + " has no tokenizer; give token ids instead");
}

std::vector<std::int64_t> Model::encodeTarget(const std::string&) const {
    throw Error(info().family + " model at " + info().path.string() +
                " is not an encoder-decoder; it takes no target text");
}

const Tokenizer* Model::tokenizer() const { return nullptr; }

bool Model::hasTokenizer() const { return tokenizer() != nullptr; }

std::shared_ptr<const Model> Model::load(const std::filesystem::path& spec, const LoadOptions& options) {
    const std::filesystem::path folder = resolveModelPath(spec.string());
    std::error_code ec;
    if (looksLikeGguf(folder)) {  // recognised by content: Ollama's blobs have no extension
        const c10::Device device = resolveDevice(options.device);
        return translateTorchErrors("loading " + folder.string(), [&] { return loadGguf(folder, device, options); });
    }
    if (!std::filesystem::exists(folder, ec)) throw Error(folder.string() + ": no such model folder");
    if (!std::filesystem::is_directory(folder, ec))
        throw Error(folder.string() + ": not a folder (a model is a folder with config.json and model.safetensors)");
    const auto configFile = folder / "config.json";
    if (!std::filesystem::exists(configFile, ec))
        throw Error(folder.string() + ": no config.json in this folder, so it is not a model folder");
    JsonConfig config(readJsonObject(configFile), configFile);
    const std::string type = config.string("model_type");
    const c10::Device device = resolveDevice(options.device);
    const auto loader = familyLoader(type);
    if (!loader)
        throw Error(configFile.string() + ": model_type '" + type +
                    "' is not supported (supported: " + supportedFamilies() + ")");
    return translateTorchErrors("loading " + folder.string(), [&] { return loader(folder, config, device, options); });
}

std::shared_ptr<const Trace> Model::runForwardText(const TextInput& input, const RunOptions& options) const {
    requirePlainTokens(input, info().family);
    if (!input.targetIds.empty())
        throw Error(info().family + " model at " + info().path.string() +
                    " is not an encoder-decoder; it takes no target ids");
    return runForward(input.ids, options);
}

std::shared_ptr<const Trace> Model::runForwardImage(const RgbImage&, const RunOptions&) const {
    throw Error(info().family + " model at " + info().path.string() + " takes token ids, not an image");
}

std::shared_ptr<const Trace> Model::runForwardImageText(const RgbImage&, const TextInput&, const RunOptions&) const {
    throw Error(info().family + " model at " + info().path.string() +
                " does not take an image and a text together (image–text models: clip, siglip)");
}

// The capture dtype for the forward's thread (runtime/capture_type.h): layers narrow their Q/K
// as they record them and the memory check counts them so.
std::optional<c10::ScalarType> captureTypeOf(const RunOptions& options) {
    if (options.captureDtype == CaptureDtype::Compute) return std::nullopt;
    return options.captureDtype == CaptureDtype::Float16 ? at::kHalf : at::kBFloat16;
}

void checkRunOptions(const RunOptions& options) {
    if (!(options.temperature > 0) || !std::isfinite(options.temperature))
        throw Error("temperature must be a finite number > 0, got " + std::to_string(options.temperature));
}

namespace {

// Records, for every family in one place, what a Trace needs beyond the family's capture: the
// propagated temperature each layer ran at (so that the Trace's maps are the ones the model
// used) and the input (so that interventions can re-run it). The Impl is not const (only the
// Trace handle is) and nothing else holds it yet.
std::shared_ptr<const Trace> finish(std::shared_ptr<const Trace> trace, const RunOptions& options,
                                    std::shared_ptr<const TextInput> text, std::shared_ptr<const RgbImage> image) {
    auto& impl = const_cast<Trace::Impl&>(trace->impl());
    if (const auto dtype = captureTypeOf(options)) {
        for (auto& block : impl.blocks)
            for (auto& layer : block.layers) {
                // Dot and linear layers only: an additive layer's projections feed tanh directly.
                if (layer.kind == AttentionKind::Additive) continue;
                layer.q = layer.q.to(*dtype);
                layer.k = layer.k.to(*dtype);
            }
    }
    if (options.temperature != 1.0)
        for (std::size_t b = 0; b < impl.blocks.size(); ++b)
            for (std::size_t l = 0; l < impl.blocks[b].layers.size(); ++l)
                impl.blocks[b].layers[l].temperature =
                        layerRun(options, impl.infos[b].name, static_cast<int>(l)).temperature;
    impl.textInput = std::move(text);
    impl.imageInput = std::move(image);
    return trace;
}

// What every forward does around the family's: checks the options (knockout is a decoder's:
// layer_runner.h marks the decoders), sets the capture dtype, turns Torch's errors into ours
// (naming `what`) and finishes the Trace.
template <class Run>
std::shared_ptr<const Trace> checkedForward(const Model& model, const std::string& what, const RunOptions& options,
                                            std::shared_ptr<const TextInput> text,
                                            std::shared_ptr<const RgbImage> image, const Run& run) {
    if (!options.knockouts.empty() && !dynamic_cast<const LayerRunner*>(&model))
        throw Error("attention knockout is implemented for decoder-only language models; " + model.info().family +
                    " is not one");
    checkRunOptions(options);
    CaptureTypeScope capture(captureTypeOf(options));
    return finish(translateTorchErrors("running the model on " + what, run), options, std::move(text),
                  std::move(image));
}

}  // namespace

std::shared_ptr<const Trace> Model::forward(const std::vector<std::int64_t>& ids, const RunOptions& options) const {
    return checkedForward(*this, std::to_string(ids.size()) + " tokens", options, nullptr, nullptr,
                          [&] { return runForward(ids, options); });
}

std::shared_ptr<const Trace> Model::forwardText(const TextInput& input, const RunOptions& options) const {
    return checkedForward(*this, std::to_string(input.ids.size()) + " tokens", options,
                          std::make_shared<const TextInput>(input), nullptr,
                          [&] { return runForwardText(input, options); });
}

std::shared_ptr<const Trace> Model::forwardImage(const RgbImage& image, const RunOptions& options) const {
    return checkedForward(*this, "an image", options, nullptr, std::make_shared<const RgbImage>(image),
                          [&] { return runForwardImage(image, options); });
}

std::shared_ptr<const Trace> Model::forwardImageText(const RgbImage& image, const TextInput& text,
                                                     const RunOptions& options) const {
    return checkedForward(*this, "an image and " + std::to_string(text.ids.size()) + " tokens", options,
                          std::make_shared<const TextInput>(text), std::make_shared<const RgbImage>(image),
                          [&] { return runForwardImageText(image, text, options); });
}

std::shared_ptr<const Trace> Model::rerun(const Trace& original, const RunOptions& options) const {
    const Trace::Impl& impl = original.impl();
    if (impl.imageInput && impl.textInput) return forwardImageText(*impl.imageInput, *impl.textInput, options);
    if (impl.imageInput) return forwardImage(*impl.imageInput, options);
    if (impl.textInput) return forwardText(*impl.textInput, options);
    return forward(original.ids(), options);
}

}  // namespace attnscope

namespace attnscope {

namespace {

struct FamilyEntry {
    const char* modelType;
    FamilyLoader loader;
};

// One line per model_type.
const FamilyEntry kFamilies[] = {
        {"gpt2", loadDecoderFamily<gpt2Spec>},
        {"bert", loadBert},
        {"roberta", loadBert},
        {"distilbert", loadBert},
        {"modernbert", loadModernBert},
        {"deberta-v2", loadDebertaV2},
        {"llama", loadDecoderFamily<llamaSpec>},
        {"mistral", loadDecoderFamily<mistralSpec>},
        {"qwen2", loadDecoderFamily<qwen2Spec>},
        {"gpt_neox", loadDecoderFamily<gptNeoxSpec>},
        {"gptj", loadDecoderFamily<gptjSpec>},
        {"gpt_neo", loadDecoderFamily<gptNeoSpec>},
        {"phi", loadDecoderFamily<phiSpec>},
        {"gemma", loadDecoderFamily<gemmaSpec>},
        {"gemma2", loadDecoderFamily<gemma2Spec>},
        {"gemma3_text", loadDecoderFamily<gemma3TextSpec>},
        {"qwen3", loadDecoderFamily<qwen3Spec>},
        {"olmo2", loadDecoderFamily<olmo2Spec>},
        {"phi3", loadDecoderFamily<phi3Spec>},
        {"mixtral", loadDecoderFamily<mixtralSpec>},
        {"qwen2_moe", loadDecoderFamily<qwen2MoeSpec>},
        {"olmoe", loadDecoderFamily<olmoeSpec>},
        {"opt", loadDecoderFamily<optSpec>},
        {"bloom", loadDecoderFamily<bloomSpec>},
        {"falcon", loadDecoderFamily<falconSpec>},
        {"RefinedWebModel", loadDecoderFamily<falconSpec>},  // Falcon's legacy model types
        {"RefinedWeb", loadDecoderFamily<falconSpec>},
        {"vit", loadVit},
        {"deit", loadDeit},
        {"dinov2", loadDinov2},
        {"dinov2_with_registers", loadDinov2WithRegisters},
        {"beit", loadBeit},
        {"swin", loadSwin},
        {"clip", loadClip},
        {"siglip", loadSiglip},
        {"t5", loadT5},
        {"bart", loadBart},
        {"mbart", loadMbart},
        {"marian", loadMarian},
        {"attnscope-seq2seq", loadBuiltinSeq2seq},
        {"attnscope-classifier", loadBuiltinClassifier},
};

}  // namespace

FamilyLoader familyLoader(const std::string& modelType) {
    for (const auto& f : kFamilies)
        if (modelType == f.modelType) return f.loader;
    return nullptr;
}

std::string supportedFamilies() {
    std::string names;
    for (const auto& f : kFamilies) names += (names.empty() ? "" : ", ") + std::string(f.modelType);
    return names;
}

}  // namespace attnscope
