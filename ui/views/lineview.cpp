#include "views/lineview.h"

#include "figure/paintedfigure.h"
#include "views/figurecanvas.h"

#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QToolButton>
#include <QVBoxLayout>

LineView::LineView(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    auto* bar = new QHBoxLayout;
    headRow_ = new QHBoxLayout;
    headRow_->setSpacing(2);
    bar->addLayout(headRow_);
    bar->addStretch(1);
    bar->addWidget(new QLabel(tr("Hide below")));
    threshold_ = new QDoubleSpinBox;
    threshold_->setObjectName(QStringLiteral("lineThreshold"));
    threshold_->setRange(0.0, 1.0);
    threshold_->setSingleStep(0.01);
    threshold_->setDecimals(2);
    threshold_->setToolTip(tr("Lines whose attention weight is below this are not drawn."));
    bar->addWidget(threshold_);
    QPushButton* exportButton = addExportButton(bar, QStringLiteral("lineExport"));
    layout->addLayout(bar);
    canvas_ = new FigureCanvas;
    canvas_->setObjectName(QStringLiteral("lineCanvas"));
    layout->addWidget(canvas_, 1);
    message_ = addViewMessage(layout);

    canvas_->paint = [this](QPainter& p, const QRectF& area) {
        if (!maps_.empty()) paintLineFigure(p, figure_, area);
    };
    canvas_->moved = [this](const QPointF& p) { onMoved(p); };
    canvas_->clicked = [this](const QPointF& p) { onClicked(p); };
    canvas_->left = [this] {
        if (!figure_.locked && (figure_.focusQuery >= 0 || figure_.focusKey >= 0)) {
            setTokenFocus(-1, -1, false);
            emit tokenFocused(-1, -1, false);
        }
    };
    connect(threshold_, &QDoubleSpinBox::valueChanged, this, [this] { updateFigure(); });
    connect(exportButton, &QPushButton::clicked, this, &LineView::exportRequested);
}

void LineView::rebuildHeadButtons(int heads) {
    if (int(headButtons_.size()) == heads) return;
    for (QToolButton* b : headButtons_) delete b;
    headButtons_.clear();
    for (int h = 0; h < heads; ++h) {
        auto* b = new QToolButton;
        b->setObjectName(QStringLiteral("lineHead%1").arg(h));
        b->setText(QString::number(h));
        b->setCheckable(true);
        b->setChecked(true);
        b->setToolTip(tr("Show head %1's lines").arg(h));
        const QColor c = headColor(h);
        b->setStyleSheet(QStringLiteral("QToolButton { border: 2px solid %1; border-radius: 3px; padding: 1px 4px; }"
                                        "QToolButton:checked { background: %1; color: white; }")
                             .arg(c.name()));
        connect(b, &QToolButton::toggled, this, [this] { updateFigure(); });
        headRow_->addWidget(b);
        headButtons_.push_back(b);
    }
}

void LineView::setMaps(const std::vector<attnscope::HeadMap>& maps, const QStringList& queryLabels, const QStringList& keyLabels,
                       const QString& title, bool cross) {
    const bool sameShape = !maps_.empty() && !maps.empty() && maps_[0].rows == maps[0].rows && maps_[0].cols == maps[0].cols;
    maps_ = maps;
    rebuildHeadButtons(int(maps.size()));
    figure_.queryLabels = queryLabels;
    figure_.keyLabels = keyLabels;
    figure_.title = title;
    figure_.leftTitle = cross ? tr("target (queries)") : tr("queries");
    figure_.rightTitle = cross ? tr("source (keys)") : tr("keys");
    if (!sameShape) figure_.focusQuery = figure_.focusKey = -1, figure_.locked = false;
    message_->hide();
    canvas_->show();
    updateFigure();
}

void LineView::clear(const QString& message) {
    maps_.clear();
    figure_.heads.clear();
    message_->setText(message);
    message_->show();
    canvas_->update();
}

QString LineView::message() const { return message_->isVisible() ? message_->text() : QString(); }

void LineView::setHeadShown(int head, bool shown) {
    if (head >= 0 && head < int(headButtons_.size())) headButtons_[head]->setChecked(shown);
}

QToolButton* LineView::headButton(int head) const {
    return head >= 0 && head < int(headButtons_.size()) ? headButtons_[head] : nullptr;
}

std::vector<int> LineView::shownHeads() const {
    std::vector<int> out;
    for (int h = 0; h < int(headButtons_.size()); ++h)
        if (headButtons_[h]->isChecked()) out.push_back(h);
    return out;
}

void LineView::updateFigure() {
    figure_.threshold = threshold_->value();
    figure_.heads.clear();
    for (int h : shownHeads())
        if (h < int(maps_.size())) figure_.heads.push_back({h, headColor(h), maps_[h]});
    canvas_->update();
}

void LineView::setTokenFocus(int side, int index, bool lock) {
    figure_.focusQuery = side == 0 ? index : -1;
    figure_.focusKey = side == 1 ? index : -1;
    figure_.locked = lock && side >= 0;
    canvas_->update();
}

QPointF LineView::tokenCenter(int side, int index) const {
    const LineLayout L = lineLayout(canvas_, figure_, canvas_->area());
    return side == 0 ? QPointF((L.area.left() + L.leftLabelRight) / 2, L.queryY(index))
                     : QPointF((L.rightLabelLeft + L.area.right()) / 2, L.keyY(index));
}

void LineView::onMoved(const QPointF& point) {
    if (figure_.locked || maps_.empty()) return;
    const LineLayout L = lineLayout(canvas_, figure_, canvas_->area());
    const auto [side, index] = L.tokenAt(point, figure_.queryLabels.size(), figure_.keyLabels.size());
    if ((side == 0 && index == figure_.focusQuery) || (side == 1 && index == figure_.focusKey) ||
        (side < 0 && figure_.focusQuery < 0 && figure_.focusKey < 0))
        return;
    setTokenFocus(side, index, false);
    emit tokenFocused(side, index, false);
}

void LineView::onClicked(const QPointF& point) {
    if (maps_.empty()) return;
    const LineLayout L = lineLayout(canvas_, figure_, canvas_->area());
    const auto [side, index] = L.tokenAt(point, figure_.queryLabels.size(), figure_.keyLabels.size());
    const bool same = figure_.locked && ((side == 0 && index == figure_.focusQuery) || (side == 1 && index == figure_.focusKey));
    if (side < 0 || same) {
        setTokenFocus(-1, -1, false);
        emit tokenFocused(-1, -1, true);
        return;
    }
    setTokenFocus(side, index, true);
    emit tokenFocused(side, index, true);
}

void LineView::exportFigure(const QString& path, double widthIn) const {
    LineFigure f = figure_;
    f.fontSize = 7;
    f.focusQuery = f.focusKey = -1;  // a figure shows every line; the focus is for exploring
    f.locked = false;
    if (figure_.locked) f.focusQuery = figure_.focusQuery, f.focusKey = figure_.focusKey;  // unless locked on purpose
    const QSizeF size = lineFigureSize(f, widthIn * 72.0);
    writePainted(path, size, [&](QPainter& p, const QSizeF& s) { paintLineFigure(p, f, QRectF(QPointF(0, 0), s)); },
                 f.title.isEmpty() ? QStringLiteral("Line view") : f.title);
}
