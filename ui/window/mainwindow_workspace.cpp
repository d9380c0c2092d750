// MainWindow, continued: workspace files (File > Save Workspace… / Open Workspace…) and the
// window's layout kept between starts (QSettings "window/geometry", "window/state").
//
// Opening is a chain of the window's own asynchronous steps, each started when the previous one
// has arrived: the model loads (unless it is the open one), the input runs, the selection, the
// colours and the lab's settings are applied (masked heads and the temperature inside the model
// re-run it), the additive fit is made again (deterministic, so it is the same fit), and once
// the final map is drawn its zoom is set and workspaceRestored() is emitted.
#include "window/mainwindow.h"

#include "figure/gridfigure.h"
#include "figure/workspace.h"
#include "panels/causalpanel.h"
#include "panels/comparepanel.h"
#include "panels/controlpanel.h"
#include "panels/devicecombo.h"
#include "panels/exportdialog.h"
#include "panels/generatepanel.h"
#include "panels/imageoverlaypanel.h"
#include "panels/imageinput.h"
#include "panels/labpanel.h"
#include "panels/metricspanel.h"
#include "panels/modelviewpanel.h"
#include "services/labservice.h"
#include "services/session.h"
#include "state/recentfiles.h"
#include "state/viewstate.h"
#include "views/heatmapview.h"
#include "views/temperatureslider.h"
#include "controllers/causalcontroller.h"
#include "controllers/generatecontroller.h"
#include "controllers/imagecontroller.h"
#include "controllers/labcontroller.h"
#include "controllers/modelviewcontroller.h"
#include "controllers/viewscontroller.h"

#include "attnscope/runtime/device.h"

#include <QAction>
#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QSlider>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>

#include <cmath>

class MainWindow::WorkspaceRestore : public QObject {
public:
    WorkspaceRestore(Workspace ws, QObject* parent) : QObject(parent), ws(std::move(ws)) {}
    enum class Stage { Loading, Running, Rerunning, Fitting, Generating, Drawing };
    Workspace ws;
    Stage stage = Stage::Loading;
};

namespace {

const QString kFilter = QStringLiteral("AttnScope workspace (*.attnscope)");

QString deviceName(attnscope::DeviceChoice c) {
    return c == attnscope::DeviceChoice::Cpu    ? QStringLiteral("cpu")
           : c == attnscope::DeviceChoice::Cuda ? QStringLiteral("cuda")
                                                : QStringLiteral("auto");
}

const QStringList kTabNames = {QStringLiteral("explore"), QStringLiteral("compare"), QStringLiteral("metrics"),
                               QStringLiteral("model"),   QStringLiteral("image"),   QStringLiteral("causal")};

// The file's names of the Views dock's tabs, the selection's side and QkColoring's values, in
// their index order (workspace_views.cpp reads the same names).
const QStringList kViewTabNames = {QStringLiteral("lines"), QStringLiteral("neuron"), QStringLiteral("qk")};
const QStringList kSideNames = {QStringLiteral("none"), QStringLiteral("query"), QStringLiteral("key")};
const QStringList kColoringNames = {QStringLiteral("position"), QStringLiteral("kind"), QStringLiteral("head"),
                                    QStringLiteral("token_kind")};

int poolingIndex(const QString& name) {
    return name == QLatin1String("mean") ? 1 : name == QLatin1String("sum") ? 2 : 0;
}
const char* poolingName(attnscope::Pooling p) {
    return p == attnscope::Pooling::Mean ? "mean" : p == attnscope::Pooling::Sum ? "sum" : "max";
}

}  // namespace

