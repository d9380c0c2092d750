// GGUF files written by the test support (gguf_writer.h, from the specification): metadata of
// every type read back, tensors of every supported block type dequantised as the plain
// per-element decoder does, the malformed cases each refused with one line naming the file and
// the problem, and ollama:NAME[:TAG] resolved through a fake store.
#include "attnscope/io/gguf.h"
#include "attnscope/io/model_location.h"
#include "attnscope/runtime/error.h"
#include "gguf_writer.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <random>

namespace test_gguf {

using namespace attnscope;
using namespace attnscope::testing;
namespace fs = std::filesystem;

namespace {

std::vector<float> randomValues(std::size_t n, unsigned seed, float scale = 1.0f) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
}

void writeBytes(const fs::path& path, const std::vector<std::uint8_t>& bytes) {
    std::ofstream(path, std::ios::binary)
            .write(reinterpret_cast<const char*>(bytes.data()), static_cast<long>(bytes.size()));
}

// The error GgufFile::open gives for `bytes`, or "(no error)".
std::string openError(const std::vector<std::uint8_t>& bytes, const std::string& name = "bad.gguf") {
    const fs::path file = freshDir("gguf_malformed") / name;
    writeBytes(file, bytes);
    try {
        GgufFile::open(file);
    } catch (const Error& e) {
        const std::string m = e.what();
        CHECK(m.find('\n') == std::string::npos);
        CHECK(m.rfind(file.string() + ": ", 0) == 0);
        return m;
    }
    return "(no error)";
}

void putU64(std::vector<std::uint8_t>& b, std::size_t at, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) b[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
}

GgufBuilder oneTensor() {
    GgufBuilder g;
    g.str("general.architecture", "llama");
    g.tensor("a.weight", {2, 32}, randomValues(64, 1), Ggml::F32);
    return g;
}

}  // namespace

