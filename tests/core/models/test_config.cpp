// Model folder and config.json validation: every failure names the file and what is wrong.
#include "attnscope/runtime/error.h"
#include "attnscope/models/model.h"
#include "gpt2_fixture.h"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <fstream>
#include <functional>

namespace test_config {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

std::filesystem::path folderWithConfig(const std::string& name, const std::function<void(nlohmann::json&)>& edit) {
    const auto dir = freshDir(name);
    writeGpt2Folder(dir, makeGpt2(Gpt2Spec{}, 1));
    auto config = nlohmann::json::parse(std::ifstream(dir / "config.json"));
    edit(config);
    writeText(dir / "config.json", config.dump());
    return dir;
}

std::string loadError(const std::filesystem::path& dir) {
    try {
        Model::load(dir, LoadOptions{DeviceChoice::Cpu, {}});
    } catch (const Error& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace

TEST_CASE("a model folder must exist and hold config.json and model.safetensors", "[config]") {
    const auto dir = freshDir("folder");
    CHECK_THAT(loadError(dir / "missing"), Catch::Contains("no such model folder"));
    writeText(dir / "file.txt", "x");
    CHECK_THAT(loadError(dir / "file.txt"), Catch::Contains("not a folder"));
    CHECK_THAT(loadError(dir), Catch::Contains("no config.json in this folder"));
    writeText(
            dir / "config.json",
            "{\"model_type\": \"gpt2\", \"vocab_size\": 40, \"n_positions\": 24, \"n_embd\": 16, \"n_head\": 4, \"n_layer\": 2}");
    CHECK_THAT(loadError(dir), Catch::Contains("no model.safetensors or model.safetensors.index.json in this folder"));
}

TEST_CASE("config.json must be a JSON object with a known model_type", "[config]") {
    const auto dir = freshDir("json");
    writeGpt2Folder(dir, makeGpt2(Gpt2Spec{}, 1));
    writeText(dir / "config.json", "{\"model_type\": \"gpt2\",");
    CHECK_THAT(loadError(dir), Catch::Contains("config.json: not valid JSON"));
    writeText(dir / "config.json", "[1, 2]");
    CHECK_THAT(loadError(dir), Catch::Contains("config.json: expected a JSON object"));
    writeText(dir / "config.json", "{}");
    CHECK_THAT(loadError(dir), Catch::Contains("config.json: 'model_type' is missing"));
    writeText(dir / "config.json", "{\"model_type\": \"mamba\"}");
    const std::string unknown = loadError(dir);
    CHECK_THAT(unknown,
               Catch::Contains(
                       "model_type 'mamba' is not supported (supported: gpt2, bert, roberta, distilbert, modernbert, "
                       "deberta-v2, llama, "));
    for (const char* type : {"gpt_neox", "gptj", "gpt_neo", "phi", "vit", "opt", "bloom", "falcon", "RefinedWebModel",
                             "RefinedWeb", "attnscope-seq2seq", "attnscope-classifier)"})
        CHECK_THAT(unknown, Catch::Contains(std::string(" ") + type));
    CHECK_THAT(unknown, Catch::Contains(" gemma, gemma2, gemma3_text, qwen3, olmo2, phi3,"));
    CHECK_THAT(unknown, Catch::Contains(" phi3, mixtral, qwen2_moe, olmoe, opt,"));
    CHECK_THAT(unknown,
               Catch::Contains(
                       " vit, deit, dinov2, dinov2_with_registers, beit, swin, clip, siglip, t5, bart, mbart, marian, "
                       "attnscope-seq2seq, attnscope-classifier)"));
}

TEST_CASE("GPT-2 config fields are validated", "[config]") {
    CHECK_THAT(loadError(folderWithConfig("no-layer", [](auto& j) { j.erase("n_layer"); })),
               Catch::Contains("'n_layer' is missing"));
    CHECK_THAT(loadError(folderWithConfig("str-head", [](auto& j) { j["n_head"] = "4"; })),
               Catch::Contains("'n_head' must be an integer, found \"4\""));
    CHECK_THAT(loadError(folderWithConfig("zero-embd", [](auto& j) { j["n_embd"] = 0; })),
               Catch::Contains("'n_embd' must be between 1 and"));
    CHECK_THAT(loadError(folderWithConfig("indivisible", [](auto& j) { j["n_head"] = 3; })),
               Catch::Contains("'n_embd' (16) must be divisible by n_head (3)"));
    CHECK_THAT(loadError(folderWithConfig("act", [](auto& j) { j["activation_function"] = "swish"; })),
               Catch::Contains("'activation_function' 'swish' is not supported"));
    CHECK_THAT(loadError(folderWithConfig("eps", [](auto& j) { j["layer_norm_epsilon"] = -1; })),
               Catch::Contains("'layer_norm_epsilon' must be a positive number"));
}

TEST_CASE("every tensor shape is checked against the config before running", "[config]") {
    // The config says 3 layers but the checkpoint has 2: the first missing tensor is named.
    CHECK_THAT(loadError(folderWithConfig("layers", [](auto& j) { j["n_layer"] = 3; })),
               Catch::Contains("tensor 'transformer.h.2.ln_1.weight' (or 'h.2.ln_1.weight') is missing"));
    CHECK_THAT(loadError(folderWithConfig("vocab", [](auto& j) { j["vocab_size"] = 41; })),
               Catch::Contains("tensor 'transformer.wte.weight' has shape [40, 16], the config needs [41, 16]"));
    CHECK_THAT(
            loadError(folderWithConfig("inner", [](auto& j) { j["n_inner"] = 32; })),
            Catch::Contains("tensor 'transformer.h.0.mlp.c_fc.weight' has shape [16, 64], the config needs [16, 32]"));
}

}  // namespace test_config
