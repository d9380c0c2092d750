// DockBuilder (docks.h): the central tabs and the docks, and each controller's outward signals.
#include "window/docks.h"

#include "controllers/causalcontroller.h"
#include "controllers/corpuscontroller.h"
#include "controllers/longcontroller.h"
#include "panels/longpanel.h"
#include "controllers/generatecontroller.h"
#include "controllers/imagecontroller.h"
#include "controllers/labcontroller.h"
#include "controllers/modelviewcontroller.h"
#include "controllers/sectionsync.h"
#include "controllers/viewscontroller.h"
#include "panels/causalpanel.h"
#include "panels/comparepanel.h"
#include "panels/controlpanel.h"
#include "panels/corpuspanel.h"
#include "panels/generatepanel.h"
#include "panels/imageoverlaypanel.h"
#include "panels/kindspanel.h"
#include "panels/labpanel.h"
#include "panels/metricspanel.h"
#include "panels/modelviewpanel.h"
#include "panels/trainingcurvespanel.h"
#include "services/session.h"
#include "state/recentfiles.h"
#include "state/viewstate.h"
#include "views/heatmapview.h"
#include "views/routerstripview.h"
#include "views/outputchangeview.h"
#include "views/overviewgrid.h"
#include "window/mappresenter.h"
#include "window/modelinputs.h"
#include "window/windowparts.h"

#include <QCheckBox>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QGuiApplication>
#include <QLineEdit>
#include <QMainWindow>
#include <QMenu>
#include <QProgressBar>
#include <QPushButton>
#include <QScreen>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QVBoxLayout>

#include <algorithm>

DockBuilder::DockBuilder(WindowParts& parts, QObject* parent) : QObject(parent), p_(parts) {}

void DockBuilder::buildCentral() {
    // The map is the window: the heat map takes what the overview and the docks leave.
    p_.overview = new OverviewGrid;
    p_.overview->setObjectName(QStringLiteral("overview"));
    auto* scroll = new QScrollArea;
    scroll->setWidget(p_.overview);
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    scroll->setMinimumWidth(160);
    p_.heatmap = new HeatmapView;
    p_.heatmap->setObjectName(QStringLiteral("heatmap"));
    p_.router = new RouterStripView;
    p_.router->setObjectName(QStringLiteral("routerStrip"));
    auto* mapColumn = new QWidget;  // the map, and under it the router strip of MoE decoders
    auto* column = new QVBoxLayout(mapColumn);
    column->setContentsMargins(0, 0, 0, 0);
    column->addWidget(p_.heatmap, 1);
    column->addWidget(p_.router);
    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(scroll);
    split->addWidget(mapColumn);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 3);
    split->setChildrenCollapsible(false);
    split->setSizes({220, 660});
    p_.compare = new ComparePanel(p_.maps);
    p_.compare->setObjectName(QStringLiteral("comparePanel"));
    p_.tabs = new QTabWidget;
    p_.tabs->setObjectName(QStringLiteral("viewTabs"));
    p_.tabs->setUsesScrollButtons(true);  // many tabs scroll rather than widen the window
    p_.tabs->addTab(split, tr("&Explore"));
    p_.tabs->addTab(p_.compare, tr("&Compare dot · additive · linear"));
    // The Compare tab's training runs and kinds reports (issue 36), each in its own panel.
    auto* curves = new TrainingCurvesPanel;
    curves->setObjectName(QStringLiteral("trainingCurvesPanel"));
    auto* kinds = new KindsPanel;
    kinds->setObjectName(QStringLiteral("kindsPanel"));
    p_.tabs->addTab(curves, tr("Compare · training curves"));
    p_.tabs->addTab(kinds, tr("Compare · kinds"));
    connect(curves, &TrainingCurvesPanel::failed, this,
            [this](const QString& message) { p_.showError(tr("The training run could not be shown."), message); });
    connect(kinds, &KindsPanel::failed, this,
            [this](const QString& message) { p_.showError(tr("The kinds report could not be shown."), message); });
    p_.window->setCentralWidget(p_.tabs);

    p_.controls = new ControlPanel;
    auto* dock = new QDockWidget(tr("Controls"), p_.window);
    dock->setObjectName(QStringLiteral("controlsDock"));
    dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable |
                      QDockWidget::DockWidgetClosable);
    auto* dockScroll = new QScrollArea;
    dockScroll->setWidget(p_.controls);
    dockScroll->setWidgetResizable(true);
    dockScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    dockScroll->setFrameShape(QFrame::NoFrame);
    dockScroll->setMinimumWidth(250);
    dock->setWidget(dockScroll);
    p_.window->addDockWidget(Qt::LeftDockWidgetArea, dock);
    p_.window->setDockOptions(p_.window->dockOptions() | QMainWindow::GroupedDragging);
    p_.controlsDock = dock;

    p_.progressBar = new QProgressBar;
    p_.progressBar->setObjectName(QStringLiteral("progressBar"));
    p_.progressBar->setMaximumWidth(420);  // wide enough for "Running: layer 12 of 32 · 18 s left"
    p_.progressBar->setMinimumWidth(200);
    p_.progressBar->setVisible(false);
    p_.cancelButton = new QPushButton(tr("Cancel"));
    p_.cancelButton->setObjectName(QStringLiteral("cancelButton"));
    p_.cancelButton->setVisible(false);
    p_.statusBar->addPermanentWidget(p_.progressBar);
    p_.statusBar->addPermanentWidget(p_.cancelButton);
}

