// BART and mBART (model_type "bart", "mbart") as Hugging Face's BartForConditionalGeneration /
// MBartForConditionalGeneration, and the layout Marian shares with them (bart_like.h):
//   bart:  post-LN blocks, learned positions offset by 2, layernorm_embedding;
//   mbart: pre-LN blocks with final encoder/decoder layer norms, otherwise as BART;
//   both:  embeddings × √d_model when scale_embedding (default false), head tied to the shared
//          embedding unless tie_word_embeddings is false, plus final_logits_bias.
#include "bart_like.h"

#include "attnscope/runtime/error.h"
#include "families.h"
#include "seq2seq.h"

#include <c10/core/InferenceMode.h>

#include <cmath>

namespace attnscope {

namespace {

struct BartConfig {
    int vocab = 0, decoderVocab = 0, positions = 1024, dModel = 1024;
    int encoderLayers = 12, decoderLayers = 12, encoderHeads = 16, decoderHeads = 16, encoderFfn = 4096,
        decoderFfn = 4096;
    std::string activation = "gelu";
    bool scaleEmbedding = false, tied = true, shared = true;
    std::int64_t decoderStart = 0;
    std::optional<std::int64_t> eos;
};

BartConfig parseBartConfig(const JsonConfig& c, const BartStyle& s) {
    BartConfig b;
    b.vocab = configInt(c, "vocab_size", s.vocab);
    b.decoderVocab = s.marianVocab ? configInt(c, "decoder_vocab_size", b.vocab) : b.vocab;
    b.positions = configInt(c, "max_position_embeddings", b.positions);
    b.dModel = configInt(c, "d_model", b.dModel);
    b.encoderLayers = configInt(c, "encoder_layers", b.encoderLayers);
    b.decoderLayers = configInt(c, "decoder_layers", b.decoderLayers);
    b.encoderHeads = configInt(c, "encoder_attention_heads", b.encoderHeads);
    b.decoderHeads = configInt(c, "decoder_attention_heads", b.decoderHeads);
    b.encoderFfn = configInt(c, "encoder_ffn_dim", b.encoderFfn);
    b.decoderFfn = configInt(c, "decoder_ffn_dim", b.decoderFfn);
    b.activation = c.string("activation_function", "gelu");
    requireKnown(c, "activation_function", b.activation, {"gelu", "relu", "gelu_new", "silu", "swish"});
    b.scaleEmbedding = c.boolean("scale_embedding", false);
    b.tied = c.boolean("tie_word_embeddings", true);
    b.shared = !s.marianVocab || c.boolean("share_encoder_decoder_embeddings", true);
    if (b.shared && b.decoderVocab != b.vocab)
        c.fail("decoder_vocab_size", "(" + std::to_string(b.decoderVocab) + ") differs from vocab_size (" +
                                             std::to_string(b.vocab) +
                                             ") but share_encoder_decoder_embeddings is true");
    for (const auto& [key, heads] : {std::pair<const char*, int>{"encoder_attention_heads", b.encoderHeads},
                                     std::pair<const char*, int>{"decoder_attention_heads", b.decoderHeads}})
        if (b.dModel % heads != 0)
            c.fail(key, "(" + std::to_string(heads) + ") must divide d_model (" + std::to_string(b.dModel) + ")");
    const std::int64_t bos = *configTokenId(c, "bos_token_id", s.bos);
    b.decoderStart = *configTokenId(c, "decoder_start_token_id", s.decoderStart ? *s.decoderStart : bos);
    b.eos = configTokenId(c, "eos_token_id", s.eos);
    return b;
}

struct BartLayer {
    AttentionWeights self, cross;
    Norm selfNorm, crossNorm, finalNorm;
    Linear fc1, fc2;
};

struct Stack {
    at::Tensor embed, positions;    // positions: learned [P + 2, E] or Marian's static [P, E]
    Norm embeddingNorm, finalNorm;  // either may be undefined
    std::vector<BartLayer> layers;
    int heads = 0;
};

constexpr double kEps = 1e-5;  // nn.LayerNorm's default, which these models use

class BartModel final : public Seq2seqModel {
public:
    BartModel(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
              const LoadOptions& options, const BartStyle& style)
        : Seq2seqModel(folder, device, parseBartConfig(config, style).vocab), style_(style),
          cfg_(parseBartConfig(config, style)) {
        c10::InferenceMode guard;
        WeightStore w(folder, device);
        w.requireMemory(options.memoryLimitBytes);
        if (w.anyNameStartsWith("model.")) w.setPrefix("model.");
        const std::int64_t E = cfg_.dModel;
        const long long total = 2 + cfg_.encoderLayers + cfg_.decoderLayers;
        long long done = 0;
        auto step = [&] { reportProgress(options.progress, ++done, total); };
        // Shared embeddings may be stored once under any of their tied names.
        auto firstOf = [&](std::initializer_list<const char*> names) {
            for (const char* n : names)
                if (w.has(n)) return std::string(n);
            return std::string(*names.begin());
        };
        if (cfg_.shared) {
            encoder_.embed = decoder_.embed =
                    w.get(firstOf({"shared.weight", "encoder.embed_tokens.weight", "decoder.embed_tokens.weight"}),
                          {cfg_.vocab, E});
        } else {
            encoder_.embed = w.get("encoder.embed_tokens.weight", {cfg_.vocab, E});
            decoder_.embed = w.get("decoder.embed_tokens.weight", {cfg_.decoderVocab, E});
        }
        head_ = cfg_.tied ? decoder_.embed : w.get("lm_head.weight", {cfg_.decoderVocab, E});
        if (w.has("final_logits_bias")) logitsBias_ = w.get("final_logits_bias", {1, cfg_.decoderVocab}).view({-1});
        step();
        loadStack(w, "encoder", encoder_, cfg_.encoderLayers, cfg_.encoderHeads, cfg_.encoderFfn, false, step);
        loadStack(w, "decoder", decoder_, cfg_.decoderLayers, cfg_.decoderHeads, cfg_.decoderFfn, true, step);
        step();

        info_ = familyInfo(style.family, folder, w, device, std::max(cfg_.encoderLayers, cfg_.decoderLayers),
                           cfg_.encoderHeads, cfg_.encoderHeads, E / cfg_.encoderHeads, cfg_.dModel);
        info_.vocabSize = cfg_.vocab;
        info_.maxPositions = cfg_.positions;
        info_.encoderDecoder = true;
        info_.notes.push_back(style.preNorm ? "pre-LN blocks" : "post-LN blocks");
        info_.notes.push_back(style.staticPositions ? "sinusoidal positions" : "learned positions (offset 2)");
        if (cfg_.scaleEmbedding) info_.notes.push_back("embeddings × √d_model");
        if (cfg_.encoderHeads != cfg_.decoderHeads)
            info_.notes.push_back(std::to_string(cfg_.decoderHeads) + " decoder heads");
        Seq2seqShape shape;
        shape.sourceVocab = cfg_.vocab;
        shape.targetVocab = cfg_.decoderVocab;
        shape.maxSource = shape.maxTarget = cfg_.positions;
        shape.decoderStart = cfg_.decoderStart;
        shape.eos = cfg_.eos;
        shape.shiftLastToFront = style.shiftLastToFront;
        shape.encoderHeads = cfg_.encoderHeads;
        shape.decoderHeads = cfg_.decoderHeads;
        shape.encoderLayers = cfg_.encoderLayers;
        shape.decoderLayers = cfg_.decoderLayers;
        setShape(shape);
    }

protected:
    at::Tensor encode(const std::vector<std::int64_t>& ids, const RunOptions& options,
                      BlockCapture& capture) const override {
        at::Tensor x = embed(encoder_, ids);
        for (int l = 0; l < cfg_.encoderLayers; ++l) {
            const BartLayer& L = encoder_.layers[l];
            x = sublayer(x, L.selfNorm, [&](const at::Tensor& h) {
                return attention(L.self, h, h, encoder_.heads, false, layerRun(options, "encoder", l), capture);
            });
            x = sublayer(x, L.finalNorm, [&](const at::Tensor& h) { return feedForward(L, h); });
        }
        return encoder_.finalNorm.weight.defined() ? layerNorm(x, encoder_.finalNorm, kEps) : x;
    }

