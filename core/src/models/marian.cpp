// Marian (model_type "marian") as Hugging Face's MarianMTModel: BART's post-LN layout
// (bart_like.h) without layernorm_embedding, with static sinusoidal positions computed here (not
// learned, not offset), embeddings shared between encoder, decoder and head unless
// share_encoder_decoder_embeddings is false (then decoder_vocab_size rows on the decoder side).
#include "bart_like.h"
#include "families.h"

#include <cmath>
#include <vector>

namespace attnscope {

namespace {

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

}  // namespace

std::shared_ptr<const Model> loadMarian(const std::filesystem::path& folder, const JsonConfig& config,
                                        c10::Device device, const LoadOptions& options) {
    BartStyle s;
    s.family = "marian";
    s.embeddingNorm = false;
    s.staticPositions = sinusoidTable;
    s.vocab = 58101;  // MarianConfig's defaults
    s.pad = 58100;
    s.eos = 0;
    s.decoderStart = 58100;
    s.marianVocab = true;
    return loadBartLike(folder, config, device, options, s);
}

}  // namespace attnscope
