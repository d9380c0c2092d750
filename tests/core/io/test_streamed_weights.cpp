// Streamed half-precision weights (issue 14): every decoder family gives the same Trace streamed
// as converted; a model over a small memory budget is streamed instead of refused; a cancelled
// forward leaves the model usable; Q and K captured in half precision give maps close to float's.
#include "attnscope/runtime/error.h"
#include "family_checks.h"
#include "fixtures_alibi.h"
#include "fixtures_gemma.h"
#include "fixtures_neox.h"

#include <cmath>
#include <functional>

namespace test_streamed_weights {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

const std::vector<long long> kIds = {3, 17, 0, 37, 22, 5, 5, 11, 30, 1, 9};  // < 40, every fixture's vocabulary

std::shared_ptr<const Model> loadWith(const std::filesystem::path& dir, WeightPlan plan, std::uint64_t budget = 0) {
    LoadOptions options;
    options.device = DeviceChoice::Cpu;
    options.weights = plan;
    options.memoryLimitBytes = budget;
    return Model::load(dir, options);
}

// Largest |a - b| over every map of every block, layer and head; the Traces must have the same
// blocks, tokens and shapes.
double maxTraceDiff(const Trace& a, const Trace& b, const MapOptions& options = {}) {
    REQUIRE(a.tokens() == b.tokens());
    REQUIRE(a.blocks().size() == b.blocks().size());
    double worst = 0;
    for (int blk = 0; blk < static_cast<int>(a.blocks().size()); ++blk) {
        const BlockInfo& x = a.blocks()[blk];
        const BlockInfo& y = b.blocks()[blk];
        REQUIRE(x.name == y.name);
        REQUIRE(x.layers == y.layers);
        REQUIRE(x.heads == y.heads);
        REQUIRE(x.layerWindows == y.layerWindows);
        for (int l = 0; l < x.layers; ++l)
            for (int h = 0; h < x.heads; ++h) {
                const HeadMap m = a.map(blk, l, h, options), n = b.map(blk, l, h, options);
                REQUIRE(m.values.size() == n.values.size());
                for (std::size_t i = 0; i < m.values.size(); ++i)
                    worst = std::max(worst, static_cast<double>(std::abs(m.values[i] - n.values[i])));
            }
    }
    return worst;
}

double maxVectorDiff(const std::vector<float>& a, const std::vector<float>& b) {
    REQUIRE(a.size() == b.size());
    double worst = 0;
    for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, static_cast<double>(std::abs(a[i] - b[i])));
    return worst;
}

struct FamilyCase {
    std::string name;
    std::function<Checkpoint()> make;
};

Checkpoint gpt2Generic(unsigned seed) {
    const Gpt2Checkpoint g = makeGpt2(Gpt2Spec{}, seed);
    Checkpoint c;
    c.config = {{"model_type", "gpt2"},
                {"vocab_size", g.spec.vocab},
                {"n_positions", g.spec.positions},
                {"n_embd", g.spec.embd},
                {"n_head", g.spec.heads},
                {"n_layer", g.spec.layers},
                {"layer_norm_epsilon", g.spec.eps},
                {"activation_function", g.spec.activation}};
    for (const auto& [name, t] : g.tensors) c.tensors["transformer." + name] = t;
    return c;
}

RmsFamilySpec rms(const std::string& type) {
    RmsFamilySpec s;
    s.type = type;
    if (type == "olmo2" || type == "phi3") s.tied = false;
    if (type == "gemma2") s.attnSoftcap = 1.5, s.finalSoftcap = 2.0, s.window = 3;
    return s;
}

