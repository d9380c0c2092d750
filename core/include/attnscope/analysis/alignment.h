// Hard source–target alignment from an encoder-decoder's cross-attention: per target row the
// source column with the most attention, from one head or the mean of a chosen set of heads,
// on subword tokens or on words, written as Pharaoh "i-j" pairs (source index - target index,
// 0-based), the format fast_align, awesome-align and AER scripts read.
//
// Plain C++ on HeadMap and labels (no torch), so ui code can call it; the window's alignment
// figure marks exactly these argmaxes.
//
// Rows and units. The cross map's rows are the decoder's inputs: row 0 is the decoder start
// symbol, row r > 0 is target token r (as fed). The target sentence is the row labels without
// row 0 and without special tokens (see isSpecialLabel); its tokens are numbered 0, 1, ... in
// that order, and the source tokens likewise without specials. A target token's alignment comes
//  - AlignmentRows::Predicted (default): from the row before it, the row that predicts the token
//    (the start row predicts target token 0; the last row, predicting the end mark, is unused).
//    The trained built-in reverse models align this way on every cross head: the row that
//    writes target token i attends to source token n-1-i.
//  - AlignmentRows::Input: from its own row, the row the token is fed in (the start row is
//    unused); what "shifted" attention alignment (Chen et al. 2020) reads.
// The argmax runs over non-special source columns only (an end mark that soaks attention is no
// source word); ties go to the lowest column.
//
// Words (AlignmentUnits::Words) group consecutive kept tokens: a token starts a word when it is
// the first, or begins with a word-start mark ("▁" SentencePiece, "Ġ" byte-level BPE, "·" or a
// space in readable labels); in a sequence without any such mark (WordPiece, the built-in
// models' one-symbol-per-token vocabularies) every token starts a word unless it begins with
// "##". A word pair is linked when any of its token pairs is.
#pragma once

#include "attnscope/attention/trace.h"

#include <string>
#include <utility>
#include <vector>

namespace attnscope {

struct LayerHead {
    int layer = 0;
    int head = 0;
};

enum class AlignmentUnits { Tokens, Words };
enum class AlignmentRows { Input, Predicted };

struct AlignmentOptions {
    // The heads whose cross maps are averaged; empty = every head of the last decoder layer.
    std::vector<LayerHead> heads;
    AlignmentUnits units = AlignmentUnits::Tokens;
    AlignmentRows rows = AlignmentRows::Predicted;
    MapOptions map;  // display temperature / variant of each head's map (default: the model's own)
};

struct Alignment {
    std::vector<std::string> sourceUnits;  // labels of the source tokens or words (specials removed)
    std::vector<std::string> targetUnits;  // the same for the target
    std::vector<int> sourceUnitOf;         // per map column, its source unit; -1 for a special
    std::vector<int> targetUnitOf;         // per map row (the row's own label), its unit; -1 dropped
    // Per map row, the argmax column over non-special columns; -1 where the row is not used
    // (the last row under Predicted, the start row under Input, specials, all-zero rows).
    std::vector<int> rowArgmax;
    // Per map row, the target unit its argmax aligns (Input: targetUnitOf[r], Predicted:
    // targetUnitOf[r + 1]); -1 where rowArgmax is -1.
    std::vector<int> rowTarget;
    std::vector<std::pair<int, int>> links;  // (source unit, target unit), sorted, no duplicates
    std::string heads;                       // which heads were averaged, in words
};

// Whether a label is a special token: <s>, </s>, <pad>, <unk>, <cls>, <extra_id_N>, ... (any
// "<...>" except byte tokens <0xNN>), [CLS]-style "[UPPER]", mBART language codes "xx_XX" and
// Marian's ">>xxx<<".
bool isSpecialLabel(const std::string& label);

// Per label its word index (as described above), -1 for labels where drop[i] is true.
std::vector<int> groupWords(const std::vector<std::string>& labels, const std::vector<bool>& drop);

// The alignment of one cross map [target rows, source columns] with its row and column labels.
// Throws attnscope::Error when the labels do not match the map's shape.
Alignment alignCrossMap(const HeadMap& cross, const std::vector<std::string>& sourceLabels,
                        const std::vector<std::string>& rowLabels, AlignmentUnits units = AlignmentUnits::Tokens,
                        AlignmentRows rows = AlignmentRows::Predicted);

// The mean of the chosen heads' maps of the trace's "cross" block (empty = every head of the last
// layer). Throws attnscope::Error when the trace has no cross block or a head is out of range.
HeadMap meanCrossMap(const Trace& trace, const std::vector<LayerHead>& heads, const MapOptions& map = {});

// alignCrossMap on meanCrossMap, labelled with the cross block's readable labels; `heads` says
// which heads were used.
Alignment alignTrace(const Trace& trace, const AlignmentOptions& options = {});

// "i-j i-j ..." (no newline): the links in Pharaoh format.
std::string pharaohLine(const Alignment& alignment);

}  // namespace attnscope
