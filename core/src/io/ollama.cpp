// ollama:NAME[:TAG] to the GGUF blob Ollama's store holds for it (model_location.h). The store
// (Ollama's server/modelpath.go and manifest.go): $OLLAMA_MODELS, else ~/.ollama/models;
// manifests/registry.ollama.ai/library/NAME/TAG (NAMESPACE/NAME for a name with a '/') is an OCI
// manifest whose layer of mediaType application/vnd.ollama.image.model names the weights'
// digest "sha256:HEX", stored as blobs/sha256-HEX.
#include "attnscope/io/input_file.h"
#include "attnscope/io/model_location.h"
#include "attnscope/runtime/error.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <cstdlib>

namespace attnscope {

namespace fs = std::filesystem;

namespace {

bool ollamaPart(const std::string& p) {
    if (p.empty() || p.size() > 128 || p.front() == '.' || p.find("..") != std::string::npos) return false;
    for (char c : p)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) return false;
    return true;
}

}  // namespace

fs::path ollamaRoot() {
    if (const char* env = std::getenv("OLLAMA_MODELS"); env && *env) return env;
    const char* home = std::getenv("HOME");
    return fs::path(home && *home ? home : ".") / ".ollama" / "models";
}

fs::path ollamaModel(const std::string& spec) { return ollamaModel(spec, ollamaRoot()); }

fs::path ollamaModel(const std::string& spec, const fs::path& root) {
    static const std::string prefix = "ollama:";
    std::string rest = spec.rfind(prefix, 0) == 0 ? spec.substr(prefix.size()) : spec;
    std::string tag = "latest";
    if (const auto colon = rest.find(':'); colon != std::string::npos) {
        tag = rest.substr(colon + 1);
        rest = rest.substr(0, colon);
    }
    std::string ns = "library", name = rest;
    if (const auto slash = rest.find('/'); slash != std::string::npos) {
        ns = rest.substr(0, slash);
        name = rest.substr(slash + 1);
    }
    if (!ollamaPart(ns) || !ollamaPart(name) || !ollamaPart(tag))
        throw Error(spec + ": not an Ollama model name (ollama:NAME[:TAG], letters, digits, '-', '_', '.')");
    const fs::path manifest = root / "manifests" / "registry.ollama.ai" / ns / name / tag;
    std::error_code ec;
    if (!fs::exists(manifest, ec)) throw Error(spec + ": no such Ollama model (looked for " + manifest.string() + ")");
    nlohmann::json m;
    try {
        m = nlohmann::json::parse(readInputFile(manifest, kMaxJsonFileBytes, "manifest"));
    } catch (const nlohmann::json::exception& e) {
        throw Error(manifest.string() + ": not valid JSON (" + std::string(e.what()) + ")");
    }
    const auto layers = m.is_object() ? m.find("layers") : m.end();
    if (!m.is_object() || layers == m.end() || !layers->is_array())
        throw Error(manifest.string() + ": not an Ollama manifest (no 'layers' list)");
    for (const auto& layer : *layers) {
        if (!layer.is_object() || layer.value("mediaType", nlohmann::json()) != "application/vnd.ollama.image.model")
            continue;
        const auto digest = layer.value("digest", nlohmann::json());
        const std::string d = digest.is_string() ? digest.get<std::string>() : "";
        bool hex = d.size() == 7 + 64 && d.compare(0, 7, "sha256:") == 0;
        for (std::size_t i = 7; hex && i < d.size(); ++i) hex = std::isxdigit(static_cast<unsigned char>(d[i])) != 0;
        if (!hex)
            throw Error(manifest.string() + ": the model layer's digest must be sha256:<64 hex digits>, found " +
                        (digest.is_string() ? "'" + d + "'" : digest.dump()));
        const fs::path blob = root / "blobs" / ("sha256-" + d.substr(7));
        if (!fs::is_regular_file(blob, ec))
            throw Error(spec + ": the model's blob is missing (looked for " + blob.string() + ")");
        return blob;
    }
    throw Error(manifest.string() + ": no layer of mediaType application/vnd.ollama.image.model");
}

}  // namespace attnscope
