// attnscope-cli on the models already on disk: a model id in a hub cache built here (symlinks into
// blobs/), a folder of PyTorch .bin files (tests/data/torch_bin, written by python3-torch) and
// files standing for their folder; a hostile .bin and a missing id exit 2 with one line.
#include "cli_run.h"
#include "gguf_writer.h"

#include <nlohmann/json.hpp>

#include <cstdlib>

namespace test_cli_hub {

using namespace attnscope::testing;
namespace fs = std::filesystem;

namespace {

const fs::path kData = fs::path(ATTNSCOPE_TOKENIZER_DATA).parent_path() / "torch_bin";
const std::string kCommit = "89abcdef0123456789abcdef0123456789abcdef";

// HF_HUB_CACHE for one scope (the fork server runs each command with this process's environment).
struct HubCacheScope {
    explicit HubCacheScope(const fs::path& cache) { ::setenv("HF_HUB_CACHE", cache.c_str(), 1); }
    ~HubCacheScope() { ::unsetenv("HF_HUB_CACHE"); }
};

// models--org--tiny at kCommit (refs/main), every file a symlink into blobs/.
fs::path hubCacheWith(const fs::path& source) {
    const fs::path cache = freshDir("cli-hub-cache");
    const fs::path repo = cache / "models--org--tiny";
    fs::create_directories(repo / "refs");
    fs::create_directories(repo / "blobs");
    fs::create_directories(repo / "snapshots" / kCommit);
    writeText(repo / "refs" / "main", kCommit);
    for (const auto& entry : fs::directory_iterator(source)) {
        const std::string blob = "b-" + entry.path().filename().string();
        fs::copy_file(entry.path(), repo / "blobs" / blob);
        fs::create_symlink(fs::path("../../blobs") / blob, repo / "snapshots" / kCommit / entry.path().filename());
    }
    return cache;
}

nlohmann::json infoJson(const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"info"};
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), {"--device", "cpu", "--json"});
    const CliResult r = runCli(args);
    INFO(r.err);
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("cli info opens a model id from the hub cache, offline", "[cli][hub]") {
    const fs::path cache = hubCacheWith(kData / "gpt2-legacy");
    const HubCacheScope scope(cache);
    const auto j = infoJson({"org/tiny"});
    CHECK(j["family"] == "gpt2");
    CHECK(j["layers"] == 2);
    CHECK(infoJson({"org/tiny", "--revision", kCommit})["heads"] == 2);
    CHECK(infoJson({"org/tiny", "--revision", "main"})["hidden"] == 8);

    requireCliInputError(runCli({"info", "org/other", "--device", "cpu"}),
                         "org/other: no such model folder, and not in the Hugging Face cache (looked for " +
                                 (cache / "models--org--other").string());
    requireCliInputError(runCli({"info", "org/tiny", "--revision", "v9", "--device", "cpu"}),
                         "revision 'v9' is not in the Hugging Face cache");
    requireCliInputError(runCli({"info", kData.string() + "/gpt2", "--revision", "main"}),
                         "--revision applies to Hugging Face model ids");
}

TEST_CASE("cli opens .bin folders and model files like the safetensors folder", "[cli][hub][torch_bin]") {
    const auto reference = infoJson({(kData / "gpt2").string()});
    for (const fs::path& model : {kData / "gpt2-zip", kData / "gpt2-shards",
                                  kData / "gpt2-legacy" / "pytorch_model.bin", kData / "gpt2" / "model.safetensors"}) {
        INFO(model);
        const auto j = infoJson({model.string()});
        CHECK(j["family"] == reference["family"]);
        CHECK(j["layers"] == reference["layers"]);
    }
    // The maps of the .bin folder are the safetensors folder's, bit for bit.
    const fs::path out = freshDir("cli-bin-attention");
    for (const char* folder : {"gpt2", "gpt2-zip"}) {
        const CliResult r = runCli({"attention", (kData / folder).string(), "--ids", "3,1,4,1,5,9", "--out",
                                    (out / folder).string(), "--device", "cpu"});
        INFO(r.err);
        REQUIRE(r.code == 0);
    }
    const std::string a = slurpFile(out / "gpt2" / "attention.npy"), b = slurpFile(out / "gpt2-zip" / "attention.npy");
    CHECK(a.size() > 128);
    CHECK(a == b);
}

