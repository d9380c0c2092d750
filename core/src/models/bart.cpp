// The BART layout as Hugging Face's BartForConditionalGeneration, MBartForConditionalGeneration
// and MarianMTModel share it: q/k/v/out projections with biases and 1/√d scaling, LayerNorms,
// fc1/fc2 feed-forward, word embeddings × √d_model when scale_embedding (default false), absolute
// positions added to them, the head tied to the embedding unless tie_word_embeddings is false,
// plus final_logits_bias. What differs is a BartStyle:
//   bart:   post-LN blocks, learned positions offset by 2, layernorm_embedding;
//   mbart:  pre-LN blocks with final encoder/decoder layer norms, otherwise as BART;
//   marian: BART without layernorm_embedding, static sinusoidal positions (not learned, not
//           offset), embeddings shared between encoder, decoder and head unless
//           share_encoder_decoder_embeddings is false (then decoder_vocab_size rows on the decoder side).
#include "attnscope/runtime/error.h"
#include "families.h"
#include "seq2seq.h"

#include <c10/core/InferenceMode.h>

#include <cmath>
#include <vector>

namespace attnscope {

namespace {

struct BartStyle {
    const char* family = "bart";
    bool preNorm = false;           // mBART: LayerNorm before each sublayer, plus encoder/decoder.layer_norm
    bool embeddingNorm = true;      // layernorm_embedding after the embeddings (BART, mBART)
    bool shiftLastToFront = false;  // mBART's shift_tokens_right
    // Marian: a static [positions, d_model] table in float32 on the CPU, read from no weight
    // (null: learned embed_positions with Hugging Face's offset of 2).
    at::Tensor (*staticPositions)(std::int64_t positions, std::int64_t dim) = nullptr;
    // The Hugging Face config class's defaults.
    int vocab = 50265;
    std::int64_t eos = 2;
    std::optional<std::int64_t> decoderStart = 2;  // nullopt: bos_token_id, as generate() falls back to
    std::int64_t bos = 0;
    bool marianVocab = false;  // decoder_vocab_size and share_encoder_decoder_embeddings
};

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
    b.vocab = c.optionalPositiveInt("vocab_size").value_or(s.vocab);
    b.decoderVocab = s.marianVocab ? c.optionalPositiveInt("decoder_vocab_size").value_or(b.vocab) : b.vocab;
    b.positions = c.optionalPositiveInt("max_position_embeddings").value_or(b.positions);
    b.dModel = c.optionalPositiveInt("d_model").value_or(b.dModel);
    b.encoderLayers = c.optionalPositiveInt("encoder_layers").value_or(b.encoderLayers);
    b.decoderLayers = c.optionalPositiveInt("decoder_layers").value_or(b.decoderLayers);
    b.encoderHeads = c.optionalPositiveInt("encoder_attention_heads").value_or(b.encoderHeads);
    b.decoderHeads = c.optionalPositiveInt("decoder_attention_heads").value_or(b.decoderHeads);
    b.encoderFfn = c.optionalPositiveInt("encoder_ffn_dim").value_or(b.encoderFfn);
    b.decoderFfn = c.optionalPositiveInt("decoder_ffn_dim").value_or(b.decoderFfn);
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

// MarianSinusoidalPositionalEmbedding: angle(pos, j) = pos / 10000^(2·(j div 2) / dim) for
// j = 0..dim-1; the sines of the even j fill the first ceil(dim/2) columns, the cosines of the
// odd j the rest (halves, not interleaved). Computed in double, stored as float32 as it does.
at::Tensor sinusoidTable(std::int64_t positions, std::int64_t dim) {
    const std::int64_t sines = (dim + 1) / 2;
    std::vector<float> table(static_cast<std::size_t>(positions * dim));
    for (std::int64_t pos = 0; pos < positions; ++pos)
        for (std::int64_t c = 0; c < dim; ++c) {
            const std::int64_t j = c < sines ? 2 * c : 2 * (c - sines) + 1;
            const double angle = static_cast<double>(pos) /
                                 std::pow(10000.0, 2.0 * static_cast<double>(j / 2) / static_cast<double>(dim));
            table[static_cast<std::size_t>(pos * dim + c)] =
                    static_cast<float>(c < sines ? std::sin(angle) : std::cos(angle));
        }
    return at::tensor(at::ArrayRef<float>(table)).view({positions, dim});
}

// One side's input: token embeddings, positions (learned [P + 2, E] or Marian's static [P, E])
// and layernorm_embedding (undefined: none).
struct Embedding {
    at::Tensor tokens, positions;
    Norm norm;
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
        if (cfg_.shared) {
            sourceIn_.tokens = targetIn_.tokens = sharedEmbedding(w, cfg_.vocab, E);
        } else {
            sourceIn_.tokens = w.get("encoder.embed_tokens.weight", {cfg_.vocab, E});
            targetIn_.tokens = w.get("decoder.embed_tokens.weight", {cfg_.decoderVocab, E});
        }
        head_ = cfg_.tied ? targetIn_.tokens : w.get("lm_head.weight", {cfg_.decoderVocab, E});
        if (w.has("final_logits_bias")) logitsBias_ = w.get("final_logits_bias", {1, cfg_.decoderVocab}).view({-1});
        step();
        encoder_ = loadSide(w, "encoder", sourceIn_, cfg_.encoderLayers, cfg_.encoderHeads, cfg_.encoderFfn, step);
        decoder_ = loadSide(w, "decoder", targetIn_, cfg_.decoderLayers, cfg_.decoderHeads, cfg_.decoderFfn, step);
        step();

