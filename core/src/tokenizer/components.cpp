#include "components.h"
#include "io/json_util.h"

#include "attnscope/runtime/error.h"

#include <nlohmann/json.hpp>

#include <array>

namespace attnscope::tok {

namespace {

struct ByteAlphabet {
    std::array<char32_t, 256> toChar{};
    std::array<int, 324> toByte{};  // every mapped code point is < 324
    ByteAlphabet() {
        toByte.fill(-1);
        int extra = 0;
        for (int b = 0; b < 256; ++b) {
            const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            const char32_t c = printable ? static_cast<char32_t>(b) : static_cast<char32_t>(256 + extra++);
            toChar[b] = c;
            toByte[c] = b;
        }
    }
};

const ByteAlphabet& alphabet() {
    static const ByteAlphabet a;
    return a;
}

}  // namespace

char32_t byteToChar(unsigned char b) { return alphabet().toChar[b]; }
int charToByte(char32_t c) { return c < 324 ? alphabet().toByte[c] : -1; }

bool Fields::has(const char* key) const {
    const auto it = j.find(key);
    return it != j.end() && !it->is_null();
}

void Fields::fail(const std::string& what) const { throw Error(where + ": " + what); }

bool Fields::boolean(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    const auto& v = j.at(key);
    if (!v.is_boolean()) fail("'" + std::string(key) + "' must be true or false, not " + jsonExcerpt(v));
    return v.get<bool>();
}

std::string Fields::string(const char* key, std::optional<std::string> fallback) const {
    if (!has(key)) {
        if (fallback) return *fallback;
        fail("'" + std::string(key) + "' is missing");
    }
    const auto& v = j.at(key);
    if (!v.is_string()) fail("'" + std::string(key) + "' must be a string, not " + jsonExcerpt(v));
    return v.get<std::string>();
}

std::int64_t Fields::integer(const char* key, std::optional<std::int64_t> fallback) const {
    if (!has(key)) {
        if (fallback) return *fallback;
        fail("'" + std::string(key) + "' is missing");
    }
    const auto& v = j.at(key);
    if (!v.is_number_integer()) fail("'" + std::string(key) + "' must be an integer, not " + jsonExcerpt(v));
    return v.get<std::int64_t>();
}

const nlohmann::json& Fields::object(const char* key) const {
    if (!j.contains(key)) fail("'" + std::string(key) + "' is missing");
    return j.at(key);
}

std::string componentType(const nlohmann::json& j, const std::string& where) {
    if (!j.is_object()) throw Error(where + ": expected an object, got " + jsonExcerpt(j));
    const auto it = j.find("type");
    if (it == j.end() || !it->is_string()) throw Error(where + ": the component has no \"type\"");
    return it->get<std::string>();
}

Pattern readPattern(const nlohmann::json& j, const std::string& where) {
    if (j.is_object() && j.size() == 1 && j.begin()->is_string()) {
        if (j.contains("String")) return literalPattern(j["String"].get<std::string>());
        if (j.contains("Regex"))
            return regexPattern(std::make_shared<const Regex>(j["Regex"].get<std::string>(), where));
    }
    throw Error(where + ": pattern must be {\"String\": ...} or {\"Regex\": ...}, not " + jsonExcerpt(j));
}

}  // namespace attnscope::tok
