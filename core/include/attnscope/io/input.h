// The inputs a forward pass takes, as plain data (decoding files into them is the caller's job).
#pragma once

#include <cstdint>
#include <vector>

namespace attnscope {

// Text input with the extras encoder models (BERT family) take. Empty vectors mean the
// defaults: every token type 0, every position a real token.
struct TextInput {
    std::vector<std::int64_t> ids;
    std::vector<std::int64_t> typeIds;  // token types (segment ids), one per id
    std::vector<std::uint8_t> attend;   // 1 = real token, 0 = padding (masked as a key), one per id
    // Encoder-decoder models only (ModelInfo::encoderDecoder): the decoder's input ids, used
    // exactly as given (teacher forcing), starting with the decoder start token
    // (Model::encodeTarget makes them from a target text). Empty = greedy decoding from the
    // start token up to maxNewTokens new tokens or the end token.
    std::vector<std::int64_t> targetIds;
    int maxNewTokens = 32;
};

// An 8-bit RGB image, row-major, 3 bytes per pixel: pixels[(y * width + x) * 3 + channel].
// Decoding files is the caller's job (ui/figure/imagefile.h, for the window and the CLI); the
// model resizes and normalises as its preprocessor_config.json says.
struct RgbImage {
    int width = 0;
    int height = 0;
    std::vector<std::uint8_t> pixels;
};

}  // namespace attnscope
