// The mixture-of-experts decoders (mixtral, qwen2_moe, olmoe) against the independent
// double-precision reference in tests/support/reference_moe.cpp: every map, the next-token logits,
// the routers' probabilities and choices, in both expert layouts; streamed half-precision weights;
// a Mixtral-8x7B-shaped BF16 checkpoint opened streamed or refused naming the memory; bad configs.
#include "attnscope/attention/router_trace.h"
#include "attnscope/runtime/error.h"
#include "family_checks.h"
#include "fixtures_moe.h"

#include <cmath>
#include <fstream>
#include <functional>

namespace test_moe {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

const std::vector<long long> kIds = {3, 17, 0, 47, 22, 5, 5, 11, 30, 1, 9};

// Largest |router - reference| over the routed layers; dense layers must be NaN rows with -1
// choices, routed ones the reference's experts in its order.
double maxRouterDiff(const Trace& trace, const MoeReference& ref, const MoeFamilySpec& spec) {
    const RouterTrace& r = traceRouter(trace);
    REQUIRE(r.layers == spec.layers);
    REQUIRE(r.tokens == static_cast<int>(kIds.size()));
    REQUIRE(r.experts == spec.experts);
    REQUIRE(r.topK == spec.topK);
    double worst = 0;
    for (int l = 0; l < r.layers; ++l) {
        INFO("layer " << l);
        REQUIRE(r.routed(l) == moeRouted(spec, l));
        for (int i = 0; i < r.tokens; ++i) {
            for (int e = 0; e < r.experts; ++e) {
                if (!moeRouted(spec, l)) {
                    CHECK(std::isnan(r.probability(l, i, e)));
                    continue;
                }
                worst = std::max(worst, std::abs(r.probability(l, i, e) - ref.router[l][i][e]));
            }
            for (int k = 0; k < r.topK; ++k)
                CHECK(r.choice(l, i, k) == (moeRouted(spec, l) ? ref.chosen[l][i][k] : -1));
        }
    }
    return worst;
}

// Loads `c` (the per-expert checkpoint, or its fused form) and checks it against the reference of
// the per-expert weights.
std::shared_ptr<const Model> requireMoeMatches(const MoeFamilySpec& spec, unsigned seed, const std::string& name,
                                               bool fused, const WriteOptions& o = {}) {
    Checkpoint c = makeMoeFamily(spec, seed);
    roundTensors(c, o.dtype);
    auto model = writeAndLoad(fused ? fuseMoeExperts(c, spec) : c, name, o);
    auto trace = model->forward(ids64(kIds));
    const MoeReference ref = referenceMoeFamily(c, spec, kIds);
    const double mapDiff = maxMapDiff(*trace, ref.ref);
    const double logitDiff = maxLogitDiff(trace->nextTokenLogits(), ref.ref.logits);
    const double routerDiff = maxRouterDiff(*trace, ref, spec);
    INFO(name << ": max |map - ref| " << mapDiff << ", |logit - ref| " << logitDiff << ", |router - ref| "
              << routerDiff);
    CHECK(mapDiff < 1e-5);
    CHECK(logitDiff < 1e-4);
    CHECK(routerDiff < 1e-5);
    return model;
}

bool hasNote(const ModelInfo& info, const std::string& text) {
    return std::any_of(info.notes.begin(), info.notes.end(),
                       [&](const std::string& n) { return n.find(text) != std::string::npos; });
}

MoeFamilySpec family(const std::string& type) {
    MoeFamilySpec s;
    s.type = type;
    return s;
}

std::string moeLoadError(const MoeFamilySpec& spec, const std::function<void(Checkpoint&)>& edit) {
    Checkpoint c = makeMoeFamily(spec, 1);
    edit(c);
    return writeAndLoadError(c, "moe-bad");
}

}  // namespace

