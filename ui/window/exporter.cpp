// Exporter (exporter.h): the window's figures and map data as files.
#include "window/exporter.h"

#include "controllers/labcontroller.h"
#include "figure/alignment.h"
#include "figure/figure.h"
#include "figure/gridfigure.h"
#include "figure/headfigure.h"
#include "figure/mapdata.h"
#include "figure/sourceview.h"
#include "panels/comparepanel.h"
#include "panels/exportdialog.h"
#include "services/session.h"
#include "state/recentfiles.h"
#include "state/viewstate.h"
#include "views/heatmapview.h"
#include "views/routerstripview.h"
#include "window/mappresenter.h"
#include "window/modelinputs.h"
#include "window/windowparts.h"

#include "attnscope/attention/trace.h"

#include <QDir>
#include <QFileDialog>
#include <QMainWindow>
#include <QRegularExpression>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>

#include <algorithm>
#include <cmath>

Exporter::Exporter(WindowParts& parts, QObject* parent) : QObject(parent), p_(parts) { rememberFigureSettings(); }

void Exporter::rememberFigureSettings() {
    QSettings settings;
    const Workspace::FigureSettings figure{
            settings.value(QStringLiteral("export/widthIn"), ExportDialog::kOneColumnIn).toDouble(),
            settings.value(QStringLiteral("export/dpi"), 300).toInt()};
    p_.state->setTabSetting(&ViewState::TabSettings::figure, figure);
}

Figure Exporter::currentFigure() const {
    if (p_.tabs->currentWidget() == p_.compare) return p_.compare->figure();
    const MapZoom& z = p_.heatmap->zoom();
    std::optional<Workspace::View::Zoom> zoom;
    if (!z.isWhole()) zoom = Workspace::View::Zoom{z.keyLower, z.keyUpper, z.queryLower, z.queryUpper};
    // As shown, drawn as a workspace's figure is (headfigure.h): the zoomed part of the map.
    Figure f = headFigure(p_.inputs->modelName(), p_.heatmap->map(), p_.heatmap->queryLabels(), p_.heatmap->keyLabels(),
                          p_.heatmap->title(), zoom, p_.heatmap->colormap(), p_.state->scale());
    if (p_.heatmap->map().rows > 0 && !p_.heatmap->levelOfDetail().values.empty()) {
        // A long map: its level-of-detail bins when coarser than cells (the figure draws few
        // cells as vectors, more as an image).
        HeatmapView::Shown shown = p_.heatmap->shown();
        if (shown.map.rows < f.panels.front().map.rows || shown.map.cols < f.panels.front().map.cols)
            f.panels.front() = {std::move(shown.map), shown.queryLabels, shown.keyLabels, QString()};
    }
    f.scale = p_.heatmap->colorScale();  // as on screen: a map source's own range or diverging colours
    if (!p_.presenter->shownDetail().source.weights())
        f.colorbarLabel = sourceValueName(p_.presenter->shownDetail().source.source);
    // MoE decoders: the router strip under the map, over the keys the figure shows.
    const RouterStripView* router = p_.router;
    if (router->strip() && router->strip()->router.tokens == p_.heatmap->map().cols) {
        f.routerStrip = router->strip();
        const CellRange keys = zoom ? zoomCells(*zoom, p_.heatmap->map().rows, p_.heatmap->map().cols)
                                    : CellRange{0, p_.heatmap->map().rows, 0, p_.heatmap->map().cols};
        f.routerStrip->firstToken = keys.colBegin;
        f.routerStrip->tokenCount = keys.colEnd - keys.colBegin;
    }
    return f;
}

// e.g. reverse-dot_L1_H2_T0.5 or reverse_compare_L1_H2 (no extension).
QString Exporter::suggestedFileName() const {
    const bool compare = p_.tabs->currentWidget() == p_.compare;
    QString name = (compare ? p_.compare->task() + QStringLiteral("_compare") : p_.inputs->modelName()) +
                   QStringLiteral("_L%1_H%2").arg(p_.state->layer()).arg(p_.state->head());
    const double t = p_.state->temperature();
    if (std::abs(t - 1.0) > 1e-9) name += QStringLiteral("_T%1").arg(t, 0, 'g', 3);
    return name.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9._-]+")), QStringLiteral("_"));
}

// A long map is drawn before its exact values arrive (HeatmapView::valuesPending); exports wait for them.
bool Exporter::refuseWhileMapPending() {
    if (p_.tabs->currentWidget() == p_.compare || !p_.heatmap->valuesPending()) return false;
    p_.showError(tr("The map is still being computed."), tr("Export again once the status bar says the map is ready."));
    return true;
}

