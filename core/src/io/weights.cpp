#include "weights.h"
#include "io/json_util.h"

#include "attnscope/io/torch_checkpoint.h"
#include "attnscope/runtime/error.h"
#include "json_util.h"
#include "runtime/bf16.h"
#include "runtime/memory.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

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

WeightStore::File WeightStore::openFile(const fs::path& path, bool torch) {
    File f;
    auto add = [&](const auto& file) {
        for (const auto& t : file->tensors()) f.entries.push_back(Entry{&t, file->data(t), &file->path(), file});
    };
    if (torch) {
        const auto file = TorchCheckpoint::open(path);
        add(file);
        for (const auto& [name, type] : file->skipped()) f.skipped.insert(name);
    } else {
        add(SafetensorsFile::open(path));
    }
    return f;
}

WeightStore::WeightStore(const fs::path& folder, c10::Device device) : folder_(folder), device_(device) {
    if (looksLikeGguf(folder)) {
        openGguf(folder);
        return;
    }
    // Hugging Face's order: safetensors first, then PyTorch's pickles.
    std::error_code ec;
    bool found = false;
    for (const bool torch : {false, true}) {
        const auto single = folder / (torch ? "pytorch_model.bin" : "model.safetensors");
        const auto index = fs::path(single.string() + ".index.json");
        if (fs::exists(single, ec)) {
            source_ = single;
            for (auto& e : openFile(single, torch).entries) entries_[e.info->name] = std::move(e);
        } else if (fs::exists(index, ec)) {
            source_ = index;
            openSharded(folder, index, torch);
        } else {
            continue;
        }
        found = true;
        break;
    }
    if (!found)
        throw Error(folder.string() +
                    ": no model.safetensors or model.safetensors.index.json in this folder (nor PyTorch's "
                    "pytorch_model.bin or pytorch_model.bin.index.json)");

    // On a GPU the forward runs in the checkpoint's half-precision dtype; on the CPU in float32
    // (LibTorch's CPU kernels for F16/BF16 are slow or missing).
    if (!device_.is_cpu()) {
        std::set<DType> halves;
        for (const auto& [name, e] : entries_)
            if (e.info->dtype == DType::F16 || e.info->dtype == DType::BF16) halves.insert(e.info->dtype);
        if (halves.size() == 1) compute_ = scalarType(*halves.begin());
    }
}

