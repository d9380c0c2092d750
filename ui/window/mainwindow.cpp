#include "window/mainwindow.h"

#include "controllers/causalcontroller.h"
#include "controllers/corpuscontroller.h"
#include "controllers/longcontroller.h"
#include "controllers/labcontroller.h"
#include "figure/figure.h"
#include "figure/headfigure.h"
#include "panels/controlpanel.h"
#include "panels/devicecombo.h"
#include "panels/imageinput.h"
#include "panels/metricspanel.h"
#include "services/session.h"
#include "state/viewstate.h"
#include "views/heatmapview.h"
#include "views/overviewgrid.h"
#include "views/temperatureslider.h"
#include "window/attentionfiles.h"
#include "window/docks.h"
#include "window/exporter.h"
#include "window/focusring.h"
#include "window/mappresenter.h"
#include "window/modelinputs.h"
#include "window/windowmenus.h"
#include "window/workspaceio.h"

#include <QAction>
#include <QCloseEvent>
#include <QComboBox>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QIcon>
#include <QMessageBox>
#include <QMimeData>
#include <QSpinBox>
#include <QStatusBar>
#include <QTabWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace {

const QStringList kMetricsViews = {QStringLiteral("rollout"), QStringLiteral("flow"), QStringLiteral("similarity")};

QString poolingName(attnscope::Pooling p) {
    return p == attnscope::Pooling::Mean  ? QStringLiteral("mean")
           : p == attnscope::Pooling::Sum ? QStringLiteral("sum")
                                          : QStringLiteral("max");
}
attnscope::Pooling poolingOf(const QString& name) {
    return name == QLatin1String("mean")  ? attnscope::Pooling::Mean
           : name == QLatin1String("sum") ? attnscope::Pooling::Sum
                                          : attnscope::Pooling::Max;
}

QString deviceName(attnscope::DeviceChoice c) {
    return c == attnscope::DeviceChoice::Cpu    ? QStringLiteral("cpu")
           : c == attnscope::DeviceChoice::Cuda ? QStringLiteral("cuda")
                                                : QStringLiteral("auto");
}

}  // namespace

// resources/attnscope.qrc lives in this static library: referencing it keeps it linked.
static void initResources() { Q_INIT_RESOURCE(attnscope); }

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
    initResources();
    setWindowTitle(QStringLiteral("AttnScope"));
    setWindowIcon(QIcon(QStringLiteral(":/attnscope/attnscope.svg")));
    setAcceptDrops(true);
    new FocusRing(this);  // a visible ring around what Tab moved the focus to
    WindowParts& p = parts_;
    p.window = this;
    p.statusBar = statusBar();
    p.showError = [this](const QString& title, const QString& message) { showError(title, message); };
    p.state = new ViewState(this);
    p.session = new Session(this);
    p.session->setObjectName(QStringLiteral("session"));
    p.maps = new MapService(this);

    docks_ = new DockBuilder(p, this);
    docks_->buildCentral();
    // First: on the session's signals the maps and the inputs react before the controllers.
    p.presenter = new MapPresenter(p, this);
    p.inputs = new ModelInputs(p, this);
    docks_->buildLab();
    docks_->buildImageViews();
    docks_->buildViews();
    p.presenter->buildSources();
    docks_->buildGenerate();
    docks_->buildCorpus();
    docks_->buildCausal();
    docks_->buildLong();
    p.attentionFiles = new AttentionFiles(p, this);
    p.exporter = new Exporter(p, this);
    p.workspace = new WorkspaceIo(p, this);  // it follows the others' steps
    connect(p.workspace, &WorkspaceIo::restored, this, &MainWindow::workspaceRestored);
    p.menus = new WindowMenus(p, this);  // every menu, in one place, once every action's owner exists
    bindState();
    p.presenter->bindState();
    docks_->finishLayout();
}

MainWindow::~MainWindow() {
    // Workers first: their results must not reach half-destroyed views.
    parts_.lab->shutdown();
    parts_.causal->shutdown();
    parts_.longContext->shutdown();
    parts_.corpusTab->shutdown();
    parts_.maps->cancelAll();
    parts_.maps->waitForWorkers();
}

