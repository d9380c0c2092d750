#include "panels/corpuspanel.h"

#include "figure/corpusfigures.h"
#include "state/recentfiles.h"
#include "views/heatmapview.h"

#include "attnscope/io/input_file.h"
#include "attnscope/runtime/error.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QJsonDocument>
#include <QFileDialog>
#include <QJsonObject>
#include <QLabel>
#include <QListWidget>
#include <QMouseEvent>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QTextStream>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <optional>

CorpusPanel::CorpusPanel(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    auto* bar = new QHBoxLayout;
    openButton_ = new QPushButton(tr("Open result folder…"));
    openButton_->setObjectName(QStringLiteral("corpusOpenButton"));
    runButton_ = new QPushButton(tr("Run corpus on a file…"));
    runButton_->setObjectName(QStringLiteral("corpusRunButton"));
    cancelButton_ = new QPushButton(tr("Cancel"));
    cancelButton_->setObjectName(QStringLiteral("corpusCancelButton"));
    cancelButton_->setEnabled(false);
    progress_ = new QProgressBar;
    progress_->setRange(0, 1000);
    progress_->setTextVisible(true);
    progress_->setFormat(QString());
    blocks_ = new QComboBox;
    blocks_->setObjectName(QStringLiteral("corpusBlockCombo"));
    quantities_ = new QComboBox;
    quantities_->setObjectName(QStringLiteral("corpusQuantityCombo"));
    quantities_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);  // the tab stays narrow
    quantities_->setMinimumContentsLength(12);
    quantities_->setToolTip(tr("What the heat map shows per head: the importance the pruning order ranks by, or a "
                               "statistic's mean over the corpus examples"));
    examples_ = new QComboBox;
    examples_->setObjectName(QStringLiteral("corpusExampleCombo"));
    examples_->setMinimumContentsLength(8);
    examples_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    // Two short rows each (not one long one): the tab stays narrow.
    bar->addWidget(openButton_);
    bar->addWidget(runButton_);
    bar->addStretch(1);
    layout->addLayout(bar);
    auto* running = new QHBoxLayout;
    running->addWidget(progress_, 1);
    running->addWidget(cancelButton_);
    layout->addLayout(running);
    auto* choose = new QHBoxLayout;
    choose->addWidget(new QLabel(tr("Block:")));
    choose->addWidget(blocks_);
    choose->addSpacing(12);
    choose->addWidget(new QLabel(tr("Show:")));
    choose->addWidget(quantities_, 1);
    layout->addLayout(choose);
    auto* exampleRow = new QHBoxLayout;
    auto* exampleLabel = new QLabel(tr("Example:"));
    exampleLabel->setToolTip(tr("Click a head of the heat map to see its maps on this example in the Explore tab"));
    examples_->setToolTip(exampleLabel->toolTip());
    exampleRow->addWidget(exampleLabel);
    exampleRow->addWidget(examples_, 1);
    layout->addLayout(exampleRow);
    status_ = new QLabel(
            tr("Open a result folder of attnscope-cli corpus, or run a corpus file through the open model."));
    status_->setObjectName(QStringLiteral("corpusStatus"));
    status_->setWordWrap(true);
    layout->addWidget(status_);
    badLines_ = new QListWidget;
    badLines_->setObjectName(QStringLiteral("corpusBadLines"));
    badLines_->setToolTip(tr("Lines of the corpus file that were skipped, and why"));
    badLines_->setMaximumHeight(badLines_->fontMetrics().height() * 5 + 8);
    badLines_->hide();
    layout->addWidget(badLines_);

    auto* split = new QSplitter(Qt::Horizontal);
    importance_ = new HeatmapView;
    importance_->setObjectName(QStringLiteral("corpusImportance"));
    importance_->clear(tr("No corpus result"));
    importance_->setLevelOfDetailEnabled(false);
    curve_ = new QCustomPlot;
    curve_->setObjectName(QStringLiteral("corpusCurve"));
    curve_->xAxis->setLabel(tr("heads pruned"));
    curve_->yAxis->setLabel(tr("task metric"));
    curve_->setMinimumSize(180, 160);
    split->addWidget(importance_);
    split->addWidget(curve_);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);
    layout->addWidget(split, 1);

    connect(openButton_, &QPushButton::clicked, this, &CorpusPanel::openRequested);
    connect(runButton_, &QPushButton::clicked, this, &CorpusPanel::chooseRun);
    connect(cancelButton_, &QPushButton::clicked, this, &CorpusPanel::cancelRequested);
    connect(blocks_, &QComboBox::currentIndexChanged, this, [this] { showBlock(); });
    connect(quantities_, &QComboBox::currentIndexChanged, this, [this] { showBlock(); });
    // A click (press and release without a drag) on a cell chooses that head.
    connect(importance_->plot(), &QCustomPlot::mousePress, this, [this](QMouseEvent* e) { pressAt_ = e->pos(); });
    connect(importance_->plot(), &QCustomPlot::mouseRelease, this, [this](QMouseEvent* e) {
        if ((e->pos() - pressAt_).manhattanLength() > 4 || result_.heads.empty()) return;
        if (const auto cell = importance_->cellGeometry().cellAt(e->position()))
            emit headChosen(blocks_->currentText(), cell->query, cell->key, chosenExample());
    });
}

