#include "panels/kindspanel.h"

#include "figure/kindsfigures.h"
#include "views/figurecanvas.h"

#include "attnscope/runtime/error.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

namespace {

QTableWidget* newTable(const QString& name) {
    auto* t = new QTableWidget;
    t->setObjectName(name);
    t->verticalHeader()->hide();
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    t->horizontalHeader()->setStretchLastSection(true);
    return t;
}

void setRow(QTableWidget* t, int row, const QStringList& cells) {
    for (int c = 0; c < cells.size(); ++c) t->setItem(row, c, new QTableWidgetItem(cells[c]));
}

QString num(double v) { return QString::number(v, 'g', 6); }

}  // namespace

KindsPanel::KindsPanel(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    auto* bar = new QHBoxLayout;
    open_ = new QPushButton(tr("Open report…"));
    open_->setObjectName(QStringLiteral("kindsOpen"));
    open_->setToolTip(
            tr("A folder written by attnscope-cli kinds-report (kinds.csv, scaling.csv) or by distil --per-head"));
    export_ = new QPushButton(tr("Export figures…"));
    export_->setObjectName(QStringLiteral("kindsExport"));
    export_->setEnabled(false);
    status_ = new QLabel(tr("No report: open a kinds-report folder"));
    status_->setObjectName(QStringLiteral("kindsStatus"));
    status_->setWordWrap(true);
    bar->addWidget(open_);
    bar->addWidget(export_);
    bar->addWidget(status_, 1);
    layout->addLayout(bar);

    auto* split = new QSplitter(Qt::Vertical);
    auto* figures = new QWidget;
    auto* row = new QHBoxLayout(figures);
    row->setContentsMargins(0, 0, 0, 0);
    for (std::size_t i = 0; i < canvases_.size(); ++i) {
        auto* canvas = new FigureCanvas;
        canvas->setObjectName(QStringLiteral("kindsFigure%1").arg(i));
        canvas->setMinimumSize(240, 190);
        canvas->paint = [this, i](QPainter& p, const QRectF& area) {
            if (i >= figures_.size() || figures_[i].series.empty() || area.width() < 100) return;
            CurveFigure f = figures_[i];  // the export's figure at the canvas's size (96 px per inch)
            f.widthIn = area.width() / 96.0;
            f.heightIn = area.height() / 96.0;
            p.drawImage(area.topLeft(), renderCurveFigure(f, 96));
        };
        canvases_[i] = canvas;
        row->addWidget(canvas, 1);
    }
    split->addWidget(figures);
    auto* tables = new QSplitter(Qt::Horizontal);
    kinds_ = newTable(QStringLiteral("kindsTable"));
    scaling_ = newTable(QStringLiteral("kindsScaling"));
    tables->addWidget(kinds_);
    tables->addWidget(scaling_);
    tables->setStretchFactor(0, 3);
    tables->setStretchFactor(1, 2);
    split->addWidget(tables);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    layout->addWidget(split, 1);

    connect(open_, &QPushButton::clicked, this, &KindsPanel::chooseReport);
    connect(export_, &QPushButton::clicked, this, [this] {
        auto* dialog = new QFileDialog(this, tr("Folder for the kinds figures (PNG)"));
        dialog->setFileMode(QFileDialog::Directory);
        dialog->setOption(QFileDialog::DontUseNativeDialog);
        dialog->setAttribute(Qt::WA_DeleteOnClose);
        connect(dialog, &QFileDialog::fileSelected, this, [this](const QString& dir) {
            const QStringList written = exportFigures(dir);
            if (!written.isEmpty()) status_->setText(tr("wrote %1").arg(written.join(QStringLiteral(", "))));
        });
        dialog->open();
    });
}

void KindsPanel::chooseReport() {
    auto* dialog = new QFileDialog(this, tr("Kinds report folder"));
    dialog->setFileMode(QFileDialog::Directory);
    dialog->setOption(QFileDialog::DontUseNativeDialog);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QFileDialog::fileSelected, this, [this](const QString& dir) { openReport(dir); });
    dialog->open();
}

bool KindsPanel::fail(const QString& message) {
    status_->setText(tr("error: %1").arg(message));
    emit failed(message);
    return false;
}

bool KindsPanel::openReport(const QString& folder) {
    if (QFileInfo::exists(QDir(folder).filePath(QStringLiteral("feature_maps.json")))) {
        try {
            hedgehog_ = attnscope::readHedgehogReport(folder.toStdString());
        } catch (const attnscope::Error& e) {
            return fail(QString::fromUtf8(e.what()));
        }
        showsHedgehog_ = true;
        status_->setText(tr("%1 · per-head distillation of %2 heads (block %3) · %4 training, %5 %6 texts · "
                            "trained in %7 s")
                                 .arg(folder)
                                 .arg(hedgehog_.klFitted.size())
                                 .arg(QString::fromStdString(hedgehog_.block))
                                 .arg(hedgehog_.trainInputs)
                                 .arg(hedgehog_.evalInputs)
                                 .arg(hedgehog_.heldOut ? tr("held-out") : tr("evaluation (the training)"))
                                 .arg(hedgehog_.trainSeconds, 0, 'f', 1));
        showHedgehog();
        return true;
    }
    try {
        report_ = attnscope::readKindsReport(folder.toStdString());
    } catch (const attnscope::Error& e) {
        return fail(QString::fromUtf8(e.what()));
    }
    showsHedgehog_ = false;
    int unmeasured = 0;
    for (const auto& r : report_.scaling) unmeasured += !r.note.empty();
    status_->setText(tr("%1 · %2 kinds · %3 scaling rows (%4 not measured)")
                             .arg(folder)
                             .arg(report_.kinds.size())
                             .arg(report_.scaling.size())
                             .arg(unmeasured));
    showReport();
    return true;
}

