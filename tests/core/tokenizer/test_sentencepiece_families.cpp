// SentencePiece folders laid out as each family ships them, with the ids and special tokens of
// transformers' slow tokenizers (golden_spm.json "layouts", restated in make_spm.py from
// tokenization_t5/llama/xlm_roberta/mbart/marian.py and run on SentencePiece's own encoding):
// T5, Llama (legacy and not), Gemma, XLM-R, mBART and mBART-50 (source and target language), Marian
// source.spm / target.spm with vocab.json ids (target_vocab.json with separate_vocabs), ALBERT and
// XLNet (preprocess_text, the digit-comma split), DeBERTa-v2 (do_lower_case, split_by_punct);
// tokenizer.json winning over a .model; bad model files and vocabularies.
#include "attnscope/runtime/error.h"
#include "attnscope/tokenizer/tokenizer.h"
#include "gpt2_fixture.h"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <fstream>

namespace test_sentencepiece_families {

using namespace attnscope;

namespace {

const std::filesystem::path kSpm = std::filesystem::path(ATTNSCOPE_TOKENIZER_DATA) / "spm";

const nlohmann::json& layouts() {
    static const nlohmann::json g = [] {
        std::ifstream in(kSpm / "golden_spm.json", std::ios::binary);
        return nlohmann::json::parse(in)["layouts"];
    }();
    return g;
}

struct Folder {
    std::filesystem::path dir;
    Folder& copy(const std::string& from, const std::string& to) {
        std::filesystem::copy_file(kSpm / from, dir / to, std::filesystem::copy_options::overwrite_existing);
        return *this;
    }
    Folder& write(const std::string& name, const nlohmann::json& j) {
        std::ofstream(dir / name) << j.dump();
        return *this;
    }
};

Folder folder(const std::string& name) { return {testing::freshDir("spm-" + name)}; }

void checkLayout(const Tokenizer& tok, const std::string& layout) {
    INFO("layout " << layout << ", " << tok.origin());
    for (const auto& row : layouts()[layout]) {
        const std::string text = row["text"];
        INFO("text: " << text);
        CHECK(tok.encode(text).ids == row["ids"].get<std::vector<std::int64_t>>());
        CHECK(tok.encode(text, false).ids == row["ids_no_special"].get<std::vector<std::int64_t>>());
    }
}

std::string errorOf(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace

TEST_CASE("T5: spiece.model, </s> appended once, <extra_id_N> at the top", "[tokenizer][sentencepiece][t5]") {
    const auto f = folder("t5")
                           .copy("t5.model", "spiece.model")
                           .write("tokenizer_config.json", {{"tokenizer_class", "T5Tokenizer"}});
    const auto tok = Tokenizer::fromFolder(f.dir);
    REQUIRE(tok);
    CHECK(tok->origin() == (f.dir / "spiece.model").string());
    checkLayout(*tok, "t5");
    CHECK(tok->vocabSize() == 500 + 100);
    CHECK(tok->tokenToId("<extra_id_0>") == 599);
    CHECK(tok->tokenToId("<extra_id_99>") == 500);
    CHECK(tok->idToToken(1) == "</s>");
    CHECK(tok->displayToken(599) == "<extra_id_0>");
    const auto e = tok->encode("Hello world");
    CHECK(e.special.back());
    CHECK(e.offsets.back() == std::pair<std::size_t, std::size_t>(0, 0));
    CHECK(tok->decode(e.ids, true) == "Hello world");
    CHECK(tok->decode(e.ids) == "Hello world</s>");
}

TEST_CASE("Llama: tokenizer.model, <s> per add_bos_token, </s> per add_eos_token",
          "[tokenizer][sentencepiece][llama]") {
    auto f = folder("llama").copy("bpe.model", "tokenizer.model");
    checkLayout(*Tokenizer::fromFolder(f.dir), "llama");  // no config: Llama by the file's name
    f.write("tokenizer_config.json", {{"tokenizer_class", "LlamaTokenizer"}, {"add_eos_token", true}});
    checkLayout(*Tokenizer::fromFolder(f.dir), "llama_eos");
    // "legacy": false: no dummy prefix, "▁" before the text (differs after special tokens).
    f.write("tokenizer_config.json", {{"tokenizer_class", "LlamaTokenizer"}, {"legacy", false}});
    const auto nonLegacy = Tokenizer::fromFolder(f.dir);
    checkLayout(*nonLegacy, "llama_nonlegacy");
    CHECK(nonLegacy->decode(nonLegacy->encode("Hello world").ids, true) == "Hello world");
    f.write("tokenizer_config.json",
            {{"tokenizer_class", "LlamaTokenizer"}, {"add_bos_token", true}, {"bos_token", "<bos>"}});
    CHECK_THAT(errorOf([&] { Tokenizer::fromFolder(f.dir); }),
               Catch::Contains("tokenizer_config.json: add_bos_token is set but the token '<bos>' is not in"));
}

TEST_CASE("XLM-R and mBART: fairseq ids, <mask> and the language codes after the pieces",
          "[tokenizer][sentencepiece][xlmr][mbart]") {
    auto x = folder("xlmr").copy("unigram.model", "sentencepiece.bpe.model");
    const auto xlmr = Tokenizer::fromFolder(x.dir);
    checkLayout(*xlmr, "xlmr");
    CHECK(xlmr->vocabSize() == 1000 + 2);
    CHECK(xlmr->tokenToId("<mask>") == 1001);
    CHECK(xlmr->tokenToId("<pad>") == 1);
    CHECK(xlmr->idToToken(3) == "<unk>");

    auto m = folder("mbart")
                     .copy("unigram.model", "sentencepiece.bpe.model")
                     .write("config.json", {{"model_type", "mbart"}});
    checkLayout(*Tokenizer::fromFolder(m.dir), "mbart");
    m.write("tokenizer_config.json",
            {{"tokenizer_class", "MBartTokenizer"}, {"src_lang", "en_XX"}, {"tgt_lang", "fr_XX"}});
    checkLayout(*Tokenizer::fromFolder(m.dir), "mbart");
    checkLayout(*Tokenizer::fromFolder(m.dir, TokenizerSide::Target), "mbart_target_fr");
    const auto mbart = Tokenizer::fromFolder(m.dir);
    CHECK(mbart->tokenToId("ar_AR") == 1001);
    CHECK(mbart->tokenToId("<mask>") == 1026);
    m.write("tokenizer_config.json", {{"tokenizer_class", "MBartTokenizer"}, {"src_lang", "xx_XX"}});
    CHECK_THAT(errorOf([&] { Tokenizer::fromFolder(m.dir); }), Catch::Contains("language code 'xx_XX'"));
}

TEST_CASE("Marian: source.spm and target.spm with vocab.json ids", "[tokenizer][sentencepiece][marian]") {
    auto f = folder("marian")
                     .copy("unigram.model", "source.spm")
                     .copy("target.model", "target.spm")
                     .copy("marian_vocab.json", "vocab.json");
    const auto source = Tokenizer::fromFolder(f.dir);
    const auto target = Tokenizer::fromFolder(f.dir, TokenizerSide::Target);
    CHECK(source->origin() == (f.dir / "source.spm").string());
    CHECK(target->origin() == (f.dir / "target.spm").string());
    checkLayout(*source, "marian_source");
    checkLayout(*target, "marian_target");
    CHECK(source->encode("Hello world").ids != target->encode("Hello world").ids);
    CHECK(source->tokenToId(">>fr<<") == 2);
    CHECK(source->decode(source->encode(">>fr<< Bonjour").ids, true) == ">>fr<<Bonjour");

    SECTION("a vocab.json that does not cover the pieces") {
        nlohmann::json vocab = nlohmann::json::parse(std::ifstream(kSpm / "marian_vocab.json"));
        vocab.erase("▁the");
        vocab.erase("▁a");
        f.write("vocab.json", vocab);
        const std::string e = errorOf([&] { Tokenizer::fromFolder(f.dir); });
        CHECK_THAT(e,
                   Catch::StartsWith((f.dir / "vocab.json").string() + ": lacks 2 of the 1000 pieces of source.spm"));
        CHECK(e.find('\n') == std::string::npos);
    }
    SECTION("no vocab.json") {
        std::filesystem::remove(f.dir / "vocab.json");
        CHECK_THAT(errorOf([&] { Tokenizer::fromFolder(f.dir); }), Catch::Contains("vocab.json: missing"));
    }
}

TEST_CASE("tokenizer.json wins over a SentencePiece model in the same folder", "[tokenizer][sentencepiece]") {
    auto f = folder("both").copy("t5.model", "spiece.model").copy("unigram.json", "tokenizer.json");
    const auto tok = Tokenizer::fromFolder(f.dir);
    CHECK(tok->origin() == (f.dir / "tokenizer.json").string());
    CHECK(tok->vocabSize() == 1000);
    // Without tokenizer.json the same folder reads spiece.model.
    std::filesystem::remove(f.dir / "tokenizer.json");
    CHECK(Tokenizer::fromFolder(f.dir)->origin() == (f.dir / "spiece.model").string());
}

TEST_CASE("A SentencePiece folder of a family not read yet is refused, not mislabelled", "[tokenizer][sentencepiece]") {
    for (const char* cls : {"PegasusTokenizer", "CamembertTokenizer", "BarthezTokenizer"}) {
        const auto f = folder("other")
                               .copy("t5.model", "spiece.model")
                               .write("tokenizer_config.json", {{"tokenizer_class", cls}});
        CHECK_THAT(errorOf([&] { Tokenizer::fromFolder(f.dir); }),
                   Catch::StartsWith((f.dir / "tokenizer_config.json").string() + ": tokenizer_class '" + cls +
                                     "' is not read"));
    }
}

TEST_CASE("A .model that is not a SentencePiece model is refused naming the file", "[tokenizer][sentencepiece]") {
    auto f = folder("bad");
    for (const std::string& content :
         {std::string("this is not a protobuf\n"), std::string(), std::string("\x0a\x05\x0a\x01", 4)}) {
        std::ofstream(f.dir / "spiece.model", std::ios::binary) << content;
        const std::string e = errorOf([&] { Tokenizer::fromFolder(f.dir); });
        INFO(e);
        CHECK_THAT(e, Catch::StartsWith((f.dir / "spiece.model").string() + ": not a SentencePiece model"));
        CHECK(e.find('\n') == std::string::npos);
    }
}

namespace {

// golden_spm.json's texts that a layout covers, for the decode checks.
std::vector<std::string> plainTexts() {
    std::ifstream in(kSpm / "golden_spm.json", std::ios::binary);
    return nlohmann::json::parse(in)["texts"].get<std::vector<std::string>>();
}

std::vector<std::string> decodedGemma() {
    std::ifstream in(kSpm / "golden_spm.json", std::ios::binary);
    return nlohmann::json::parse(in)["decoded"]["gemma"].get<std::vector<std::string>>();
}

nlohmann::json addedToken(const std::string& content, bool special = true) {
    return {{"content", content},  {"lstrip", false},      {"rstrip", false},
            {"normalized", false}, {"single_word", false}, {"special", special}};
}

}  // namespace

TEST_CASE("Gemma: tokenizer.model (byte-fallback BPE, no dummy prefix), <bos> $A, <eos> per add_eos_token",
          "[tokenizer][sentencepiece][gemma]") {
    auto f = folder("gemma")
                     .copy("gemma.model", "tokenizer.model")
                     .write("tokenizer_config.json", {{"tokenizer_class", "GemmaTokenizer"}});
    const auto tok = Tokenizer::fromFolder(f.dir);
    checkLayout(*tok, "gemma");
    CHECK(tok->tokenToId("<pad>") == 0);
    CHECK(tok->tokenToId("<eos>") == 1);
    CHECK(tok->tokenToId("<bos>") == 2);
    CHECK(tok->tokenToId("<unk>") == 3);
    CHECK(tok->encode("Hello").ids.front() == 2);
    const auto texts = plainTexts();
    const auto decoded = decodedGemma();
    for (std::size_t i = 0; i < texts.size(); ++i) {
        INFO(texts[i]);
        CHECK(tok->decode(tok->encode(texts[i]).ids, true) == decoded[i]);
    }
    // The config's added_tokens_decoder (as Gemma ships it for the turn markers) and add_eos_token.
    nlohmann::json added = nlohmann::json::object();
    added["5"] = addedToken("<start_of_turn>");
    added["6"] = addedToken("<end_of_turn>");
    f.write("tokenizer_config.json",
            {{"tokenizer_class", "GemmaTokenizer"}, {"add_eos_token", true}, {"added_tokens_decoder", added}});
    checkLayout(*Tokenizer::fromFolder(f.dir), "gemma_turns_eos");
    // Without a class, tokenizer.model reads as Llama's, whose <s> this model lacks.
    std::filesystem::remove(f.dir / "tokenizer_config.json");
    CHECK_THAT(errorOf([&] { Tokenizer::fromFolder(f.dir); }),
               Catch::Contains("add_bos_token is set but the token '<s>' is not in"));
}

TEST_CASE("ALBERT: spiece.model with preprocess_text, the digit-comma split and [CLS] $A [SEP]",
          "[tokenizer][sentencepiece][albert]") {
    auto f = folder("albert")
                     .copy("albert.model", "spiece.model")
                     .write("tokenizer_config.json", {{"tokenizer_class", "AlbertTokenizer"}});
    const auto tok = Tokenizer::fromFolder(f.dir);
    checkLayout(*tok, "albert");
    CHECK(tok->tokenToId("[CLS]") == 2);
    CHECK(tok->tokenToId("[MASK]") == 4);
    // "1990," is "▁1990," no more: the digits, then ",".
    const auto e = tok->encode("In 1990, we", false);
    REQUIRE(e.tokens.size() >= 3);
    CHECK(std::find(e.tokens.begin(), e.tokens.end(), ",") != e.tokens.end());
    for (const auto& t : e.tokens)
        CHECK_FALSE((t.size() > 1 && t.back() == ',' && std::isdigit(static_cast<unsigned char>(t[t.size() - 2]))));
    f.write("tokenizer_config.json",
            {{"tokenizer_class", "AlbertTokenizer"}, {"do_lower_case", false}, {"keep_accents", true}});
    checkLayout(*Tokenizer::fromFolder(f.dir), "albert_cased_accents");
    // No tokenizer_config.json: config.json's model_type says ALBERT (spiece.model alone would be T5's).
    std::filesystem::remove(f.dir / "tokenizer_config.json");
    f.write("config.json", {{"model_type", "albert"}});
    checkLayout(*Tokenizer::fromFolder(f.dir), "albert");
}

TEST_CASE("XLNet: spiece.model with ALBERT's preparation, $A <sep> <cls>", "[tokenizer][sentencepiece][xlnet]") {
    const auto f = folder("xlnet")
                           .copy("xlnet.model", "spiece.model")
                           .write("tokenizer_config.json", {{"tokenizer_class", "XLNetTokenizer"}});
    const auto tok = Tokenizer::fromFolder(f.dir);
    checkLayout(*tok, "xlnet");
    const auto e = tok->encode("Hello");
    CHECK(e.tokens[e.tokens.size() - 2] == "<sep>");
    CHECK(e.tokens.back() == "<cls>");
}

TEST_CASE("DeBERTa-v2: spm.model, [MASK] after the pieces, do_lower_case and split_by_punct",
          "[tokenizer][sentencepiece][deberta]") {
    auto f = folder("deberta").copy("deberta.model", "spm.model");
    const auto tok = Tokenizer::fromFolder(f.dir);  // by the file's name
    CHECK(tok->origin() == (f.dir / "spm.model").string());
    checkLayout(*tok, "deberta_v2");
    CHECK(tok->tokenToId("[MASK]") == 700);
    CHECK(tok->tokenToId("[UNK]") == 3);
    f.write("tokenizer_config.json",
            {{"tokenizer_class", "DebertaV2Tokenizer"}, {"do_lower_case", true}, {"split_by_punct", true}});
    checkLayout(*Tokenizer::fromFolder(f.dir), "deberta_v2_lower_punct");
}

TEST_CASE("mBART-50: the 52 language codes, src_lang $A </s> and tgt_lang on the target side",
          "[tokenizer][sentencepiece][mbart]") {
    auto m = folder("mbart50").copy("unigram.model", "sentencepiece.bpe.model");
    m.write("tokenizer_config.json",
            {{"tokenizer_class", "MBart50Tokenizer"}, {"src_lang", "en_XX"}, {"tgt_lang", "sl_SI"}});
    const auto tok = Tokenizer::fromFolder(m.dir);
    checkLayout(*tok, "mbart50");
    checkLayout(*Tokenizer::fromFolder(m.dir, TokenizerSide::Target), "mbart50_target_sl");
    CHECK(tok->tokenToId("sl_SI") == 1001 + 51);
    CHECK(tok->tokenToId("<mask>") == 1001 + 52);
    m.write("tokenizer_config.json", {{"tokenizer_class", "MBart50Tokenizer"}, {"src_lang", "xx_XX"}});
    CHECK_THAT(errorOf([&] { Tokenizer::fromFolder(m.dir); }), Catch::Contains("is not one of mBART-50's 52"));
}

TEST_CASE("Marian with separate_vocabs: target_vocab.json numbers the target side",
          "[tokenizer][sentencepiece][marian]") {
    auto f = folder("marian-separate").copy("unigram.model", "source.spm").copy("target.model", "target.spm");
    f.copy("marian_vocab.json", "vocab.json").copy("marian_target_vocab.json", "target_vocab.json");
    // Without separate_vocabs, target_vocab.json is not read (as MarianTokenizer).
    checkLayout(*Tokenizer::fromFolder(f.dir, TokenizerSide::Target), "marian_target");
    f.write("tokenizer_config.json", {{"separate_vocabs", true}});
    const auto target = Tokenizer::fromFolder(f.dir, TokenizerSide::Target);
    checkLayout(*Tokenizer::fromFolder(f.dir), "marian_source");
    checkLayout(*target, "marian_target_separate");
    CHECK(target->idToToken(0) == "</s>");
    std::filesystem::remove(f.dir / "target_vocab.json");
    CHECK_THAT(errorOf([&] { Tokenizer::fromFolder(f.dir, TokenizerSide::Target); }),
               Catch::StartsWith((f.dir / "target_vocab.json").string() + ": missing"));
}

TEST_CASE("SigLIP: spiece.model as SiglipTokenizer lays it out (lowercase, canonicalize_text, </s> once)",
          "[tokenizer][sentencepiece][siglip]") {
    // SiglipTokenizer encodes like non-legacy Llama (no dummy prefix, "▁" before the text) after its
    // canonicalize_text, then appends </s>: on texts that canonicalization leaves as they are the
    // ids are llama_nonlegacy's (golden_spm.json, made with SentencePiece) without <s>, plus </s> (2).
    auto f = folder("siglip").copy("bpe.model", "spiece.model");
    f.write("tokenizer_config.json", {{"tokenizer_class", "SiglipTokenizer"}});
    const auto tok = Tokenizer::fromFolder(f.dir);
    REQUIRE(tok);
    std::size_t compared = 0;
    for (const auto& row : layouts()["llama_nonlegacy"]) {
        const std::string text = row["text"];
        if (text != "x" && text != "\xE2\x96\x81"
                                   "already\xE2\x96\x81"
                                   "marked")
            continue;
        std::vector<std::int64_t> want = row["ids_no_special"];
        want.push_back(2);
        INFO(text);
        CHECK(tok->encode(text).ids == want);
        ++compared;
    }
    CHECK(compared == 2);
    // Case, ASCII punctuation and whitespace runs are canonicalized away; </s> is not added twice.
    const auto plain = tok->encode("hello world").ids;
    CHECK(tok->encode("Hello,   World!!").ids == plain);
    CHECK(tok->encode("  HELLO (world) ").ids.back() == 2);
    CHECK(tok->encode("hello world</s>").ids == plain);
    CHECK(tok->encode("X.").ids == tok->encode("x").ids);
    // do_lower_case false keeps the case (and so other pieces).
    f.write("tokenizer_config.json", {{"tokenizer_class", "SiglipTokenizer"}, {"do_lower_case", false}});
    CHECK(Tokenizer::fromFolder(f.dir)->encode("Hello World").ids != plain);
}

}  // namespace test_sentencepiece_families
