// RouterStripView: the router strip of a mixture-of-experts decoder under the map (layers × tokens,
// each cell the token's most probable expert, lighter as its probability falls; dense layers grey;
// the map's layer framed), with the router's probabilities of the cell under the pointer as a
// tooltip. Hidden for models without routers. Draws traceRouter() through figure/routerfigure.h
// (the exported figure's colours); computes nothing.
#pragma once

#include "figure/routerfigure.h"

#include <QWidget>

#include <memory>
#include <optional>

namespace attnscope {
class Trace;
}

class RouterStripView : public QWidget {
    Q_OBJECT
public:
    explicit RouterStripView(QWidget* parent = nullptr);

    // The trace's routers (hidden when it has none), framing `layer`.
    void setTrace(const std::shared_ptr<const attnscope::Trace>& trace, int layer);
    void setLayer(int layer);
    // What the window exports with the figure (nothing without routers).
    const std::optional<RouterStripFigure>& strip() const { return strip_; }
    // The cell (layer, token) under a widget point, or nothing.
    std::optional<std::pair<int, int>> cellAt(const QPointF& point) const;
    // The hover text shown last (tests read it).
    const QString& hoverText() const { return hover_; }

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;

private:
    QRectF cellsRect() const;

    std::optional<RouterStripFigure> strip_;
    QString hover_;
};