void WeightStore::openSharded(const fs::path& folder, const fs::path& index, bool torch) {
    const auto json = readJsonObject(index);
    const auto map = json.find("weight_map");
    if (map == json.end() || !map->is_object() || map->empty())
        throw Error(index.string() + ": 'weight_map' must be a non-empty object {tensor: shard file}");
    std::set<std::string> seen;
    for (const auto& key : weightMapKeys(index))
        if (!seen.insert(key).second)
            throw Error(index.string() + ": tensor '" + key + "' is listed twice in weight_map");

    std::map<std::string, File> shards;  // shard name -> opened file
    for (auto it = map->begin(); it != map->end(); ++it) {
        if (!it.value().is_string())
            throw Error(index.string() + ": shard of tensor '" + it.key() + "' must be a file name, found " +
                        jsonExcerpt(it.value()));
        const std::string shard = it.value().get<std::string>();
        if (shards.count(shard)) continue;
        if (!plainFileName(shard))
            throw Error(index.string() + ": shard '" + shard + "' must be a plain file name in the model folder");
        std::error_code ec;
        if (!fs::is_regular_file(folder / shard, ec))
            throw Error(index.string() + ": shard '" + shard + "' (for tensor '" + it.key() +
                        "') is missing from the folder");
        shards[shard] = openFile(folder / shard, torch);
    }
    // Every tensor of every shard must be where the index says, exactly once.
    std::map<std::string, std::string> foundIn;
    for (auto& [shard, file] : shards) {
        for (const auto& name : file.skipped) foundIn[name] = shard;  // left out, not missing
        for (auto& e : file.entries) {
            const TensorInfo& t = *e.info;
            auto listed = map->find(t.name);
            if (listed == map->end())
                throw Error(index.string() + ": tensor '" + t.name + "' in shard '" + shard + "' is not in weight_map");
            if (auto prev = foundIn.find(t.name); prev != foundIn.end())
                throw Error(index.string() + ": tensor '" + t.name + "' is in two shards, '" + prev->second +
                            "' and '" + shard + "'");
            if (listed->get<std::string>() != shard)
                throw Error(index.string() + ": tensor '" + t.name + "' is in shard '" + shard +
                            "' but weight_map says '" + listed->get<std::string>() + "'");
            foundIn[t.name] = shard;
            entries_[t.name] = std::move(e);
        }
    }
    for (auto it = map->begin(); it != map->end(); ++it)
        if (!foundIn.count(it.key()))
            throw Error(index.string() + ": tensor '" + it.key() + "' is not in its shard '" +
                        it.value().get<std::string>() + "'");
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
        throw Error(source_.string() + ": tensor '" + prefix_ + name + "'" +
                    (prefix_.empty() ? "" : " (or '" + name + "')") + " is missing");
    const TensorInfo& info = *e->info;
    if (info.shape != shape)
        throw Error(e->file->string() + ": tensor '" + info.name + "' has shape " + shapeString(info.shape) +
                    ", the config needs " + shapeString(shape));
    if (info.dtype == DType::I64)
        throw Error(e->file->string() + ": tensor '" + info.name + "' is I64; weights must be F32, F16 or BF16");

    if (e->gguf && !supportedGgmlType(e->gguf->type))
        throw Error(e->file->string() + ": tensor '" + info.name + "' is " + ggmlTypeName(e->gguf->type) +
                    "; AttnScope reads F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q5_K and Q6_K");
    if (used_.insert(info.name).second) {
        parameters_ += info.numel();
        if (e->gguf)
            ggufTypesUsed_.insert(ggmlTypeName(e->gguf->type));
        else
            dtypesUsed_.insert(info.dtype);
    }
    if (stream_ && streamable(*e)) {
        // A layer matrix: a float32 view of the buffer this slot shares with the other layers;
        // StreamPass::layer fills it.
        const int layer = layerOfName(info.name);
        const std::size_t slot = stream_->nextSlot_[layer]++;
        float* target = stream_->buffer(slot, info.numel());
        stream_->layers_[layer].push_back({e->data, info.dtype, info.numel(), target, e->gguf, e->permuteHeads});
        stream_->resident_ = -1;
        // The deleter keeps the stream (its buffers) and the file (the slot's source) alive:
        // the store goes when loading ends, the model's tensors stay.
        std::shared_ptr<WeightStream> keep = stream_;
        std::shared_ptr<const void> owner = e->owner;
        return at::from_blob(
                target, shape, [keep, owner](void*) {}, at::TensorOptions().dtype(at::kFloat));
    }
    if (e->gguf) return dequantised(*e, shape).to(device_, compute_);
    at::Tensor t = mapped(*e, shape);
    const bool aligned = reinterpret_cast<std::uintptr_t>(t.data_ptr()) % dtypeSize(info.dtype) == 0;
    if (t.scalar_type() != compute_ || !aligned || !device_.is_cpu())
        t = t.to(device_, compute_, /*non_blocking=*/false, /*copy=*/true);
    return t;
}

at::Tensor WeightStore::mapped(const Entry& e, const std::vector<std::int64_t>& shape) {
    // The mapping is read-only and outlives the tensor: the deleter holds the file's owner.
    std::shared_ptr<const void> owner = e.owner;
    void* data = const_cast<std::byte*>(e.data);
    return at::from_blob(
            data, shape, [owner](void*) {}, at::TensorOptions().dtype(scalarType(e.info->dtype)));
}

