// config.json of every family, through Model::load on a folder that holds only that file (the
// family dispatch by model_type, each family's config parser, RoPE scaling, id2label, ...). What
// follows the config (weights, tokenizer) is then missing, which is an attnscope::Error too.
#include "fuzz_util.h"

#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace attnscope;
    static const auto folder = [] {
        auto d = fuzz::scratch() / "model";
        std::filesystem::create_directories(d);
        return d;
    }();
    fuzz::writeBytes(folder / "config.json", fuzz::asView(data, size));
    try {
        LoadOptions options;
        options.device = DeviceChoice::Cpu;
        Model::load(folder, options);
    } catch (const Error&) {
    }
    return 0;
}