// Two dialogs in turn, each opened without blocking: the corpus file, then the results folder
// (starting beside the file). Non-native, so that they behave the same everywhere.
void CorpusPanel::chooseRun() {
    if (dialog_) return;
    auto* file = new QFileDialog(this, tr("Corpus file (one example per line)"),
                                 recent::lastFolder(QStringLiteral("corpus")),
                                 tr("Corpus files (*.txt *.jsonl *.json);;All files (*)"));
    dialog_ = file;
    file->setObjectName(QStringLiteral("corpusFileDialog"));
    file->setFileMode(QFileDialog::ExistingFile);
    file->setOption(QFileDialog::DontUseNativeDialog);
    file->setAttribute(Qt::WA_DeleteOnClose);
    connect(file, &QFileDialog::fileSelected, this, [this](const QString& data) {
        auto* folder = new QFileDialog(this, tr("Folder for the results of %1").arg(QFileInfo(data).fileName()),
                                       QFileInfo(data).absolutePath());
        dialog_ = folder;
        folder->setObjectName(QStringLiteral("corpusOutputDialog"));
        folder->setFileMode(QFileDialog::Directory);
        folder->setOption(QFileDialog::ShowDirsOnly);
        folder->setOption(QFileDialog::DontUseNativeDialog);
        folder->setLabelText(QFileDialog::Accept, tr("Write results here"));
        folder->setAttribute(Qt::WA_DeleteOnClose);
        connect(folder, &QFileDialog::fileSelected, this,
                [this, data](const QString& out) { emit runRequested(data, out); });
        folder->open();
    });
    file->open();
}

void CorpusPanel::setColoring(Colormap colormap, const ColorScale& scale) { importance_->setColoring(colormap, scale); }

QString CorpusPanel::chosenExample() const { return examples_->currentData().toString(); }

void CorpusPanel::loadExamples(const QString& path) {
    examples_->clear();
    // core's input rule: only a regular file is read (a FIFO named in run.json cannot hang this).
    std::optional<attnscope::InputFile> in;
    try {
        in.emplace(QFile::encodeName(path).toStdString());
    } catch (const attnscope::Error&) {
        return;  // the run or the result reports the file
    }
    QFile f;
    if (!f.open(in->fd(), QIODevice::ReadOnly, QFileDevice::DontCloseHandle)) return;
    const bool jsonl = path.endsWith(QLatin1String(".jsonl")) || path.endsWith(QLatin1String(".json"));
    int line = 0;
    while (!f.atEnd() && examples_->count() < 500) {
        const QString text = QString::fromUtf8(f.readLine()).trimmed();
        ++line;
        if (text.isEmpty()) continue;
        QString shown = text;
        if (jsonl) {
            const QJsonObject o = QJsonDocument::fromJson(text.toUtf8()).object();
            if (!o.value(QStringLiteral("text")).isString()) continue;
            shown = o.value(QStringLiteral("text")).toString();
        }
        examples_->addItem(QStringLiteral("%1: %2").arg(line).arg(shown), shown);
    }
}

