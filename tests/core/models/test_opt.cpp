// OPT against the independent double-precision reference in tests/support (reference_alibi.cpp).
#include "alibi_checks.h"

namespace test_opt {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

const std::vector<long long> kIds = {3, 17, 0, 47, 22, 5, 5, 11, 30, 1, 9};

void requireMatches(const OptSpec& spec, unsigned seed, const std::string& name, const WriteOptions& o = {},
                    const AlibiFamilyRun& run = {}) {
    const Checkpoint c = rounded(makeOpt(spec, seed), o.dtype);
    auto model = writeAndLoad(c, name, o);
    requireAgreement(agreement(*model, referenceOpt(c, spec, kIds, run), kIds, run), name);
}

std::string loadError(const OptSpec& spec, const std::function<void(Checkpoint&)>& edit) {
    Checkpoint c = makeOpt(spec, 1);
    edit(c);
    return writeAndLoadError(c, "opt-bad");
}

}  // namespace

TEST_CASE("OPT: pre-LN decoder, positions offset by 2, q scaled before the product", "[opt]") {
    OptSpec spec;
    requireMatches(spec, 21, "opt-preln");
    auto model = writeAndLoad(makeOpt(spec, 21), "opt-info");
    const ModelInfo& info = model->info();
    CHECK(info.family == "opt");
    CHECK(info.layers == 2);
    CHECK(info.heads == 4);
    CHECK(info.kvHeads == 4);
    CHECK(info.headDim == 8);
    CHECK(info.maxPositions == 64);  // the table has 66 rows: two before position 0
    CHECK(info.notes == std::vector<std::string>{"q scaled by 1/√d before q·k"});
    auto trace = model->forward(ids64(kIds));
    CHECK(trace->blocks()[0].causal);
    CHECK(trace->blocks()[0].layerWindows.empty());
}

TEST_CASE("OPT-350m layout: post-LN blocks, word_embed_proj_dim with project_in/out, no prefix", "[opt]") {
    OptSpec spec;
    spec.preNorm = false;  // OPT-350m: no final layer norm either
    spec.projDim = 24;
    spec.prefix = false;
    requireMatches(spec, 22, "opt-350m");
    auto model = writeAndLoad(makeOpt(spec, 22), "opt-350m-info");
    CHECK(model->info().notes == std::vector<std::string>{"q scaled by 1/√d before q·k",
                                                          "post-LN blocks (do_layer_norm_before false)",
                                                          "word embeddings 24 wide, projected to 32"});
    spec.preNorm = true;  // pre-LN with a projection (OPT-350m's dims, OPT's usual blocks)
    requireMatches(spec, 23, "opt-proj-preln");
}

TEST_CASE("OPT: enable_bias false, gelu, untied lm_head, no final norm, norms without affine", "[opt]") {
    OptSpec spec;
    spec.bias = false;
    spec.activation = "gelu";
    spec.tied = false;
    spec.removeFinalNorm = true;
    requireMatches(spec, 24, "opt-variants");
    OptSpec plain;
    plain.affine = false;
    plain.projDim = 16;
    plain.tied = false;
    requireMatches(plain, 25, "opt-noaffine");
}

TEST_CASE("OPT: F16 and BF16 checkpoints, sharded and single", "[opt]") {
    OptSpec spec;
    requireMatches(spec, 26, "opt-bf16", WriteOptions{"BF16", 3});
    spec.prefix = false;
    spec.projDim = 24;
    requireMatches(spec, 27, "opt-f16", WriteOptions{"F16", 1});
    auto model = writeAndLoad(rounded(makeOpt(spec, 27), "F16"), "opt-f16-info", WriteOptions{"F16", 2});
    CHECK(model->info().dtype == "F16");
}

TEST_CASE("OPT: temperature inside the model and head masking equal the reference's", "[opt]") {
    OptSpec spec;
    AlibiFamilyRun hot;
    hot.temperature = 2.5;
    requireMatches(spec, 28, "opt-hot", {}, hot);
    AlibiFamilyRun one;
    one.temperature = 0.4;
    one.temperatureLayers = {1};
    one.maskHeads = {{0, 2}, {1, 0}};
    requireMatches(spec, 28, "opt-masked", {}, one);
    spec.preNorm = false;
    requireMatches(spec, 29, "opt-350m-masked", {}, one);
}

TEST_CASE("OPT: bad configs and checkpoints name the file and the field", "[opt]") {
    OptSpec spec;
    CHECK_THAT(loadError(spec, [](Checkpoint& c) { c.config["num_attention_heads"] = 5; }),
               Catch::Contains("config.json: 'hidden_size' (32) must be divisible by num_attention_heads (5)"));
    CHECK_THAT(loadError(spec, [](Checkpoint& c) { c.config["activation_function"] = "swiglu"; }),
               Catch::Contains("'activation_function' 'swiglu' is not supported (relu, gelu,"));
    CHECK_THAT(loadError(spec, [](Checkpoint& c) { c.config["max_position_embeddings"] = 66; }),
               Catch::Contains("'model.decoder.embed_positions.weight' has shape [66, 32], the config needs [68, 32]"));
    CHECK_THAT(loadError(spec, [](Checkpoint& c) { c.config["word_embed_proj_dim"] = 16; }),
               Catch::Contains("'model.decoder.embed_tokens.weight' has shape [48, 32], the config needs [48, 16]"));
    OptSpec unbiased;
    unbiased.bias = false;
    CHECK_THAT(
            loadError(unbiased, [](Checkpoint& c) { c.config["enable_bias"] = true; }),
            Catch::Contains(
                    "tensor 'model.decoder.layers.0.self_attn.q_proj.bias' (or 'decoder.layers.0.self_attn.q_proj.bias') is missing"));
    CHECK_THAT(loadError(spec, [](Checkpoint& c) { c.config["tie_word_embeddings"] = false; }),
               Catch::Contains("lm_head.weight"));
    CHECK_THAT(loadError(spec, [](Checkpoint& c) { c.tensors.erase("model.decoder.layers.1.fc2.weight"); }),
               Catch::Contains("model.decoder.layers.1.fc2.weight"));
    CHECK_THAT(loadError(spec, [](Checkpoint& c) { c.config["do_layer_norm_before"] = "yes"; }),
               Catch::Contains("'do_layer_norm_before' must be true or false"));
    auto model = writeAndLoad(makeOpt(spec, 1), "opt-long");
    CHECK_THROWS_WITH(model->forward(std::vector<std::int64_t>(65, 1)),
                      Catch::Contains("65 tokens but the model has only 64 positions"));
    CHECK_NOTHROW(model->forward(std::vector<std::int64_t>(64, 1)));
}

}  // namespace test_opt
