// safetensors reading/writing: round trips, hand-built files, and one test per malformed case.
#include "attnscope/runtime/error.h"
#include "attnscope/io/safetensors.h"
#include "gpt2_fixture.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <iterator>

namespace test_safetensors {

using namespace attnscope;
using Catch::Contains;
namespace fs = std::filesystem;
using namespace std::string_literals;

namespace {

std::string readAll(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string lengthPrefix(std::uint64_t n) {
    std::string s(8, '\0');
    for (int i = 0; i < 8; ++i) s[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
    return s;
}

// A file made of the 8-byte length of `header`, the header, then `dataBytes` bytes 0, 1, 2, ...
fs::path rawFile(const std::string& name, const std::string& header, std::size_t dataBytes) {
    std::string data(dataBytes, '\0');
    for (std::size_t i = 0; i < dataBytes; ++i) data[i] = static_cast<char>(i);
    const auto file = testing::freshDir("st-" + name) / "model.safetensors";
    testing::writeText(file, lengthPrefix(header.size()) + header + data);
    return file;
}

std::vector<std::byte> bytesOf(const std::string& s) {
    std::vector<std::byte> b(s.size());
    std::memcpy(b.data(), s.data(), s.size());
    return b;
}

std::string bytesAt(const SafetensorsFile& f, const TensorInfo& t) {
    return std::string(reinterpret_cast<const char*>(f.data(t)), t.end - t.begin);
}

// A valid two-tensor header (a: F32 [2, 2] = 16 bytes, b: F16 [4] = 8 bytes); tests vary one part.
std::string entry(const std::string& name, const std::string& dtype, const std::string& shape,
                  const std::string& offsets) {
    return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape + ",\"data_offsets\":" + offsets + "}";
}

}  // namespace

TEST_CASE("dtype names and sizes", "[safetensors]") {
    CHECK(std::string(dtypeName(DType::F32)) == "F32");
    CHECK(std::string(dtypeName(DType::F16)) == "F16");
    CHECK(std::string(dtypeName(DType::BF16)) == "BF16");
    CHECK(dtypeSize(DType::F32) == 4);
    CHECK(dtypeSize(DType::F16) == 2);
    CHECK(dtypeSize(DType::BF16) == 2);
    CHECK(TensorInfo{"s", DType::F32, {}, 0, 4}.numel() == 1);
    CHECK(TensorInfo{"z", DType::F32, {3, 0}, 0, 0}.numel() == 0);
    CHECK(TensorInfo{"m", DType::F32, {2, 3, 4}, 0, 96}.numel() == 24);
}

TEST_CASE("writeSafetensors round-trips through open", "[safetensors]") {
    const auto file = testing::freshDir("st-roundtrip") / "model.safetensors";
    std::vector<TensorBytes> in = {
            {"h.0.attn.c_attn.weight", DType::F32, {2, 3}, bytesOf(std::string("abcdefghijklmnopqrstuvwx"))},
            {"half", DType::F16, {4}, bytesOf("12345678")},
            {"brain", DType::BF16, {2, 1}, bytesOf("WXYZ")},
            {"scalar", DType::F32, {}, bytesOf("s!s!")},
            {"empty", DType::F32, {0, 5}, {}},
            {"last", DType::F16, {1}, bytesOf("zz")},
    };
    const std::map<std::string, std::string> meta = {{"format", "pt"}, {"note", "gr\xC3\xBC\xC3\x9F"}};
    writeSafetensors(file, in, meta);

    const auto raw = readAll(file);
    std::uint64_t n = 0;
    for (int i = 0; i < 8; ++i) n |= static_cast<std::uint64_t>(static_cast<unsigned char>(raw[i])) << (8 * i);
    CHECK(n % 8 == 0);  // header padded, data section 8-byte aligned
    CHECK(raw.size() == 8 + n + 24 + 8 + 4 + 4 + 0 + 2);

    const auto f = SafetensorsFile::open(file);
    CHECK(f->path() == file);
    CHECK(f->fileSize() == raw.size());
    CHECK(f->metadata() == meta);
    REQUIRE(f->tensors().size() == in.size());
    // Offsets are consecutive in the given order; the zero-size tensor sits between scalar and last.
    for (std::size_t i = 0; i < in.size(); ++i) {
        const TensorInfo& t = f->tensors()[i];
        INFO(in[i].name);
        CHECK(t.name == in[i].name);
        CHECK(t.dtype == in[i].dtype);
        CHECK(t.shape == in[i].shape);
        CHECK(t.end - t.begin == in[i].bytes.size());
        CHECK(bytesAt(*f, t) == std::string(reinterpret_cast<const char*>(in[i].bytes.data()), in[i].bytes.size()));
        CHECK(f->find(in[i].name) == &t);
    }
    CHECK(f->tensors()[0].begin == 0);
    CHECK(f->tensors()[3].shape.empty());
    CHECK(f->tensors()[3].numel() == 1);
    CHECK(f->tensors()[4].numel() == 0);
    CHECK(f->find("missing") == nullptr);
    CHECK(f->find("__metadata__") == nullptr);
    // No temporary file is left next to the result.
    CHECK(std::distance(fs::directory_iterator(file.parent_path()), fs::directory_iterator()) == 1);
}

TEST_CASE("writeSafetensors without metadata or tensors writes an empty header", "[safetensors]") {
    const auto file = testing::freshDir("st-empty-write") / "e.safetensors";
    writeSafetensors(file, {});
    CHECK(readAll(file) == lengthPrefix(8) + "{}      ");
    const auto f = SafetensorsFile::open(file);
    CHECK(f->tensors().empty());
    CHECK(f->metadata().empty());
}

TEST_CASE("writeSafetensors replaces an existing file", "[safetensors]") {
    const auto file = testing::freshDir("st-replace") / "m.safetensors";
    testing::writeText(file, "old contents");
    writeSafetensors(file, {{"x", DType::BF16, {1}, bytesOf("ab")}});
    const auto f = SafetensorsFile::open(file);
    REQUIRE(f->tensors().size() == 1);
    CHECK(bytesAt(*f, f->tensors()[0]) == "ab");
}

TEST_CASE("writeSafetensors rejects bad input and names the path", "[safetensors]") {
    const auto dir = testing::freshDir("st-write-errors");
    const auto file = dir / "w.safetensors";
    REQUIRE_THROWS_WITH(writeSafetensors(file, {{"w", DType::F32, {2, 3}, bytesOf("short")}}),
                        Contains(file.string()) && Contains("'w'") && Contains("has 5 bytes") &&
                                Contains("F32 shape [2, 3] needs 24"));
    REQUIRE_THROWS_WITH(
            writeSafetensors(file, {{"d", DType::F16, {1}, bytesOf("ab")}, {"d", DType::F16, {1}, bytesOf("cd")}}),
            Contains("'d'") && Contains("appears twice"));
    REQUIRE_THROWS_WITH(writeSafetensors(file, {{"neg", DType::F16, {-1}, {}}}),
                        Contains("'neg'") && Contains("negative"));
    REQUIRE_THROWS_WITH(writeSafetensors(file, {{"__metadata__", DType::F16, {1}, bytesOf("ab")}}),
                        Contains("reserved"));
    CHECK_FALSE(fs::exists(file));
    CHECK(fs::is_empty(dir));  // validation failed before any file was created

    const auto nowhere = dir / "no-such-dir" / "x.safetensors";
    REQUIRE_THROWS_WITH(writeSafetensors(nowhere, {}), Contains(nowhere.string()) && Contains("cannot write"));
}

TEST_CASE("hand-built file with header padding and no metadata", "[safetensors]") {
    // Entries out of offset order; padded with spaces like files written by the Python library.
    const std::string header = "{" + entry("b", "F16", "[4]", "[16,24]") + "," + entry("a", "F32", "[2,2]", "[0,16]") +
                               "," + entry("z", "BF16", "[3,0]", "[24,24]") + "}" + std::string(13, ' ');
    const auto file = rawFile("padded", header, 24);
    const auto f = SafetensorsFile::open(file);
    CHECK(f->metadata().empty());
    REQUIRE(f->tensors().size() == 3);
    CHECK(f->tensors()[0].name == "a");
    CHECK(f->tensors()[1].name == "b");
    CHECK(f->tensors()[2].name == "z");
    CHECK(f->tensors()[1].dtype == DType::F16);
    CHECK(f->tensors()[1].shape == std::vector<std::int64_t>{4});
    CHECK(bytesAt(*f, *f->find("a")) ==
          std::string("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f", 16));
    CHECK(static_cast<unsigned char>(*f->data(*f->find("b"))) == 16);
    CHECK(f->data(*f->find("z")) == f->data(*f->find("a")) + 24);
}

TEST_CASE("empty header and zero-size-only files open", "[safetensors]") {
    CHECK(SafetensorsFile::open(rawFile("empty", "{}", 0))->tensors().empty());
    CHECK(SafetensorsFile::open(rawFile("null-meta", "{\"__metadata__\":null}", 0))->metadata().empty());
    const auto f = SafetensorsFile::open(rawFile("zeros", "{" + entry("z", "F32", "[0]", "[0,0]") + "}", 0));
    REQUIRE(f->tensors().size() == 1);
    CHECK(f->tensors()[0].numel() == 0);
}

TEST_CASE("opening something that is not a safetensors file fails cleanly", "[safetensors]") {
    const auto dir = testing::freshDir("st-not-files");
    REQUIRE_THROWS_WITH(SafetensorsFile::open(dir / "missing.safetensors"),
                        Contains("missing.safetensors") && Contains("cannot open") && Contains("No such file"));
    REQUIRE_THROWS_WITH(SafetensorsFile::open(dir), Contains(dir.string()) && Contains("is a directory"));
    testing::writeText(dir / "zero.safetensors", "");
    REQUIRE_THROWS_WITH(SafetensorsFile::open(dir / "zero.safetensors"),
                        Contains("zero.safetensors") && Contains("file is 0 bytes") && Contains("8-byte"));
    testing::writeText(dir / "five.safetensors", "\x02\0\0\0\0"s);
    REQUIRE_THROWS_WITH(SafetensorsFile::open(dir / "five.safetensors"),
                        Contains("file is 5 bytes") && Contains("shorter than the 8-byte header length"));
}

TEST_CASE("header length prefix is checked", "[safetensors]") {
    const auto dir = testing::freshDir("st-length");
    testing::writeText(dir / "huge.safetensors", lengthPrefix(100'000'001) + "{}");
    REQUIRE_THROWS_WITH(SafetensorsFile::open(dir / "huge.safetensors"),
                        Contains("huge.safetensors") && Contains("header length 100000001 is too large"));
    testing::writeText(dir / "max.safetensors", lengthPrefix(~0ULL) + "{}");
    REQUIRE_THROWS_WITH(SafetensorsFile::open(dir / "max.safetensors"), Contains("too large"));
    testing::writeText(dir / "beyond.safetensors", lengthPrefix(100) + "{}" + std::string(10, ' '));
    REQUIRE_THROWS_WITH(SafetensorsFile::open(dir / "beyond.safetensors"),
                        Contains("header length 100 exceeds file size") && Contains("the file has 20"));
}

TEST_CASE("header must be UTF-8 JSON object", "[safetensors]") {
    REQUIRE_THROWS_WITH(SafetensorsFile::open(rawFile("utf8", "{\"a\xFF\":{}}", 0)),
                        Contains("model.safetensors") && Contains("not valid UTF-8") && Contains("offset 3"));
    // An overlong encoding of '"' is invalid UTF-8 too, not a JSON syntax error.
    REQUIRE_THROWS_WITH(SafetensorsFile::open(rawFile("overlong", "{\xC0\xA2}", 0)), Contains("not valid UTF-8"));
    REQUIRE_THROWS_WITH(SafetensorsFile::open(rawFile("array", "[1, 2]", 0)),
                        Contains("header must be a JSON object, found array"));
    REQUIRE_THROWS_WITH(SafetensorsFile::open(rawFile("badjson", "{\"a\": ", 0)),
                        Contains("header is not valid JSON") && !Contains("[json.exception"));
    REQUIRE_THROWS_WITH(SafetensorsFile::open(rawFile("zero-length", "", 0)), Contains("header is not valid JSON"));
}

TEST_CASE("each tensor entry has exactly dtype, shape and data_offsets", "[safetensors]") {
    REQUIRE_THROWS_WITH(
            SafetensorsFile::open(rawFile("missing", "{\"w\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", 4)),
            Contains("model.safetensors: tensor 'w'") && Contains("missing field 'shape'"));
    REQUIRE_THROWS_WITH(SafetensorsFile::open(rawFile("extra",
                                                      "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],"
                                                      "\"extra\":1}}",
                                                      4)),
                        Contains("tensor 'w'") && Contains("unexpected field 'extra'"));
    REQUIRE_THROWS_WITH(SafetensorsFile::open(rawFile("not-object", "{\"w\":[1]}", 0)),
                        Contains("tensor 'w'") && Contains("expected an object"));
    REQUIRE_THROWS_WITH(SafetensorsFile::open(
                                rawFile("dtype-num", "{\"w\":{\"dtype\":4,\"shape\":[1],\"data_offsets\":[0,4]}}", 4)),
                        Contains("tensor 'w'") && Contains("dtype must be a string"));
    REQUIRE_THROWS_WITH(
            SafetensorsFile::open(rawFile("offsets-three", "{" + entry("w", "F32", "[1]", "[0,4,4]") + "}", 4)),
            Contains("tensor 'w'") && Contains("data_offsets must be [begin, end]"));
    REQUIRE_THROWS_WITH(
            SafetensorsFile::open(rawFile("offsets-neg", "{" + entry("w", "F32", "[1]", "[-4,0]") + "}", 4)),
            Contains("tensor 'w'") && Contains("data_offsets must be [begin, end]"));
}

TEST_CASE("the GPT-2 test fixture writes a checkpoint that opens", "[safetensors]") {
    testing::Gpt2Spec spec;
    const auto checkpoint = testing::makeGpt2(spec);
    const auto dir = testing::freshDir("st-gpt2");
    testing::writeGpt2Folder(dir, checkpoint);
    const auto f = SafetensorsFile::open(dir / "model.safetensors");
    CHECK(f->metadata().at("format") == "pt");
    const TensorInfo* w = f->find("transformer.h.1.attn.c_attn.weight");
    REQUIRE(w != nullptr);
    const auto& expected = checkpoint.get("h.1.attn.c_attn.weight");
    CHECK(w->shape == expected.shape);
    REQUIRE(w->end - w->begin == expected.values.size() * sizeof(float));
    CHECK(std::memcmp(f->data(*w), expected.values.data(), expected.values.size() * sizeof(float)) == 0);
}

TEST_CASE("I64 buffers (position_ids in older checkpoints) are read", "[safetensors]") {
    const auto f = SafetensorsFile::open(rawFile("i64", "{" + entry("ids", "I64", "[1,2]", "[0,16]") + "}", 16));
    REQUIRE(f->find("ids") != nullptr);
    CHECK(f->find("ids")->dtype == DType::I64);
    CHECK(dtypeSize(DType::I64) == 8);
    CHECK(std::string(dtypeName(DType::I64)) == "I64");
}

TEST_CASE("dtypes outside F32, F16, BF16 are rejected", "[safetensors]") {
    REQUIRE_THROWS_WITH(SafetensorsFile::open(rawFile("unknown", "{" + entry("w", "F33", "[1]", "[0,4]") + "}", 4)),
                        Contains("tensor 'w'") && Contains("unknown dtype 'F33'"));
    for (const std::string dtype : {"F64", "U8", "BOOL", "F8_E4M3", "U32"}) {
        INFO(dtype);
        REQUIRE_THROWS_WITH(
                SafetensorsFile::open(rawFile("unsupported", "{" + entry("w", dtype, "[1]", "[0,8]") + "}", 8)),
                Contains("tensor 'w'") && Contains("dtype " + dtype + " is not supported (F32, F16, BF16 are)"));
    }
}

TEST_CASE("shapes must be non-negative integers without overflow", "[safetensors]") {
    REQUIRE_THROWS_WITH(SafetensorsFile::open(rawFile("negative", "{" + entry("w", "F32", "[2,-1]", "[0,0]") + "}", 0)),
                        Contains("tensor 'w'") && Contains("shape [2,-1] has a negative dimension"));
    REQUIRE_THROWS_WITH(SafetensorsFile::open(rawFile("fraction", "{" + entry("w", "F32", "[1.5]", "[0,4]") + "}", 4)),
                        Contains("tensor 'w'") && Contains("shape must be an array of non-negative integers"));
    REQUIRE_THROWS_WITH(SafetensorsFile::open(rawFile("not-array", "{" + entry("w", "F32", "4", "[0,16]") + "}", 16)),
                        Contains("tensor 'w'") && Contains("shape must be an array"));
    // 2^32 * 2^32 overflows 64 bits even though each dimension fits.
    REQUIRE_THROWS_WITH(SafetensorsFile::open(rawFile(
                                "overflow", "{" + entry("w", "F32", "[4294967296,4294967296]", "[0,0]") + "}", 0)),
                        Contains("tensor 'w'") && Contains("F32 shape [4294967296, 4294967296] overflows 64 bits"));
    // 2^62 elements fit, their F32 byte size does not.
    REQUIRE_THROWS_WITH(SafetensorsFile::open(rawFile(
                                "overflow-bytes", "{" + entry("w", "F32", "[4611686018427387904]", "[0,0]") + "}", 0)),
                        Contains("tensor 'w'") && Contains("overflows 64 bits"));
    REQUIRE_THROWS_WITH(SafetensorsFile::open(rawFile(
                                "dim-too-big", "{" + entry("w", "F32", "[9223372036854775808]", "[0,0]") + "}", 0)),
                        Contains("tensor 'w'") && Contains("too large"));
}

TEST_CASE("data_offsets must match the tensor's byte size", "[safetensors]") {
    REQUIRE_THROWS_WITH(
            SafetensorsFile::open(
                    rawFile("mismatch", "{" + entry("h.0.attn.c_attn.weight", "F32", "[4,8]", "[0,100]") + "}", 100)),
            Contains("model.safetensors: tensor 'h.0.attn.c_attn.weight': data_offsets [0, 100] hold 100 bytes but "
                     "F32 shape [4, 8] needs 128"));
    REQUIRE_THROWS_WITH(SafetensorsFile::open(rawFile("reversed", "{" + entry("w", "F16", "[2]", "[8,4]") + "}", 8)),
                        Contains("tensor 'w'") && Contains("data_offsets [8, 4] begin after they end"));
}

TEST_CASE("tensors must tile the data section exactly", "[safetensors]") {
    const auto a = entry("a", "F32", "[2,2]", "[0,16]");
    const auto two = [&](const std::string& bOffsets) {
        return "{" + a + "," + entry("b", "F16", "[4]", bOffsets) + "}";
    };
    CHECK(SafetensorsFile::open(rawFile("tiled", two("[16,24]"), 24))->tensors().size() == 2);  // the baseline

    REQUIRE_THROWS_WITH(SafetensorsFile::open(rawFile("hole", two("[20,28]"), 28)),
                        Contains("tensor 'b' begins at byte 20 but tensor 'a' ends at byte 16") &&
                                Contains("bytes 16 to 20 are a hole"));
    REQUIRE_THROWS_WITH(
            SafetensorsFile::open(rawFile("hole-first", "{" + entry("b", "F16", "[4]", "[4,12]") + "}", 12)),
            Contains("tensor 'b' begins at byte 4") && Contains("hole"));
    REQUIRE_THROWS_WITH(SafetensorsFile::open(rawFile("overlap", two("[12,20]"), 20)),
                        Contains("tensor 'b' begins at byte 12 but tensor 'a' ends at byte 16") && Contains("overlap"));
    REQUIRE_THROWS_WITH(SafetensorsFile::open(rawFile("trailing", two("[16,24]"), 30)),
                        Contains("the data section has 30 bytes but the last tensor 'b' ends at byte 24") &&
                                Contains("6 trailing bytes"));
    REQUIRE_THROWS_WITH(SafetensorsFile::open(rawFile("trailing-empty", "{}", 3)),
                        Contains("the header lists no tensors") && Contains("3 trailing bytes"));
    REQUIRE_THROWS_WITH(SafetensorsFile::open(rawFile("truncated", two("[16,24]"), 20)),
                        Contains("tensor 'b'") && Contains("data_offsets [16, 24] end past the data section") &&
                                Contains("truncated"));
}

TEST_CASE("duplicate keys are rejected, not silently dropped", "[safetensors]") {
    const auto w = entry("w", "F32", "[1]", "[0,4]");
    REQUIRE_THROWS_WITH(
            SafetensorsFile::open(rawFile("dup-tensor", "{" + w + "," + entry("w", "F32", "[1]", "[4,8]") + "}", 8)),
            Contains("model.safetensors: tensor 'w' appears twice"));
    REQUIRE_THROWS_WITH(SafetensorsFile::open(rawFile("dup-field",
                                                      "{\"w\":{\"dtype\":\"F32\",\"dtype\":\"F16\",\"shape\":[1],"
                                                      "\"data_offsets\":[0,4]}}",
                                                      4)),
                        Contains("tensor 'w': field 'dtype' appears twice"));
    REQUIRE_THROWS_WITH(
            SafetensorsFile::open(rawFile("dup-meta", "{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}," + w + "}", 4)),
            Contains("__metadata__ key 'k' appears twice"));
}

TEST_CASE("__metadata__ must map strings to strings", "[safetensors]") {
    const auto w = entry("w", "F32", "[1]", "[0,4]");
    const auto f = SafetensorsFile::open(rawFile("meta-ok", "{\"__metadata__\":{\"format\":\"pt\"}," + w + "}", 4));
    CHECK(f->metadata() == std::map<std::string, std::string>{{"format", "pt"}});
    CHECK(f->tensors().size() == 1);

    REQUIRE_THROWS_WITH(SafetensorsFile::open(rawFile("meta-int", "{\"__metadata__\":{\"step\":5}," + w + "}", 4)),
                        Contains("model.safetensors") && Contains("__metadata__ value for 'step' must be a string"));
    REQUIRE_THROWS_WITH(SafetensorsFile::open(rawFile("meta-array", "{\"__metadata__\":[\"pt\"]," + w + "}", 4)),
                        Contains("__metadata__ must be an object of strings"));
}

}  // namespace test_safetensors
