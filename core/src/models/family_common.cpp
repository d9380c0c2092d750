#include "family_common.h"

#include "attnscope/runtime/error.h"
#include "kv_cache.h"
#include "runtime/device.h"
#include "io/json_util.h"
#include "model_text.h"
#include "io/weights.h"

#include <algorithm>

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
    info.weights = weights.describe();
    return info;
}

namespace {
bool streamedTable(const at::Tensor& t) {
    return t.is_cpu() && (t.scalar_type() == at::kHalf || t.scalar_type() == at::kBFloat16);
}
}  // namespace

at::Tensor gatherRows(const at::Tensor& table, const std::vector<std::int64_t>& ids, c10::Device device) {
    if (const QuantisedTable* q = quantisedTable(table)) {
        const std::int64_t width = table.size(1);
        at::Tensor rows = at::empty({static_cast<std::int64_t>(ids.size()), width}, at::kFloat);
        for (std::size_t i = 0; i < ids.size(); ++i) {
            if (ids[i] < 0 || ids[i] >= table.size(0))
                throw Error("token id " + std::to_string(ids[i]) + " is outside the table's " +
                            std::to_string(table.size(0)) + " rows");
            dequantiseTable(*q, ids[i], ids[i] + 1, rows.data_ptr<float>() + static_cast<std::int64_t>(i) * width);
        }
        return rows.to(device);
    }
    at::Tensor rows = table.index_select(0, idTensor(ids, device));
    return streamedTable(table) ? rows.to(at::kFloat) : rows;
}

std::int64_t computeElementSize(const at::Tensor& table) {
    return streamedTable(table) || quantisedTable(table)
                   ? 4
                   : static_cast<std::int64_t>(c10::elementSize(table.scalar_type()));
}

at::Tensor linearRows(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, bool transposed) {
    if (x.dim() == 2 && x.size(0) == 1 && x.is_cpu() && weight.is_cpu() && !x.requires_grad() &&
        !weight.requires_grad() && x.scalar_type() == weight.scalar_type()) {
        at::Tensor y = at::mv(transposed ? weight.t() : weight, x.select(0, 0)).unsqueeze(0);
        return bias.defined() ? y.add_(bias) : y;
    }
    if (transposed) return bias.defined() ? at::addmm(bias, x, weight) : at::mm(x, weight);
    return at::linear(x, weight, bias);
}

at::Tensor denseRows(const at::Tensor& table, std::int64_t begin, std::int64_t end) {
    const QuantisedTable* q = quantisedTable(table);
    if (!q) return table.narrow(0, begin, end - begin);
    at::Tensor out = at::empty({end - begin, table.size(1)}, at::kFloat);
    dequantiseTable(*q, begin, end, out.data_ptr<float>());
    return out;
}

at::Tensor rowsMatmul(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
    const QuantisedTable* quantised = quantisedTable(weight);
    if (!streamedTable(weight) && !quantised) return linearRows(x, weight, bias);
    // 8192 rows of 4096 are 128 MiB in float32: big enough for BLAS, small beside the table.
    const std::int64_t rows = weight.size(0), chunk = std::max<std::int64_t>(1, (32 << 20) / weight.size(1));
    at::Tensor out = at::empty({x.size(0), rows}, x.options());
    at::Tensor buffer = at::empty({std::min(chunk, rows), weight.size(1)}, x.options());
    for (std::int64_t r = 0; r < rows; r += chunk) {
        const std::int64_t len = std::min(chunk, rows - r);
        at::Tensor w = buffer.narrow(0, 0, len);
        if (quantised && x.scalar_type() == at::kFloat)
            dequantiseTable(*quantised, r, r + len, w.data_ptr<float>());
        else if (quantised)
            w.copy_(denseRows(weight, r, r + len));
        else
            w.copy_(weight.narrow(0, r, len));
        out.narrow(1, r, len).copy_(at::mm(x, w.t()));
    }
    if (bias.defined()) out.add_(bias.to(out.scalar_type()));
    return out;
}

FamilyText::FamilyText(const std::filesystem::path& folder, std::int64_t vocabSize)
    : tokenizer_(Tokenizer::fromFolder(folder)), labels_(VocabLabels::forFolder(folder, tokenizer_.get())),
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

