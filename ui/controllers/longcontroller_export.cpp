// The Long context tab's files. Its exports (LongController::exportFigure): the success and
// retrieval figures (niah's), the eviction steps as a painted figure, and the long map as shown
// with its marks as one more row. Its one input: a haystack read from a text file.
#include "controllers/longcontroller.h"

#include "panels/exportdialog.h"
#include "panels/longpanel.h"
#include "services/session.h"
#include "state/recentfiles.h"
#include "state/viewstate.h"
#include "views/heatmapview.h"

#include "attnscope/io/input_file.h"
#include "attnscope/runtime/error.h"

#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QRegularExpression>

#include <algorithm>

ExportDialog* LongController::exportFigure(int which) {
    static const char* names[] = {"niah", "retrieval", "eviction", "longmap"};
    which = std::clamp(which, 0, 3);
    Figure figure;
    PaintedFigure painted;
    const bool scanned = !scan_.result.runs.empty();
    if (which == LongPanel::Success && scanned)
        figure = needleSuccessFigure(scan_.result, scan_.options.lengths, scan_.options.depths);
    else if (which == LongPanel::Retrieval && scanned)
        figure = retrievalFigure(scan_.result);
    else if (which == LongPanel::Eviction && !evictionFigure_.empty()) {
        EvictionFigure f = evictionFigure_;
        f.fontSize = 7;
        painted = {[f](double width) { return evictionFigureSize(f, width); },
                   [f](QPainter& p, const QSizeF& s) { paintEvictionFigure(p, f, QRectF(QPointF(0, 0), s)); }, f.title};
    } else if (which == LongPanel::LongMap && !marks_.empty() && !panel_->longMap()->valuesPending() &&
               !panel_->longMap()->map().values.empty()) {
        // What the view shows (its zoom; level-of-detail bins for a long map), the marks per column.
        const HeatmapView::Shown shown = panel_->longMap()->shown();
        const MapZoom& z = panel_->longMap()->zoom();
        const int c0 = z.colBegin(), c1 = z.colEnd();
        std::vector<float> strip;
        for (int c = 0; c < shown.map.cols; ++c) {
            const int from = c0 + int(std::int64_t(c) * (c1 - c0) / shown.map.cols);
            const int to = std::max(from + 1, c0 + int(std::int64_t(c + 1) * (c1 - c0) / shown.map.cols));
            double sum = 0;
            for (int j = from; j < to; ++j) sum += marks_[std::size_t(j)];
            strip.push_back(float(sum / (to - from)));
        }
        const bool needle = panel_->mapWhatCombo()->currentIndex() == 0;
        figure = stripMapFigure(shown.map, shown.queryLabels, shown.keyLabels, panel_->longMap()->title(), strip,
                                needle ? tr("needle") : tr("kept"));
    }
    figure.colormap = state_->colormap();
    if (figure.panels.empty() && !painted) {
        QMessageBox::information(panel_->window(), tr("There is nothing to export."),
                                 tr("This result is not shown yet: run the Long context tab's analysis first."));
        return nullptr;
    }
    QString name = QFileInfo(session_->modelSpec()).fileName() + QLatin1Char('_') + QLatin1String(names[which]);
    name.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9._-]+")), QStringLiteral("_"));
    const QString folder = recent::exportFolder();
    auto* dialog = new ExportDialog(figure, QDir(folder).filePath(name + QStringLiteral(".pdf")), panel_->window());
    dialog->setObjectName(QStringLiteral("exportLongDialog"));
    dialog->setWindowTitle(tr("Export Long Context Figure"));
    if (painted) {
        dialog->setPainted(painted);
        dialog->setWidthInches(ExportDialog::kOneColumnIn);
    }
    connect(dialog, &ExportDialog::exported, this,
            [this](const QString& path) { emit status(tr("Wrote %1").arg(QDir::toNativeSeparators(path)), 8000); });
    dialog->open();
    return dialog;
}

// The haystack file's dialog ("haystackFileDialog"), opened without blocking.
void LongController::chooseHaystackFile() {
    auto* dialog = new QFileDialog(panel_->window(), tr("Haystack text file"));
    dialog->setObjectName(QStringLiteral("haystackFileDialog"));
    dialog->setFileMode(QFileDialog::ExistingFile);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QFileDialog::fileSelected, this, &LongController::loadHaystackFile);
    dialog->open();
}

// core's input rule: a FIFO or a device is refused at once instead of hanging or reading without end.
bool LongController::loadHaystackFile(const QString& path) {
    try {
        const std::string text = attnscope::readInputFile(QFile::encodeName(path).toStdString(),
                                                          attnscope::kMaxTextFileBytes, "haystack text file");
        panel_->haystackEdit()->setPlainText(QString::fromUtf8(text.data(), qsizetype(text.size())));
        return true;
    } catch (const attnscope::Error& e) {
        emit failed(tr("Cannot read the haystack."), QString::fromUtf8(e.what()));
        return false;
    }
}
