// Falcon (multi-query, new_decoder_architecture, per-head layouts; rotary or ALiBi) against the
// independent double-precision reference in tests/support (reference_alibi.cpp).
#include "alibi_checks.h"

namespace test_falcon {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

const std::vector<long long> kIds = {3, 17, 0, 47, 22, 5, 5, 11, 30, 1, 9, 40};

void requireMatches(const FalconSpec& spec, unsigned seed, const std::string& name, const WriteOptions& o = {},
                    const AlibiFamilyRun& run = {}) {
    const Checkpoint c = rounded(makeFalcon(spec, seed), o.dtype);
    auto model = writeAndLoad(c, name, o);
    requireAgreement(agreement(*model, referenceFalcon(c, spec, kIds, run), kIds, run), name);
}

std::string loadError(const FalconSpec& spec, const std::function<void(Checkpoint&)>& edit) {
    Checkpoint c = makeFalcon(spec, 1);
    edit(c);
    return writeAndLoadError(c, "falcon-bad");
}

// Falcon-40B's shape in small: 8 query heads in 2 kv groups, ln_attn and ln_mlp.
FalconSpec grouped() {
    FalconSpec s;
    s.heads = 8;
    s.kvHeads = 2;
    s.newArch = true;
    return s;
}

// Falcon-RW's shape: ALiBi, per-head fused qkv, sequential blocks, biases; 6 heads.
FalconSpec refinedWeb() {
    FalconSpec s;
    s.hidden = 36;
    s.heads = 6;
    s.alibi = true;
    s.multiQuery = false;
    s.parallel = false;
    s.bias = true;
    return s;
}

}  // namespace

TEST_CASE("Falcon-7B layout: multi-query, rotary, parallel attention and MLP", "[falcon]") {
    FalconSpec spec;
    requireMatches(spec, 41, "falcon-mq");
    auto model = writeAndLoad(makeFalcon(spec, 41), "falcon-mq-info");
    const ModelInfo& info = model->info();
    CHECK(info.family == "falcon");
    CHECK(info.heads == 4);
    CHECK(info.kvHeads == 1);
    CHECK(info.maxPositions == 64);
    CHECK(info.notes == std::vector<std::string>{"rotary", "multi-query (one kv head)", "parallel attention and MLP"});
    auto trace = model->forward(ids64(kIds));
    CHECK(trace->blocks()[0].kvHeads == 1);
    CHECK(trace->blocks()[0].kvGroup(3) == 0);
    // Plain logits: the lab's linear variant applies.
    MapOptions linear;
    linear.variant = MapVariant::Linear;
    CHECK(trace->map(0, 1, 2, linear).rows == static_cast<int>(kIds.size()));
}

TEST_CASE("Falcon-40B layout: new_decoder_architecture, grouped kv, ln_attn / ln_mlp", "[falcon]") {
    requireMatches(grouped(), 42, "falcon-40b");
    auto model = writeAndLoad(makeFalcon(grouped(), 42), "falcon-40b-info");
    CHECK(model->info().kvHeads == 2);
    CHECK(model->info().notes == std::vector<std::string>{"rotary", "2 kv groups", "parallel attention and MLP"});
    auto trace = model->forward(ids64(kIds));
    CHECK(trace->blocks()[0].kvGroup(3) == 0);
    CHECK(trace->blocks()[0].kvGroup(4) == 1);
    FalconSpec oneNorm = grouped();  // Falcon2-11B: num_ln_in_parallel_attn 1, one input_layernorm
    oneNorm.normsInParallel = 1;
    oneNorm.kvHeads = 4;
    oneNorm.theta = 500000.0;
    requireMatches(oneNorm, 43, "falcon2");
    FalconSpec explicitTwo = grouped();  // the default written out; multi_query is ignored there
    explicitTwo.normsInParallel = 2;
    explicitTwo.multiQuery = false;
    explicitTwo.bias = true;
    requireMatches(explicitTwo, 44, "falcon-40b-bias");
}

TEST_CASE("Falcon-RW layout: ALiBi with bfloat16 slopes, per-head qkv, sequential blocks", "[falcon]") {
    requireMatches(refinedWeb(), 45, "falcon-rw");
    auto model = writeAndLoad(makeFalcon(refinedWeb(), 45), "falcon-rw-info");
    CHECK(model->info().notes == std::vector<std::string>{"ALiBi"});
    CHECK(model->info().kvHeads == 6);
    FalconSpec twelve = refinedWeb();  // 12 heads: slopes 2^(-k/2) that bfloat16 rounds
    twelve.heads = 12;
    twelve.hidden = 48;
    requireMatches(twelve, 46, "falcon-rw-12");
    FalconSpec alibiGrouped = grouped();  // ALiBi on the new architecture (Hugging Face tests it)
    alibiGrouped.alibi = true;
    requireMatches(alibiGrouped, 47, "falcon-alibi-grouped");
    FalconSpec alibiMq;
    alibiMq.alibi = true;
    alibiMq.heads = 6;
    alibiMq.hidden = 36;
    alibiMq.activation = "relu";
    alibiMq.inner = 50;
    alibiMq.tied = false;
    requireMatches(alibiMq, 48, "falcon-alibi-mq");
}