TEST_CASE("GGUF metadata of every type and tensor infos read back", "[gguf]") {
    GgufBuilder g;
    g.u32("u32", 7);
    g.i32("i32", -5);
    g.u64("u64", 1ull << 40);
    g.f32("f32", 0.25f);
    g.boolean("yes", true);
    g.str("text", "héllo");
    g.strings("list", {"a", "", "ccc"});
    g.f32s("scores", {1.5f, -2.0f});
    g.i32s("types", {1, 3, 6});
    g.raw("u8", 0, {200});
    g.raw("i16", 3, {0xff, 0xff});
    g.raw("f64", 12, {0, 0, 0, 0, 0, 0, 0xf0, 0x3f});
    // an array of arrays: [[1, 2], []] of u8
    g.raw("nested", 9, {9, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0,
                        0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
    g.tensor("blk.0.w", {3, 64}, randomValues(192, 2), Ggml::Q8_0);
    g.tensor("norm", {64}, randomValues(64, 3), Ggml::F32);
    for (std::uint32_t version : {2u, 3u}) {
        const fs::path file = freshDir("gguf_meta") / "m.gguf";
        g.write(file, version);
        const auto f = GgufFile::open(file);
        CHECK(f->version() == version);
        CHECK(f->integer("u32") == 7);
        CHECK(f->integer("i32") == -5);
        CHECK(f->integer("u64") == (1ll << 40));
        CHECK(f->number("f32") == 0.25);
        CHECK(f->boolean("yes") == true);
        CHECK(f->string("text") == "héllo");
        CHECK(*f->strings("list") == std::vector<std::string>{"a", "", "ccc"});
        CHECK(*f->numbers("scores") == std::vector<double>{1.5, -2.0});
        CHECK(*f->numbers("types") == std::vector<double>{1, 3, 6});
        CHECK(f->integer("u8") == 200);
        CHECK(f->integer("i16") == -1);
        CHECK(f->number("f64") == 1.0);
        REQUIRE(f->value("nested")->items.size() == 2);
        CHECK(f->value("nested")->items[0].numbers == std::vector<double>{1, 2});
        CHECK(f->value("nested")->items[1].numbers.empty());
        CHECK_FALSE(f->integer("absent"));
        CHECK_THROWS_WITH(f->string("u32"), file.string() + ": metadata 'u32' must be a string, found u32");
        REQUIRE(f->tensors().size() == 2);
        const GgufTensor* w = f->find("blk.0.w");
        REQUIRE(w);
        CHECK(w->shape == std::vector<std::int64_t>{3, 64});
        CHECK(w->type == GgmlType::Q8_0);
        CHECK(w->bytes == 3 * 2 * 34);
        CHECK(reinterpret_cast<std::uintptr_t>(f->data(*w)) % 32 == 0);
        CHECK(looksLikeGguf(file));
    }
}

TEST_CASE("Every supported block type dequantises as the plain per-element decoder does", "[gguf][dequant]") {
    for (Ggml type : {Ggml::F32, Ggml::F16, Ggml::BF16, Ggml::Q8_0, Ggml::Q4_0, Ggml::Q4_K, Ggml::Q5_K, Ggml::Q6_K}) {
        INFO(ggmlName(type));
        const std::int64_t rows = 3, width = 512;
        const std::vector<float> x = randomValues(static_cast<std::size_t>(rows * width), 7, 0.5f);
        GgufBuilder g;
        g.tensor("t", {rows, width}, x, type);
        const fs::path file = freshDir("gguf_dequant") / "t.gguf";
        g.write(file);
        const auto f = GgufFile::open(file);
        const GgufTensor& t = f->tensors()[0];
        std::vector<float> got(x.size());
        dequantiseRows(t, f->data(t), 0, rows, got.data());
        const std::vector<float> want = dequantisePlain(quantise(x, type), type, x.size());
        double worst = 0, error = 0;
        for (std::size_t i = 0; i < x.size(); ++i) {
            worst = std::max(worst, static_cast<double>(std::fabs(got[i] - want[i])));
            error = std::max(error, static_cast<double>(std::fabs(got[i] - x[i])));
        }
        CHECK(worst <= 1e-6);
        // The blocks hold the values to their quantisation step: a layout read wrongly would not.
        const double step = type == Ggml::Q4_0 || type == Ggml::Q4_K ? 0.35 : type == Ggml::Q5_K ? 0.2 : 0.06;
        CHECK(error <= step);
        // One row alone (the streamed path) equals its part of the whole.
        std::vector<float> row(static_cast<std::size_t>(width));
        dequantiseRows(t, f->data(t), 2, 1, row.data());
        CHECK(std::equal(row.begin(), row.end(), got.begin() + 2 * width));
    }
}

TEST_CASE("A tensor type outside the supported ones is refused naming it", "[gguf][dequant]") {
    GgufBuilder g;
    g.rawTensor("blk.0.q2", {256, 1}, 10, std::vector<std::uint8_t>(84, 0));  // Q2_K
    const fs::path file = freshDir("gguf_q2") / "q2.gguf";
    g.write(file);
    const auto f = GgufFile::open(file);
    std::vector<float> out(256);
    CHECK_THROWS_WITH(dequantiseRows(f->tensors()[0], f->data(f->tensors()[0]), 0, 1, out.data()),
                      "tensor 'blk.0.q2' is Q2_K; AttnScope reads F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q5_K and Q6_K");
}

TEST_CASE("Malformed GGUF files are refused with one line naming the problem", "[gguf][reliability]") {
    const std::vector<std::uint8_t> good = oneTensor().bytes();
    CHECK(openError(good) == "(no error)");

    SECTION("truncated anywhere") {
        for (std::size_t cut : {std::size_t(3), std::size_t(20), std::size_t(40), good.size() / 2, good.size() - 1}) {
            INFO(cut);
            const std::string m = openError({good.begin(), good.begin() + static_cast<long>(cut)});
            const bool named = m.find("truncated") != std::string::npos ||
                               m.find("past the end") != std::string::npos ||
                               m.find("longer than") != std::string::npos;
            CHECK(named);
        }
    }
    SECTION("not GGUF, or another version") {
        std::vector<std::uint8_t> b = good;
        b[0] = 'X';
        CHECK(openError(b).find("not a GGUF file (no GGUF magic)") != std::string::npos);
        b = good;
        b[4] = 1;
        CHECK(openError(b).find("GGUF version 1 is not supported (versions 2 and 3 are)") != std::string::npos);
    }
    SECTION("a string longer than the file") {
        std::vector<std::uint8_t> b = good;
        putU64(b, 24, 1ull << 40);  // the first key's length
        CHECK(openError(b).find("claims 1099511627776 bytes, longer than the") != std::string::npos);
    }
    SECTION("counts the file cannot hold") {
        std::vector<std::uint8_t> b = good;
        putU64(b, 16, 1ull << 60);  // metadata count
        CHECK(openError(b).find("metadata count 1152921504606846976 is more than") != std::string::npos);
        b = good;
        putU64(b, 8, 1ull << 60);  // tensor count
        CHECK(openError(b).find("tensor count 1152921504606846976 is more than") != std::string::npos);
        GgufBuilder g;
        g.raw("big", 9, {8, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f});  // 2^60 strings
        CHECK(openError(g.bytes()).find("metadata 'big' claims 1152921504606846975 elements") != std::string::npos);
    }
    SECTION("unknown value and tensor types") {
        GgufBuilder g;
        g.raw("odd", 13, {0});
        CHECK(openError(g.bytes()).find("metadata 'odd' has unknown value type 13") != std::string::npos);
        GgufBuilder t;
        t.rawTensor("x", {32}, 99, std::vector<std::uint8_t>(128));
        CHECK(openError(t.bytes()).find("tensor 'x' has unknown ggml type 99") != std::string::npos);
    }
    SECTION("dimensions whose product overflows") {
        GgufBuilder g;
        g.rawTensor("huge", {1ull << 32, 1ull << 32, 4}, 0, {});
        CHECK(openError(g.bytes()).find("tensor 'huge''s dimensions overflow") != std::string::npos);
    }
    SECTION("offsets past the end and misaligned data") {
        GgufBuilder g;
        g.rawTensor("far", {32}, 0, std::vector<std::uint8_t>(128), 1 << 20);
        CHECK(openError(g.bytes()).find(
                      "tensor 'far' (128 bytes at data offset 1048576) runs past the end of the file") !=
              std::string::npos);
        GgufBuilder m;
        m.rawTensor("odd", {32}, 0, std::vector<std::uint8_t>(128), 4);
        CHECK(openError(m.bytes()).find("tensor 'odd' is misaligned: offset 4 is not a multiple of the alignment 32") !=
              std::string::npos);
        GgufBuilder q;
        q.rawTensor("rows", {33}, 8, std::vector<std::uint8_t>(68));  // Q8_0 rows of 33
        CHECK(openError(q.bytes()).find("not a multiple of its block of 32") != std::string::npos);
    }
    SECTION("general.alignment must be a nonzero power of two") {
        for (std::uint32_t a : {0u, 24u}) {
            GgufBuilder g;
            g.u32("general.alignment", a);
            CHECK(openError(g.bytes()).find("general.alignment " + std::to_string(a) +
                                            " is not a nonzero power of two") != std::string::npos);
        }
        GgufBuilder g;
        g.u32("general.alignment", 64);
        g.tensor("a", {32}, randomValues(32, 1));
        CHECK(openError(g.bytes(3, 64)) == "(no error)");
    }
    SECTION("duplicate tensor names and keys") {
        GgufBuilder g;
        g.tensor("same", {32}, randomValues(32, 1));
        g.tensor("same", {32}, randomValues(32, 2));
        CHECK(openError(g.bytes()).find("tensor 'same' appears twice") != std::string::npos);
        GgufBuilder k;
        k.u32("key", 1);
        k.u32("key", 2);
        CHECK(openError(k.bytes()).find("metadata key 'key' appears twice") != std::string::npos);
    }
}

TEST_CASE("ollama:NAME[:TAG] resolves through the manifest to the model blob", "[gguf][ollama]") {
    const fs::path root = freshDir("ollama_store");
    const std::string digest = std::string(64, 'a');
    const fs::path manifests = root / "manifests" / "registry.ollama.ai" / "library" / "tiny";
    fs::create_directories(manifests);
    fs::create_directories(root / "blobs");
    const auto manifest = [&](const std::string& tag, const std::string& type) {
        std::ofstream(manifests / tag)
                << R"({"schemaVersion":2,"layers":[{"mediaType":"application/vnd.ollama.image.license","digest":"sha256:)"
                << std::string(64, 'b') << R"("},{"mediaType":")" << type << R"(","digest":"sha256:)" << digest
                << R"(","size":3}]})";
    };
    manifest("latest", "application/vnd.ollama.image.model");
    manifest("q4", "application/vnd.ollama.image.model");
    manifest("nomodel", "application/vnd.ollama.image.template");
    oneTensor().write(root / "blobs" / ("sha256-" + digest));
    ::setenv("OLLAMA_MODELS", root.c_str(), 1);
    CHECK(ollamaModel("ollama:tiny") == root / "blobs" / ("sha256-" + digest));
    CHECK(resolveModelLocation("ollama:tiny:q4") == root / "blobs" / ("sha256-" + digest));
    CHECK_THROWS_WITH(resolveModelLocation("ollama:absent"),
                      "ollama:absent: no such Ollama model (looked for " +
                              (root / "manifests/registry.ollama.ai/library/absent/latest").string() + ")");
    CHECK_THROWS_WITH(ollamaModel("ollama:tiny:nomodel"),
                      (manifests / "nomodel").string() + ": no layer of mediaType application/vnd.ollama.image.model");
    CHECK_THROWS_WITH(ollamaModel("ollama:../x"), Catch::Contains("not an Ollama model name"));
    fs::remove(root / "blobs" / ("sha256-" + digest));
    CHECK_THROWS_WITH(ollamaModel("ollama:tiny"), Catch::Contains("the model's blob is missing (looked for"));
    // Without $OLLAMA_MODELS the store is ~/.ollama/models.
    const std::string home = std::getenv("HOME") ? std::getenv("HOME") : "";
    ::unsetenv("OLLAMA_MODELS");
    ::setenv("HOME", root.c_str(), 1);
    CHECK(ollamaRoot() == root / ".ollama" / "models");
    ::setenv("HOME", home.c_str(), 1);
}

TEST_CASE("A GGUF file is recognised by its content, whatever its name", "[gguf]") {
    const fs::path dir = freshDir("gguf_content");
    oneTensor().write(dir / "weights.bin");
    CHECK(looksLikeGguf(dir / "weights.bin"));
    CHECK(resolveModelLocation((dir / "weights.bin").string()) == dir / "weights.bin");
    std::ofstream(dir / "other.gguf") << "not gguf";
    CHECK_FALSE(looksLikeGguf(dir / "other.gguf"));
    CHECK_FALSE(looksLikeGguf(dir));
}

}  // namespace test_gguf
