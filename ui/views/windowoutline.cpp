#include "views/windowoutline.h"

#include <algorithm>
#include <cmath>

WindowOutline::WindowOutline(QCustomPlot* plot)
    : QCPLayerable(plot, QStringLiteral("main")), x_(plot->xAxis), y_(plot->yAxis) {}

QRect WindowOutline::clipRect() const { return x_->axisRect()->rect(); }

void WindowOutline::setWindows(std::vector<int> queryWindows, std::vector<int> keyWindows) {
    queries_ = std::move(queryWindows);
    keys_ = std::move(keyWindows);
}

bool WindowOutline::drawsAtCurrentZoom() const {
    if (!active()) return false;
    const double cellX = std::abs(x_->coordToPixel(1) - x_->coordToPixel(0));
    const double cellY = std::abs(y_->coordToPixel(1) - y_->coordToPixel(0));
    return std::min(cellX, cellY) >= kMinCellPixels;
}

std::vector<QLineF> WindowOutline::edges() const {
    std::vector<QLineF> out;
    if (!drawsAtCurrentZoom()) return out;
    const int n = static_cast<int>(queries_.size()), m = static_cast<int>(keys_.size());
    // The visible cells, one more on each side so that edges at the view's border are drawn.
    const auto span = [](const QCPRange& r, int size) {
        const int lo = std::max(0, static_cast<int>(std::floor(std::min(r.lower, r.upper) + 0.5)) - 1);
        const int hi = std::min(size - 1, static_cast<int>(std::ceil(std::max(r.lower, r.upper) - 0.5)) + 1);
        return std::make_pair(lo, hi);
    };
    const auto [i0, i1] = span(y_->range(), n);
    const auto [j0, j1] = span(x_->range(), m);
    const auto in = [&](int i, int j) {
        return i >= 0 && i < n && j >= 0 && j < m &&
               queries_[static_cast<std::size_t>(i)] == keys_[static_cast<std::size_t>(j)];
    };
    for (int i = i0; i <= i1; ++i)
        for (int j = j0; j <= j1; ++j) {
            const bool here = in(i, j);
            // The left and top edges of every cell; the right and bottom ones of the last.
            if (here != in(i, j - 1)) out.emplace_back(j - 0.5, i - 0.5, j - 0.5, i + 0.5);
            if (here != in(i - 1, j)) out.emplace_back(j - 0.5, i - 0.5, j + 0.5, i - 0.5);
            if (j == j1 && here != in(i, j + 1)) out.emplace_back(j + 0.5, i - 0.5, j + 0.5, i + 0.5);
            if (i == i1 && here != in(i + 1, j)) out.emplace_back(j - 0.5, i + 0.5, j + 0.5, i + 0.5);
        }
    return out;
}

void WindowOutline::applyDefaultAntialiasingHint(QCPPainter* painter) const {
    applyAntialiasingHint(painter, false, QCP::aeOther);
}

void WindowOutline::draw(QCPPainter* painter) {
    const std::vector<QLineF> lines = edges();
    if (lines.empty()) return;
    const auto pixel = [&](double key, double query) {
        return QPointF(x_->coordToPixel(key), y_->coordToPixel(query));
    };
    const double cell = std::abs(x_->coordToPixel(1) - x_->coordToPixel(0));
    painter->setBrush(Qt::NoBrush);
    painter->setPen(QPen(QColor(255, 255, 255, 230), std::clamp(cell / 12, 1.0, 2.5)));
    for (const QLineF& l : lines) painter->drawLine(QLineF(pixel(l.x1(), l.y1()), pixel(l.x2(), l.y2())));
}
