// tokenizer.json: Tokenizer::fromJson builds the whole pipeline (normalizers, pre-tokenizers,
// BPE/WordPiece/Unigram models, added tokens, post-processors, decoders); a tokenizer that
// loads then encodes, decodes and labels a few fixed texts.
#include "fuzz_util.h"

#include "attnscope/runtime/error.h"
#include "attnscope/tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace attnscope;
    try {
        const auto tokenizer = Tokenizer::fromJson(std::string(fuzz::asView(data, size)), "tokenizer.json");
        for (const char* text : {"Hello world, it's 2026!", "  héllo\tnaïve 東京 ▁x ##ab </w>", "[CLS] <s> a", ""}) {
            const Encoding e = tokenizer->encode(text);
            tokenizer->decode(e.ids);
            tokenizer->decode(e.ids, true);
            tokenizer->displayTokens(e.ids);
        }
    } catch (const Error&) {
    }
    return 0;
}
