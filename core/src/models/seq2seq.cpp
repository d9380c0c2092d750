#include "seq2seq.h"

#include "attnscope/runtime/error.h"
#include "io/json_util.h"
#include "model_text.h"

#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <limits>

namespace attnscope {

std::optional<std::int64_t> configTokenId(const JsonConfig& config, const std::string& key,
                                          std::optional<std::int64_t> fallback) {
    if (!config.has(key)) {
        if (!fallback) config.fail(key, "is required");
        return fallback;
    }
    const nlohmann::json& v = config.json().at(key);
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0) config.fail(key, "must be a token id (an integer >= 0)");
    return v.get<std::int64_t>();
}

int configInt(const JsonConfig& config, const std::string& key, int fallback) {
    return config.has(key) ? config.positiveInt(key) : fallback;
}

Seq2seqModel::Seq2seqModel(const std::filesystem::path& folder, c10::Device device, std::int64_t sourceVocab)
    : device_(device), source_(folder, sourceVocab),
      targetTokenizer_(Tokenizer::fromFolder(folder, TokenizerSide::Target)),
      targetVocab_(VocabLabels::forFolder(folder, targetTokenizer_.get())) {}

std::vector<std::string> Seq2seqModel::tokenLabels(const std::vector<std::int64_t>& ids) const {
    return source_.labels(ids);
}

std::vector<std::string> Seq2seqModel::targetLabels(const std::vector<std::int64_t>& ids) const {
    return targetVocab_.labels(ids, shape_.targetVocab);
}

std::vector<std::string> Seq2seqModel::targetDisplay(const std::vector<std::int64_t>& ids) const {
    return displayLabels(targetTokenizer_.get(), ids, targetLabels(ids));
}

std::vector<std::int64_t> Seq2seqModel::encodeTarget(const std::string& text) const {
    std::vector<std::int64_t> labels = encodeModelText(targetTokenizer_.get(), text, info_);
    std::vector<std::int64_t> shifted;
    shifted.push_back(shape_.shiftLastToFront ? labels.back() : shape_.decoderStart);
    shifted.insert(shifted.end(), labels.begin(), labels.end() - 1);
    return shifted;
}

std::shared_ptr<const Trace> Seq2seqModel::runForward(const std::vector<std::int64_t>& ids,
                                                      const RunOptions& options) const {
    return run(ids, {}, TextInput{}.maxNewTokens, options);
}

std::shared_ptr<const Trace> Seq2seqModel::runForwardText(const TextInput& input, const RunOptions& options) const {
    if (std::any_of(input.typeIds.begin(), input.typeIds.end(), [](auto t) { return t != 0; }))
        throw Error(info_.family + " models have no token types; give only ids");
    if (std::any_of(input.attend.begin(), input.attend.end(), [](auto a) { return a == 0; }))
        throw Error(info_.family + " models take no padding mask; give only the real tokens");
    return run(input.ids, input.targetIds, input.maxNewTokens, options);
}

namespace {

BlockInfo seq2seqBlock(const std::string& name, int layers, int heads, bool causal, std::vector<std::string> queries,
                       std::vector<std::string> keys) {
    BlockInfo b;
    b.name = name;
    b.layers = layers;
    b.heads = b.kvHeads = heads;
    b.causal = causal;
    b.queryTokens = std::move(queries);
    b.keyTokens = std::move(keys);
    return b;
}

std::vector<std::int64_t> rowArgmax(const at::Tensor& logits) {
    const at::Tensor best = logits.argmax(-1).to(at::kCPU, at::kLong).contiguous();
    return std::vector<std::int64_t>(best.data_ptr<std::int64_t>(), best.data_ptr<std::int64_t>() + best.numel());
}

}  // namespace

