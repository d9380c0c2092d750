// HeatmapView: one attention map drawn like a matrix (row = query, column = key, query 0 at
// the top), crisp cells, a colour bar (linear 0..1 or log), a choice of colormap and the tokens as tick labels on both
// axes. Hovering a cell shows "query 'tok' → key 'tok': value" below the plot (with the raw token in brackets where it
// differs from the readable label).
//
// Zoom (MapZoom): the mouse wheel zooms about the cursor, a left drag pans, a Shift+left drag
// draws a rubber band to zoom to, +/- zoom about the centre and 0 (or Home, or a double-click)
// resets. Tick labels follow the visible range: every token once cells are a few pixels wide.
// Hovering always shows the exact cell under the cursor.
//
// Level of detail: a map larger than kLodSide on a side is not drawn cell by cell. For each zoom
// (and size, and pooling) the view asks for the visible rectangle pooled to its pixels
// (levelOfDetailWanted with a PoolRequest; the window has Trace::pooledMap compute it) and draws
// that image; once cells are wider than a pixel the request has one bin per cell, so zoomed-in
// cells are crisp and exact. Hovering reads the exact map. A long map may be given by its shape
// first (setMap with rows and cols but no values, valuesPending()): the level of detail is drawn
// at once, and hovering names the cell and waits for the values, which setValues brings. The
// pooling combo (max, mean, sum) picks how bins are folded, here and, through poolingChanged, in
// the overview's thumbnails.
//
// The view only draws what it is given; it never computes attention (that is Trace::map).
#pragma once

#include "views/cellgeometry.h"
#include "views/mapzoom.h"
#include "figure/colormaps.h"

#include "attnscope/attention/trace.h"

#include <QStringList>
#include <QWidget>

#include <optional>

class CellImagePlottable;
class WindowOutline;
class QComboBox;
class QCustomPlot;
class QCPColorMap;
class QCPColorScale;
class QLabel;
class QMouseEvent;
class QRubberBand;
class QWheelEvent;

class HeatmapView : public QWidget {
    Q_OBJECT
public:
    explicit HeatmapView(QWidget* parent = nullptr);

    // Shows map (rows = queries, cols = keys). queryLabels / keyLabels have one entry per row /
    // column (missing ones are shown as indices).
    void setMap(const attnscope::HeadMap& map, const QStringList& queryLabels, const QStringList& keyLabels,
                const QString& title);
    // The raw vocabulary strings behind the labels of the next setMap() (parallel to its labels;
    // empty = none). Hovering a cell whose raw token differs from its label shows both.
    void setRawLabels(const QStringList& queryRaw, const QStringList& keyRaw);
    // Window attention (Swin): each row's and column's window, outlined over the map where cells
    // are wide enough (views/windowoutline.h). setMap() and clear() remove them; set them after.
    void setWindows(std::vector<int> queryWindows, std::vector<int> keyWindows);
    WindowOutline* windowOutline() const { return windows_; }
    // Removes the map and shows message in its place.
    void clear(const QString& message);
    // What rows, columns and values are (axis titles, colour bar label, hover text): query, key
    // and attention unless set (the Corpus tab: layer, head and a statistic). A map scaled into
    // [0, 1] for colour hovers as value × valueScale, its own units.
    struct AxisNames {
        QString rows = QStringLiteral("query");
        QString cols = QStringLiteral("key");
        QString values = QStringLiteral("attention");
        double valueScale = 1.0;
    };
    void setAxisNames(const AxisNames& names);
    const AxisNames& axisNames() const { return names_; }
    // Colours: the colormap and a linear (0..1) or log (floor..1) scale; the map is redrawn.
    void setColoring(Colormap colormap, const ColorScale& scale);
    Colormap colormap() const { return colormap_; }
    const ColorScale& colorScale() const { return scale_; }
    const QStringList& queryLabels() const { return queryLabels_; }
    const QStringList& keyLabels() const { return keyLabels_; }
    QString title() const;

