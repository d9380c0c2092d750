// WindowOutline: window attention's windows drawn over a heat map. Swin attends within windows of
// the stage grid; in the map's row-major token order a window is not one square but a comb of
// cells, so the outline is the border of the cells (i, j) whose query and key share a window:
// every edge between such a cell and one outside (or the matrix's border). The windows come from
// core (attnscope::keyWindows); this only draws them, on the plot's layer above the cells.
//
// Where cells are narrower than kMinCellPixels the comb is finer than the screen, so nothing is
// drawn and active() still says windows are known (the title says to zoom in).
#pragma once

#include <qcustomplot.h>

#include <vector>

class WindowOutline : public QCPLayerable {
public:
    explicit WindowOutline(QCustomPlot* plot);

    // Each query's and each key's window (a map's rows and columns); empty: nothing drawn.
    void setWindows(std::vector<int> queryWindows, std::vector<int> keyWindows);
    void clear() { setWindows({}, {}); }
    bool active() const { return !queries_.empty() && !keys_.empty(); }
    // Whether a draw at the current axis ranges outlines anything (cells wide enough).
    bool drawsAtCurrentZoom() const;
    // The edges drawn at the current ranges, in data coordinates (tests).
    std::vector<QLineF> edges() const;

    static constexpr double kMinCellPixels = 3.0;

protected:
    void applyDefaultAntialiasingHint(QCPPainter* painter) const override;
    QRect clipRect() const override;  // the axis rect: nothing over the tick labels
    void draw(QCPPainter* painter) override;

private:
    QCPAxis* x_;
    QCPAxis* y_;
    std::vector<int> queries_, keys_;
};
