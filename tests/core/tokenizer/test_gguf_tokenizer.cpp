// The tokenizer of a GGUF file (tokenizer.ggml.*) gives the ids of the Hugging Face
// tokenizer.json of the same vocabulary (tests/data/tokenizers: GPT-2's byte-level BPE, Llama-3's
// split BPE, Llama-2's SentencePiece-style BPE with byte fallback) on the golden texts; BOS is
// added exactly when tokenizer.ggml.add_bos_token is true.
#include "attnscope/runtime/error.h"
#include "attnscope/tokenizer/tokenizer.h"
#include "gguf_writer.h"

#include <catch2/catch.hpp>

#include <fstream>

namespace test_gguf_tokenizer {

using namespace attnscope;
using namespace attnscope::testing;
namespace fs = std::filesystem;

namespace {

const fs::path kData = ATTNSCOPE_TOKENIZER_DATA;

nlohmann::json readJson(const fs::path& file) {
    std::ifstream in(file);
    return nlohmann::json::parse(in);
}

std::vector<std::string> goldenTexts() {
    std::vector<std::string> texts;
    const nlohmann::json golden = readJson(kData / "golden.json");  // kept: the loop reads into it
    for (const auto& t : golden.at("texts")) texts.push_back(t.get<std::string>());
    REQUIRE(texts.size() >= 20);
    texts.push_back("  leading spaces, <s> inside, and </s> too\n\ttabs");
    return texts;
}

// tokenizer.ggml.* from a tokenizer.json: tokens by id, types (3 for special added tokens, 6 for
// <0xNN> pieces), and the model's own fields.
struct Vocab {
    std::vector<std::string> tokens;
    std::vector<std::int32_t> types;
};
Vocab vocabOf(const nlohmann::json& j) {
    Vocab v;
    const auto& vocab = j.at("model").at("vocab");
    std::size_t size = vocab.size();
    for (const auto& a : j.at("added_tokens")) size = std::max<std::size_t>(size, a.at("id").get<std::size_t>() + 1);
    v.tokens.resize(size);
    v.types.assign(size, 1);
    for (auto it = vocab.begin(); it != vocab.end(); ++it) {
        const auto id = it.value().get<std::size_t>();
        v.tokens[id] = it.key();
        if (it.key().size() == 6 && it.key().rfind("<0x", 0) == 0) v.types[id] = 6;
    }
    for (const auto& a : j.at("added_tokens")) {
        const auto id = a.at("id").get<std::size_t>();
        v.tokens[id] = a.at("content").get<std::string>();
        v.types[id] = a.value("special", false) ? 3 : 4;
    }
    return v;
}

std::vector<std::string> mergeStrings(const nlohmann::json& merges) {
    std::vector<std::string> out;
    for (const auto& m : merges)
        out.push_back(m.is_string() ? m.get<std::string>() : m[0].get<std::string>() + " " + m[1].get<std::string>());
    return out;
}

std::unique_ptr<Tokenizer> fromGguf(const GgufBuilder& g, const std::string& name) {
    const fs::path file = freshDir("gguf_tok_" + name) / "tok.gguf";
    g.write(file);
    return Tokenizer::fromPath(file);
}

void requireSameIds(const Tokenizer& got, const Tokenizer& want, bool special = true) {
    for (const std::string& text : goldenTexts()) {
        INFO(text);
        CHECK(got.encode(text, special).ids == want.encode(text, special).ids);
    }
}

GgufBuilder bpeGguf(const fs::path& json, const std::string& pre) {
    const nlohmann::json j = readJson(json);
    const Vocab v = vocabOf(j);
    GgufBuilder g;
    g.str("tokenizer.ggml.model", "gpt2");
    g.str("tokenizer.ggml.pre", pre);
    g.strings("tokenizer.ggml.tokens", v.tokens);
    g.i32s("tokenizer.ggml.token_type", v.types);
    g.strings("tokenizer.ggml.merges", mergeStrings(j.at("model").at("merges")));
    return g;
}

// tokenizer.ggml.* of a SentencePiece-style tokenizer.json: scores as a SentencePiece BPE model
// orders its pieces (a merged piece ranks where its first merge does; control and byte pieces
// score 0, single characters lowest), <unk> typed unknown.
GgufBuilder spmGguf(const nlohmann::json& j, int bos, bool addBos, bool spacePrefix) {
    Vocab v = vocabOf(j);
    std::map<std::string, float> rank;
    const auto merges = mergeStrings(j.at("model").at("merges"));
    for (std::size_t r = 0; r < merges.size(); ++r) {
        std::string joined = merges[r];
        joined.erase(joined.find(' '), 1);
        rank.emplace(joined, -static_cast<float>(r));
    }
    std::vector<float> scores;
    for (std::size_t i = 0; i < v.tokens.size(); ++i) {
        if (v.tokens[i] == "<unk>") v.types[i] = 2;
        const auto it = rank.find(v.tokens[i]);
        scores.push_back(v.types[i] != 1 ? 0.0f : it != rank.end() ? it->second : -1e9f);
    }
    GgufBuilder g;
    g.str("tokenizer.ggml.model", "llama");
    g.strings("tokenizer.ggml.tokens", v.tokens);
    g.f32s("tokenizer.ggml.scores", scores);
    g.i32s("tokenizer.ggml.token_type", v.types);
    g.u32("tokenizer.ggml.bos_token_id", static_cast<std::uint32_t>(bos));
    g.boolean("tokenizer.ggml.add_bos_token", addBos);
    g.boolean("tokenizer.ggml.add_space_prefix", spacePrefix);
    return g;
}

}  // namespace

TEST_CASE("GGUF tokenizers of Qwen (pre qwen2) and Gemma (no space prefix) give tokenizer.json's ids",
          "[gguf][tokenizer]") {
    const auto qwen = Tokenizer::fromFile(kData / "families" / "qwen3.json");
    requireSameIds(*fromGguf(bpeGguf(kData / "families" / "qwen3.json", "qwen2"), "qwen"), *qwen);
    const auto gemma = Tokenizer::fromFile(kData / "families" / "gemma.json");
    const auto g = fromGguf(spmGguf(readJson(kData / "families" / "gemma.json"), 2, true, false), "gemma");
    requireSameIds(*g, *gemma);
    requireSameIds(*g, *gemma, false);
}

TEST_CASE("GGUF gpt2 tokenizers give the ids of tokenizer.json (GPT-2, Llama-3)", "[gguf][tokenizer]") {
    const auto gpt2 = Tokenizer::fromFile(kData / "gpt2.json");
    GgufBuilder g = bpeGguf(kData / "gpt2.json", "gpt-2");
    g.boolean("tokenizer.ggml.add_bos_token", false);
    requireSameIds(*fromGguf(g, "gpt2"), *gpt2);

    const auto llama3 = Tokenizer::fromFile(kData / "llama3.json");
    GgufBuilder l = bpeGguf(kData / "llama3.json", "llama-bpe");
    GgufBuilder withBos = l;
    requireSameIds(*fromGguf(l, "llama3"), *llama3);
    // add_bos_token true: <|begin_of_text|> first, then the same ids.
    withBos.boolean("tokenizer.ggml.add_bos_token", true);
    withBos.u32("tokenizer.ggml.bos_token_id", 6000);
    const auto bos = fromGguf(withBos, "llama3_bos");
    const auto ids = bos->encode("Hello world").ids;
    auto want = llama3->encode("Hello world").ids;
    want.insert(want.begin(), 6000);
    CHECK(ids == want);
    CHECK(bos->encode("Hello world", false).ids == llama3->encode("Hello world", false).ids);
}

TEST_CASE("A GGUF llama tokenizer gives the ids of Llama-2's tokenizer.json", "[gguf][tokenizer]") {
    const nlohmann::json j = readJson(kData / "llama2.json");
    const auto llama2 = Tokenizer::fromFile(kData / "llama2.json");
    const auto build = [&](bool bos) {
        GgufBuilder g = spmGguf(j, 1, bos, true);
        g.u32("tokenizer.ggml.eos_token_id", 2);
        return g;
    };
    const auto tok = fromGguf(build(true), "llama2");
    requireSameIds(*tok, *llama2);
    requireSameIds(*tok, *llama2, false);
    CHECK(tok->decode(tok->encode("Hello, world").ids, true) == "Hello, world");
    // add_bos_token false: the same ids without <s>.
    const auto noBos = fromGguf(build(false), "llama2_nobos");
    CHECK(noBos->encode("Hello").ids == llama2->encode("Hello", false).ids);
    CHECK(llama2->encode("Hello").ids.front() == 1);
}

TEST_CASE("A GGUF tokenizer of an unknown kind is refused naming it", "[gguf][tokenizer]") {
    GgufBuilder g = bpeGguf(kData / "gpt2.json", "deepseek-coder");
    const fs::path file = freshDir("gguf_tok_pre") / "tok.gguf";
    g.write(file);
    CHECK_THROWS_WITH(Tokenizer::fromPath(file),
                      file.string() +
                              ": tokenizer.ggml.pre 'deepseek-coder' is not supported (gpt-2, llama-bpe, qwen2)");
    GgufBuilder m;
    m.str("tokenizer.ggml.model", "bert");
    m.strings("tokenizer.ggml.tokens", {"a"});
    m.write(file);
    CHECK_THROWS_WITH(Tokenizer::fromPath(file),
                      file.string() + ": tokenizer.ggml.model 'bert' is not supported (gpt2, llama)");
}

TEST_CASE("A GGUF token type outside 0..6 is refused naming the entry (fuzz_gguf find)", "[gguf][tokenizer]") {
    // fuzz_gguf's crash-93860bb7: a token type of 2,531,390,000 was converted to int unchecked.
    const fs::path file = freshDir("gguf_tok_type") / "tok.gguf";
    GgufBuilder g;
    g.str("tokenizer.ggml.model", "llama");
    g.strings("tokenizer.ggml.tokens", {"<unk>", "a", "b"});
    g.f32s("tokenizer.ggml.scores", {0.0f, -1.0f, -2.0f});
    g.f32s("tokenizer.ggml.token_type", {2.0f, 1.0f, 2.53139e9f});
    g.write(file);
    CHECK_THROWS_WITH(Tokenizer::fromPath(file), Catch::Contains("tokenizer.ggml.token_type[2] is 2.53139e+09") &&
                                                         Catch::Contains("(token types are whole numbers 0..6)"));
}

}  // namespace test_gguf_tokenizer