    const attnscope::HeadMap& map() const { return map_; }
    // The map's shape is known but its values are still being computed (see the top).
    bool valuesPending() const { return map_.rows > 0 && map_.cols > 0 && map_.values.empty(); }
    // The values of the pending map on show (same shape), for hovering and export; the image, the
    // labels and the zoom stay as they are. False (nothing changed) when no map of that shape
    // is pending.
    bool setValues(const attnscope::HeadMap& map);
    QCustomPlot* plot() const { return plot_; }
    QCPColorMap* colorMap() const;
    // Where the cells are now, in plot() pixel coordinates. Cells are square: the plot is sized
    // to the visible cells and centred in the view's space (letterboxed), whatever its shape.
    CellGeometry cellGeometry() const;
    // The text shown for a hovered cell.
    QString describeCell(const Cell& cell) const;
    // The visible part of the map; setZoom() clamps it to the map and redraws. A new map of
    // another size shows whole; one of the same size (a new temperature, head) keeps the zoom.
    const MapZoom& zoom() const { return zoom_; }
    void setZoom(const MapZoom& zoom);
    void resetZoom() { setZoom(MapZoom::whole(map_.rows, map_.cols)); }
    // Level of detail (see the top): whether this map uses it, the request for what is shown now,
    // and the image for a request (ignored unless it is still the current one).
    bool usesLevelOfDetail() const { return lodEnabled_ && (map_.rows > kLodSide || map_.cols > kLodSide); }
    // Off: every map is drawn cell by cell (maps nobody can pool from a Trace, e.g. the lab's
    // variants). Takes effect at the next setMap().
    void setLevelOfDetailEnabled(bool enabled) { lodEnabled_ = enabled; }
    // Shared axes (views side by side, as the Compare tab's): whether this view draws the query
    // axis (its name and tick labels) and the colour bar (a side without them keeps only a small
    // gap to its neighbour), and the largest cell size in pixels (0 = as large as fits), so that
    // neighbours that hide them still draw cells of one size.
    void setFrameShown(bool queryAxis, bool colorBar);
    void setMaxCellSize(double pixels);
    // The cell size that would fit now without the limit, in pixels.
    double fittingCellSize() const { return fittingCell_; }
    // What the plot draws around its cells now (tick labels, axis names, the colour bar), in
    // pixels: the plot's size less the cells' (0 × 0 without a map). Neighbours sharing axes
    // size their columns by it, so that their cells get equal room.
    QSize frameSize() const;
    attnscope::PoolRequest levelOfDetailRequest() const;
    void setLevelOfDetail(const attnscope::HeadMap& pooled, const attnscope::PoolRequest& request);
    // The image drawn now: the level-of-detail bins, or empty when the cells themselves are drawn.
    const attnscope::HeadMap& levelOfDetail() const { return lod_; }
    // The request that image answers (its pixel counts may trail the plot's by a few).
    const attnscope::PoolRequest& levelOfDetailShown() const { return lodFor_; }
    attnscope::Pooling pooling() const;
    void setPooling(attnscope::Pooling pooling);
    QComboBox* poolingCombo() const { return poolingCombo_; }
    // The pooling combo and its label shown or not (hidden for maps never larger than their view).
    void setPoolingShown(bool shown);
    // What the view shows, for export: the visible cells with their labels, or the
    // level-of-detail bins (labelled with each bin's first token) when bins are coarser than cells.
    struct Shown {
        attnscope::HeadMap map;
        QStringList queryLabels, keyLabels;
    };
    Shown shown() const;
    static constexpr int kLodSide = 512;

    // Square cells need width: ask for a large share of a splitter or layout.
    QSize sizeHint() const override { return {720, 560}; }

    // The tick labels now on the key (x) and query (y) axes, for tests.
    QStringList keyTickLabels() const;
    QStringList queryTickLabels() const;

signals:
    void cellHovered(int query, int key, float value);
    // After setMap() or clear() changed what is shown.
    void mapShown();
    // The visible range changed (wheel, drag, rubber band, keys, reset).
    void zoomChanged(const MapZoom& zoom);
    // The view needs this rectangle pooled to its pixels (answer with setLevelOfDetail).
    void levelOfDetailWanted(const attnscope::PoolRequest& request);
    void poolingChanged(attnscope::Pooling pooling);

protected:
    void changeEvent(QEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void onMouseMove(QMouseEvent* event);
    void onMousePress(QMouseEvent* event);
    void onMouseRelease(QMouseEvent* event);
    void onWheel(QWheelEvent* event);
    QPointF dataAt(const QPointF& pixel) const;  // (key, query) under a plot pixel
    void updateTicks();
    void fitPlot();
    void setPlotVisible(bool visible);
    void applyPalette();
    void fillColorMap();
    void askLevelOfDetail();

    QWidget* plotHost_ = nullptr;  // the space the plot is centred in
    QCustomPlot* plot_ = nullptr;
    CellImagePlottable* colorMap_ = nullptr;
    WindowOutline* windows_ = nullptr;
    QCPColorScale* colorScale_ = nullptr;
    QLabel* title_ = nullptr;  // the map's title, or the message shown instead of a map
    QLabel* hoverLabel_ = nullptr;
    QComboBox* poolingCombo_ = nullptr;
    QLabel* poolingLabel_ = nullptr;
    attnscope::HeadMap map_;
    attnscope::HeadMap lod_;           // the level-of-detail bins drawn now (empty: cells drawn)
    attnscope::PoolRequest lodFor_;    // the request lod_ answers
    attnscope::PoolRequest lodAsked_;  // the last request sent (levelOfDetailWanted)
    bool lodEnabled_ = true;
    bool showQueryAxis_ = true, showColorBar_ = true;
    double maxCell_ = 0;      // setMaxCellSize
    double fittingCell_ = 0;  // the last fitPlot's cell size before the limit
    QStringList queryLabels_;
    QStringList keyLabels_;
    QStringList rawQueryLabels_;
    QStringList rawKeyLabels_;
    Colormap colormap_ = Colormap::Viridis;
    ColorScale scale_;
    AxisNames names_;
    MapZoom zoom_;
    // A drag in progress: where it started (plot pixels) and the zoom then; rubber band or pan.
    QRubberBand* band_ = nullptr;
    QPointF dragStart_;
    MapZoom dragZoom_;
    bool dragging_ = false;
    bool banding_ = false;
};
