// Batch figures: several heads of one block in one grid figure (a layer's heads, or any chosen
// (layer, head) pairs), and every layer of a block as the pages of one PDF. Each panel is a head
// titled "L3 H5"; the grid shares one colour bar, query labels run left of each grid row and key
// labels under the lowest panel of each column (Figure::columns). Used by the export dialog and
// by `attnscope-cli export --heads / --layer L --all-heads / --all-layers`.
#pragma once

#include "figure/figure.h"

#include <QString>

#include <utility>
#include <vector>

namespace attnscope {
class Trace;
}

struct GridStyle {
    QString modelName;         // first part of the title (may be empty)
    double temperature = 1.0;  // display temperature of every map
    Colormap colormap = Colormap::Viridis;
    ColorScaleType scale = ColorScaleType::Linear;
    double widthIn = 6.75;
    bool rawTokens = false;  // View > Raw Tokens
    QString title;           // replaces the generated title when not empty
};

// Columns for `panels` panels at a width: as many as fit at about 0.75 in each, then balanced
// over the rows (12 heads at 6.75 in: 6 x 2; at 3.25 in: 3 x 4).
int gridColumns(int panels, double widthIn);

// The chosen heads of one block (in the order given) as one grid. Throws attnscope::Error for
// no heads or a layer/head outside the block.
Figure headGridFigure(const attnscope::Trace& trace, int block, const std::vector<std::pair<int, int>>& heads,
                      const GridStyle& style);
// Every head of one layer.
Figure layerGridFigure(const attnscope::Trace& trace, int block, int layer, const GridStyle& style);
// One page per layer of the block, each the layer's heads (write with writeFigurePages).
std::vector<Figure> allLayersFigures(const attnscope::Trace& trace, int block, const GridStyle& style);
