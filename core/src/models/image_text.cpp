#include "image_text.h"

#include "attnscope/runtime/error.h"
#include "io/weights.h"
#include "runtime/memory.h"

#include <cmath>

namespace attnscope {

const StackNames kClipLayerNames{
        "self_attn.", {"q_proj", "k_proj", "v_proj", "out_proj"}, "layer_norm1", "", "", "mlp.fc1", "", "mlp.fc2",
        "layer_norm2"};

JsonConfig subConfig(const JsonConfig& c, const std::string& key) {
    const std::filesystem::path label = c.file().string() + " (" + key + ")";
    if (!c.has(key)) return JsonConfig(nlohmann::json::object(), label);
    const nlohmann::json& v = c.json().at(key);
    if (!v.is_object()) c.fail(key, "must be an object, found " + jsonExcerpt(v));
    return JsonConfig(v, label);
}

TowerConfig readTowerConfig(const JsonConfig& c, TowerConfig d) {
    auto integer = [&](const char* key, int fallback) { return c.has(key) ? c.positiveInt(key, 1 << 20) : fallback; };
    TowerConfig t;
    t.hidden = integer("hidden_size", d.hidden);
    t.inner = integer("intermediate_size", d.inner);
    t.layers = integer("num_hidden_layers", d.layers);
    t.heads = integer("num_attention_heads", d.heads);
    t.eps = c.positiveNumber("layer_norm_eps", d.eps);
    t.activation = c.string("hidden_act", d.activation);
    requireKnown(c, "hidden_act", t.activation, {"quick_gelu", "gelu", "gelu_new", "gelu_pytorch_tanh", "relu"});
    if (t.hidden % t.heads != 0)
        c.fail("num_attention_heads",
               "(" + std::to_string(t.heads) + ") must divide hidden_size (" + std::to_string(t.hidden) + ")");
    return t;
}

Tower loadTower(WeightStore& w, const TowerConfig& c, const std::string& prefix, const std::function<void()>& step) {
    Tower t;
    t.config = c;
    t.spec = scaledStack(c.hidden, c.heads, c.inner, c.eps, c.activation);
    t.spec.preNorm = true;
    t.layers = loadStack(w, t.spec, kClipLayerNames, prefix, c.layers, step);
    return t;
}

at::Tensor Tower::run(const at::Tensor& x, const MaskSpec& mask, const std::string& name,
                      const std::vector<std::string>& labels, const RunOptions& options, Trace::Impl& impl,
                      at::Tensor* lastInput) const {
    const auto L = static_cast<std::int64_t>(layers.size()), n = x.size(0);
    requireForwardMemory({L, spec.heads, spec.heads, spec.headDim, spec.hidden, spec.ffn, n, n,
                          static_cast<std::int64_t>(c10::elementSize(x.scalar_type()))},
                         x.device());
    StackPass pass;
    pass.mask = mask;
    pass.block = name;
    if (lastInput)
        pass.afterLayer = [&](int l, const at::Tensor& input, const at::Tensor& output) {
            if (l + 1 == L) *lastInput = input;
            return output;
        };
    BlockCapture capture;
    const at::Tensor out = runStack(spec, layers, x, pass, options, capture);
    impl.infos.push_back(blockInfo(name, static_cast<int>(L), static_cast<int>(spec.heads),
                                   static_cast<int>(spec.heads), mask.causal, labels, labels));
    impl.blocks.push_back(std::move(capture));
    return out;
}

TextTower loadTextTower(WeightStore& w, const ImageTextSizes& k, const std::function<void()>& step) {
    const std::int64_t T = k.text.hidden;
    TextTower t;
    t.tokens = w.get("text_model.embeddings.token_embedding.weight", {k.vocab, T});
    t.positions = w.get("text_model.embeddings.position_embedding.weight", {k.positions, T});
    t.tower = loadTower(w, k.text, "text_model.encoder.layers.", step);
    t.finalNorm = loadNorm(w, "text_model.final_layer_norm", T);
    return t;
}

at::Tensor TextTower::run(const std::vector<std::int64_t>& ids, const MaskSpec& mask,
                          const std::vector<std::string>& labels, const RunOptions& options, Trace::Impl& impl) const {
    const auto n = static_cast<std::int64_t>(ids.size());
    const at::Tensor x = tokens.index_select(0, idTensor(ids, tokens.device())) + positions.narrow(0, 0, n);
    return layerNorm(tower.run(x, mask, "text", labels, options, impl), finalNorm, tower.config.eps);
}

double loadScalar(WeightStore& w, const std::string& name) {
    const auto shape = w.shape(name);
    if (!shape) throw Error("the weights have no '" + name + "'");
    if (!(shape->empty() || (shape->size() == 1 && shape->front() == 1)))
        throw Error("the weights' '" + name + "' must hold one number (shape [] or [1])");
    return w.get(name, *shape).to(at::kCPU, at::kDouble).reshape({-1})[0].item<double>();
}

void scoreSimilarity(ImageTextScore& s, const at::Tensor& image, const at::Tensor& text, double scale, double bias) {
    const at::Tensor u = cpuDouble(image).reshape({-1}), t = cpuDouble(text).reshape({-1});
    s.present = true;
    s.imageNorm = u.norm().item<double>();
    s.textNorm = t.norm().item<double>();
    s.cosine = (u / s.imageNorm).dot(t / s.textNorm).item<double>();
    s.logitScale = scale;
    s.logitBias = bias;
    s.logit = scale * s.cosine + bias;
}

at::Tensor attentionPieces(const AttentionWeights& w, const at::Tensor& query, const at::Tensor& keys, std::int64_t H,
                           const LayerRun& run) {
    const Linear q = cpuDouble(w.q), k = cpuDouble(w.k), v = cpuDouble(w.v), o = cpuDouble(w.o);
    const at::Tensor x = cpuDouble(query), kv = cpuDouble(keys);
    const std::int64_t E = o.weight.size(0), d = q.weight.size(0) / H, m = kv.size(0);
    const at::Tensor qh = q(x).reshape({H, d});                      // [H, d]
    const at::Tensor kh = k(kv).reshape({m, H, d}).transpose(0, 1);  // [H, m, d]
    const at::Tensor vh = v(kv).reshape({m, H, d}).transpose(0, 1);  // [H, m, d]
    const at::Tensor logits = at::einsum("hd,hmd->hm", {qh, kh}) / std::sqrt(static_cast<double>(d));
    at::Tensor alpha = at::softmax(logits / run.temperature, -1);  // [H, m]
    for (int h : run.maskedHeads)
        if (h >= 0 && h < H) alpha[h].zero_();
    // W_O^h: out_proj's columns h·d .. h·d + d, so piece_hj = α_hj · v_j^h (W_O^h)ᵀ.
    const at::Tensor wo = o.weight.reshape({E, H, d}).permute({1, 2, 0});  // [H, d, E]
    return at::bmm(vh, wo) * alpha.unsqueeze(-1);                          // [H, m, E]
}

at::Tensor cpuDouble(const at::Tensor& x) { return x.defined() ? x.to(at::kCPU, at::kDouble) : x; }
Norm cpuDouble(const Norm& n) { return {cpuDouble(n.weight), cpuDouble(n.bias)}; }
Linear cpuDouble(const Linear& l) { return {cpuDouble(l.weight), cpuDouble(l.bias)}; }

void checkImageText(const std::string& family, const TextInput& text, std::int64_t positions, std::int64_t vocab) {
    if (!text.typeIds.empty() || !text.attend.empty() || !text.targetIds.empty())
        throw Error(family + " takes token ids only (no token types, padding mask or target)");
    if (text.ids.empty()) throw Error(family + " needs a text of at least one token");
    if (static_cast<std::int64_t>(text.ids.size()) > positions)
        throw Error("the text has " + std::to_string(text.ids.size()) + " tokens; " + family + "'s text tower has " +
                    std::to_string(positions) + " positions (max_position_embeddings)");
    for (std::int64_t id : text.ids)
        if (id < 0 || id >= vocab)
            throw Error("token id " + std::to_string(id) + " is outside " + family + "'s vocabulary [0, " +
                        std::to_string(vocab) + ")");
}

void checkFixedImageSize(const std::filesystem::path& folder, const ImagePreprocess& preprocess, int imageSize) {
    const std::string file = (folder / "preprocessor_config.json").string();
    const auto [w, h] = fixedOutputSize(preprocess);
    if (w == 0)
        throw Error(file + ": 'size' is a shortest edge without a center crop, so the input size would vary "
                           "with the image; give 'crop_size' or a fixed 'size'");
    if (w != h || w != imageSize)
        throw Error(file + ": the processed image is " + std::to_string(w) + "×" + std::to_string(h) +
                    " but config.json's vision_config image_size is " + std::to_string(imageSize));
}

void readImageTextSizes(const JsonConfig& text, const JsonConfig& vision, ImageTextSizes& k) {
    k.text = readTowerConfig(text, k.text);
    k.vision = readTowerConfig(vision, k.vision);
    if (text.has("vocab_size")) k.vocab = text.positiveInt("vocab_size");
    if (text.has("max_position_embeddings")) k.positions = text.positiveInt("max_position_embeddings", 1 << 20);
    if (vision.has("image_size")) k.imageSize = vision.positiveInt("image_size", 1 << 14);
    if (vision.has("patch_size")) k.patch = vision.positiveInt("patch_size", 1 << 14);
    if (vision.has("num_channels") && vision.positiveInt("num_channels") != 3) vision.fail("num_channels", "must be 3");
    if (k.imageSize % k.patch != 0)
        vision.fail("image_size", "(" + std::to_string(k.imageSize) + ") must be a multiple of patch_size (" +
                                          std::to_string(k.patch) + ")");
}

}  // namespace attnscope
