#include "views/heatmapview.h"

#include "figure/labels.h"
#include "views/cellimageplottable.h"
#include "views/windowoutline.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QRubberBand>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

namespace {

// The colour bar's gradient: 256 levels, level i exactly colormapColor(i / 255) (the cells
// themselves are coloured by CellImagePlottable with the same function).
QCPColorGradient colormapGradient(Colormap map) {
    QCPColorGradient g;
    g.clearColorStops();
    for (int i = 0; i < 256; ++i) g.setColorStopAt(i / 255.0, colormapColor(map, i / 255.0));
    g.setColorInterpolation(QCPColorGradient::ciRGB);
    g.setLevelCount(256);
    return g;
}

}  // namespace

namespace {

constexpr int kPlotMargin = 15;  // QCustomPlot's minimum margin around an axis rect
constexpr int kSharedEdge = 3;   // beside a neighbour sharing the axes (setFrameShown)

QString labelAt(const QStringList& labels, int i) { return i < labels.size() ? labels[i] : QString::number(i); }

// "'label'", or "'label' [raw]" when the raw token reads differently.
QString quotedLabel(const QStringList& labels, const QStringList& raw, int i) {
    const QString label = labelAt(labels, i);
    if (i < raw.size() && raw[i] != label) return QStringLiteral("'%1' [%2]").arg(label, raw[i]);
    return QStringLiteral("'%1'").arg(label);
}

}  // namespace

HeatmapView::HeatmapView(QWidget* parent) : QWidget(parent) {
    plotHost_ = new QWidget(this);
    plotHost_->setObjectName(QStringLiteral("heatmapPlotHost"));
    plotHost_->setMinimumSize(160, 120);
    plotHost_->installEventFilter(this);
    plot_ = new QCustomPlot(plotHost_);
    plot_->setObjectName(QStringLiteral("heatmapPlot"));
    plot_->setMouseTracking(true);

    // A label, not a QCustomPlot text element: a long title or message wraps instead of widening
    // the plot (or being cut off).
    title_ = new QLabel(this);
    title_->setObjectName(QStringLiteral("heatmapTitle"));
    title_->setAlignment(Qt::AlignCenter);
    title_->setWordWrap(true);
    title_->setTextFormat(Qt::PlainText);
    title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    QFont titleFont = title_->font();
    titleFont.setBold(true);
    title_->setFont(titleFont);

    QCPAxisRect* rect = plot_->axisRect();
    colorScale_ = new QCPColorScale(plot_);
    plot_->plotLayout()->addElement(0, 1, colorScale_);
    colorScale_->setType(QCPAxis::atRight);
    colorScale_->setLabel(QStringLiteral("attention"));
    colorScale_->setDataRange(QCPRange(0.0, 1.0));
    colorScale_->setGradient(colormapGradient(colormap_));
    colorScale_->setBarWidth(14);
    // Keep the colour bar exactly as tall as the map.
    auto* margins = new QCPMarginGroup(plot_);
    rect->setMarginGroup(QCP::msTop | QCP::msBottom, margins);
    colorScale_->setMarginGroup(QCP::msTop | QCP::msBottom, margins);

    colorMap_ = new CellImagePlottable(plot_->xAxis, plot_->yAxis);
    colorMap_->setInterpolate(false);
    colorMap_->setTightBoundary(false);
    colorMap_->setColorScale(colorScale_);  // takes the scale's gradient and data range
    windows_ = new WindowOutline(plot_);    // after the cells: drawn over them

    for (QCPAxis* axis : {plot_->xAxis, plot_->yAxis}) {
        auto ticker = QSharedPointer<QCPAxisTickerText>::create();
        ticker->setSubTickCount(0);
        axis->setTicker(ticker);
        axis->grid()->setVisible(false);
        axis->setSubTicks(false);
        axis->setTickLengthOut(3);
        axis->setTickLengthIn(0);
    }
    plot_->xAxis->setLabel(names_.cols);
    plot_->yAxis->setLabel(names_.rows);
    plot_->yAxis->setRangeReversed(true);  // like a matrix: query 0 on top

    hoverLabel_ = new QLabel(this);
    hoverLabel_->setObjectName(QStringLiteral("hoverLabel"));
    hoverLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    hoverLabel_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);  // a long hover never widens the view

    poolingCombo_ = new QComboBox(this);
    poolingCombo_->setObjectName(QStringLiteral("poolingCombo"));
    poolingCombo_->addItem(tr("max"), int(attnscope::Pooling::Max));
    poolingCombo_->addItem(tr("mean"), int(attnscope::Pooling::Mean));
    poolingCombo_->addItem(tr("sum (mass)"), int(attnscope::Pooling::Sum));
    poolingCombo_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    poolingCombo_->setMinimumContentsLength(4);
    poolingCombo_->setToolTip(tr("How a long map's cells are folded into screen pixels (and thumbnails): max keeps a "
                                 "single strong cell visible, mean averages, sum keeps the attention mass"));
    // A new map's request goes out before the layout pass that fits the axes to its tick
    // labels; when that pass gives the plot another pixel size, the image is asked for again at
    // the size it is drawn.
    connect(plot_, &QCustomPlot::afterLayout, this, [this] {
        const QRect rect = plot_->axisRect()->rect();
        if (usesLevelOfDetail() && lodAsked_.outCols > 0 &&
            (std::max(1, rect.width()) != lodAsked_.outCols || std::max(1, rect.height()) != lodAsked_.outRows))
            askLevelOfDetail();
    });
    connect(poolingCombo_, &QComboBox::currentIndexChanged, this, [this] {
        askLevelOfDetail();
        emit poolingChanged(pooling());
    });

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(title_);
    layout->addWidget(plotHost_, 1);
    auto* below = new QHBoxLayout;
    below->addWidget(hoverLabel_, 1);
    poolingLabel_ = new QLabel(tr("Pooling"), this);
    poolingLabel_->setBuddy(poolingCombo_);
    below->addWidget(poolingLabel_);
    below->addWidget(poolingCombo_);
    layout->addLayout(below);

    connect(plot_, &QCustomPlot::mouseMove, this, &HeatmapView::onMouseMove);
    connect(plot_, &QCustomPlot::mousePress, this, &HeatmapView::onMousePress);
    connect(plot_, &QCustomPlot::mouseRelease, this, &HeatmapView::onMouseRelease);
    connect(plot_, &QCustomPlot::mouseWheel, this, &HeatmapView::onWheel);
    connect(plot_, &QCustomPlot::mouseDoubleClick, this, [this] { resetZoom(); });
    band_ = new QRubberBand(QRubberBand::Rectangle, plot_);
    setFocusPolicy(Qt::StrongFocus);
    setAutoFillBackground(true);  // the letterbox around the plot in the plot's own colour
    setColoring(colormap_, scale_);
    applyPalette();
    clear(tr("Open a model folder (Ctrl+O) to see its attention."));
}

