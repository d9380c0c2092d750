// PyTorch checkpoints (pytorch_model.bin): the files python3-torch wrote in tests/data/torch_bin
// (make_torch_bin.py) read byte for byte like their safetensors twins, a .bin folder runs like the
// safetensors folder, and hostile or malformed pickles and archives are refused with one line
// naming the file, without running anything.
#include "attnscope/io/safetensors.h"
#include "attnscope/io/torch_checkpoint.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"
#include "family_checks.h"
#include "gpt2_fixture.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <fstream>

namespace test_torch_checkpoint {

using namespace attnscope;
using namespace attnscope::testing;
using namespace std::string_literals;

namespace {

const std::filesystem::path kData = std::filesystem::path(ATTNSCOPE_TOKENIZER_DATA).parent_path() / "torch_bin";

std::string bytesOf(const std::byte* p, const TensorInfo& t) {
    return std::string(reinterpret_cast<const char*>(p), t.end - t.begin);
}

// Every tensor of the safetensors twin is in the checkpoint with the same dtype, shape and bytes.
void requireSameTensors(const TorchCheckpoint& bin, const SafetensorsFile& st) {
    for (const TensorInfo& t : st.tensors()) {
        INFO(bin.path() << ": " << t.name);
        const TensorInfo* b = bin.find(t.name);
        REQUIRE(b);
        CHECK(b->dtype == t.dtype);
        CHECK(b->shape == t.shape);
        CHECK(bytesOf(bin.data(*b), *b) == bytesOf(st.data(t), t));
    }
}

std::string openError(const std::filesystem::path& file) {
    try {
        TorchCheckpoint::open(file);
    } catch (const Error& e) {
        return e.what();
    }
    return "(no error)";
}

void writeBytes(const std::filesystem::path& file, const std::string& bytes) {
    std::ofstream out(file, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Pickle pieces, hand-assembled (protocol 2 opcodes).
std::string u32(std::uint32_t v) {
    std::string s(4, '\0');
    for (int i = 0; i < 4; ++i) s[i] = static_cast<char>(v >> (8 * i));
    return s;
}
std::string str(const std::string& s) { return "X" + u32(static_cast<std::uint32_t>(s.size())) + s; }
std::string i32(std::int32_t v) { return "J" + u32(static_cast<std::uint32_t>(v)); }
std::string i64(std::int64_t v) {
    std::string s = "\x8a\x08";
    for (int i = 0; i < 8; ++i) s += static_cast<char>(static_cast<std::uint64_t>(v) >> (8 * i));
    return s;
}

// The legacy format's three header pickles (magic number, protocol 1001, sys_info).
std::string legacyHeader() {
    return std::string("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.", 15) + "\x80\x02M\xe9\x03." +
           "\x80\x02}(" + str("little_endian") + "\x88u.";
}
// ('storage', FloatStorage, key, 'cpu', numel) as BINPERSID.
std::string storage(const std::string& key, std::int64_t numel) {
    return "(" + str("storage") + "ctorch\nFloatStorage\n" + str(key) + str("cpu") + i64(numel) + "NtQ";
}
// A legacy file whose state dict is {"w": tensor(storage "0", offset, size, stride)} and whose one
// storage holds `stored` floats.
std::string legacyTensor(std::int64_t numel, std::int64_t offset, const std::vector<std::int64_t>& size,
                         const std::vector<std::int64_t>& stride, std::int64_t stored) {
    std::string p =
            "\x80\x02}(" + str("w") + "ctorch._utils\n_rebuild_tensor_v2\n(" + storage("0", numel) + i64(offset);
    p += "(";
    for (auto d : size) p += i64(d);
    p += "t(";
    for (auto d : stride) p += i64(d);
    p += "t\x89"
         "ccollections\nOrderedDict\n)RtRu.";
    std::string tail = "\x80\x02]" + str("0") + "a.";
    std::string data(8, '\0');
    for (int i = 0; i < 8; ++i) data[i] = static_cast<char>(static_cast<std::uint64_t>(stored) >> (8 * i));
    data += std::string(static_cast<std::size_t>(std::min<std::int64_t>(stored, 64)) * 4, '\0');  // the count may lie
    return legacyHeader() + p + tail + data;
}

}  // namespace

TEST_CASE("torch.save checkpoints read the same tensors as their safetensors twins", "[torch_bin]") {
    const auto st = SafetensorsFile::open(kData / "gpt2" / "model.safetensors");
    for (const char* folder : {"gpt2-zip", "gpt2-legacy"}) {
        const auto bin = TorchCheckpoint::open(kData / folder / "pytorch_model.bin");
        CHECK(std::string(bin->format()) == (std::string(folder) == "gpt2-zip" ? "zip" : "legacy"));
        requireSameTensors(*bin, *st);
        // What safetensors cannot hold: a tied head over wte's storage, a bool mask left out.
        const TensorInfo* head = bin->find("lm_head.weight");
        const TensorInfo* wte = bin->find("transformer.wte.weight");
        REQUIRE((head && wte));
        CHECK(head->begin == wte->begin);
        CHECK(bin->skipped() == std::map<std::string, std::string>{{"transformer.h.0.attn.bias", "BoolStorage"}});
        CHECK(bin->tensors().size() == st->tensors().size() + 1);
    }
    // Layer 0's c_attn.bias is elements 5.. of a larger storage.
    const auto zip = TorchCheckpoint::open(kData / "gpt2-zip" / "pytorch_model.bin");
    CHECK(zip->find("transformer.h.0.attn.c_attn.bias")->begin % 64 == 5 * 4);

    const auto dtypes = SafetensorsFile::open(kData / "dtypes.safetensors");
    for (const char* file : {"dtypes.bin", "dtypes-legacy.bin"}) {
        const auto bin = TorchCheckpoint::open(kData / file);
        requireSameTensors(*bin, *dtypes);
        CHECK(bin->tensors().size() == 5);
        CHECK(bin->find("scalar")->shape.empty());
        CHECK(bin->find("empty")->shape == std::vector<std::int64_t>{0, 3});
    }
}

TEST_CASE("A folder with only .bin files runs like its safetensors twin", "[torch_bin]") {
    const auto reference = loadCpu(kData / "gpt2");
    const std::vector<std::int64_t> ids = {1, 7, 30, 2, 11, 5};
    const auto expected = reference->forward(ids);
    for (const char* folder : {"gpt2-zip", "gpt2-legacy", "gpt2-shards"}) {
        INFO(folder);
        const auto model = loadCpu(kData / folder);
        CHECK(model->info().family == reference->info().family);
        const auto trace = model->forward(ids);
        for (int l = 0; l < 2; ++l)
            for (int h = 0; h < 2; ++h) CHECK(trace->map(0, l, h).values == expected->map(0, l, h).values);
    }
}

TEST_CASE("A BF16 .bin is streamed from its mapping like BF16 safetensors", "[torch_bin][streamed]") {
    LoadOptions options;
    options.device = DeviceChoice::Cpu;
    options.weights = WeightPlan::Stream;
    const auto st = Model::load(kData / "gpt2-bf16", options);
    const auto bin = Model::load(kData / "gpt2-bf16-zip", options);
    INFO(bin->info().weights);
    CHECK_THAT(bin->info().weights, Catch::StartsWith("streamed from BF16 (one layer at a time"));
    CHECK(bin->info().dtype == "BF16");
    const std::vector<std::int64_t> ids = {2, 7, 1, 8, 2, 8};
    const auto a = st->forward(ids), b = bin->forward(ids);
    for (int l = 0; l < 2; ++l)
        for (int h = 0; h < 2; ++h) CHECK(b->map(0, l, h).values == a->map(0, l, h).values);
}

TEST_CASE("Checkpoints torch.save never writes are refused by name", "[torch_bin]") {
    CHECK_THAT(openError(kData / "transposed.bin"),
               Catch::Contains("tensor 'weight': is not contiguous (shape [3, 2], strides [1, 3])"));
    CHECK_THAT(openError(kData / "compressed.bin"),
               Catch::Contains("zip entry 'dtypes/data.pkl' is compressed (method 8)"));
    const auto dir = freshDir("torch-bin-bad");
    // Truncated copies of real files: every prefix length class is an error, never a crash.
    for (const char* file : {"gpt2-zip/pytorch_model.bin", "gpt2-legacy/pytorch_model.bin"}) {
        std::ifstream in(kData / file, std::ios::binary);
        const std::string whole((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        for (std::size_t cut : {std::size_t{3}, std::size_t{40}, whole.size() / 2, whole.size() - 1}) {
            writeBytes(dir / "cut.bin", whole.substr(0, cut));
            const std::string error = openError(dir / "cut.bin");
            INFO(file << " cut at " << cut << ": " << error);
            CHECK_THAT(error, Catch::StartsWith((dir / "cut.bin").string() + ": "));
            CHECK(error.find('\n') == std::string::npos);
        }
    }
    writeBytes(dir / "text.bin", "hello, not a checkpoint");
    CHECK_THAT(openError(dir / "text.bin"), Catch::Contains("not a PyTorch checkpoint"));
}

TEST_CASE("Hostile pickles are refused naming the global or opcode, and nothing runs", "[torch_bin][pickle]") {
    const auto dir = freshDir("torch-bin-pickles");
    const auto marker = dir / "ran";
    const auto bin = dir / "evil.bin";
    auto refused = [&](const std::string& pickle) {
        writeBytes(bin, legacyHeader() + pickle);
        const std::string error = openError(bin);
        CHECK_FALSE(std::filesystem::exists(marker));
        CHECK(error.find('\n') == std::string::npos);
        return error;
    };
    const std::string touch = str("touch " + marker.string());
    SECTION("GLOBAL os.system, REDUCE'd") {
        CHECK_THAT(refused("\x80\x02"
                           "cos\nsystem\n(" +
                           touch + "tR."),
                   Catch::Contains("names the global 'os.system'") && Catch::Contains("nothing in the file was run"));
    }
    SECTION("STACK_GLOBAL builtins.eval") {
        CHECK_THAT(refused("\x80\x04\x8c\x08"
                           "builtins\x8c\x04"
                           "eval\x93(" +
                           str("1") + "tR."),
                   Catch::Contains("names the global 'builtins.eval'"));
    }
    SECTION("subprocess.Popen inside a state dict") {
        CHECK_THAT(refused("\x80\x02}(" + str("w") + "csubprocess\nPopen\n(" + touch + "tRu."),
                   Catch::Contains("names the global 'subprocess.Popen'"));
    }
    SECTION("torch globals outside the allowed set") {
        CHECK_THAT(refused("\x80\x02"
                           "ctorch\nload\n."),
                   Catch::Contains("names the global 'torch.load'"));
        CHECK_THAT(refused("\x80\x02"
                           "ctorch._utils\n_rebuild_qtensor\n."),
                   Catch::Contains("'torch._utils._rebuild_qtensor'"));
    }
    SECTION("REDUCE of something that is not an allowed function") {
        CHECK_THAT(refused("\x80\x02" + str("os.system") + "(" + touch + "tR."),
                   Catch::Contains("REDUCE calls a string, not a function this reader allows"));
        CHECK_THAT(refused("\x80\x02"
                           "ctorch\nFloatStorage\n)R."),
                   Catch::Contains("REDUCE calls a storage class"));
    }
    SECTION("opcodes that build arbitrary objects") {
        CHECK_THAT(refused("\x80\x02(cos\nsystem\n."), Catch::Contains("names the global 'os.system'"));
        CHECK_THAT(refused("\x80\x02(" + touch + "ios\nsystem\n."), Catch::Contains("opcode 0x69 (INST)"));
        CHECK_THAT(refused("\x80\x02"
                           "ccollections\nOrderedDict\n)\x81."),
                   Catch::Contains("(NEWOBJ)"));
        CHECK_THAT(refused("\x80\x02\x82\x01."), Catch::Contains("(EXT1)"));
    }
    SECTION("persistent ids other than storages") {
        CHECK_THAT(refused("\x80\x02(" + str("module") + "NNNNtQ."), Catch::Contains("persistent id kind 'module'"));
    }
    SECTION("malformed pickles") {
        CHECK_THAT(refused("\x80\x02X\xff\xff\xff\x7f"
                           "abc"),
                   Catch::Contains("truncated"));
        CHECK_THAT(refused("\x80\x02j\x10\x00\x00\x00."s), Catch::Contains("memo entry 16 was never stored"));
        CHECK_THAT(refused("\x80\x02"
                           "a."),
                   Catch::Contains("the stack has none"));
        CHECK_THAT(refused("\x80\x02]"), Catch::Contains("ends without STOP"));
        // Objects beyond the cap (2^21): refused, however small each is.
        CHECK_THAT(refused("\x80\x02" + std::string((std::size_t{1} << 21) + 1, 'N') + "."),
                   Catch::Contains("the pickle builds more than 2097152 objects"));
        // A list appended to itself: a cycle, harmless in the reader's arena.
        CHECK_THAT(refused("\x80\x02]q\x00h\x00"
                           "a."s),
                   Catch::Contains("holds a list, not a state dict"));
    }
}

TEST_CASE("Tensors and storages that do not fit the file are refused before any allocation", "[torch_bin][pickle]") {
    const auto dir = freshDir("torch-bin-sizes");
    const auto file = dir / "sizes.bin";
    auto error = [&](const std::string& bytes) {
        writeBytes(file, bytes);
        return openError(file);
    };
    // A well-formed one first: the assembler is right.
    writeBytes(file, legacyTensor(6, 2, {2, 2}, {2, 1}, 6));
    const auto ok = TorchCheckpoint::open(file);
    REQUIRE(ok->tensors().size() == 1);
    CHECK(ok->tensors()[0].end - ok->tensors()[0].begin == 16);

    CHECK_THAT(error(legacyTensor(6, 4, {2, 2}, {2, 1}, 6)),
               Catch::Contains("tensor 'w': elements 4 + 4 lie past its storage '0' of 6 elements"));
    CHECK_THAT(error(legacyTensor(6, 0, {std::int64_t{1} << 62, 16}, {16, 1}, 6)),
               Catch::Contains("shape [4611686018427387904, 16] overflows 64 bits"));
    // A storage that claims 2^61 floats: the count is checked against the bytes left.
    CHECK_THAT(error(legacyTensor(6, 0, {2}, {1}, std::int64_t{1} << 61)),
               Catch::Contains("bytes are left (file truncated?)"));
    CHECK_THAT(error(legacyTensor(8, 0, {2}, {1}, 6)), Catch::Contains("holds 6 elements, the state dict 8"));
    CHECK_THAT(error(legacyTensor(6, 0, {2, 3}, {1, 2}, 6)), Catch::Contains("is not contiguous"));
    CHECK_THAT(error(legacyTensor(-1, 0, {2}, {1}, 6)), Catch::Contains("a storage's element count is negative"));
}

}  // namespace test_torch_checkpoint