        Seq2seqShape shape;
        shape.sourceVocab = cfg_.vocab;
        shape.targetVocab = cfg_.decoderVocab;
        shape.maxSource = shape.maxTarget = cfg_.positions;
        shape.decoderStart = cfg_.decoderStart;
        shape.eos = cfg_.eos;
        shape.shiftLastToFront = style.shiftLastToFront;
        finishLoad(style.family, folder, w, shape);
        info_.notes.push_back(style.preNorm ? "pre-LN blocks" : "post-LN blocks");
        info_.notes.push_back(style.staticPositions ? "sinusoidal positions" : "learned positions (offset 2)");
        if (cfg_.scaleEmbedding) info_.notes.push_back("embeddings × √d_model");
        if (cfg_.encoderHeads != cfg_.decoderHeads)
            info_.notes.push_back(std::to_string(cfg_.decoderHeads) + " decoder heads");
    }

protected:
    at::Tensor embed(bool decoder, const std::vector<std::int64_t>& ids) const override {
        const Embedding& e = decoder ? targetIn_ : sourceIn_;
        const auto n = static_cast<std::int64_t>(ids.size());
        at::Tensor x = e.tokens.index_select(0, idTensor(ids, device_));
        if (cfg_.scaleEmbedding) x = x * std::sqrt(static_cast<double>(cfg_.dModel));
        x = x + e.positions.narrow(0, style_.staticPositions ? 0 : 2, n);  // learned tables start at offset 2
        return e.norm.weight.defined() ? layerNorm(x, e.norm, kEps) : x;
    }

private:
    // The "encoder" or "decoder" side: its positions and embedding norm into `in`, its layers.
    Stack loadSide(WeightStore& w, const std::string& name, Embedding& in, int layers, int heads, int ffn,
                   const std::function<void()>& step) const {
        const std::int64_t E = cfg_.dModel;
        if (style_.staticPositions) {
            in.positions = style_.staticPositions(cfg_.positions, E).to(device_, w.computeType());
        } else {
            in.positions = w.get(name + ".embed_positions.weight", {cfg_.positions + 2, E});
        }
        if (style_.embeddingNorm) in.norm = loadNorm(w, name + ".layernorm_embedding", E);
        Stack s;
        if (style_.preNorm) s.finalNorm = loadNorm(w, name + ".layer_norm", E);
        s.spec = scaledStack(E, heads, ffn, kEps, cfg_.activation);
        s.spec.preNorm = style_.preNorm;
        const bool decoder = name == "decoder";
        const StackNames names{"self_attn.",
                               {"q_proj", "k_proj", "v_proj", "out_proj"},
                               "self_attn_layer_norm",
                               decoder ? "encoder_attn." : "",
                               decoder ? "encoder_attn_layer_norm" : "",
                               "fc1",
                               "",
                               "fc2",
                               "final_layer_norm"};
        s.layers = loadStack(w, s.spec, names, name + ".layers.", layers, step);
        return s;
    }

    BartStyle style_;
    BartConfig cfg_;
    Embedding sourceIn_, targetIn_;
};

}  // namespace

std::shared_ptr<const Model> loadBart(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
                                      const LoadOptions& options) {
    return std::make_shared<const BartModel>(folder, config, device, options, BartStyle{});
}

std::shared_ptr<const Model> loadMbart(const std::filesystem::path& folder, const JsonConfig& config,
                                       c10::Device device, const LoadOptions& options) {
    BartStyle s;
    s.family = "mbart";
    s.preNorm = true;
    s.shiftLastToFront = true;
    s.decoderStart = std::nullopt;  // MBartConfig has none; generate() then starts with bos_token_id
    return std::make_shared<const BartModel>(folder, config, device, options, s);
}

std::shared_ptr<const Model> loadMarian(const std::filesystem::path& folder, const JsonConfig& config,
                                        c10::Device device, const LoadOptions& options) {
    BartStyle s;
    s.family = "marian";
    s.embeddingNorm = false;
    s.staticPositions = sinusoidTable;
    s.vocab = 58101;  // MarianConfig's defaults
    s.eos = 0;
    s.decoderStart = 58100;
    s.marianVocab = true;
    return std::make_shared<const BartModel>(folder, config, device, options, s);
}

}  // namespace attnscope