QStringList KindsPanel::exportFigures(const QString& folder, const QString& ext) {
    try {
        return showsHedgehog_ ? writeHedgehogFigures(hedgehog_, folder, ext) : writeKindsFigures(report_, folder, ext);
    } catch (const attnscope::Error& e) {
        emit failed(QString::fromUtf8(e.what()));
        return {};
    }
}

void KindsPanel::showReport() {
    figures_ = {kindsAccuracyFigure(report_), kindsScalingFigure(report_, false), kindsScalingFigure(report_, true)};
    kinds_->clear();
    kinds_->setColumnCount(9);
    kinds_->setHorizontalHeaderLabels({tr("kind"), tr("parameters"), tr("weights"), tr("accuracy"), tr("± spread"),
                                       tr("short / medium / long"), tr("s / epoch"), tr("peak MiB"),
                                       tr("entropy (nats)")});
    kinds_->setRowCount(int(report_.kinds.size()));
    for (int r = 0; r < kinds_->rowCount(); ++r) {
        const auto& k = report_.kinds[std::size_t(r)];
        setRow(kinds_, r,
               {QString::fromStdString(k.kind), QString::fromStdString(k.parameters), QString::number(k.parameterCount),
                num(k.accuracyMean), num(k.accuracySpread),
                QStringLiteral("%1 / %2 / %3").arg(num(k.accuracyShort), num(k.accuracyMedium), num(k.accuracyLong)),
                num(k.secondsPerEpoch), num(k.peakRssMiB), num(k.meanEntropy)});
    }
    kinds_->resizeColumnsToContents();
    scaling_->clear();
    scaling_->setColumnCount(5);
    scaling_->setHorizontalHeaderLabels({tr("kind"), tr("n"), tr("seconds"), tr("peak extra MiB"), tr("note")});
    scaling_->setRowCount(int(report_.scaling.size()));
    for (int r = 0; r < scaling_->rowCount(); ++r) {
        const auto& s = report_.scaling[std::size_t(r)];
        setRow(scaling_, r,
               {QString::fromStdString(s.kind), QString::number(s.n), num(s.seconds), num(s.peakExtraMiB),
                QString::fromStdString(s.note)});
    }
    scaling_->resizeColumnsToContents();
    export_->setEnabled(!report_.kinds.empty() || !report_.scaling.empty());
    for (FigureCanvas* c : canvases_) c->update();
}

void KindsPanel::showHedgehog() {
    const attnscope::HedgehogResult& h = hedgehog_;
    figures_ = {hedgehogKlFigure(h), hedgehogLossFigure(h), CurveFigure{}};
    kinds_->clear();
    kinds_->setColumnCount(6);
    kinds_->setHorizontalHeaderLabels({tr("layer"), tr("head"), tr("KL elu+1"), tr("KL untrained"), tr("KL distilled"),
                                       tr("KL distilled (training texts)")});
    kinds_->setRowCount(int(h.klFitted.size()));
    for (int r = 0; r < kinds_->rowCount(); ++r) {
        const std::size_t g = std::size_t(r);
        setRow(kinds_, r,
               {QString::number(h.layers[g / std::size_t(h.heads)]), QString::number(r % h.heads), num(h.klElu[g]),
                num(h.klInitial[g]), num(h.klFitted[g]), num(h.trainKl[g])});
    }
    kinds_->resizeColumnsToContents();
    scaling_->clear();
    scaling_->setColumnCount(6);
    scaling_->setHorizontalHeaderLabels({tr("heads replaced by"), tr("output"), tr("mean KL (nats)"),
                                         tr("top-1 agreement"), tr("mean magnitude"), tr("texts")});
    scaling_->setRowCount(2);
    const std::pair<QString, const attnscope::OutputChangeSummary*> rows[] = {{tr("distilled maps"), &h.changeFitted},
                                                                              {tr("untrained maps"), &h.changeInitial}};
    for (int r = 0; r < 2; ++r) {
        const attnscope::OutputChangeSummary& c = *rows[r].second;
        setRow(scaling_, r,
               {rows[r].first, QString::fromStdString(c.kind), num(c.meanKl), num(c.top1Agreement),
                num(c.meanMagnitude), QString::number(c.inputs)});
    }
    scaling_->resizeColumnsToContents();
    export_->setEnabled(true);
    for (FigureCanvas* c : canvases_) c->update();
}
