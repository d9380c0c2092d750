#include "views/frozencolumnsview.h"

#include <QHeaderView>
#include <QScrollBar>

FrozenColumnsView::FrozenColumnsView(QWidget* parent) : QTableView(parent) {
    frozen_ = new QTableView(this);
    frozen_->setObjectName(QStringLiteral("frozenColumns"));
    frozen_->setFocusPolicy(Qt::NoFocus);
    frozen_->verticalHeader()->hide();
    frozen_->setFrameShape(QFrame::NoFrame);
    frozen_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    frozen_->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    frozen_->setVerticalScrollMode(ScrollPerPixel);
    setVerticalScrollMode(ScrollPerPixel);
    frozen_->setHorizontalScrollMode(ScrollPerPixel);
    frozen_->horizontalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    frozen_->horizontalHeader()->setSortIndicatorShown(true);
    viewport()->stackUnder(frozen_);

    connect(verticalScrollBar(), &QScrollBar::valueChanged, frozen_->verticalScrollBar(), &QScrollBar::setValue);
    connect(frozen_->verticalScrollBar(), &QScrollBar::valueChanged, verticalScrollBar(), &QScrollBar::setValue);
    connect(horizontalHeader(), &QHeaderView::sectionResized, this, [this] { updateFrozen(); });
    connect(verticalHeader(), &QHeaderView::sectionResized, this,
            [this](int row, int, int size) { frozen_->setRowHeight(row, size); });
    // Clicks on the frozen part are the table's; so are sorts from its header.
    connect(frozen_, &QTableView::clicked, this, &QTableView::clicked);
    connect(frozen_, &QTableView::activated, this, &QTableView::activated);
    connect(frozen_, &QTableView::doubleClicked, this, &QTableView::doubleClicked);
    connect(frozen_->horizontalHeader(), &QHeaderView::sectionClicked, this, [this](int section) {
        if (!isSortingEnabled()) return;
        QHeaderView* header = horizontalHeader();
        const Qt::SortOrder order =
                header->sortIndicatorSection() == section && header->sortIndicatorOrder() == Qt::AscendingOrder
                        ? Qt::DescendingOrder
                        : Qt::AscendingOrder;
        header->setSortIndicator(section, order);
    });
    connect(horizontalHeader(), &QHeaderView::sortIndicatorChanged, frozen_->horizontalHeader(),
            &QHeaderView::setSortIndicator);
}

void FrozenColumnsView::setModel(QAbstractItemModel* model) {
    QTableView::setModel(model);
    frozen_->setModel(model);
    frozen_->setSelectionModel(selectionModel());
    if (model) {
        connect(model, &QAbstractItemModel::modelReset, this, &FrozenColumnsView::updateFrozen);
        connect(model, &QAbstractItemModel::layoutChanged, this, &FrozenColumnsView::updateFrozen);
    }
    updateFrozen();
}

void FrozenColumnsView::setFrozenColumns(QList<int> columns) {
    columns_ = std::move(columns);
    updateFrozen();
}

void FrozenColumnsView::updateFrozen() {
    if (!model()) return;
    frozen_->setSelectionBehavior(selectionBehavior());
    frozen_->setSelectionMode(selectionMode());
    frozen_->setAlternatingRowColors(alternatingRowColors());
    frozen_->verticalHeader()->setDefaultSectionSize(verticalHeader()->defaultSectionSize());
    frozen_->horizontalHeader()->setFixedHeight(horizontalHeader()->height());
    int width = 0;
    for (int c = 0; c < model()->columnCount(); ++c) {
        const bool frozen = columns_.contains(c) && !isColumnHidden(c);
        frozen_->setColumnHidden(c, !frozen);
        if (!frozen) continue;
        frozen_->setColumnWidth(c, columnWidth(c));
        width += columnWidth(c);
    }
    frozen_->setVisible(width > 0);
    frozen_->setGeometry(verticalHeader()->width() + frameWidth(), frameWidth(), width + 1,
                         viewport()->height() + horizontalHeader()->height());
}

void FrozenColumnsView::resizeEvent(QResizeEvent* event) {
    QTableView::resizeEvent(event);
    updateFrozen();
}

void FrozenColumnsView::updateGeometries() {
    QTableView::updateGeometries();
    if (frozen_) updateFrozen();
}
