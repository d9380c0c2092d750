// CellImagePlottable: QCustomPlot's colour map, its cells coloured by colormapColor and
// ColorScale::position (figure/colormaps.h) instead of QCustomPlot's gradient, so that the heat
// map on screen and an exported figure (figure/figure.h) colour every value the same way.
//
// The cells are the QCPColorMapData values (raw attention weights, not positions); the image is
// rebuilt only after touch() (new cells) or setColoring(). Owned by its QCustomPlot.
#pragma once

#include "figure/colormaps.h"

#include <qcustomplot.h>

class CellImagePlottable : public QCPColorMap {
public:
    CellImagePlottable(QCPAxis* keyAxis, QCPAxis* valueAxis) : QCPColorMap(keyAxis, valueAxis) {}

    void setColoring(Colormap colormap, const ColorScale& scale);
    // The cells (data()) changed: the image is drawn again at the next replot.
    void touch() { ++generation_; }

protected:
    void updateMapImage() override;

private:
    Colormap colormap_ = Colormap::Viridis;
    ColorScale scale_;
    unsigned generation_ = 1;
    unsigned drawn_ = 0;  // the generation mMapImage shows
};