bool CorpusPanel::openResult(const QString& dir, const QString& data) {
    try {
        result_ = attnscope::readCorpusResult(dir.toStdString());
    } catch (const attnscope::Error& e) {
        status_->setText(tr("Cannot open the result: %1").arg(QString::fromStdString(e.what())));
        return false;
    }
    resultDir_ = dir;
    QString corpus = data;
    QFile run(QDir(dir).filePath(QStringLiteral("run.json")));
    if (corpus.isEmpty() && run.open(QIODevice::ReadOnly)) {
        const QString name = QJsonDocument::fromJson(run.readAll())
                                     .object()
                                     .value(QStringLiteral("settings"))
                                     .toObject()
                                     .value(QStringLiteral("data"))
                                     .toObject()
                                     .value(QStringLiteral("name"))
                                     .toString();
        for (const QString& candidate : {QDir(dir).filePath(name), QDir(dir).filePath(QStringLiteral("../") + name)})
            if (!name.isEmpty() && QFileInfo::exists(candidate)) corpus = candidate;
    }
    if (corpus != QLatin1String("-")) loadExamples(corpus);  // "-": keep the examples shown
    showResult();
    return true;
}

void CorpusPanel::showResult() {
    QSignalBlocker block(blocks_), quantity(quantities_);
    blocks_->clear();
    for (const std::string& b : resultBlocks(result_)) blocks_->addItem(QString::fromStdString(b));
    // The quantity shown stays when the new result has it (comparing runs of one model).
    const QString shownKey = quantities_->currentData().toString();
    quantities_->clear();
    for (const CorpusQuantity& q : corpusQuantities(result_))
        quantities_->addItem(q.unit.isEmpty() ? q.name : QStringLiteral("%1 (%2)").arg(q.name, q.unit),
                             QString::fromStdString(q.key));
    if (const int at = quantities_->findData(shownKey); at >= 0) quantities_->setCurrentIndex(at);
    QString text = tr("%1 · %2 examples · %3 of the unmasked model %4")
                           .arg(QString::fromStdString(result_.model).section(QLatin1Char('/'), -1))
                           .arg(result_.examples)
                           .arg(QString::fromStdString(result_.metricName))
                           .arg(result_.baseMetric, 0, 'g', 4);
    badLines_->clear();
    for (const attnscope::BadLine& b : result_.badLines)
        badLines_->addItem(tr("line %1: %2").arg(b.line).arg(QString::fromStdString(b.reason)));
    badLines_->setVisible(!result_.badLines.empty());
    if (!result_.badLines.empty())
        text += result_.badLines.size() == 1 ? tr(" · 1 bad line skipped (below)")
                                             : tr(" · %1 bad lines skipped (below)").arg(result_.badLines.size());
    status_->setText(text);
    showBlock();
    curve_->clearGraphs();
    if (!result_.pruning.empty()) {
        QVector<double> x, y, lo, hi;
        for (const auto& s : result_.pruning) {
            x << s.k;
            y << s.metric.mean;
            lo << s.metric.mean - s.metric.std;
            hi << s.metric.mean + s.metric.std;
        }
        QCPGraph* upper = curve_->addGraph();
        upper->setData(x, hi);
        upper->setPen(Qt::NoPen);
        QCPGraph* lower = curve_->addGraph();
        lower->setData(x, lo);
        lower->setPen(Qt::NoPen);
        upper->setBrush(QColor(31, 119, 180, 40));
        upper->setChannelFillGraph(lower);
        QCPGraph* mean = curve_->addGraph();
        mean->setData(x, y);
        mean->setPen(QPen(QColor(31, 119, 180), 2));
        mean->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 5));
        curve_->xAxis->setLabel(tr("heads pruned (%1 order)").arg(QString::fromStdString(result_.orderKind)));
        curve_->yAxis->setLabel(QString::fromStdString(result_.metricName));
        curve_->xAxis->setRange(0, result_.pruning.back().k);
        if (result_.metricName == "hidden cosine")
            curve_->yAxis->rescale();
        else
            curve_->yAxis->setRange(-0.02, 1.02);
    }
    curve_->replot();
}