BlockInfo blockInfo(const std::string& name, int layers, int heads, int kvHeads, bool causal,
                    std::vector<std::string> queries, std::vector<std::string> keys) {
    BlockInfo block;
    block.name = name;
    block.layers = layers;
    block.heads = heads;
    block.kvHeads = kvHeads;
    block.causal = causal;
    block.queryTokens = std::move(queries);
    block.keyTokens = std::move(keys);
    return block;
}

void requirePlainTokens(const TextInput& input, const std::string& family) {
    if (std::any_of(input.typeIds.begin(), input.typeIds.end(), [](auto t) { return t != 0; }))
        throw Error(family + " models have no token types; give only ids");
    if (std::any_of(input.attend.begin(), input.attend.end(), [](auto a) { return a == 0; }))
        throw Error(family + " models take no padding mask; give only the real tokens");
}

void checkTokenTypes(const TextInput& in, std::int64_t typeVocab, bool zerosAllowed, const std::string& noTypes) {
    const auto n = in.ids.size();
    if (in.typeIds.empty()) return;
    if (in.typeIds.size() != n)
        throw Error("token types: " + std::to_string(in.typeIds.size()) + " given for " + std::to_string(n) +
                    " tokens");
    for (std::size_t i = 0; i < n; ++i) {
        const std::int64_t type = in.typeIds[i];
        if (typeVocab == 0 && (!zerosAllowed || type != 0)) throw Error(noTypes);
        if (typeVocab > 0 && (type < 0 || type >= typeVocab))
            throw Error("token type " + std::to_string(type) + " at position " + std::to_string(i) +
                        " is outside [0, " + std::to_string(typeVocab) + ")");
    }
}

void checkPaddingMask(const TextInput& in) {
    if (in.attend.empty()) return;
    const auto n = in.ids.size();
    if (in.attend.size() != n)
        throw Error("padding mask: " + std::to_string(in.attend.size()) + " values given for " + std::to_string(n) +
                    " tokens");
    for (std::size_t i = 0; i < n; ++i)
        if (in.attend[i] > 1) throw Error("padding mask value at position " + std::to_string(i) + " must be 0 or 1");
    if (std::find(in.attend.begin(), in.attend.end(), 1) == in.attend.end())
        throw Error("padding mask: every token is padding; at least one must be a real token");
}

MaskSpec paddingMask(const TextInput& in, c10::Device device) {
    MaskSpec mask;
    if (std::find(in.attend.begin(), in.attend.end(), 0) != in.attend.end()) {
        const std::vector<std::int64_t> allowed(in.attend.begin(), in.attend.end());
        mask.keyAllowed = idTensor(allowed, device).ne(0);
    }
    return mask;
}

at::Tensor idTensor(const std::vector<std::int64_t>& ids, c10::Device device) {
    return at::tensor(at::ArrayRef<std::int64_t>(ids), at::kLong).to(device);
}

at::Tensor splitHeads(const at::Tensor& x, std::int64_t count, std::int64_t d) {
    return x.view({x.size(0), count, d}).transpose(0, 1).contiguous();
}

at::Tensor mergeHeads(const at::Tensor& x) { return x.transpose(0, 1).reshape({x.size(1), x.size(0) * x.size(2)}); }