void DockBuilder::finishLayout() {
    p_.labDock->raise();  // the lab in front; View > Views / Generate bring the others forward
    p_.heatmap->clear(tr("Open a model (Ctrl+O) or pick a built-in one to see its attention."));
    // The window's minimum is the map's: a wider page (Compare's three maps, the Model view)
    // is squeezed into the central area rather than widening the window past the screen when
    // it is shown. Its own layout says how it shrinks.
    for (int i = 1; i < p_.tabs->count(); ++i)
        p_.tabs->widget(i)->setSizePolicy(QSizePolicy::Ignored, p_.tabs->widget(i)->sizePolicy().verticalPolicy());
    // The first start: most of the screen, never more than it (a 1366×768 laptop included).
    const QRect screen = QGuiApplication::primaryScreen() ? QGuiApplication::primaryScreen()->availableGeometry()
                                                          : QRect(0, 0, 1280, 800);
    p_.window->resize(screen.width() * 9 / 10, screen.height() * 9 / 10);
    // Slim docks: the map gets the rest (a saved layout, restoreWindowLayout, overrides this).
    // The right docks as wide as the lab's boxes need, at most 360 px (they scroll beyond).
    const int right = std::clamp(p_.lab->panel()->minimumSizeHint().width() + 24, 280, 360);
    p_.window->resizeDocks({p_.controlsDock, p_.labDock}, {260, right}, Qt::Horizontal);
    p_.statusBar->showMessage(tr("Pick a model to begin, or drop a model folder on the window."));
}

// A dock on the right, closable and movable, tabbed with the others there; scroll: its content
// scrolls rather than widening the window.
QDockWidget* DockBuilder::addPanelDock(QWidget* content, const QString& title, const QString& name, bool scroll) {
    auto* dock = new QDockWidget(title, p_.window);
    dock->setObjectName(name);
    dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable |
                      QDockWidget::DockWidgetClosable);
    if (scroll) {
        auto* area = new QScrollArea;
        area->setWidget(content);
        area->setWidgetResizable(true);
        area->setFrameShape(QFrame::NoFrame);
        area->setMinimumWidth(180);
        content = area;
    }
    dock->setWidget(content);
    p_.window->addDockWidget(Qt::RightDockWidgetArea, dock);
    if (p_.labDock && p_.labDock != dock) p_.window->tabifyDockWidget(p_.labDock, dock);
    return dock;
}