void CorpusPanel::showBlock() {
    const std::string key = quantities_->currentData().toString().toStdString();
    const auto all = corpusQuantities(result_);
    const auto q = std::find_if(all.begin(), all.end(), [&](const CorpusQuantity& c) { return c.key == key; });
    if (q == all.end()) {
        importance_->clear(result_.heads.empty() ? tr("No corpus result") : tr("This result has no per-head values"));
        return;
    }
    const std::string block = blocks_->currentText().toStdString();
    attnscope::HeadMap grid = headGrid(result_, block, key);
    if (std::all_of(grid.values.begin(), grid.values.end(), [](float v) { return std::isnan(v); })) {
        importance_->clear(tr("No head of block %1 has %2 (a detector needs the block's maps to be over the input ids)")
                                   .arg(blocks_->currentText(), q->name));
        return;
    }
    // Colour in [0, 1]: shares and the task metric as they are; importance, nats and tokens over
    // the largest value of any block (heads whose masking helps show as 0). Hover shows raw values.
    double top = 0;
    for (const auto& h : result_.heads)
        if (const double v = headValue(h, key); std::isfinite(v)) top = std::max(top, v);
    const bool asIs = q->unit.isEmpty() && key != "importance";
    const double scale = asIs || top <= 0 ? 1.0 : top;
    for (float& v : grid.values) v = std::isnan(v) ? 0.0f : std::clamp(static_cast<float>(v / scale), 0.0f, 1.0f);
    QStringList layers, heads;
    for (int l = 0; l < grid.rows; ++l) layers << QStringLiteral("L%1").arg(l);
    for (int h = 0; h < grid.cols; ++h) heads << QStringLiteral("H%1").arg(h);
    HeatmapView::AxisNames names;
    names.rows = tr("layer");
    names.cols = tr("head");
    const QString unit = q->unit.isEmpty() ? QString() : QStringLiteral(" ") + q->unit;
    names.values = asIs ? q->name : tr("%1 / max (max %2%3)").arg(q->name).arg(top, 0, 'g', 3).arg(unit);
    names.valueScale = scale;
    importance_->setAxisNames(names);
    // A detector counts only the examples with a target (StatSpread::examples): say how many.
    int fewest = result_.examples, most = 0;
    for (const auto& h : result_.heads)
        if (h.head.block == block) {
            const int n = h.hasStats && h.stats.count(key) ? h.stat(key).examples : result_.examples;
            fewest = std::min(fewest, n), most = std::max(most, n);
        }
    const QString over = most >= result_.examples && fewest >= result_.examples
                                 ? tr("mean over %1 examples").arg(result_.examples)
                                 : tr("mean over %1 of %2 examples")
                                           .arg(fewest == most ? QString::number(most)
                                                               : QStringLiteral("%1–%2").arg(fewest).arg(most))
                                           .arg(result_.examples);
    importance_->setMap(grid, layers, heads, QStringLiteral("%1 · %2").arg(blocks_->currentText(), over));
}

void CorpusPanel::beginRun(const QString& modelSpec, const QString& data, const QString& outDir) {
    runButton_->setEnabled(false);
    openButton_->setEnabled(false);
    cancelButton_->setEnabled(true);
    progress_->setValue(0);
    progress_->setFormat(QString());
    status_->setText(tr("Running %1 on %2…").arg(modelSpec, QFileInfo(data).fileName()));
    loadExamples(data);
    resultDir_ = outDir;
}

void CorpusPanel::showProgress(const QString& phase, long long done, long long total, double rate) {
    progress_->setValue(total > 0 ? static_cast<int>(1000 * done / total) : 0);
    QString text = tr("%1: %2/%3").arg(phase).arg(done).arg(total);
    if (rate > 0) {
        text += tr(" · %1/s").arg(rate, 0, 'f', 1);
        if (done < total) text += tr(" · %1 s left").arg((total - done) / rate, 0, 'f', 0);
    }
    progress_->setFormat(text);
}

void CorpusPanel::endRun(const QString& error) {
    runButton_->setEnabled(true);
    openButton_->setEnabled(true);
    cancelButton_->setEnabled(false);
    if (!error.isEmpty()) {
        status_->setText(error);
        emit finished(false);
        return;
    }
    const bool ok = openResult(resultDir_, QStringLiteral("-"));  // examples stay those of the file run
    emit finished(ok);
}