at::Tensor activate(const std::string& name, const at::Tensor& x) {
    if (name == "silu" || name == "swish") return at::silu(x);
    if (name == "gelu") return at::gelu(x);
    if (name == "relu") return at::relu(x);
    if (name == "quick_gelu") return x * at::sigmoid(1.702 * x);  // CLIP's
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

AttentionWeights loadAttention(WeightStore& w, const std::string& prefix, std::array<const char*, 4> names,
                               std::int64_t hidden, std::int64_t inner, bool qkvBias, bool oBias) {
    AttentionWeights a;
    a.q = w.linear(prefix + names[0], inner, hidden, qkvBias);
    a.k = w.linear(prefix + names[1], inner, hidden, qkvBias);
    a.v = w.linear(prefix + names[2], inner, hidden, qkvBias);
    a.o = w.linear(prefix + names[3], hidden, inner, oBias);
    return a;
}

at::Tensor attentionBlock(const AttentionWeights& w, const at::Tensor& x, const at::Tensor& kv, std::int64_t heads,
                          std::int64_t d, const ScoreSpec& score, const MaskSpec& mask, const LayerRun& run,
                          BlockCapture& capture, const BlockExtras& extras) {
    at::Tensor q = splitHeads(w.q(x), heads, d), k = splitHeads(w.k(kv), heads, d);
    const at::Tensor v = splitHeads(w.v(kv), heads, d);
    if (extras.rope) q = applyRope(q, *extras.rope), k = applyRope(k, *extras.rope);
    ScoreSpec used = score;
    if (extras.bias) {
        const at::Tensor b = extras.bias(q, k);
        used.bias = score.bias.defined() ? score.bias + b : b;
    }
    at::Tensor keys = k, values = v;
    if (extras.cache) extras.cache->extend(k, v, keys, values);
    const at::Tensor context = mergeHeads(attendDot(q, keys, values, mask, used, run));
    capture.layers.push_back(dotCapture(q, k, used, mask));
    // The value sources: what the heads read here is kv (x̃ = x for post-norm stacks such as BERT).
    if (run.captureValues) recordValues(capture.layers.back(), v, w.o.weight, true, false, run.maskedHeads);
    return w.o(context);
}

Norm loadNorm(WeightStore& weights, const std::string& name, std::int64_t size) {
    if (!weights.has(name + ".weight") && weights.has(name + ".gamma"))  // legacy TF-converted names (BERT)
        return {weights.get(name + ".gamma", {size}), weights.get(name + ".beta", {size})};
    return {weights.get(name + ".weight", {size}), weights.get(name + ".bias", {size})};
}

at::Tensor layerNorm(const at::Tensor& x, const Norm& norm, double eps) {
    return at::layer_norm(x, {norm.weight.size(0)}, norm.weight, norm.bias, eps);
}

at::Tensor rmsNorm(const at::Tensor& x, const at::Tensor& weight, double eps, bool productInFloat) {
    at::Tensor xf = x.to(at::kFloat);
    xf = xf * at::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + eps);
    if (productInFloat) return (xf * weight).to(x.scalar_type());
    return weight * xf.to(x.scalar_type());
}

std::vector<float> nextLogits(const at::Tensor& last, const at::Tensor& head, const at::Tensor& bias) {
    at::Tensor logits = rowsMatmul(last, head, bias).reshape({-1}).to(at::kCPU, at::kFloat).contiguous();
    return std::vector<float>(logits.data_ptr<float>(), logits.data_ptr<float>() + logits.numel());
}

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

std::vector<std::string> classNames(const JsonConfig& c, std::int64_t count) {
    std::vector<std::string> names(static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i) names[i] = "LABEL_" + std::to_string(i);
    if (!c.has("id2label")) return names;
    const auto& map = c.json().at("id2label");
    if (!map.is_object()) c.fail("id2label", "must be an object {\"0\": \"label\", ...}");
    if (static_cast<std::int64_t>(map.size()) != count)
        c.fail("id2label",
               "has " + std::to_string(map.size()) + " labels but the classifier has " + std::to_string(count));
    for (auto it = map.begin(); it != map.end(); ++it) {
        std::size_t used = 0;
        long long id = -1;
        try {
            id = std::stoll(it.key(), &used);
        } catch (const std::exception&) {
        }
        if (used != it.key().size() || id < 0 || id >= count || !it.value().is_string())
            c.fail("id2label", "entry \"" + it.key() + "\": " + jsonExcerpt(it.value()) +
                                       " is not {\"id\": \"label\"} with id < " + std::to_string(count));
        names[static_cast<std::size_t>(id)] = it.value().get<std::string>();
    }
    return names;
}

at::Tensor autogradAlias(const at::Tensor& t) {
    return t.defined() ? at::from_blob(t.data_ptr(), t.sizes(), t.strides(), t.options()) : t;
}

Linear autogradAlias(const Linear& p) { return {autogradAlias(p.weight), autogradAlias(p.bias)}; }

Norm autogradAlias(const Norm& n) { return {autogradAlias(n.weight), autogradAlias(n.bias)}; }

void recordFinalHidden(Trace::Impl& impl, const at::Tensor& hidden) {
    const at::Tensor h = hidden.to(at::kCPU, at::kFloat).contiguous();
    impl.finalHidden.assign(h.data_ptr<float>(), h.data_ptr<float>() + h.numel());
    impl.finalHiddenWidth = static_cast<int>(h.size(1));
}

}  // namespace attnscope
