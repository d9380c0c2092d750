// The model browser's scan (models/model_catalog.h) on a tree made here: a hub cache with a
// snapshot of symlinks into blobs/ and one of plain copies, GGUF files written by the tests' GGUF
// writer in an LM Studio folder and an Ollama store, folders AttnScope cannot open (with their
// reasons), recents, and the built-in models. Parameters are checked against the loaded model's
// own count, sizes against the files' bytes, and every openable entry's spec opens.
#include "attnscope/io/model_location.h"
#include "attnscope/models/model.h"
#include "attnscope/models/model_catalog.h"
#include "family_checks.h"
#include "gguf_writer.h"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <fstream>

namespace test_model_catalog {

using namespace attnscope;
using namespace attnscope::testing;
namespace fs = std::filesystem;

namespace {

const fs::path kData = fs::path(ATTNSCOPE_TOKENIZER_DATA).parent_path() / "torch_bin";
const std::string kCommit = "0123456789abcdef0123456789abcdef01234567";

std::uint64_t bytesOf(const fs::path& dir) {
    std::uint64_t n = 0;
    for (const auto& e : fs::directory_iterator(dir)) n += fs::file_size(e.path());
    return n;
}

// models--ORG--NAME, refs/main -> kCommit, the snapshot's files as symlinks into blobs/ or copies.
fs::path hubModel(const fs::path& cache, const std::string& folder, const fs::path& source, bool links) {
    const fs::path repo = cache / folder;
    fs::create_directories(repo / "refs");
    writeText(repo / "refs" / "main", kCommit);
    const fs::path snapshot = repo / "snapshots" / kCommit;
    fs::create_directories(snapshot);
    fs::create_directories(repo / "blobs");
    int blob = 0;
    for (const auto& entry : fs::directory_iterator(source)) {
        if (links) {
            const std::string name = "blob" + std::to_string(blob++);
            fs::copy(entry.path(), repo / "blobs" / name);
            fs::create_symlink(fs::path("..") / ".." / "blobs" / name, snapshot / entry.path().filename());
        } else {
            fs::copy(entry.path(), snapshot / entry.path().filename());
        }
    }
    return snapshot;
}

const CatalogEntry* find(const std::vector<CatalogEntry>& all, const std::string& name) {
    for (const auto& e : all)
        if (e.name == name) return &e;
    return nullptr;
}

LlamaSpec tinyLlama() {
    LlamaSpec spec;
    spec.hidden = 64;
    spec.inner = 64;
    return spec;
}

// Values a safetensors file stores, from its JSON header read here (8-byte length, then JSON).
std::int64_t storedValues(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::uint64_t n = 0;
    in.read(reinterpret_cast<char*>(&n), 8);
    std::string header(n, '\0');
    in.read(header.data(), static_cast<std::streamsize>(n));
    std::int64_t total = 0;
    const nlohmann::json j = nlohmann::json::parse(header);
    for (auto it = j.begin(); it != j.end(); ++it) {
        if (it.key() == "__metadata__") continue;
        std::int64_t count = 1;
        for (const auto& d : it.value()["shape"]) count *= d.get<std::int64_t>();
        total += count;
    }
    return total;
}

std::int64_t checkpointParameters(const Checkpoint& c) {
    std::int64_t n = 0;
    for (const auto& [name, t] : c.tensors) n += static_cast<std::int64_t>(t.values.size());
    return n;
}

}  // namespace

TEST_CASE("The model catalog lists hub snapshots, GGUF stores and folders with what each is", "[catalog]") {
    const fs::path root = freshDir("catalog");
    const fs::path cache = root / "hub";
    const fs::path linked = hubModel(cache, "models--org--tiny", kData / "gpt2-zip", true);
    const fs::path copied = hubModel(cache, "models--gpt2", kData / "gpt2", false);

    // LM Studio: publisher/repo/file.gguf, a Q8_0 llama, one with a tensor type AttnScope lacks,
    // and a vision projector (an architecture it does not run).
    const Checkpoint llama = makeLlama(tinyLlama(), 3);
    const fs::path lm = root / "lmstudio";
    fs::create_directories(lm / "pub" / "tiny-GGUF");
    const fs::path q8 = lm / "pub" / "tiny-GGUF" / "tiny-Q8_0.gguf";
    ggufFromCheckpoint(llama, "llama", Ggml::Q8_0).write(q8);
    GgufBuilder odd = ggufFromCheckpoint(llama, "llama", Ggml::F16);
    odd.rawTensor("extra.weight", {256}, 11, std::vector<std::uint8_t>(110, 0));  // one Q3_K block
    odd.write(lm / "pub" / "tiny-GGUF" / "tiny-odd.gguf");
    GgufBuilder clip;
    clip.str("general.architecture", "clip");
    clip.tensor("v.weight", {4, 8}, std::vector<float>(32, 0.5f));
    clip.write(lm / "pub" / "tiny-GGUF" / "mmproj.gguf");

    // Ollama: a manifest naming the Q8_0 file's copy as its model layer.
    const fs::path ollama = root / "ollama";
    const std::string digest(64, 'a');
    fs::create_directories(ollama / "blobs");
    fs::copy(q8, ollama / "blobs" / ("sha256-" + digest));
    fs::create_directories(ollama / "manifests" / "registry.ollama.ai" / "library" / "tiny");
    writeText(ollama / "manifests" / "registry.ollama.ai" / "library" / "tiny" / "q8",
              R"({"layers":[{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:)" + digest + "\"}]}");

    // A chosen folder: a model AttnScope has no family for, and one without weights.
    const fs::path mine = root / "mine";
    fs::create_directories(mine / "mamba");
    fs::copy(kData / "gpt2" / "model.safetensors", mine / "mamba" / "model.safetensors");
    writeText(mine / "mamba" / "config.json", R"({"model_type": "mamba"})");
    fs::create_directories(mine / "deep" / "no-weights");
    fs::copy(kData / "gpt2" / "config.json", mine / "deep" / "no-weights" / "config.json");

    CatalogSources sources;
    sources.recents = {copied.string(), (root / "gone").string()};
    sources.folders = {mine};
    sources.hubCache = cache;
    sources.lmStudio = {lm, root / "absent"};
    sources.ollama = ollama;
    sources.builtins = false;
    const auto all = scanModels(sources);
    for (const auto& e : all) INFO(e.source << " " << e.name << ": " << e.reason);

    const auto gpt2 = loadCpu(kData / "gpt2");
    SECTION("hub snapshots through symlinks and copies (the copy first as a recent, listed once)") {
        const CatalogEntry* tiny = find(all, "org/tiny");
        REQUIRE(tiny);
        CHECK(tiny->source == "hub");
        CHECK(tiny->path == linked);
        CHECK(tiny->family == "gpt2");
        CHECK(tiny->parameters >= gpt2->info().parameters);  // the .bin also stores GPT-2's mask buffers
        CHECK(tiny->dtype == "F32");
        CHECK(tiny->bytes == bytesOf(kData / "gpt2-zip"));  // the blobs' bytes, through the links
        CHECK(tiny->openable);
        CHECK(tiny->reason.empty());
        CHECK(loadCpu(tiny->spec)->info().family == "gpt2");

        REQUIRE(all.front().source == "recent");
        CHECK(all.front().path == copied);
        CHECK(all.front().parameters == storedValues(kData / "gpt2" / "model.safetensors"));
        CHECK(all.front().parameters >= gpt2->info().parameters);
        CHECK(all.front().bytes == bytesOf(kData / "gpt2"));
        CHECK_FALSE(find(all, "gpt2"));  // the hub entry of the same snapshot is not listed again
        const CatalogEntry* gone = find(all, "gone");
        REQUIRE(gone);
        CHECK_FALSE(gone->openable);
        CHECK(gone->reason.find("no such") != std::string::npos);
    }
    SECTION("GGUF files: architecture, parameters, quantisation, size, and why not") {
        const CatalogEntry* t = find(all, "tiny-Q8_0");
        REQUIRE(t);
        CHECK(t->source == "lmstudio");
        CHECK(t->family == "llama");
        CHECK(t->parameters == checkpointParameters(llama));
        CHECK(t->dtype == "Q8_0");
        CHECK(t->bytes == fs::file_size(q8));
        CHECK(t->openable);
        CHECK(loadCpu(t->spec)->info().layers == tinyLlama().layers);

        const CatalogEntry* o = find(all, "tiny-odd");
        REQUIRE(o);
        CHECK_FALSE(o->openable);
        CHECK(o->reason ==
              "tensor type Q3_K is not supported (supported: F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q5_K, Q6_K)");
        const CatalogEntry* m = find(all, "mmproj");
        REQUIRE(m);
        CHECK(m->family == "clip");
        CHECK_FALSE(m->openable);
        CHECK(m->reason.find("general.architecture 'clip' is not supported") != std::string::npos);
    }
    SECTION("Ollama's store: NAME:TAG through its manifest") {
        const CatalogEntry* t = find(all, "tiny:q8");
        REQUIRE(t);
        CHECK(t->source == "ollama");
        CHECK(t->spec == (ollama / "blobs" / ("sha256-" + digest)).string());  // a store other than $OLLAMA_MODELS
        CHECK(t->family == "llama");
        CHECK(t->dtype == "Q8_0");
        CHECK(t->openable);
    }
    SECTION("folders AttnScope cannot open say why") {
        const CatalogEntry* m = find(all, "mamba");
        REQUIRE(m);
        CHECK(m->source == "folder");
        CHECK_FALSE(m->openable);
        CHECK(m->family == "mamba");
        CHECK(m->parameters == storedValues(kData / "gpt2" / "model.safetensors"));
        CHECK(m->reason.rfind("model_type 'mamba' is not supported (supported: gpt2", 0) == 0);
        const CatalogEntry* w = find(all, "no-weights");
        REQUIRE(w);
        CHECK_FALSE(w->openable);
        CHECK(w->reason.rfind("no weights: no model.safetensors or pytorch_model.bin", 0) == 0);
    }
}

TEST_CASE("describeModel takes any model argument and never throws", "[catalog]") {
    const CatalogEntry b = describeModel("builtin:reverse-dot", "builtin");
    CHECK(b.openable);
    CHECK(b.family == "attnscope-seq2seq");
    CHECK(b.parameters > 0);
    const CatalogEntry bad = describeModel("builtin:nope");
    CHECK_FALSE(bad.openable);
    CHECK(bad.reason.find("no such built-in model") != std::string::npos);
    const CatalogEntry ol = describeModel("ollama:not-there-at-all");
    CHECK_FALSE(ol.openable);
    CHECK(ol.reason.find("no such Ollama model") != std::string::npos);
    CHECK(ggufFileTypeName(15) == "Q4_K_M");
    CHECK(ggufFileTypeName(4).empty());
}

}  // namespace test_model_catalog