// After the window's own connections: on a shared signal the window reacts first, then the lab.
void DockBuilder::buildLab() {
    p_.lab = new LabController(p_.state, p_.session, p_.window);
    p_.labDock = addPanelDock(p_.lab->panel(), tr("Lab"), QStringLiteral("labDock"), true);
    p_.tabs->addTab(p_.lab->metrics(), tr("&Metrics · rollout"));
    p_.controls->addOutputWidget(p_.lab->changeView());
    p_.controls->addTemperatureRow(p_.lab->temperatureRow());

    connect(p_.lab, &LabController::temperatureInsideChanged, p_.controls, &ControlPanel::setTemperatureInside);
    connect(p_.lab, &LabController::mapsStale, p_.presenter, &MapPresenter::refreshMaps);
    connect(p_.lab, &LabController::status, p_.statusBar, &QStatusBar::showMessage);
    connect(p_.lab, &LabController::detailMessage, p_.heatmap, [this](const QString& m) { p_.heatmap->clear(m); });
    connect(p_.lab, &LabController::detailMap, p_.heatmap,
            [this](const attnscope::HeadMap& map, const QStringList& q, const QStringList& k, const QString& title) {
                p_.heatmap->setLevelOfDetailEnabled(false);  // a lab variant: no Trace pools it, so cells are drawn
                p_.heatmap->setMap(map, q, k, title);
            });
    connect(p_.lab, &LabController::maskedHeadsShown, p_.overview, &OverviewGrid::setCrossedOut);
    // Ctrl+click and the context menu on a thumbnail mask heads of the shown block.
    connect(p_.overview, &OverviewGrid::headToggleRequested, p_.lab,
            [this](int layer, int head) { p_.lab->toggleMask(p_.presenter->currentBlockName(), layer, head); });
    connect(p_.overview, &OverviewGrid::headContextMenuRequested, p_.lab,
            [this](int layer, int head, const QPoint& globalPos) {
                if (QMenu* menu = p_.lab->headMenu(layer, head, p_.overview)) menu->popup(globalPos);
            });
}

void DockBuilder::buildViews() {
    p_.views = new ViewsController(p_.state, p_.session, p_.lab, p_.heatmap, p_.window);
    p_.viewsDock = addPanelDock(p_.views->tabs(), tr("Views"), QStringLiteral("viewsDock"), true);
    connect(p_.views, &ViewsController::status, p_.statusBar, &QStatusBar::showMessage);
    connect(p_.viewsDock, &QDockWidget::visibilityChanged, p_.views, [this](bool visible) {
        if (visible) p_.views->refresh();
    });
}

void DockBuilder::buildGenerate() {
    p_.generate = new GenerateController(p_.session, p_.window);
    p_.generateDock = addPanelDock(p_.generate->panel(), tr("Generate"), QStringLiteral("generateDock"), true);
    connect(p_.generate, &GenerateController::failed, this,
            [this](const QString& message) { p_.showError(tr("The model could not generate."), message); });
    // Head detectors fill the Metrics table's detector columns for the current model.
    MetricsPanel* metrics = p_.lab->metrics();
    const auto runDetectors = [this, metrics] {
        metrics->setDetectors({}, tr("Running the detectors…"));
        p_.generate->startDetectors();
    };
    connect(metrics->detectorsButton(), &QPushButton::clicked, p_.generate, runDetectors);
    connect(p_.modelView, &ModelViewController::detectorsWanted, p_.generate, runDetectors);
    connect(p_.generate, &GenerateController::detectorsReady, metrics,
            [this, metrics](const auto& heads, const QString& text) {
                metrics->setDetectors(heads, text);
                p_.modelView->setDetectors(heads);  // the Model tab orders and maps by them too
            });
    connect(p_.session, &Session::modelLoaded, metrics, [metrics] { metrics->setDetectors({}, {}); });
    connect(p_.generate, &GenerateController::finished, this, [this] {
        p_.generateDock->raise();
        p_.statusBar->showMessage(tr("Generated; step with the slider or ← → in the text."), 5000);
    });
    // The dock's settings and the generation shown are the state's (the workspace's "generation").
    const auto sync = syncSection<Workspace::GenerationState>(
            p_.state, p_.generate->panel(), p_.generate, &ViewState::TabSettings::generation,
            [this] {
                const GeneratePanel* panel = p_.generate->panel();
                Workspace::GenerationState g;
                g.tokens = panel->tokens();
                g.sampling = panel->sampling();
                g.queryRowOnly = panel->queryRowOnly();
                if (const auto& made = p_.generate->generation(); made && p_.generate->shownStep() >= 0) {
                    g.sampling = p_.generate->generationOptions().sampling;  // what the shown ids were made with
                    g.prompt = made->prompt;
                    g.generated = made->generated;
                    g.step = p_.generate->shownStep();
                }
                return g;
            },
            [this](const Workspace::GenerationState& g) {
                GeneratePanel* panel = p_.generate->panel();
                panel->queryRowCheck()->setChecked(g.queryRowOnly);
                panel->tokensSpin()->setValue(g.tokens);
                panel->sampleCheck()->setChecked(g.sampling.sample);
                panel->samplingTemperatureSpin()->setValue(g.sampling.temperature);
                panel->topKSpin()->setValue(g.sampling.topK);
                panel->topPSpin()->setValue(g.sampling.topP);
                panel->seedSpin()->setValue(
                        int(std::min<std::uint64_t>(g.sampling.seed, std::uint64_t(panel->seedSpin()->maximum()))));
            });
    // A generation made, or ended by a new run or model (after the controller's own handlers).
    connect(p_.generate, &GenerateController::finished, p_.state, sync);
    connect(p_.session, &Session::traceReady, p_.state, sync);
    connect(p_.session, &Session::modelLoaded, p_.state, sync);
}