void MainWindow::buildWorkspaceActions(QMenu* file) {
    QAction* open = file->addAction(tr("Open &Workspace…"));
    open->setObjectName(QStringLiteral("openWorkspaceAction"));
    open->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    QAction* save = file->addAction(tr("&Save Workspace…"));
    save->setObjectName(QStringLiteral("saveWorkspaceAction"));
    save->setShortcut(QKeySequence::Save);
    save->setToolTip(
            tr("Model, input, selection, temperatures, lab, masks, colours and layout in one .attnscope file"));
    connect(open, &QAction::triggered, this, [this] {
        auto* dialog =
                new QFileDialog(this, tr("Open Workspace"), recent::lastFolder(QStringLiteral("workspace")), kFilter);
        dialog->setObjectName(QStringLiteral("openWorkspaceDialog"));
        dialog->setFileMode(QFileDialog::ExistingFile);
        dialog->setAttribute(Qt::WA_DeleteOnClose);
        connect(dialog, &QFileDialog::fileSelected, this, &MainWindow::openWorkspaceFile);
        dialog->open();
    });
    connect(save, &QAction::triggered, this, [this] { chooseWorkspaceFile(false); });
}

// The save dialog ("saveWorkspaceDialog"); then, with closeAfter, the window closes once saved.
void MainWindow::chooseWorkspaceFile(bool closeAfter) {
    auto* dialog =
            new QFileDialog(this, tr("Save Workspace"), recent::lastFolder(QStringLiteral("workspace")), kFilter);
    dialog->setObjectName(QStringLiteral("saveWorkspaceDialog"));
    dialog->setAcceptMode(QFileDialog::AcceptSave);
    dialog->setDefaultSuffix(QStringLiteral("attnscope"));
    dialog->selectFile(suggestedFileName() + QStringLiteral(".attnscope"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QFileDialog::fileSelected, this, [this, closeAfter](const QString& path) {
        if (!saveWorkspaceFile(path)) return;
        statusBar()->showMessage(tr("Saved the workspace %1").arg(QDir::toNativeSeparators(path)), 8000);
        if (closeAfter) close();
    });
    dialog->open();
}

void MainWindow::buildWorkspace() {
    // The chain's steps (see the top); each checks that a workspace is being opened and is at its stage.
    // After the generation (or without one): the variant, the tab and the views; then the final map.
    const auto afterGeneration = [this] {
        if (!restore_ || restore_->stage != WorkspaceRestore::Stage::Generating) return;
        const Workspace& ws = restore_->ws;
        restore_->stage = WorkspaceRestore::Stage::Drawing;
        applyWorkspaceViews(ws);
        QWidget* const tabWidgets[] = {tabs_->widget(0),    compare_,        lab_->metrics(), modelView_->panel(),
                                       imageView_->panel(), causal_->panel()};
        const int tab = std::max(0, int(tabs_->indexOf(tabWidgets[std::max(0, int(kTabNames.indexOf(ws.view.tab)))])));
        lab_->metrics()->viewCombo()->setCurrentIndex(ws.view.metricsView == QLatin1String("flow")         ? 1
                                                      : ws.view.metricsView == QLatin1String("similarity") ? 2
                                                                                                           : 0);
        if (!ws.view.compareTask.isEmpty()) compareTask_ = ws.view.compareTask;
        if (lab_->panel()->variant() != ws.lab.variant)
            lab_->panel()->setVariant(ws.lab.variant);  // asks for the map
        else
            requestDetail();
        causal_->setSettings(ws.causal);
        tabs_->setCurrentIndex(tab);
    };
    // After the fit (or without one): the saved generation is replayed (GenerateOptions::forced).
    const auto afterFit = [this, afterGeneration] {
        if (!restore_ || restore_->stage != WorkspaceRestore::Stage::Fitting) return;
        const Workspace::GenerationState& g = restore_->ws.generation;
        restore_->stage = WorkspaceRestore::Stage::Generating;
        GeneratePanel* panel = generate_->panel();
        panel->queryRowCheck()->setChecked(g.queryRowOnly);
        if (g.generated.empty()) {
            panel->tokensSpin()->setValue(g.tokens);
            panel->sampleCheck()->setChecked(g.sampling.sample);
            panel->samplingTemperatureSpin()->setValue(g.sampling.temperature);
            panel->topKSpin()->setValue(g.sampling.topK);
            panel->topPSpin()->setValue(g.sampling.topP);
            panel->seedSpin()->setValue(
                    int(std::min<std::uint64_t>(g.sampling.seed, std::uint64_t(panel->seedSpin()->maximum()))));
            return afterGeneration();
        }
        attnscope::GenerateOptions o;
        o.sampling = g.sampling;
        generate_->replay(g.prompt, g.generated, o, g.step);
        panel->tokensSpin()->setValue(g.tokens);  // the spin box as saved (replay set it to the ids' count)
    };
    connect(generate_, &GenerateController::finished, this, afterGeneration);
    connect(generate_, &GenerateController::failed, this, [this] {
        if (!restore_ || restore_->stage != WorkspaceRestore::Stage::Generating) return;
        restore_->deleteLater();  // the error dialog says why
        restore_ = nullptr;
    });
    // After the re-run (or without one): the additive fit, made again on the shown trace.
    const auto afterRerun = [this, afterFit] {
        if (!restore_ || restore_->stage != WorkspaceRestore::Stage::Rerunning) return;
        const Workspace& ws = restore_->ws;
        restore_->stage = WorkspaceRestore::Stage::Fitting;
        if (!ws.lab.fit) return afterFit();
        int block = -1;
        for (int i = 0; i < int(state_->blocks().size()); ++i)
            if (state_->blocks()[std::size_t(i)].name == ws.lab.fit->block) block = i;
        attnscope::AdditiveFitOptions o;
        o.width = ws.lab.fitWidth;
        o.steps = ws.lab.fitSteps;
        o.temperature = ws.lab.fit->temperature;
        lab_->fitAdditive({std::max(0, block), ws.lab.fit->layer, ws.lab.fit->head}, o);
    };
    connect(session_, &Session::failed, this, [this] {
        if (!restore_) return;  // the error dialog says why
        restore_->deleteLater();
        restore_ = nullptr;
    });
    connect(session_, &Session::traceReady, this, [this, afterRerun] {
        if (!restore_ || restore_->stage != WorkspaceRestore::Stage::Running) return;
        const Workspace& ws = restore_->ws;
        // Selection and colours first: the lab's re-run and fit are for the shown head.
        state_->selectByName(ws.selection.block.isEmpty() ? state_->blockName() : ws.selection.block,
                             ws.selection.layer, ws.selection.head);
        controls_->colormapCombo()->setCurrentIndex(
                std::max(0, int(colormapNames().indexOf(colormapName(ws.colormap)))));
        controls_->scaleCombo()->setCurrentIndex(ws.scale == ColorScaleType::Log ? 1 : 0);
        rawTokensAction_->setChecked(ws.view.rawTokens);
        heatmap_->poolingCombo()->setCurrentIndex(poolingIndex(ws.view.pooling));
        controls_->temperature()->setTemperature(ws.temperature);
        LabPanel* panel = lab_->panel();
        panel->featureMapCombo()->setCurrentIndex(int(ws.lab.featureMap));
        panel->featuresSpin()->setValue(ws.lab.features);
        panel->gateSlider()->setValue(int(std::lround(ws.lab.gate * 100)));
        panel->fitWidthSpin()->setValue(ws.lab.fitWidth);
        panel->fitStepsSpin()->setValue(ws.lab.fitSteps);
        QStringList layers;
        for (int l : ws.inside.layers) layers << QString::number(l);
        lab_->layersEdit()->setText(layers.join(QLatin1Char(',')));
        emit lab_->layersEdit()->editingFinished();  // parses them into the intervention
        restore_->stage = WorkspaceRestore::Stage::Rerunning;
        const bool rerun = ws.inside.enabled || !ws.masked.empty() || !ws.lab.knockout.isEmpty();
        {
            const QSignalBlocker quiet(lab_->propagateCheck());  // one re-run, by setMaskedHeads
            lab_->propagateCheck()->setChecked(ws.inside.enabled);
        }
        emit lab_->temperatureInsideChanged(ws.inside.enabled);
        lab_->setKnockoutSpec(ws.lab.knockout, /*apply=*/false);  // checked when the file was read
        lab_->setMaskedHeads(ws.masked);
        if (!rerun) afterRerun();
    });
    connect(lab_, &LabController::shownTraceChanged, this, afterRerun);
    connect(lab_->service(), &LabService::fitReady, this, afterFit);
    connect(heatmap_, &HeatmapView::mapShown, this, [this] {
        if (!restore_ || restore_->stage != WorkspaceRestore::Stage::Drawing) return;
        const Workspace ws = restore_->ws;
        restore_->deleteLater();
        restore_ = nullptr;
        if (ws.view.zoom && heatmap_->map().rows > 0) {
            MapZoom z = MapZoom::whole(heatmap_->map().rows, heatmap_->map().cols);
            z.keyLower = ws.view.zoom->keyLower;
            z.keyUpper = ws.view.zoom->keyUpper;
            z.queryLower = ws.view.zoom->queryLower;
            z.queryUpper = ws.view.zoom->queryUpper;
            heatmap_->setZoom(z);
        }
        statusBar()->showMessage(tr("Opened the workspace."), 5000);
        modified_ = false;  // what is shown is the file's
        emit workspaceRestored();
    });
}

// The ViewState's serialisation, with what the input boxes hold now and the settings the tabs'
// controllers keep in their widgets.
Workspace MainWindow::currentWorkspace() const {
    Workspace w = state_->workspace();
    w.model = session_->modelSpec();
    w.device = deviceName(controls_->device()->choice());
    w.input.text = controls_->input()->text();
    w.input.idsMode = controls_->idsMode();
    w.input.target = controls_->targetText();
    w.input.image = session_->model() && session_->model()->info().imageInput ? imagePath_ : QString();
    w.inside.enabled = lab_->temperatureInside();
    w.inside.layers = lab_->intervention().layers;
    const LabPanel* panel = lab_->panel();
    w.lab.variant = panel->variant();
    w.lab.featureMap = panel->featureMap();
    w.lab.features = panel->featuresSpin()->value();
    w.lab.gate = panel->gate();
    w.lab.fitWidth = panel->fitWidthSpin()->value();
    w.lab.fitSteps = panel->fitStepsSpin()->value();
    MapKey fitKey;
    attnscope::AdditiveFitOptions fit;
    if (lab_->currentFit(fitKey, fit) && fitKey.block >= 0 && fitKey.block < int(state_->blocks().size())) {
        w.lab.fit = Workspace::Lab::Fit{state_->blocks()[std::size_t(fitKey.block)].name, fitKey.layer, fitKey.head,
                                        fit.temperature};
        w.lab.fitWidth = fit.width;  // the fit as it was made, whatever the spin boxes say now
        w.lab.fitSteps = fit.steps;
    }
    w.masked = lab_->intervention().masked;
    w.lab.knockout = lab_->knockoutSpec();
    w.view.tab = tabs_->currentWidget() == compare_              ? QStringLiteral("compare")
                 : metricsShown()                                ? QStringLiteral("metrics")
                 : tabs_->currentWidget() == modelView_->panel() ? QStringLiteral("model")
                 : tabs_->currentWidget() == imageView_->panel() ? QStringLiteral("image")
                 : tabs_->currentWidget() == causal_->panel()    ? QStringLiteral("causal")
                                                                 : QStringLiteral("explore");
    w.view.rawTokens = rawTokensAction_->isChecked();
    if (heatmap_->map().rows > 0 && !heatmap_->zoom().isWhole()) {
        const MapZoom& z = heatmap_->zoom();
        w.view.zoom = Workspace::View::Zoom{z.keyLower, z.keyUpper, z.queryLower, z.queryUpper};
    }
    w.view.compareTask = compareTask_;
    const int metricsView = lab_->metrics()->viewCombo()->currentIndex();
    w.view.metricsView = metricsView == 1   ? QStringLiteral("flow")
                         : metricsView == 2 ? QStringLiteral("similarity")
                                            : QStringLiteral("rollout");
    w.view.pooling = QString::fromLatin1(poolingName(heatmap_->pooling()));
    currentViewSections(w);
    w.causal = causal_->settings();
    QSettings settings;  // the export dialog's last width and resolution
    w.figure.widthIn = settings.value(QStringLiteral("export/widthIn"), ExportDialog::kOneColumnIn).toDouble();
    w.figure.dpi = settings.value(QStringLiteral("export/dpi"), 300).toInt();
    w.window.geometry = saveGeometry();
    w.window.state = saveState();
    return w;
}

void MainWindow::currentViewSections(Workspace& w) const {
    // Each view's own State (views' structs), in the file's names.
    const ModelViewController::State m = modelView_->state();
    w.modelView = {QString::fromStdString(m.orderKey), m.descending, m.frames, QString::fromStdString(m.metricKey)};
    const ImageController::State i = imageView_->state();
    w.image = {i.source, i.fusion, i.discardRatio, i.opacity, i.colormap, i.smooth, i.grid, i.query};
    const ViewsController::State v = views_->state();
    w.views.tab = kViewTabNames.value(v.tab, kViewTabNames.first());
    const bool selected = (v.selectedSide == 0 || v.selectedSide == 1) && v.selectedIndex >= 0;
    w.views.selectedSide = selected ? kSideNames[v.selectedSide + 1] : kSideNames[0];
    w.views.selectedIndex = selected ? v.selectedIndex : -1;
    w.views.lines = {v.lines.hiddenHeads, v.lines.threshold, v.lines.windowStart};
    w.views.neuronQuery = v.neuron.query;
    w.views.qk = {v.qk.allHeads, kColoringNames.value(int(v.qk.coloring), kColoringNames.first())};
    const GeneratePanel* gen = generate_->panel();
    Workspace::GenerationState& g = w.generation;
    g.tokens = gen->tokens();
    g.sampling = gen->sampling();
    g.queryRowOnly = gen->queryRowOnly();
    if (const auto& made = generate_->generation(); made && generate_->shownStep() >= 0) {
        g.sampling = generate_->generationOptions().sampling;  // the settings the shown ids were made with
        g.prompt = made->prompt;
        g.generated = made->generated;
        g.step = generate_->shownStep();
    }
}

void MainWindow::applyWorkspaceViews(const Workspace& ws) {
    ModelViewController::State m;
    m.orderKey = ws.modelView.order.toStdString();
    m.descending = ws.modelView.descending;
    m.frames = ws.modelView.frames;
    m.metricKey = ws.modelView.metric.toStdString();
    modelView_->setState(m);
    const Workspace::ImageTab& t = ws.image;
    imageView_->setState({t.source, t.fusion, t.discardRatio, t.opacity, t.colormap, t.smooth, t.grid, t.query});
    ViewsController::State v;
    v.tab = std::max(0, int(kViewTabNames.indexOf(ws.views.tab)));
    v.selectedSide = int(kSideNames.indexOf(ws.views.selectedSide)) - 1;  // none -1, query 0, key 1
    v.selectedIndex = v.selectedSide < 0 ? -1 : ws.views.selectedIndex;
    v.lines = {ws.views.lines.hiddenHeads, ws.views.lines.threshold, ws.views.lines.windowStart};
    v.neuron.query = ws.views.neuronQuery;
    v.qk.allHeads = ws.views.qk.allHeads;
    v.qk.coloring = QkColoring(std::max(0, int(kColoringNames.indexOf(ws.views.qk.coloring))));
    views_->setState(v);
}

bool MainWindow::saveWorkspaceFile(const QString& path) {
    if (!session_->model()) {
        showError(tr("There is no workspace to save."), tr("Open a model and run an input first."));
        return false;
    }
    try {
        writeWorkspace(currentWorkspace(), path);
        recent::addWorkspace(path);
        recent::rememberFolder(QStringLiteral("workspace"), path);
        modified_ = false;
        return true;
    } catch (const std::exception& e) {
        showError(tr("Could not save the workspace."), QString::fromUtf8(e.what()));
        return false;
    }
}

bool MainWindow::openWorkspaceFile(const QString& path) {
    Workspace ws;
    try {
        ws = readWorkspace(path);
    } catch (const std::exception& e) {
        showError(tr("Could not open the workspace."), QString::fromUtf8(e.what()));
        return false;
    }
    recent::addWorkspace(path);
    recent::rememberFolder(QStringLiteral("workspace"), path);
    if (restore_) restore_->deleteLater();
    restore_ = new WorkspaceRestore(ws, this);
    if (!ws.window.geometry.isEmpty()) restoreGeometry(ws.window.geometry);
    if (!ws.window.state.isEmpty()) restoreState(ws.window.state);
    statusBar()->showMessage(tr("Opening the workspace %1…").arg(QDir::toNativeSeparators(path)));
    if (!ws.input.image.isEmpty()) {
        imagePath_.clear();  // read below; runs only once the model is open
        QString error;
        const QImage image = readImageFile(ws.input.image, &error);
        if (image.isNull()) {
            restore_->deleteLater();
            restore_ = nullptr;
            showError(tr("Could not open the workspace's image."), error);
            return false;
        }
        imagePath_ = ws.input.image;
        image_ = std::make_shared<const attnscope::RgbImage>(toRgbImage(image));
        controls_->imageInput()->setImage(ws.input.image, image);
    }
    const auto device = attnscope::parseDeviceChoice(ws.device.toStdString());
    const bool sameModel =
            session_->model() && session_->modelSpec() == ws.model && controls_->device()->choice() == device;
    {
        const QSignalBlocker quiet(controls_->device());  // the model opens on it below
        controls_->device()->setChoice(device);
    }
    if (sameModel) {
        session_->cancel();
        applyWorkspaceInput();
        runInput();
    } else {
        openModel(ws.model);  // onModelLoaded asks applyWorkspaceInput(), then runs
    }
    return true;
}

bool MainWindow::applyWorkspaceInput() {
    if (!restore_ || restore_->stage != WorkspaceRestore::Stage::Loading) return false;
    const Workspace& ws = restore_->ws;
    if (controls_->idsCheck()->isEnabled()) controls_->idsCheck()->setChecked(ws.input.idsMode);
    controls_->input()->setText(ws.input.text);
    controls_->targetInput()->setText(ws.input.target);
    // The map source before the run, so that it records what the source needs (the values); a
    // source the model cannot show goes back to the weights once its availability is known.
    state_->setMapSource(ws.source.source);
    state_->setGradientTarget(ws.source.target);
    restore_->stage = WorkspaceRestore::Stage::Running;
    return true;
}

void MainWindow::restoreWindowLayout() {
    QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
}

void MainWindow::closeEvent(QCloseEvent* event) {
    // What is shown changed since it was saved: ask first (window-modal, so the event loop and
    // the workers go on), and close again once answered.
    if (modified_ && session_->model() && !closeConfirmed_) {
        event->ignore();
        askToSaveThenClose();
        return;
    }
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    QMainWindow::closeEvent(event);
}

void MainWindow::askToSaveThenClose() {
    if (findChild<QMessageBox*>(QStringLiteral("unsavedWorkspaceDialog"))) return;
    auto* box = new QMessageBox(QMessageBox::Question, tr("AttnScope"), tr("Save the workspace before quitting?"),
                                QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, this);
    box->setObjectName(QStringLiteral("unsavedWorkspaceDialog"));
    box->setInformativeText(tr("The model, input, selection, lab and views shown now are not saved in a workspace."));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setWindowModality(Qt::WindowModal);
    connect(box, &QMessageBox::finished, this, [this, box](int) {
        const QMessageBox::StandardButton answer = box->standardButton(box->clickedButton());
        if (answer == QMessageBox::Discard) {
            closeConfirmed_ = true;
            close();
        } else if (answer == QMessageBox::Save) {
            chooseWorkspaceFile(true);
        }
    });
    box->open();
}

void MainWindow::offerBatchFigures(ExportDialog& dialog) const {
    const TracePtr trace = lab_->shownTrace();  // the lab's re-run when there is one, as the overview
    const MapKey key = currentKey();
    if (!trace || key.block < 0 || key.block >= int(trace->blocks().size())) return;
    const auto& info = trace->blocks()[std::size_t(key.block)];
    if (info.heads < 2 && info.layers < 2) return;
    GridStyle style;
    style.modelName = modelName();
    style.temperature = lab_->displayTemperature(state_->temperature());
    style.colormap = state_->colormap();
    style.scale = state_->scale();
    style.widthIn = ExportDialog::kTwoColumnIn;
    style.rawTokens = rawTokensAction_->isChecked();
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
