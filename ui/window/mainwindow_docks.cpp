// MainWindow, continued: the docks and tabs the controllers fill, and the menus. Each controller
// gets the ViewState and the services it needs (controllers/); here its widgets are placed and
// its few outward signals (status lines, errors, the lab's detail map) are routed to the
// window's views. Every menu is assembled in buildMenus, in one place.
#include "window/mainwindow.h"
#include "window/modelbrowsing.h"

#include "controllers/causalcontroller.h"
#include "controllers/generatecontroller.h"
#include "controllers/imagecontroller.h"
#include "controllers/labcontroller.h"
#include "controllers/modelviewcontroller.h"
#include "controllers/viewscontroller.h"
#include "panels/causalpanel.h"
#include "panels/controlpanel.h"
#include "panels/corpuspanel.h"
#include "panels/generatepanel.h"
#include "panels/imageoverlaypanel.h"
#include "panels/labpanel.h"
#include "panels/metricspanel.h"
#include "panels/modelviewpanel.h"
#include "services/session.h"
#include "state/recentfiles.h"
#include "state/viewstate.h"
#include "views/heatmapview.h"
#include "views/outputchangeview.h"
#include "views/overviewgrid.h"
#include "panels/modelpicker.h"
#include "window/shortcutsdialog.h"

#include <QAction>
#include <QActionGroup>
#include <QCheckBox>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QDir>
#include <QKeySequence>
#include <QLineEdit>
#include <QMenuBar>
#include <QShortcut>
#include <QMenu>
#include <QPushButton>
#include <QScrollArea>
#include <QStatusBar>
#include <QTabWidget>

// A dock on the right, closable and movable, tabbed with the others there; scroll: its content
// scrolls rather than widening the window.
QDockWidget* MainWindow::addPanelDock(QWidget* content, const QString& title, const QString& name, bool scroll) {
    auto* dock = new QDockWidget(title, this);
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
    addDockWidget(Qt::RightDockWidgetArea, dock);
    if (labDock_ && labDock_ != dock) tabifyDockWidget(labDock_, dock);
    return dock;
}

// After the window's own connections: on a shared signal the window reacts first, then the lab.
void MainWindow::buildLab() {
    lab_ = new LabController(state_, session_, this);
    labDock_ = addPanelDock(lab_->panel(), tr("Lab"), QStringLiteral("labDock"), true);
    tabs_->addTab(lab_->metrics(), tr("&Metrics · rollout"));
    controls_->addOutputWidget(lab_->changeView());
    controls_->addTemperatureRow(lab_->temperatureRow());

    connect(lab_, &LabController::temperatureInsideChanged, controls_, &ControlPanel::setTemperatureInside);
    connect(lab_, &LabController::mapsStale, this, &MainWindow::refreshMaps);
    connect(lab_, &LabController::status, statusBar(), &QStatusBar::showMessage);
    connect(lab_, &LabController::detailMessage, heatmap_, [this](const QString& m) { heatmap_->clear(m); });
    connect(lab_, &LabController::detailMap, heatmap_,
            [this](const attnscope::HeadMap& map, const QStringList& q, const QStringList& k, const QString& title) {
                heatmap_->setLevelOfDetailEnabled(false);  // a lab variant: no Trace pools it, so cells are drawn
                heatmap_->setMap(map, q, k, title);
            });
    connect(lab_, &LabController::maskedHeadsShown, overview_, &OverviewGrid::setCrossedOut);
    // Ctrl+click and the context menu on a thumbnail mask heads of the shown block.
    connect(overview_, &OverviewGrid::headToggleRequested, lab_,
            [this](int layer, int head) { lab_->toggleMask(currentBlockName(), layer, head); });
    connect(overview_, &OverviewGrid::headContextMenuRequested, lab_,
            [this](int layer, int head, const QPoint& globalPos) {
                if (QMenu* menu = lab_->headMenu(layer, head, overview_)) menu->popup(globalPos);
            });
}

void MainWindow::buildViews() {
    views_ = new ViewsController(state_, session_, lab_, heatmap_, this);
    viewsDock_ = addPanelDock(views_->tabs(), tr("Views"), QStringLiteral("viewsDock"), true);
    connect(views_, &ViewsController::status, statusBar(), &QStatusBar::showMessage);
    connect(viewsDock_, &QDockWidget::visibilityChanged, views_, [this](bool visible) {
        if (visible) views_->refresh();
    });
}

