// GPT-NeoX, GPT-J, GPT-Neo and Phi against the independent double-precision references in
// tests/support/reference_neox.cpp, on random checkpoints with the real tensor names.
#include "attnscope/runtime/error.h"
#include "family_checks.h"
#include "fixtures_neox.h"

#include <functional>

namespace test_gpt_neox_gptj_gpt_neo_phi {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

const std::vector<long long> kIds = {3, 17, 0, 47, 22, 5, 5, 11, 30, 1, 9};

RunOptions runOptions(const RefOptions& o) {
    RunOptions r;
    r.temperature = o.temperature;
    r.temperatureLayers = o.temperatureLayers;
    for (const auto& [layer, head] : o.maskHeads) r.maskHeads.push_back(HeadRef{"self", layer, head});
    return r;
}

// Writes the checkpoint (rounded to the dtype), runs it on the CPU and compares every map and
// the next-token logits with the reference. Returns the model for further checks.
template <class Spec, class Make, class Ref>
std::shared_ptr<const Model> requireMatches(Make make, Ref reference, const Spec& spec, unsigned seed,
                                            const std::string& name, const WriteOptions& w = {},
                                            const RefOptions& o = {}) {
    Checkpoint c = make(spec, seed);
    roundTensors(c, w.dtype);
    auto model = writeAndLoad(c, name, w);
    auto trace = model->forward(ids64(kIds), runOptions(o));
    const Reference ref = reference(c, spec, kIds, o);
    const double mapDiff = maxMapDiff(*trace, ref);
    const double logitDiff = maxLogitDiff(trace->nextTokenLogits(), ref.logits);
    INFO(name << ": max |map - reference| " << mapDiff << ", max |logit - reference| " << logitDiff);
    CHECK(mapDiff < 1e-5);
    CHECK(logitDiff < 1e-4);
    return model;
}

template <class Spec, class Make>
std::string loadError(Make make, const Spec& spec, const std::function<void(Checkpoint&)>& edit) {
    Checkpoint c = make(spec, 1);
    edit(c);
    return writeAndLoadError(c, "neox-bad");
}

const std::vector<std::string>& notesOf(const Model& m) { return m.info().notes; }

}  // namespace

// ---- GPT-NeoX -------------------------------------------------------------------------------

TEST_CASE("GPT-NeoX: fused per-head qkv, partial rotary and the parallel residual equal the reference", "[neox]") {
    NeoxSpec spec;
    auto model = requireMatches(makeNeox, referenceNeox, spec, 1, "neox-f32");
    CHECK(model->info().family == "gpt_neox");
    CHECK(model->info().headDim == 16);
    CHECK(notesOf(*model) == std::vector<std::string>{"rotary on 25% of dims (4 of 16)", "parallel attention and MLP"});
    CHECK(model->forward(ids64(kIds))->blocks()[0].layerWindows.empty());
}

TEST_CASE("GPT-NeoX: BF16 and F16 shards without the gpt_neox. prefix", "[neox]") {
    NeoxSpec spec;
    spec.prefix = false;
    requireMatches(makeNeox, referenceNeox, spec, 2, "neox-bf16", WriteOptions{"BF16", 3});
    requireMatches(makeNeox, referenceNeox, spec, 3, "neox-f16", WriteOptions{"F16", 2});
}

TEST_CASE("GPT-NeoX: sequential residual, no attention bias, tied head, rope_theta keys, full rotary", "[neox]") {
    NeoxSpec seq;
    seq.parallel = false;
    auto model = requireMatches(makeNeox, referenceNeox, seq, 4, "neox-seq");
    CHECK(notesOf(*model) == std::vector<std::string>{"rotary on 25% of dims (4 of 16)"});
    NeoxSpec plain;
    plain.bias = false;
    plain.tied = true;
    requireMatches(makeNeox, referenceNeox, plain, 5, "neox-nobias");
    NeoxSpec keys;  // newer configs: rope_theta and partial_rotary_factor
    keys.newKeys = true;
    keys.base = 500.0;
    keys.rotaryPct = 0.5;
    requireMatches(makeNeox, referenceNeox, keys, 6, "neox-newkeys");
    NeoxSpec full;
    full.rotaryPct = 1.0;
    full.activation = "gelu_new";
    model = requireMatches(makeNeox, referenceNeox, full, 7, "neox-full");
    CHECK(notesOf(*model)[0] == "rotary on all 16 dims");
    // rope_parameters (the newest layout) carries theta and the fraction.
    Checkpoint c = makeNeox(NeoxSpec{}, 8);
    c.config.erase("rotary_emb_base");
    c.config.erase("rotary_pct");
    c.config["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", 2000.0}, {"partial_rotary_factor", 0.5}};
    NeoxSpec same;
    same.base = 2000.0;
    same.rotaryPct = 0.5;
    model = writeAndLoad(c, "neox-ropeparams");
    CHECK(maxMapDiff(*model->forward(ids64(kIds)), referenceNeox(c, same, kIds)) < 1e-5);
}