void HeatmapView::setMap(const attnscope::HeadMap& map, const QStringList& queryLabels, const QStringList& keyLabels,
                         const QString& title) {
    const bool sameShape = map.rows == map_.rows && map.cols == map_.cols;
    map_ = map;
    queryLabels_ = queryLabels;
    keyLabels_ = keyLabels;
    windows_->clear();
    // A long map keeps its last image (same shape: a new temperature or head) until the new
    // level of detail arrives; otherwise it is blank until then.
    if (!usesLevelOfDetail() || !sameShape) lod_ = {};
    fillColorMap();
    setPlotVisible(map.rows > 0 && map.cols > 0);
    if (zoom_.rows != map.rows || zoom_.cols != map.cols) zoom_ = MapZoom::whole(map.rows, map.cols);
    plot_->xAxis->setRange(zoom_.keyLower, zoom_.keyUpper);
    plot_->yAxis->setRange(zoom_.queryLower, zoom_.queryUpper);
    title_->setText(title);
    hoverLabel_->clear();
    fitPlot();
    plot_->replot(QCustomPlot::rpQueuedReplot);
    askLevelOfDetail();
    emit mapShown();
}

bool HeatmapView::setValues(const attnscope::HeadMap& map) {
    if (!valuesPending() || map.rows != map_.rows || map.cols != map_.cols || map.values.empty()) return false;
    map_ = map;
    return true;
}

