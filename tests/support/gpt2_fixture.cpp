#include "gpt2_fixture.h"

#include "attnscope/io/safetensors.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <random>
#include <string>
#include <vector>
#include <unistd.h>

namespace attnscope::testing {

namespace {
namespace gpt2_fixture {  // this file's helpers, apart from the other support files' in a unity build

std::uint32_t bitsOf(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

float floatOf(std::uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

}  // namespace gpt2_fixture
}  // namespace

std::uint16_t toBFloat16(float value) {
    using namespace gpt2_fixture;
    const std::uint32_t u = bitsOf(value);
    return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

float fromBFloat16(std::uint16_t bits) { return gpt2_fixture::floatOf(static_cast<std::uint32_t>(bits) << 16); }

std::uint16_t toHalf(float value) {
    using namespace gpt2_fixture;
    // Finite values of test magnitude only (|x| < 65504); subnormals are flushed through the
    // generic path below by scaling with the exact power of two.
    const std::uint32_t u = bitsOf(value);
    const std::uint16_t sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
    const float a = std::fabs(value);
    if (a < 6.103515625e-05f) {  // half subnormal: units of 2^-24
        return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(std::nearbyint(a * 16777216.0f)));
    }
    std::uint32_t m = bitsOf(a);
    const int exp = static_cast<int>(m >> 23) - 127 + 15;
    std::uint32_t mant = m & 0x7fffffu;
    std::uint32_t half = (static_cast<std::uint32_t>(exp) << 10) | (mant >> 13);
    const std::uint32_t rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;  // carries into the exponent correctly
    return static_cast<std::uint16_t>(sign | half);
}

float fromHalf(std::uint16_t bits) {
    const float sign = (bits & 0x8000u) ? -1.f : 1.f;
    const int exp = (bits >> 10) & 0x1f;
    const int mant = bits & 0x3ff;
    if (exp == 0) return sign * std::ldexp(static_cast<float>(mant), -24);
    return sign * std::ldexp(static_cast<float>(mant | 0x400), exp - 25);
}

Gpt2Checkpoint makeGpt2(const Gpt2Spec& s, unsigned seed) {
    std::mt19937 rng(seed);
    Gpt2Checkpoint c;
    c.spec = s;
    const std::int64_t E = s.embd;
    c.tensors["wte.weight"] = randomTensor({s.vocab, E}, rng, 0.5f);
    c.tensors["wpe.weight"] = randomTensor({s.positions, E}, rng, 0.3f);
    for (int l = 0; l < s.layers; ++l) {
        const std::string p = "h." + std::to_string(l) + ".";
        c.tensors[p + "ln_1.weight"] = randomTensor({E}, rng, 0.1f, 1.f);
        c.tensors[p + "ln_1.bias"] = randomTensor({E}, rng, 0.1f);
        c.tensors[p + "attn.c_attn.weight"] = randomTensor({E, 3 * E}, rng, 0.4f);
        c.tensors[p + "attn.c_attn.bias"] = randomTensor({3 * E}, rng, 0.1f);
        c.tensors[p + "attn.c_proj.weight"] = randomTensor({E, E}, rng, 0.2f);
        c.tensors[p + "attn.c_proj.bias"] = randomTensor({E}, rng, 0.1f);
        c.tensors[p + "ln_2.weight"] = randomTensor({E}, rng, 0.1f, 1.f);
        c.tensors[p + "ln_2.bias"] = randomTensor({E}, rng, 0.1f);
        c.tensors[p + "mlp.c_fc.weight"] = randomTensor({E, 4 * E}, rng, 0.2f);
        c.tensors[p + "mlp.c_fc.bias"] = randomTensor({4 * E}, rng, 0.1f);
        c.tensors[p + "mlp.c_proj.weight"] = randomTensor({4 * E, E}, rng, 0.1f);
        c.tensors[p + "mlp.c_proj.bias"] = randomTensor({E}, rng, 0.1f);
    }
    c.tensors["ln_f.weight"] = randomTensor({E}, rng, 0.1f, 1.f);
    c.tensors["ln_f.bias"] = randomTensor({E}, rng, 0.1f);
    if (s.untiedHead) c.tensors["lm_head.weight"] = randomTensor({s.vocab, E}, rng, 0.5f);
    for (auto& [name, t] : c.tensors)
        for (auto& v : t.values) v = roundTo(v, s.dtype);
    return c;
}

Tensor randomTensor(std::vector<std::int64_t> shape, std::mt19937& rng, float scale, float offset) {
    std::int64_t n = 1;
    for (auto s : shape) n *= s;
    std::normal_distribution<float> dist(0.f, 1.f);
    Tensor t{std::move(shape), std::vector<float>(static_cast<std::size_t>(n))};
    for (auto& v : t.values) v = offset + scale * dist(rng);
    return t;
}

float roundTo(float value, const std::string& dtype) {
    if (dtype == "F16") return fromHalf(toHalf(value));
    if (dtype == "BF16") return fromBFloat16(toBFloat16(value));
    return value;
}

TensorBytes encodeTensor(const std::string& name, const Tensor& t, const std::string& dtype) {
    TensorBytes b;
    b.name = name;
    b.shape = t.shape;
    if (dtype == "F32") {
        b.dtype = DType::F32;
        b.bytes.resize(t.values.size() * sizeof(float));
        std::memcpy(b.bytes.data(), t.values.data(), b.bytes.size());
    } else {
        b.dtype = dtype == "F16" ? DType::F16 : DType::BF16;
        std::vector<std::uint16_t> half;
        for (float v : t.values) half.push_back(dtype == "F16" ? toHalf(v) : toBFloat16(v));
        b.bytes.resize(half.size() * 2);
        std::memcpy(b.bytes.data(), half.data(), b.bytes.size());
    }
    return b;
}

void writeText(const std::filesystem::path& file, const std::string& text) {
    std::ofstream out(file, std::ios::binary);
    out << text;
}

void writeGpt2TokenizerFolder(const std::filesystem::path& dir, const std::filesystem::path& tokenizerJson,
                              std::uint32_t seed) {
    Gpt2Spec spec;
    spec.vocab = 8257;
    spec.vocabJson = false;
    writeGpt2Folder(dir, makeGpt2(spec, seed));
    std::filesystem::copy_file(tokenizerJson, dir / "tokenizer.json");
}

void writeGpt2Folder(const std::filesystem::path& dir, const Gpt2Checkpoint& c) {
    const auto& s = c.spec;
    std::filesystem::create_directories(dir);
    nlohmann::json config = {
            {"model_type", "gpt2"},
            {"architectures", {"GPT2LMHeadModel"}},
            {"vocab_size", s.vocab},
            {"n_positions", s.positions},
            {"n_ctx", s.positions},
            {"n_embd", s.embd},
            {"n_head", s.heads},
            {"n_layer", s.layers},
            {"n_inner", nullptr},
            {"layer_norm_epsilon", s.eps},
            {"activation_function", s.activation},
            {"tie_word_embeddings", !s.untiedHead},
            {"torch_dtype", "float32"},
    };
    writeText(dir / "config.json", config.dump(2));

    std::vector<TensorBytes> out;
    for (const auto& [name, t] : c.tensors) {
        out.push_back(encodeTensor((s.prefix && name != "lm_head.weight") ? "transformer." + name : name, t, s.dtype));
    }
    if (s.legacyBuffers) {
        for (int l = 0; l < s.layers; ++l) {
            const std::string p = std::string(s.prefix ? "transformer." : "") + "h." + std::to_string(l) + ".attn.";
            TensorBytes bias{p + "bias", DType::F32, {1, 1, s.positions, s.positions}, {}};
            bias.bytes.assign(static_cast<std::size_t>(s.positions) * s.positions * sizeof(float), std::byte{0});
            out.push_back(std::move(bias));
            TensorBytes masked{p + "masked_bias", DType::F32, {}, std::vector<std::byte>(sizeof(float))};
            out.push_back(std::move(masked));
        }
    }
    writeSafetensors(dir / "model.safetensors", out, {{"format", "pt"}});

    if (s.vocabJson) {
        nlohmann::json vocab = nlohmann::json::object();
        for (int i = 0; i < s.vocab; ++i) vocab["t" + std::to_string(i)] = i;
        writeText(dir / "vocab.json", vocab.dump());
    }
}

namespace {
namespace gpt2_fixture {  // this file's helpers, apart from the other support files' in a unity build

// The folders freshDir made, removed when the test process exits normally (a crash leaves them
// for a look; ATTNSCOPE_KEEP_TEST_DIRS=1 keeps them always).
class MadeDirs {
public:
    void add(const std::filesystem::path& dir) {
        const std::lock_guard<std::mutex> lock(mutex_);
        dirs_.push_back(dir);
    }
    ~MadeDirs() {
        const char* keep = std::getenv("ATTNSCOPE_KEEP_TEST_DIRS");
        if (keep && std::string(keep) == "1") return;
        std::error_code ignored;
        for (const auto& dir : dirs_) std::filesystem::remove_all(dir, ignored);
    }

private:
    std::mutex mutex_;
    std::vector<std::filesystem::path> dirs_;
};

}  // namespace gpt2_fixture
}  // namespace

std::filesystem::path freshDir(const std::string& name) {
    using namespace gpt2_fixture;
    static std::atomic<int> counter{0};
    static MadeDirs made;
    auto dir = std::filesystem::temp_directory_path() /
               ("attnscope-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" + name);
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    made.add(dir);
    return dir;
}

}  // namespace attnscope::testing
