// The reference tokenizer results in tests/data/tokenizers/golden.json and families.json (Hugging
// Face's tokenizers on the committed files), read once per test executable, and the comparison of
// a Tokenizer with one case's results. Needs ATTNSCOPE_TOKENIZER_DATA.
#pragma once

#include "attnscope/tokenizer/tokenizer.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace attnscope::testing {

inline const std::filesystem::path kTokenizerData = ATTNSCOPE_TOKENIZER_DATA;

inline nlohmann::json readGoldenFile(const std::string& name) {
    std::ifstream in(kTokenizerData / name, std::ios::binary);
    if (!in) throw std::runtime_error((kTokenizerData / name).string() + ": cannot be read");
    return nlohmann::json::parse(in);
}

inline const nlohmann::json& golden() {
    static const nlohmann::json g = readGoldenFile("golden.json");
    return g;
}

// The decoder families' tokenizer.json layouts (families/*.json) and their reference results.
inline const nlohmann::json& familyGolden() {
    static const nlohmann::json g = readGoldenFile("families.json");
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

// Where `tok` differs from one case's reference results on `texts` (ids, tokens, byte offsets,
// ids without special tokens, decoded text with and without special tokens), one line each.
inline std::vector<std::string> tokenizerMismatches(const nlohmann::json& texts, const nlohmann::json& results,
                                                    const Tokenizer& tok) {
    auto show = [](const nlohmann::json& j) { return j.dump().substr(0, 600); };
    std::vector<std::string> problems;
    for (std::size_t i = 0; i < texts.size(); ++i) {
        const std::string text = texts[i];
        const auto& r = results.at(i);
        const Encoding e = tok.encode(text, true);
        nlohmann::json offsets = nlohmann::json::array();
        for (const auto& [b, en] : e.offsets) offsets.push_back({b, en});
        const std::string label = "text " + std::to_string(i) + " " + nlohmann::json(text).dump().substr(0, 60) + ": ";
        if (nlohmann::json(e.ids) != r["ids"])
            problems.push_back(label + "ids " + show(nlohmann::json(e.ids)) + " expected " + show(r["ids"]));
        else if (nlohmann::json(e.tokens) != r["tokens"])
            problems.push_back(label + "tokens " + show(nlohmann::json(e.tokens)) + " expected " + show(r["tokens"]));
        else if (offsets != r["offsets"])
            problems.push_back(label + "offsets " + show(offsets) + " expected " + show(r["offsets"]));
        const auto plain = tok.encode(text, false).ids;
        if (nlohmann::json(plain) != r["ids_no_special"])
            problems.push_back(label + "ids without specials " + show(nlohmann::json(plain)) + " expected " +
                               show(r["ids_no_special"]));
        const auto ids = r["ids"].get<std::vector<std::int64_t>>();
        const std::string decoded = tok.decode(ids, false), skipped = tok.decode(ids, true);
        if (decoded != r["decoded"].get<std::string>())
            problems.push_back(label + "decoded " + nlohmann::json(decoded).dump() + " expected " +
                               r["decoded"].dump());
        if (skipped != r["decoded_skip_special"].get<std::string>())
            problems.push_back(label + "decoded without specials " + nlohmann::json(skipped).dump() + " expected " +
                               r["decoded_skip_special"].dump());
    }
    return problems;
}

}  // namespace attnscope::testing