// The window's own widgets request changes of the ViewState and follow it (the controllers bind
// their own: controllers/sectionsync.h, LabController::syncState).
void MainWindow::bindState() {
    ViewState* state = parts_.state;
    ControlPanel* c = parts_.controls;
    connect(c->blockCombo(), &QComboBox::currentIndexChanged, state, [state](int i) {
        if (i >= 0) state->setBlock(i);
    });
    connect(c->layerSpin(), &QSpinBox::valueChanged, state, [state](int v) { state->setLayer(v); });
    connect(c->headSpin(), &QSpinBox::valueChanged, state, [state](int v) { state->setHead(v); });
    connect(parts_.overview, &OverviewGrid::headChosen, state,
            [state](int layer, int head) { state->select(state->block(), layer, head); });
    connect(c->temperature(), &TemperatureSlider::temperatureChanged, state,
            [state, c] { state->setTemperature(c->temperature()->temperature()); });
    connect(c, &ControlPanel::coloringChanged, state, [state, c] {
        state->setColormap(c->colormap());
        state->setScale(c->colorScale().type);
    });
    state->setDevice(deviceName(c->device()->choice()));
    connect(c->device(), &DeviceCombo::choiceChanged, state,
            [state](attnscope::DeviceChoice d) { state->setDevice(deviceName(d)); });
    const auto setView = [state](auto change) {
        Workspace::View v = state->view();
        change(v);
        state->setView(v);
    };
    connect(parts_.rawTokensAction, &QAction::toggled, state,
            [setView](bool raw) { setView([raw](Workspace::View& v) { v.rawTokens = raw; }); });
    connect(parts_.heatmap, &HeatmapView::poolingChanged, state,
            [setView](attnscope::Pooling p) { setView([p](Workspace::View& v) { v.pooling = poolingName(p); }); });
    QComboBox* metricsView = parts_.lab->metrics()->viewCombo();
    connect(metricsView, &QComboBox::currentIndexChanged, state, [setView](int i) {
        setView([i](Workspace::View& v) { v.metricsView = kMetricsViews.value(i, kMetricsViews.first()); });
    });
    connect(parts_.heatmap, &HeatmapView::zoomChanged, state, [state](const MapZoom& z) {
        state->setZoom(z.isWhole() ? std::nullopt
                                   : std::optional<ViewState::Zoom>(
                                             ViewState::Zoom{z.keyLower, z.keyUpper, z.queryLower, z.queryUpper}));
    });

    // What the state says, on the widgets that show it (a workspace being opened sets the state).
    connect(state, &ViewState::temperatureChanged, c, [state, c] {
        if (std::abs(c->temperature()->temperature() - state->temperature()) > 1e-9)
            c->temperature()->setTemperature(state->temperature());
    });
    connect(state, &ViewState::colorsChanged, c, [state, c] {
        c->colormapCombo()->setCurrentIndex(std::max(0, int(colormapNames().indexOf(colormapName(state->colormap())))));
        c->scaleCombo()->setCurrentIndex(state->scale() == ColorScaleType::Log ? 1 : 0);
    });
    connect(state, &ViewState::viewChanged, this, [this, state, metricsView] {
        const Workspace::View& v = state->view();
        parts_.rawTokensAction->setChecked(v.rawTokens);
        if (parts_.heatmap->pooling() != poolingOf(v.pooling)) parts_.heatmap->setPooling(poolingOf(v.pooling));
        metricsView->setCurrentIndex(std::max(0, int(kMetricsViews.indexOf(v.metricsView))));
    });
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (!parts_.workspace->mayClose()) return event->ignore();  // asks to save first
    QMainWindow::closeEvent(event);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    const auto urls = event->mimeData()->urls();
    if (!urls.isEmpty() && urls.first().isLocalFile()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    const auto urls = event->mimeData()->urls();
    if (urls.isEmpty() || !urls.first().isLocalFile()) return;
    event->acceptProposedAction();
    const QString path = urls.first().toLocalFile();
    if (isImageFile(path))
        parts_.inputs->setImageFile(path);  // an image for image models; else a model folder
    else
        parts_.inputs->openModel(path);
}

void MainWindow::showError(const QString& title, const QString& message) {
    // Non-modal: the window stays usable while the message shows; a new error replaces the text.
    auto* box = findChild<QMessageBox*>(QStringLiteral("errorDialog"));
    if (!box) {
        box = new QMessageBox(QMessageBox::Warning, tr("AttnScope"), title, QMessageBox::Ok, this);
        box->setObjectName(QStringLiteral("errorDialog"));
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->setWindowModality(Qt::NonModal);
    }
    box->setText(title);
    box->setInformativeText(message);
    box->show();
    box->raise();
}

// What the parts do.
QMenu* MainWindow::viewMenu() const { return parts_.menus->viewMenu(); }
QMenu* MainWindow::recentMenu() const { return parts_.menus->recentMenu(); }
bool MainWindow::openCorpusResult(const QString& dir) { return docks_->openCorpusResult(dir); }
void MainWindow::showShortcuts() { parts_.menus->showShortcuts(); }
QString MainWindow::shortcutsText() const { return parts_.menus->shortcutsText(); }
void MainWindow::openModel(const QString& spec) { parts_.inputs->openModel(spec); }
void MainWindow::runInput() { parts_.inputs->runInput(); }
void MainWindow::moveSelection(int dLayer, int dHead) {
    if (!parts_.state->blocks().empty()) parts_.state->moveSelection(dLayer, dHead);
}
void MainWindow::exportFigure() { parts_.exporter->exportFigure(); }
void MainWindow::exportMapData() { parts_.exporter->exportMapData(); }
void MainWindow::refreshMaps() { parts_.presenter->refreshMaps(); }
void MainWindow::requestDetail() { parts_.presenter->requestDetail(); }
Figure MainWindow::currentFigure() const { return parts_.exporter->currentFigure(); }
bool MainWindow::writeCurrentMapData(const QString& path) { return parts_.exporter->writeCurrentMapData(path); }
void MainWindow::openImage() { parts_.inputs->openImage(); }
bool MainWindow::setImageFile(const QString& path) { return parts_.inputs->setImageFile(path); }
QString MainWindow::imageFile() const { return parts_.inputs->imageFile(); }
std::shared_ptr<const attnscope::RgbImage> MainWindow::image() const { return parts_.inputs->image(); }
void MainWindow::openAttentionFileDialog() { parts_.attentionFiles->openAttentionFileDialog(); }
void MainWindow::openAttentionFile(const QString& npy, const QString& tokens) {
    parts_.attentionFiles->openAttentionFile(npy, tokens);
}
QStringList MainWindow::axisLabels(const attnscope::Trace& trace, const attnscope::BlockInfo& block, bool queries,
                                   bool raw) const {
    return ::axisLabels(trace, block, queries, raw);  // the figures' own (headfigure.h)
}
QString MainWindow::exampleInput(const QString& spec, bool hasTokenizer, int vocabSize, int maxPositions) {
    return ModelInputs::exampleInput(spec, hasTokenizer, vocabSize, maxPositions);
}
MapKey MainWindow::currentKey() const { return parts_.presenter->currentKey(); }
QString MainWindow::currentBlockName() const { return parts_.presenter->currentBlockName(); }
void MainWindow::selectHead(const QString& block, int layer, int head) {
    parts_.state->selectByName(block, layer, head);
}
bool MainWindow::metricsShown() const { return parts_.tabs->currentWidget() == parts_.lab->metrics(); }
void MainWindow::showExplore() { parts_.tabs->setCurrentIndex(0); }
Workspace MainWindow::currentWorkspace() const { return parts_.workspace->currentWorkspace(); }
bool MainWindow::saveWorkspaceFile(const QString& path) { return parts_.workspace->saveWorkspaceFile(path); }
bool MainWindow::openWorkspaceFile(const QString& path) { return parts_.workspace->openWorkspaceFile(path); }
void MainWindow::restoreWindowLayout() { parts_.workspace->restoreWindowLayout(); }
bool MainWindow::workspaceModified() const { return parts_.workspace->modified(); }
