// Model families, each built from a folder's parsed config.json. Model::load dispatches here.
#pragma once

#include "attnscope/models/model.h"
#include "io/json_util.h"

#include <c10/core/Device.h>

namespace attnscope {

using FamilyLoader = std::shared_ptr<const Model> (*)(const std::filesystem::path& folder, const JsonConfig& config,
                                                      c10::Device device, const LoadOptions& options);

std::shared_ptr<const Model> loadGpt2(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
                                      const LoadOptions& options);
// bert, roberta, distilbert (bert.cpp)
std::shared_ptr<const Model> loadBert(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
                                      const LoadOptions& options);
// llama, mistral, qwen2 and configs that follow them (llama.cpp)
std::shared_ptr<const Model> loadLlama(const std::filesystem::path& folder, const JsonConfig& config,
                                       c10::Device device, const LoadOptions& options);
// gpt_neox, gptj, gpt_neo, phi (gpt_neox.cpp, gptj.cpp, gpt_neo.cpp, phi.cpp)
std::shared_ptr<const Model> loadGptNeox(const std::filesystem::path& folder, const JsonConfig& config,
                                         c10::Device device, const LoadOptions& options);
std::shared_ptr<const Model> loadGptj(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
                                      const LoadOptions& options);
std::shared_ptr<const Model> loadGptNeo(const std::filesystem::path& folder, const JsonConfig& config,
                                        c10::Device device, const LoadOptions& options);
std::shared_ptr<const Model> loadPhi(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
                                     const LoadOptions& options);
// opt, bloom, falcon (opt.cpp, bloom.cpp, falcon.cpp)
std::shared_ptr<const Model> loadOpt(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
                                     const LoadOptions& options);
std::shared_ptr<const Model> loadBloom(const std::filesystem::path& folder, const JsonConfig& config,
                                       c10::Device device, const LoadOptions& options);
std::shared_ptr<const Model> loadFalcon(const std::filesystem::path& folder, const JsonConfig& config,
                                        c10::Device device, const LoadOptions& options);
// gemma, gemma2, gemma3_text (gemma.cpp); qwen3, olmo2, phi3 (qwen3.cpp, olmo2.cpp, phi3.cpp),
// all on the RMSNorm decoder skeleton (rms_decoder.h)
std::shared_ptr<const Model> loadGemmaFamily(const std::filesystem::path& folder, const JsonConfig& config,
                                             c10::Device device, const LoadOptions& options);
std::shared_ptr<const Model> loadQwen3(const std::filesystem::path& folder, const JsonConfig& config,
                                       c10::Device device, const LoadOptions& options);
std::shared_ptr<const Model> loadOlmo2(const std::filesystem::path& folder, const JsonConfig& config,
                                       c10::Device device, const LoadOptions& options);
std::shared_ptr<const Model> loadPhi3(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
                                      const LoadOptions& options);
// t5 (t5.cpp); bart, mbart (bart.cpp); marian (marian.cpp): encoder-decoders on seq2seq.h
std::shared_ptr<const Model> loadT5(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
                                    const LoadOptions& options);
std::shared_ptr<const Model> loadBart(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
                                      const LoadOptions& options);
std::shared_ptr<const Model> loadMbart(const std::filesystem::path& folder, const JsonConfig& config,
                                       c10::Device device, const LoadOptions& options);
std::shared_ptr<const Model> loadMarian(const std::filesystem::path& folder, const JsonConfig& config,
                                        c10::Device device, const LoadOptions& options);
std::shared_ptr<const Model> loadVit(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
                                     const LoadOptions& options);

// The loader for a config.json model_type, or nullptr; supportedFamilies() lists the types.
FamilyLoader familyLoader(const std::string& modelType);
std::string supportedFamilies();

// Built-in models (core/src/builtin): model_type "attnscope-seq2seq" and "attnscope-classifier".
std::shared_ptr<const Model> loadBuiltinSeq2seq(const std::filesystem::path& folder, const JsonConfig& config,
                                                c10::Device device, const LoadOptions& options);
std::shared_ptr<const Model> loadBuiltinClassifier(const std::filesystem::path& folder, const JsonConfig& config,
                                                   c10::Device device, const LoadOptions& options);

}  // namespace attnscope
