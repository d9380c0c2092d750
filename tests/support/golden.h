// The reference tokenizer results in tests/data/tokenizers/golden.json (Hugging Face's tokenizers
// on the committed files), read once per test executable. Needs ATTNSCOPE_TOKENIZER_DATA.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace attnscope::testing {

inline const std::filesystem::path kTokenizerData = ATTNSCOPE_TOKENIZER_DATA;

inline const nlohmann::json& golden() {
    static const nlohmann::json g = [] {
        std::ifstream in(kTokenizerData / "golden.json", std::ios::binary);
        if (!in) throw std::runtime_error((kTokenizerData / "golden.json").string() + ": cannot be read");
        return nlohmann::json::parse(in);
    }();
    return g;
}

// Text number `i` of the golden texts.
inline std::string goldenText(std::size_t i) { return golden()["texts"].at(i).get<std::string>(); }

// The case named `name` (case names are unique).
inline const nlohmann::json& goldenCase(const std::string& name) {
    for (const auto& c : golden()["cases"])
        if (c["name"] == name) return c;
    throw std::runtime_error("no golden case " + name);
}

// The reference result of case `name` for text number `text`.
inline const nlohmann::json& goldenResult(const std::string& name, std::size_t text) {
    return goldenCase(name)["results"].at(text);
}

}  // namespace attnscope::testing
