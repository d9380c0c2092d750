// Model arguments to folders (model_location.h): local paths first, then the hub cache laid out
// as huggingface_hub's file_download.py writes it (models--ORG--NAME/{refs,snapshots,blobs}).
#include "attnscope/io/model_location.h"

#include "attnscope/io/gguf.h"
#include "attnscope/io/torch_checkpoint.h"
#include "attnscope/runtime/error.h"

#include <cctype>
#include <cstdlib>
#include <fstream>

namespace attnscope {

namespace fs = std::filesystem;

namespace {

std::string env(const char* name) {
    const char* v = std::getenv(name);
    return v && *v ? std::string(v) : std::string();
}

bool idPart(const std::string& p) {
    if (p.empty() || p.size() > 96) return false;
    for (char c : p)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) return false;
    const auto edge = [](char c) { return c == '-' || c == '.'; };
    return !edge(p.front()) && !edge(p.back()) && p.find("--") == std::string::npos &&
           p.find("..") == std::string::npos;
}

// A ref name as git allows it in a path under refs/ (no "..", no leading or trailing '/').
bool refName(const std::string& r) {
    if (r.empty() || r.size() > 200 || r.front() == '/' || r.back() == '/' || r.find("..") != std::string::npos)
        return false;
    for (char c : r)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '/'))
            return false;
    return true;
}

bool commitHash(const std::string& s) {
    if (s.size() != 40) return false;
    for (char c : s)
        if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
    return true;
}

bool endsWith(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// A file of a model folder that is not its tokenizer.
bool isModelFile(const fs::path& file) {
    const std::string name = file.filename().string();
    if (endsWith(name, ".safetensors") || name == "config.json" || endsWith(name, ".index.json")) return true;
    return looksLikeTorchCheckpoint(file);
}

}  // namespace

HubCache hubCache() {
    if (const auto v = env("HF_HUB_CACHE"); !v.empty()) return {v, "$HF_HUB_CACHE"};
    if (const auto v = env("HF_HOME"); !v.empty()) return {fs::path(v) / "hub", "$HF_HOME"};
    if (const auto v = env("XDG_CACHE_HOME"); !v.empty())
        return {fs::path(v) / "huggingface" / "hub", "$XDG_CACHE_HOME"};
    return {fs::path(env("HOME")) / ".cache" / "huggingface" / "hub", "$HOME"};
}

bool isModelId(const std::string& spec) {
    const auto slash = spec.find('/');
    if (slash == std::string::npos) return idPart(spec);
    return spec.find('/', slash + 1) == std::string::npos && idPart(spec.substr(0, slash)) &&
           idPart(spec.substr(slash + 1));
}

fs::path hubSnapshot(const std::string& id, const std::string& revision) {
    return hubSnapshot(hubCache(), id, revision);
}

fs::path hubSnapshot(const HubCache& cache, const std::string& id, const std::string& revision) {
    if (!isModelId(id)) throw Error(id + ": not a Hugging Face model id (org/name)");
    std::string folder = "models--" + id;
    if (const auto slash = folder.find('/'); slash != std::string::npos) folder.replace(slash, 1, "--");
    const fs::path repo = cache.dir / folder;
    std::error_code ec;
    if (!fs::is_directory(repo, ec))
        throw Error(id + ": no such model folder, and not in the Hugging Face cache (looked for " + repo.string() +
                    ", the cache from " + cache.from + "); nothing is downloaded");

    const std::string rev = revision.empty() ? "main" : revision;
    std::string commit;
    if (refName(rev) && fs::is_regular_file(repo / "refs" / rev, ec)) {
        std::ifstream in(repo / "refs" / rev);
        std::getline(in, commit);
        while (!commit.empty() && std::isspace(static_cast<unsigned char>(commit.back()))) commit.pop_back();
        if (!commitHash(commit))
            throw Error((repo / "refs" / rev).string() + ": not a commit hash (40 hexadecimal digits)");
    } else if (commitHash(rev)) {
        commit = rev;
    } else {
        throw Error(id + ": revision '" + rev + "' is not in the Hugging Face cache (looked for " +
                    (repo / "refs" / rev).string() + ")");
    }
    const fs::path snapshot = repo / "snapshots" / commit;
    if (!fs::is_directory(snapshot, ec))
        throw Error(id + ": revision '" + rev + "' has no snapshot in the Hugging Face cache (looked for " +
                    snapshot.string() + ")");
    // A link into blobs/ whose blob is gone: an interrupted download.
    const fs::path config = snapshot / "config.json";
    if (fs::is_symlink(config, ec) && !fs::exists(config, ec))
        throw Error(config.string() + ": links to a missing blob (" + fs::read_symlink(config, ec).string() +
                    "): the download is incomplete");
    return snapshot;
}

fs::path resolveModelLocation(const std::string& spec, const std::string& revision) {
    if (spec.rfind("builtin:", 0) == 0) {
        if (!revision.empty()) throw Error("--revision applies to Hugging Face model ids, not to " + spec);
        return spec;
    }
    if (spec.rfind("ollama:", 0) == 0) {
        if (!revision.empty()) throw Error("--revision applies to Hugging Face model ids, not to " + spec);
        return ollamaModel(spec);
    }
    std::error_code ec;
    if (fs::exists(spec, ec)) {
        if (!revision.empty())
            throw Error("--revision applies to Hugging Face model ids; " + spec + " is a local path");
        const fs::path path(spec);
        if (looksLikeGguf(path)) return path;  // a model in one file
        if (fs::is_regular_file(path, ec) && (isModelFile(path) || isTokenizerFile(path))) {
            const fs::path parent = path.parent_path();
            return parent.empty() ? fs::path(".") : parent;
        }
        return path;
    }
    if (!isModelId(spec)) return spec;  // Model::load says "no such model folder"
    return hubSnapshot(spec, revision);
}

bool isTokenizerFile(const fs::path& file) {
    const std::string name = file.filename().string();
    if (name == "tokenizer.json" || name == "vocab.json" || name == "merges.txt" || name == "vocab.txt" ||
        endsWith(name, ".spm") || endsWith(name, ".model"))
        return true;
    return false;
}

}  // namespace attnscope
