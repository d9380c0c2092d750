// Model families, each built from a folder's parsed config.json. Model::load dispatches here.
#pragma once

#include "attnscope/model.h"
#include "json_util.h"

#include <c10/core/Device.h>

namespace attnscope {

std::shared_ptr<const Model> loadGpt2(const std::filesystem::path& folder, const JsonConfig& config,
                                      c10::Device device, const LoadOptions& options);

// Built-in models (core/src/builtin): model_type "attnscope-seq2seq" and "attnscope-classifier".
std::shared_ptr<const Model> loadBuiltinSeq2seq(const std::filesystem::path& folder, const JsonConfig& config,
                                                c10::Device device, const LoadOptions& options);
std::shared_ptr<const Model> loadBuiltinClassifier(const std::filesystem::path& folder, const JsonConfig& config,
                                                   c10::Device device, const LoadOptions& options);

}  // namespace attnscope
