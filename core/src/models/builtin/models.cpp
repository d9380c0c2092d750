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

#include <algorithm>

namespace attnscope {

namespace {

using builtin::Config;

class BuiltinModel : public Model {
public:
    BuiltinModel(const std::filesystem::path& folder, const JsonConfig& json, c10::Device device,
                 const LoadOptions& options)
        : config_(builtin::parseConfig(json)), symbols_(builtin::Symbols::read(folder, config_.task, config_.vocabSize,
                                                                               config_.fileTask, config_.perCharacter)),
          device_(device) {
        c10::InferenceMode guard;
        WeightStore store(folder, device);
        const auto shapes = builtin::parameterShapes(config_);
        long long done = 0;
        for (const auto& [name, shape] : shapes) {
            weights_[name] = store.get(name, shape);
            reportProgress(options.progress, ++done, static_cast<long long>(shapes.size()));
        }
        info_ = familyInfo(json.string("model_type"), folder, store, device,
                           std::max(config_.encoderLayers, config_.decoderLayers), config_.heads, config_.heads,
                           config_.headDim(), config_.dModel);
        info_.vocabSize = config_.vocabSize;
        info_.maxPositions = config_.maxSource;
        info_.task = config_.fileTask ? "file" : taskName(config_.task);
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
        b.kind = config_.siteKind(name == "cross");
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

class BuiltinSeq2seq final : public BuiltinModel {
public:
    using BuiltinModel::BuiltinModel;

    // The decoder is fed <s> then the target's symbols (no </s>: the row fed the last symbol
    // predicts it), as the trainer feeds it.
    std::vector<std::int64_t> encodeTarget(const std::string& text) const override {
        std::vector<std::int64_t> ids;
        try {
            ids = symbols_.encode(text, config_.maxTarget);
        } catch (const Error& e) {
            throw Error(info_.path.filename().string() + ": target " + e.what());
        }
        ids.insert(ids.begin(), builtin::kStart);
        return ids;
    }

protected:
    std::shared_ptr<const Trace> runForward(const std::vector<std::int64_t>& ids,
                                            const RunOptions& options) const override {
        return decodeFor(ids, {}, options);
    }

    std::shared_ptr<const Trace> runForwardText(const TextInput& input, const RunOptions& options) const override {
        if (input.targetIds.empty()) return Model::runForwardText(input, options);  // its checks, then greedy
        TextInput source = input;  // the base's checks of token types and padding, on the source alone
        source.targetIds.clear();
        if (std::any_of(input.typeIds.begin(), input.typeIds.end(), [](auto t) { return t != 0; }) ||
            std::any_of(input.attend.begin(), input.attend.end(), [](auto a) { return a == 0; }))
            return Model::runForwardText(source, options);  // throws naming what is refused
        return decodeFor(input.ids, input.targetIds, options);
    }

private:
    // Without a target: greedy decoding. Every step re-runs the decoder on <s> + the outputs so
    // far; the Trace keeps the last pass, whose rows are exactly <s>, y1, ..., yT (the row fed yi
    // predicts yi+1; the last row predicted </s>, or nothing when max_target_length stopped the
    // decoding) and outputIds = y1..yT.
    // With a target (teacher forcing): one decoder pass on exactly those ids; rows = the ids and
    // outputIds holds, per row, the model's argmax next token (</s> included as itself), so a
    // target equal to the greedy rows gives the greedy outputs followed by </s>.
    std::shared_ptr<const Trace> decodeFor(const std::vector<std::int64_t>& ids,
                                           const std::vector<std::int64_t>& target, const RunOptions& options) const {
        checkIds(ids, config_.vocabSize, config_.maxSource);
        if (!target.empty()) checkTarget(target);
        c10::InferenceMode guard;
        const builtin::Pass pass{&options};
        BlockCapture encoder, decoder, cross;
        const at::Tensor memory = builtin::encode(weights_, config_, idTensor(ids), {}, pass, &encoder);
        std::vector<std::int64_t> fed = target.empty() ? std::vector<std::int64_t>{builtin::kStart} : target, out;
        const long long total = target.empty() ? config_.maxTarget + 1 : 1;
        for (;;) {
            decoder = BlockCapture{};
            cross = BlockCapture{};
            const at::Tensor logits =
                    builtin::decode(weights_, config_, idTensor(fed), memory, {}, pass, &decoder, &cross);
            if (!target.empty()) {
                reportProgress(options.progress, 1, 1);
                const at::Tensor best = logits[0].argmax(-1).to(at::kCPU, at::kLong).contiguous();
                out.assign(best.data_ptr<std::int64_t>(), best.data_ptr<std::int64_t>() + best.numel());
                break;
            }
            reportProgress(options.progress, static_cast<long long>(fed.size()), total);
            if (static_cast<int>(out.size()) == config_.maxTarget) break;
            const std::int64_t next = logits[0][-1].argmax().item<std::int64_t>();
            if (next == builtin::kEnd) break;
            out.push_back(next);
            fed.push_back(next);
        }
        auto impl = newTrace(ids);
        const auto rows = tokenLabels(fed);
        impl->infos.push_back(blockInfo("encoder", config_.encoderLayers, false, impl->tokens, impl->tokens));
        impl->infos.push_back(blockInfo("decoder", config_.decoderLayers, true, rows, rows));
        impl->infos.push_back(blockInfo("cross", config_.decoderLayers, false, rows, impl->tokens));
        impl->blocks = {std::move(encoder), std::move(decoder), std::move(cross)};
        impl->outputIds = out;
        impl->outputTokens = tokenLabels(out);
        return std::make_shared<const Trace>(std::move(impl));
    }

    void checkTarget(const std::vector<std::int64_t>& target) const {
        const std::string name = info_.path.filename().string();
        if (static_cast<int>(target.size()) > config_.maxTarget + 1)
            throw Error(name + ": target ids: " + std::to_string(target.size()) + " ids, but the decoder has " +
                        std::to_string(config_.maxTarget + 1) + " positions (max_target_length + 1)");
        for (std::size_t i = 0; i < target.size(); ++i)
            if (target[i] < 0 || target[i] >= config_.vocabSize)
                throw Error(name + ": target id " + std::to_string(target[i]) + " at position " + std::to_string(i) +
                            " is outside the vocabulary [0, " + std::to_string(config_.vocabSize) + ")");
        if (target.front() != builtin::kStart)
            throw Error(name + ": target ids must start with the decoder start symbol <s> (id " +
                        std::to_string(builtin::kStart) + "), got " + std::to_string(target.front()));
    }
};

class BuiltinClassifier final : public BuiltinModel {
public:
    using BuiltinModel::BuiltinModel;

protected:
    std::shared_ptr<const Trace> runForward(const std::vector<std::int64_t>& ids,
                                            const RunOptions& options) const override {
        checkIds(ids, config_.vocabSize, config_.maxSource);
        c10::InferenceMode guard;
        BlockCapture capture;
        const at::Tensor encoded =
                builtin::encode(weights_, config_, idTensor(ids), {}, builtin::Pass{&options}, &capture);
        const at::Tensor probs =
                at::softmax(builtin::classify(weights_, encoded)[0], -1).to(at::kCPU, at::kFloat).contiguous();
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
    return std::make_shared<const BuiltinSeq2seq>(folder, config, device, options);
}

std::shared_ptr<const Model> loadBuiltinClassifier(const std::filesystem::path& folder, const JsonConfig& config,
                                                   c10::Device device, const LoadOptions& options) {
    return std::make_shared<const BuiltinClassifier>(folder, config, device, options);
}

}  // namespace attnscope
