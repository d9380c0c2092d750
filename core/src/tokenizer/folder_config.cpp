#include "folder_config.h"

#include "attnscope/runtime/error.h"
#include "io/json_util.h"

namespace attnscope::tok {

nlohmann::json readFolderConfig(const std::filesystem::path& folder) {
    const auto file = folder / "tokenizer_config.json";
    std::error_code ec;
    return std::filesystem::exists(file, ec) ? readJsonObject(file) : nlohmann::json::object();
}

nlohmann::json readSpecialTokenConfig(const std::filesystem::path& folder) {
    nlohmann::json config = readFolderConfig(folder);
    const auto file = folder / "special_tokens_map.json";
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) return config;
    const nlohmann::json map = readJsonObject(file);
    for (auto it = map.begin(); it != map.end(); ++it) config[it.key()] = it.value();
    return config;
}

bool configBool(const nlohmann::json& config, const std::filesystem::path& folder, const char* key, bool fallback) {
    const auto it = config.find(key);
    if (it == config.end() || it->is_null()) return fallback;
    if (!it->is_boolean())
        throw Error((folder / "tokenizer_config.json").string() + ": '" + key + "' must be true or false");
    return it->get<bool>();
}

std::string configToken(const nlohmann::json& config, const std::filesystem::path& folder, const char* key) {
    const auto it = config.find(key);
    if (it == config.end() || it->is_null()) return {};
    if (it->is_string()) return it->get<std::string>();
    if (it->is_object() && it->contains("content") && (*it)["content"].is_string())
        return (*it)["content"].get<std::string>();
    throw Error((folder / "tokenizer_config.json").string() + ": '" + key +
                "' must be a token string or {\"content\": ...}");
}

}  // namespace attnscope::tok
