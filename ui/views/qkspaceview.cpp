#include "views/qkspaceview.h"

#include "figure/paintedfigure.h"
#include "views/figurecanvas.h"
#include "views/flowlayout.h"

#include "attnscope/runtime/error.h"

#include <QComboBox>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QVBoxLayout>

namespace {
constexpr double kPickRadius = 8;  // pixels
}

QkSpaceView::QkSpaceView(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    auto* bar = new FlowLayout(nullptr, 4);  // wraps at the Views dock's width (no side scroll bar)
    scope_ = new QComboBox;
    scope_->setObjectName(QStringLiteral("qkScope"));
    scope_->addItems({tr("This head"), tr("All heads of the layer")});
    bar->addWidget(scope_);
    coloring_ = new QComboBox;
    coloring_->setObjectName(QStringLiteral("qkColoring"));
    coloring_->addItem(tr("position"), int(QkColoring::Position));
    coloring_->addItem(tr("query / key"), int(QkColoring::Kind));
    coloring_->addItem(tr("head"), int(QkColoring::Head));
    coloring_->addItem(tr("token kind"), int(QkColoring::TokenKind));
    coloring_->setToolTip(tr("Token kind (as AttentionViz): special tokens, punctuation, word-initial tokens and "
                             "continuation sub-words, from the tokenizer's tokens."));
    bar->addWidget(labelledBox(tr("Colour"), coloring_));
    // Compact: the Views dock stays narrow.
    for (QComboBox* combo : {scope_, coloring_}) {
        combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        combo->setMinimumContentsLength(6);
    }
    QPushButton* exportButton = addExportButton(bar, QStringLiteral("qkExport"));
    layout->addLayout(bar);
    canvas_ = new FigureCanvas;
    canvas_->setObjectName(QStringLiteral("qkCanvas"));
    canvas_->setMinimumWidth(kViewCanvasMinWidth);
    layout->addWidget(canvas_, 1);
    hover_ = new QLabel(QStringLiteral(" "));
    hover_->setObjectName(QStringLiteral("qkHover"));
    hover_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);  // a long hover never widens the view
    layout->addWidget(hover_);
    message_ = addViewMessage(layout);

    canvas_->paint = [this](QPainter& p, const QRectF& area) {
        if (has_) paintQkFigure(p, figure_, area);
    };
    canvas_->moved = [this](const QPointF& point) {
        if (!has_) return;
        const int i = qkLayout(figure_, canvas_->area()).pointAt(figure_.space, point, kPickRadius);
        if (i == figure_.hovered) return;
        setHovered(i);
        emit pointHovered(i);
    };
    canvas_->left = [this] {
        if (figure_.hovered < 0) return;
        setHovered(-1);
        emit pointHovered(-1);
    };
    canvas_->clicked = [this](const QPointF& point) {
        if (!has_) return;
        const int i = qkLayout(figure_, canvas_->area()).pointAt(figure_.space, point, kPickRadius);
        figure_.selected = i == figure_.selected ? -1 : i;
        if (figure_.selected < 0) figure_.selectedRow.clear();
        canvas_->update();
        emit pointSelected(figure_.selected);
    };
    connect(scope_, &QComboBox::currentIndexChanged, this, &QkSpaceView::scopeChanged);
    connect(coloring_, &QComboBox::currentIndexChanged, this, [this] {
        figure_.coloring = QkColoring(coloring_->currentData().toInt());
        canvas_->update();
    });
    connect(exportButton, &QPushButton::clicked, this, &QkSpaceView::exportRequested);
}

QkSpaceView::State QkSpaceView::state() const { return {allHeads(), figure_.coloring}; }

void QkSpaceView::setState(const State& st) {
    scope_->setCurrentIndex(st.allHeads ? 1 : 0);
    const int i = coloring_->findData(int(st.coloring));
    coloring_->setCurrentIndex(i >= 0 ? i : 0);
}

bool QkSpaceView::allHeads() const { return scope_->currentIndex() == 1; }

void QkSpaceView::setSpace(const attnscope::QkSpace& space, const QStringList& queryLabels,
                           const QStringList& keyLabels, const QString& title) {
    // Keep the selection on the same token when the points are the same tokens (a new head).
    const bool keep = has_ && figure_.selected >= 0 && figure_.space.points() == space.points();
    const int selected = keep ? figure_.selected : -1;
    figure_.space = space;
    figure_.queryLabels = queryLabels;
    figure_.keyLabels = keyLabels;
    figure_.title = title;
    figure_.selected = selected;
    figure_.hovered = -1;
    if (!keep) figure_.selectedRow.clear();
    has_ = true;
    message_->hide();
    hover_->setText(QStringLiteral(" "));
    canvas_->update();
}

void QkSpaceView::setTokenKinds(std::vector<attnscope::TokenKind> queries, std::vector<attnscope::TokenKind> keys) {
    figure_.queryKinds = std::move(queries);
    figure_.keyKinds = std::move(keys);
    canvas_->update();
}

void QkSpaceView::clear(const QString& message) {
    has_ = false;
    figure_.selected = figure_.hovered = -1;
    message_->setText(message);
    message_->show();
    canvas_->update();
}

QString QkSpaceView::message() const { return message_->isVisible() ? message_->text() : QString(); }

int QkSpaceView::pointOf(bool key, int position, int head) const {
    const auto& s = figure_.space;
    for (int i = 0; i < s.points(); ++i)
        if (s.isKey[i] == key && s.position[i] == position && (head < 0 || s.head[i] == head)) return i;
    return -1;
}

void QkSpaceView::selectToken(bool key, int position, int head) {
    figure_.selected = position < 0 ? -1 : pointOf(key, position, head);
    if (figure_.selected < 0) figure_.selectedRow.clear();
    canvas_->update();
}

void QkSpaceView::setHovered(int point) {
    figure_.hovered = point;
    hover_->setText(point >= 0 ? qkPointText(figure_, point) : QStringLiteral(" "));
    canvas_->update();
}

QString QkSpaceView::hoverText() const { return hover_->text().trimmed(); }

void QkSpaceView::setSelectedRow(const std::vector<float>& row) {
    figure_.selectedRow = row;
    canvas_->update();
}

QPointF QkSpaceView::pointCenter(int point) const {
    return qkLayout(figure_, canvas_->area()).toUnits(figure_.space.x[point], figure_.space.y[point]);
}

PaintedFigure QkSpaceView::exportable() const {
    if (!has_) return {};
    QkFigure f = figure_;
    f.fontSize = 7;
    f.hovered = -1;
    return {[f](double widthPt) { return qkFigureSize(f, widthPt); },
            [f](QPainter& p, const QSizeF& s) { paintQkFigure(p, f, QRectF(QPointF(0, 0), s)); },
            f.title.isEmpty() ? QStringLiteral("Query-key space") : f.title};
}

void QkSpaceView::exportFigure(const QString& path, double widthIn) const {
    if (!has_) throw attnscope::Error(path.toStdString() + ": the query-key view shows nothing to export");
    writePainted(path, exportable(), widthIn);
}
