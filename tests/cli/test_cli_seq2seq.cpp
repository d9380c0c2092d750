// attnscope-cli on the encoder-decoders (T5, BART, mBART, Marian): encoder.npy, decoder.npy and
// cross.npy equal the double-precision reference (fixtures_seq2seq.h) with a forced target and
// greedily decoded, tokens.json labels the rows and what each row writes, and bad input exits 2
// with one line.
#include "cli_run.h"
#include "fixtures_seq2seq.h"
#include "npy_read.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <sstream>

namespace test_cli_seq2seq {

using namespace attnscope::testing;

namespace {

const std::vector<long long> kSource = {3, 17, 5, 39, 22, 5, 5, 11, 30, 1, 9, 14, 2, 8, 27, 33, 6, 19};
const std::vector<long long> kTarget = {0, 12, 7, 33, 2, 9, 21, 4};

std::string list(const std::vector<long long>& ids) {
    std::ostringstream s;
    for (std::size_t i = 0; i < ids.size(); ++i) s << (i ? "," : "") << ids[i];
    return s.str();
}

std::filesystem::path written(const Checkpoint& c, const std::string& name, const WriteOptions& o = {}) {
    const auto dir = freshDir(name);
    writeCheckpoint(dir, c, o);
    return dir;
}

// Largest |npy - reference| of one block file, after checking its shape [L, H, rows, cols].
double npyError(const std::filesystem::path& file, const std::vector<std::vector<std::vector<double>>>& ref,
                std::int64_t rows, std::int64_t cols) {
    const NpyArray a = readNpy(file);
    const auto L = static_cast<std::int64_t>(ref.size()), H = static_cast<std::int64_t>(ref[0].size());
    REQUIRE(a.shape == std::vector<std::int64_t>{L, H, rows, cols});
    double worst = 0;
    for (std::int64_t l = 0; l < L; ++l)
        for (std::int64_t h = 0; h < H; ++h)
            for (std::int64_t i = 0; i < rows * cols; ++i)
                worst = std::max(worst, std::abs(a.values[(l * H + h) * rows * cols + i] - ref[l][h][i]));
    return worst;
}

// Runs `attention DIR --ids source extra... --out OUT` and checks all three files against ref.
nlohmann::json requireCliMatches(const std::filesystem::path& dir, const std::vector<long long>& source,
                                 const std::vector<long long>& rows, const Seq2seqReference& ref,
                                 const std::vector<std::string>& extra) {
    const auto out = freshDir("cli-seq2seq-out");
    std::vector<std::string> args = {"attention", dir.string(), "--ids",    list(source),
                                     "--out",     out.string(), "--device", "cpu"};
    args.insert(args.end(), extra.begin(), extra.end());
    const CliResult r = runCli(args);
    INFO(r.err);
    REQUIRE(r.code == 0);
    const auto S = static_cast<std::int64_t>(source.size()), T = static_cast<std::int64_t>(rows.size());
    CHECK(npyError(out / "encoder.npy", ref.encoder, S, S) < 1e-5);
    CHECK(npyError(out / "decoder.npy", ref.decoder, T, T) < 1e-5);
    CHECK(npyError(out / "cross.npy", ref.cross, T, S) < 1e-5);
    const auto tokens = nlohmann::json::parse(slurpFile(out / "tokens.json"));
    CHECK(tokens["source"].size() == source.size());
    CHECK(tokens["target"].size() == rows.size());
    CHECK(tokens["output"].size() == rows.size());
    CHECK(tokens["output_ids"].get<std::vector<long long>>() == ref.argmax());
    return tokens;
}

}  // namespace

TEST_CASE("cli attention on T5 with --target-ids writes the reference's encoder, decoder and cross maps", "[cli][t5]") {
    T5Spec spec;
    spec.gated = true;
    spec.tied = false;
    const Checkpoint c = makeT5(spec, 71);
    const auto dir = written(c, "cli-t5");
    requireCliMatches(dir, kSource, kTarget, referenceT5(c, spec, kSource, kTarget), {"--target-ids", list(kTarget)});
    // Masking a cross head re-runs the forced target and reports the rows whose output changed.
    const auto out = freshDir("cli-t5-mask");
    const CliResult r = runCli({"attention", dir.string(), "--ids", list(kSource), "--target-ids", list(kTarget),
                                "--out", out.string(), "--mask-heads", "cross:0:1,encoder:1:0"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const auto change = nlohmann::json::parse(slurpFile(out / "output_change.json"));
    CHECK(change["kind"] == "sequence");
    Seq2seqRun run;
    run.maskHeads = {{"cross", 0, 1}, {"encoder", 1, 0}};
    const auto ref = referenceT5(c, spec, kSource, kTarget, run);
    CHECK(npyError(out / "cross.npy", ref.cross, 8, 18) < 1e-5);
}

TEST_CASE("cli attention on BART, mBART and Marian decodes greedily up to --max-new-tokens", "[cli][bart]") {
    for (const std::string type : {"bart", "mbart", "marian"}) {
        BartSpec spec;
        spec.type = type;
        spec.scaleEmbedding = type != "bart";
        const Checkpoint c = makeBart(spec, 72);
        const auto dir = written(c, "cli-" + type, WriteOptions{"F32", 2});
        auto reference = [&](const std::vector<long long>& rows) { return referenceBart(c, spec, kSource, rows); };
        const auto want = referenceGreedy(reference, spec.decoderStart, spec.eos, 5);
        std::vector<long long> rows = {spec.decoderStart};
        rows.insert(rows.end(), want.begin(), want.end() - 1);
        INFO(type);
        const auto tokens = requireCliMatches(dir, kSource, rows, reference(rows), {"--max-new-tokens", "5"});
        CHECK(tokens["output_ids"].get<std::vector<long long>>() == want);
    }
}

TEST_CASE("cli attention on T5 with --text and --target-text: the target side tokenized and shifted", "[cli][t5]") {
    T5Spec spec;
    const Checkpoint c = makeT5(spec, 73);
    const auto dir = written(c, "cli-t5-text");
    writeWordTokenizer(dir, {"the", "cat", "sat", "dog"}, {}, {"</s>"});
    const std::vector<long long> source = {3, 4, 5, 1}, rows = {0, 3, 6};
    const auto out = freshDir("cli-t5-text-out");
    const CliResult r = runCli(
            {"attention", dir.string(), "--text", "the cat sat", "--target-text", "the dog", "--out", out.string()});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const auto ref = referenceT5(c, spec, source, rows);
    CHECK(npyError(out / "cross.npy", ref.cross, 3, 4) < 1e-5);
    const auto tokens = nlohmann::json::parse(slurpFile(out / "tokens.json"));
    CHECK(tokens["source"] == nlohmann::json({"·the", "·cat", "·sat", "</s>"}));
    CHECK(tokens["target"] == nlohmann::json({"<pad>", "·the", "·dog"}));
}

TEST_CASE("cli attention on encoder-decoders: bad targets and configs exit 2 with one line", "[cli][bart]") {
    BartSpec spec;
    const auto dir = written(makeBart(spec, 74), "cli-bart-bad");
    const auto out = freshDir("cli-bart-bad-out");
    auto run = [&](std::vector<std::string> extra) {
        std::vector<std::string> args = {"attention", dir.string(), "--ids", list({0, 5, 7, 2}), "--out", out.string()};
        args.insert(args.end(), extra.begin(), extra.end());
        return runCli(args);
    };
    requireCliInputError(run({"--target-ids", list(std::vector<long long>(21, 5))}),
                         "the decoder has only 20 positions");
    requireCliInputError(run({"--target-ids", "2,40"}), "target id 40");
    requireCliInputError(run({"--max-new-tokens", "0"}), "--max-new-tokens");
    requireCliInputError(run({"--max-new-tokens", "5000"}), "--max-new-tokens");
    requireCliInputError(run({"--target-text", "hello"}), "no tokenizer");
    CHECK(run({"--target-ids", "2,5", "--target-text", "x"}).code == 1);
    CHECK(run({"--target-ids", "2,5", "--max-new-tokens", "3"}).code == 1);
    Checkpoint bad = makeBart(spec, 74);
    bad.config["decoder_attention_heads"] = 5;
    const CliResult r =
            runCli({"attention", written(bad, "cli-bart-bad-config").string(), "--ids", "1,2", "--out", out.string()});
    requireCliInputError(r, "decoder_attention_heads");
    CHECK_THAT(r.err, Catch::Contains("config.json"));
    // A decoder-only model takes no target.
    Gpt2Spec gpt2;
    const auto g = freshDir("cli-seq2seq-gpt2");
    writeGpt2Folder(g, makeGpt2(gpt2, 3));
    const CliResult notSeq2seq =
            runCli({"attention", g.string(), "--ids", "1,2", "--target-ids", "0,1", "--out", out.string()});
    CHECK(notSeq2seq.code == 1);
    CHECK_THAT(notSeq2seq.err, Catch::Contains("encoder-decoder"));
}

namespace {

const std::filesystem::path kTokData = std::filesystem::path(ATTNSCOPE_TOKENIZER_DATA);

nlohmann::json readJson(const std::filesystem::path& file) { return nlohmann::json::parse(slurpFile(file)); }

// Runs `attention DIR --text SOURCE --target-text TARGET` and checks the maps against the reference
// on the ids the real tokenizers give (`source`, `rows`: computed by the caller from golden data).
void requireTextTarget(const std::filesystem::path& dir, const Checkpoint& c, const BartSpec& spec,
                       const std::string& sourceText, const std::string& targetText,
                       const std::vector<long long>& source, const std::vector<long long>& rows) {
    const auto out = freshDir("cli-text-target-out");
    const CliResult r = runCli(
            {"attention", dir.string(), "--text", sourceText, "--target-text", targetText, "--out", out.string()});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const auto tokens = readJson(out / "tokens.json");
    REQUIRE(tokens["source"].size() == source.size());
    REQUIRE(tokens["target"].size() == rows.size());
    const auto ref = referenceBart(c, spec, source, rows);
    const auto S = static_cast<std::int64_t>(source.size()), T = static_cast<std::int64_t>(rows.size());
    CHECK(npyError(out / "encoder.npy", ref.encoder, S, S) < 1e-5);
    CHECK(npyError(out / "decoder.npy", ref.decoder, T, T) < 1e-5);
    CHECK(npyError(out / "cross.npy", ref.cross, T, S) < 1e-5);
    CHECK(tokens["output_ids"].get<std::vector<long long>>() == ref.argmax());
}

}  // namespace

TEST_CASE("cli attention on BART with --text and --target-text: byte-level BPE, <s> $A </s>, shifted behind </s>",
          "[cli][bart][tokenize]") {
    // BART's vocab.json is GPT-2's pieces behind fairseq's <s> <pad> </s> <unk> (ids + 4), <mask>
    // last; merges.txt is GPT-2's. Golden ids: Hugging Face tokenizers' GPT-2 ids (golden.json) + 4.
    const auto gpt2 = readJson(kTokData / "gpt2" / "vocab.json");
    nlohmann::json vocab = {{"<s>", 0}, {"<pad>", 1}, {"</s>", 2}, {"<unk>", 3}};
    for (auto it = gpt2.begin(); it != gpt2.end(); ++it) vocab[it.key()] = it.value().get<long long>() + 4;
    vocab["<mask>"] = static_cast<long long>(gpt2.size()) + 4;
    BartSpec spec;
    spec.vocab = static_cast<int>(gpt2.size()) + 5;
    spec.positions = 64;
    const Checkpoint c = makeBart(spec, 75);
    const auto dir = written(c, "cli-bart-text");
    writeText(dir / "vocab.json", vocab.dump());
    std::filesystem::copy_file(kTokData / "gpt2" / "merges.txt", dir / "merges.txt");
    writeText(dir / "tokenizer_config.json", R"({"tokenizer_class": "BartTokenizer"})");

    const auto golden = readJson(kTokData / "golden.json");
    const auto& texts = golden["texts"];
    const nlohmann::json* gpt2Case = nullptr;
    for (const auto& k : golden["cases"])
        if (k["name"] == "gpt2") gpt2Case = &k;
    REQUIRE(gpt2Case);
    auto bartIds = [&](std::size_t text) {
        std::vector<long long> ids = {0};
        for (const auto& id : (*gpt2Case)["results"][text]["ids"]) ids.push_back(id.get<long long>() + 4);
        ids.push_back(2);
        return ids;
    };
    for (const auto& [s, t] : {std::pair<std::size_t, std::size_t>{0, 7}, {4, 2}}) {
        const auto source = bartIds(s);
        const auto labels = bartIds(t);
        std::vector<long long> rows = {2};  // decoder_start_token_id, then the labels but the last
        rows.insert(rows.end(), labels.begin(), labels.end() - 1);
        INFO("source: " << texts[s] << " target: " << texts[t]);
        requireTextTarget(dir, c, spec, texts[s], texts[t], source, rows);
    }
}

TEST_CASE("cli attention on mBART and mBART-50 with --text and --target-text through sentencepiece.bpe.model",
          "[cli][bart][sentencepiece]") {
    // Golden ids: SentencePiece's encoding with transformers' layouts (spm/golden_spm.json).
    const auto layouts = readJson(kTokData / "spm" / "golden_spm.json")["layouts"];
    struct Case {
        const char* cls;
        const char* tgtLang;
        const char* source;
        const char* target;
        int vocab;
    };
    for (const Case& k : {Case{"MBartTokenizer", "fr_XX", "mbart", "mbart_target_fr", 1000 + 1 + 25 + 1},
                          Case{"MBart50Tokenizer", "sl_SI", "mbart50", "mbart50_target_sl", 1000 + 1 + 52 + 1}}) {
        BartSpec spec;
        spec.type = "mbart";
        spec.scaleEmbedding = true;
        spec.vocab = k.vocab;
        spec.positions = 64;
        const Checkpoint c = makeBart(spec, 76);
        const auto dir = written(c, std::string("cli-") + k.source + "-text");
        std::filesystem::copy_file(kTokData / "spm" / "unigram.model", dir / "sentencepiece.bpe.model");
        writeText(dir / "tokenizer_config.json",
                  nlohmann::json({{"tokenizer_class", k.cls}, {"src_lang", "en_XX"}, {"tgt_lang", k.tgtLang}}).dump());
        const auto& sourceRow = layouts[k.source][1];
        const auto& targetRow = layouts[k.target][4];
        const auto source = sourceRow["ids"].get<std::vector<long long>>();
        const auto labels = targetRow["ids"].get<std::vector<long long>>();
        // mBART's shift_tokens_right: the last token of the labels (mBART: the language code,
        // mBART-50: </s>) moves to the front.
        std::vector<long long> rows = {labels.back()};
        rows.insert(rows.end(), labels.begin(), labels.end() - 1);
        INFO(k.cls);
        requireTextTarget(dir, c, spec, sourceRow["text"], targetRow["text"], source, rows);
    }
}

}  // namespace test_cli_seq2seq