void MainWindow::buildGenerate() {
    generate_ = new GenerateController(session_, this);
    generateDock_ = addPanelDock(generate_->panel(), tr("Generate"), QStringLiteral("generateDock"), true);
    connect(generate_, &GenerateController::failed, this,
            [this](const QString& message) { showError(tr("The model could not generate."), message); });
    // Head detectors fill the Metrics table's detector columns for the current model.
    MetricsPanel* metrics = lab_->metrics();
    const auto runDetectors = [this, metrics] {
        metrics->setDetectors({}, tr("Running the detectors…"));
        generate_->startDetectors();
    };
    connect(metrics->detectorsButton(), &QPushButton::clicked, generate_, runDetectors);
    connect(modelView_, &ModelViewController::detectorsWanted, generate_, runDetectors);
    connect(generate_, &GenerateController::detectorsReady, metrics,
            [this, metrics](const auto& heads, const QString& text) {
                metrics->setDetectors(heads, text);
                modelView_->setDetectors(heads);  // the Model tab orders and maps by them too
            });
    connect(session_, &Session::modelLoaded, metrics, [metrics] { metrics->setDetectors({}, {}); });
    connect(generate_, &GenerateController::finished, this, [this] {
        generateDock_->raise();
        statusBar()->showMessage(tr("Generated; step with the slider or ← → in the text."), 5000);
    });
}

// The Model tab (the model view that fills the screen) and the Image tab (attention over the image).
void MainWindow::buildImageViews() {
    modelView_ = new ModelViewController(state_, session_, maps_, lab_, overview_, this);
    tabs_->addTab(modelView_->panel(), tr("M&odel view"));
    imageView_ =
            new ImageController(state_, session_, lab_, this,
                                [this](const QString& title, const QString& message) { showError(title, message); });
    connect(imageView_, &ImageController::status, statusBar(), &QStatusBar::showMessage);
    tabs_->addTab(imageView_->panel(), tr("&Image"));
}

// The Causal tab (logit lens, DLA, patching): its controller follows the state and the session.
void MainWindow::buildCausal() {
    causal_ = new CausalController(state_, session_, this);
    tabs_->addTab(causal_->panel(), tr("C&ausal"));
    connect(causal_, &CausalController::status, statusBar(), &QStatusBar::showMessage);
}

// The Corpus tab: the panel shows corpus results and runs corpora on the open model; a clicked
// head is shown on the chosen example in the Explore tab.
void MainWindow::buildCorpus() {
    corpus_ = new CorpusPanel;
    tabs_->addTab(corpus_, tr("C&orpus"));
    connect(corpus_, &CorpusPanel::openRequested, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Open corpus result folder"),
                                                              recent::lastFolder(QStringLiteral("corpus")));
        if (dir.isEmpty()) return;
        recent::rememberFolder(QStringLiteral("corpus"), dir);
        openCorpusResult(dir);
    });
    // The panel asks for the corpus file and then for the results folder (the user's choice).
    connect(corpus_, &CorpusPanel::runRequested, this, [this](const QString& data, const QString& out) {
        if (!session_->model()) {
            showError(tr("No model is open."), tr("Open the model to run the corpus through first."));
            return;
        }
        recent::rememberFolder(QStringLiteral("corpus"), data);
        corpus_->runCorpus(session_->model(), session_->modelSpec(), data, out);
        statusBar()->showMessage(tr("Corpus results go to %1").arg(out), 8000);
    });
    connect(corpus_, &CorpusPanel::headChosen, this,
            [this](const QString& block, int layer, int head, const QString& text) {
                if (!text.isEmpty() && session_->model()) {
                    controls_->input()->setText(text);
                    runInput();
                }
                selectHead(block, layer, head);
                tabs_->setCurrentIndex(0);
            });
}

bool MainWindow::openCorpusResult(const QString& dir) {
    const bool ok = corpus_->openResult(dir);
    if (ok) tabs_->setCurrentWidget(corpus_);
    return ok;
}