std::vector<FamilyCase> decoderFamilies() {
    LlamaSpec mistral;
    mistral.type = "mistral";
    mistral.window = 4;
    LlamaSpec qwen2;
    qwen2.type = "qwen2";
    FalconSpec falconNew;
    falconNew.newArch = true;
    falconNew.heads = 8;
    falconNew.kvHeads = 2;
    OptSpec optUntied;
    optUntied.tied = false;
    return {
            {"gpt2", [] { return gpt2Generic(3); }},
            {"llama", [] { return makeLlama(LlamaSpec{}, 3); }},
            {"mistral", [=] { return makeLlama(mistral, 4); }},
            {"qwen2", [=] { return makeLlama(qwen2, 5); }},
            {"gpt_neox", [] { return makeNeox(NeoxSpec{}, 3); }},
            {"gptj", [] { return makeGptj(GptjSpec{}, 3); }},
            {"gpt_neo", [] { return makeNeo(NeoSpec{}, 3); }},
            {"phi", [] { return makePhi(PhiSpec{}, 3); }},
            {"opt", [=] { return makeOpt(optUntied, 3); }},
            {"bloom", [] { return makeBloom(BloomSpec{}, 3); }},
            {"falcon", [=] { return makeFalcon(falconNew, 3); }},
            {"gemma", [] { return makeRmsFamily(rms("gemma"), 3); }},
            {"gemma2", [] { return makeRmsFamily(rms("gemma2"), 3); }},
            {"gemma3_text", [] { return makeRmsFamily(rms("gemma3_text"), 3); }},
            {"qwen3", [] { return makeRmsFamily(rms("qwen3"), 3); }},
            {"olmo2", [] { return makeRmsFamily(rms("olmo2"), 3); }},
            {"phi3", [] { return makeRmsFamily(rms("phi3"), 3); }},
    };
}

}  // namespace

TEST_CASE("Every decoder family gives the same Trace streamed as converted", "[weights][streamed]") {
    for (const FamilyCase& f : decoderFamilies())
        for (const std::string dtype : {"BF16", "F16"}) {
            Checkpoint c = f.make();
            roundTensors(c, dtype);
            const auto dir = freshDir("streamed-" + f.name + "-" + dtype);
            writeCheckpoint(dir, c,
                            WriteOptions{dtype, 3});  // round-robin: some shard holds no embedding or head, only layers
            auto converted = loadWith(dir, WeightPlan::Convert);
            auto streamed = loadWith(dir, WeightPlan::Stream);
            INFO(f.name << " " << dtype << ": " << streamed->info().weights);
            CHECK(converted->info().weights == "converted to float32");
            CHECK_THAT(streamed->info().weights, Catch::StartsWith("streamed from " + dtype + " (one layer at a time"));
            CHECK(streamed->info().parameters == converted->info().parameters);
            const auto a = converted->forward(ids64(kIds));
            const auto b = streamed->forward(ids64(kIds));
            // The same float32 values reach the same kernels; only the head's row chunks may
            // round the logits differently.
            CHECK(maxTraceDiff(*a, *b) <= 2e-6);
            CHECK(maxVectorDiff(a->nextTokenLogits(), b->nextTokenLogits()) < 1e-4);
            // A second forward re-materialises every layer from the file: still the same.
            CHECK(maxTraceDiff(*a, *streamed->forward(ids64(kIds))) <= 2e-6);
        }
}

