#include "json_util.h"

#include "attnscope/io/input_file.h"
#include "attnscope/runtime/error.h"

#include <cmath>

namespace attnscope {

void checkJsonDepth(std::string_view text, const std::string& where) {
    int depth = 0;
    bool inString = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            if (c == '\\')
                ++i;  // the escaped character cannot end the string
            else if (c == '"')
                inString = false;
        } else if (c == '"') {
            inString = true;
        } else if (c == '[' || c == '{') {
            if (++depth > kMaxJsonDepth)
                throw Error(where + ": JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels (at byte " +
                            std::to_string(i) + ")");
        } else if (c == ']' || c == '}') {
            --depth;  // unbalanced brackets are the parser's to report
        }
    }
}

std::string jsonExcerpt(const nlohmann::json& value) {
    // Dumping a large value once, on the error path, is cheap; printing it is what must not happen.
    std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    constexpr std::size_t kMax = 60;
    if (text.size() > kMax) {
        std::size_t cut = kMax;
        while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
            --cut;  // not inside a UTF-8 character
        text = text.substr(0, cut) + "...";
    }
    return text;
}

nlohmann::json parseJson(std::string_view text, const std::string& where) {
    checkJsonDepth(text, where);
    try {
        return nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for 1e309
        // e.what() is "[json.exception.parse_error.101] parse error at line 1, column 2: ..."
        const std::string what = e.what();
        const auto pos = what.find("] ");
        throw Error(where + ": not valid JSON (" + (pos == std::string::npos ? what : what.substr(pos + 2)) + ")");
    }
}

nlohmann::json readJsonFile(const std::filesystem::path& file) {
    return parseJson(readInputFile(file, kMaxJsonFileBytes, "JSON file"), file.string());
}

nlohmann::json readJsonObject(const std::filesystem::path& file) {
    nlohmann::json json = readJsonFile(file);
    if (!json.is_object()) throw Error(file.string() + ": expected a JSON object at the top level");
    return json;
}

bool JsonConfig::has(const std::string& key) const {
    auto it = json_.find(key);
    return it != json_.end() && !it->is_null();
}

void JsonConfig::fail(const std::string& key, const std::string& what) const {
    throw Error(file_.string() + ": '" + key + "' " + what);
}

int JsonConfig::positiveInt(const std::string& key, int max) const {
    if (!has(key)) fail(key, "is missing");
    const auto& v = json_.at(key);
    if (!v.is_number_integer() && !(v.is_number_float() && std::floor(v.get<double>()) == v.get<double>()))
        fail(key, "must be an integer, found " + jsonExcerpt(v));
    const double d = v.get<double>();
    if (d < 1 || d > max) fail(key, "must be between 1 and " + std::to_string(max) + ", found " + jsonExcerpt(v));
    return static_cast<int>(d);
}

std::optional<int> JsonConfig::optionalPositiveInt(const std::string& key) const {
    if (!has(key)) return std::nullopt;
    return positiveInt(key);
}

double JsonConfig::positiveNumber(const std::string& key, std::optional<double> fallback) const {
    if (!has(key)) {
        if (fallback) return *fallback;
        fail(key, "is missing");
    }
    const auto& v = json_.at(key);
    if (!v.is_number()) fail(key, "must be a number, found " + jsonExcerpt(v));
    const double d = v.get<double>();
    if (!(d > 0) || !std::isfinite(d)) fail(key, "must be a positive number, found " + jsonExcerpt(v));
    return d;
}

std::string JsonConfig::string(const std::string& key, std::optional<std::string> fallback) const {
    if (!has(key)) {
        if (fallback) return *fallback;
        fail(key, "is missing");
    }
    const auto& v = json_.at(key);
    if (!v.is_string()) fail(key, "must be a string, found " + jsonExcerpt(v));
    return v.get<std::string>();
}

bool JsonConfig::boolean(const std::string& key, bool fallback) const {
    if (!has(key)) return fallback;
    const auto& v = json_.at(key);
    if (!v.is_boolean()) fail(key, "must be true or false, found " + jsonExcerpt(v));
    return v.get<bool>();
}

}  // namespace attnscope