// File > Capture Q/K In: how the next forwards keep the recorded Q and K (Session::setCaptureDtype,
// RunOptions::captureDtype). Half precision halves the capture, which is most of a long input's
// memory; the maps are still computed in float32, within ~1e-3 (float16) or ~1e-2 (bfloat16).
void MainWindow::buildCaptureMenu(QMenu* file) {
    QMenu* menu = file->addMenu(tr("&Capture Q/K In"));
    menu->setObjectName(QStringLiteral("captureDtypeMenu"));
    auto* group = new QActionGroup(menu);
    const struct {
        const char* text;
        const char* name;
        attnscope::CaptureDtype dtype;
    } choices[] = {
            {QT_TR_NOOP("The Model's Dtype (exact)"), "captureComputeAction", attnscope::CaptureDtype::Compute},
            {QT_TR_NOOP("Float16 (half the memory)"), "captureFloat16Action", attnscope::CaptureDtype::Float16},
            {QT_TR_NOOP("BFloat16 (half the memory)"), "captureBFloat16Action", attnscope::CaptureDtype::BFloat16},
    };
    for (const auto& c : choices) {
        QAction* a = menu->addAction(tr(c.text));
        a->setObjectName(QString::fromLatin1(c.name));
        a->setCheckable(true);
        a->setChecked(session_->captureDtype() == c.dtype);
        group->addAction(a);
        // Applies from the next run; the shown trace keeps the capture it was made with.
        connect(a, &QAction::triggered, this, [this, dtype = c.dtype] { session_->setCaptureDtype(dtype); });
    }
}

QString MainWindow::currentBlockName() const {
    const QString block = state_->blockName();
    return block.isEmpty() ? QStringLiteral("self") : block;
}

void MainWindow::selectHead(const QString& block, int layer, int head) { state_->selectByName(block, layer, head); }

bool MainWindow::metricsShown() const { return tabs_->currentWidget() == lab_->metrics(); }

void MainWindow::showExplore() { tabs_->setCurrentIndex(0); }

void MainWindow::buildMenus() {
    fileMenu_ = menuBar()->addMenu(tr("&File"));
    fileMenu_->setObjectName(QStringLiteral("fileMenu"));
    QMenu* file = fileMenu_;
    QAction* open = file->addAction(tr("&Open Model Folder…"), this, &MainWindow::chooseModelFolder);
    open->setShortcut(QKeySequence::Open);
    open->setObjectName(QStringLiteral("openAction"));
    QAction* browse = file->addAction(tr("Open &Model…"), this, [this] { browseModels(*this); });
    browse->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_M));
    browse->setObjectName(QStringLiteral("browseModelsAction"));
    browse->setToolTip(
            tr("The models on this machine: recent, the Hugging Face cache, LM Studio, Ollama, your folders"));
    QAction* compareModels =
            file->addAction(tr("Compare with Another &Model…"), this, [this] { compareWithModel(*this); });
    compareModels->setObjectName(QStringLiteral("compareModelsAction"));
    compareModels->setToolTip(tr("Run another model (a GGUF copy, say) on the same input and compare every head"));
    file->addAction(makeAttentionFileAction());
    file->addAction(makeOpenImageAction());
    recentMenu_ = file->addMenu(tr("Open &Recent"));
    recentMenu_->setObjectName(QStringLiteral("recentMenu"));
    connect(recentMenu_, &QMenu::aboutToShow, this, &MainWindow::updateRecentMenu);
    updateRecentMenu();
    buildWorkspaceActions(file);
    file->addSeparator();
    QAction* fig = file->addAction(tr("&Export Figure…"), this, &MainWindow::exportFigure);
    fig->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    fig->setObjectName(QStringLiteral("exportFigureAction"));
    // The view shown in the Views dock as a paper figure.
    QAction* exportView = file->addAction(tr("Export &View\u2026"), views_, [this] {
        viewsDock_->show();
        viewsDock_->raise();
        views_->exportShownView();
    });
    exportView->setObjectName(QStringLiteral("exportViewAction"));
    exportView->setToolTip(
            tr("The line, neuron or query\u2013key view shown in the Views dock, at a venue's column width"));
    QAction* data = file->addAction(tr("Export Map &Data (.npy, .csv)…"), this, &MainWindow::exportMapData);
    data->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E));
    data->setObjectName(QStringLiteral("exportDataAction"));
    file->addSeparator();
    buildCaptureMenu(file);
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Q));
    quit->setMenuRole(QAction::QuitRole);

    viewMenu_ = menuBar()->addMenu(tr("&View"));
    viewMenu_->setObjectName(QStringLiteral("viewMenu"));
    viewMenu_->addAction(rawTokensAction_);
    viewMenu_->addSeparator();
    const struct {
        QDockWidget* dock;
        const char* text;
        const char* name;
        QKeySequence keys;
    } docks[] = {
            {findChild<QDockWidget*>(QStringLiteral("controlsDock")), QT_TR_NOOP("&Controls Panel"),
             "controlsPanelAction", QKeySequence(Qt::CTRL | Qt::Key_K)},
            {labDock_, QT_TR_NOOP("&Lab Panel"), "labPanelAction", QKeySequence(Qt::CTRL | Qt::Key_L)},
            {viewsDock_, QT_TR_NOOP("&Views (Lines, Neuron, Query\u2013Key)"), "viewsPanelAction",
             QKeySequence(Qt::CTRL | Qt::Key_B)},
            {generateDock_, QT_TR_NOOP("&Generate Panel"), "generatePanelAction", QKeySequence(Qt::CTRL | Qt::Key_G)},
    };
    for (const auto& d : docks) {
        QAction* toggle = d.dock->toggleViewAction();
        toggle->setText(tr(d.text));
        toggle->setShortcut(d.keys);
        toggle->setObjectName(QString::fromLatin1(d.name));
        viewMenu_->addAction(toggle);
    }

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->setObjectName(QStringLiteral("helpMenu"));
    QAction* keys = help->addAction(tr("&Keyboard Shortcuts"), this, &MainWindow::showShortcuts);
    keys->setObjectName(QStringLiteral("shortcutsAction"));
    keys->setShortcut(QKeySequence(Qt::Key_F1));
    addShortcutsToTooltips(this);
}

