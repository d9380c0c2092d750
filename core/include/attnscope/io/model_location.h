// What a MODEL argument names, offline: a model folder, a file inside one, or a Hugging Face
// model id found in the local hub cache. Nothing is ever downloaded.
//
// The hub cache is huggingface_hub's: $HF_HUB_CACHE, else $HF_HOME/hub, else
// $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub. A model id "org/name" (or
// "name") lives in models--org--name/ (models--name/): refs/REF holds the commit a ref names
// (main unless a revision is given), snapshots/COMMIT/ the files, as symlinks into blobs/ or as
// plain copies. A revision is a ref (main, a branch or tag name, refs/pr/1 as "pr/1") or a
// 40-digit commit hash with a snapshot folder.
#pragma once

#include <filesystem>
#include <string>

namespace attnscope {

struct HubCache {
    std::filesystem::path dir;  // the cache folder (it may not exist)
    std::string from;           // what chose it: "$HF_HUB_CACHE", "$HF_HOME", "$XDG_CACHE_HOME", "$HOME"
};
HubCache hubCache();

// True when `spec` has the shape of a hub model id ("name" or "org/name": letters, digits, '-',
// '_', '.', at most 96 each, no "--" or "..", not starting or ending with '-' or '.').
bool isModelId(const std::string& spec);

// The snapshot folder of `id` at `revision` (empty = main). Throws attnscope::Error (one line,
// naming where it looked) when the cache, the model, the ref or the snapshot is missing.
std::filesystem::path hubSnapshot(const std::string& id, const std::string& revision = {});
// The same in a given cache folder (the model browser scans one it was handed).
std::filesystem::path hubSnapshot(const HubCache& cache, const std::string& id, const std::string& revision = {});

// The folder a MODEL argument opens:
//   builtin:NAME          -> unchanged (Model::load resolves it);
//   ollama:NAME[:TAG]     -> ollamaModel(spec), a GGUF blob;
//   an existing folder    -> itself;
//   a GGUF file (by its magic, whatever its name) -> itself;
//   an existing file      -> the folder it belongs to when it is one of a model's files (any
//                            *.safetensors, a torch.save checkpoint recognised by its content,
//                            config.json, *.index.json, a tokenizer file), else unchanged;
//   otherwise a model id  -> hubSnapshot(spec, revision).
// An existing path wins over an id. A spec that is neither an existing path nor an id is returned
// unchanged (Model::load then names it). A revision with a path throws attnscope::Error.
std::filesystem::path resolveModelLocation(const std::string& spec, const std::string& revision = {});

// Ollama's model store: $OLLAMA_MODELS, else ~/.ollama/models.
std::filesystem::path ollamaRoot();
// The blob of `spec` ("ollama:NAME[:TAG]" or "NAME[:TAG]"; TAG defaults to latest; a NAME with a
// '/' is NAMESPACE/NAME, else library/NAME): the manifest
// ROOT/manifests/registry.ollama.ai/library/NAME/TAG, its layer of mediaType
// application/vnd.ollama.image.model, ROOT/blobs/sha256-HEX. Throws attnscope::Error (one line,
// naming where it looked) when the manifest, its model layer or the blob is missing or malformed.
std::filesystem::path ollamaModel(const std::string& spec);
// The same in a given store root (the model browser scans one it was handed).
std::filesystem::path ollamaModel(const std::string& spec, const std::filesystem::path& root);

// True when `file` is named as a model folder's tokenizer file: tokenizer.json, a SentencePiece
// model (*.model, *.spm), vocab.json, merges.txt or vocab.txt.
bool isTokenizerFile(const std::filesystem::path& file);

}  // namespace attnscope
