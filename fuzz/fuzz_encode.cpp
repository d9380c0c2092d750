// Encoding arbitrary text with the real tokenizers of tests/data (GPT-2, BERT, Llama-2, Llama-3,
// Unigram, affix BPE): the first byte picks one, the rest is the text (invalid UTF-8 is refused
// with an attnscope::Error). The ids are decoded and labelled again.
#include "fuzz_util.h"

#include "attnscope/runtime/error.h"
#include "attnscope/tokenizer/tokenizer.h"

#include <memory>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace attnscope;
    static const auto tokenizers = [] {
        std::vector<std::unique_ptr<Tokenizer>> t;
        for (const char* name :
             {"gpt2.json", "bert-uncased.json", "llama2.json", "llama3.json", "unigram.json", "affix-bpe.json"})
            t.push_back(Tokenizer::fromFile(std::filesystem::path(ATTNSCOPE_TOKENIZER_DATA) / name));
        return t;
    }();
    if (size == 0) return 0;
    const Tokenizer& tokenizer = *tokenizers[data[0] % tokenizers.size()];
    try {
        const std::string text(fuzz::asView(data + 1, size - 1));
        const Encoding e = tokenizer.encode(text, (data[0] & 0x80) != 0);
        tokenizer.decode(e.ids);
        tokenizer.displayTokens(e.ids);
    } catch (const Error&) {
    }
    return 0;
}
