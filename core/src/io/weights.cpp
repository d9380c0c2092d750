#include "weights.h"
#include "io/json_util.h"

#include "attnscope/runtime/error.h"
#include "json_util.h"
#include "runtime/memory.h"

#include <cstdint>
#include <fstream>

namespace attnscope {

namespace fs = std::filesystem;

c10::ScalarType scalarType(DType dtype) {
    switch (dtype) {
        case DType::F32: return at::kFloat;
        case DType::F16: return at::kHalf;
        case DType::BF16: return at::kBFloat16;
        case DType::I64: return at::kLong;
    }
    return at::kFloat;
}

namespace {

// Keys of "weight_map" in the order written, duplicates included (a JSON object drops them).
std::vector<std::string> weightMapKeys(const fs::path& index) {
    std::vector<std::string> keys;
    std::string parentKey;
    auto callback = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
        if (event == nlohmann::json::parse_event_t::key) {
            if (depth == 1) parentKey = parsed.get<std::string>();
            if (depth == 2 && parentKey == "weight_map") keys.push_back(parsed.get<std::string>());
        }
        return true;
    };
    std::ifstream in(index, std::ios::binary);
    try {
        const auto parsed = nlohmann::json::parse(in, callback);
        (void)parsed;
    } catch (const nlohmann::json::exception&) {  // readJsonObject already reported syntax errors
    }
    return keys;
}

bool plainFileName(const std::string& name) {
    return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
           name.find('\\') == std::string::npos && name.find('\0') == std::string::npos;
}

}  // namespace

WeightStore::WeightStore(const fs::path& folder, c10::Device device) : folder_(folder), device_(device) {
    const auto single = folder / "model.safetensors";
    const auto index = folder / "model.safetensors.index.json";
    std::error_code ec;
    if (fs::exists(single, ec)) {
        source_ = single;
        files_.push_back(SafetensorsFile::open(single));
        for (const auto& t : files_[0]->tensors()) entries_[t.name] = Entry{files_[0].get(), &t};
    } else if (fs::exists(index, ec)) {
        source_ = index;
        openSharded(folder, index);
    } else {
        throw Error(folder.string() + ": no model.safetensors or model.safetensors.index.json in this folder");
    }

    // On a GPU the forward runs in the checkpoint's half-precision dtype; on the CPU in float32
    // (LibTorch's CPU kernels for F16/BF16 are slow or missing).
    if (!device_.is_cpu()) {
        std::set<DType> halves;
        for (const auto& [name, e] : entries_)
            if (e.info->dtype == DType::F16 || e.info->dtype == DType::BF16) halves.insert(e.info->dtype);
        if (halves.size() == 1) compute_ = scalarType(*halves.begin());
    }
}

void WeightStore::openSharded(const fs::path& folder, const fs::path& index) {
    const auto json = readJsonObject(index);
    const auto map = json.find("weight_map");
    if (map == json.end() || !map->is_object() || map->empty())
        throw Error(index.string() + ": 'weight_map' must be a non-empty object {tensor: shard file}");
    std::set<std::string> seen;
    for (const auto& key : weightMapKeys(index))
        if (!seen.insert(key).second) throw Error(index.string() + ": tensor '" + key + "' is listed twice in weight_map");

    std::map<std::string, const SafetensorsFile*> shards;  // shard name -> opened file
    for (auto it = map->begin(); it != map->end(); ++it) {
        if (!it.value().is_string())
            throw Error(index.string() + ": shard of tensor '" + it.key() + "' must be a file name, found " + jsonExcerpt(it.value()));
        const std::string shard = it.value().get<std::string>();
        if (shards.count(shard)) continue;
        if (!plainFileName(shard))
            throw Error(index.string() + ": shard '" + shard + "' must be a plain file name in the model folder");
        std::error_code ec;
        if (!fs::is_regular_file(folder / shard, ec))
            throw Error(index.string() + ": shard '" + shard + "' (for tensor '" + it.key() + "') is missing from the folder");
        files_.push_back(SafetensorsFile::open(folder / shard));
        shards[shard] = files_.back().get();
    }
    // Every tensor of every shard must be where the index says, exactly once.
    std::map<std::string, std::string> foundIn;
    for (const auto& [shard, file] : shards)
        for (const auto& t : file->tensors()) {
            auto listed = map->find(t.name);
            if (listed == map->end())
                throw Error(index.string() + ": tensor '" + t.name + "' in shard '" + shard + "' is not in weight_map");
            if (auto prev = foundIn.find(t.name); prev != foundIn.end())
                throw Error(index.string() + ": tensor '" + t.name + "' is in two shards, '" + prev->second + "' and '" + shard + "'");
            if (listed->get<std::string>() != shard)
                throw Error(index.string() + ": tensor '" + t.name + "' is in shard '" + shard + "' but weight_map says '" +
                            listed->get<std::string>() + "'");
            foundIn[t.name] = shard;
            entries_[t.name] = Entry{file, &t};
        }
    for (auto it = map->begin(); it != map->end(); ++it)
        if (!foundIn.count(it.key()))
            throw Error(index.string() + ": tensor '" + it.key() + "' is not in its shard '" + it.value().get<std::string>() + "'");
}

