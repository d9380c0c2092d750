// attnscope-cli on the GPT-NeoX, GPT-J, GPT-Neo and Phi families: `attention` writes maps equal
// to the double-precision references; bad configs exit 2 with one line naming file and field.
#include "cli_run.h"
#include "fixtures_neox.h"
#include "npy_read.h"

#include <cmath>
#include <functional>

namespace test_cli_gpt_neox_gptj_gpt_neo_phi {

using namespace attnscope::testing;

namespace {

const std::vector<long long> kIds = {3, 17, 0, 47, 22, 5, 11, 30, 1};
const std::string kIdText = "3,17,0,47,22,5,11,30,1";

// Runs `attention DIR --ids ... --out OUT` (extra arguments appended) and returns the largest
// |map - reference| over the written [layers, heads, n, n] array.
double cliMapError(const Checkpoint& c, const Reference& ref, const std::string& name, const WriteOptions& w,
                   const std::vector<std::string>& extra = {}) {
    const auto dir = freshDir(name);
    writeCheckpoint(dir, c, w);
    const auto out = freshDir(name + "-out");
    std::vector<std::string> args = {"attention", dir.string(), "--ids",    kIdText,
                                     "--out",     out.string(), "--device", "cpu"};
    args.insert(args.end(), extra.begin(), extra.end());
    const CliResult r = runCli(args);
    INFO(r.err);
    REQUIRE(r.code == 0);
    const NpyArray maps = readNpy(out / "attention.npy");
    const std::int64_t L = static_cast<std::int64_t>(ref.probs.size()),
                       H = static_cast<std::int64_t>(ref.probs[0].size());
    const std::int64_t n = static_cast<std::int64_t>(kIds.size());
    REQUIRE(maps.shape == std::vector<std::int64_t>{L, H, n, n});
    double worst = 0;
    for (std::int64_t l = 0; l < L; ++l)
        for (std::int64_t h = 0; h < H; ++h)
            for (std::int64_t i = 0; i < n * n; ++i)
                worst = std::max(worst, std::abs(maps.values[(l * H + h) * n * n + i] - ref.probs[l][h][i]));
    return worst;
}

template <class Spec, class Make, class Ref>
void requireCliMatches(Make make, Ref reference, const Spec& spec, unsigned seed, const std::string& name,
                       const WriteOptions& w = {}, const RefOptions& o = {},
                       const std::vector<std::string>& extra = {}) {
    Checkpoint c = make(spec, seed);
    roundTensors(c, w.dtype);
    const double err = cliMapError(c, reference(c, spec, kIds, o), name, w, extra);
    INFO(name << ": max |map - reference| " << err);
    CHECK(err < 1e-5);
}

template <class Spec, class Make>
void requireBadConfig(Make make, const Spec& spec, const std::function<void(nlohmann::json&)>& edit,
                      const std::string& mentions) {
    Checkpoint c = make(spec, 1);
    edit(c.config);
    const auto dir = freshDir("cli-neox-bad");
    writeCheckpoint(dir, c);
    requireCliInputError(
            runCli({"attention", dir.string(), "--ids", "1,2", "--out", freshDir("cli-neox-bad-out").string()}),
            (dir / "config.json").string() + ": " + mentions);
}

}  // namespace

TEST_CASE("cli attention on gpt_neox writes the reference maps (F32, BF16 shards, sequential, temperature)",
          "[cli][neox]") {
    NeoxSpec spec;
    requireCliMatches(makeNeox, referenceNeox, spec, 41, "cli-neox-f32");
    NeoxSpec bare;
    bare.prefix = false;
    bare.parallel = false;
    requireCliMatches(makeNeox, referenceNeox, bare, 42, "cli-neox-bf16", WriteOptions{"BF16", 2});
    RefOptions o;
    o.temperature = 2.0;
    requireCliMatches(makeNeox, referenceNeox, spec, 43, "cli-neox-hot", {}, o, {"--temperature", "2", "--propagate"});
}

TEST_CASE("cli attention on gptj writes the reference maps (F32, F16 shards)", "[cli][gptj]") {
    GptjSpec spec;
    requireCliMatches(makeGptj, referenceGptj, spec, 44, "cli-gptj-f32");
    spec.prefix = false;
    requireCliMatches(makeGptj, referenceGptj, spec, 45, "cli-gptj-f16", WriteOptions{"F16", 3});
}

TEST_CASE("cli attention on gpt_neo writes the reference maps, local layers windowed", "[cli][gptneo]") {
    NeoSpec spec;
    requireCliMatches(makeNeo, referenceNeo, spec, 46, "cli-neo-f32");
    spec.prefix = false;
    spec.kinds = {"local", "global"};
    requireCliMatches(makeNeo, referenceNeo, spec, 47, "cli-neo-bf16", WriteOptions{"BF16", 2});
}

TEST_CASE("cli attention on phi writes the reference maps (qk_layernorm, kv groups, F16 shards)", "[cli][phi]") {
    PhiSpec spec;
    requireCliMatches(makePhi, referencePhi, spec, 48, "cli-phi-f32");
    spec.prefix = false;
    spec.qkNorm = true;
    spec.kvHeads = 2;
    requireCliMatches(makePhi, referencePhi, spec, 49, "cli-phi-f16", WriteOptions{"F16", 2});
}

TEST_CASE("cli: contradictory gpt_neox, gptj, gpt_neo and phi configs exit 2 naming file and field", "[cli][neox]") {
    requireBadConfig(
            makeNeox, NeoxSpec{}, [](auto& c) { c["num_attention_heads"] = 5; },
            "'hidden_size' (64) must be divisible by num_attention_heads (5)");
    requireBadConfig(
            makeGptj, GptjSpec{}, [](auto& c) { c["rotary_dim"] = 7; },
            "'rotary_dim' (7) must be even and at most the head dim (16)");
    requireBadConfig(
            makeNeo, NeoSpec{}, [](auto& c) { c["window_size"] = 100; },
            "'window_size' (100) is larger than max_position_embeddings (64)");
    requireBadConfig(
            makeNeo, NeoSpec{}, [](auto& c) { c["attention_layers"][0] = "dilated"; },
            "'attention_layers' says 'dilated' for layer 0 where attention_types says 'global'");
    requireBadConfig(
            makePhi, PhiSpec{}, [](auto& c) { c["partial_rotary_factor"] = 0.0; },
            "'partial_rotary_factor' must be in (0, 1]");
    // A missing fused tensor names the shard index's source and the tensor.
    Checkpoint c = makeNeox(NeoxSpec{}, 1);
    c.tensors.erase("gpt_neox.layers.0.attention.query_key_value.bias");
    const auto dir = freshDir("cli-neox-missing");
    writeCheckpoint(dir, c);
    requireCliInputError(
            runCli({"attention", dir.string(), "--ids", "1,2", "--out", freshDir("cli-neox-missing-out").string()}),
            "tensor 'gpt_neox.layers.0.attention.query_key_value.bias'");
    // More ids than positions.
    std::string ids = "1";
    for (int i = 1; i < 65; ++i) ids += ",1";
    writeCheckpoint(dir, makeNeox(NeoxSpec{}, 1));
    requireCliInputError(runCli({"attention", dir.string(), "--ids", ids, "--out", freshDir("cli-neox-long").string()}),
                         "65 tokens but the model has only 64 positions");
}

}  // namespace test_cli_gpt_neox_gptj_gpt_neo_phi
