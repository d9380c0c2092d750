// safetensors files: the 8-byte header length, the JSON header and the data offsets, read by
// SafetensorsFile::open (the mapping every model load goes through); every tensor's bytes are
// touched so an offset past the mapping shows up under ASan.
#include "fuzz_util.h"

#include "attnscope/io/safetensors.h"
#include "attnscope/runtime/error.h"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace attnscope;
    const auto file = fuzz::scratch() / "model.safetensors";
    fuzz::writeBytes(file, fuzz::asView(data, size));
    try {
        const auto st = SafetensorsFile::open(file);
        volatile unsigned sum = 0;
        for (const TensorInfo& t : st->tensors()) {
            const auto* bytes = reinterpret_cast<const unsigned char*>(st->data(t));
            for (std::uint64_t i = 0; i < t.end - t.begin; ++i) sum = sum + bytes[i];
        }
    } catch (const Error&) {
    }
    return 0;
}