TEST_CASE("Mixtral: top-2 of 4 experts renormalised, sliding window smaller than the input, both layouts",
          "[moe][mixtral]") {
    MoeFamilySpec spec = family("mixtral");
    spec.window = 4;  // 11 tokens: the window cuts every row past the fourth
    spec.theta = 0;   // MixtralConfig's rope_theta 1e6
    for (const bool fused : {false, true}) {
        auto model = requireMoeMatches(spec, 31, fused ? "mixtral-fused" : "mixtral-hub", fused);
        CHECK(model->info().family == "mixtral");
        CHECK(hasNote(model->info(), "4 experts, top 2 renormalised"));
        CHECK(hasNote(model->info(), "sliding window 4 on every layer"));
        const auto trace = model->forward(ids64(kIds));
        CHECK(trace->blocks()[0].layerWindows == std::vector<std::int64_t>(3, 4));
        const HeadMap m = trace->map(0, 1, 2);
        CHECK(m.at(10, 6) == 0.0f);  // 10 - 6 = 4 keys back: outside W = 4
        CHECK(m.at(10, 7) > 0.0f);
    }
    // The window and the default theta change the maps: matching them is a test.
    MoeFamilySpec global = spec;
    global.window = 0;
    MoeFamilySpec otherTheta = spec;
    otherTheta.theta = 10000.0;
    const Checkpoint c = makeMoeFamily(spec, 31);
    const auto base = referenceMoeFamily(c, spec, kIds).ref;
    for (const MoeFamilySpec& edited : {global, otherTheta}) {
        const auto other = referenceMoeFamily(c, edited, kIds).ref;
        double worst = 0;
        for (std::size_t l = 0; l < base.probs.size(); ++l)
            for (std::size_t h = 0; h < base.probs[l].size(); ++h)
                for (std::size_t i = 0; i < base.probs[l][h].size(); ++i)
                    worst = std::max(worst, std::abs(base.probs[l][h][i] - other.probs[l][h][i]));
        CHECK(worst > 1e-3);
    }
    // Top-1 of 8, three layers, BF16 in two shards.
    spec.experts = 8;
    spec.topK = 1;
    requireMoeMatches(spec, 32, "mixtral-top1-bf16", false, WriteOptions{"BF16", 2});
}

TEST_CASE("Qwen2-MoE: shared expert with its sigmoid gate, dense layers from mlp_only_layers and decoder_sparse_step",
          "[moe][qwen2_moe]") {
    MoeFamilySpec spec = family("qwen2_moe");
    spec.layers = 4;
    spec.mlpOnly = {2};
    spec.experts = 6;
    spec.topK = 3;
    for (const bool fused : {false, true}) {
        auto model = requireMoeMatches(spec, 41, fused ? "qwen2moe-fused" : "qwen2moe-hub", fused);
        CHECK(hasNote(model->info(), "6 experts, top 3"));
        CHECK(!hasNote(model->info(), "renormalised"));
        CHECK(hasNote(model->info(), "shared expert with a sigmoid gate"));
        CHECK(hasNote(model->info(), "dense MLP on layers 2"));
    }
    spec.mlpOnly = {};
    spec.sparseStep = 2;  // layers 1 and 3 route, 0 and 2 are dense
    spec.normTopK = true;
    requireMoeMatches(spec, 42, "qwen2moe-step2", true);
    CHECK(!moeRouted(spec, 0));
    CHECK(moeRouted(spec, 3));
}

TEST_CASE("OLMoE: q/k norms over the whole projection, clip_qkv, norm_topk_prob, both layouts", "[moe][olmoe]") {
    MoeFamilySpec spec = family("olmoe");
    spec.experts = 8;
    spec.topK = 4;
    for (const bool fused : {false, true}) requireMoeMatches(spec, 51, fused ? "olmoe-fused" : "olmoe-hub", fused);
    spec.clipQkv = 0.8;  // clips: the projections reach past 1 on these weights
    spec.normTopK = true;
    spec.tied = true;
    auto model = requireMoeMatches(spec, 52, "olmoe-clip", false);
    CHECK(hasNote(model->info(), "q/k/v clipped to ±0.8"));
    CHECK(hasNote(model->info(), "8 experts, top 4 renormalised"));
    MoeFamilySpec unclipped = spec;
    unclipped.clipQkv = 0;
    const Checkpoint c = makeMoeFamily(spec, 52);
    const auto a = referenceMoeFamily(c, spec, kIds).ref.logits, b = referenceMoeFamily(c, unclipped, kIds).ref.logits;
    CHECK(maxLogitDiff(std::vector<float>(a.begin(), a.end()), b) > 1e-3);
}

