// MainWindow's exports: File > Export figure… (the current tab as a figure) and File > Export
// map data… (the shown head's map as .npy or .csv).
#include "window/mainwindow.h"

#include "panels/comparepanel.h"
#include "panels/controlpanel.h"
#include "panels/exportdialog.h"
#include "figure/figure.h"
#include "figure/headfigure.h"
#include "views/heatmapview.h"
#include "views/routerstripview.h"
#include "figure/mapdata.h"
#include "figure/sourceview.h"
#include "services/session.h"
#include "state/viewstate.h"
#include "views/temperatureslider.h"

#include <QDir>
#include <QFileDialog>
#include <QRegularExpression>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>

#include <cmath>

Figure MainWindow::currentFigure() const {
    if (tabs_->currentWidget() == compare_) return compare_->figure();
    const MapZoom& z = heatmap_->zoom();
    std::optional<Workspace::View::Zoom> zoom;
    if (!z.isWhole()) zoom = Workspace::View::Zoom{z.keyLower, z.keyUpper, z.queryLower, z.queryUpper};
    // As shown, drawn as a workspace's figure is (headfigure.h): the zoomed part of the map.
    Figure f = headFigure(modelName(), heatmap_->map(), heatmap_->queryLabels(), heatmap_->keyLabels(),
                          heatmap_->title(), zoom, heatmap_->colormap(), state_->scale());
    if (heatmap_->map().rows > 0 && !heatmap_->levelOfDetail().values.empty()) {
        // A long map: its level-of-detail bins when coarser than cells (the figure draws few
        // cells as vectors, more as an image).
        HeatmapView::Shown shown = heatmap_->shown();
        if (shown.map.rows < f.panels.front().map.rows || shown.map.cols < f.panels.front().map.cols)
            f.panels.front() = {std::move(shown.map), shown.queryLabels, shown.keyLabels, QString()};
    }
    f.scale = heatmap_->colorScale();  // as on screen: a map source's own range or diverging colours
    if (!shownDetail_.source.weights()) f.colorbarLabel = sourceValueName(shownDetail_.source.source);
    // MoE decoders: the router strip under the map, over the keys the figure shows.
    if (router_->strip() && router_->strip()->router.tokens == heatmap_->map().cols) {
        f.routerStrip = router_->strip();
        const CellRange keys = zoom ? zoomCells(*zoom, heatmap_->map().rows, heatmap_->map().cols)
                                    : CellRange{0, heatmap_->map().rows, 0, heatmap_->map().cols};
        f.routerStrip->firstToken = keys.colBegin;
        f.routerStrip->tokenCount = keys.colEnd - keys.colBegin;
    }
    return f;
}

namespace {

// Documents when it exists, else home.
QString exportFolder() {
    const QString docs = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    return !docs.isEmpty() && QDir(docs).exists() ? docs : QDir::homePath();
}

}  // namespace

// e.g. reverse-dot_L1_H2_T0.5 or reverse_compare_L1_H2 (no extension).
QString MainWindow::suggestedFileName() const {
    const bool compare = tabs_->currentWidget() == compare_;
    QString name = (compare ? compare_->task() + QStringLiteral("_compare") : modelName()) +
                   QStringLiteral("_L%1_H%2").arg(state_->layer()).arg(state_->head());
    const double t = state_->temperature();
    if (std::abs(t - 1.0) > 1e-9) name += QStringLiteral("_T%1").arg(t, 0, 'g', 3);
    return name.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9._-]+")), QStringLiteral("_"));
}

// A long map is drawn before its exact values arrive (HeatmapView::valuesPending); exports wait for them.
bool MainWindow::refuseWhileMapPending() {
    if (tabs_->currentWidget() == compare_ || !heatmap_->valuesPending()) return false;
    showError(tr("The map is still being computed."), tr("Export again once the status bar says the map is ready."));
    return true;
}

void MainWindow::exportFigure() {
    if (refuseWhileMapPending()) return;
    const Figure figure = currentFigure();
    if (figure.panels.empty()) {
        showError(tr("There is no map to export."), tr("Run an input first; the figure shows the map on screen."));
        return;
    }
    auto* dialog =
            new ExportDialog(figure, QDir(exportFolder()).filePath(suggestedFileName() + QStringLiteral(".pdf")), this);
    if (tabs_->currentWidget() != compare_) offerAlignmentFigures(*dialog);
    if (tabs_->currentWidget() != compare_) offerBatchFigures(*dialog);
    connect(dialog, &ExportDialog::exported, this, [this](const QString& path) {
        statusBar()->showMessage(tr("Wrote %1").arg(QDir::toNativeSeparators(path)), 8000);
    });
    dialog->open();
}

void MainWindow::exportMapData() {
    if (heatmap_->map().rows <= 0) {
        showError(tr("There is no map to export."), tr("Run an input first."));
        return;
    }
    if (refuseWhileMapPending()) return;
    auto* dialog = new QFileDialog(this, tr("Export map data"), exportFolder(),
                                   tr("NumPy array (*.npy);;CSV with token labels (*.csv)"));
    dialog->setObjectName(QStringLiteral("exportDataDialog"));
    dialog->setAcceptMode(QFileDialog::AcceptSave);
    dialog->setDefaultSuffix(QStringLiteral("npy"));
    dialog->selectFile(suggestedFileName() + QStringLiteral(".npy"));
    connect(dialog, &QFileDialog::filterSelected, dialog, [dialog](const QString& filter) {
        dialog->setDefaultSuffix(filter.contains(QLatin1String("*.csv")) ? QStringLiteral("csv")
                                                                         : QStringLiteral("npy"));
    });
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QFileDialog::fileSelected, this, [this](const QString& path) {
        if (writeCurrentMapData(path))
            statusBar()->showMessage(tr("Wrote %1").arg(QDir::toNativeSeparators(path)), 8000);
    });
    dialog->open();
}

bool MainWindow::writeCurrentMapData(const QString& path) {
    if (refuseWhileMapPending()) return false;
    try {
        writeMapData(heatmap_->map(), heatmap_->queryLabels(), heatmap_->keyLabels(), path);
        return true;
    } catch (const std::exception& e) {
        showError(tr("Could not export the map data."), QString::fromUtf8(e.what()));
        return false;
    }
}
