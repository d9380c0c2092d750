#include "attnscope/error.h"
#include "device.h"
#include "families.h"
#include "torch_errors.h"

namespace attnscope {

Model::~Model() = default;

std::shared_ptr<const Model> Model::load(const std::filesystem::path& folder, const LoadOptions& options) {
    std::error_code ec;
    if (!std::filesystem::exists(folder, ec)) throw Error(folder.string() + ": no such model folder");
    if (!std::filesystem::is_directory(folder, ec))
        throw Error(folder.string() + ": not a folder (a model is a folder with config.json and model.safetensors)");
    const auto configFile = folder / "config.json";
    if (!std::filesystem::exists(configFile, ec))
        throw Error(folder.string() + ": no config.json in this folder, so it is not a model folder");
    JsonConfig config(readJsonObject(configFile), configFile);
    const std::string type = config.string("model_type");
    const c10::Device device = resolveDevice(options.device);
    if (type != "gpt2")
        throw Error(configFile.string() + ": model_type '" + type + "' is not supported (supported: gpt2)");
    return translateTorchErrors("loading " + folder.string(), [&] { return loadGpt2(folder, config, device, options); });
}

std::shared_ptr<const Trace> Model::forward(const std::vector<std::int64_t>& ids, const RunOptions& options) const {
    return translateTorchErrors("running the model on " + std::to_string(ids.size()) + " tokens",
                                [&] { return runForward(ids, options); });
}

}  // namespace attnscope