TEST_CASE("GPT-NeoX: temperature inside the model and head masking equal the reference", "[neox]") {
    NeoxSpec spec;
    RefOptions o;
    o.temperature = 2.5;
    o.temperatureLayers = {1};
    o.maskHeads = {{0, 2}};
    requireMatches(makeNeox, referenceNeox, spec, 9, "neox-options", {}, o);
    RefOptions all;
    all.temperature = 0.5;
    requireMatches(makeNeox, referenceNeox, spec, 9, "neox-cold", {}, all);
}

TEST_CASE("GPT-NeoX: contradictory configs and a missing fused tensor name the file and field", "[neox]") {
    NeoxSpec spec;
    CHECK_THAT(loadError(makeNeox, spec, [](Checkpoint& c) { c.config["num_attention_heads"] = 5; }),
               Catch::Contains("config.json: 'hidden_size' (64) must be divisible by num_attention_heads (5)"));
    CHECK_THAT(loadError(makeNeox, spec, [](Checkpoint& c) { c.config["rotary_pct"] = 0.1; }),
               Catch::Contains("'rotary_pct' gives 1 rotary dimensions of head dim 16"));
    CHECK_THAT(loadError(makeNeox, spec, [](Checkpoint& c) { c.config["rotary_pct"] = 1.5; }),
               Catch::Contains("'rotary_pct' must be in (0, 1]"));
    CHECK_THAT(loadError(makeNeox, spec, [](Checkpoint& c) { c.config["hidden_act"] = "swiglu"; }),
               Catch::Contains("'hidden_act' 'swiglu' is not supported"));
    CHECK_THAT(
            loadError(makeNeox, spec,
                      [](Checkpoint& c) { c.tensors.erase("gpt_neox.layers.1.attention.query_key_value.weight"); }),
            Catch::Contains(
                    "tensor 'gpt_neox.layers.1.attention.query_key_value.weight' (or 'layers.1.attention.query_key_value.weight') is missing"));
    CHECK_THAT(loadError(makeNeox, spec,
                         [](Checkpoint& c) {
                             c.config["attention_bias"] = false;
                             c.tensors.erase("embed_out.weight");
                         }),
               Catch::Contains("embed_out.weight"));
    auto model = writeAndLoad(makeNeox(spec, 1), "neox-long");
    CHECK_THROWS_WITH(model->forward(std::vector<std::int64_t>(65, 1)),
                      Catch::Contains("65 tokens but the model has only 64 positions"));
}

// ---- GPT-J ----------------------------------------------------------------------------------

TEST_CASE("GPT-J: interleaved partial rotary, parallel block from ln_1 and the biased lm_head equal the reference",
          "[gptj]") {
    GptjSpec spec;
    auto model = requireMatches(makeGptj, referenceGptj, spec, 11, "gptj-f32");
    CHECK(model->info().family == "gptj");
    CHECK(notesOf(*model) ==
          std::vector<std::string>{"rotary on 50% of dims (8 of 16), interleaved pairs", "parallel attention and MLP"});
}

TEST_CASE("GPT-J: F16 and BF16 shards without the transformer. prefix; tied head, full rotary, n_inner", "[gptj]") {
    GptjSpec spec;
    spec.prefix = false;
    requireMatches(makeGptj, referenceGptj, spec, 12, "gptj-f16", WriteOptions{"F16", 3});
    requireMatches(makeGptj, referenceGptj, spec, 13, "gptj-bf16", WriteOptions{"BF16", 2});
    GptjSpec variant;
    variant.tied = true;
    variant.rotaryDim = 16;
    variant.inner = 40;
    requireMatches(makeGptj, referenceGptj, variant, 14, "gptj-variant");
}

TEST_CASE("GPT-J: temperature inside the model and head masking equal the reference", "[gptj]") {
    RefOptions o;
    o.temperature = 3.0;
    o.temperatureLayers = {0};
    o.maskHeads = {{1, 0}};
    requireMatches(makeGptj, referenceGptj, GptjSpec{}, 15, "gptj-options", {}, o);
}