TEST_CASE("Falcon: F16 and BF16 checkpoints, sharded and single, with and without the prefix", "[falcon]") {
    requireMatches(grouped(), 49, "falcon-bf16", WriteOptions{"BF16", 3});
    FalconSpec rw = refinedWeb();
    rw.prefix = false;
    requireMatches(rw, 50, "falcon-rw-f16", WriteOptions{"F16", 2});
    FalconSpec mq;
    mq.prefix = false;
    requireMatches(mq, 51, "falcon-mq-f16", WriteOptions{"F16", 1});
}

TEST_CASE("Falcon: temperature inside the model and head masking, rotary and ALiBi", "[falcon]") {
    AlibiFamilyRun hot;
    hot.temperature = 2.0;
    requireMatches(FalconSpec{}, 52, "falcon-hot", {}, hot);
    AlibiFamilyRun some;
    some.temperature = 0.6;
    some.temperatureLayers = {1};
    some.maskHeads = {{0, 1}, {1, 5}};
    requireMatches(refinedWeb(), 53, "falcon-rw-masked", {}, some);
    some.maskHeads = {{0, 7}};
    requireMatches(grouped(), 54, "falcon-40b-masked", {}, some);
}

TEST_CASE("Falcon with ALiBi: linear attention has no place for it", "[falcon]") {
    auto model = writeAndLoad(makeFalcon(refinedWeb(), 55), "falcon-linear");
    auto trace = model->forward(ids64(kIds));
    MapOptions linear;
    linear.variant = MapVariant::Linear;
    CHECK_THROWS_WITH(trace->map(0, 0, 3, linear),
                      Catch::Contains("linear attention has no place for ALiBi (layer 0 of block 'self' uses it)"));
}

TEST_CASE("Falcon: legacy RefinedWeb / RefinedWebModel configs", "[falcon]") {
    FalconSpec legacy = grouped();  // RefinedWeb: n_head, n_layer, n_head_kv, implied new architecture
    legacy.type = "RefinedWeb";
    legacy.legacyKeys = true;
    requireMatches(legacy, 56, "falcon-refinedweb");
    FalconSpec model7b;  // RefinedWebModel: Falcon-7B's original type
    model7b.type = "RefinedWebModel";
    model7b.legacyKeys = true;
    requireMatches(model7b, 57, "falcon-refinedwebmodel");
}

TEST_CASE("Falcon: contradicting configs and missing tensors name the file and the field", "[falcon]") {
    CHECK_THAT(loadError(grouped(), [](Checkpoint& c) { c.config["num_kv_heads"] = 3; }),
               Catch::Contains("config.json: 'num_kv_heads' (3) must divide num_attention_heads (8)"));
    CHECK_THAT(
            loadError(refinedWeb(), [](Checkpoint& c) { c.config["num_kv_heads"] = 2; }),
            Catch::Contains(
                    "'num_kv_heads' (2) must equal num_attention_heads (6) without multi_query or new_decoder_architecture"));
    CHECK_THAT(
            loadError(grouped(), [](Checkpoint& c) { c.config["parallel_attn"] = false; }),
            Catch::Contains(
                    "'parallel_attn' is false, but new_decoder_architecture runs attention and MLP in parallel only"));
    CHECK_THAT(loadError(FalconSpec{}, [](Checkpoint& c) { c.config["num_ln_in_parallel_attn"] = 2; }),
               Catch::Contains("'num_ln_in_parallel_attn' is 2, which Falcon uses only with new_decoder_architecture"));
    CHECK_THAT(loadError(grouped(), [](Checkpoint& c) { c.config["num_ln_in_parallel_attn"] = 3; }),
               Catch::Contains("'num_ln_in_parallel_attn' must be 1 or 2, found 3"));
    CHECK_THAT(loadError(FalconSpec{}, [](Checkpoint& c) { c.config["num_attention_heads"] = 6; }),
               Catch::Contains("'hidden_size' (32) must be divisible by num_attention_heads (6)"));
    CHECK_THAT(
            loadError(FalconSpec{},
                      [](Checkpoint& c) { c.tensors.erase("transformer.h.0.self_attention.query_key_value.weight"); }),
            Catch::Contains(
                    "tensor 'transformer.h.0.self_attention.query_key_value.weight' (or 'h.0.self_attention.query_key_value.weight') is missing"));
    // The multi-query checkpoint read as the new architecture: its ln_attn is not there.
    CHECK_THAT(loadError(FalconSpec{}, [](Checkpoint& c) { c.config["new_decoder_architecture"] = true; }),
               Catch::Contains("'transformer.h.0.ln_attn.weight'"));
    CHECK_THAT(
            loadError(FalconSpec{}, [](Checkpoint& c) { c.config["multi_query"] = false; }),
            Catch::Contains(
                    "'transformer.h.0.self_attention.query_key_value.weight' has shape [48, 32], the config needs [96, 32]"));
    CHECK_THAT(loadError(FalconSpec{}, [](Checkpoint& c) { c.config["activation"] = "swiglu"; }),
               Catch::Contains("'activation' 'swiglu' is not supported"));
    CHECK_THAT(loadError(FalconSpec{},
                         [](Checkpoint& c) {
                             c.config["rope_scaling"] = {{"rope_type", "su"}, {"factor", 2.0}};
                         }),
               Catch::Contains("'rope_scaling' type 'su' is not supported"));
    auto model = writeAndLoad(makeFalcon(refinedWeb(), 1), "falcon-long");
    CHECK_THROWS_WITH(model->forward(std::vector<std::int64_t>(65, 1)),
                      Catch::Contains("65 tokens but the model has only 64 positions"));
}

}  // namespace test_falcon
