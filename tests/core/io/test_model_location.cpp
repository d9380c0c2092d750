// Model arguments, offline: hub-cache trees built here (snapshots of symlinks into blobs/, and of
// plain copies), the cache's environment variables in huggingface_hub's order, revisions by ref
// and by commit, paths winning over ids, files standing for their folder, and misses naming
// where they looked. Tokenizer files opened by what they are.
#include "attnscope/io/model_location.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"
#include "attnscope/tokenizer/tokenizer.h"
#include "family_checks.h"
#include "gpt2_fixture.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <functional>
#include <optional>

namespace test_model_location {

using namespace attnscope;
using namespace attnscope::testing;
namespace fs = std::filesystem;

namespace {

const fs::path kData = fs::path(ATTNSCOPE_TOKENIZER_DATA).parent_path() / "torch_bin";
const std::string kCommit = "0123456789abcdef0123456789abcdef01234567";
const std::string kOther = "fedcba9876543210fedcba9876543210fedcba98";

// Sets (or, with nullopt, unsets) the variables for one scope and restores them after.
class EnvScope {
public:
    explicit EnvScope(const std::vector<std::pair<const char*, std::optional<std::string>>>& vars) {
        for (const auto& [name, value] : vars) {
            const char* old = std::getenv(name);
            saved_.push_back({name, old ? std::optional<std::string>(old) : std::nullopt});
            if (value)
                ::setenv(name, value->c_str(), 1);
            else
                ::unsetenv(name);
        }
    }
    ~EnvScope() {
        for (const auto& [name, value] : saved_)
            if (value)
                ::setenv(name, value->c_str(), 1);
            else
                ::unsetenv(name);
    }

private:
    std::vector<std::pair<const char*, std::optional<std::string>>> saved_;
};

EnvScope onlyHubCache(const fs::path& cache) {
    return EnvScope({{"HF_HUB_CACHE", cache.string()}, {"HF_HOME", std::nullopt}, {"XDG_CACHE_HOME", std::nullopt}});
}

// models--ORG--NAME with refs/main -> commit and snapshots/commit/ holding the files of `source`:
// symlinks into blobs/ as huggingface_hub makes them, or plain copies.
fs::path writeHubModel(const fs::path& cache, const std::string& folder, const std::string& commit,
                       const fs::path& source, bool links, const std::string& ref = "main") {
    const fs::path repo = cache / folder;
    fs::create_directories(repo / "refs");
    writeText(repo / "refs" / ref, commit);  // no newline, as huggingface_hub writes it
    const fs::path snapshot = repo / "snapshots" / commit;
    fs::create_directories(snapshot);
    fs::create_directories(repo / "blobs");
    int blob = 0;
    for (const auto& entry : fs::directory_iterator(source)) {
        const fs::path target = snapshot / entry.path().filename();
        if (links) {
            const std::string name = "blob" + std::to_string(blob++) + commit.substr(0, 6);
            fs::copy_file(entry.path(), repo / "blobs" / name);
            fs::create_symlink(fs::path("..") / ".." / "blobs" / name, target);
        } else {
            fs::copy_file(entry.path(), target);
        }
    }
    return snapshot;
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

TEST_CASE("Model ids resolve in the hub cache, through symlinks or copies", "[hub]") {
    const fs::path cache = freshDir("hub-cache");
    const fs::path linked = writeHubModel(cache, "models--org--tiny", kCommit, kData / "gpt2-zip", true);
    const fs::path copied = writeHubModel(cache, "models--gpt2", kOther, kData / "gpt2", false);
    const auto env = onlyHubCache(cache);

    REQUIRE(resolveModelLocation("org/tiny") == linked);
    CHECK(fs::is_symlink(linked / "pytorch_model.bin"));
    CHECK(resolveModelLocation("gpt2") == copied);
    // The .bin through symlinks and the safetensors copy are the same model.
    const auto a = loadCpu(resolveModelLocation("org/tiny"));
    const auto b = loadCpu(resolveModelLocation("gpt2"));
    const std::vector<std::int64_t> ids = {3, 1, 4, 1, 5};
    CHECK(a->forward(ids)->map(0, 1, 1).values == b->forward(ids)->map(0, 1, 1).values);

    SECTION("revisions: a ref, a commit hash with a snapshot, and misses") {
        const fs::path v1 = writeHubModel(cache, "models--org--tiny", kOther, kData / "gpt2", false, "v1");
        CHECK(resolveModelLocation("org/tiny", "v1") == v1);
        CHECK(resolveModelLocation("org/tiny", kOther) == v1);
        CHECK(resolveModelLocation("org/tiny", kCommit) == linked);
        CHECK_THAT(errorOf([] { resolveModelLocation("org/tiny", "v2"); }),
                   Catch::Contains("org/tiny: revision 'v2' is not in the Hugging Face cache (looked for " +
                                   (cache / "models--org--tiny" / "refs" / "v2").string() + ")"));
        CHECK_THAT(errorOf([] { resolveModelLocation("org/tiny", "0000000000000000000000000000000000000000"); }),
                   Catch::Contains("has no snapshot in the Hugging Face cache (looked for " +
                                   (cache / "models--org--tiny" / "snapshots").string()));
        CHECK_THAT(errorOf([] { resolveModelLocation("org/tiny", "../../etc"); }),
                   Catch::Contains("revision '../../etc' is not in the Hugging Face cache"));
    }
    SECTION("a model that is not there names where it looked, and nothing else happens") {
        const std::string e = errorOf([] { resolveModelLocation("org/missing"); });
        CHECK_THAT(e, Catch::Contains("org/missing: no such model folder, and not in the Hugging Face cache "
                                      "(looked for " +
                                      (cache / "models--org--missing").string() + ", the cache from $HF_HUB_CACHE)"));
        CHECK(e.find('\n') == std::string::npos);
        CHECK_FALSE(fs::exists(cache / "models--org--missing"));
    }
    SECTION("an interrupted download: config.json links to a missing blob") {
        fs::remove(cache / "models--org--tiny" / "blobs" / fs::read_symlink(linked / "config.json").filename());
        CHECK_THAT(errorOf([] { resolveModelLocation("org/tiny"); }),
                   Catch::Contains("config.json: links to a missing blob") && Catch::Contains("incomplete"));
    }
    SECTION("a refs file that is not a commit") {
        writeText(cache / "models--org--tiny" / "refs" / "main", "../../../etc\n");
        CHECK_THAT(errorOf([] { resolveModelLocation("org/tiny"); }), Catch::Contains("refs/main: not a commit hash"));
    }
}

TEST_CASE("The cache folder follows huggingface_hub's variables in order", "[hub]") {
    {
        const EnvScope env({{"HF_HUB_CACHE", "/a/hub"}, {"HF_HOME", "/b"}, {"XDG_CACHE_HOME", "/c"}});
        CHECK(hubCache().dir == "/a/hub");
        CHECK(hubCache().from == "$HF_HUB_CACHE");
    }
    {
        const EnvScope env({{"HF_HUB_CACHE", std::nullopt}, {"HF_HOME", "/b"}, {"XDG_CACHE_HOME", "/c"}});
        CHECK(hubCache().dir == "/b/hub");
    }
    {
        const EnvScope env({{"HF_HUB_CACHE", std::nullopt}, {"HF_HOME", std::nullopt}, {"XDG_CACHE_HOME", "/c"}});
        CHECK(hubCache().dir == "/c/huggingface/hub");
    }
    {
        const EnvScope env({{"HF_HUB_CACHE", std::nullopt},
                            {"HF_HOME", std::nullopt},
                            {"XDG_CACHE_HOME", std::nullopt},
                            {"HOME", "/home/u"}});
        CHECK(hubCache().dir == "/home/u/.cache/huggingface/hub");
        CHECK(hubCache().from == "$HOME");
    }
}

TEST_CASE("Paths win over ids, files stand for their folder, and ids are validated", "[hub]") {
    const fs::path cache = freshDir("hub-paths");
    writeHubModel(cache, "models--tiny", kCommit, kData / "gpt2", true);
    const auto env = onlyHubCache(cache);
    // A relative folder named like the id wins over the cache entry.
    const fs::path work = freshDir("hub-cwd");
    fs::create_directories(work / "tiny");
    const fs::path cwd = fs::current_path();
    fs::current_path(work);
    const fs::path local = resolveModelLocation("tiny");
    fs::current_path(cwd);
    CHECK(local == "tiny");

    CHECK(resolveModelLocation((kData / "gpt2-zip" / "pytorch_model.bin").string()) == kData / "gpt2-zip");
    CHECK(resolveModelLocation((kData / "gpt2" / "model.safetensors").string()) == kData / "gpt2");
    CHECK(resolveModelLocation((kData / "gpt2-shards" / "pytorch_model.bin.index.json").string()) ==
          kData / "gpt2-shards");
    CHECK(resolveModelLocation((kData / "gpt2" / "config.json").string()) == kData / "gpt2");
    CHECK(resolveModelLocation("builtin:reverse-dot") == "builtin:reverse-dot");
    CHECK(loadCpu(resolveModelLocation((kData / "gpt2-legacy" / "pytorch_model.bin").string()))->info().family ==
          "gpt2");

    CHECK(isModelId("gpt2"));
    CHECK(isModelId("meta-llama/Llama-3.2-1B"));
    for (const char* bad : {"a/b/c", "-x", "x--y", "a..b", "org/", "/abs", "x y", ""}) CHECK_FALSE(isModelId(bad));
    CHECK(resolveModelLocation("a/b/c") == "a/b/c");  // no id: Model::load names the missing folder
    CHECK_THAT(errorOf([] { resolveModelLocation(kData.string(), "main"); }),
               Catch::Contains("--revision applies to Hugging Face model ids"));
}

TEST_CASE("Tokenizer files open the tokenizer they belong to", "[hub][tokenize]") {
    const fs::path spm = fs::path(ATTNSCOPE_TOKENIZER_DATA) / "spm";
    const fs::path dir = freshDir("tokenizer-files");
    fs::copy_file(spm / "unigram.model", dir / "spiece.model");
    const auto folder = Tokenizer::fromFolder(dir);
    const auto file = Tokenizer::fromPath(dir / "spiece.model");
    REQUIRE(folder);
    const std::string text = "Hello world, tokenizers.";
    CHECK(file->encode(text).ids == folder->encode(text).ids);
    CHECK(file->origin() == (dir / "spiece.model").string());
    // With a tokenizer.json beside it, the named SentencePiece file is still what is read.
    fs::copy_file(spm / "unigram.json", dir / "tokenizer.json");
    CHECK(Tokenizer::fromPath(dir / "spiece.model")->origin() == (dir / "spiece.model").string());
    CHECK(Tokenizer::fromPath(dir / "tokenizer.json")->origin() == (dir / "tokenizer.json").string());
    // A weights or config file stands for its folder's tokenizer.
    writeText(dir / "config.json", "{}");
    CHECK(Tokenizer::fromPath(dir / "config.json")->origin() == (dir / "tokenizer.json").string());
    CHECK_THAT(errorOf([&] { Tokenizer::fromPath(dir / "nothing.model"); }),
               Catch::Contains("nothing.model: no such file or folder"));
}

}  // namespace test_model_location
