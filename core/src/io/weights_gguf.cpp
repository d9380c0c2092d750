// WeightStore over a GGUF file (weights.h): every tensor is named as in the file
// ("blk.3.attn_q.weight") with PyTorch's shape, and dequantised to float32 when it is used, whole
// (get) or one layer at a time into the stream's buffers (dequantiseSlotRows).
//
// llama.cpp's converter reorders the rows of Q and K for general.architecture "llama" only
// (convert_hf_to_gguf.py's LlamaModel.permute: within each head, the two rotary halves are
// interleaved, row j·d/2 + i of Hugging Face's order stored as row 2i + j). The reader puts
// every row back where Hugging Face has it, so the rotary code sees the usual order.
#include "weights.h"

#include "attnscope/runtime/error.h"

#include <cstring>
#include <regex>
#include <thread>

namespace attnscope {

namespace {

// What a GGUF file's tensors need kept alive: the mapping and their TensorInfo views.
struct GgufHolder {
    std::shared_ptr<const GgufFile> file;
    std::vector<TensorInfo> infos;
};

// Hugging Face's row of GGUF row r of a permuted Q or K with `rows` rows over `heads` heads.
std::int64_t unpermutedRow(std::int64_t r, std::int64_t rows, int heads) {
    const std::int64_t d = rows / heads, within = r % d;
    return r - within + (within % 2) * (d / 2) + within / 2;
}

// The head count whose row order llama.cpp changed in tensor `name`, or 0.
int permutedHeads(const GgufFile& f, const std::string& arch, const std::string& name) {
    if (arch != "llama") return 0;
    static const std::regex qk(R"(blk\.\d+\.attn_(q|k)\.(weight|bias))");
    std::smatch m;
    if (!std::regex_match(name, m, qk)) return 0;
    const std::int64_t heads = f.requirePositive("llama.attention.head_count");
    if (m[1] == "q") return static_cast<int>(heads);
    return static_cast<int>(f.integer("llama.attention.head_count_kv").value_or(heads));
}

}  // namespace

void WeightStore::openGguf(const std::filesystem::path& file) {
    auto holder = std::make_shared<GgufHolder>();
    holder->file = GgufFile::open(file);
    const GgufFile& f = *holder->file;
    source_ = file;
    const std::string arch = f.string("general.architecture").value_or("");
    holder->infos.reserve(f.tensors().size());
    for (const GgufTensor& t : f.tensors()) {
        TensorInfo info;
        info.name = t.name;
        info.dtype = DType::F32;  // what it is read as
        info.shape = t.shape;
        holder->infos.push_back(std::move(info));
    }
    for (std::size_t i = 0; i < f.tensors().size(); ++i) {
        const GgufTensor& t = f.tensors()[i];
        Entry e{&holder->infos[i], f.data(t), &f.path(), holder, &t, permutedHeads(f, arch, t.name)};
        if (e.permuteHeads > 0) {
            const std::int64_t rows = t.shape.size() == 1 ? t.numel() : t.numel() / t.rowLength();
            if (t.shape.size() > 2 || rows % (2 * e.permuteHeads) != 0)
                f.fail("tensor '" + t.name + "' has " + std::to_string(rows) + " rows, which " +
                       std::to_string(e.permuteHeads) + " heads of an even size cannot split");
        }
        entries_[t.name] = std::move(e);
    }
}

at::Tensor WeightStore::dequantised(const Entry& e, const std::vector<std::int64_t>& shape) {
    const GgufTensor& t = *e.gguf;
    at::Tensor out = at::empty(shape, at::TensorOptions().dtype(at::kFloat));
    float* data = out.data_ptr<float>();
    if (e.permuteHeads > 0 && t.shape.size() == 1) {  // a bias: its elements are the rows
        std::vector<float> stored(static_cast<std::size_t>(t.numel()));
        dequantiseRows(t, e.data, 0, 1, stored.data());
        for (std::int64_t r = 0; r < t.numel(); ++r)
            data[unpermutedRow(r, t.numel(), e.permuteHeads)] = stored[static_cast<std::size_t>(r)];
        return out;
    }
    // The embedding and the head (hundreds of millions of values) on every core: opening a
    // streamed file is mostly this.
    const WeightStream::Slot slot{e.data, DType::F32, t.numel(), data, &t, e.permuteHeads};
    const std::int64_t rows = t.numel() / t.rowLength();
    const unsigned workers =
            t.numel() < (1 << 20) ? 1u : std::min(8u, std::max(1u, std::thread::hardware_concurrency()));
    const std::int64_t per = (rows + workers - 1) / workers;
    std::vector<std::thread> threads;
    for (unsigned w = 1; w < workers; ++w)
        if (per * w < rows)
            threads.emplace_back(dequantiseSlotRows, std::cref(slot), per * w, std::min(rows, per * (w + 1)));
    dequantiseSlotRows(slot, 0, std::min(rows, per));
    for (auto& th : threads) th.join();
    return out;
}

namespace {

void deleteTable(void* context) { delete static_cast<QuantisedTable*>(context); }

}  // namespace

at::Tensor WeightStore::quantisedRows(const Entry& e, const std::vector<std::int64_t>& shape) {
    auto* table = new QuantisedTable{e.gguf, e.data, e.owner};
    c10::DataPtr pointer(const_cast<std::byte*>(e.data), table, &deleteTable, c10::Device(c10::kCPU));
    c10::Storage storage(c10::Storage::use_byte_size_t(), static_cast<std::size_t>(e.gguf->bytes), std::move(pointer),
                         nullptr, false);
    at::Tensor t = at::empty({0}, at::TensorOptions().dtype(at::kByte));
    t.set_(storage, 0, shape, std::vector<std::int64_t>(shape.size(), 0));
    return t;
}

const QuantisedTable* quantisedTable(const at::Tensor& t) {
    if (!t.defined() || !t.has_storage() || t.scalar_type() != at::kByte) return nullptr;
    const c10::DataPtr& p = t.storage().data_ptr();
    return p.get_deleter() == &deleteTable ? static_cast<const QuantisedTable*>(p.get_context()) : nullptr;
}

void dequantiseTable(const QuantisedTable& q, std::int64_t begin, std::int64_t end, float* out) {
    const GgufTensor& t = *q.tensor;
    const std::int64_t width = t.rowLength(), rows = end - begin;
    const unsigned workers =
            rows * width < (1 << 20) ? 1u : std::min(8u, std::max(1u, std::thread::hardware_concurrency()));
    const std::int64_t per = (rows + workers - 1) / workers;
    const auto part = [&](std::int64_t from, std::int64_t to) {
        if (to > from) dequantiseRows(t, q.data, begin + from, to - from, out + from * width);
    };
    std::vector<std::thread> threads;
    for (unsigned w = 1; w < workers; ++w) threads.emplace_back(part, per * w, std::min(rows, per * (w + 1)));
    part(0, std::min(rows, per));
    for (auto& th : threads) th.join();
}

void dequantiseSlotRows(const WeightStream::Slot& slot, std::int64_t begin, std::int64_t end) {
    const GgufTensor& t = *slot.gguf;
    const std::int64_t width = t.rowLength();
    if (slot.permuteHeads <= 0) {
        dequantiseRows(t, slot.source, begin, end - begin, slot.target + begin * width);
        return;
    }
    const std::int64_t rows = t.numel() / width;
    for (std::int64_t r = begin; r < end; ++r)
        dequantiseRows(t, slot.source, r, 1, slot.target + unpermutedRow(r, rows, slot.permuteHeads) * width);
}

}  // namespace attnscope