TEST_CASE("GPT-J: bad configs name the file and field; long inputs are refused", "[gptj]") {
    GptjSpec spec;
    CHECK_THAT(loadError(makeGptj, spec, [](Checkpoint& c) { c.config["n_head"] = 3; }),
               Catch::Contains("config.json: 'n_embd' (32) must be divisible by n_head (3)"));
    CHECK_THAT(loadError(makeGptj, spec, [](Checkpoint& c) { c.config["rotary_dim"] = 18; }),
               Catch::Contains("'rotary_dim' (18) must be even and at most the head dim (16)"));
    CHECK_THAT(loadError(makeGptj, spec, [](Checkpoint& c) { c.tensors.erase("lm_head.bias"); }),
               Catch::Contains("tensor 'transformer.lm_head.bias' (or 'lm_head.bias') is missing"));
    auto model = writeAndLoad(makeGptj(spec, 1), "gptj-long");
    CHECK_THROWS_WITH(model->forward(std::vector<std::int64_t>(65, 1)),
                      Catch::Contains("65 tokens but the model has only 64 positions"));
}

// ---- GPT-Neo --------------------------------------------------------------------------------

TEST_CASE("GPT-Neo: unscaled logits and alternating global/local layers equal the reference", "[gptneo]") {
    NeoSpec spec;
    auto model = requireMatches(makeNeo, referenceNeo, spec, 21, "neo-f32");
    CHECK(model->info().family == "gpt_neo");
    CHECK(notesOf(*model) == std::vector<std::string>{"no 1/√d scaling", "sliding window 3 on layers 1, 3"});
    auto trace = model->forward(ids64(kIds));
    CHECK(trace->blocks()[0].layerWindows == std::vector<std::int64_t>{0, 3, 0, 3});
    const HeadMap local = trace->map(0, 1, 2), global = trace->map(0, 2, 2);
    for (int i = 0; i < local.rows; ++i)
        for (int j = 0; j < local.cols; ++j) {
            if (j > i || i - j >= 3) REQUIRE(local.at(i, j) == 0.0f);
            if (j > i) REQUIRE(global.at(i, j) == 0.0f);
        }
    CHECK(global.at(10, 0) > 0.0f);
}

TEST_CASE("GPT-Neo: BF16 and F16 shards without the prefix; untied head, all-global, local-first, no attention_layers",
          "[gptneo]") {
    NeoSpec spec;
    spec.prefix = false;
    requireMatches(makeNeo, referenceNeo, spec, 22, "neo-bf16", WriteOptions{"BF16", 3});
    requireMatches(makeNeo, referenceNeo, spec, 23, "neo-f16", WriteOptions{"F16", 2});
    NeoSpec global;
    global.kinds = {"global"};
    global.tied = false;
    global.inner = 40;
    auto model = requireMatches(makeNeo, referenceNeo, global, 24, "neo-global");
    CHECK(model->forward(ids64(kIds))->blocks()[0].layerWindows.empty());
    CHECK(notesOf(*model) == std::vector<std::string>{"no 1/√d scaling"});
    NeoSpec localFirst;
    localFirst.kinds = {"local", "global"};
    localFirst.window = 5;
    localFirst.writeLayers = false;
    requireMatches(makeNeo, referenceNeo, localFirst, 25, "neo-localfirst");
}

TEST_CASE("GPT-Neo: temperature inside the model and head masking equal the reference", "[gptneo]") {
    RefOptions o;
    o.temperature = 0.7;
    o.temperatureLayers = {1, 2};
    o.maskHeads = {{0, 3}, {1, 1}};
    requireMatches(makeNeo, referenceNeo, NeoSpec{}, 26, "neo-options", {}, o);
}

