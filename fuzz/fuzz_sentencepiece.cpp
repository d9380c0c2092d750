// SentencePiece model files, read by Tokenizer::fromFolder through libsentencepiece. The input's
// first byte picks the folder layout (0: T5's spiece.model, 1: Llama's tokenizer.model, 2: XLM-R's
// sentencepiece.bpe.model, 3: Marian's source.spm with a fixed four-token vocab.json, so mostly
// the check that vocab.json covers the pieces); the rest is the model file. libsentencepiece is
// not instrumented: coverage guides through our reader, and ASan sees the library's wild accesses
// only when they reach instrumented memory or crash.
#include "fuzz_util.h"

#include "attnscope/runtime/error.h"
#include "attnscope/tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace attnscope;
    if (size == 0) return 0;
    static const auto folder = [] {
        auto d = fuzz::scratch() / "sentencepiece";
        std::filesystem::create_directories(d);
        return d;
    }();
    static const char* const names[] = {"spiece.model", "tokenizer.model", "sentencepiece.bpe.model", "source.spm"};
    for (const char* f : names) std::filesystem::remove(folder / f);
    std::filesystem::remove(folder / "vocab.json");
    const std::size_t layout = data[0] % 4;
    fuzz::writeBytes(folder / names[layout], fuzz::asView(data + 1, size - 1));
    if (layout == 3) fuzz::writeBytes(folder / "vocab.json", R"({"</s>": 0, "<unk>": 1, "<pad>": 2, ">>fr<<": 3})");
    static const char* const texts[] = {"Hello world, unaffable héllo!", "  ＦＵＬＬ ﬁ\u00a0日本語 😀\t\n",
                                        "</s> <s> <extra_id_0> <mask>", ""};
    try {
        const auto tokenizer = Tokenizer::fromFolder(folder);
        if (tokenizer) {
            for (const char* text : texts) {
                const Encoding e = tokenizer->encode(text);
                tokenizer->decode(e.ids);
                tokenizer->decode(e.ids, true);
                tokenizer->displayTokens(e.ids);
                for (const auto& t : e.tokens) tokenizer->tokenToId(t);
            }
            for (std::int64_t id = 0; id < std::min<std::int64_t>(tokenizer->vocabSize(), 64); ++id)
                tokenizer->idToToken(id);
        }
    } catch (const Error&) {
    }
    return 0;
}
