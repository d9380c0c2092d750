// Ollama manifests (model_location.h's ollamaModel): the input is the manifest of
// ollama:tiny:latest in a store under the scratch folder whose blobs/ holds one blob, so a
// manifest naming its digest resolves and every other one is refused with one line.
#include "fuzz_util.h"

#include "attnscope/io/model_location.h"
#include "attnscope/runtime/error.h"

#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace attnscope;
    static const std::filesystem::path root = [] {
        const auto r = fuzz::scratch() / "ollama";
        std::filesystem::create_directories(r / "manifests/registry.ollama.ai/library/tiny");
        std::filesystem::create_directories(r / "blobs");
        fuzz::writeBytes(r / "blobs" / ("sha256-" + std::string(64, 'a')), "GGUF");
        ::setenv("OLLAMA_MODELS", r.c_str(), 1);
        return r;
    }();
    fuzz::writeBytes(root / "manifests/registry.ollama.ai/library/tiny/latest", fuzz::asView(data, size));
    try {
        ollamaModel("ollama:tiny");
    } catch (const Error&) {
    }
    return 0;
}