// The cells hold the values themselves (negative ones too, for signed map sources); on a log
// scale values below the floor (zeros too) are raised to it, since a logarithmic colour scale
// cannot place them.
void HeatmapView::fillColorMap() {
    colorMap_->touch();
    auto* data = colorMap_->data();
    const double floor = scale_.type == ColorScaleType::Log ? scale_.lower() : -std::numeric_limits<double>::infinity();
    // The image's bins (cells or level-of-detail bins) over the cells [c0, c1) x [r0, r1): bin
    // centres on the centres of the cells they cover. QCustomPlot draws a single-bin dimension
    // with zero extent, so such a dimension gets its cells' extent instead.
    const auto place = [](int bins, int begin, int end) {
        const double w = double(end - begin) / bins;
        return bins > 1 ? QCPRange(begin - 0.5 + w / 2, end - 0.5 - w / 2) : QCPRange(begin - 0.5, end - 0.5);
    };
    const attnscope::HeadMap& shown = lod_.values.empty() ? map_ : lod_;
    if (lod_.values.empty() && (usesLevelOfDetail() || valuesPending())) {  // waiting for the first level of detail
        data->setSize(1, 1);
        data->setRange(place(1, 0, map_.cols), place(1, 0, map_.rows));
        data->setCell(0, 0, std::max(0.0, floor));
        return;
    }
    data->setSize(shown.cols, shown.rows);
    if (lod_.values.empty())
        data->setRange(place(shown.cols, 0, shown.cols), place(shown.rows, 0, shown.rows));
    else
        data->setRange(place(shown.cols, lodFor_.colBegin, lodFor_.colEnd),
                       place(shown.rows, lodFor_.rowBegin, lodFor_.rowEnd));
    for (int q = 0; q < shown.rows; ++q)
        for (int k = 0; k < shown.cols; ++k) data->setCell(k, q, std::max(double(shown.at(q, k)), floor));
}

attnscope::Pooling HeatmapView::pooling() const { return attnscope::Pooling(poolingCombo_->currentData().toInt()); }

void HeatmapView::setPoolingShown(bool shown) {
    poolingLabel_->setVisible(shown);
    poolingCombo_->setVisible(shown);
}

void HeatmapView::setPooling(attnscope::Pooling pooling) {
    poolingCombo_->setCurrentIndex(poolingCombo_->findData(int(pooling)));
}

attnscope::PoolRequest HeatmapView::levelOfDetailRequest() const {
    attnscope::PoolRequest r;
    r.rowBegin = zoom_.rowBegin();
    r.rowEnd = zoom_.rowEnd();
    r.colBegin = zoom_.colBegin();
    r.colEnd = zoom_.colEnd();
    const QRect rect = plot_->axisRect()->rect();
    r.outCols = std::max(1, rect.width());
    r.outRows = std::max(1, rect.height());
    r.pooling = pooling();
    return r;
}

void HeatmapView::askLevelOfDetail() {
    if (!usesLevelOfDetail() || zoom_.rows != map_.rows || zoom_.cols != map_.cols) return;
    lodAsked_ = levelOfDetailRequest();
    emit levelOfDetailWanted(lodAsked_);
}

