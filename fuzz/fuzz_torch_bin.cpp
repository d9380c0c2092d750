// PyTorch checkpoints (pytorch_model.bin): the zip directory, the legacy layout and, through both,
// the restricted unpickler, read by TorchCheckpoint::open (what WeightStore opens for a .bin
// folder). Every tensor's bytes are touched so an offset past the mapping shows up under ASan.
// The legacy seeds are pickles end to end, so mutations reach the unpickler's opcodes directly.
#include "fuzz_util.h"

#include "attnscope/io/torch_checkpoint.h"
#include "attnscope/runtime/error.h"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace attnscope;
    const auto file = fuzz::scratch() / "pytorch_model.bin";
    fuzz::writeBytes(file, fuzz::asView(data, size));
    try {
        const auto checkpoint = TorchCheckpoint::open(file);
        volatile unsigned sum = 0;
        for (const TensorInfo& t : checkpoint->tensors()) {
            const auto* bytes = reinterpret_cast<const unsigned char*>(checkpoint->data(t));
            for (std::uint64_t i = 0; i < t.end - t.begin; ++i) sum = sum + bytes[i];
        }
    } catch (const Error&) {
    }
    return 0;
}
