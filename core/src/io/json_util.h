// Reading config.json fields with errors that name the file and the key.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace attnscope {

// The deepest nesting of arrays and objects any JSON input may have. Real files (tokenizer.json,
// config.json, safetensors headers) stay under 10; at ~100,000 levels the recursive code that
// walks a parsed tree (copies, dump(), the tokenizer's component builders) runs out of stack.
constexpr int kMaxJsonDepth = 128;

// Throws attnscope::Error "WHERE: JSON nested deeper than 128 levels (at byte N)" when text
// nests deeper than kMaxJsonDepth. A linear scan (strings skipped) meant to run before parsing.
void checkJsonDepth(std::string_view text, const std::string& where);

// A value for an error message, never long: its JSON cut at 60 characters ("..." after), invalid
// UTF-8 replaced by U+FFFD (a plain dump() would throw type_error.316 on it).
std::string jsonExcerpt(const nlohmann::json& value);

// The one JSON reader. Every JSON file and text goes through parseJson, so a syntax error reads
// the same everywhere: "WHERE: not valid JSON (parse error at line 1, column 2: ...)", never
// nlohmann's "[json.exception...]" text. Nesting deeper than kMaxJsonDepth is refused first.
nlohmann::json parseJson(std::string_view text, const std::string& where);

// A JSON file of any top-level value, read under the input rule (attnscope/io/input_file.h:
// regular files only, at most kMaxJsonFileBytes); throws attnscope::Error "FILE: ...".
nlohmann::json readJsonFile(const std::filesystem::path& file);

// readJsonFile, and an object at the top level ("FILE: expected a JSON object at the top level").
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
