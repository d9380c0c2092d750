#include "panels/trainingcurvespanel.h"

#include "figure/curvefigure.h"

#include "attnscope/runtime/error.h"

#include <qcustomplot.h>

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

#include <map>

namespace {

QString headName(const attnscope::HeadMonitor& h) {
    return QStringLiteral("%1 L%2 H%3").arg(QString::fromStdString(h.block)).arg(h.layer).arg(h.head);
}

QString layerName(const attnscope::HeadMonitor& h) {
    return QStringLiteral("%1 L%2").arg(QString::fromStdString(h.block)).arg(h.layer);
}

QCPGraph* addCurve(QCustomPlot* plot, const QString& name, int color, bool dashed,
                   QCPScatterStyle::ScatterShape shape = QCPScatterStyle::ssCircle) {
    QCPGraph* g = plot->addGraph();
    g->setName(name);
    QPen pen(seriesColor(color), 1.6);
    if (dashed) pen.setStyle(Qt::DashLine);
    g->setPen(pen);
    g->setScatterStyle(QCPScatterStyle(shape, 5));
    return g;
}

// Head h's marker: the head curves share their layer's colour (the similarity plot's legend).
QCPScatterStyle::ScatterShape headShape(int head) {
    const QCPScatterStyle::ScatterShape shapes[] = {QCPScatterStyle::ssCircle,   QCPScatterStyle::ssSquare,
                                                    QCPScatterStyle::ssTriangle, QCPScatterStyle::ssDiamond,
                                                    QCPScatterStyle::ssCross,    QCPScatterStyle::ssPlus};
    return shapes[head % 6];
}

}  // namespace

TrainingCurvesPanel::TrainingCurvesPanel(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    auto* bar = new QHBoxLayout;
    open_ = new QPushButton(tr("Open run…"));
    open_->setObjectName(QStringLiteral("curvesOpen"));
    open_->setToolTip(tr("A folder written by attnscope-cli train or distil (its monitors.csv)"));
    status_ = new QLabel(tr("No run: open a folder with a monitors.csv"));
    status_->setObjectName(QStringLiteral("curvesStatus"));
    status_->setWordWrap(true);
    bar->addWidget(open_);
    bar->addWidget(status_, 1);
    layout->addLayout(bar);

    auto* grid = new QGridLayout;
    const QString titles[kCurves] = {tr("training loss"), tr("probe accuracy"), tr("mean entropy per head (nats)"),
                                     tr("mean pairwise head similarity per layer"),
                                     tr("attention distance per head (tokens)")};
    for (int i = 0; i < kCurves; ++i) {
        auto* plot = new QCustomPlot;
        plot->setObjectName(QStringLiteral("curve%1").arg(i));
        plot->plotLayout()->insertRow(0);
        plot->plotLayout()->addElement(0, 0, new QCPTextElement(plot, titles[i]));
        plot->xAxis->setLabel(tr("epoch"));
        // Epochs are whole numbers: ticks at 1, 2, 3… (multiples of them for long runs).
        auto ticker = QSharedPointer<QCPAxisTickerFixed>::create();
        ticker->setTickStep(1.0);
        ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
        plot->xAxis->setTicker(ticker);
        plot->setMinimumSize(220, 170);
        plots_[std::size_t(i)] = plot;
        grid->addWidget(plot, i / 3, i % 3);
    }
    flags_ = new QTableWidget(0, 3);
    flags_->setObjectName(QStringLiteral("curvesFlags"));
    flags_->setHorizontalHeaderLabels({tr("head"), tr("flag"), tr("epochs")});
    flags_->horizontalHeader()->setStretchLastSection(true);
    flags_->verticalHeader()->hide();
    flags_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    flags_->setToolTip(tr("collapsed-peaked: entropy near 0; collapsed-uniform: near log n; duplicated: cosine "
                          "similarity > 0.95 to another head of its layer"));
    grid->addWidget(flags_, 1, 2);
    layout->addLayout(grid, 1);
    auto* key = new QLabel(tr("Head curves: colour = layer (the similarity legend), marker = head (● H0, ■ H1, ▲ H2, "
                              "◆ H3, × H4, + H5); dashed = a head flagged in some epoch (the table)."));
    key->setWordWrap(true);
    layout->addWidget(key);
    connect(open_, &QPushButton::clicked, this, &TrainingCurvesPanel::chooseRun);
}

