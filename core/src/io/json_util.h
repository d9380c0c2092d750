// Reading config.json fields with errors that name the file and the key.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>

namespace attnscope {

// Parses a JSON object from a file; throws attnscope::Error "FILE: ..." on I/O or syntax errors.
nlohmann::json readJsonObject(const std::filesystem::path& file);

// Typed accessors over a config object; `file` only labels messages.
class JsonConfig {
public:
    JsonConfig(nlohmann::json json, std::filesystem::path file) : json_(std::move(json)), file_(std::move(file)) {}

    bool has(const std::string& key) const;  // present and not null
    // Required positive integer in [min, max].
    int positiveInt(const std::string& key, int max = 1 << 30) const;
    std::optional<int> optionalPositiveInt(const std::string& key) const;
    double positiveNumber(const std::string& key, std::optional<double> fallback = std::nullopt) const;
    std::string string(const std::string& key, std::optional<std::string> fallback = std::nullopt) const;
    bool boolean(const std::string& key, bool fallback) const;

    [[noreturn]] void fail(const std::string& key, const std::string& what) const;
    const nlohmann::json& json() const { return json_; }
    const std::filesystem::path& file() const { return file_; }

private:
    nlohmann::json json_;
    std::filesystem::path file_;
};

}  // namespace attnscope
