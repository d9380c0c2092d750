#include "family_common.h"

#include "attnscope/runtime/error.h"
#include "runtime/device.h"
#include "io/json_util.h"
#include "model_text.h"
#include "io/weights.h"

namespace attnscope {

void reportProgress(const Progress& progress, long long done, long long total) {
    if (progress && !progress(done, total)) throw Cancelled();
}

ModelInfo familyInfo(const std::string& family, const std::filesystem::path& folder, const WeightStore& weights,
                     c10::Device device, int layers, int heads, int kvHeads, int headDim, int hidden) {
    ModelInfo info;
    info.family = family;
    info.path = folder;
    info.layers = layers;
    info.heads = heads;
    info.kvHeads = kvHeads;
    info.headDim = headDim;
    info.hidden = hidden;
    info.parameters = weights.parametersUsed();
    info.dtype = weights.storageDtype();
    info.device = deviceName(device);
    return info;
}

FamilyText::FamilyText(const std::filesystem::path& folder, std::int64_t vocabSize)
    : tokenizer_(Tokenizer::fromFolder(folder)),
      labels_(VocabLabels::forFolder(folder, tokenizer_.get())),
      vocabSize_(vocabSize) {}

std::vector<std::string> FamilyText::labels(const std::vector<std::int64_t>& ids) const {
    return labels_.labels(ids, vocabSize_);
}

std::vector<std::int64_t> FamilyText::encode(const std::string& text, const ModelInfo& info) const {
    return encodeModelText(tokenizer_.get(), text, info);
}

void FamilyText::label(Trace::Impl& impl, const std::vector<std::int64_t>& ids) const {
    impl.ids = ids;
    impl.tokens = labels(ids);
    impl.displayTokens = displayLabels(tokenizer_.get(), ids, impl.tokens);
}

BlockInfo selfBlock(int layers, int heads, int kvHeads, bool causal, const std::vector<std::string>& tokens) {
    BlockInfo block;
    block.name = "self";
    block.layers = layers;
    block.heads = heads;
    block.kvHeads = kvHeads;
    block.causal = causal;
    block.queryTokens = block.keyTokens = tokens;
    return block;
}

at::Tensor idTensor(const std::vector<std::int64_t>& ids, c10::Device device) {
    return at::tensor(at::ArrayRef<std::int64_t>(ids), at::kLong).to(device);
}

at::Tensor splitHeads(const at::Tensor& x, std::int64_t count, std::int64_t d) {
    return x.view({x.size(0), count, d}).transpose(0, 1).contiguous();
}

at::Tensor mergeHeads(const at::Tensor& x) {
    return x.transpose(0, 1).reshape({x.size(1), x.size(0) * x.size(2)});
}

at::Tensor activate(const std::string& name, const at::Tensor& x) {
    if (name == "gelu") return at::gelu(x);
    if (name == "relu") return at::relu(x);
    return at::gelu(x, "tanh");  // gelu_new, gelu_pytorch_tanh and gelu_fast are the tanh form
}

void requireKnown(const JsonConfig& config, const std::string& key, const std::string& value,
                  std::initializer_list<const char*> known) {
    std::string list;
    for (const char* name : known) {
        if (value == name) return;
        list += (list.empty() ? "" : ", ") + std::string(name);
    }
    config.fail(key, "'" + value + "' is not supported (" + list + ")");
}

Norm loadNorm(WeightStore& weights, const std::string& name, std::int64_t size) {
    return {weights.get(name + ".weight", {size}), weights.get(name + ".bias", {size})};
}

at::Tensor layerNorm(const at::Tensor& x, const Norm& norm, double eps) {
    return at::layer_norm(x, {norm.weight.size(0)}, norm.weight, norm.bias, eps);
}

std::vector<float> nextLogits(const at::Tensor& last, const at::Tensor& head) {
    at::Tensor logits = at::mm(last, head.t()).reshape({-1}).to(at::kCPU, at::kFloat).contiguous();
    return std::vector<float>(logits.data_ptr<float>(), logits.data_ptr<float>() + logits.numel());
}

void recordFinalHidden(Trace::Impl& impl, const at::Tensor& hidden) {
    const at::Tensor h = hidden.to(at::kCPU, at::kFloat).contiguous();
    impl.finalHidden.assign(h.data_ptr<float>(), h.data_ptr<float>() + h.numel());
    impl.finalHiddenWidth = static_cast<int>(h.size(1));
}

}  // namespace attnscope