    at::Tensor decode(const std::vector<std::int64_t>& ids, const at::Tensor& memory, const RunOptions& options,
                      BlockCapture& self, BlockCapture& cross, bool lastOnly) const override {
        at::Tensor x = embed(decoder_, ids);
        for (int l = 0; l < cfg_.decoderLayers; ++l) {
            const BartLayer& L = decoder_.layers[l];
            x = sublayer(x, L.selfNorm, [&](const at::Tensor& h) {
                return attention(L.self, h, h, decoder_.heads, true, layerRun(options, "decoder", l), self);
            });
            x = sublayer(x, L.crossNorm, [&](const at::Tensor& h) {
                return attention(L.cross, h, memory, decoder_.heads, false, layerRun(options, "cross", l), cross);
            });
            x = sublayer(x, L.finalNorm, [&](const at::Tensor& h) { return feedForward(L, h); });
        }
        if (decoder_.finalNorm.weight.defined()) x = layerNorm(x, decoder_.finalNorm, kEps);
        return seq2seqLogits(x, head_, logitsBias_, lastOnly);
    }

    ForwardFootprint footprint(std::int64_t queries, std::int64_t keys) const override {
        return {std::max(cfg_.encoderLayers, cfg_.decoderLayers),
                std::max(cfg_.encoderHeads, cfg_.decoderHeads),
                std::max(cfg_.encoderHeads, cfg_.decoderHeads),
                cfg_.dModel / std::min(cfg_.encoderHeads, cfg_.decoderHeads),
                cfg_.dModel,
                std::max(cfg_.encoderFfn, cfg_.decoderFfn),
                queries,
                keys,
                static_cast<std::int64_t>(c10::elementSize(head_.scalar_type()))};
    }

private:
    template <class Step>
    void loadStack(WeightStore& w, const std::string& name, Stack& s, int layers, int heads, int ffn, bool decoder,
                   const Step& step) {
        const std::int64_t E = cfg_.dModel;
        s.heads = heads;
        if (style_.staticPositions) {
            s.positions = style_.staticPositions(cfg_.positions, E).to(device_, w.computeType());
        } else {
            s.positions = w.get(name + ".embed_positions.weight", {cfg_.positions + 2, E});
        }
        if (style_.embeddingNorm) s.embeddingNorm = loadNorm(w, name + ".layernorm_embedding", E);
        if (style_.preNorm) s.finalNorm = loadNorm(w, name + ".layer_norm", E);
        auto attention = [&](const std::string& p) {
            return loadAttention(w, p, {"q_proj", "k_proj", "v_proj", "out_proj"}, E, E);
        };
        for (int l = 0; l < layers; ++l) {
            const std::string p = name + ".layers." + std::to_string(l) + ".";
            BartLayer L;
            L.self = attention(p + "self_attn.");
            L.selfNorm = loadNorm(w, p + "self_attn_layer_norm", E);
            if (decoder) {
                L.cross = attention(p + "encoder_attn.");
                L.crossNorm = loadNorm(w, p + "encoder_attn_layer_norm", E);
            }
            L.fc1 = w.linear(p + "fc1", ffn, E);
            L.fc2 = w.linear(p + "fc2", E, ffn);
            L.finalNorm = loadNorm(w, p + "final_layer_norm", E);
            s.layers.push_back(std::move(L));
            step();
        }
    }