const WeightStore::Entry* WeightStore::lookup(const std::string& name) const {
    if (!prefix_.empty())
        if (auto it = entries_.find(prefix_ + name); it != entries_.end()) return &it->second;
    auto it = entries_.find(name);
    return it == entries_.end() ? nullptr : &it->second;
}

bool WeightStore::has(const std::string& name) const { return lookup(name) != nullptr; }

std::optional<std::vector<std::int64_t>> WeightStore::shape(const std::string& name) const {
    const Entry* e = lookup(name);
    if (!e) return std::nullopt;
    return e->info->shape;
}

bool WeightStore::anyNameStartsWith(const std::string& prefix) const {
    auto it = entries_.lower_bound(prefix);
    return it != entries_.end() && it->first.compare(0, prefix.size(), prefix) == 0;
}

at::Tensor WeightStore::get(const std::string& name, const std::vector<std::int64_t>& shape) {
    const Entry* e = lookup(name);
    if (!e)
        throw Error(source_.string() + ": tensor '" + prefix_ + name + "'" + (prefix_.empty() ? "" : " (or '" + name + "')") +
                    " is missing");
    const TensorInfo& info = *e->info;
    if (info.shape != shape)
        throw Error(e->file->path().string() + ": tensor '" + info.name + "' has shape " + shapeString(info.shape) +
                    ", the config needs " + shapeString(shape));
    if (info.dtype == DType::I64)
        throw Error(e->file->path().string() + ": tensor '" + info.name + "' is I64; weights must be F32, F16 or BF16");

    // The mapping is read-only and outlives the tensor: the deleter holds the file's owner.
    std::shared_ptr<const SafetensorsFile> owner;
    for (const auto& f : files_)
        if (f.get() == e->file) owner = f;
    void* data = const_cast<std::byte*>(e->file->data(info));
    at::Tensor t = at::from_blob(data, shape, [owner](void*) {}, at::TensorOptions().dtype(scalarType(info.dtype)));
    const bool aligned = reinterpret_cast<std::uintptr_t>(data) % dtypeSize(info.dtype) == 0;
    if (t.scalar_type() != compute_ || !aligned || !device_.is_cpu())
        t = t.to(device_, compute_, /*non_blocking=*/false, /*copy=*/true);

    if (used_.insert(info.name).second) {
        parameters_ += info.numel();
        dtypesUsed_.insert(info.dtype);
    }
    return t;
}

at::Tensor WeightStore::optional(const std::string& name, const std::vector<std::int64_t>& shape) {
    return has(name) ? get(name, shape) : at::Tensor();
}

Linear WeightStore::linear(const std::string& name, std::int64_t out, std::int64_t in, bool bias) {
    Linear l;
    l.weight = get(name + ".weight", {out, in});
    if (bias) l.bias = get(name + ".bias", {out});
    return l;
}

Linear WeightStore::linearOptionalBias(const std::string& name, std::int64_t out, std::int64_t in) {
    Linear l;
    l.weight = get(name + ".weight", {out, in});
    l.bias = optional(name + ".bias", {out});
    return l;
}

std::uint64_t WeightStore::computeBytes() const {
    const std::uint64_t size = c10::elementSize(compute_);
    std::uint64_t total = 0;
    for (const auto& [name, e] : entries_)
        total += static_cast<std::uint64_t>(e.info->numel()) * (e.info->dtype == DType::I64 ? 8 : size);
    return total;
}

void WeightStore::requireMemory(std::uint64_t budgetBytes) const {
    const char* type = compute_ == at::kHalf ? "float16" : compute_ == at::kBFloat16 ? "bfloat16" : "float32";
    requireBytes(folder_.string() + ": loading the weights (" + type + ")",
                 computeBytes(), device_, budgetBytes);
}

std::string WeightStore::storageDtype() const {
    if (dtypesUsed_.size() == 1) return dtypeName(*dtypesUsed_.begin());
    return dtypesUsed_.empty() ? "F32" : "mixed";
}

}  // namespace attnscope
