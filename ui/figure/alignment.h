// The alignment figure: an encoder-decoder's cross-attention (one head, or the mean of chosen
// heads) with the source tokens along the top, the target tokens down the side and a mark in
// each target row's argmax cell: the hard alignment core computes (analysis/alignment.h), drawn
// by the figure renderer (figure.h) for the window's export dialog and `attnscope-cli export
// --figure alignment` alike. The map and the argmax come from core; nothing is computed here.
#pragma once

#include "figure/figure.h"

#include "attnscope/analysis/alignment.h"

namespace attnscope {
class Trace;
}

// Throws attnscope::Error when the trace has no cross block or a head is outside it. `model`
// names the model in the title; the panel title says which heads were used.
Figure alignmentFigure(const attnscope::Trace& trace, const attnscope::AlignmentOptions& options, const QString& model);