void Exporter::exportFigure() {
    if (refuseWhileMapPending()) return;
    const Figure figure = currentFigure();
    if (figure.panels.empty()) {
        p_.showError(tr("There is no map to export."), tr("Run an input first; the figure shows the map on screen."));
        return;
    }
    auto* dialog = new ExportDialog(
            figure, QDir(recent::exportFolder()).filePath(suggestedFileName() + QStringLiteral(".pdf")), p_.window);
    // The width and dpi are the state's (a workspace's, or the last export's); a figure of
    // several panels starts at its own width (two columns).
    const Workspace::FigureSettings& settings = p_.state->tabSettings().figure;
    if (figure.panels.size() <= 1) dialog->setWidthInches(settings.widthIn);
    dialog->setDpi(settings.dpi);
    if (p_.tabs->currentWidget() != p_.compare) offerAlignmentFigures(*dialog);
    if (p_.tabs->currentWidget() != p_.compare) offerBatchFigures(*dialog);
    const bool onePanel = figure.panels.size() <= 1;
    connect(dialog, &ExportDialog::exported, this, [this, dialog, onePanel](const QString& path) {
        p_.statusBar->showMessage(tr("Wrote %1").arg(QDir::toNativeSeparators(path)), 8000);
        Workspace::FigureSettings chosen = p_.state->tabSettings().figure;
        if (onePanel) chosen.widthIn = dialog->widthInches();
        chosen.dpi = dialog->dpi();
        p_.state->setTabSetting(&ViewState::TabSettings::figure, chosen);
    });
    dialog->open();
}

void Exporter::exportMapData() {
    if (p_.heatmap->map().rows <= 0) {
        p_.showError(tr("There is no map to export."), tr("Run an input first."));
        return;
    }
    if (refuseWhileMapPending()) return;
    auto* dialog = new QFileDialog(p_.window, tr("Export map data"), recent::exportFolder(),
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
            p_.statusBar->showMessage(tr("Wrote %1").arg(QDir::toNativeSeparators(path)), 8000);
    });
    dialog->open();
}

bool Exporter::writeCurrentMapData(const QString& path) {
    if (refuseWhileMapPending()) return false;
    try {
        writeMapData(p_.heatmap->map(), p_.heatmap->queryLabels(), p_.heatmap->keyLabels(), path);
        recent::rememberFolder(QStringLiteral("export"), path);
        return true;
    } catch (const std::exception& e) {
        p_.showError(tr("Could not export the map data."), QString::fromUtf8(e.what()));
        return false;
    }
}

void Exporter::offerAlignmentFigures(ExportDialog& dialog) const {
    const auto trace = p_.session->trace();
    if (!trace) return;
    const auto& blocks = trace->blocks();
    const auto cross = std::find_if(blocks.begin(), blocks.end(), [](const auto& b) { return b.name == "cross"; });
    if (cross == blocks.end()) return;
    const Figure shown = currentFigure();
    auto styled = [&](Figure f) {
        f.colormap = shown.colormap;
        f.scale = shown.scale;
        return f;
    };
    if (p_.state->blockName() == QLatin1String("cross")) {
        attnscope::AlignmentOptions one;
        one.heads = {{p_.state->layer(), p_.state->head()}};
        dialog.addFigure(tr("Alignment: this head (layer %1, head %2)").arg(one.heads[0].layer).arg(one.heads[0].head),
                         styled(alignmentFigure(*trace, one, p_.inputs->modelName())), QStringLiteral("_alignment"));
    }
    dialog.addFigure(tr("Alignment: mean of the last layer's %1 heads").arg(cross->heads),
                     styled(alignmentFigure(*trace, {}, p_.inputs->modelName())), QStringLiteral("_alignment_mean"));
}

void Exporter::offerBatchFigures(ExportDialog& dialog) const {
    const TracePtr trace = p_.lab->shownTrace();  // the lab's re-run when there is one, as the overview
    const MapKey key = p_.presenter->currentKey();
    if (!trace || key.block < 0 || key.block >= int(trace->blocks().size())) return;
    const auto& info = trace->blocks()[std::size_t(key.block)];
    if (info.heads < 2 && info.layers < 2) return;
    GridStyle style;
    style.modelName = p_.inputs->modelName();
    style.temperature = p_.lab->displayTemperature(p_.state->temperature());
    style.colormap = p_.state->colormap();
    style.scale = p_.state->scale();
    style.widthIn = ExportDialog::kTwoColumnIn;
    style.rawTokens = p_.state->view().rawTokens;
    try {
        if (info.heads > 1)
            dialog.addFigure(tr("Every head of layer %1 (grid)").arg(key.layer),
                             layerGridFigure(*trace, key.block, key.layer, style), QStringLiteral("_heads"));
        // Every map of the block: only for blocks small enough to draw at once here.
        constexpr long long kMaxCells = 64LL << 20;
        const long long cells = 1LL * info.layers * info.heads * info.queryTokens.size() * info.keyTokens.size();
        if (info.layers > 1 && cells <= kMaxCells)
            dialog.addPages(tr("Every layer (multi-page PDF)"), allLayersFigures(*trace, key.block, style),
                            QStringLiteral("_layers"));
    } catch (const std::exception&) {
        // A map that cannot be drawn (e.g. a Trace without Q/K): the single map stays on offer.
    }
}