void HeatmapView::setLevelOfDetail(const attnscope::HeadMap& pooled, const attnscope::PoolRequest& request) {
    const attnscope::PoolRequest now = levelOfDetailRequest();
    // The answer for what is shown now: the rectangle and the pooling must match; the pixel
    // counts may have moved by a few since (the axes' margins follow their tick labels).
    if (!usesLevelOfDetail() || request.rowBegin != now.rowBegin || request.rowEnd != now.rowEnd ||
        request.colBegin != now.colBegin || request.colEnd != now.colEnd || request.pooling != now.pooling ||
        pooled.rows <= 0 || pooled.cols <= 0)
        return;
    lod_ = pooled;
    lodFor_ = request;
    fillColorMap();
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

HeatmapView::Shown HeatmapView::shown() const {
    Shown s;
    const int r0 = zoom_.rowBegin(), r1 = zoom_.rowEnd(), c0 = zoom_.colBegin(), c1 = zoom_.colEnd();
    if (map_.rows <= 0 || r0 >= r1 || c0 >= c1) return s;
    const bool bins = !lod_.values.empty() &&
                      (lod_.rows < lodFor_.rowEnd - lodFor_.rowBegin || lod_.cols < lodFor_.colEnd - lodFor_.colBegin);
    if (bins) {
        s.map = lod_;
        for (int r = 0; r < lod_.rows; ++r)
            s.queryLabels << labelAt(queryLabels_,
                                     lodFor_.rowBegin +
                                             int(std::int64_t(r) * (lodFor_.rowEnd - lodFor_.rowBegin) / lod_.rows));
        for (int c = 0; c < lod_.cols; ++c)
            s.keyLabels << labelAt(keyLabels_, lodFor_.colBegin + int(std::int64_t(c) *
                                                                      (lodFor_.colEnd - lodFor_.colBegin) / lod_.cols));
        return s;
    }
    if (valuesPending()) {
        // Only the level of detail is known; it is the visible cells themselves once it has one
        // bin per cell of the rectangle shown.
        if (lod_.values.empty() || lodFor_.rowBegin != r0 || lodFor_.rowEnd != r1 || lodFor_.colBegin != c0 ||
            lodFor_.colEnd != c1)
            return s;
        s.map = lod_;
        for (int q = r0; q < r1; ++q) s.queryLabels << labelAt(queryLabels_, q);
        for (int k = c0; k < c1; ++k) s.keyLabels << labelAt(keyLabels_, k);
        return s;
    }
    s.map.rows = r1 - r0;
    s.map.cols = c1 - c0;
    s.map.values.reserve(std::size_t(s.map.rows) * s.map.cols);
    for (int q = r0; q < r1; ++q)
        for (int k = c0; k < c1; ++k) s.map.values.push_back(map_.at(q, k));
    for (int q = r0; q < r1; ++q) s.queryLabels << labelAt(queryLabels_, q);
    for (int k = c0; k < c1; ++k) s.keyLabels << labelAt(keyLabels_, k);
    return s;
}

void HeatmapView::setColoring(Colormap colormap, const ColorScale& scale) {
    colormap_ = colormap;
    scale_ = scale;
    colorMap_->setColoring(colormap, scale);
    colorScale_->setGradient(colormapGradient(colormap));
    const bool log = scale.type == ColorScaleType::Log;
    colorScale_->setDataScaleType(log ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    colorScale_->setDataRange(QCPRange(scale.lower(), scale.upper()));
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    for (double v : scale.ticks()) ticker->addTick(v, tickLabel(scale, v));
    colorScale_->axis()->setTicker(ticker);
    colorScale_->setLabel(log ? names_.values + QStringLiteral(" (log)") : names_.values);
    fillColorMap();
    colorMap_->setDataRange(QCPRange(scale.lower(), scale.upper()));
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

QString HeatmapView::title() const { return title_->text(); }

QCPColorMap* HeatmapView::colorMap() const { return colorMap_; }

void HeatmapView::setAxisNames(const AxisNames& names) {
    names_ = names;
    plot_->xAxis->setLabel(names.cols);
    plot_->yAxis->setLabel(showQueryAxis_ ? names.rows : QString());
    setColoring(colormap_, scale_);  // the colour bar's label
}

void HeatmapView::setRawLabels(const QStringList& queryRaw, const QStringList& keyRaw) {
    rawQueryLabels_ = queryRaw;
    rawKeyLabels_ = keyRaw;
}

void HeatmapView::setWindows(std::vector<int> queryWindows, std::vector<int> keyWindows) {
    if (queryWindows.size() != static_cast<std::size_t>(map_.rows) ||
        keyWindows.size() != static_cast<std::size_t>(map_.cols))
        queryWindows.clear();  // not this map's
    windows_->setWindows(std::move(queryWindows), std::move(keyWindows));
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void HeatmapView::clear(const QString& message) {
    windows_->clear();
    map_ = {};
    lod_ = {};
    queryLabels_.clear();
    keyLabels_.clear();
    rawQueryLabels_.clear();
    rawKeyLabels_.clear();
    colorMap_->data()->clear();
    zoom_ = {};
    setPlotVisible(false);
    title_->setText(message);
    hoverLabel_->clear();
    fitPlot();
    plot_->replot(QCustomPlot::rpQueuedReplot);
    emit mapShown();
}

// Without a map only the title (a message) shows: no empty axes or colour bar.
void HeatmapView::setPlotVisible(bool visible) {
    colorMap_->setVisible(visible);
    plot_->axisRect()->setVisible(visible);
    colorScale_->setVisible(visible && showColorBar_);
    plot_->setVisible(visible);
}

void HeatmapView::setFrameShown(bool queryAxis, bool colorBar) {
    showQueryAxis_ = queryAxis;
    showColorBar_ = colorBar;
    plot_->yAxis->setTickLabels(queryAxis);
    plot_->yAxis->setLabel(queryAxis ? names_.rows : QString());
    // A side that meets a neighbour's map keeps a small gap, not QCustomPlot's 15 px margin.
    QMargins margins = plot_->axisRect()->minimumMargins();
    margins.setLeft(queryAxis ? kPlotMargin : kSharedEdge);
    margins.setRight(colorBar ? kPlotMargin : kSharedEdge);
    plot_->axisRect()->setMinimumMargins(margins);
    colorScale_->setVisible(colorBar && map_.rows > 0);
    // A hidden colour bar leaves the layout (QCustomPlot keeps room for invisible elements); it
    // stays a child of the plot, which deletes it.
    QCPLayoutGrid* layout = plot_->plotLayout();
    const bool placed = layout->columnCount() > 1 && layout->element(0, 1) == colorScale_;
    if (!colorBar && placed) {
        layout->take(colorScale_);
        layout->simplify();
    } else if (colorBar && !placed) {
        layout->addElement(0, 1, colorScale_);
    }
    fitPlot();
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void HeatmapView::setMaxCellSize(double pixels) {
    if (pixels == maxCell_) return;
    maxCell_ = pixels;
    fitPlot();
    plot_->replot(QCustomPlot::rpQueuedReplot);
    askLevelOfDetail();
}

// Square cells: the plot gets the size at which its axis rect holds the visible cells at one
// size on both axes (whole pixels once they are 2 px or more), centred in plotHost_. What
// surrounds the axis rect (tick labels, colour bar) depends on the cell size, so the size settles
// over a few passes.
void HeatmapView::fitPlot() {
    const QSize room = plotHost_->size();
    const double cols = zoom_.keyUpper - zoom_.keyLower, rows = zoom_.queryUpper - zoom_.queryLower;
    const auto place = [&](const QSize& size) {
        plot_->setGeometry(QRect(QPoint((room.width() - size.width()) / 2, (room.height() - size.height()) / 2), size));
        plot_->setViewport(QRect(QPoint(0, 0), size));  // now, not at the next resize event
        updateTicks();
    };
    if (map_.rows <= 0 || map_.cols <= 0 || cols <= 0 || rows <= 0 || room.isEmpty()) {
        place(room);
        return;
    }
    QSize size = room;
    for (int pass = 0; pass < 4; ++pass) {
        place(size);
        const QRect inner = plot_->axisRect()->rect();
        const int aroundW = size.width() - inner.width(), aroundH = size.height() - inner.height();
        double cell = std::min((room.width() - aroundW) / cols, (room.height() - aroundH) / rows);
        fittingCell_ = cell;
        if (maxCell_ > 0) cell = std::min(cell, maxCell_);
        if (cell >= 2) cell = std::floor(cell);
        cell = std::max(cell, 1e-3);
        const QSize want(std::clamp(aroundW + int(std::lround(cell * cols)), 1, room.width()),
                         std::clamp(aroundH + int(std::lround(cell * rows)), 1, room.height()));
        if (want == size) break;
        size = want;
    }
}

QSize HeatmapView::frameSize() const {
    if (map_.rows <= 0 || map_.cols <= 0) return QSize(0, 0);
    return plot_->size() - plot_->axisRect()->rect().size();
}

CellGeometry HeatmapView::cellGeometry() const {
    CellGeometry g;
    g.area = plot_->axisRect()->rect();
    g.keyLower = plot_->xAxis->range().lower;
    g.keyUpper = plot_->xAxis->range().upper;
    g.queryLower = plot_->yAxis->range().lower;  // at the top: the y axis is reversed
    g.queryUpper = plot_->yAxis->range().upper;
    g.rows = map_.rows;
    g.cols = map_.cols;
    return g;
}

QString HeatmapView::describeCell(const Cell& cell) const {
    QString value = tr("computing\u2026");  // the exact values have not arrived yet
    if (!valuesPending()) {
        const double v = double(map_.at(cell.query, cell.key));
        value = names_.valueScale == 1.0 ? QString::number(v, 'f', 4) : QString::number(v * names_.valueScale, 'g', 4);
    }
    return QStringLiteral("%1 %2 %3 \u2192 %4 %5 %6: %7")
            .arg(names_.rows)
            .arg(cell.query)
            .arg(quotedLabel(queryLabels_, rawQueryLabels_, cell.query))
            .arg(names_.cols)
            .arg(cell.key)
            .arg(quotedLabel(keyLabels_, rawKeyLabels_, cell.key))
            .arg(value);
}

// One tick per token while they fit; otherwise every k-th. Key labels turn vertical when they
// are wider than a cell.
void HeatmapView::updateTicks() {
    // Lay the plot out for its current size first, so the axis rect is the one we place on.
    QCPLayoutGrid* layout = plot_->plotLayout();
    for (auto phase : {QCPLayoutElement::upPreparation, QCPLayoutElement::upMargins, QCPLayoutElement::upLayout})
        layout->update(phase);
    const QFontMetrics metrics(plot_->xAxis->tickLabelFont());
    // Ticks over the visible cells only: zooming in thins them less, until every token shows.
    const auto fill = [&](QCPAxis* axis, const QStringList& labels, int begin, int end, double pixels, double extent) {
        auto ticker = axis->ticker().dynamicCast<QCPAxisTickerText>();
        ticker->clear();
        const int n = end - begin;
        if (n <= 0) return;
        const int stride = std::max(1, int(std::ceil(n * extent / std::max(pixels, 1.0))));
        for (int i = begin - begin % stride; i < end; i += stride)
            if (i >= begin) ticker->addTick(i, tickText(labels, i));
    };
    const int c0 = zoom_.colBegin(), c1 = zoom_.colEnd(), r0 = zoom_.rowBegin(), r1 = zoom_.rowEnd();
    int widest = 0;
    for (int i = c0; i < c1; ++i) widest = std::max(widest, metrics.horizontalAdvance(tickText(keyLabels_, i)));
    const QRect rect = plot_->axisRect()->rect();
    const double cellWidth = map_.cols > 0 ? zoom_.cellWidth(rect.width()) : 0.0;
    const bool vertical = widest + 6 > cellWidth;
    plot_->xAxis->setTickLabelRotation(vertical ? -90 : 0);
    const double rowExtent = metrics.height() * 1.1;
    fill(plot_->xAxis, keyLabels_, c0, c1, rect.width(), vertical ? rowExtent : widest + 6);
    fill(plot_->yAxis, queryLabels_, r0, r1, rect.height(), rowExtent);
}

QStringList HeatmapView::keyTickLabels() const {
    return plot_->xAxis->ticker().dynamicCast<QCPAxisTickerText>()->ticks().values();
}

QStringList HeatmapView::queryTickLabels() const {
    return plot_->yAxis->ticker().dynamicCast<QCPAxisTickerText>()->ticks().values();
}

bool HeatmapView::eventFilter(QObject* watched, QEvent* event) {
    if (watched == plotHost_ && event->type() == QEvent::Resize) {
        fitPlot();
        plot_->replot(QCustomPlot::rpQueuedReplot);
        askLevelOfDetail();
    }
    return QWidget::eventFilter(watched, event);
}

void HeatmapView::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) applyPalette();
}

// Follow the widget palette (dark themes) instead of QCustomPlot's fixed black on white.
void HeatmapView::applyPalette() {
    const QPalette pal = palette();
    const QColor text = pal.color(QPalette::WindowText);
    plot_->setBackground(pal.brush(QPalette::Window));
    for (QCPAxis* axis : plot_->axisRect()->axes()) {
        axis->setBasePen(QPen(text));
        axis->setTickPen(QPen(text));
        axis->setTickLabelColor(text);
        axis->setLabelColor(text);
    }
    if (QCPAxis* axis = colorScale_->axis()) {
        axis->setBasePen(QPen(text));
        axis->setTickPen(QPen(text));
        axis->setSubTickPen(QPen(text));
        axis->setTickLabelColor(text);
        axis->setLabelColor(text);
    }
    plot_->replot(QCustomPlot::rpQueuedReplot);
}