at::Tensor WeightStore::rows(const std::string& name, const std::vector<std::int64_t>& shape) {
    const Entry* e = stream_ ? lookup(name) : nullptr;
    if (e && e->gguf && e->gguf->type != GgmlType::F32 && supportedGgmlType(e->gguf->type) && e->permuteHeads == 0 &&
        e->info->shape == shape && shape.size() == 2) {
        if (used_.insert(e->info->name).second) {
            parameters_ += e->info->numel();
            ggufTypesUsed_.insert(ggmlTypeName(e->gguf->type));
        }
        stream_->mappedBytes_ += e->gguf->bytes;
        return quantisedRows(*e, shape);
    }
    const bool half = e && (e->info->dtype == DType::F16 || e->info->dtype == DType::BF16);
    if (!half || e->info->shape != shape || reinterpret_cast<std::uintptr_t>(e->data) % 2 != 0)
        return get(name, shape);  // converted, or get() reports what is wrong
    if (used_.insert(e->info->name).second) {
        parameters_ += e->info->numel();
        dtypesUsed_.insert(e->info->dtype);
    }
    stream_->mappedBytes_ += e->info->end - e->info->begin;
    return mapped(*e, shape);
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

int layerOfName(const std::string& name) {
    std::size_t start = 0;
    while (start <= name.size()) {
        std::size_t end = name.find('.', start);
        if (end == std::string::npos) end = name.size();
        if (end > start && end - start < 9 &&
            std::all_of(name.begin() + start, name.begin() + end, [](char c) { return c >= '0' && c <= '9'; }))
            return std::stoi(name.substr(start, end - start));
        start = end + 1;
    }
    return -1;
}

bool WeightStore::streamable(const TensorInfo& info) const {
    return device_.is_cpu() && (info.dtype == DType::F16 || info.dtype == DType::BF16) && info.shape.size() >= 2 &&
           layerOfName(info.name) >= 0;
}

namespace {
bool streamableGguf(const TensorInfo& info, c10::Device device) {
    return device.is_cpu() && info.shape.size() >= 2 && layerOfName(info.name) >= 0;
}
}  // namespace

// Legacy torch.save files place storages at any byte: the stream's conversion reads 16-bit
// words, so an odd address is converted once instead.
bool WeightStore::streamable(const Entry& e) const {
    if (e.gguf) return streamableGguf(*e.info, device_);
    return streamable(*e.info) && reinterpret_cast<std::uintptr_t>(e.data) % 2 == 0;
}

// Non-layer half-precision matrices at least this big are expected through rows() (counted as
// mapped, not converted): embeddings and heads; smaller ones (GPT-2's positions) are converted.
constexpr std::int64_t kRowsElements = 4 << 20;

std::uint64_t WeightStore::streamedBytes() const {
    std::uint64_t converted = 0, buffers = 0;
    std::map<int, std::uint64_t> layerBytes;
    for (const auto& [name, e] : entries_) {
        const TensorInfo& t = *e.info;
        const std::uint64_t f32 = static_cast<std::uint64_t>(t.numel()) * (t.dtype == DType::I64 ? 8 : 4);
        const bool half = t.dtype == DType::F16 || t.dtype == DType::BF16;
        if (streamable(e))
            layerBytes[layerOfName(t.name)] += f32;
        else if ((half || (e.gguf && e.gguf->type != GgmlType::F32)) && t.shape.size() >= 2 &&
                 t.numel() >= kRowsElements)
            continue;  // stays mapped (a GGUF one quantised: QuantisedTable)
        else if (t.dtype != DType::F32 || e.gguf)
            converted += f32;  // F32 is used from the mapping
    }
    for (const auto& [layer, bytes] : layerBytes) buffers = std::max(buffers, bytes);
    return converted + buffers;
}

std::shared_ptr<WeightStream> WeightStore::plan(std::uint64_t budgetBytes, WeightPlan plan) {
    bool canStream = false;
    for (const auto& [name, e] : entries_) canStream = canStream || streamable(e);
    if (!canStream || plan == WeightPlan::Convert) {
        requireMemory(budgetBytes);
        return nullptr;
    }
    if (plan == WeightPlan::Auto) {
        const std::optional<std::uint64_t> available =
                budgetBytes ? std::optional<std::uint64_t>(budgetBytes) : availableBytes(device_);
        if (!available || computeBytes() <= *available) return nullptr;  // converted: faster re-runs
        if (streamedBytes() > *available)
            throw Error(folder_.string() + ": loading the weights needs " + gibString(computeBytes()) +
                        " converted to float32 or " + gibString(streamedBytes()) + " streamed, " +
                        gibString(*available) + (budgetBytes ? " allowed" : " available"));
    } else {
        requireBytes(folder_.string() + ": streaming the weights", streamedBytes(), device_, budgetBytes);
    }
    stream_ = std::make_shared<WeightStream>();
    return stream_;
}

std::string WeightStore::describe() const {
    const std::string stored = storageDtype();
    if (stream_)
        return "streamed from " + stored + " (one layer at a time through a " + gibString(stream_->bufferBytes()) +
               " float32 buffer; " + gibString(stream_->mappedBytes()) + " used in row chunks from the file)";
    if (compute_ != at::kFloat)
        return std::string(compute_ == at::kHalf ? "float16" : "bfloat16") + " on " + device_.str();
    if (!ggufTypesUsed_.empty()) return "dequantised from " + stored + " to float32";
    if (stored == "F32" && device_.is_cpu()) return "float32 from the file (mapped, no copy)";
    return "converted to float32";
}

float* WeightStream::buffer(std::size_t slot, std::int64_t numel) {
    // The same matrix of every layer shares one buffer; one of another size gets its own.
    for (Buffer& b : buffers_)
        if (b.slot == slot && b.numel == numel) return b.data.get();
    buffers_.push_back({slot, numel, std::unique_ptr<float[]>(new float[static_cast<std::size_t>(numel)])});
    return buffers_.back().data.get();
}

std::uint64_t WeightStream::bufferBytes() const {
    std::uint64_t total = 0;
    for (const Buffer& b : buffers_) total += static_cast<std::uint64_t>(b.numel) * 4;
    return total;
}

namespace {

// Half-precision values [begin, end) of `slot` into float32. BF16 is the top half of a float32,
// so a shift (runtime/bf16.h, streamed stores); F16 goes through c10::Half's conversion.
// ATTNSCOPE_BF16_CACHED=1: the plain cached-store loop, only to measure the streamed stores
// against it in one binary (docs/benchmarks.md, issue 14).
bool cachedConversion() {
    static const bool on = [] {
        const char* s = std::getenv("ATTNSCOPE_BF16_CACHED");
        return s && *s == '1';
    }();
    return on;
}

void convertRange(const WeightStream::Slot& slot, std::int64_t begin, std::int64_t end) {
    if (slot.dtype == DType::BF16) {
        const auto* src = reinterpret_cast<const std::uint16_t*>(slot.source) + begin;
        (cachedConversion() ? bf16ToFloat32Cached : bf16ToFloat32)(src, slot.target + begin, end - begin);
    } else {
        const auto* src = reinterpret_cast<const c10::Half*>(slot.source);
        for (std::int64_t i = begin; i < end; ++i) slot.target[i] = static_cast<float>(src[i]);
    }
}

}  // namespace

void WeightStream::materialise(int layer) {
    if (layer == resident_) return;
    auto it = layers_.find(layer);
    if (it == layers_.end()) return;
    // Memory-bound: split every matrix over the cores (BLAS is idle between layers).
    const unsigned workers = std::min(8u, std::max(1u, std::thread::hardware_concurrency()));
    auto work = [&](unsigned w) {
        for (const Slot& slot : it->second) {
            if (slot.gguf) {  // whole rows: a row holds whole blocks
                const std::int64_t rows = slot.numel / slot.gguf->rowLength();
                const std::int64_t per = (rows + workers - 1) / workers;
                const std::int64_t begin = std::min(rows, per * w), end = std::min(rows, begin + per);
                if (begin < end) dequantiseSlotRows(slot, begin, end);
                continue;
            }
            const std::int64_t per = (slot.numel + workers - 1) / workers;
            const std::int64_t begin = std::min(slot.numel, per * w), end = std::min(slot.numel, begin + per);
            if (begin < end) convertRange(slot, begin, end);
        }
    };
    std::vector<std::thread> threads;
    for (unsigned w = 1; w < workers; ++w) threads.emplace_back(work, w);
    work(0);
    for (auto& t : threads) t.join();
    resident_ = layer;
}

StreamPass::StreamPass(std::shared_ptr<WeightStream> stream, const std::function<bool(long long, long long)>& progress)
    : stream_(std::move(stream)) {
    if (!stream_) return;
    // Another forward holds the buffers (a lab re-run while the window's run goes on): wait,
    // but end a cancelled wait.
    while (!stream_->mutex().try_lock_for(std::chrono::milliseconds(100)))
        if (progress && !progress(0, 1)) throw Cancelled();
}

StreamPass::~StreamPass() {
    if (stream_) stream_->mutex().unlock();
}

void WeightStore::requireMemory(std::uint64_t budgetBytes) const {
    const char* type = compute_ == at::kHalf ? "float16" : compute_ == at::kBFloat16 ? "bfloat16" : "float32";
    requireBytes(folder_.string() + ": loading the weights (" + type + ")", computeBytes(), device_, budgetBytes);
}

std::string WeightStore::storageDtype() const {
    if (!ggufTypesUsed_.empty()) {  // "Q4_K+Q6_K+F32": a quantised file mixes types
        std::string all;
        for (const auto& t : ggufTypesUsed_) all += (all.empty() ? "" : "+") + t;
        return all;
    }
    if (dtypesUsed_.size() == 1) return dtypeName(*dtypesUsed_.begin());
    return dtypesUsed_.empty() ? "F32" : "mixed";
}

}  // namespace attnscope
