#include "panels/metricspanel.h"

#include "views/frozencolumnsview.h"
#include "views/heatmapview.h"

#include "attnscope/analysis/head_metric_list.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

void HeadMetricsModel::setMetrics(std::vector<attnscope::HeadMetrics> metrics) {
    beginResetModel();
    metrics_ = std::move(metrics);
    attnscope::attachDetectors(metrics_, detectors_);
    endResetModel();
}

void HeadMetricsModel::setDetectors(std::vector<attnscope::HeadDetectors> detectors) {
    beginResetModel();
    detectors_ = std::move(detectors);
    attnscope::attachDetectors(metrics_, detectors_);
    endResetModel();
}

namespace {

// The detector entries of core's metric list, in the table's column order.
const attnscope::HeadMetricInfo& detectorInfo(int column) {
    static const std::vector<const attnscope::HeadMetricInfo*> infos = [] {
        std::vector<const attnscope::HeadMetricInfo*> v;
        for (const auto& info : attnscope::headMetricList())
            if (info.detector) v.push_back(&info);
        return v;
    }();
    return *infos.at(std::size_t(column - HeadMetricsModel::DetPreviousToken));
}

}  // namespace

int HeadMetricsModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(metrics_.size()); }
int HeadMetricsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant HeadMetricsModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= int(metrics_.size())) return {};
    const auto& m = metrics_[std::size_t(index.row())];
    const auto number = [&](double v, int decimals) -> QVariant {
        if (role == Qt::UserRole) return v;
        if (role == Qt::DisplayRole) return QString::number(v, 'f', decimals);
        if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    };
    switch (index.column()) {
        case Block:
            if (role == Qt::DisplayRole || role == Qt::UserRole) return QString::fromStdString(m.block);
            return {};
        case Layer:
            if (role == Qt::DisplayRole || role == Qt::UserRole) return m.layer;
            if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
            return {};
        case Head:
            if (m.head < 0 && role == Qt::DisplayRole) return tr("all");  // a per-layer source's one map
            if (m.head < 0 && role == Qt::ToolTipRole) return tr("One map per layer: the heads combined");
            if (role == Qt::DisplayRole || role == Qt::UserRole) return m.head;
            if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
            return {};
        case Entropy: return number(m.entropy, 3);
        case MeanDistance: return number(m.meanDistance, 2);
        case FirstToken: return number(m.firstToken, 3);
        case Sink: return number(m.sink, 3);
        case Separator: return number(m.separator, 3);
        case Pattern:
            if (role == Qt::DisplayRole || role == Qt::UserRole)
                return QString::fromLatin1(attnscope::patternName(m.pattern));
            return {};
        case KlLinear:
            if (std::isnan(m.klDotLinear)) {  // not defined (soft-cap, ALiBi): sorts below every value
                if (role == Qt::UserRole) return -1.0;
                if (role == Qt::DisplayRole) return QStringLiteral("–");
                if (role == Qt::ToolTipRole)
                    return QStringLiteral("Not defined: this layer's logits add a soft-cap, ALiBi or a position "
                                          "bias, which linear attention has no place for");
                if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
                return {};
            }
            return number(m.klDotLinear, 3);
        case DetPreviousToken:
        case DetDuplicateToken:
        case DetInduction:
        case DetFirstToken: {
            const auto& info = detectorInfo(index.column());
            const double v = info.value(m);
            if (std::isnan(v)) {  // not run: sorts below every score
                if (role == Qt::UserRole) return -1.0;
                if (role == Qt::DisplayRole) return QStringLiteral("–");
                if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
                return {};
            }
            return number(v, info.decimals);
        }
        default: return {};
    }
}

QVariant HeadMetricsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal) return {};
    static const char* const names[] = {
            "Block",           "Layer",       "Head",          "Entropy\n(nats)", "Distance\n(tokens)",
            "To first\ntoken", "Sink\nscore", "To\nseparator", "Pattern",         "KL dot‖linear\n(nats)"};
    static const char* const tips[] = {
            "Attention block",
            "Layer index",
            "Head index",
            "Mean over queries of the row entropy −Σ p log p, in nats (low = focused)",
            "Mean over queries of Σ p·|query − key|, in tokens",
            "Mean attention paid to the first token (share of each row, 0–1)",
            "Sink score: mean attention on the first token over the queries after it; a sink head scores > 0.3",
            "Mean attention paid to separator tokens ([SEP], </s>, <|endoftext|> …), 0–1",
            "Pattern class: diagonal, previous-token, global, local, sparse or mixed",
            "Mean row KL from the dot-product map to linear attention (elu+1 features), in nats"};
    if (section < 0 || section >= ColumnCount) return {};
    if (section >= DetPreviousToken) {
        static const char* const detNames[] = {"Previous-\ntoken det.", "Duplicate-\ntoken det.", "Induction\ndet.",
                                               "Sink\ndet."};
        if (role == Qt::DisplayRole) return QString::fromUtf8(detNames[section - DetPreviousToken]);
        if (role == Qt::ToolTipRole) return QString::fromUtf8(detectorInfo(section).tooltip);
        return {};
    }
    if (role == Qt::DisplayRole) return QString::fromUtf8(names[section]);
    if (role == Qt::ToolTipRole) return QString::fromUtf8(tips[section]);
    return {};
}

