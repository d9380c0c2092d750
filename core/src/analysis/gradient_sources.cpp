#include "attnscope/analysis/gradient_sources.h"

#include "attnscope/runtime/error.h"
#include "models/gradient_runner.h"
#include "runtime/memory.h"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <string>

namespace attnscope {

namespace {

const char* const kCovered = "grad-weighted and relevance are defined for decoder language models, sequence "
                             "classifiers (BERT family) and ViT with a classification head";

// The model's gradient runner, or the one-line refusal.
const GradientRunner& runnerOf(const Model& model) {
    const ModelInfo& info = model.info();
    if (info.encoderDecoder)
        throw Error("gradient sources: " + info.family +
                    " is an encoder–decoder, whose decoder and cross blocks mix two streams; " + kCovered);
    const auto* runner = dynamic_cast<const GradientRunner*>(&model);
    if (!runner && !info.task.empty())
        throw Error("gradient sources: the built-in models are not covered; " + std::string(kCovered));
    if (!runner || !runner->hasOutputToExplain())
        throw Error("gradient sources: " + info.family +
                    " here is an encoder without a task head, so it has no output to explain; " + kCovered);
    if (const std::string why = runner->gradientRefusal(); !why.empty()) throw Error("gradient sources: " + why);
    return *runner;
}

// The explained output's index: the target given (checked) or the argmax of the outputs.
std::int64_t pickTarget(const Model& model, const GradientRunner& runner, const GradientTarget& target,
                        const at::Tensor& outputs) {
    const std::int64_t count = outputs.size(0);
    const std::string range = " (0.." + std::to_string(count - 1) + ")";
    if (runner.explainsClasses()) {
        if (target.token)
            throw Error("a target token is for decoder language models; " + model.info().family +
                        " explains a class (give a target class)");
        if (target.classIndex) {
            if (*target.classIndex < 0 || *target.classIndex >= count)
                throw Error("target class " + std::to_string(*target.classIndex) + " is outside the classes" + range);
            return *target.classIndex;
        }
        if (!target.classLabel.empty()) {
            const std::vector<std::string> labels = runner.classLabels();
            const auto it = std::find(labels.begin(), labels.end(), target.classLabel);
            if (it == labels.end())
                throw Error("target class '" + target.classLabel + "' is not one of the model's " +
                            std::to_string(labels.size()) + " class labels");
            return it - labels.begin();
        }
    } else {
        if (target.classIndex || !target.classLabel.empty())
            throw Error("a target class is for classifiers; " + model.info().family +
                        " is a language model (give a target token)");
        if (target.token) {
            if (*target.token < 0 || *target.token >= count)
                throw Error("target token " + std::to_string(*target.token) + " is outside the vocabulary" + range);
            return *target.token;
        }
    }
    return outputs.detach().argmax().item<std::int64_t>();
}

// The run's masked heads and temperature layers inside the model's one "self" block (as the
// interventions check them against a Trace's blocks).
void checkInterventions(const RunOptions& options, const ModelInfo& info) {
    for (const HeadRef& h : options.maskHeads) {
        const std::string name =
                (h.block.empty() ? "" : h.block + ":") + std::to_string(h.layer) + ":" + std::to_string(h.head);
        if (!h.block.empty() && h.block != "self")
            throw Error("head " + name + ": this model has one attention block, 'self'");
        if (h.layer < 0 || h.layer >= info.layers)
            throw Error("head " + name + ": layer " + std::to_string(h.layer) + " is out of range (0.." +
                        std::to_string(info.layers - 1) + ")");
        if (h.head < 0 || h.head >= info.heads)
            throw Error("head " + name + ": head " + std::to_string(h.head) + " is out of range (0.." +
                        std::to_string(info.heads - 1) + ")");
    }
    for (int l : options.temperatureLayers)
        if (l < 0 || l >= info.layers)
            throw Error("layer " + std::to_string(l) + " is out of range (0.." + std::to_string(info.layers - 1) + ")");
}

// Āˡ = mean_h max(Gˡ, 0); R = I; R ← R + Āˡ R, the map of layer l being R after layer l (float64).
std::vector<float> relevanceOf(const std::vector<float>& g, int L, int H, int n) {
    const auto dbl = at::TensorOptions().dtype(at::kDouble);
    const at::Tensor G = at::from_blob(const_cast<float*>(g.data()), {L, H, n, n}, at::kFloat).to(at::kDouble);
    at::Tensor R = at::eye(n, dbl);
    std::vector<float> out;
    out.reserve(static_cast<std::size_t>(L) * n * n);
    for (int l = 0; l < L; ++l) {
        const at::Tensor A = G[l].clamp_min(0).mean(0);
        R = R + at::mm(A, R);
        const at::Tensor f = R.to(at::kFloat).contiguous();
        out.insert(out.end(), f.data_ptr<float>(), f.data_ptr<float>() + f.numel());
    }
    return out;
}

}  // namespace

HeadMap GradientMaps::map(MapSource source, int layer, int head) const {
    if (source != MapSource::GradWeighted && source != MapSource::Relevance)
        throw Error(std::string("gradient maps hold grad-weighted and relevance, not ") + sourceName(source));
    if (layer < 0 || layer >= layers)
        throw Error("layer " + std::to_string(layer) + " is outside 0.." + std::to_string(layers - 1));
    const bool perHead = source == MapSource::GradWeighted;
    if (perHead && (head < 0 || head >= heads))
        throw Error("head " + std::to_string(head) + " is outside 0.." + std::to_string(heads - 1));
    const std::size_t cells = static_cast<std::size_t>(tokens) * tokens;
    const std::vector<float>& all = perHead ? gradWeighted : relevance;
    const std::size_t at = (perHead ? static_cast<std::size_t>(layer) * heads + head : layer) * cells;
    HeadMap m;
    m.rows = m.cols = tokens;
    m.values.assign(all.begin() + static_cast<std::ptrdiff_t>(at),
                    all.begin() + static_cast<std::ptrdiff_t>(at + cells));
    return m;
}

MapProvider gradientMapProvider(std::shared_ptr<const GradientMaps> maps, MapSource source) {
    if (!maps) throw Error("gradient maps: none given");
    if (!gradientSource(source))
        throw Error(std::string("gradient maps hold grad-weighted and relevance, not ") + sourceName(source));
    return [maps = std::move(maps), source](int block, int layer, int head) {
        if (block != 0)
            throw Error(std::string(sourceName(source)) + " covers the model's first block only, not block " +
                        std::to_string(block));
        return maps->map(source, layer, head);
    };
}

std::uint64_t gradientSourcesBytes(const ModelInfo& info, std::int64_t tokens) {
    const std::uint64_t n = static_cast<std::uint64_t>(std::max<std::int64_t>(tokens, 1));
    const std::uint64_t L = info.layers, H = info.heads, E = info.hidden, maps = H * n * n;
    // Per layer: α and the logits the softmax came from (saved), α's gradient and its product with
    // α; the activations the backward keeps (about twelve [n, E] rows and an MLP of 4E per token);
    // four [H, n, n] temporaries of the backward; then the float32 G and relevance. Measured on the
    // GPT-2-small shape at 512 tokens: 1.10 GiB above the forward's peak (docs/benchmarks.md).
    const std::uint64_t perLayer = 4 * maps + n * (12 * E + 2 * 4 * E);
    return 4 * (L * perLayer + 4 * maps + L * maps + L * n * n);
}

std::vector<std::string> gradientClassLabels(const Model& model) {
    const GradientRunner& runner = runnerOf(model);
    return runner.explainsClasses() ? runner.classLabels() : std::vector<std::string>{};
}

GradientMaps gradientSources(const Model& model, const GradientInput& input, const GradientTarget& target,
                             const RunOptions& options, const Progress& progress) {
    const GradientRunner& runner = runnerOf(model);
    const ModelInfo& info = model.info();
    checkInterventions(options, info);
    const std::int64_t n = runner.gradientTokens(input.text, input.image);
    if (n < 1) throw Error("gradient sources: the input is empty");
    const std::uint64_t needed = gradientSourcesBytes(info, n);
    const c10::Device device(info.device.empty() ? std::string("cpu") : info.device);
    if (device.is_cpu()) requireBytes("the gradient sources' backward pass", needed, device);
    const long long steps = 2LL * info.layers;
    RunOptions run = options;
    run.progress = [&](long long done, long long total) {
        return !progress || progress(done * info.layers / std::max(total, 1LL), steps);
    };
    try {
        GradientRun g = runner.runGradients(input.text, input.image, run);
        GradientMaps out;
        out.layers = static_cast<int>(g.alphas.size());
        out.heads = out.layers > 0 ? static_cast<int>(g.alphas[0].size(0)) : 0;
        out.tokens = static_cast<int>(n);
        out.target = pickTarget(model, runner, target, g.outputs);
        out.targetLabel = runner.explainsClasses() ? runner.classLabels().at(static_cast<std::size_t>(out.target))
                                                   : model.tokenLabels({out.target}).at(0);
        const at::Tensor s = g.outputs[out.target];
        out.score = s.item<double>();
        s.backward();
        out.gradWeighted.reserve(static_cast<std::size_t>(out.layers) * out.heads * n * n);
        for (at::Tensor& alpha : g.alphas) {
            const at::Tensor grad = alpha.grad();
            const at::Tensor G = grad.defined() ? (grad * alpha).detach() : at::zeros_like(alpha).detach();
            const at::Tensor f = G.to(at::kCPU, at::kFloat).contiguous();
            out.gradWeighted.insert(out.gradWeighted.end(), f.data_ptr<float>(), f.data_ptr<float>() + f.numel());
            alpha = at::Tensor();  // frees α and its gradient layer by layer
        }
        out.relevance = relevanceOf(out.gradWeighted, out.layers, out.heads, out.tokens);
        if (progress && !progress(steps, steps)) throw Cancelled();
        return out;
    } catch (const c10::Error& e) {
        const std::string what = e.what_without_backtrace();
        const bool memory = what.find("out of memory") != std::string::npos;
        throw Error("gradient sources: " + (memory ? "out of memory on " + info.device + " (the backward needs about " +
                                                             gibString(needed) + ")"
                                                   : what.substr(0, what.find('\n'))));
    }
}

}  // namespace attnscope
