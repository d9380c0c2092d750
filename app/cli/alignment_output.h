// The attention command's alignment export: --alignment FILE [--alignment-units words|tokens]
// [--alignment-heads L:H,L:H|all|layer:L] [--alignment-rows input|predicted] writes the hard
// source–target alignment of an encoder-decoder's cross maps (core: analysis/alignment.h) as one
// Pharaoh line "i-j i-j ..." (source index - target index, 0-based).
#pragma once

#include "args.h"

#include "attnscope/analysis/alignment.h"

#include <filesystem>
#include <optional>
#include <set>
#include <string>

namespace attnscope {
class Trace;
}

namespace attnscope::cli {

// options plus alignment, alignment-units, alignment-heads, alignment-rows.
std::set<std::string> withAlignmentOptions(std::set<std::string> options);

struct AlignmentRequest {
    std::filesystem::path file;
    AlignmentOptions options;  // heads filled by resolve() for "all" and "layer:L"
    enum class Heads { Default, List, All, Layer } heads = Heads::Default;
    int layer = 0;  // Heads::Layer
};

// Checks the options before a model loads: nothing without --alignment; the others need it
// (UsageError); malformed values are attnscope::Error naming the option.
std::optional<AlignmentRequest> parseAlignmentRequest(const Args& args);

// The alignment of the trace as the request asks; throws attnscope::Error naming the option when
// the model has no cross-attention or a head or layer is outside it.
Alignment computeAlignment(const Trace& trace, const AlignmentRequest& request);

// Writes "LINE\n" to request.file atomically.
void writeAlignmentFile(const AlignmentRequest& request, const Alignment& alignment);

}  // namespace attnscope::cli