MetricsPanel::MetricsPanel(QWidget* parent) : QWidget(parent) {
    model_ = new HeadMetricsModel(this);
    proxy_ = new QSortFilterProxyModel(this);
    proxy_->setSourceModel(model_);
    proxy_->setSortRole(Qt::UserRole);
    // Block, Layer and Head stay in view while the metric and detector columns scroll sideways.
    auto* table = new FrozenColumnsView;
    table_ = table;
    table_->setObjectName(QStringLiteral("metricsTable"));
    table_->setModel(proxy_);
    table->setFrozenColumns({HeadMetricsModel::Block, HeadMetricsModel::Layer, HeadMetricsModel::Head});
    table_->setSortingEnabled(true);
    table_->sortByColumn(-1, Qt::AscendingOrder);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->setAlternatingRowColors(true);
    table_->verticalHeader()->setVisible(false);
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setStretchLastSection(true);
    status_ = new QLabel;
    status_->setObjectName(QStringLiteral("metricsStatus"));
    status_->setWordWrap(true);

    auto* left = new QWidget;
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    leftLayout->addWidget(status_);
    detectorsButton_ = new QPushButton(tr("Run head &detectors"));
    detectorsButton_->setObjectName(QStringLiteral("detectorsButton"));
    detectorsButton_->setToolTip(
            tr("Runs the model once on a repeated random-token probe and scores every head as "
               "TransformerLens's detectors do: previous token, duplicate token, induction, sink"));
    detectorsLabel_ = new QLabel;
    detectorsLabel_->setObjectName(QStringLiteral("detectorsLabel"));
    detectorsLabel_->setWordWrap(true);
    auto* detRow = new QHBoxLayout;
    detRow->addWidget(detectorsButton_);
    detRow->addWidget(detectorsLabel_, 1);
    leftLayout->addLayout(detRow);
    leftLayout->addWidget(table_, 1);

    viewCombo_ = new QComboBox;
    viewCombo_->setObjectName(QStringLiteral("blockViewCombo"));
    viewCombo_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    viewCombo_->setMinimumContentsLength(10);
    viewCombo_->addItem(tr("Attention rollout (residual 0.5)"));
    viewCombo_->addItem(tr("Attention flow (max-flow)"));
    viewCombo_->addItem(tr("Head similarity (cosine of maps)"));
    view_ = new HeatmapView;
    view_->setObjectName(QStringLiteral("blockHeatmap"));
    view_->clear(tr("Run an input to see this block's rollout."));
    auto* right = new QWidget;
    auto* rightLayout = new QVBoxLayout(right);
    rightLayout->setContentsMargins(0, 0, 0, 0);
    auto* row = new QHBoxLayout;
    row->addWidget(new QLabel(tr("Block view:")));
    row->addWidget(viewCombo_, 1);
    rightLayout->addLayout(row);
    rightLayout->addWidget(view_, 1);

    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(left);
    split->addWidget(right);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);
    split->setSizes({640, 460});
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(split);

    const auto headAt = [this](const QModelIndex& proxyIndex, auto signal) {
        const QModelIndex i = proxy_->mapToSource(proxyIndex);
        if (!i.isValid()) return;
        const auto& m = model_->metrics()[std::size_t(i.row())];
        emit(this->*signal)(QString::fromStdString(m.block), m.layer, m.head);
    };
    connect(table_, &QTableView::clicked, this, [=](const QModelIndex& i) { headAt(i, &MetricsPanel::headSelected); });
    connect(table_, &QTableView::activated, this,
            [=](const QModelIndex& i) { headAt(i, &MetricsPanel::headActivated); });
    connect(viewCombo_, &QComboBox::currentIndexChanged, this, &MetricsPanel::viewChanged);
}

BlockView MetricsPanel::currentView() const {
    switch (viewCombo_->currentIndex()) {
        case 1: return BlockView::Flow;
        case 2: return BlockView::Similarity;
        default: return BlockView::Rollout;
    }
}

void MetricsPanel::setStatus(const QString& text) { status_->setText(text); }

void MetricsPanel::setColoring(Colormap colormap, const ColorScale& scale) { view_->setColoring(colormap, scale); }

void MetricsPanel::showMetrics(const MetricsResult& r) {
    model_->setMetrics(r.metrics);
    // The block column only when there is more than one block (encoder-decoder models).
    const bool oneBlock = std::all_of(r.metrics.begin(), r.metrics.end(), [&](const attnscope::HeadMetrics& m) {
        return m.block == r.metrics.front().block;
    });
    table_->setColumnHidden(HeadMetricsModel::Block, oneBlock);
    // KL(dot ‖ linear) compares variants of the weights: not defined for another source's maps.
    table_->setColumnHidden(HeadMetricsModel::KlLinear, !r.variant.source.weights());
    table_->resizeColumnsToContents();
    static_cast<FrozenColumnsView*>(table_)->updateFrozen();
}

void MetricsPanel::showBlockView(const BlockViewResult& r, const QStringList& rowLabels, const QStringList& colLabels,
                                 const QString& title) {
    view_->setMap(r.map, rowLabels, colLabels, title);
}

void MetricsPanel::setDetectors(std::vector<attnscope::HeadDetectors> detectors, const QString& text) {
    model_->setDetectors(std::move(detectors));
    detectorsLabel_->setText(text);
    table_->resizeColumnsToContents();
    static_cast<FrozenColumnsView*>(table_)->updateFrozen();
}

void MetricsPanel::clearBlockView(const QString& message) { view_->clear(message); }

void MetricsPanel::clearAll(const QString& message) {
    model_->setMetrics({});
    status_->setText(message);
    view_->clear(message);
}
