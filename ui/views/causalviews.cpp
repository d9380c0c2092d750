#include "views/causalviews.h"

#include "views/figurecanvas.h"

#include "figure/causalresults.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QToolTip>
#include <QVBoxLayout>

namespace {

// The Export… button right-aligned over the canvas, and the message under it.
FigureCanvas* buildFigureView(QWidget* view, const QString& name, QLabel*& message, QPushButton*& exportButton) {
    auto* layout = new QVBoxLayout(view);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->setSpacing(2);
    auto* bar = new QHBoxLayout;
    bar->addStretch(1);
    exportButton = addExportButton(bar, name + QStringLiteral("Export"));
    layout->addLayout(bar);
    auto* canvas = new FigureCanvas;
    canvas->setObjectName(name + QStringLiteral("Canvas"));
    canvas->setMinimumSize(160, 120);
    layout->addWidget(canvas, 1);
    message = addViewMessage(layout);
    message->setObjectName(name + QStringLiteral("Message"));
    return canvas;
}

}  // namespace

LensView::LensView(const QString& name, QWidget* parent) : QWidget(parent) {
    QPushButton* exportButton = nullptr;
    canvas_ = buildFigureView(this, name, message_, exportButton);
    canvas_->paint = [this](QPainter& p, const QRectF& area) {
        if (has_) paintLensFigure(p, figure_, area);
    };
    canvas_->moved = [this](const QPointF& point) {
        if (!has_) return;
        const auto [r, c] = lensLayout(canvas_, figure_, canvas_->area()).cellAt(point);
        if (r != figure_.focusRow || c != figure_.focusCol) {
            figure_.focusRow = r;
            figure_.focusCol = c;
            canvas_->update();
        }
        if (r >= 0) QToolTip::showText(canvas_->mapToGlobal(point.toPoint()), cellTip(r, c), canvas_);
    };
    canvas_->left = [this] {
        figure_.focusRow = figure_.focusCol = -1;
        canvas_->update();
    };
    connect(exportButton, &QPushButton::clicked, this, &LensView::exportRequested);
    clear(tr("Run the clean input to see its logit lens."));
}

void LensView::setFigure(const LensFigure& figure) {
    figure_ = figure;
    has_ = !figure.empty();
    message_->hide();
    canvas_->show();
    canvas_->update();
}

void LensView::clear(const QString& message) {
    has_ = false;
    figure_ = {};
    message_->setText(message);
    message_->show();
    canvas_->update();
}

QString LensView::message() const { return message_->isVisible() ? message_->text() : QString(); }

QPointF LensView::cellCenter(int row, int col) const {
    return lensLayout(canvas_, figure_, canvas_->area()).cellRect(row, col).center();
}

QString LensView::cellTip(int row, int col) const {
    if (!has_ || row < 0 || col < 0 || row >= figure_.rows || col >= figure_.cols) return {};
    QStringList lines;
    lines << tr("%1 · position %2 (%3)")
                     .arg(figure_.rowLabels.value(row), QString::number(col), figure_.colLabels.value(col));
    for (int k = 0; k < figure_.k; ++k)
        lines << QStringLiteral("%1   %2").arg(figure_.text(row, col, k)).arg(figure_.prob(row, col, k), 0, 'f', 4);
    return lines.join(QLatin1Char('\n'));
}

PaintedFigure LensView::exportable() const { return has_ ? paintedLens(figure_) : PaintedFigure{}; }

SignedMapView::SignedMapView(const QString& name, QWidget* parent) : QWidget(parent) {
    QPushButton* exportButton = nullptr;
    canvas_ = buildFigureView(this, name, message_, exportButton);
    canvas_->paint = [this](QPainter& p, const QRectF& area) {
        if (has_) paintSignedMapFigure(p, figure_, area);
    };
    canvas_->moved = [this](const QPointF& point) {
        if (!has_) return;
        const auto [r, c] = signedMapLayout(canvas_, figure_, canvas_->area()).cellAt(point);
        if (r != figure_.focusRow || c != figure_.focusCol) {
            figure_.focusRow = r;
            figure_.focusCol = c;
            canvas_->update();
        }
        if (r >= 0)
            QToolTip::showText(canvas_->mapToGlobal(point.toPoint()),
                               tr("%1 %2 · %3 %4: %5")
                                       .arg(figure_.rowAxis, figure_.rowLabels.value(r), figure_.colAxis,
                                            figure_.colLabels.value(c), causalNumber(figure_.at(r, c))),
                               canvas_);
    };
    canvas_->clicked = [this](const QPointF& point) {
        if (!has_) return;
        const auto [r, c] = signedMapLayout(canvas_, figure_, canvas_->area()).cellAt(point);
        if (r >= 0) emit cellClicked(r, c);
    };
    canvas_->left = [this] {
        figure_.focusRow = figure_.focusCol = -1;
        canvas_->update();
    };
    connect(exportButton, &QPushButton::clicked, this, &SignedMapView::exportRequested);
}

void SignedMapView::setFigure(const SignedMapFigure& figure) {
    figure_ = figure;
    has_ = !figure.empty();
    message_->hide();
    canvas_->update();
}

void SignedMapView::clear(const QString& message) {
    has_ = false;
    figure_ = {};
    message_->setText(message);
    message_->show();
    canvas_->update();
}

QString SignedMapView::message() const { return message_->isVisible() ? message_->text() : QString(); }

QPointF SignedMapView::cellCenter(int row, int col) const {
    return signedMapLayout(canvas_, figure_, canvas_->area()).cellRect(row, col).center();
}

PaintedFigure SignedMapView::exportable() const { return has_ ? paintedSignedMap(figure_) : PaintedFigure{}; }
