// A model folder's tokenizer settings: tokenizer_config.json, with special_tokens_map.json's
// token entries over it (as transformers loads them). Shared by the legacy and SentencePiece
// folder readers.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

namespace attnscope::tok {

// tokenizer_config.json as an object ({} when absent); throws naming the file when unreadable.
nlohmann::json readFolderConfig(const std::filesystem::path& folder);
// readFolderConfig plus special_tokens_map.json's entries (bos_token, ..., additional_special_tokens).
nlohmann::json readSpecialTokenConfig(const std::filesystem::path& folder);
// A boolean setting, `fallback` when absent or null; throws naming tokenizer_config.json.
bool configBool(const nlohmann::json& config, const std::filesystem::path& folder, const char* key, bool fallback);
// A special token named by the config (a string or {"content": ...}); empty when absent.
std::string configToken(const nlohmann::json& config, const std::filesystem::path& folder, const char* key);

}  // namespace attnscope::tok
