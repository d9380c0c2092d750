// T5 (model_type "t5": T5 1.0, T5 1.1, Flan-T5) as Hugging Face's T5ForConditionalGeneration:
// pre-norm blocks with RMS layer norms (no bias, no mean), attention without 1/√d scaling and
// without biases, heads of width d_kv independent of d_model, a bucketed relative position bias
// computed by the first layer of each stack and added in every layer (bidirectional in the
// encoder, causal buckets in the decoder, none in cross-attention), feed-forward "relu"
// (wi, wo) or gated ("gated-gelu": gelu_new(wi_0 x) · wi_1 x), one shared embedding, and with
// tied embeddings the decoder output scaled by d_model^-0.5 before the head.
#include "attnscope/runtime/error.h"
#include "families.h"
#include "seq2seq.h"

#include <c10/core/InferenceMode.h>

#include <cmath>

namespace attnscope {

namespace {

struct T5Config {
    int vocab = 32128, dModel = 512, dKv = 64, dFf = 2048, layers = 6, decoderLayers = 6, heads = 8;
    int buckets = 32, maxDistance = 128;
    double eps = 1e-6;
    std::string activation = "relu";  // dense_act_fn
    bool gated = false;
    bool tied = true;
    std::int64_t decoderStart = 0;
    std::optional<std::int64_t> eos;
};

T5Config parseT5Config(const JsonConfig& c) {
    T5Config t;
    t.vocab = configInt(c, "vocab_size", t.vocab);
    t.dModel = configInt(c, "d_model", t.dModel);
    t.dKv = configInt(c, "d_kv", t.dKv);
    t.dFf = configInt(c, "d_ff", t.dFf);
    t.layers = configInt(c, "num_layers", t.layers);
    t.decoderLayers = configInt(c, "num_decoder_layers", t.layers);
    t.heads = configInt(c, "num_heads", t.heads);
    t.buckets = configInt(c, "relative_attention_num_buckets", t.buckets);
    t.maxDistance = configInt(c, "relative_attention_max_distance", t.maxDistance);
    t.eps = c.positiveNumber("layer_norm_epsilon", 1e-6);
    t.tied = c.boolean("tie_word_embeddings", true);
    // feed_forward_proj is "ACT" or "gated-ACT"; "gated-gelu" means gelu_new (T5Config).
    const std::string proj = c.string("feed_forward_proj", "relu");
    const auto dash = proj.find('-');
    t.gated = dash != std::string::npos;
    if (t.gated && proj.substr(0, dash) != "gated")
        c.fail("feed_forward_proj", "'" + proj + "' is not ACT or gated-ACT (relu, gated-gelu, ...)");
    t.activation = t.gated ? proj.substr(dash + 1) : proj;
    if (proj == "gated-gelu") t.activation = "gelu_new";
    requireKnown(c, "feed_forward_proj", t.activation, {"relu", "gelu", "gelu_new", "silu", "swish"});
    if (t.buckets < 4) c.fail("relative_attention_num_buckets", "must be at least 4");
    t.decoderStart = *configTokenId(c, "decoder_start_token_id", 0);
    t.eos = configTokenId(c, "eos_token_id", 1);
    return t;
}

// T5Attention._relative_position_bucket for relative position rel = key - query, with its float32
// logarithm so that bucket edges fall where Hugging Face's do.
std::int64_t relativeBucket(std::int64_t rel, bool bidirectional, int buckets, int maxDistance) {
    std::int64_t out = 0;
    int n = buckets;
    if (bidirectional) {
        n /= 2;
        if (rel > 0) out += n;
        rel = std::abs(rel);
    } else {
        rel = -std::min<std::int64_t>(rel, 0);
    }
    const int exact = n / 2;
    if (rel < exact) return out + rel;
    const float scaled = std::log(static_cast<float>(rel) / static_cast<float>(exact)) /
                         static_cast<float>(std::log(static_cast<double>(maxDistance) / exact)) *
                         static_cast<float>(n - exact);
    return out + std::min<std::int64_t>(exact + static_cast<std::int64_t>(scaled), n - 1);
}

struct FeedForward {
    Linear wi, wi1, wo;  // wi is wi_0 when gated
    at::Tensor norm;
};

struct Block {
    AttentionWeights self, cross;
    at::Tensor selfNorm, crossNorm;
    FeedForward ff;
};

class T5Model final : public Seq2seqModel {
public:
    T5Model(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
            const LoadOptions& options)
        : Seq2seqModel(folder, device, parseT5Config(config).vocab), cfg_(parseT5Config(config)) {
        c10::InferenceMode guard;
        WeightStore w(folder, device);
        w.requireMemory(options.memoryLimitBytes);
        const std::int64_t E = cfg_.dModel, inner = static_cast<std::int64_t>(cfg_.heads) * cfg_.dKv;
        const long long total = 2 + cfg_.layers + cfg_.decoderLayers;
        long long done = 0;
        auto step = [&] { reportProgress(options.progress, ++done, total); };
        // The encoder and decoder share `shared`; checkpoints may keep only one of its tied copies.
        const char* names[] = {"shared.weight", "encoder.embed_tokens.weight", "decoder.embed_tokens.weight"};
        std::string embedName = names[0];
        for (const char* n : names)
            if (w.has(n)) {
                embedName = n;
                break;
            }
        embed_ = w.get(embedName, {cfg_.vocab, E});
        head_ = cfg_.tied ? embed_ : w.get("lm_head.weight", {cfg_.vocab, E});
        auto attention = [&](const std::string& p) {
            return loadAttention(w, p, {"q", "k", "v", "o"}, E, inner, false, false);
        };
        auto feedForward = [&](const std::string& p) {
            FeedForward f;
            if (cfg_.gated) {
                f.wi = w.linear(p + "DenseReluDense.wi_0", cfg_.dFf, E, false);
                f.wi1 = w.linear(p + "DenseReluDense.wi_1", cfg_.dFf, E, false);
            } else {
                f.wi = w.linear(p + "DenseReluDense.wi", cfg_.dFf, E, false);
            }
            f.wo = w.linear(p + "DenseReluDense.wo", E, cfg_.dFf, false);
            f.norm = w.get(p + "layer_norm.weight", {E});
            return f;
        };
        for (int l = 0; l < cfg_.layers; ++l) {
            const std::string p = "encoder.block." + std::to_string(l) + ".layer.";
            Block b;
            b.self = attention(p + "0.SelfAttention.");
            b.selfNorm = w.get(p + "0.layer_norm.weight", {E});
            b.ff = feedForward(p + "1.");
            encoder_.push_back(std::move(b));
            step();
        }
        for (int l = 0; l < cfg_.decoderLayers; ++l) {
            const std::string p = "decoder.block." + std::to_string(l) + ".layer.";
            Block b;
            b.self = attention(p + "0.SelfAttention.");
            b.selfNorm = w.get(p + "0.layer_norm.weight", {E});
            b.cross = attention(p + "1.EncDecAttention.");
            b.crossNorm = w.get(p + "1.layer_norm.weight", {E});
            b.ff = feedForward(p + "2.");
            decoder_.push_back(std::move(b));
            step();
        }
        encoderBias_ = w.get("encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight",
                             {cfg_.buckets, cfg_.heads});
        decoderBias_ = w.get("decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight",
                             {cfg_.buckets, cfg_.heads});
        encoderNorm_ = w.get("encoder.final_layer_norm.weight", {E});
        decoderNorm_ = w.get("decoder.final_layer_norm.weight", {E});
        step();

        info_ = familyInfo("t5", folder, w, device, std::max(cfg_.layers, cfg_.decoderLayers), cfg_.heads, cfg_.heads,
                           cfg_.dKv, cfg_.dModel);
        info_.vocabSize = cfg_.vocab;
        info_.maxPositions = 0;  // relative positions: no table
        info_.encoderDecoder = true;
        info_.notes = {"relative position bias (" + std::to_string(cfg_.buckets) + " buckets, max distance " +
                               std::to_string(cfg_.maxDistance) + ")",
                       "no 1/√d scaling",
                       cfg_.gated ? "gated " + cfg_.activation + " feed-forward" : cfg_.activation + " feed-forward"};
        if (cfg_.layers != cfg_.decoderLayers)
            info_.notes.push_back(std::to_string(cfg_.layers) + " encoder, " + std::to_string(cfg_.decoderLayers) +
                                  " decoder layers");
        Seq2seqShape shape;
        shape.sourceVocab = shape.targetVocab = cfg_.vocab;
        shape.decoderStart = cfg_.decoderStart;
        shape.eos = cfg_.eos;
        shape.encoderHeads = shape.decoderHeads = cfg_.heads;
        shape.encoderLayers = cfg_.layers;
        shape.decoderLayers = cfg_.decoderLayers;
        setShape(shape);
    }

protected:
    at::Tensor encode(const std::vector<std::int64_t>& ids, const RunOptions& options,
                      BlockCapture& capture) const override {
        at::Tensor x = embed_.index_select(0, idTensor(ids, device_));
        ScoreSpec score;
        score.bias = positionBias(encoderBias_, x.size(0), true);
        for (int l = 0; l < cfg_.layers; ++l) {
            const Block& b = encoder_[l];
            const at::Tensor h = rmsNorm(x, b.selfNorm, cfg_.eps);
            x = x +
                attentionBlock(b.self, h, h, cfg_.heads, cfg_.dKv, score, {}, layerRun(options, "encoder", l), capture);
            x = x + feedForward(b.ff, x);
        }
        return rmsNorm(x, encoderNorm_, cfg_.eps);
    }