// The keys that are not menu actions: on the maps (overview, heat map, comparison) and in the
// views; Help > Keyboard Shortcuts lists them with the menus' own.
namespace {
std::vector<std::pair<QString, QString>> mapKeys() {
    return {{QStringLiteral("\u2190 / \u2192"), QObject::tr("Previous / next head (on the maps)")},
            {QStringLiteral("\u2191 / \u2193"), QObject::tr("Previous / next layer (on the maps)")},
            {QStringLiteral("+ / \u2212"), QObject::tr("Zoom the heat map in / out")},
            {QStringLiteral("0"), QObject::tr("Show the whole heat map")},
            {QObject::tr("Ctrl+click"), QObject::tr("Mask or unmask a head (overview)")},
            {QObject::tr("Return"), QObject::tr("Run the input (input box)")}};
}
}  // namespace

QString MainWindow::shortcutsText() const {
    QStringList lines;
    for (const auto& [keys, what] : collectShortcuts(this, mapKeys())) lines << keys + QLatin1Char('\t') + what;
    return lines.join(QLatin1Char('\n'));
}

void MainWindow::showShortcuts() {
    auto* dialog = findChild<ShortcutsDialog*>(QStringLiteral("shortcutsDialog"));
    if (!dialog) {
        dialog = new ShortcutsDialog(collectShortcuts(this, mapKeys()), this);
        dialog->setAttribute(Qt::WA_DeleteOnClose);
    }
    dialog->show();
    dialog->raise();
}

void MainWindow::updateRecentMenu() {
    recentMenu_->clear();
    const QStringList models = ModelPicker::recentFolders(), workspaces = recent::workspaces();
    for (const QString& m : models)
        recentMenu_->addAction(QDir::toNativeSeparators(m), this, [this, m] { openModel(m); });
    if (!models.isEmpty() && !workspaces.isEmpty()) recentMenu_->addSeparator();
    for (const QString& w : workspaces)
        recentMenu_
                ->addAction(tr("Workspace %1").arg(QFileInfo(w).fileName()), this, [this, w] { openWorkspaceFile(w); })
                ->setToolTip(QDir::toNativeSeparators(w));
    recentMenu_->setEnabled(!models.isEmpty() || !workspaces.isEmpty());
}

// Arrows on the maps (overview, heat map, comparison): left/right = head, up/down = layer.
void MainWindow::buildShortcuts() {
    const struct {
        Qt::Key key;
        int dLayer, dHead;
    } moves[] = {{Qt::Key_Left, 0, -1}, {Qt::Key_Right, 0, 1}, {Qt::Key_Up, -1, 0}, {Qt::Key_Down, 1, 0}};
    for (const auto& m : moves) {
        auto* s = new QShortcut(QKeySequence(m.key), tabs_);
        s->setContext(Qt::WidgetWithChildrenShortcut);
        connect(s, &QShortcut::activated, this, [this, m] { moveSelection(m.dLayer, m.dHead); });
    }
}