TEST_CASE("A model over a small memory budget is streamed instead of refused", "[weights][streamed]") {
    LlamaSpec spec;
    spec.layers = 6;  // six layers' matrices converted, against one layer's buffers streamed
    Checkpoint c = makeLlama(spec, 7);
    roundTensors(c, "BF16");
    const auto dir = freshDir("streamed-budget");
    writeCheckpoint(dir, c, WriteOptions{"BF16", 1});

    // Converted: 6 × 6912 matrix values + embedding and head + norms, ≈ 180 kB in float32;
    // streamed: one layer's 27.6 kB of buffers + the small tensors, ≈ 45 kB.
    const std::uint64_t budget = 100000;
    CHECK_THROWS_WITH(loadWith(dir, WeightPlan::Convert, budget),
                      Catch::Contains("loading the weights (float32) needs") && Catch::Contains("allowed"));
    auto model = loadWith(dir, WeightPlan::Auto, budget);
    CHECK_THAT(model->info().weights, Catch::StartsWith("streamed from BF16"));
    auto roomy = loadWith(dir, WeightPlan::Auto, 1ull << 30);
    CHECK(roomy->info().weights == "converted to float32");
    CHECK(maxTraceDiff(*model->forward(ids64(kIds)), *roomy->forward(ids64(kIds))) <= 2e-6);

    // Too small for either: refused, naming both needs.
    CHECK_THROWS_WITH(loadWith(dir, WeightPlan::Auto, 20000),
                      Catch::Contains("converted to float32 or") && Catch::Contains("streamed, 0.00 GiB allowed"));
    // F32 checkpoints have nothing to stream: Stream keeps them as they are.
    const auto f32 = freshDir("streamed-f32");
    writeCheckpoint(f32, makeLlama(spec, 7));
    CHECK(loadWith(f32, WeightPlan::Stream)->info().weights == "float32 from the file (mapped, no copy)");
}

TEST_CASE("A cancelled streamed forward leaves no Trace and the model usable", "[weights][streamed][cancel]") {
    LlamaSpec spec;
    spec.layers = 4;
    Checkpoint c = makeLlama(spec, 8);
    roundTensors(c, "BF16");
    const auto dir = freshDir("streamed-cancel");
    writeCheckpoint(dir, c, WriteOptions{"BF16", 1});
    auto model = loadWith(dir, WeightPlan::Stream);
    const auto before = model->forward(ids64(kIds));

    std::vector<long long> seen;
    RunOptions stopAtTwo;
    stopAtTwo.progress = [&](long long done, long long total) {
        seen.push_back(done);
        CHECK(total == spec.layers);
        return done < 2;  // stop after the second layer
    };
    std::shared_ptr<const Trace> half;
    CHECK_THROWS_AS(half = model->forward(ids64(kIds), stopAtTwo), Cancelled);
    CHECK(half == nullptr);
    CHECK(seen == std::vector<long long>{1, 2});
    // The buffers hold layer 1 now; the next forward starts again at layer 0 and gets it all right.
    CHECK(maxTraceDiff(*before, *model->forward(ids64(kIds))) <= 0.0);
}

TEST_CASE("--capture-dtype: Q and K kept in half precision give maps close to float32's", "[weights][capture]") {
    Checkpoint c = makeLlama(LlamaSpec{}, 9);
    const auto dir = freshDir("capture-dtype");
    writeCheckpoint(dir, c);
    auto model = loadWith(dir, WeightPlan::Auto);
    const auto full = model->forward(ids64(kIds));
    for (const auto [dtype, tolerance] :
         {std::pair{CaptureDtype::Float16, 2e-3}, std::pair{CaptureDtype::BFloat16, 2e-2}}) {
        RunOptions options;
        options.captureDtype = dtype;
        const auto small = model->forward(ids64(kIds), options);
        const double diff = maxTraceDiff(*full, *small);
        INFO("max |map(half capture) - map(float32 capture)| " << diff);
        CHECK(diff > 0);  // the capture really was rounded
        CHECK(diff < tolerance);
        // The model's outputs do not depend on how the capture is kept.
        CHECK(maxVectorDiff(full->nextTokenLogits(), small->nextTokenLogits()) == 0);
        // Maps at another temperature and rows still sum to 1 (computed in float32).
        MapOptions hot;
        hot.temperature = 3;
        const HeadMap m = small->map(0, 1, 2, hot);
        for (int r = 0; r < m.rows; ++r) {
            double sum = 0;
            for (int k = 0; k < m.cols; ++k) sum += m.at(r, k);
            CHECK(std::abs(sum - 1) < 1e-5);
        }
    }
}

}  // namespace test_streamed_weights
