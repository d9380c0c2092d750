// MetricsPanel: the lab's per-head metrics of the current trace as a sortable table (core's
// attnscope::headMetrics), next to one block-level view drawn as a heat map: the head-to-head
// similarity matrix, attention rollout or attention flow (Abnar & Zuidema 2020). Clicking a row
// selects that head in the window; double-clicking also shows it on the Explore tab.
// Display only: LabService computes everything on workers.
#pragma once

#include "figure/colormaps.h"
#include "services/labservice.h"

#include <QAbstractTableModel>
#include <QWidget>

class HeatmapView;
class QComboBox;
class QLabel;
class QPushButton;
class QSortFilterProxyModel;
class QTableView;

// One row per head; Qt::UserRole holds the raw number (or text) the column sorts by.
class HeadMetricsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        Block,
        Layer,
        Head,
        Entropy,
        MeanDistance,
        FirstToken,
        Sink,
        Separator,
        Pattern,
        KlLinear,
        // Head detectors (core's metric list, detector entries): "–" until they ran for the model.
        DetPreviousToken,
        DetDuplicateToken,
        DetInduction,
        DetFirstToken,
        ColumnCount
    };
    using QAbstractTableModel::QAbstractTableModel;

    void setMetrics(std::vector<attnscope::HeadMetrics> metrics);
    // The model's detector scores (attnscope::headDetectors), joined to every metrics row of
    // the same head from now on; empty clears them.
    void setDetectors(std::vector<attnscope::HeadDetectors> detectors);
    const std::vector<attnscope::HeadMetrics>& metrics() const { return metrics_; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<attnscope::HeadMetrics> metrics_;
    std::vector<attnscope::HeadDetectors> detectors_;
};

class MetricsPanel : public QWidget {
    Q_OBJECT
public:
    explicit MetricsPanel(QWidget* parent = nullptr);

    HeadMetricsModel* model() const { return model_; }
    QSortFilterProxyModel* proxy() const { return proxy_; }
    QTableView* table() const { return table_; }
    HeatmapView* blockView() const { return view_; }
    QComboBox* viewCombo() const { return viewCombo_; }
    BlockView currentView() const;

    void setStatus(const QString& text);
    // Colours of the block view (the window's colour map and scale).
    void setColoring(Colormap colormap, const ColorScale& scale);
    void showMetrics(const MetricsResult& result);
    void showBlockView(const BlockViewResult& result, const QStringList& rowLabels, const QStringList& colLabels,
                       const QString& title);
    void clearBlockView(const QString& message);
    void clearAll(const QString& message);
    // The detector columns: scores of the model on its probe (or none), and a line saying how.
    void setDetectors(std::vector<attnscope::HeadDetectors> detectors, const QString& text);
    QPushButton* detectorsButton() const { return detectorsButton_; }

signals:
    // A row was clicked (activated: double-clicked or Enter).
    void headSelected(const QString& block, int layer, int head);
    void headActivated(const QString& block, int layer, int head);
    void viewChanged();

private:
    HeadMetricsModel* model_ = nullptr;
    QSortFilterProxyModel* proxy_ = nullptr;
    QTableView* table_ = nullptr;
    QLabel* status_ = nullptr;
    QComboBox* viewCombo_ = nullptr;
    HeatmapView* view_ = nullptr;
    QPushButton* detectorsButton_ = nullptr;
    QLabel* detectorsLabel_ = nullptr;
};
