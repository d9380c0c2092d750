#include "panels/modelviewpanel.h"

#include "views/headmetricmap.h"
#include "views/overviewgrid.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSplitter>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

using attnscope::HeadMetricInfo;
using attnscope::headMetricList;
using attnscope::PatternClass;

ModelViewPanel::ModelViewPanel(QWidget* parent) : QWidget(parent) {
    grid_ = new OverviewGrid;
    grid_->setObjectName(QStringLiteral("modelOverview"));
    grid_->setFitToHeight(true);
    grid_->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    map_ = new HeadMetricMap;
    map_->setObjectName(QStringLiteral("headMetricMap"));

    order_ = new QComboBox;
    order_->setObjectName(QStringLiteral("modelOrder"));
    order_->addItem(tr("head number"), QString());
    metric_ = new QComboBox;
    metric_->setObjectName(QStringLiteral("modelMetric"));
    for (const HeadMetricInfo& m : headMetricList()) {
        order_->addItem(QString::fromUtf8(m.title), QString::fromUtf8(m.key));
        metric_->addItem(QString::fromUtf8(m.title), QString::fromUtf8(m.key));
    }
    order_->setToolTip(tr("Each layer's heads from left to right in this order; every tile then names its head."));
    descending_ = new QCheckBox(tr("Largest first"));
    descending_->setObjectName(QStringLiteral("modelDescending"));
    descending_->setChecked(true);
    frames_ = new QCheckBox(tr("Frame by pattern"));
    frames_->setObjectName(QStringLiteral("modelFrames"));
    frames_->setChecked(true);
    status_ = new QLabel;
    status_->setObjectName(QStringLiteral("modelStatus"));
    legend_ = new QLabel;
    legend_->setObjectName(QStringLiteral("modelLegend"));
    QStringList items;
    for (PatternClass c : {PatternClass::Diagonal, PatternClass::PreviousToken, PatternClass::Global,
                           PatternClass::Local, PatternClass::Sparse, PatternClass::Mixed})
        items << QStringLiteral("<span style='color:%1'>&#9632;</span>&nbsp;%2")
                         .arg(patternColor(c).name(), QString::fromLatin1(attnscope::patternName(c)));
    legend_->setText(items.join(QStringLiteral(" &nbsp; ")));
    legend_->setWordWrap(true);  // the panel stays narrow

    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Order heads by")));
    bar->addWidget(order_);
    bar->addWidget(descending_);
    bar->addSpacing(12);
    bar->addWidget(frames_);
    bar->addStretch();
    status_->setWordWrap(true);  // on its own line: the panel stays narrow
    auto* left = new QWidget;
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    leftLayout->addWidget(grid_, 1);
    leftLayout->addWidget(legend_);
    auto* right = new QWidget;
    auto* rightLayout = new QVBoxLayout(right);
    rightLayout->setContentsMargins(0, 0, 0, 0);
    auto* metricRow = new QHBoxLayout;
    metricRow->addWidget(new QLabel(tr("Metric")));
    metricRow->addWidget(metric_, 1);
    rightLayout->addLayout(metricRow);
    rightLayout->addWidget(map_, 1);
    split_ = new QSplitter(Qt::Horizontal);
    split_->addWidget(left);
    split_->addWidget(right);
    split_->setStretchFactor(0, 7);  // the thumbnails take most of the space
    split_->setStretchFactor(1, 3);
    split_->setSizes({700, 300});
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(status_);
    layout->addWidget(split_, 1);

    for (QComboBox* c : {order_, metric_}) connect(c, &QComboBox::currentIndexChanged, this, &ModelViewPanel::refresh);
    for (QCheckBox* c : {descending_, frames_}) connect(c, &QCheckBox::toggled, this, &ModelViewPanel::refresh);
    connect(grid_, &OverviewGrid::headChosen, this, &ModelViewPanel::headChosen);
    connect(map_, &HeadMetricMap::headChosen, this, &ModelViewPanel::headChosen);
    map_->clear(tr("Run an input to see a metric of every head."));
}

void ModelViewPanel::setBlock(const QString& block, int layers, int heads) {
    block_ = block;
    layers_ = layers;
    heads_ = heads;
    metrics_.clear();
    grid_->setShape(layers, heads);
    refresh();
}

void ModelViewPanel::setMetrics(const std::vector<attnscope::HeadMetrics>& metrics) {
    metrics_.clear();
    for (const auto& m : metrics)
        if (QString::fromStdString(m.block) == block_) metrics_.push_back(m);
    refresh();
}

void ModelViewPanel::setStatus(const QString& text) { status_->setText(text); }

const HeadMetricInfo* ModelViewPanel::orderMetric() const {
    const QString id = order_->currentData().toString();
    if (id.isEmpty()) return nullptr;
    return &attnscope::headMetric(id.toStdString());
}

const HeadMetricInfo& ModelViewPanel::mapMetric() const {
    return attnscope::headMetric(metric_->currentData().toString().toStdString());
}

const attnscope::HeadMetrics* ModelViewPanel::metricsOf(int layer, int head) const {
    if (layer < 0 || head < 0 || layer >= layers_ || head >= heads_ || byHead_.empty()) return nullptr;
    return byHead_[std::size_t(layer) * heads_ + head];
}

void ModelViewPanel::refresh() {
    const std::size_t cells = std::size_t(std::max(0, layers_)) * std::max(0, heads_);
    byHead_.assign(cells, nullptr);
    for (const auto& m : metrics_)
        if (m.layer >= 0 && m.layer < layers_ && m.head >= 0 && m.head < heads_)
            byHead_[std::size_t(m.layer) * heads_ + m.head] = &m;

    // Order: each layer's heads by the metric (unknown values last), ties by head number.
    std::vector<std::vector<int>> order;
    if (const HeadMetricInfo* metric = orderMetric(); metric && cells > 0) {
        const bool down = descending_->isChecked();
        for (int l = 0; l < layers_; ++l) {
            std::vector<int> heads(static_cast<std::size_t>(heads_));
            std::iota(heads.begin(), heads.end(), 0);
            auto key = [&](int h) {
                const auto* m = byHead_[std::size_t(l) * heads_ + h];
                return m ? metric->value(*m) : std::numeric_limits<double>::quiet_NaN();
            };
            std::stable_sort(heads.begin(), heads.end(), [&](int a, int b) {
                const double x = key(a), y = key(b);
                if (std::isnan(x) || std::isnan(y)) return !std::isnan(x) && std::isnan(y);
                return down ? x > y : x < y;
            });
            order.push_back(std::move(heads));
        }
    }
    grid_->setHeadOrder(std::move(order));

    std::vector<QColor> frames;
    if (frames_->isChecked())
        for (std::size_t i = 0; i < cells; ++i)
            frames.push_back(byHead_[i] ? patternColor(byHead_[i]->pattern) : QColor());
    grid_->setFrameColors(std::move(frames));
    legend_->setVisible(frames_->isChecked());

    if (cells == 0) {
        map_->clear(tr("Run an input to see a metric of every head."));
        return;
    }
    const HeadMetricInfo& metric = mapMetric();
    std::vector<double> values(cells, std::numeric_limits<double>::quiet_NaN());
    for (std::size_t i = 0; i < cells; ++i)
        if (byHead_[i]) values[i] = metric.value(*byHead_[i]);
    map_->setValues(layers_, heads_, std::move(values), QString::fromUtf8(metric.title),
                    QString::fromUtf8(metric.unit));
}
