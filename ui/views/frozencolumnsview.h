// FrozenColumnsView: a table whose leading columns (Layer and Head of the Metrics table) stay in
// place while the others scroll sideways. A second view over the same model and selection lies
// on the table's left edge and shows only those columns; it scrolls vertically with the table,
// and its clicks, header clicks (sorting) and column widths are the table's.
#pragma once

#include <QList>
#include <QTableView>

class FrozenColumnsView : public QTableView {
    Q_OBJECT
public:
    explicit FrozenColumnsView(QWidget* parent = nullptr);

    void setModel(QAbstractItemModel* model) override;
    // The model columns kept in place; they must be the table's first visual columns (a hidden
    // one is skipped on both views).
    void setFrozenColumns(QList<int> columns);
    QTableView* frozenView() const { return frozen_; }
    // Re-reads which columns show and their widths (after setColumnHidden or a resize to contents).
    void updateFrozen();

protected:
    void resizeEvent(QResizeEvent* event) override;
    void updateGeometries() override;

private:
    QTableView* frozen_ = nullptr;
    QList<int> columns_;
};
