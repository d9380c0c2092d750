// Model families, each built from a folder's parsed config.json. Model::load dispatches here
// through the model_type table in model.cpp.
#pragma once

#include "attnscope/models/model.h"
#include "io/json_util.h"

#include <c10/core/Device.h>

namespace attnscope {

struct DecoderNames;
class GgufFile;
struct DecoderSpec;

using LoadFamily = std::shared_ptr<const Model>(const std::filesystem::path& folder, const JsonConfig& config,
                                                c10::Device device, const LoadOptions& options);
using FamilyLoader = LoadFamily*;

// Encoders (bert.cpp for bert, roberta, distilbert; modernbert.cpp; deberta.cpp for deberta-v2; the image encoders on
// vision_encoder.h: vit.cpp, deit.cpp, dinov2.cpp for dinov2 and dinov2_with_registers, beit.cpp; swin.cpp on its own
// stages), the image–text models on image_text.h (clip.cpp, siglip.cpp), encoder-decoders on seq2seq.h (t5.cpp,
// bart.cpp for bart and mbart, marian.cpp) and the built-in models (builtin/models.cpp: "attnscope-seq2seq" and
// "attnscope-classifier").
LoadFamily loadBert, loadModernBert, loadDebertaV2, loadVit, loadDeit, loadDinov2, loadDinov2WithRegisters, loadBeit,
        loadSwin, loadClip, loadSiglip, loadT5, loadBart, loadMbart, loadMarian, loadBuiltinSeq2seq,
        loadBuiltinClassifier;

// Decoder-only families: the config parser of each (decoder_spec.h), one file each, loaded by
// loadDecoderFamily<parser>. gemma.cpp holds gemma, gemma2 and gemma3_text; falcon.cpp also the
// legacy RefinedWebModel and RefinedWeb.
using ParseDecoder = DecoderSpec(const JsonConfig& config);
ParseDecoder gpt2Spec, gptNeoxSpec, gptjSpec, gptNeoSpec, phiSpec, optSpec, bloomSpec, falconSpec;
ParseDecoder llamaSpec, mistralSpec, qwen2Spec, gemmaSpec, gemma2Spec, gemma3TextSpec, qwen3Spec, olmo2Spec, phi3Spec;
// The mixture-of-experts decoders (moe.h): mixtral.cpp, qwen2_moe.cpp, olmoe.cpp.
ParseDecoder mixtralSpec, qwen2MoeSpec, olmoeSpec;
// BLOOM's tensor names, which Falcon keeps (bloom.cpp).
DecoderNames bloomNames();
// GPT-2's names under "transformer." (layers h.N., ln_1, ln_2, mlp.c_fc, mlp.c_proj, ln_f; gpt2.cpp),
// which GPT-Neo and GPT-J start from: the positions table's name (empty: none).
DecoderNames gpt2Names(bool prefixIfPresent, std::string positions);
// What the Llama-like configs read alike (llama.cpp): readSizes, readHeads, max_position_embeddings
// (required unless a default is given), tie_word_embeddings (false), attention_bias, mlp_bias and
// a SiLU hidden_act. Qwen3, OLMo-2 and Phi-3 start from it with their config classes' defaults.
struct LlamaDefaults {
    double eps = 1e-6;
    int headDim = 0, kvHeads = 0, positions = 0;
};
DecoderSpec llamaBase(const JsonConfig& config, LlamaDefaults defaults);
// Llama's description before its notes (rotary on every dimension): the base Mistral and Qwen2 start from.
DecoderSpec llamaLike(const JsonConfig& config);

// A GGUF file (gguf_model.cpp): general.architecture llama, qwen2, qwen3, gemma, gemma2, gemma3 or
// phi3 through the same parsers, with llama.cpp's tensor names.
std::shared_ptr<const Model> loadGguf(const std::filesystem::path& file, c10::Device device,
                                      const LoadOptions& options);
// Why loadGguf refuses the file (its architecture, its config, a tensor type), one line; empty
// when the file's description is one it runs. Reads metadata and the tensor index only.
std::string ggufUnsupported(const GgufFile& file);

// The loader for a config.json model_type, or nullptr; supportedFamilies() lists the types.
FamilyLoader familyLoader(const std::string& modelType);
std::string supportedFamilies();

}  // namespace attnscope
