// HeadMetricMap: one per-head metric of a block as a layer × head heat map (layers as rows,
// heads as columns, like the overview), a colour bar from the smallest to the largest value, the
// selected head outlined. Hover names the head and its value; a click asks for the head
// (headChosen). Display only: the values are core's (attnscope::headMetrics through the
// metric list, attnscope/analysis/head_metric_list.h).
#pragma once

#include "figure/colormaps.h"

#include "attnscope/analysis/metrics.h"

#include <QColor>
#include <QWidget>

#include <vector>

// The frame colour of a pattern class in the model view (Okabe–Ito colours, told apart with
// colour-vision deficiencies): diagonal orange, previous-token sky blue, global green, local
// yellow, sparse reddish purple, mixed grey.
QColor patternColor(attnscope::PatternClass pattern);

class HeadMetricMap : public QWidget {
    Q_OBJECT
public:
    explicit HeadMetricMap(QWidget* parent = nullptr);

    // values[layer * heads + head]; NaN = not known yet (drawn as the window's mid colour).
    void setValues(int layers, int heads, std::vector<double> values, const QString& name, const QString& unit);
    void clear(const QString& message);
    void setSelected(int layer, int head);
    void setColormap(Colormap colormap);

    int layers() const { return layers_; }
    int heads() const { return heads_; }
    double value(int layer, int head) const;
    const QString& metricName() const { return name_; }
    // The colour bar's range: the smallest and largest known value.
    double minimum() const { return min_; }
    double maximum() const { return max_; }
    QColor colorOf(double value) const;

    QRect cellRect(int layer, int head) const;
    bool cellAt(const QPoint& pos, int& layer, int& head) const;

    QSize sizeHint() const override { return {360, 360}; }
    QSize minimumSizeHint() const override { return {160, 120}; }

signals:
    void headChosen(int layer, int head);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    bool event(QEvent* event) override;

private:
    struct Layout {
        int left = 0, top = 0, cell = 0;
        QRect bar;
    };
    Layout layout() const;

    int layers_ = 0, heads_ = 0;
    std::vector<double> values_;
    QString name_, unit_, message_;
    double min_ = 0, max_ = 0;
    int layer_ = 0, head_ = 0;
    Colormap colormap_ = Colormap::Viridis;
};