TEST_CASE("MoE decoders: streamed half-precision weights give the converted Trace and routers", "[moe][streamed]") {
    for (const std::string type : {"mixtral", "qwen2_moe", "olmoe"})
        for (const bool fused : {false, true}) {
            MoeFamilySpec spec = family(type);
            if (type == "qwen2_moe") spec.mlpOnly = {1};
            Checkpoint c = makeMoeFamily(spec, 61);
            roundTensors(c, "BF16");
            const auto dir = freshDir("moe-streamed-" + type);
            writeCheckpoint(dir, fused ? fuseMoeExperts(c, spec) : c, WriteOptions{"BF16", 3});
            LoadOptions options;
            options.device = DeviceChoice::Cpu;
            options.weights = WeightPlan::Convert;
            const auto converted = Model::load(dir, options);
            options.weights = WeightPlan::Stream;
            const auto streamed = Model::load(dir, options);
            INFO(type << (fused ? " fused" : " per expert") << ": " << streamed->info().weights);
            CHECK_THAT(streamed->info().weights, Catch::StartsWith("streamed from BF16"));
            const auto a = converted->forward(ids64(kIds)), b = streamed->forward(ids64(kIds));
            CHECK(maxLogitDiff(b->nextTokenLogits(),
                               std::vector<double>(a->nextTokenLogits().begin(), a->nextTokenLogits().end())) < 1e-4);
            CHECK(traceRouter(*a).chosen == traceRouter(*b).chosen);
            const auto& pa = traceRouter(*a).probabilities;
            const auto& pb = traceRouter(*b).probabilities;
            REQUIRE(pa.size() == pb.size());
            for (std::size_t i = 0; i < pa.size(); ++i)
                if (!std::isnan(pa[i])) CHECK(std::abs(pa[i] - pb[i]) <= 1e-6);
        }
}

namespace {

// A header-only BF16 safetensors file of Mixtral-8x7B's shapes (32 layers, 8 experts of 14336,
// hidden 4096, 32 heads over 8 kv heads, vocabulary 32000): 93 GB declared, a sparse file on disk.
std::filesystem::path writeMixtral8x7bShape() {
    const auto dir = freshDir("mixtral-8x7b-shape");
    const std::int64_t D = 4096, I = 14336, V = 32000, KV = 1024;
    nlohmann::json header = nlohmann::json::object();
    std::uint64_t offset = 0;
    const auto add = [&](const std::string& name, std::vector<std::int64_t> shape) {
        std::uint64_t bytes = 2;
        for (std::int64_t s : shape) bytes *= static_cast<std::uint64_t>(s);
        header[name] = {{"dtype", "BF16"}, {"shape", shape}, {"data_offsets", {offset, offset + bytes}}};
        offset += bytes;
    };
    add("model.embed_tokens.weight", {V, D});
    for (int l = 0; l < 32; ++l) {
        const std::string p = "model.layers." + std::to_string(l) + ".";
        add(p + "input_layernorm.weight", {D});
        add(p + "post_attention_layernorm.weight", {D});
        add(p + "self_attn.q_proj.weight", {D, D});
        add(p + "self_attn.k_proj.weight", {KV, D});
        add(p + "self_attn.v_proj.weight", {KV, D});
        add(p + "self_attn.o_proj.weight", {D, D});
        add(p + "block_sparse_moe.gate.weight", {8, D});
        for (int e = 0; e < 8; ++e) {
            const std::string x = p + "block_sparse_moe.experts." + std::to_string(e) + ".";
            add(x + "w1.weight", {I, D});
            add(x + "w3.weight", {I, D});
            add(x + "w2.weight", {D, I});
        }
    }
    add("model.norm.weight", {D});
    add("lm_head.weight", {V, D});
    std::string text = header.dump();
    text.append((8 - text.size() % 8) % 8, ' ');
    {
        std::ofstream f(dir / "model.safetensors", std::ios::binary);
        const std::uint64_t size = text.size();
        for (int b = 0; b < 8; ++b) f.put(static_cast<char>((size >> (8 * b)) & 0xff));
        f << text;
    }
    std::filesystem::resize_file(dir / "model.safetensors", 8 + text.size() + offset);  // sparse: no data written
    writeText(dir / "config.json", nlohmann::json({{"model_type", "mixtral"},
                                                   {"vocab_size", V},
                                                   {"hidden_size", D},
                                                   {"intermediate_size", I},
                                                   {"num_hidden_layers", 32},
                                                   {"num_attention_heads", 32},
                                                   {"num_key_value_heads", 8},
                                                   {"torch_dtype", "bfloat16"}})
                                           .dump());
    return dir;
}

}  // namespace

