// openAttentionFile (attnscope/attention/attention_file.h): a .npy of maps as a maps-only Trace.
#include "attnscope/attention/attention_file.h"

#include "attnscope/io/npy_file.h"
#include "attnscope/runtime/error.h"
#include "io/json_util.h"
#include "runtime/torch_errors.h"
#include "trace_impl.h"
#include "io/file_errors.h"

#include <nlohmann/json.hpp>

#include <sstream>

namespace attnscope {

namespace fs = std::filesystem;

namespace {

std::string dimsText(const std::vector<std::int64_t>& shape) {
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

std::vector<std::string> stringList(const fs::path& path, const nlohmann::json& list, const char* what,
                                    std::int64_t n) {
    if (!list.is_array()) failAt(path, std::string(what) + " must be a list of strings, found " + jsonExcerpt(list));
    if (static_cast<std::int64_t>(list.size()) != n)
        failAt(path, std::string(what) + " has " + std::to_string(list.size()) + " entries, the maps have " +
                             std::to_string(n) + " tokens");
    std::vector<std::string> out;
    out.reserve(list.size());
    for (const auto& s : list) {
        if (!s.is_string()) failAt(path, std::string(what) + " must hold strings, found " + jsonExcerpt(s));
        out.push_back(s.get<std::string>());
    }
    return out;
}

// The largest map side accepted: HeadMap indexes rows and columns with int, and a 2^20-token
// map is far beyond what any view draws.
constexpr std::int64_t kMaxTokens = 1 << 20;

}  // namespace

AttentionFileTokens readAttentionTokens(const fs::path& path, std::int64_t n, std::int64_t m,
                                        const std::string& blockName) {
    nlohmann::json json = readJsonFile(path);
    AttentionFileTokens out;
    if (json.is_array()) {
        if (n != m)
            failAt(path,
                   "a plain token list labels square maps; these are " + std::to_string(n) + " x " + std::to_string(m));
        out.tokens = out.queries = out.keys = stringList(path, json, "the token list", n);
        return out;
    }
    if (!json.is_object() || !json.contains("tokens"))
        failAt(path, "expected a list of token strings or attnscope's tokens.json (an object with \"tokens\")");
    const nlohmann::json& tokens = json["tokens"];
    const auto blocks = json.find("blocks");
    const nlohmann::json* block = nullptr;
    if (blocks != json.end() && blocks->is_object())
        for (const std::string& name : {blockName, std::string("self")})
            if (blocks->contains(name) && (*blocks)[name].is_object()) {
                block = &(*blocks)[name];
                break;
            }
    if (block && block->contains("queries") && block->contains("keys")) {
        out.queries = stringList(path, (*block)["queries"], "the block's \"queries\"", n);
        out.keys = stringList(path, (*block)["keys"], "the block's \"keys\"", m);
        out.tokens = tokens.is_array() && static_cast<std::int64_t>(tokens.size()) == n
                             ? stringList(path, tokens, "\"tokens\"", n)
                             : out.queries;
    } else {
        if (n != m)
            failAt(path,
                   "has no labels for " + std::to_string(n) + " x " + std::to_string(m) + " maps (no \"blocks\")");
        out.tokens = out.queries = out.keys = stringList(path, tokens, "\"tokens\"", n);
    }
    const auto ids = json.find("ids");
    if (ids != json.end() && ids->is_array() && static_cast<std::int64_t>(ids->size()) == n) {
        for (const auto& id : *ids) {
            if (!id.is_number_integer()) {
                out.ids.clear();
                break;
            }
            out.ids.push_back(id.get<std::int64_t>());
        }
    }
    return out;
}

bool mapsOnly(const Trace& trace) { return trace.impl().mapsOnly; }
const std::string& attentionFileOf(const Trace& trace) { return trace.impl().source; }

fs::path tokensBeside(const fs::path& npy) {
    std::error_code ec;
    fs::path own = npy;
    own.replace_extension(".tokens.json");
    if (fs::is_regular_file(own, ec)) return own;
    const fs::path shared = npy.parent_path() / "tokens.json";
    if (fs::is_regular_file(shared, ec)) return shared;
    return {};
}

std::shared_ptr<const Trace> openAttentionFile(const fs::path& npy, const fs::path& tokensJson,
                                               const Progress& progress) {
    const std::shared_ptr<const NpyFile> file = NpyFile::open(npy);
    std::vector<std::int64_t> s = file->shape();
    if (s.size() == 5) {
        if (s[1] != 1)
            failAt(npy, "shape " + dimsText(s) + " holds a batch of " + std::to_string(s[1]) +
                                " inputs; save one of them (attentions[:, i]) as [layers, heads, n, n]");
        s.erase(s.begin() + 1);
    }
    if (s.size() == 3) s.insert(s.begin(), 1);
    if (s.size() != 4)
        failAt(npy,
               "shape " + dimsText(file->shape()) +
                       " is not attention maps: expected [layers, heads, n, n], [layers, 1, heads, n, n] or [heads, n, n]");
    const std::int64_t layers = s[0], heads = s[1], n = s[2], m = s[3];
    if (layers < 1 || heads < 1 || n < 1 || m < 1) failAt(npy, "shape " + dimsText(file->shape()) + " holds no map");
    if (n > kMaxTokens || m > kMaxTokens || layers > (1 << 16) || heads > (1 << 16))
        failAt(npy, "shape " + dimsText(file->shape()) +
                            " is beyond what AttnScope shows (at most 2^20 tokens, 2^16 layers or heads)");

    AttentionFileTokens labels;
    if (!tokensJson.empty()) {
        labels = readAttentionTokens(tokensJson, n, m, npy.stem().string());
    } else {
        for (std::int64_t i = 0; i < n; ++i) labels.queries.push_back(std::to_string(i));
        for (std::int64_t i = 0; i < m; ++i) labels.keys.push_back(std::to_string(i));
        labels.tokens = labels.queries;
    }

    const at::ScalarType type = file->dtype() == NpyDType::Float16   ? at::kHalf
                                : file->dtype() == NpyDType::Float32 ? at::kFloat
                                                                     : at::kDouble;
    const double tolerance = file->dtype() == NpyDType::Float16 ? 2e-2 : 1e-3;
    return translateTorchErrors("reading attention maps", [&]() -> std::shared_ptr<const Trace> {
        // The mapping, never copied: the tensor's deleter holds the file open as long as any map
        // of the Trace may still be read.
        const at::Tensor all = at::from_blob(
                const_cast<void*>(file->data()), {layers, heads, n, m}, [keep = file](void*) mutable { keep.reset(); },
                at::TensorOptions().dtype(type));
        bool causal = n > 1 && n == m;
        const long long total = layers * heads;
        for (std::int64_t l = 0; l < layers; ++l) {
            for (std::int64_t h = 0; h < heads; ++h) {
                const at::Tensor m = all[l][h].to(type == at::kDouble ? at::kDouble : at::kFloat);
                const std::string where = "layer " + std::to_string(l) + " head " + std::to_string(h);
                if (!at::isfinite(m).all().item<bool>()) failAt(npy, where + " holds a value that is not finite");
                if (m.min().item<double>() < 0)
                    failAt(npy,
                           where + " holds negative values: attention maps are probabilities (softmax outputs), not scores");
                const at::Tensor sums = m.to(at::kDouble).sum(-1);
                const at::Tensor bad = ((sums - 1).abs() > tolerance).logical_and(sums != 0);
                if (bad.any().item<bool>()) {
                    const std::int64_t row = bad.nonzero()[0][0].item<std::int64_t>();
                    std::ostringstream sum;
                    sum << sums[row].item<double>();
                    failAt(npy, where + " row " + std::to_string(row) + " sums to " + sum.str() +
                                        ", not 1: the file must hold attention probabilities with one row per query");
                }
                if (causal && m.triu(1).ne(0).any().item<bool>()) causal = false;
                if (progress && !progress(l * heads + h + 1, total)) throw Cancelled();
            }
        }

        auto impl = std::make_unique<Trace::Impl>();
        impl->ids = labels.ids;
        impl->tokens = labels.tokens;
        if (labels.queries != labels.tokens) impl->displayTokens = labels.queries;
        impl->mapsOnly = true;
        impl->source = npy.string();
        BlockInfo info;
        // attnscope-cli's encoder.npy / decoder.npy / cross.npy keep their block's name.
        const std::string stem = npy.stem().string();
        info.name = stem == "encoder" || stem == "decoder" || stem == "cross" ? stem : "self";
        info.layers = static_cast<int>(layers);
        info.heads = info.kvHeads = static_cast<int>(heads);
        info.causal = causal;
        info.queryTokens = labels.queries;
        info.keyTokens = labels.keys;
        impl->infos.push_back(std::move(info));
        BlockCapture block;
        for (std::int64_t l = 0; l < layers; ++l) {
            LayerCapture c;
            c.maps = all[l];
            // Zero-width q and k carry the map's shape for code that reads it from them; they
            // hold nothing to compute with (Trace::mapsOnly).
            c.q = at::empty({heads, n, 0}, at::kFloat);
            c.k = at::empty({heads, m, 0}, at::kFloat);
            c.mask.causal = causal;
            block.layers.push_back(std::move(c));
        }
        impl->blocks.push_back(std::move(block));
        return std::make_shared<const Trace>(std::move(impl));
    });
}

}  // namespace attnscope
