// ModelViewPanel: the model view that fills the screen (the Model tab). The block's overview
// grid fitted to the whole space (OverviewGrid::setFitToHeight), each layer's heads optionally
// ordered by a metric and framed in their pattern class's colour (legend under it), and beside it
// a layer × head heat map of any metric (HeadMetricMap). The metrics are core's
// (attnscope::headMetrics), listed by attnscope::headMetricList(); the panel only sorts and draws
// them. A click on either side asks for that head (headChosen).
#pragma once

#include "attnscope/analysis/head_metric_list.h"

#include <QWidget>

#include <vector>

class HeadMetricMap;
class OverviewGrid;
class QCheckBox;
class QComboBox;
class QLabel;
class QSplitter;

class ModelViewPanel : public QWidget {
    Q_OBJECT
public:
    explicit ModelViewPanel(QWidget* parent = nullptr);

    OverviewGrid* grid() const { return grid_; }
    HeadMetricMap* metricMap() const { return map_; }
    QComboBox* orderCombo() const { return order_; }
    QCheckBox* descendingCheck() const { return descending_; }
    QCheckBox* framesCheck() const { return frames_; }
    QComboBox* metricCombo() const { return metric_; }
    QLabel* statusLabel() const { return status_; }
    QSplitter* splitter() const { return split_; }

    // The block shown: its name (HeadMetrics::block) and shape. Forgets the metrics.
    void setBlock(const QString& block, int layers, int heads);
    // Every head's metrics of the trace (any blocks; the shown block's are picked); may be partial.
    void setMetrics(const std::vector<attnscope::HeadMetrics>& metrics);
    void setStatus(const QString& text);
    // The entry of headMetricList() the order uses, or null for the natural order.
    const attnscope::HeadMetricInfo* orderMetric() const;
    const attnscope::HeadMetricInfo& mapMetric() const;
    // The metrics of (layer, head) of the shown block, or null while unknown.
    const attnscope::HeadMetrics* metricsOf(int layer, int head) const;

signals:
    void headChosen(int layer, int head);

private:
    void refresh();

    OverviewGrid* grid_ = nullptr;
    HeadMetricMap* map_ = nullptr;
    QComboBox* order_ = nullptr;
    QCheckBox* descending_ = nullptr;
    QCheckBox* frames_ = nullptr;
    QComboBox* metric_ = nullptr;
    QLabel* status_ = nullptr;
    QLabel* legend_ = nullptr;
    QSplitter* split_ = nullptr;
    QString block_;
    int layers_ = 0, heads_ = 0;
    std::vector<const attnscope::HeadMetrics*> byHead_;  // layer * heads + head -> into metrics_
    std::vector<attnscope::HeadMetrics> metrics_;
};