// The Model tab (the model view that fills the screen) and the Image tab (attention over the image).
void DockBuilder::buildImageViews() {
    p_.modelView = new ModelViewController(p_.state, p_.session, p_.maps, p_.lab, p_.overview, p_.window);
    p_.tabs->addTab(p_.modelView->panel(), tr("M&odel view"));
    p_.imageView =
            new ImageController(p_.state, p_.session, p_.lab, p_.window,
                                [this](const QString& title, const QString& message) { p_.showError(title, message); });
    connect(p_.imageView, &ImageController::status, p_.statusBar, &QStatusBar::showMessage);
    p_.tabs->addTab(p_.imageView->panel(), tr("&Image"));
}

// The Causal tab (logit lens, DLA, patching): its controller follows the state and the session.
void DockBuilder::buildCausal() {
    p_.causal = new CausalController(p_.state, p_.session, p_.window);
    p_.tabs->addTab(p_.causal->panel(), tr("C&ausal"));
    connect(p_.causal, &CausalController::status, p_.statusBar, &QStatusBar::showMessage);
}

// The Long context tab (issue 33): needle scans, retrieval heads and KV-eviction what-ifs; its
// controller follows the state and the session like the Causal tab's.
void DockBuilder::buildLong() {
    p_.longContext = new LongController(p_.state, p_.session, p_.window);
    p_.tabs->addTab(p_.longContext->panel(), tr("&Long context"));
    connect(p_.longContext, &LongController::status, p_.statusBar, &QStatusBar::showMessage);
    connect(p_.longContext, &LongController::failed, this,
            [this](const QString& title, const QString& message) { p_.showError(title, message); });
}

// The Corpus tab: its controller runs corpora on the open model; the panel shows results, and a
// clicked head is shown on the chosen example in the Explore tab.
void DockBuilder::buildCorpus() {
    p_.corpusTab = new CorpusController(p_.session, p_.window);
    p_.corpus = p_.corpusTab->panel();
    p_.tabs->addTab(p_.corpus, tr("C&orpus"));
    connect(p_.corpusTab, &CorpusController::failed, this,
            [this](const QString& title, const QString& message) { p_.showError(title, message); });
    connect(p_.corpusTab, &CorpusController::status, p_.statusBar, &QStatusBar::showMessage);
    connect(p_.corpus, &CorpusPanel::openRequested, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(p_.window, tr("Open corpus result folder"),
                                                              recent::lastFolder(QStringLiteral("corpus")));
        if (dir.isEmpty()) return;
        recent::rememberFolder(QStringLiteral("corpus"), dir);
        openCorpusResult(dir);
    });
    connect(p_.corpus, &CorpusPanel::headChosen, this,
            [this](const QString& block, int layer, int head, const QString& text) {
                if (!text.isEmpty() && p_.session->model()) {
                    p_.controls->input()->setText(text);
                    p_.inputs->runInput();
                }
                p_.state->selectByName(block, layer, head);
                p_.tabs->setCurrentIndex(0);
            });
}

bool DockBuilder::openCorpusResult(const QString& dir) {
    const bool ok = p_.corpus->openResult(dir);
    if (ok) p_.tabs->setCurrentWidget(p_.corpus);
    return ok;
}
