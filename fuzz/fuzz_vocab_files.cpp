// The legacy tokenizer files older checkpoints ship, read by Tokenizer::fromFolder. The input's
// first line says which: "bpe" (then vocab.json, merges.txt, tokenizer_config.json) or
// "wordpiece" (then vocab.txt, tokenizer_config.json), the parts separated by lines "#=====#".
#include "fuzz_util.h"

#include "attnscope/runtime/error.h"
#include "attnscope/tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace attnscope;
    static const auto folder = [] {
        auto d = fuzz::scratch() / "legacy";
        std::filesystem::create_directories(d);
        return d;
    }();
    const auto parts = fuzz::splitParts(fuzz::asView(data, size), "\n#=====#\n");
    for (const char* f : {"tokenizer.json", "vocab.json", "merges.txt", "vocab.txt", "tokenizer_config.json"})
        std::filesystem::remove(folder / f);
    const bool bpe = parts[0] == "bpe";
    const std::vector<const char*> files =
            bpe ? std::vector<const char*>{"vocab.json", "merges.txt", "tokenizer_config.json"}
                : std::vector<const char*>{"vocab.txt", "tokenizer_config.json"};
    for (std::size_t i = 0; i < files.size() && i + 1 < parts.size(); ++i)
        fuzz::writeBytes(folder / files[i], parts[i + 1]);
    try {
        const auto tokenizer = Tokenizer::fromFolder(folder);
        if (tokenizer) {
            const Encoding e = tokenizer->encode("Hello world, unaffable héllo!");
            tokenizer->decode(e.ids);
            tokenizer->displayTokens(e.ids);
        }
    } catch (const Error&) {
    }
    return 0;
}