TEST_CASE("A Mixtral-8x7B-shaped BF16 checkpoint opens streamed in 24 GiB and is refused in 4 naming the memory",
          "[moe][mixtral][streamed]") {
    const auto dir = writeMixtral8x7bShape();
    LoadOptions options;
    options.device = DeviceChoice::Cpu;
    options.memoryLimitBytes = 24ull << 30;
    const auto model = Model::load(dir, options);  // Auto: 174 GiB converted does not fit, one layer streamed does
    INFO(model->info().weights);
    CHECK_THAT(model->info().weights, Catch::StartsWith("streamed from BF16 (one layer at a time through a 5.4 GiB"));
    CHECK(model->info().parameters == 46702792704);  // Mixtral-8x7B's 46.7 B
    CHECK(hasNote(model->info(), "8 experts, top 2 renormalised"));
    options.memoryLimitBytes = 4ull << 30;
    CHECK_THROWS_WITH(Model::load(dir, options), Catch::Contains("loading the weights needs 174.0 GiB") &&
                                                         Catch::Contains("converted to float32 or 5.4 GiB") &&
                                                         Catch::Contains("streamed, 4.0 GiB allowed"));
}

TEST_CASE("MoE decoders: bad configs and missing experts name the file and the field", "[moe]") {
    CHECK_THAT(moeLoadError(family("mixtral"), [](Checkpoint& c) { c.config["num_experts_per_tok"] = 5; }),
               Catch::Contains("config.json: 'num_experts_per_tok' (5) exceeds num_local_experts (4)"));
    CHECK_THAT(moeLoadError(family("olmoe"), [](Checkpoint& c) { c.config["num_experts_per_tok"] = 0; }),
               Catch::Contains("config.json: 'num_experts_per_tok'"));
    CHECK_THAT(moeLoadError(family("qwen2_moe"), [](Checkpoint& c) { c.config["mlp_only_layers"] = "1"; }),
               Catch::Contains("config.json: 'mlp_only_layers' must be a list of layer indices"));
    CHECK_THAT(moeLoadError(family("qwen2_moe"),
                            [](Checkpoint& c) {
                                c.config["mlp_only_layers"] = {0, -1};
                            }),
               Catch::Contains("'mlp_only_layers' must hold non-negative layer indices, found -1"));
    CHECK_THAT(moeLoadError(family("qwen2_moe"), [](Checkpoint& c) { c.config["decoder_sparse_step"] = 0; }),
               Catch::Contains("config.json: 'decoder_sparse_step'"));
    CHECK_THAT(moeLoadError(family("qwen2_moe"), [](Checkpoint& c) { c.config["use_sliding_window"] = true; }),
               Catch::Contains("'use_sliding_window' is true"));
    CHECK_THAT(moeLoadError(family("olmoe"), [](Checkpoint& c) { c.config["clip_qkv"] = -1; }),
               Catch::Contains("config.json: 'clip_qkv'"));
    CHECK_THAT(moeLoadError(family("mixtral"), [](Checkpoint& c) { c.config["sliding_window"] = 65; }),
               Catch::Contains("'sliding_window' (65) is larger than max_position_embeddings (64)"));
    CHECK_THAT(
            moeLoadError(family("mixtral"),
                         [](Checkpoint& c) { c.tensors.erase("model.layers.1.block_sparse_moe.experts.3.w3.weight"); }),
            Catch::Contains("'model.layers.1.block_sparse_moe.experts.3.w3.weight'"));
    // A wrong fused shape is named with the shape it should have.
    MoeFamilySpec olmoe = family("olmoe");
    Checkpoint fused = fuseMoeExperts(makeMoeFamily(olmoe, 1), olmoe);
    fused.tensors["model.layers.0.mlp.experts.down_proj"].shape = {4, 40, 32};
    CHECK_THAT(writeAndLoadError(fused, "moe-bad-fused"), Catch::Contains("model.layers.0.mlp.experts.down_proj"));

    // num_experts 0: every layer dense, no routers.
    MoeFamilySpec qwen = family("qwen2_moe");
    qwen.mlpOnly = {0, 1, 2};
    Checkpoint noExperts = makeMoeFamily(qwen, 1);
    noExperts.config["num_experts"] = 0;
    const auto dense = writeAndLoad(noExperts, "qwen2moe-dense");
    CHECK(traceRouter(*dense->forward(ids64(kIds))).empty());
}

}  // namespace test_moe