std::shared_ptr<const Trace> Seq2seqModel::run(const std::vector<std::int64_t>& source,
                                               const std::vector<std::int64_t>& target, int maxNewTokens,
                                               const RunOptions& options) const {
    constexpr std::int64_t kNoLimit = std::numeric_limits<std::int64_t>::max();
    checkIds(source, shape_.sourceVocab, shape_.maxSource > 0 ? shape_.maxSource : kNoLimit);
    const bool forced = !target.empty();
    if (forced) {
        if (shape_.maxTarget > 0 && static_cast<std::int64_t>(target.size()) > shape_.maxTarget)
            throw Error("the target has " + std::to_string(target.size()) + " tokens but the decoder has only " +
                        std::to_string(shape_.maxTarget) + " positions");
        for (std::size_t i = 0; i < target.size(); ++i)
            if (target[i] < 0 || target[i] >= shape_.targetVocab)
                throw Error("target id " + std::to_string(target[i]) + " at position " + std::to_string(i) +
                            " is outside the decoder's vocabulary [0, " + std::to_string(shape_.targetVocab) + ")");
    } else if (maxNewTokens < 1) {
        throw Error("max new tokens must be at least 1, got " + std::to_string(maxNewTokens));
    }
    c10::InferenceMode guard;
    const auto S = static_cast<std::int64_t>(source.size());
    const std::int64_t rowsAtMost = forced ? static_cast<std::int64_t>(target.size()) : maxNewTokens;
    requireForwardMemory(footprint(S, S), device_);
    requireForwardMemory(footprint(rowsAtMost, std::max(S, rowsAtMost)), device_);

    BlockCapture encoder, decoder, cross;
    const at::Tensor memory = encode(source, options, encoder);
    std::vector<std::int64_t> rows, outputs;
    std::vector<float> targetLogProbs;
    if (forced) {
        rows = target;
        const at::Tensor logits = decode(rows, memory, options, decoder, cross, false);
        outputs = rowArgmax(logits);
        if (rows.size() > 1) {  // row i predicts target[i + 1]
            const auto T = static_cast<std::int64_t>(rows.size());
            const at::Tensor next = idTensor(std::vector<std::int64_t>(rows.begin() + 1, rows.end()), logits.device());
            const at::Tensor lp = at::log_softmax(logits.narrow(0, 0, T - 1), -1).gather(1, next.unsqueeze(1));
            const at::Tensor cpu = lp.reshape({-1}).to(at::kCPU, at::kFloat).contiguous();
            targetLogProbs.assign(cpu.data_ptr<float>(), cpu.data_ptr<float>() + cpu.numel());
        }
        reportProgress(options.progress, 1, 1);
    } else {
        // Every step re-runs the decoder on the rows so far (no key/value cache): the Trace keeps
        // the last pass, whose rows are the start token and the generated tokens but the last.
        rows = {shape_.decoderStart};
        const std::int64_t limit =
                shape_.maxTarget > 0 ? std::min<std::int64_t>(maxNewTokens, shape_.maxTarget) : maxNewTokens;
        for (;;) {
            decoder = BlockCapture{};
            cross = BlockCapture{};
            const std::int64_t next = rowArgmax(decode(rows, memory, options, decoder, cross, true)).back();
            outputs.push_back(next);
            reportProgress(options.progress, static_cast<long long>(outputs.size()), limit);
            if ((shape_.eos && next == *shape_.eos) || static_cast<std::int64_t>(outputs.size()) >= limit) break;
            rows.push_back(next);
        }
    }

    auto impl = std::make_unique<Trace::Impl>();
    source_.label(*impl, source);
    impl->device = device_;
    const std::vector<std::string> sourceShown = impl->displayTokens, targetShown = targetDisplay(rows);
    impl->infos.push_back(
            seq2seqBlock("encoder", shape_.encoderLayers, shape_.encoderHeads, false, sourceShown, sourceShown));
    impl->infos.push_back(
            seq2seqBlock("decoder", shape_.decoderLayers, shape_.decoderHeads, true, targetShown, targetShown));
    impl->infos.push_back(
            seq2seqBlock("cross", shape_.decoderLayers, shape_.decoderHeads, false, targetShown, sourceShown));
    impl->blocks = {std::move(encoder), std::move(decoder), std::move(cross)};
    impl->outputIds = outputs;
    impl->outputTokens = targetDisplay(outputs);
    impl->targetLogProbs = std::move(targetLogProbs);
    return std::make_shared<const Trace>(std::move(impl));
}

at::Tensor seq2seqLogits(const at::Tensor& hidden, const at::Tensor& head, const at::Tensor& bias, bool lastOnly) {
    const at::Tensor rows = lastOnly ? hidden.narrow(0, hidden.size(0) - 1, 1) : hidden;
    at::Tensor logits = at::mm(rows, head.t()).to(at::kFloat);
    if (bias.defined()) logits.add_(bias.to(at::kFloat));
    return logits;
}

}  // namespace attnscope
