// Token kinds for colouring tokens as AttentionViz does: special tokens, punctuation, tokens that
// start a word and sub-words that continue one (and image patches for image inputs).
//
// A kind is read from the raw vocabulary string (Trace::tokens()), whose markers say where words
// start: byte-level BPE (GPT-2) writes a leading space as "Ġ", SentencePiece (Llama, T5) as "▁",
// WordPiece (BERT) marks continuations with "##". The style is recognised from the markers the
// tokens of one input carry; without markers every non-special token counts as a word start.
#pragma once

#include "attnscope/attention/trace.h"

#include <string>
#include <vector>

namespace attnscope {

enum class TokenKind { Special, Punctuation, WordStart, Continuation, Patch };
const char* tokenKindName(TokenKind kind);  // "special", "punctuation", "word start", "continuation", "patch"

// Kinds of a sequence of raw tokens (one input, in order). Special: "[CLS]"-, "<s>"- or
// "<|endoftext|>"-shaped tokens (not SentencePiece's "<0xNN>" bytes). Punctuation: every
// character, markers removed, is punctuation or a symbol (ASCII or common Unicode quotes, dashes,
// ellipsis). A token after a special token, a newline or at the start counts as a word start.
std::vector<TokenKind> tokenKinds(const std::vector<std::string>& rawTokens);

// The kinds of a block's query rows (keys = false) or key columns (keys = true). Rows that are
// the input's tokens use Trace::tokens(); an image input's [CLS]-like tokens are special and its
// patches Patch; other labels (a decoder's target) are read from the block's readable labels,
// where "·" marks a leading space. Throws attnscope::Error for a block out of range.
std::vector<TokenKind> blockTokenKinds(const Trace& trace, int block, bool keys);

}  // namespace attnscope
