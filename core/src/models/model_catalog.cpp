// The model browser's list (model_catalog.h): each location described from its headers only.
#include "attnscope/models/model_catalog.h"

#include "attnscope/io/gguf.h"
#include "attnscope/io/model_location.h"
#include "attnscope/io/safetensors.h"
#include "attnscope/io/torch_checkpoint.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"
#include "families.h"
#include "io/json_util.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

namespace attnscope {

namespace fs = std::filesystem;

namespace {

constexpr int kFolderDepth = 3;
constexpr int kMaxVisited = 4000;  // directories one folder search looks into

bool hasSuffix(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::uint64_t fileBytes(const fs::path& p) {
    std::error_code ec;
    const auto n = fs::file_size(p, ec);  // follows symlinks (hub snapshots link into blobs/)
    return ec ? 0 : n;
}

// The regular files of a folder (not its subfolders), symlinks followed.
std::uint64_t folderBytes(const fs::path& dir) {
    std::uint64_t total = 0;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
        if (fs::is_regular_file(e.path(), ec)) total += fileBytes(e.path());
    return total;
}

// Parameters and the dtype of a set of tensors (float ones; I64 buffers are not weights).
struct Tally {
    std::int64_t parameters = 0;
    std::set<std::string> dtypes;
    template <class Tensors>
    void add(const Tensors& tensors) {
        for (const TensorInfo& t : tensors) {
            if (t.dtype == DType::I64) continue;
            parameters += t.numel();
            dtypes.insert(dtypeName(t.dtype));
        }
    }
    std::string dtype() const { return dtypes.size() == 1 ? *dtypes.begin() : dtypes.empty() ? "" : "mixed"; }
};

// The weight files of a folder as WeightStore picks them: safetensors first, then .bin; single
// file or the shards its index names.
void tallyWeights(const fs::path& dir, Tally& tally) {
    std::error_code ec;
    for (const bool torch : {false, true}) {
        const fs::path single = dir / (torch ? "pytorch_model.bin" : "model.safetensors");
        const fs::path index(single.string() + ".index.json");
        std::vector<fs::path> files;
        if (fs::exists(single, ec)) {
            files.push_back(single);
        } else if (fs::exists(index, ec)) {
            const auto json = readJsonObject(index);
            const auto map = json.find("weight_map");
            if (map == json.end() || !map->is_object())
                throw Error(index.string() + ": 'weight_map' must be an object {tensor: shard file}");
            std::set<std::string> shards;
            for (const auto& shard : *map)
                if (shard.is_string()) shards.insert(shard.get<std::string>());
            for (const auto& s : shards) {
                if (s.find('/') != std::string::npos || s == ".." || !fs::is_regular_file(dir / s, ec))
                    throw Error(index.string() + ": shard '" + s + "' is missing from the folder");
                files.push_back(dir / s);
            }
        } else {
            continue;
        }
        for (const auto& f : files) {
            if (torch)
                tally.add(TorchCheckpoint::open(f)->tensors());
            else
                tally.add(SafetensorsFile::open(f)->tensors());
        }
        return;
    }
    throw Error("no weights: no model.safetensors or pytorch_model.bin (or their .index.json) in " + dir.string());
}

void describeFolder(const fs::path& dir, CatalogEntry& e) {
    e.bytes = folderBytes(dir);
    const fs::path configFile = dir / "config.json";
    std::error_code ec;
    if (!fs::exists(configFile, ec)) throw Error(dir.string() + ": no config.json, so it is not a model folder");
    const JsonConfig config(readJsonObject(configFile), configFile);
    e.family = config.string("model_type", std::string());
    Tally tally;
    tallyWeights(dir, tally);
    e.parameters = tally.parameters;
    e.dtype = tally.dtype();
    if (e.family.empty()) throw Error(configFile.string() + ": no model_type");
    if (!familyLoader(e.family))
        throw Error("model_type '" + e.family + "' is not supported (supported: " + supportedFamilies() + ")");
}

// The file's type as llama.cpp names it, else the type holding most of the bytes.
std::string ggufDtype(const GgufFile& f) {
    if (const auto* v = f.value("general.file_type"); v && v->isInteger())
        if (auto name = ggufFileTypeName(v->integer); !name.empty()) return name;
    std::map<std::string, std::uint64_t> bytes;
    for (const GgufTensor& t : f.tensors()) bytes[ggmlTypeName(t.type)] += t.bytes;
    std::string best;
    std::uint64_t most = 0;
    for (const auto& [name, n] : bytes)
        if (n > most) best = name, most = n;
    return best;
}

void describeGguf(const fs::path& file, CatalogEntry& e) {
    e.bytes = fileBytes(file);
    const auto f = GgufFile::open(file);
    if (const auto* v = f->value("general.architecture"); v && v->type == GgufType::String) e.family = v->text;
    for (const GgufTensor& t : f->tensors()) e.parameters += t.numel();
    e.dtype = ggufDtype(*f);
    e.reason = ggufUnsupported(*f);
}

std::string displayName(const fs::path& p) {
    const fs::path clean = p.filename().empty() ? p.parent_path() : p;
    return clean.filename().string();
}

// Describes what `path` is; fills e.reason instead of throwing.
void describePath(const fs::path& path, CatalogEntry& e) {
    e.path = path;
    try {
        std::error_code ec;
        if (looksLikeGguf(path)) {
            describeGguf(path, e);
        } else if (fs::is_directory(path, ec)) {
            describeFolder(path, e);
        } else if (fs::exists(path, ec)) {
            throw Error(path.string() + ": not a model folder or a GGUF file");
        } else {
            throw Error(path.string() + ": no such file or folder");
        }
    } catch (const std::exception& err) {
        if (e.reason.empty()) e.reason = err.what();
    }
    e.openable = e.reason.empty();
}

CatalogEntry entryFor(const std::string& name, const std::string& source, const std::string& spec,
                      const fs::path& path) {
    CatalogEntry e;
    e.name = name;
    e.source = source;
    e.spec = spec;
    describePath(path, e);
    return e;
}

class Collector {
public:
    void add(CatalogEntry e) {
        std::error_code ec;
        const std::string key = e.path.empty() ? e.spec : fs::weakly_canonical(e.path, ec).string();
        if (seen_.insert(key).second) entries_.push_back(std::move(e));
    }
    std::vector<CatalogEntry> take() { return std::move(entries_); }

    // Model folders and GGUF files under root, depth levels deep.
    void searchFolder(const fs::path& root, const std::string& source, int depth, int& visited) {
        std::error_code ec;
        if (fs::exists(root / "config.json", ec)) {
            add(entryFor(displayName(root), source, root.string(), root));
            return;
        }
        if (depth < 0 || ++visited > kMaxVisited) return;
        std::vector<fs::path> children;
        for (const auto& c : fs::directory_iterator(root, fs::directory_options::skip_permission_denied, ec))
            children.push_back(c.path());
        std::sort(children.begin(), children.end());
        for (const fs::path& c : children) {
            const std::string name = c.filename().string();
            if (name.empty() || name[0] == '.') continue;
            if (fs::is_directory(c, ec))
                searchFolder(c, source, depth - 1, visited);
            else if (hasSuffix(name, ".gguf") && fs::is_regular_file(c, ec))
                add(entryFor(c.stem().string(), source, c.string(), c));
        }
    }

    void searchHub(const fs::path& cache);
    void searchOllama(const fs::path& root);

private:
    std::vector<CatalogEntry> entries_;
    std::set<std::string> seen_;
};

// models--ORG--NAME/ folders: the snapshot refs/main names (else the newest snapshot); a snapshot
// without config.json but with GGUF files lists each file.
void Collector::searchHub(const fs::path& cache) {
    std::error_code ec;
    std::vector<fs::path> repos;
    for (const auto& c : fs::directory_iterator(cache, ec))
        if (c.path().filename().string().rfind("models--", 0) == 0 && fs::is_directory(c.path(), ec))
            repos.push_back(c.path());
    std::sort(repos.begin(), repos.end());
    for (const fs::path& repo : repos) {
        std::string id = repo.filename().string().substr(8);
        if (const auto dash = id.find("--"); dash != std::string::npos) id.replace(dash, 2, "/");
        fs::path snapshot;
        std::string spec = id, reason;
        if (fs::exists(repo / "refs" / "main", ec)) {
            try {
                snapshot = hubSnapshot(HubCache{cache, "the scanned cache"}, id);
                if (fs::path(hubCache().dir) != cache) spec = snapshot.string();  // an id names $HF_HUB_CACHE's
            } catch (const Error& err) {
                reason = err.what();
            }
        } else {  // no main ref (a download by commit or branch): the newest snapshot, by path
            fs::file_time_type newest{};
            for (const auto& s : fs::directory_iterator(repo / "snapshots", ec))
                if (fs::is_directory(s.path(), ec) && (snapshot.empty() || fs::last_write_time(s.path(), ec) > newest))
                    snapshot = s.path(), newest = fs::last_write_time(s.path(), ec);
            spec = snapshot.string();
        }
        if (snapshot.empty() || !reason.empty()) {
            CatalogEntry e;
            e.name = id, e.source = "hub", e.spec = id, e.path = repo;
            e.reason = reason.empty() ? "no snapshot in " + (repo / "snapshots").string() : reason;
            add(std::move(e));
            continue;
        }
        if (!fs::exists(snapshot / "config.json", ec)) {
            std::vector<fs::path> ggufs;
            for (const auto& f : fs::directory_iterator(snapshot, ec))
                if (hasSuffix(f.path().filename().string(), ".gguf")) ggufs.push_back(f.path());
            std::sort(ggufs.begin(), ggufs.end());
            for (const fs::path& g : ggufs) add(entryFor(id + "/" + g.filename().string(), "hub", g.string(), g));
            if (!ggufs.empty()) continue;
        }
        add(entryFor(id, "hub", spec, snapshot));
    }
}

// manifests/registry.ollama.ai/NAMESPACE/NAME/TAG -> ollama:NAME:TAG (NAMESPACE/NAME outside library).
void Collector::searchOllama(const fs::path& root) {
    std::error_code ec;
    const fs::path registry = root / "manifests" / "registry.ollama.ai";
    std::vector<std::string> names;
    for (const auto& ns : fs::directory_iterator(registry, ec))
        for (const auto& model : fs::directory_iterator(ns.path(), ec))
            for (const auto& tag : fs::directory_iterator(model.path(), ec)) {
                if (!fs::is_regular_file(tag.path(), ec)) continue;
                const std::string n = ns.path().filename().string();
                names.push_back((n == "library" ? "" : n + "/") + model.path().filename().string() + ":" +
                                tag.path().filename().string());
            }
    std::sort(names.begin(), names.end());
    for (const std::string& name : names) {
        CatalogEntry e;
        e.name = name, e.source = "ollama", e.spec = "ollama:" + name;
        try {
            const fs::path blob = ollamaModel(e.spec, root);
            if (fs::path(ollamaRoot()) != root) e.spec = blob.string();  // ollama:NAME names $OLLAMA_MODELS's
            describePath(blob, e);
        } catch (const Error& err) {
            e.reason = err.what();
            e.openable = false;
        }
        add(std::move(e));
    }
}

std::string envOr(const char* name, const std::string& fallback) {
    const char* v = std::getenv(name);
    return v && *v ? std::string(v) : fallback;
}

}  // namespace

std::string ggufFileTypeName(std::int64_t t) {
    // llama.h's enum llama_ftype (LLAMA_FTYPE_MOSTLY_*); 4-6 and 33-35 are retired ids.
    static const std::map<std::int64_t, const char*> names = {
            {0, "F32"},     {1, "F16"},     {2, "Q4_0"},      {3, "Q4_1"},    {7, "Q8_0"},     {8, "Q5_0"},
            {9, "Q5_1"},    {10, "Q2_K"},   {11, "Q3_K_S"},   {12, "Q3_K_M"}, {13, "Q3_K_L"},  {14, "Q4_K_S"},
            {15, "Q4_K_M"}, {16, "Q5_K_S"}, {17, "Q5_K_M"},   {18, "Q6_K"},   {19, "IQ2_XXS"}, {20, "IQ2_XS"},
            {21, "Q2_K_S"}, {22, "IQ3_XS"}, {23, "IQ3_XXS"},  {24, "IQ1_S"},  {25, "IQ4_NL"},  {26, "IQ3_S"},
            {27, "IQ3_M"},  {28, "IQ2_S"},  {29, "IQ2_M"},    {30, "IQ4_XS"}, {31, "IQ1_M"},   {32, "BF16"},
            {36, "TQ1_0"},  {37, "TQ2_0"},  {38, "MXFP4_MOE"}};
    const auto it = names.find(t);
    return it == names.end() ? std::string() : it->second;
}

CatalogSources defaultCatalogSources(std::vector<std::string> recents, std::vector<fs::path> folders) {
    CatalogSources s;
    s.recents = std::move(recents);
    s.folders = std::move(folders);
    s.hubCache = hubCache().dir;
    const fs::path home = envOr("HOME", ".");
    s.lmStudio = {home / ".lmstudio" / "models", home / ".cache" / "lm-studio" / "models"};
    s.ollama = ollamaRoot();
    return s;
}

CatalogEntry describeModel(const std::string& spec, const std::string& source) {
    CatalogEntry e;
    e.source = source;
    e.spec = spec;
    e.name = spec.rfind("builtin:", 0) == 0 || spec.rfind("ollama:", 0) == 0 ? spec : displayName(spec);
    try {
        fs::path path = resolveModelLocation(spec);
        if (spec.rfind("builtin:", 0) == 0) path = resolveModelPath(spec);
        std::error_code ec;
        if (!fs::exists(spec, ec) && isModelId(spec)) e.name = spec;  // a hub id
        describePath(path, e);
    } catch (const std::exception& err) {
        e.reason = err.what();
        e.openable = false;
    }
    return e;
}

std::vector<CatalogEntry> scanModels(const CatalogSources& sources) {
    Collector c;
    for (const std::string& spec : sources.recents) c.add(describeModel(spec, "recent"));
    for (const fs::path& folder : sources.folders) {
        int visited = 0;
        c.searchFolder(folder, "folder", kFolderDepth, visited);
    }
    std::error_code ec;
    if (!sources.hubCache.empty() && fs::is_directory(sources.hubCache, ec)) c.searchHub(sources.hubCache);
    for (const fs::path& root : sources.lmStudio) {
        int visited = 0;
        if (fs::is_directory(root, ec)) c.searchFolder(root, "lmstudio", kFolderDepth, visited);
    }
    if (!sources.ollama.empty() && fs::is_directory(sources.ollama, ec)) c.searchOllama(sources.ollama);
    if (sources.builtins)
        for (const BuiltinModel& b : builtinModels()) c.add(entryFor(b.name, "builtin", "builtin:" + b.name, b.folder));
    return c.take();
}

}  // namespace attnscope
