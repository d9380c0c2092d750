// The built-in model families as attnscope::Model: "attnscope-seq2seq" (greedy decoding, blocks
// encoder / decoder / cross) and "attnscope-classifier" (block self, class probabilities).
#include "attnscope/runtime/error.h"
#include "config.h"
#include "models/families.h"
#include "models/family_common.h"
#include "net.h"
#include "symbols.h"
#include "tokenizer/vocab_labels.h"
#include "io/weights.h"

#include <c10/core/InferenceMode.h>

namespace attnscope {

namespace {

using builtin::Config;

class BuiltinModel : public Model {
public:
    BuiltinModel(const std::filesystem::path& folder, const JsonConfig& json, c10::Device device, const LoadOptions& options)
        : config_(builtin::parseConfig(json)),
          symbols_(builtin::Symbols::read(folder, config_.task, config_.vocabSize)),
          device_(device) {
        c10::InferenceMode guard;
        WeightStore store(folder, device);
        const auto shapes = builtin::parameterShapes(config_);
        long long done = 0;
        for (const auto& [name, shape] : shapes) {
            weights_[name] = store.get(name, shape);
            reportProgress(options.progress, ++done, static_cast<long long>(shapes.size()));
        }
        info_ = familyInfo(json.string("model_type"), folder, store, device, std::max(config_.encoderLayers, config_.decoderLayers),
                           config_.heads, config_.heads, config_.headDim(), config_.dModel);
        info_.vocabSize = config_.vocabSize;
        info_.maxPositions = config_.maxSource;
        info_.task = taskName(config_.task);
        info_.attention = kindName(config_.kind);
        info_.encoderDecoder = config_.seq2seq;
    }

    const ModelInfo& info() const override { return info_; }

    std::vector<std::string> tokenLabels(const std::vector<std::int64_t>& ids) const override {
        return symbols_.labels(ids);
    }

    std::vector<std::int64_t> encodeText(const std::string& text) const override {
        try {
            return symbols_.encode(text, config_.maxSource);
        } catch (const Error& e) {
            throw Error(info_.path.filename().string() + ": " + e.what());
        }
    }

    // The symbols split text (encodeText), though they are no tokenizer.json pipeline.
    bool hasTokenizer() const override { return true; }

protected:
    BlockInfo blockInfo(const std::string& name, int layers, bool causal, std::vector<std::string> queries,
                        std::vector<std::string> keys) const {
        BlockInfo b;
        b.name = name;
        b.layers = layers;
        b.heads = b.kvHeads = config_.heads;
        b.causal = causal;
        b.kind = config_.kind;
        b.queryTokens = std::move(queries);
        b.keyTokens = std::move(keys);
        return b;
    }

    at::Tensor idTensor(const std::vector<std::int64_t>& ids) const {  // [1, n]
        return attnscope::idTensor(ids, device_).view({1, -1});
    }

    // A trace of the input ids, labelled, on this model's device.
    std::unique_ptr<Trace::Impl> newTrace(const std::vector<std::int64_t>& ids) const {
        auto impl = std::make_unique<Trace::Impl>();
        impl->ids = ids;
        impl->tokens = tokenLabels(ids);
        impl->device = device_;
        return impl;
    }

    Config config_;
    builtin::Symbols symbols_;
    c10::Device device_;
    builtin::Weights weights_;
    ModelInfo info_;
};

class Seq2seqModel final : public BuiltinModel {
public:
    using BuiltinModel::BuiltinModel;

protected:
    // Greedy decoding. Every step re-runs the decoder on <s> + the outputs so far; the Trace keeps
    // the last pass, whose rows are exactly <s>, y1, ..., yT (the row fed yi predicts yi+1; the
    // last row predicted </s>, or nothing when max_target_length stopped the decoding).
    std::shared_ptr<const Trace> runForward(const std::vector<std::int64_t>& ids, const RunOptions& options) const override {
        checkIds(ids, config_.vocabSize, config_.maxSource);
        c10::InferenceMode guard;
        const builtin::Pass pass{&options};
        BlockCapture encoder, decoder, cross;
        const at::Tensor memory = builtin::encode(weights_, config_, idTensor(ids), {}, pass, &encoder);
        std::vector<std::int64_t> fed = {builtin::kStart}, out;
        const long long total = config_.maxTarget + 1;
        for (;;) {
            decoder = BlockCapture{};
            cross = BlockCapture{};
            const at::Tensor logits = builtin::decode(weights_, config_, idTensor(fed), memory, {}, pass, &decoder, &cross);
            reportProgress(options.progress, static_cast<long long>(fed.size()), total);
            if (static_cast<int>(out.size()) == config_.maxTarget) break;
            const std::int64_t next = logits[0][-1].argmax().item<std::int64_t>();
            if (next == builtin::kEnd) break;
            out.push_back(next);
            fed.push_back(next);
        }
        auto impl = newTrace(ids);
        const auto target = tokenLabels(fed);
        impl->infos.push_back(blockInfo("encoder", config_.encoderLayers, false, impl->tokens, impl->tokens));
        impl->infos.push_back(blockInfo("decoder", config_.decoderLayers, true, target, target));
        impl->infos.push_back(blockInfo("cross", config_.decoderLayers, false, target, impl->tokens));
        impl->blocks = {std::move(encoder), std::move(decoder), std::move(cross)};
        impl->outputIds = out;
        impl->outputTokens = tokenLabels(out);
        return std::make_shared<const Trace>(std::move(impl));
    }
};

class ClassifierModel final : public BuiltinModel {
public:
    using BuiltinModel::BuiltinModel;

protected:
    std::shared_ptr<const Trace> runForward(const std::vector<std::int64_t>& ids, const RunOptions& options) const override {
        checkIds(ids, config_.vocabSize, config_.maxSource);
        c10::InferenceMode guard;
        BlockCapture capture;
        const at::Tensor encoded = builtin::encode(weights_, config_, idTensor(ids), {}, builtin::Pass{&options}, &capture);
        const at::Tensor probs = at::softmax(builtin::classify(weights_, encoded)[0], -1).to(at::kCPU, at::kFloat).contiguous();
        reportProgress(options.progress, 1, 1);
        auto impl = newTrace(ids);
        impl->infos.push_back(blockInfo("self", config_.encoderLayers, false, impl->tokens, impl->tokens));
        impl->blocks.push_back(std::move(capture));
        impl->classLabels = config_.labels;
        impl->classProbabilities.assign(probs.data_ptr<float>(), probs.data_ptr<float>() + probs.numel());
        return std::make_shared<const Trace>(std::move(impl));
    }
};

}  // namespace

std::shared_ptr<const Model> loadBuiltinSeq2seq(const std::filesystem::path& folder, const JsonConfig& config,
                                                c10::Device device, const LoadOptions& options) {
    return std::make_shared<const Seq2seqModel>(folder, config, device, options);
}

std::shared_ptr<const Model> loadBuiltinClassifier(const std::filesystem::path& folder, const JsonConfig& config,
                                                   c10::Device device, const LoadOptions& options) {
    return std::make_shared<const ClassifierModel>(folder, config, device, options);
}

}  // namespace attnscope
