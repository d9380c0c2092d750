#include "seq2seq.h"

#include "attnscope/runtime/error.h"
#include "io/json_util.h"
#include "model_text.h"

#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <limits>

namespace attnscope {

at::Tensor sharedEmbedding(WeightStore& w, std::int64_t rows, std::int64_t hidden) {
    for (const char* name : {"shared.weight", "encoder.embed_tokens.weight", "decoder.embed_tokens.weight"})
        if (w.has(name)) return w.get(name, {rows, hidden});
    return w.get("shared.weight", {rows, hidden});  // names the missing tensor
}

Seq2seqModel::Seq2seqModel(const std::filesystem::path& folder, c10::Device device, std::int64_t sourceVocab)
    : device_(device), source_(folder, sourceVocab),
      targetTokenizer_(Tokenizer::fromFolder(folder, TokenizerSide::Target)),
      targetVocab_(VocabLabels::forFolder(folder, targetTokenizer_.get())) {}

void Seq2seqModel::finishLoad(const std::string& family, const std::filesystem::path& folder,
                              const WeightStore& weights, const Seq2seqShape& shape) {
    shape_ = shape;
    const StackSpec& e = encoder_.spec;
    const auto layers = std::max(encoder_.layers.size(), decoder_.layers.size());
    info_ = familyInfo(family, folder, weights, device_, static_cast<int>(layers), static_cast<int>(e.heads),
                       static_cast<int>(e.heads), static_cast<int>(e.headDim), static_cast<int>(e.hidden));
    info_.vocabSize = shape.sourceVocab;
    info_.maxPositions = shape.maxSource;
    info_.encoderDecoder = true;
}

std::vector<std::string> Seq2seqModel::tokenLabels(const std::vector<std::int64_t>& ids) const {
    return source_.labels(ids);
}

std::vector<std::string> Seq2seqModel::targetDisplay(const std::vector<std::int64_t>& ids) const {
    return displayLabels(targetTokenizer_.get(), ids, targetVocab_.labels(ids, shape_.targetVocab));
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
    requirePlainTokens(input, info_.family);
    return run(input.ids, input.targetIds, input.maxNewTokens, options);
}

namespace {

std::vector<std::int64_t> rowArgmax(const at::Tensor& logits) {
    const at::Tensor best = logits.argmax(-1).to(at::kCPU, at::kLong).contiguous();
    return std::vector<std::int64_t>(best.data_ptr<std::int64_t>(), best.data_ptr<std::int64_t>() + best.numel());
}

}  // namespace

at::Tensor Seq2seqModel::encode(const std::vector<std::int64_t>& ids, const RunOptions& options,
                                BlockCapture& capture) const {
    StackPass pass;
    pass.block = "encoder";
    pass.bias = selfBias(false, static_cast<std::int64_t>(ids.size()));
    const at::Tensor x = runStack(encoder_.spec, encoder_.layers, embed(false, ids), pass, options, capture);
    return stackNorm(encoder_.spec, x, encoder_.finalNorm);
}

at::Tensor Seq2seqModel::decode(const std::vector<std::int64_t>& ids, const at::Tensor& memory,
                                const RunOptions& options, BlockCapture& self, BlockCapture& cross, bool lastOnly,
                                std::vector<KvLayer>* cache, std::int64_t start) const {
    const auto n = static_cast<std::int64_t>(ids.size());
    StackPass pass;
    pass.block = "decoder";
    pass.mask.causal = true;
    pass.bias = selfBias(true, n);
    pass.memory = memory;
    pass.cross = &cross;
    pass.cache = cache;
    // Embeddings and positions are per row, so the new rows' are those of the whole sequence.
    at::Tensor in = embed(true, ids);
    if (cache) {
        in = in.narrow(0, start, n - start);
        if (pass.bias.defined()) pass.bias = pass.bias.narrow(1, start, n - start);
    }
    const at::Tensor x = runStack(decoder_.spec, decoder_.layers, in, pass, options, self);
    at::Tensor out = stackNorm(decoder_.spec, x, decoder_.finalNorm);
    if (outputScale_) out = out * *outputScale_;
    const at::Tensor rows = lastOnly ? out.narrow(0, out.size(0) - 1, 1) : out;
    at::Tensor logits = at::mm(rows, head_.t()).to(at::kFloat);
    if (logitsBias_.defined()) logits.add_(logitsBias_.to(at::kFloat));
    return logits;
}

void Seq2seqModel::decodeGreedy(const at::Tensor& memory, int maxNewTokens, const RunOptions& options,
                                std::vector<std::int64_t>& rows, std::vector<std::int64_t>& outputs, BlockCapture& self,
                                BlockCapture& cross) const {
    // Each step runs only its new row against the cached keys; the Trace is the rows' captures
    // joined: the start token and the generated tokens but the last, as one pass over them.
    rows = {shape_.decoderStart};
    const std::int64_t limit =
            shape_.maxTarget > 0 ? std::min<std::int64_t>(maxNewTokens, shape_.maxTarget) : maxNewTokens;
    std::vector<KvLayer> cache(decoder_.layers.size());
    for (KvLayer& layer : cache) layer.capacity = limit;
    std::vector<BlockCapture> selfRows, crossRows;
    for (;;) {
        selfRows.emplace_back();
        crossRows.emplace_back();
        const auto start = static_cast<std::int64_t>(rows.size()) - 1;
        const std::int64_t next =
                rowArgmax(decode(rows, memory, options, selfRows.back(), crossRows.back(), true, &cache, start)).back();
        outputs.push_back(next);
        reportProgress(options.progress, static_cast<long long>(outputs.size()), limit);
        if ((shape_.eos && next == *shape_.eos) || static_cast<std::int64_t>(outputs.size()) >= limit) break;
        rows.push_back(next);
    }
    self = joinCaptureRows(selfRows, true);
    cross = joinCaptureRows(crossRows, false);
    const at::Tensor bias = selfBias(true, static_cast<std::int64_t>(rows.size()));  // every row's, shared
    if (bias.defined())
        for (LayerCapture& layer : self.layers) layer.score.bias = bias;
}

ForwardFootprint Seq2seqModel::footprint(std::int64_t queries, std::int64_t keys) const {
    const StackSpec &e = encoder_.spec, &d = decoder_.spec;
    const auto layers = static_cast<std::int64_t>(std::max(encoder_.layers.size(), decoder_.layers.size()));
    const std::int64_t heads = std::max(e.heads, d.heads), size = c10::elementSize(head_.scalar_type());
    return {layers,  heads, heads, std::max(e.headDim, d.headDim), e.hidden, std::max(e.ffn, d.ffn),
            queries, keys,  size};
}

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
        decodeGreedy(memory, maxNewTokens, options, rows, outputs, decoder, cross);
    }

    auto impl = std::make_unique<Trace::Impl>();
    source_.label(*impl, source);
    impl->device = device_;
    const std::vector<std::string> sourceShown = impl->displayTokens, targetShown = targetDisplay(rows);
    const int encoderHeads = static_cast<int>(encoder_.spec.heads),
              decoderHeads = static_cast<int>(decoder_.spec.heads);
    const int encoderLayers = static_cast<int>(encoder_.layers.size()),
              decoderLayers = static_cast<int>(decoder_.layers.size());
    impl->infos = {blockInfo("encoder", encoderLayers, encoderHeads, encoderHeads, false, sourceShown, sourceShown),
                   blockInfo("decoder", decoderLayers, decoderHeads, decoderHeads, true, targetShown, targetShown),
                   blockInfo("cross", decoderLayers, decoderHeads, decoderHeads, false, targetShown, sourceShown)};
    impl->blocks = {std::move(encoder), std::move(decoder), std::move(cross)};
    impl->outputIds = outputs;
    impl->outputTokens = targetDisplay(outputs);
    impl->targetLogProbs = std::move(targetLogProbs);
    return std::make_shared<const Trace>(std::move(impl));
}

}  // namespace attnscope
