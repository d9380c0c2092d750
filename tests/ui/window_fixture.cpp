// The helpers of window_fixture.h that need QCustomPlot's headers.
#include "window_fixture.h"

#include <qcustomplot.h>

namespace uitest {

int mismatchedCells(const HeatmapView& view, const attnscope::HeadMap& expected) {
    QCPColorMapData* data = view.colorMap()->data();
    if (view.map().rows != expected.rows || view.map().cols != expected.cols) return -1;
    // A long map draws level-of-detail bins (test_long_map.cpp checks them); its cells are the map's.
    if (view.usesLevelOfDetail()) return view.map().values == expected.values ? 0 : 1;
    if (data->keySize() != expected.cols || data->valueSize() != expected.rows) return -1;
    int bad = 0;
    for (int q = 0; q < expected.rows; ++q)
        for (int k = 0; k < expected.cols; ++k)
            if (data->cell(k, q) != double(expected.at(q, k)) || view.map().at(q, k) != expected.at(q, k)) ++bad;
    return bad;
}

}  // namespace uitest
