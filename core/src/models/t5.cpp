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
    int vocab = 32128, layers = 6, decoderLayers = 6, buckets = 32, maxDistance = 128;
    StackSpec spec;  // both stacks': pre-norm RMS, no biases, no 1/√d scaling
    bool gated = false;
    bool tied = true;
    std::int64_t decoderStart = 0;
    std::optional<std::int64_t> eos;
};

T5Config parseT5Config(const JsonConfig& c) {
    T5Config t;
    StackSpec& s = t.spec;
    t.vocab = c.optionalPositiveInt("vocab_size").value_or(t.vocab);
    s.hidden = c.optionalPositiveInt("d_model").value_or(512);
    s.headDim = c.optionalPositiveInt("d_kv").value_or(64);
    s.ffn = c.optionalPositiveInt("d_ff").value_or(2048);
    t.layers = c.optionalPositiveInt("num_layers").value_or(t.layers);
    t.decoderLayers = c.optionalPositiveInt("num_decoder_layers").value_or(t.layers);
    s.heads = c.optionalPositiveInt("num_heads").value_or(8);
    s.preNorm = s.rms = true;
    s.qkvBias = s.oBias = s.ffBias = false;
    t.buckets = c.optionalPositiveInt("relative_attention_num_buckets").value_or(t.buckets);
    t.maxDistance = c.optionalPositiveInt("relative_attention_max_distance").value_or(t.maxDistance);
    s.eps = c.positiveNumber("layer_norm_epsilon", 1e-6);
    t.tied = c.boolean("tie_word_embeddings", true);
    // feed_forward_proj is "ACT" or "gated-ACT"; "gated-gelu" means gelu_new (T5Config).
    const std::string proj = c.string("feed_forward_proj", "relu");
    const auto dash = proj.find('-');
    t.gated = dash != std::string::npos;
    if (t.gated && proj.substr(0, dash) != "gated")
        c.fail("feed_forward_proj", "'" + proj + "' is not ACT or gated-ACT (relu, gated-gelu, ...)");
    s.activation = t.gated ? proj.substr(dash + 1) : proj;
    if (proj == "gated-gelu") s.activation = "gelu_new";
    requireKnown(c, "feed_forward_proj", s.activation, {"relu", "gelu", "gelu_new", "silu", "swish"});
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

// Layer names under "encoder.block.l." / "decoder.block.l."; the decoder's cross-attention is
// layer.1 and its feed-forward layer.2.
StackNames t5Names(bool decoder, bool gated) {
    const std::string ff = decoder ? "layer.2." : "layer.1.";
    return {"layer.0.SelfAttention.",
            {"q", "k", "v", "o"},
            "layer.0.layer_norm",
            decoder ? "layer.1.EncDecAttention." : "",
            decoder ? "layer.1.layer_norm" : "",
            ff + (gated ? "DenseReluDense.wi_0" : "DenseReluDense.wi"),
            gated ? ff + "DenseReluDense.wi_1" : "",
            ff + "DenseReluDense.wo",
            ff + "layer_norm"};
}

class T5Model final : public Seq2seqModel {
public:
    T5Model(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
            const LoadOptions& options)
        : Seq2seqModel(folder, device, parseT5Config(config).vocab), cfg_(parseT5Config(config)) {
        c10::InferenceMode guard;
        WeightStore w(folder, device);
        w.requireMemory(options.memoryLimitBytes);
        const std::int64_t E = cfg_.spec.hidden, heads = cfg_.spec.heads;
        const long long total = 2 + cfg_.layers + cfg_.decoderLayers;
        long long done = 0;
        auto step = [&] { reportProgress(options.progress, ++done, total); };
        embed_ = sharedEmbedding(w, cfg_.vocab, E);
        head_ = cfg_.tied ? embed_ : w.get("lm_head.weight", {cfg_.vocab, E});
        const StackSpec& s = encoder_.spec = decoder_.spec = cfg_.spec;
        encoder_.layers = loadStack(w, s, t5Names(false, cfg_.gated), "encoder.block.", cfg_.layers, step);
        decoder_.layers = loadStack(w, s, t5Names(true, cfg_.gated), "decoder.block.", cfg_.decoderLayers, step);
        encoderBias_ =
                w.get("encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight", {cfg_.buckets, heads});
        decoderBias_ =
                w.get("decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight", {cfg_.buckets, heads});
        encoder_.finalNorm.weight = w.get("encoder.final_layer_norm.weight", {E});
        decoder_.finalNorm.weight = w.get("decoder.final_layer_norm.weight", {E});
        step();
        if (cfg_.tied) outputScale_ = std::pow(static_cast<double>(E), -0.5);  // before the tied head

        Seq2seqShape shape;
        shape.sourceVocab = shape.targetVocab = cfg_.vocab;
        shape.decoderStart = cfg_.decoderStart;
        shape.eos = cfg_.eos;
        finishLoad("t5", folder, w, shape);  // maxPositions 0: relative positions, no table
        info_.notes = {"relative position bias (" + std::to_string(cfg_.buckets) + " buckets, max distance " +
                               std::to_string(cfg_.maxDistance) + ")",
                       "no 1/√d scaling", (cfg_.gated ? "gated " : "") + cfg_.spec.activation + " feed-forward"};
        if (cfg_.layers != cfg_.decoderLayers)
            info_.notes.push_back(std::to_string(cfg_.layers) + " encoder, " + std::to_string(cfg_.decoderLayers) +
                                  " decoder layers");
    }

protected:
    at::Tensor embed(bool, const std::vector<std::int64_t>& ids) const override {
        return embed_.index_select(0, idTensor(ids, device_));
    }

    // [H, n, n] bias of the relative positions key - query: bidirectional buckets in the encoder,
    // causal ones in the decoder, through that stack's table [buckets, H].
    at::Tensor selfBias(bool decoder, std::int64_t n) const override {
        std::vector<std::int64_t> buckets(static_cast<std::size_t>(n * n));
        for (std::int64_t i = 0; i < n; ++i)
            for (std::int64_t j = 0; j < n; ++j)
                buckets[static_cast<std::size_t>(i * n + j)] =
                        relativeBucket(j - i, !decoder, cfg_.buckets, cfg_.maxDistance);
        return (decoder ? decoderBias_ : encoderBias_)
                .index_select(0, idTensor(buckets, device_))
                .view({n, n, cfg_.spec.heads})
                .permute({2, 0, 1})
                .contiguous();
    }

private:
    T5Config cfg_;
    at::Tensor embed_, encoderBias_, decoderBias_;
};

}  // namespace

std::shared_ptr<const Model> loadT5(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
                                    const LoadOptions& options) {
    return std::make_shared<const T5Model>(folder, config, device, options);
}

}  // namespace attnscope