TEST_CASE("GPT-Neo: contradictory attention types and windows name the file and field", "[gptneo]") {
    NeoSpec spec;
    CHECK_THAT(loadError(makeNeo, spec, [](Checkpoint& c) { c.config["num_heads"] = 5; }),
               Catch::Contains("config.json: 'hidden_size' (32) must be divisible by num_heads (5)"));
    CHECK_THAT(loadError(makeNeo, spec, [](Checkpoint& c) { c.config["window_size"] = 65; }),
               Catch::Contains("'window_size' (65) is larger than max_position_embeddings (64)"));
    CHECK_THAT(loadError(makeNeo, spec, [](Checkpoint& c) { c.config["num_layers"] = 6; }),
               Catch::Contains("'attention_types' expands to 4 layers, but num_layers is 6"));
    CHECK_THAT(loadError(makeNeo, spec,
                         [](Checkpoint& c) {
                             c.config["attention_types"] = {{{"global", "sparse"}, 2}};
                             c.config.erase("attention_layers");
                         }),
               Catch::Contains("'attention_types' has 'sparse' for layer 1 (known: global, local)"));
    CHECK_THAT(loadError(makeNeo, spec, [](Checkpoint& c) { c.config["attention_layers"][2] = "local"; }),
               Catch::Contains("'attention_layers' says 'local' for layer 2 where attention_types says 'global'"));
    CHECK_THAT(loadError(makeNeo, spec, [](Checkpoint& c) { c.config["attention_types"] = "global"; }),
               Catch::Contains("'attention_types' must be a list of [[kinds...], repeat] pairs"));
    auto model = writeAndLoad(makeNeo(spec, 1), "neo-long");
    CHECK_THROWS_WITH(model->forward(std::vector<std::int64_t>(65, 1)),
                      Catch::Contains("65 tokens but the model has only 64 positions"));
}

// ---- Phi ------------------------------------------------------------------------------------

TEST_CASE("Phi: partial rotary, parallel block and the biased lm_head equal the reference", "[phi]") {
    PhiSpec spec;
    auto model = requireMatches(makePhi, referencePhi, spec, 31, "phi-f32");
    CHECK(model->info().family == "phi");
    CHECK(notesOf(*model) == std::vector<std::string>{"rotary on 50% of dims (4 of 8)", "parallel attention and MLP"});
}

TEST_CASE("Phi: BF16 and F16 shards without the model. prefix; qk_layernorm, kv groups, tied head", "[phi]") {
    PhiSpec spec;
    spec.prefix = false;
    requireMatches(makePhi, referencePhi, spec, 32, "phi-bf16", WriteOptions{"BF16", 3});
    requireMatches(makePhi, referencePhi, spec, 33, "phi-f16", WriteOptions{"F16", 2});
    PhiSpec variant;
    variant.qkNorm = true;
    variant.kvHeads = 2;
    variant.tied = true;
    variant.partial = 1.0;
    variant.theta = 2500.0;
    auto model = requireMatches(makePhi, referencePhi, variant, 34, "phi-variant");
    CHECK(notesOf(*model) == std::vector<std::string>{"rotary on all 8 dims", "parallel attention and MLP",
                                                      "q/k LayerNorm", "2 kv groups"});
    CHECK(model->info().kvHeads == 2);
}

TEST_CASE("Phi: temperature inside the model and head masking equal the reference", "[phi]") {
    PhiSpec spec;
    spec.qkNorm = true;
    RefOptions o;
    o.temperature = 4.0;
    o.maskHeads = {{0, 0}, {1, 3}};
    requireMatches(makePhi, referencePhi, spec, 35, "phi-options", {}, o);
}

TEST_CASE("Phi: bad configs name the file and field; long inputs are refused", "[phi]") {
    PhiSpec spec;
    CHECK_THAT(loadError(makePhi, spec, [](Checkpoint& c) { c.config["num_attention_heads"] = 3; }),
               Catch::Contains("config.json: 'hidden_size' (32) must be divisible by num_attention_heads (3)"));
    CHECK_THAT(loadError(makePhi, spec, [](Checkpoint& c) { c.config["num_key_value_heads"] = 3; }),
               Catch::Contains("'num_key_value_heads' (3) must divide num_attention_heads (4)"));
    CHECK_THAT(loadError(makePhi, spec, [](Checkpoint& c) { c.config["partial_rotary_factor"] = 0.4; }),
               Catch::Contains("'partial_rotary_factor' gives 3 rotary dimensions of head dim 8"));
    CHECK_THAT(
            loadError(makePhi, spec, [](Checkpoint& c) { c.config["qk_layernorm"] = true; }),
            Catch::Contains("self_attn.q_layernorm.weight' (or 'layers.0.self_attn.q_layernorm.weight') is missing"));
    auto model = writeAndLoad(makePhi(spec, 1), "phi-long");
    CHECK_THROWS_WITH(model->forward(std::vector<std::int64_t>(65, 1)),
                      Catch::Contains("65 tokens but the model has only 64 positions"));
}

}  // namespace test_gpt_neox_gptj_gpt_neo_phi