void TrainingCurvesPanel::chooseRun() {
    auto* dialog = new QFileDialog(this, tr("Training run folder"));
    dialog->setFileMode(QFileDialog::Directory);
    dialog->setOption(QFileDialog::DontUseNativeDialog);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QFileDialog::fileSelected, this, [this](const QString& dir) { openRun(dir); });
    dialog->open();
}

bool TrainingCurvesPanel::openRun(const QString& path) {
    const QString file = QFileInfo(path).isDir() ? QDir(path).filePath(QStringLiteral("monitors.csv")) : path;
    try {
        epochs_ = attnscope::readMonitorCsv(file.toStdString());
    } catch (const attnscope::Error& e) {
        const QString message = QString::fromUtf8(e.what());
        status_->setText(tr("error: %1").arg(message));
        emit failed(message);
        return false;
    }
    status_->setText(tr("%1 · %2 epochs · %3 heads")
                             .arg(QDir::toNativeSeparators(file))
                             .arg(epochs_.size())
                             .arg(epochs_.front().heads.size()));
    showRun();
    return true;
}

void TrainingCurvesPanel::showRun() {
    for (QCustomPlot* p : plots_) p->clearGraphs();
    // Heads ever flagged: their flags and the epochs of each.
    std::map<QString, std::map<QString, QStringList>> flagged;
    for (const auto& e : epochs_)
        for (const auto& h : e.heads)
            for (const QString& f : QString::fromStdString(h.flags).split(QLatin1Char('+'), Qt::SkipEmptyParts))
                flagged[headName(h)][f] << QString::number(e.epoch);
    const auto& first = epochs_.front().heads;
    QCPGraph* loss = addCurve(plot(Loss), tr("loss"), 0, false);
    QCPGraph* accuracy = addCurve(plot(Accuracy), tr("accuracy"), 1, false);
    for (const auto& e : epochs_) {
        loss->addData(e.epoch, e.loss);
        accuracy->addData(e.epoch, e.accuracy);
    }
    int layers = 0;
    for (std::size_t i = 0; i < first.size(); ++i) {
        const bool dashed = flagged.count(headName(first[i])) > 0;
        const bool newLayer = i == 0 || layerName(first[i]) != layerName(first[i - 1]);
        QCPGraph* similarity = newLayer ? addCurve(plot(Similarity), layerName(first[i]), layers++, false) : nullptr;
        const int color = layers - 1;
        const auto shape = headShape(first[i].head);
        QCPGraph* entropy = addCurve(plot(Entropy), headName(first[i]), color, dashed, shape);
        QCPGraph* distance = addCurve(plot(Distance), headName(first[i]), color, dashed, shape);
        for (const auto& e : epochs_) {
            if (i >= e.heads.size()) continue;
            entropy->addData(e.epoch, e.heads[i].entropy);
            distance->addData(e.epoch, e.heads[i].distance);
            if (similarity) similarity->addData(e.epoch, e.heads[i].layerSimilarity);
        }
    }
    for (QCustomPlot* p : plots_) {
        // Head curves are keyed by the similarity plot's legend (colour = layer) and the caption.
        p->legend->setVisible(p == plot(Similarity) && p->graphCount() > 1);
        p->legend->setBrush(QColor(255, 255, 255, 200));
        p->rescaleAxes();
        const QCPRange x = p->xAxis->range();
        p->xAxis->setRange(x.lower - 0.3, x.upper + 0.3);
        const QCPRange y = p == plot(Accuracy) ? QCPRange(0, 1) : p->yAxis->range();  // a fraction: its whole range
        const double pad = std::max(1e-3, 0.08 * (y.upper - y.lower));
        p->yAxis->setRange(y.lower - pad, y.upper + pad);
        p->replot(QCustomPlot::rpQueuedReplot);
    }
    flags_->setRowCount(0);
    for (const auto& [head, flags] : flagged)
        for (const auto& [flag, epochs] : flags) {
            const int row = flags_->rowCount();
            flags_->insertRow(row);
            flags_->setItem(row, 0, new QTableWidgetItem(head));
            flags_->setItem(row, 1, new QTableWidgetItem(flag));
            flags_->setItem(row, 2, new QTableWidgetItem(epochs.join(QStringLiteral(", "))));
        }
    if (flagged.empty()) {
        flags_->insertRow(0);
        flags_->setItem(0, 0, new QTableWidgetItem(tr("no head flagged")));
    }
}
