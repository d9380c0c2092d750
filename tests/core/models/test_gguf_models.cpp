// GGUF models (issue 39): files the test support converts from Hugging Face checkpoints as
// llama.cpp does (gguf_writer.h) give the maps and logits of the independent references run on
// the weights the file holds, dequantised in float32: every supported quantisation, llama's Q/K
// permutation undone, Gemma's stored +1, a missing output.weight tied to token_embd, the
// families' GGUF names, streamed layer by layer as converted.
#include "attnscope/runtime/error.h"
#include "family_checks.h"
#include "fixtures_gemma.h"
#include "gguf_writer.h"

#include <cmath>

namespace test_gguf_models {

using namespace attnscope;
using namespace attnscope::testing;
namespace fs = std::filesystem;

namespace {

const std::vector<long long> kIds = {3, 17, 0, 47, 22, 5, 5, 11, 30, 1, 9};

fs::path writeGguf(const GgufBuilder& g, const std::string& name) {
    const fs::path file = freshDir(name) / "model.gguf";
    g.write(file);
    return file;
}

std::shared_ptr<const Model> loadWith(const fs::path& path, WeightPlan plan) {
    LoadOptions options;
    options.device = DeviceChoice::Cpu;
    options.weights = plan;
    return Model::load(path, options);
}

double maxTraceDiff(const Trace& a, const Trace& b) {
    double worst = 0;
    const BlockInfo& x = a.blocks().at(0);
    REQUIRE(b.blocks().at(0).layers == x.layers);
    for (int l = 0; l < x.layers; ++l)
        for (int h = 0; h < x.heads; ++h) {
            const HeadMap m = a.map(0, l, h), n = b.map(0, l, h);
            REQUIRE(m.values.size() == n.values.size());
            for (std::size_t i = 0; i < m.values.size(); ++i)
                worst = std::max(worst, static_cast<double>(std::abs(m.values[i] - n.values[i])));
        }
    return worst;
}

// A Hugging Face family checkpoint through GGUF (F32) against its reference.
void requireRoundTrip(const RmsFamilySpec& spec, const std::string& arch, unsigned seed) {
    const Checkpoint c = makeRmsFamily(spec, seed);
    const auto model = loadCpu(writeGguf(ggufFromCheckpoint(c, arch, Ggml::F32), "gguf_" + arch));
    const auto trace = model->forward(ids64(kIds));
    const Reference ref = referenceRmsFamily(c, spec, kIds);
    INFO(arch << ": map " << maxMapDiff(*trace, ref) << ", logits "
              << maxLogitDiff(trace->nextTokenLogits(), ref.logits));
    CHECK(maxMapDiff(*trace, ref) < 1e-5);
    CHECK(maxLogitDiff(trace->nextTokenLogits(), ref.logits) < 1e-4);
    CHECK(model->info().family == spec.type);
}

}  // namespace

TEST_CASE("GGUF: every supported quantisation gives the maps of its own weights dequantised in float32",
          "[gguf][quant]") {
    LlamaSpec spec;
    spec.hidden = 256;  // rows of whole 256-value K-quant blocks
    spec.inner = 256;
    spec.heads = 4;
    spec.kvHeads = 2;
    const Checkpoint c = makeLlama(spec, 11);
    for (Ggml type : {Ggml::F16, Ggml::BF16, Ggml::Q8_0, Ggml::Q4_0, Ggml::Q4_K, Ggml::Q5_K, Ggml::Q6_K}) {
        INFO(ggmlName(type));
        const fs::path file = writeGguf(ggufFromCheckpoint(c, "llama", type), std::string("gguf_q_") + ggmlName(type));
        const Checkpoint dq = dequantisedCheckpoint(c, type);
        const Reference ref = referenceLlama(dq, spec, kIds);
        const auto converted = loadWith(file, WeightPlan::Convert);
        const auto trace = converted->forward(ids64(kIds));
        CHECK(maxMapDiff(*trace, ref) < 2e-4);
        CHECK(maxLogitDiff(trace->nextTokenLogits(), ref.logits) < 1e-3);
        CHECK(converted->info().dtype.find(ggmlName(type)) != std::string::npos);  // with the norms' F32
        // The same model from a safetensors folder of those float32 weights.
        const auto folder = writeAndLoad(dq, std::string("gguf_dq_") + ggmlName(type));
        CHECK(maxTraceDiff(*trace, *folder->forward(ids64(kIds))) < 2e-4);
        // Streamed one layer at a time: the same Trace.
        const auto streamed = loadWith(file, WeightPlan::Stream);
        CHECK(streamed->info().weights.find("streamed from") == 0);
        CHECK(maxTraceDiff(*trace, *streamed->forward(ids64(kIds))) < 1e-6);
    }
}

TEST_CASE("GGUF: llama's Q/K row permutation is undone (weights and biases)", "[gguf][llama]") {
    LlamaSpec spec;
    spec.qkvBias = true;
    const Checkpoint c = makeLlama(spec, 5);
    const auto model = loadCpu(writeGguf(ggufFromCheckpoint(c, "llama", Ggml::F32), "gguf_llama_perm"));
    const auto trace = model->forward(ids64(kIds));
    const Reference ref = referenceLlama(c, spec, kIds);
    CHECK(maxMapDiff(*trace, ref) < 1e-5);
    CHECK(maxLogitDiff(trace->nextTokenLogits(), ref.logits) < 1e-4);
    CHECK(model->info().notes.at(0).find("llama.cpp's Q/K row order undone") != std::string::npos);
    // The safetensors model of the same weights: the round trip changes nothing.
    CHECK(maxTraceDiff(*trace, *writeAndLoad(c, "gguf_llama_perm_st")->forward(ids64(kIds))) < 1e-5);

    // qwen2 is stored in Hugging Face's order: nothing is permuted.
    LlamaSpec qwen = spec;
    qwen.type = "qwen2";
    const Checkpoint q = makeLlama(qwen, 6);
    const auto qm = loadCpu(writeGguf(ggufFromCheckpoint(q, "qwen2", Ggml::F32), "gguf_qwen2"));
    CHECK(maxMapDiff(*qm->forward(ids64(kIds)), referenceLlama(q, qwen, kIds)) < 1e-5);
}

TEST_CASE("GGUF: without output.weight the head is token_embd", "[gguf][llama]") {
    LlamaSpec spec;
    spec.tied = true;
    const Checkpoint c = makeLlama(spec, 8);
    REQUIRE_FALSE(c.tensors.count("lm_head.weight"));
    const auto model = loadCpu(writeGguf(ggufFromCheckpoint(c, "llama", Ggml::F32), "gguf_tied"));
    const auto trace = model->forward(ids64(kIds));
    CHECK(maxLogitDiff(trace->nextTokenLogits(), referenceLlama(c, spec, kIds).logits) < 1e-4);
}

TEST_CASE("GGUF: Gemma's norms carry the +1; gemma2, gemma3, qwen3 and phi3 read their GGUF names", "[gguf][gemma]") {
    RmsFamilySpec gemma;  // tied: its GGUF has no output.weight
    requireRoundTrip(gemma, "gemma", 21);
    RmsFamilySpec gemma2;
    gemma2.type = "gemma2";
    gemma2.queryPreAttnScalar = gemma2.headDim;  // llama.cpp's scale for all but the 27B
    gemma2.attnSoftcap = 50;
    gemma2.finalSoftcap = 30;
    gemma2.window = 4;
    requireRoundTrip(gemma2, "gemma2", 22);
    RmsFamilySpec gemma3;
    gemma3.type = "gemma3_text";
    gemma3.queryPreAttnScalar = gemma3.headDim;
    gemma3.window = 4;
    gemma3.layers = 7;  // one global layer (6)
    requireRoundTrip(gemma3, "gemma3", 23);
    RmsFamilySpec qwen3;
    qwen3.type = "qwen3";
    qwen3.tied = false;
    requireRoundTrip(qwen3, "qwen3", 24);
    RmsFamilySpec phi3;
    phi3.type = "phi3";
    phi3.tied = false;
    requireRoundTrip(phi3, "phi3", 25);
}

TEST_CASE("GGUF: another architecture, or a tensor type outside the supported ones, is refused by name",
          "[gguf][reliability]") {
    const Checkpoint c = makeLlama(LlamaSpec{}, 3);
    GgufBuilder g = ggufFromCheckpoint(c, "llama", Ggml::F32);
    g.str("general.architecture", "mamba");  // a second key: refused as a duplicate, so rebuild
    CHECK_THROWS_WITH(loadCpu(writeGguf(g, "gguf_dup")),
                      Catch::Contains("metadata key 'general.architecture' appears twice"));

    GgufBuilder other;
    other.str("general.architecture", "mamba");
    const fs::path file = writeGguf(other, "gguf_mamba");
    CHECK_THROWS_WITH(loadCpu(file), file.string() + ": general.architecture 'mamba' is not supported (supported: "
                                                     "gemma, gemma2, gemma3, llama, phi3, qwen2, qwen3)");

    LlamaSpec spec;
    spec.hidden = 256;
    spec.inner = 256;
    const Checkpoint big = makeLlama(spec, 4);
    GgufBuilder q = ggufFromCheckpoint(big, "llama", Ggml::F32);
    q.rawTensor("blk.0.extra.weight", {256, 1}, 10, std::vector<std::uint8_t>(84));  // unused: harmless
    CHECK_NOTHROW(loadCpu(writeGguf(q, "gguf_extra")));
    Checkpoint renamed = big;
    renamed.tensors.erase("model.layers.1.mlp.down_proj.weight");
    GgufBuilder r = ggufFromCheckpoint(renamed, "llama", Ggml::F32);
    r.rawTensor("blk.1.ffn_down.weight", {256, 256}, 10, std::vector<std::uint8_t>(84 * 256));  // Q2_K
    const fs::path q2 = writeGguf(r, "gguf_q2");
    CHECK_THROWS_WITH(loadCpu(q2),
                      Catch::Contains(q2.string() + ": tensor 'blk.1.ffn_down.weight' is Q2_K; AttnScope "
                                                    "reads F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q5_K and Q6_K"));
}

}  // namespace test_gguf_models