    at::Tensor embed(const Stack& s, const std::vector<std::int64_t>& ids) const {
        const auto n = static_cast<std::int64_t>(ids.size());
        at::Tensor x = s.embed.index_select(0, idTensor(ids, device_));
        if (cfg_.scaleEmbedding) x = x * std::sqrt(static_cast<double>(cfg_.dModel));
        x = x + s.positions.narrow(0, style_.staticPositions ? 0 : 2, n);  // learned tables start at offset 2
        return s.embeddingNorm.weight.defined() ? layerNorm(x, s.embeddingNorm, kEps) : x;
    }

    // Residual around f: pre-LN x + f(ln(x)), post-LN ln(x + f(x)).
    template <class F>
    at::Tensor sublayer(const at::Tensor& x, const Norm& norm, const F& f) const {
        if (style_.preNorm) return x + f(layerNorm(x, norm, kEps));
        return layerNorm(x + f(x), norm, kEps);
    }

    at::Tensor attention(const AttentionWeights& a, const at::Tensor& x, const at::Tensor& kv, int heads, bool causal,
                         const LayerRun& run, BlockCapture& capture) const {
        const std::int64_t d = cfg_.dModel / heads;
        ScoreSpec score;
        score.scale = 1.0 / std::sqrt(static_cast<double>(d));
        MaskSpec mask;
        mask.causal = causal;
        return attentionBlock(a, x, kv, heads, d, score, mask, run, capture);
    }

    at::Tensor feedForward(const BartLayer& L, const at::Tensor& h) const {
        return L.fc2(activate(cfg_.activation, L.fc1(h)));
    }

    BartStyle style_;
    BartConfig cfg_;
    Stack encoder_, decoder_;
    at::Tensor head_, logitsBias_;
};

}  // namespace

std::shared_ptr<const Model> loadBartLike(const std::filesystem::path& folder, const JsonConfig& config,
                                          c10::Device device, const LoadOptions& options, const BartStyle& style) {
    return std::make_shared<const BartModel>(folder, config, device, options, style);
}

std::shared_ptr<const Model> loadBart(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
                                      const LoadOptions& options) {
    return loadBartLike(folder, config, device, options, BartStyle{});
}

std::shared_ptr<const Model> loadMbart(const std::filesystem::path& folder, const JsonConfig& config,
                                       c10::Device device, const LoadOptions& options) {
    BartStyle s;
    s.family = "mbart";
    s.preNorm = true;
    s.shiftLastToFront = true;
    s.decoderStart = std::nullopt;  // MBartConfig has none; generate() then starts with bos_token_id
    return loadBartLike(folder, config, device, options, s);
}

}  // namespace attnscope