    at::Tensor decode(const std::vector<std::int64_t>& ids, const at::Tensor& memory, const RunOptions& options,
                      BlockCapture& self, BlockCapture& cross, bool lastOnly) const override {
        at::Tensor x = embed_.index_select(0, idTensor(ids, device_));
        ScoreSpec selfScore, crossScore;
        selfScore.bias = positionBias(decoderBias_, x.size(0), false);
        MaskSpec causal;
        causal.causal = true;
        for (int l = 0; l < cfg_.decoderLayers; ++l) {
            const Block& b = decoder_[l];
            at::Tensor h = rmsNorm(x, b.selfNorm, cfg_.eps);
            x = x + attentionBlock(b.self, h, h, cfg_.heads, cfg_.dKv, selfScore, causal,
                                   layerRun(options, "decoder", l), self);
            h = rmsNorm(x, b.crossNorm, cfg_.eps);
            x = x + attentionBlock(b.cross, h, memory, cfg_.heads, cfg_.dKv, crossScore, {},
                                   layerRun(options, "cross", l), cross);
            x = x + feedForward(b.ff, x);
        }
        at::Tensor out = rmsNorm(x, decoderNorm_, cfg_.eps);
        if (cfg_.tied) out = out * std::pow(static_cast<double>(cfg_.dModel), -0.5);  // rescale before the tied head
        return seq2seqLogits(out, head_, {}, lastOnly);
    }

