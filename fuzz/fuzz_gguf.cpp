// GGUF files (gguf.h): the header, metadata of every type, tensor infos, alignment and offsets
// (GgufFile::open), every tensor's bytes touched so an offset past the mapping shows up under
// ASan, the supported block types dequantised row by row (the streamed path), and the tokenizer
// built from tokenizer.ggml.* (Tokenizer::fromPath on the same file). Seeds: small files of each
// block type and both tokenizer kinds (fuzz/seeds/gguf, written by fuzz/seeds/make_gguf_seeds.py).
#include "fuzz_util.h"

#include "attnscope/io/gguf.h"
#include "attnscope/runtime/error.h"
#include "attnscope/tokenizer/tokenizer.h"

#include <cstdint>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace attnscope;
    const auto file = fuzz::scratch() / "model.gguf";
    fuzz::writeBytes(file, fuzz::asView(data, size));
    try {
        const auto f = GgufFile::open(file);
        volatile unsigned sum = 0;
        std::vector<float> row;
        for (const GgufTensor& t : f->tensors()) {
            const auto* bytes = reinterpret_cast<const unsigned char*>(f->data(t));
            for (std::uint64_t i = 0; i < t.bytes; ++i) sum = sum + bytes[i];
            if (!supportedGgmlType(t.type) || t.numel() > (1 << 22)) continue;
            const std::int64_t rows = t.numel() / t.rowLength();
            row.resize(static_cast<std::size_t>(t.rowLength()));
            for (std::int64_t r = 0; r < rows; ++r) dequantiseRows(t, f->data(t), r, 1, row.data());
        }
        Tokenizer::fromPath(file);
    } catch (const Error&) {
    }
    return 0;
}
