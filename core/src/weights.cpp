#include "weights.h"

#include "attnscope/error.h"

#include <cstdint>

namespace attnscope {

WeightStore::WeightStore(const std::filesystem::path& folder, c10::Device device) : device_(device) {
    const auto path = folder / "model.safetensors";
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        throw Error(folder.string() + ": no model.safetensors in this folder");
    file_ = SafetensorsFile::open(path);
}

const TensorInfo* WeightStore::lookup(const std::string& name) const {
    if (!prefix_.empty())
        if (const auto* t = file_->find(prefix_ + name)) return t;
    return file_->find(name);
}

bool WeightStore::has(const std::string& name) const { return lookup(name) != nullptr; }

bool WeightStore::anyNameStartsWith(const std::string& prefix) const {
    for (const auto& t : file_->tensors())
        if (t.name.rfind(prefix, 0) == 0) return true;
    return false;
}

at::Tensor WeightStore::get(const std::string& name, const std::vector<std::int64_t>& shape) {
    const TensorInfo* info = lookup(name);
    if (!info) throw Error(file_->path().string() + ": tensor '" + prefix_ + name + "' is missing");
    if (info->shape != shape)
        throw Error(file_->path().string() + ": tensor '" + info->name + "' has shape " + shapeString(info->shape) +
                    ", the config needs " + shapeString(shape));

    const c10::ScalarType type = info->dtype == DType::F32   ? at::kFloat
                                 : info->dtype == DType::F16 ? at::kHalf
                                                             : at::kBFloat16;
    // The mapping is read-only and outlives the tensor through the deleter's captured owner.
    auto owner = file_;
    void* data = const_cast<std::byte*>(file_->data(*info));
    at::Tensor t = at::from_blob(data, shape, [owner](void*) {}, at::TensorOptions().dtype(type));
    const bool aligned = reinterpret_cast<std::uintptr_t>(data) % dtypeSize(info->dtype) == 0;
    if (type != at::kFloat || !aligned || !device_.is_cpu())
        t = t.to(device_, at::kFloat, /*non_blocking=*/false, /*copy=*/true);

    if (used_.insert(info->name).second) {
        parameters_ += info->numel();
        dtypesUsed_.insert(info->dtype);
    }
    return t;
}

std::string WeightStore::storageDtype() const {
    if (dtypesUsed_.size() == 1) return dtypeName(*dtypesUsed_.begin());
    return dtypesUsed_.empty() ? "F32" : "mixed";
}

}  // namespace attnscope