    ForwardFootprint footprint(std::int64_t queries, std::int64_t keys) const override {
        return {std::max(cfg_.layers, cfg_.decoderLayers),
                cfg_.heads,
                cfg_.heads,
                cfg_.dKv,
                cfg_.dModel,
                cfg_.dFf,
                queries,
                keys,
                static_cast<std::int64_t>(c10::elementSize(embed_.scalar_type()))};
    }

private:
    // [H, n, n] bias of the relative positions key - query through table [buckets, H].
    at::Tensor positionBias(const at::Tensor& table, std::int64_t n, bool bidirectional) const {
        std::vector<std::int64_t> buckets(static_cast<std::size_t>(n * n));
        for (std::int64_t i = 0; i < n; ++i)
            for (std::int64_t j = 0; j < n; ++j)
                buckets[static_cast<std::size_t>(i * n + j)] =
                        relativeBucket(j - i, bidirectional, cfg_.buckets, cfg_.maxDistance);
        return table.index_select(0, idTensor(buckets, device_))
                .view({n, n, cfg_.heads})
                .permute({2, 0, 1})
                .contiguous();
    }

    at::Tensor feedForward(const FeedForward& f, const at::Tensor& x) const {
        const at::Tensor h = rmsNorm(x, f.norm, cfg_.eps);
        at::Tensor a = activate(cfg_.activation, f.wi(h));
        if (cfg_.gated) a = a * f.wi1(h);
        return f.wo(a);
    }

    T5Config cfg_;
    at::Tensor embed_, head_, encoderBias_, decoderBias_, encoderNorm_, decoderNorm_;
    std::vector<Block> encoder_, decoder_;
};

}  // namespace

std::shared_ptr<const Model> loadT5(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
                                    const LoadOptions& options) {
    return std::make_shared<const T5Model>(folder, config, device, options);
}

}  // namespace attnscope
