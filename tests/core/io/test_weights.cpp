// Checkpoint layouts shared by every family: sharded indexes, F16/BF16 for GPT-2, memory checks.
#include "attnscope/runtime/error.h"
#include "attnscope/io/safetensors.h"
#include "family_checks.h"
#include "reference_gpt2.h"

#include <fstream>

namespace test_weights {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

// The GPT-2 fixture as a generic checkpoint ("transformer." names), to write it sharded.
Checkpoint gpt2Checkpoint(const Gpt2Checkpoint& g) {
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

// A two-shard Llama folder, and its index as JSON to edit.
std::filesystem::path shardedFolder(nlohmann::json& index) {
    const auto dir = freshDir("shards");
    writeCheckpoint(dir, makeLlama(LlamaSpec{}, 1), WriteOptions{"F32", 2});
    std::ifstream in(dir / "model.safetensors.index.json");
    in >> index;
    return dir;
}

}  // namespace

TEST_CASE("GPT-2 from shards and in F16/BF16 equals the reference", "[weights][gpt2]") {
    for (const std::string dtype : {"F32", "F16", "BF16"}) {
        Gpt2Spec spec;
        spec.dtype = dtype;  // makeGpt2 rounds the values to the dtype
        const auto g = makeGpt2(spec, 21);
        auto model = writeAndLoad(gpt2Checkpoint(g), "gpt2-shards-" + dtype, WriteOptions{dtype, 3});
        CHECK(model->info().dtype == dtype);
        const std::vector<long long> ids = {1, 5, 9, 2, 33};
        auto trace = model->forward(ids64(ids));
        const auto ref = referenceGpt2(g, ids);
        double worst = 0;
        for (int l = 0; l < spec.layers; ++l)
            for (int h = 0; h < spec.heads; ++h) {
                const HeadMap m = trace->map(0, l, h);
                for (std::size_t i = 0; i < m.values.size(); ++i)
                    worst = std::max(worst, std::abs(m.values[i] - ref.probs[l][h][i]));
            }
        INFO(dtype << ": max |map - reference| " << worst);
        CHECK(worst < 2e-6);
    }
}

TEST_CASE("Shard indexes: every inconsistency is an error naming the index and the tensor", "[weights]") {
    nlohmann::json index;
    const auto dir = shardedFolder(index);
    const auto file = dir / "model.safetensors.index.json";
    const std::string first = "model-00001-of-00002.safetensors", second = "model-00002-of-00002.safetensors";
    REQUIRE(loadCpu(dir)->info().family == "llama");

    SECTION("a shard that is not a plain file name") {
        index["weight_map"]["model.norm.weight"] = "../" + first;
        writeText(file, index.dump());
        CHECK_THAT(loadErrorAt(dir),
                   Catch::Contains("shard '../" + first + "' must be a plain file name in the model folder"));
    }
    SECTION("a missing shard") {
        std::filesystem::remove(dir / second);
        CHECK_THAT(loadErrorAt(dir), Catch::Contains("model.safetensors.index.json: shard '" + second + "'") &&
                                             Catch::Contains("is missing from the folder"));
    }
    SECTION("a tensor listed twice") {
        std::string text = index.dump();
        text.insert(text.find("\"weight_map\":{") + 14, "\"model.norm.weight\":\"" + first + "\",");
        writeText(file, text);
        CHECK_THAT(loadErrorAt(dir), Catch::Contains("tensor 'model.norm.weight' is listed twice in weight_map"));
    }
    SECTION("a tensor in another shard than the index says") {
        const std::string where = index["weight_map"]["model.norm.weight"];
        index["weight_map"]["model.norm.weight"] = where == first ? second : first;
        writeText(file, index.dump());
        CHECK_THAT(loadErrorAt(dir),
                   Catch::Contains("tensor 'model.norm.weight' is in shard '" + where + "' but weight_map says"));
    }
    SECTION("a tensor in no shard") {
        index["weight_map"]["model.extra.weight"] = first;
        writeText(file, index.dump());
        CHECK_THAT(loadErrorAt(dir),
                   Catch::Contains("tensor 'model.extra.weight' is not in its shard '" + first + "'"));
    }
    SECTION("a tensor in two shards") {
        // copy.safetensors also holds model.norm.weight, and the index points there.
        TensorBytes norm{"model.norm.weight", DType::F32, {32}, std::vector<std::byte>(32 * sizeof(float))};
        writeSafetensors(dir / "copy.safetensors", {norm});
        const std::string original = index["weight_map"]["model.norm.weight"];
        index["weight_map"]["model.norm.weight"] = "copy.safetensors";
        writeText(file, index.dump());
        CHECK_THAT(loadErrorAt(dir),
                   Catch::Contains("tensor 'model.norm.weight' is in two shards, 'copy.safetensors' and '" + original +
                                   "'"));
    }
    SECTION("no weight_map") {
        writeText(file, R"({"metadata": {}})");
        CHECK_THAT(loadErrorAt(dir), Catch::Contains("'weight_map' must be a non-empty object"));
    }
    SECTION("no weights at all") {
        std::filesystem::remove(file);
        CHECK_THAT(loadErrorAt(dir),
                   Catch::Contains("no model.safetensors or model.safetensors.index.json in this folder"));
    }
}

TEST_CASE("A model that does not fit the memory limit is refused before loading", "[weights]") {
    const auto dir = freshDir("memory");
    writeCheckpoint(dir, makeLlama(LlamaSpec{}, 2));
    LoadOptions options;
    options.device = DeviceChoice::Cpu;
    options.memoryLimitBytes = 1000;
    CHECK_THROWS_WITH(Model::load(dir, options),
                      Catch::Contains("loading the weights (float32) needs 0.00 GiB on cpu, 0.00 GiB allowed"));
    options.memoryLimitBytes = 1ull << 30;
    CHECK(Model::load(dir, options)->info().family == "llama");
}

}  // namespace test_weights
