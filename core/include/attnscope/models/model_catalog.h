// The models on this machine, for a model browser: model folders (recent ones and the folders a
// user points at), the Hugging Face hub cache, GGUF files in LM Studio's and Ollama's stores, and
// the built-in models. Each entry says what it is (family, parameters, dtype or quantisation,
// size on disk) and whether Model::load can open it, or why not.
//
// Only headers and configs are read, never whole weights: config.json, safetensors headers, the
// pickle of a torch.save file, a GGUF file's metadata and tensor index (the files are mapped, and
// only the pages holding those are touched). Nothing throws: an entry that cannot be described
// carries the one-line reason instead.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace attnscope {

struct CatalogEntry {
    std::string name;            // "org/name" (hub), "llama3:8b" (Ollama), the folder's or file's name
    std::string source;          // "recent", "folder", "hub", "lmstudio", "ollama" or "builtin"
    std::string spec;            // what to open: a path, a hub model id, "ollama:NAME:TAG" or "builtin:NAME"
    std::filesystem::path path;  // the folder or file on disk (empty when it could not be resolved)
    std::string family;          // config.json model_type, or the GGUF general.architecture
    // Values stored in the weight files (0 when unknown): a weight stored twice (an untied copy of
    // the embedding as the head) or a buffer (GPT-2's attention masks in a .bin) counts as stored,
    // so this can exceed ModelInfo::parameters, which counts what the model uses.
    std::int64_t parameters = 0;
    std::string dtype;        // "BF16", "F32", "mixed"; GGUF: llama.cpp's file type ("Q4_K_M")
    std::uint64_t bytes = 0;  // on disk: the weight files, config and tokenizer (symlinks followed)
    bool openable = false;
    std::string reason;  // why it cannot be opened (one line), empty when openable
};

struct CatalogSources {
    std::vector<std::string> recents;             // specs opened before (paths, ids, ollama:…)
    std::vector<std::filesystem::path> folders;   // a model folder each, or folders holding models
    std::filesystem::path hubCache;               // the hub cache folder; empty: not scanned
    std::vector<std::filesystem::path> lmStudio;  // LM Studio's model folders
    std::filesystem::path ollama;                 // Ollama's store root; empty: not scanned
    bool builtins = true;
};

// What this machine has: hubCache() (model_location.h), ~/.lmstudio/models and
// ~/.cache/lm-studio/models, ollamaRoot(); recents and folders as given.
CatalogSources defaultCatalogSources(std::vector<std::string> recents = {},
                                     std::vector<std::filesystem::path> folders = {});

// One model argument (anything resolveModelLocation takes) described; never throws.
CatalogEntry describeModel(const std::string& spec, const std::string& source = "folder");

// Every model the sources hold, in the order recents, folders, hub, LM Studio, Ollama, built-ins;
// a model found twice (a recent folder that is also a hub snapshot) is listed once, first where it
// was found. Folders are searched three levels deep for model folders (a config.json) and *.gguf
// files; hidden folders are skipped. Never throws.
std::vector<CatalogEntry> scanModels(const CatalogSources& sources);

// llama.cpp's name of a GGUF general.file_type (LLAMA_FTYPE_MOSTLY_Q4_K_M = 15 -> "Q4_K_M"), or
// empty for an id it does not define.
std::string ggufFileTypeName(std::int64_t fileType);

}  // namespace attnscope
