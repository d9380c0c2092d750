// Attention maps from elsewhere: a .npy of attention probabilities (what a Python user saved from
// Hugging Face's `output_attentions`, or the attention.npy `attnscope-cli attention` writes) as a
// Trace that holds those maps instead of Q and K (Trace::mapsOnly).
//
// Accepted shapes, row = query, column = key, each row summing to 1 (or all 0):
//   [layers, heads, n, m]      torch.stack(outputs.attentions)[:, 0] / attnscope's attention.npy
//   [layers, 1, heads, n, m]   torch.stack(outputs.attentions) with its batch of one
//   [heads, n, m]              one layer
// (m == n for self-attention; cross-attention maps have m source tokens.)
// float16, float32 or float64, little-endian, C order (NpyFile). The file stays memory-mapped
// for the Trace's life; every map is checked once on opening (finite, >= 0, rows sum to 1 within
// the dtype's rounding) so a file of scores or garbage is refused, not drawn.
#pragma once

#include "attnscope/attention/trace.h"
#include "attnscope/runtime/progress.h"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace attnscope {

// The token labels of an attention file's maps [n queries, m keys]. tokensJson: a JSON list of
// strings (self-attention, n == m), or the tokens.json `attnscope-cli attention` writes: the
// labels of blocks.BLOCK (BLOCK = the .npy's name, e.g. "decoder" for decoder.npy, else "self"),
// else its "tokens". Throws attnscope::Error naming the file on a count that does not fit the
// maps or another layout.
struct AttentionFileTokens {
    std::vector<std::string> tokens;   // raw tokens (Trace::tokens), n of them
    std::vector<std::string> queries;  // readable row labels, n
    std::vector<std::string> keys;     // readable column labels, m
    std::vector<std::int64_t> ids;     // when the file gives n of them, else empty
};
AttentionFileTokens readAttentionTokens(const std::filesystem::path& tokensJson, std::int64_t n, std::int64_t m,
                                        const std::string& block = "self");

// Opens the .npy (and tokensJson when not empty; else the labels are the positions "0".."n-1")
// as a Trace with one block "self" on the CPU. progress is called per checked map (done, total
// maps) and may cancel. Throws attnscope::Error naming the file on every refusal.
std::shared_ptr<const Trace> openAttentionFile(const std::filesystem::path& npy,
                                               const std::filesystem::path& tokensJson = {},
                                               const Progress& progress = {});

// True for a Trace built from given maps (openAttentionFile): it holds the maps, not Q and K, so
// Trace::map gives the Native/Dot map only, at a display temperature T as softmax(log A / T),
// which equals softmax(logits / T) since log A differs from the logits by a constant per row;
// exact up to the file's precision (cells stored as 0 stay 0). Other variants, the lab and
// re-runs need Q/K and refuse it; per-head metrics leave klDotLinear at 0.
bool mapsOnly(const Trace& trace);
// The file a maps-only Trace was read from, else empty.
const std::string& attentionFileOf(const Trace& trace);

// The tokens.json beside an attention file, when there is one: NAME.tokens.json, else
// tokens.json in the same folder (the CLI's output layout); else an empty path.
std::filesystem::path tokensBeside(const std::filesystem::path& npy);

}  // namespace attnscope