TEST_CASE("cli refuses a hostile or broken .bin with one line and runs nothing", "[cli][hub][torch_bin]") {
    const fs::path dir = freshDir("cli-bin-evil");
    fs::copy_file(kData / "gpt2" / "config.json", dir / "config.json");
    const fs::path marker = dir / "ran";
    const std::string command = "touch " + marker.string();
    std::string len(4, '\0');
    for (int i = 0; i < 4; ++i) len[i] = static_cast<char>(command.size() >> (8 * i));
    const std::string header = std::string("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.", 15) +
                               "\x80\x02M\xe9\x03." + "\x80\x02}.";
    writeText(dir / "pytorch_model.bin", header +
                                                 "\x80\x02"
                                                 "cposix\nsystem\n(X" +
                                                 len + command + "tR.");
    requireCliInputError(runCli({"info", dir.string(), "--device", "cpu"}),
                         "names the global 'posix.system', which a state dict never needs");
    CHECK_FALSE(fs::exists(marker));

    writeText(dir / "pytorch_model.bin", slurpFile(kData / "gpt2-zip" / "pytorch_model.bin").substr(0, 5000));
    requireCliInputError(runCli({"info", dir.string(), "--device", "cpu"}), "pytorch_model.bin: zip archive:");
}

TEST_CASE("cli tokenize opens a SentencePiece file with its folder", "[cli][hub][tokenize]") {
    const fs::path dir = freshDir("cli-spiece-file");
    fs::copy_file(fs::path(ATTNSCOPE_TOKENIZER_DATA) / "spm" / "unigram.model", dir / "spiece.model");
    const CliResult file = runCli({"tokenize", (dir / "spiece.model").string(), "--text", "Hello world"});
    const CliResult folder = runCli({"tokenize", dir.string(), "--text", "Hello world"});
    INFO(file.err);
    REQUIRE(file.code == 0);
    REQUIRE(folder.code == 0);
    CHECK(nlohmann::json::parse(file.out)["ids"] == nlohmann::json::parse(folder.out)["ids"]);
    CHECK(nlohmann::json::parse(file.out)["tokenizer"] == (dir / "spiece.model").string());
}

TEST_CASE("cli info, attention and tokenize open a GGUF file and ollama:NAME; a miss exits 2 with one line",
          "[cli][gguf]") {
    LlamaSpec spec;
    spec.hidden = 64;  // rows of whole Q8_0 blocks
    spec.inner = 64;
    const Checkpoint c = makeLlama(spec, 9);
    GgufBuilder g = ggufFromCheckpoint(c, "llama", Ggml::Q8_0);
    g.str("tokenizer.ggml.model", "gpt2");
    std::vector<std::string> tokens;
    for (int i = 0; i < spec.vocab; ++i)
        tokens.push_back(std::string(1, static_cast<char>('a' + i % 26)) + std::to_string(i / 26));
    tokens[0] = "a";
    tokens[1] = "b";
    tokens[2] = "ab";
    g.strings("tokenizer.ggml.tokens", tokens);
    g.strings("tokenizer.ggml.merges", {"a b"});
    const fs::path root = freshDir("cli-ollama");
    const std::string digest(64, 'c');
    fs::create_directories(root / "manifests/registry.ollama.ai/library/tiny");
    fs::create_directories(root / "blobs");
    const fs::path blob = root / "blobs" / ("sha256-" + digest);  // no extension: recognised by content
    g.write(blob);
    writeText(root / "manifests/registry.ollama.ai/library/tiny/q8",
              R"({"layers":[{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:)" + digest + R"("}]})");
    ::setenv("OLLAMA_MODELS", root.c_str(), 1);

    const auto j = infoJson({blob.string()});
    CHECK(j["family"] == "llama");
    CHECK(j["dtype"] == "F32+Q8_0");
    CHECK(infoJson({"ollama:tiny:q8"})["layers"] == spec.layers);
    const fs::path out = freshDir("cli-gguf-attention");
    const CliResult a =
            runCli({"attention", "ollama:tiny:q8", "--text", "abab", "--out", out.string(), "--device", "cpu"});
    INFO(a.err);
    CHECK(a.code == 0);
    CHECK(fs::exists(out / "attention.npy"));
    const CliResult t = runCli({"tokenize", blob.string(), "--text", "abab"});
    CHECK(t.code == 0);
    CHECK(nlohmann::json::parse(t.out)["ids"] == nlohmann::json::array({2, 2}));
    const CliResult miss = runCli({"info", "ollama:tiny"});
    CHECK(miss.code == 2);
    CHECK(miss.err == "error: ollama:tiny: no such Ollama model (looked for " +
                              (root / "manifests/registry.ollama.ai/library/tiny/latest").string() + ")\n");
    ::unsetenv("OLLAMA_MODELS");
}

}  // namespace test_cli_hub
