// model.safetensors.index.json: a tiny GPT-2 split into two real shards sits in the folder and
// the input is its index ({"weight_map": {tensor: shard}}), read by Model::load's weight store.
#include "fuzz_util.h"

#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"
#include "family_fixtures.h"
#include "gpt2_fixture.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace attnscope;
    static const auto folder = [] {
        auto d = fuzz::scratch() / "sharded";
        testing::Gpt2Spec spec;
        spec.vocabJson = false;
        const auto g = testing::makeGpt2(spec, 1);
        testing::Checkpoint c;
        c.config = {{"model_type", "gpt2"}, {"vocab_size", spec.vocab}, {"n_positions", spec.positions},
                    {"n_embd", spec.embd},  {"n_head", spec.heads},     {"n_layer", spec.layers}};
        for (const auto& [name, t] : g.tensors) c.tensors["transformer." + name] = t;
        testing::writeCheckpoint(d, c, testing::WriteOptions{"F32", 2});
        return d;
    }();
    fuzz::writeBytes(folder / "model.safetensors.index.json", fuzz::asView(data, size));
    try {
        LoadOptions options;
        options.device = DeviceChoice::Cpu;
        Model::load(folder, options);
    } catch (const Error&) {
    }
    return 0;
}
