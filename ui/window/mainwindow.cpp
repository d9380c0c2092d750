#include "window/mainwindow.h"

#include "controllers/causalcontroller.h"
#include "controllers/generatecontroller.h"
#include "controllers/imagecontroller.h"
#include "controllers/modelviewcontroller.h"
#include "panels/causalpanel.h"
#include "panels/corpuspanel.h"
#include "panels/imageoverlaypanel.h"
#include "panels/metricspanel.h"
#include "panels/modelviewpanel.h"
#include "controllers/labcontroller.h"
#include "controllers/viewscontroller.h"
#include "panels/comparepanel.h"
#include "panels/controlpanel.h"
#include "panels/devicecombo.h"
#include "panels/kindspanel.h"
#include "panels/labpanel.h"
#include "panels/trainingcurvespanel.h"
#include "services/tokenids.h"
#include "state/recentfiles.h"
#include "state/viewstate.h"
#include "window/focusring.h"
#include "window/shortcutsdialog.h"
#include "figure/figure.h"
#include "figure/headfigure.h"
#include "views/heatmapview.h"
#include "panels/imageinput.h"
#include "panels/modelpicker.h"
#include "panels/outputpanel.h"
#include "views/overviewgrid.h"
#include "services/session.h"
#include "views/temperatureslider.h"

#include "attnscope/io/gguf.h"
#include "attnscope/io/model_location.h"
#include "attnscope/runtime/error.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QGuiApplication>
#include <QScreen>
#include <QFileInfo>
#include <QIcon>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QShortcut>
#include <QSpinBox>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>

#include <algorithm>
#include <utility>

namespace {

QString tokenCount(std::size_t n) { return n == 1 ? QStringLiteral("1 token") : QStringLiteral("%1 tokens").arg(n); }

// A dropped or given path: the folder itself, or the folder of a dropped config.json; a model id
// not on disk (org/name) as given, for the session to find in the Hugging Face cache.
QString modelFolderOf(const QString& path) {
    const QFileInfo info(path);
    if (!info.exists() && attnscope::isModelId(path.toStdString())) return path;
    // A model in one file (GGUF, by content) or in Ollama's store is opened as it is.
    if (path.startsWith(QLatin1String("ollama:")) || attnscope::looksLikeGguf(path.toStdString()))
        return info.exists() ? info.absoluteFilePath() : path;
    return info.isFile() ? info.absolutePath() : info.absoluteFilePath();
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
    state_ = new ViewState(this);
    session_ = new Session(this);
    session_->setObjectName(QStringLiteral("session"));
    maps_ = new MapService(this);

    // The map is the window: the heat map takes what the overview and the docks leave.
    overview_ = new OverviewGrid;
    overview_->setObjectName(QStringLiteral("overview"));
    auto* scroll = new QScrollArea;
    scroll->setWidget(overview_);
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    scroll->setMinimumWidth(160);
    heatmap_ = new HeatmapView;
    heatmap_->setObjectName(QStringLiteral("heatmap"));
    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(scroll);
    split->addWidget(heatmap_);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 3);
    split->setChildrenCollapsible(false);
    split->setSizes({220, 660});
    compare_ = new ComparePanel(maps_);
    compare_->setObjectName(QStringLiteral("comparePanel"));
    tabs_ = new QTabWidget;
    tabs_->setObjectName(QStringLiteral("viewTabs"));
    tabs_->setUsesScrollButtons(true);  // many tabs scroll rather than widen the window
    tabs_->addTab(split, tr("&Explore"));
    tabs_->addTab(compare_, tr("&Compare dot · additive · linear"));
    // The Compare tab's training runs and kinds reports (issue 36), each in its own panel.
    auto* curves = new TrainingCurvesPanel;
    curves->setObjectName(QStringLiteral("trainingCurvesPanel"));
    auto* kinds = new KindsPanel;
    kinds->setObjectName(QStringLiteral("kindsPanel"));
    tabs_->addTab(curves, tr("Compare · training curves"));
    tabs_->addTab(kinds, tr("Compare · kinds"));
    connect(curves, &TrainingCurvesPanel::failed, this,
            [this](const QString& message) { showError(tr("The training run could not be shown."), message); });
    connect(kinds, &KindsPanel::failed, this,
            [this](const QString& message) { showError(tr("The kinds report could not be shown."), message); });
    setCentralWidget(tabs_);

    controls_ = new ControlPanel;
    auto* dock = new QDockWidget(tr("Controls"), this);
    dock->setObjectName(QStringLiteral("controlsDock"));
    dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable |
                      QDockWidget::DockWidgetClosable);
    auto* dockScroll = new QScrollArea;
    dockScroll->setWidget(controls_);
    dockScroll->setWidgetResizable(true);
    dockScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    dockScroll->setFrameShape(QFrame::NoFrame);
    dockScroll->setMinimumWidth(250);
    dock->setWidget(dockScroll);
    addDockWidget(Qt::LeftDockWidgetArea, dock);
    setDockOptions(dockOptions() | QMainWindow::GroupedDragging);

    progressBar_ = new QProgressBar;
    progressBar_->setObjectName(QStringLiteral("progressBar"));
    progressBar_->setMaximumWidth(420);  // wide enough for "Running: layer 12 of 32 · 18 s left"
    progressBar_->setMinimumWidth(200);
    progressBar_->setVisible(false);
    cancelButton_ = new QPushButton(tr("Cancel"));
    cancelButton_->setObjectName(QStringLiteral("cancelButton"));
    cancelButton_->setVisible(false);
    statusBar()->addPermanentWidget(progressBar_);
    statusBar()->addPermanentWidget(cancelButton_);

    connectSession();  // first: on the session's signals the window reacts before the controllers
    buildLab();
    buildImageViews();
    buildViews();
    buildSources();
    buildGenerate();
    buildCorpus();
    buildCausal();
    buildFamilyInputs();
    buildAttentionFile();
    buildWorkspace();  // it saves and restores the others' state
    buildMenus();      // every menu, in one place, once every action's owner exists
    buildShortcuts();
    bindState();
    labDock_->raise();  // the lab in front; View > Views / Generate bring the others forward
    heatmap_->clear(tr("Open a model (Ctrl+O) or pick a built-in one to see its attention."));
    // The window's minimum is the map's: a wider page (Compare's three maps, the Model view)
    // is squeezed into the central area rather than widening the window past the screen when
    // it is shown. Its own layout says how it shrinks.
    for (int i = 1; i < tabs_->count(); ++i)
        tabs_->widget(i)->setSizePolicy(QSizePolicy::Ignored, tabs_->widget(i)->sizePolicy().verticalPolicy());
    // The first start: most of the screen, never more than it (a 1366×768 laptop included).
    const QRect screen = QGuiApplication::primaryScreen() ? QGuiApplication::primaryScreen()->availableGeometry()
                                                          : QRect(0, 0, 1280, 800);
    resize(screen.width() * 9 / 10, screen.height() * 9 / 10);
    // Slim docks: the map gets the rest (a saved layout, restoreWindowLayout, overrides this).
    // The right docks as wide as the lab's boxes need, at most 360 px (they scroll beyond).
    const int right = std::clamp(lab_->panel()->minimumSizeHint().width() + 24, 280, 360);
    resizeDocks({findChild<QDockWidget*>(QStringLiteral("controlsDock")), labDock_}, {260, right}, Qt::Horizontal);
    statusBar()->showMessage(tr("Pick a model to begin, or drop a model folder on the window."));
}

MainWindow::~MainWindow() {
    // Workers first: their results must not reach half-destroyed views.
    lab_->shutdown();
    causal_->shutdown();
    maps_->cancelAll();
    maps_->waitForWorkers();
}

void MainWindow::connectSession() {
    const ControlPanel* c = controls_;
    connect(c->picker(), &ModelPicker::modelChosen, this, &MainWindow::openModel);
    connect(c->picker(), &ModelPicker::openFolderRequested, this, &MainWindow::chooseModelFolder);
    connect(c->runButton(), &QPushButton::clicked, this, &MainWindow::runInput);
    connect(c->input(), &QLineEdit::returnPressed, this, &MainWindow::runInput);
    connect(c->targetInput(), &QLineEdit::returnPressed, this, &MainWindow::runInput);
    connect(compare_, &ComparePanel::taskChosen, this, [this](const QString& task) {
        compareTask_ = task;
        updateCompare(true);
    });
    connect(compare_, &ComparePanel::failed, this,
            [this](const QString& message) { showError(tr("The comparison could not run."), message); });

    connect(session_, &Session::modelLoaded, this, &MainWindow::onModelLoaded);
    connect(session_, &Session::traceReady, this, &MainWindow::onTraceReady);
    connect(session_, &Session::busyChanged, this, &MainWindow::onBusyChanged);
    connect(session_, &Session::progress, this, &MainWindow::onProgress);
    connect(session_, &Session::progressText, progressBar_, &QProgressBar::setFormat);
    connect(session_, &Session::failed, this, [this](const QString& message) {
        const QString headline =
                pendingSpec_.isEmpty() ? tr("The model could not run this input.")
                : pendingSpec_.endsWith(QLatin1String(".npy"), Qt::CaseInsensitive)
                        ? tr("Could not open the attention file %1.").arg(QDir::toNativeSeparators(pendingSpec_))
                        : tr("Could not open the model %1.").arg(QDir::toNativeSeparators(pendingSpec_));
        pendingSpec_.clear();
        statusBar()->showMessage(tr("Failed: %1").arg(message), 10000);
        showError(headline, message);
    });
    connect(cancelButton_, &QPushButton::clicked, this, [this] {
        session_->cancel();
        pendingSpec_.clear();
        statusBar()->showMessage(tr("Cancelled."), 5000);
    });
    connect(maps_, &MapService::detailReady, this, &MainWindow::onDetail);
    connect(maps_, &MapService::thumbnailsReady, this, &MainWindow::onThumbnails);
    // A long map's level of detail (HeatmapView asks for each zoom) and the pooling the
    // thumbnails follow too.
    connect(heatmap_, &HeatmapView::levelOfDetailWanted, this, &MainWindow::askLevelOfDetail);
    connect(maps_, &MapService::levelOfDetailReady, this, [this](const LevelOfDetailResult& r) {
        if (r.error.isEmpty() && r.trace == shownDetail_.trace && r.key == shownDetail_.key &&
            r.temperature == shownDetail_.temperature)
            heatmap_->setLevelOfDetail(r.pooled, r.request);
    });
    connect(heatmap_, &HeatmapView::poolingChanged, this, [this] { requestThumbnails(); });
}

// The widgets request changes of the ViewState; the window follows its signals. The window's
// slots are connected before the controllers' (made earlier, but they follow the state only),
// so the maps are asked for first.
void MainWindow::bindState() {
    const ControlPanel* c = controls_;
    connect(c->blockCombo(), &QComboBox::currentIndexChanged, state_, [this](int i) {
        if (i >= 0) state_->setBlock(i);
    });
    connect(c->layerSpin(), &QSpinBox::valueChanged, state_, [this](int v) { state_->setLayer(v); });
    connect(c->headSpin(), &QSpinBox::valueChanged, state_, [this](int v) { state_->setHead(v); });
    connect(overview_, &OverviewGrid::headChosen, state_,
            [this](int layer, int head) { state_->select(state_->block(), layer, head); });
    connect(c->temperature(), &TemperatureSlider::temperatureChanged, state_,
            [this] { state_->setTemperature(controls_->temperature()->temperature()); });
    connect(controls_, &ControlPanel::coloringChanged, state_, [this] {
        state_->setColormap(controls_->colormap());
        state_->setScale(controls_->colorScale().type);
    });
    connect(rawTokensAction_, &QAction::toggled, state_, [this](bool raw) {
        Workspace::View v = state_->view();
        v.rawTokens = raw;
        state_->setView(v);
    });
    connect(rawTokensAction_, &QAction::toggled, this, &MainWindow::onRawTokensToggled);  // after the state's
    connect(tabs_, &QTabWidget::currentChanged, state_, [this] { state_->setTab(tabName()); });
    connect(lab_->panel(), &LabPanel::variantChanged, state_, [this] { state_->setVariant(lab_->panel()->variant()); });
    connect(lab_, &LabController::temperatureInsideChanged, state_, [this](bool inside) {
        state_->setInside({inside, lab_->intervention().layers});
    });
    connect(heatmap_, &HeatmapView::zoomChanged, state_, [this](const MapZoom& z) {
        state_->setZoom(z.isWhole() ? std::nullopt
                                    : std::optional<ViewState::Zoom>(
                                              ViewState::Zoom{z.keyLower, z.keyUpper, z.queryLower, z.queryUpper}));
    });

    connect(state_, &ViewState::selectionChanged, this, &MainWindow::onSelectionChanged);
    connect(state_, &ViewState::temperatureChanged, this, &MainWindow::onTemperatureChanged);
    connect(state_, &ViewState::temperatureChanged, lab_, &LabController::onTemperatureChanged);
    connect(state_, &ViewState::colorsChanged, this, [this] {
        heatmap_->setColoring(state_->colormap(), ColorScale{state_->scale()});
        applyDetailColors();  // a map source's own range or diverging colours
        compare_->setColoring(state_->colormap(), ColorScale{state_->scale()});
        // Every map follows the colour map: the Metrics tab's block view and the Corpus tab's too.
        if (lab_) lab_->metrics()->setColoring(state_->colormap(), ColorScale{state_->scale()});
        if (corpus_) corpus_->setColoring(state_->colormap(), ColorScale{state_->scale()});
        requestThumbnails();
    });
    connect(state_, &ViewState::viewChanged, this, [this] {
        syncTab();
        updateCompare(true);
        updateTemperatureApplicability();
        lab_->onTabChanged();
    });
    // Whatever changes what is shown makes the saved workspace out of date.
    for (auto signal :
         {&ViewState::modelChanged, &ViewState::inputChanged, &ViewState::selectionChanged,
          &ViewState::temperatureChanged, &ViewState::insideChanged, &ViewState::variantChanged,
          &ViewState::masksChanged, &ViewState::colorsChanged, &ViewState::viewChanged, &ViewState::mapSourceChanged})
        connect(state_, signal, this, [this] { modified_ = true; });
}

QString MainWindow::tabName() const {
    QWidget* w = tabs_->currentWidget();
    return w == compare_              ? QStringLiteral("compare")
           : w == lab_->metrics()     ? QStringLiteral("metrics")
           : w == modelView_->panel() ? QStringLiteral("model")
           : w == imageView_->panel() ? QStringLiteral("image")
           : w == corpus_             ? QStringLiteral("corpus")
           : w == causal_->panel()    ? QStringLiteral("causal")
                                      : QStringLiteral("explore");
}

// The state's tab on screen (the lab's "show in Explore" sets it there).
void MainWindow::syncTab() {
    if (tabName() == state_->view().tab) return;
    QWidget* const byName[] = {tabs_->widget(0),    compare_, lab_->metrics(), modelView_->panel(),
                               imageView_->panel(), corpus_,  causal_->panel()};
    const QStringList names = {QStringLiteral("explore"), QStringLiteral("compare"), QStringLiteral("metrics"),
                               QStringLiteral("model"),   QStringLiteral("image"),   QStringLiteral("corpus"),
                               QStringLiteral("causal")};
    const int i = int(names.indexOf(state_->view().tab));
    if (i >= 0) tabs_->setCurrentWidget(byName[i]);
}

// The state's block, layer and head in the boxes (without echoing back), then the maps.
void MainWindow::syncSelectionWidgets() {
    QComboBox* blocks = controls_->blockCombo();
    QSpinBox* layer = controls_->layerSpin();
    QSpinBox* head = controls_->headSpin();
    const QSignalBlocker b0(blocks), b1(layer), b2(head);
    const bool shown = state_->block() >= 0 && state_->block() < int(state_->blocks().size());
    if (shown) {
        const ViewState::BlockShape& s = state_->blocks()[std::size_t(state_->block())];
        blocks->setCurrentIndex(state_->block());
        layer->setRange(0, std::max(0, s.layers - 1));
        head->setRange(0, std::max(0, s.heads - 1));
    }
    layer->setEnabled(shown);
    // A per-layer map source (value-weighted (layer), ALTI, relevance) has one map per layer.
    const bool perHead = attnscope::perHeadSource(state_->mapSource());
    head->setEnabled(shown && perHead);  // its tooltip says why (updateHeadGroup)
    layer->setValue(state_->layer());
    head->setValue(state_->head());
}

void MainWindow::onSelectionChanged() {
    syncSelectionWidgets();
    if (state_->block() < 0) return;
    if (state_->block() != shownBlock_) return onBlockChanged();
    overview_->setSelected(state_->layer(), state_->head());
    requestDetail();
    updateCompare(false);
}

void MainWindow::moveSelection(int dLayer, int dHead) {
    if (state_->blocks().empty()) return;
    state_->moveSelection(dLayer, dHead);
}

void MainWindow::chooseModelFolder() {
    auto* dialog = new QFileDialog(this, tr("Open Model Folder (config.json + model.safetensors)"));
    dialog->setObjectName(QStringLiteral("openFolderDialog"));
    dialog->setFileMode(QFileDialog::Directory);
    dialog->setOption(QFileDialog::ShowDirsOnly);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setDirectory(recent::lastFolder(QStringLiteral("model")));
    connect(dialog, &QFileDialog::fileSelected, this, [this](const QString& folder) {
        // The folder above the model: the next model is likely its sibling.
        recent::rememberFolder(QStringLiteral("model"), QFileInfo(folder).absolutePath());
        openModel(folder);
    });
    dialog->open();
}

void MainWindow::openModel(const QString& spec) {
    const QString target = spec.startsWith(QLatin1String("builtin:")) ? spec : modelFolderOf(spec);
    pendingSpec_ = target;
    statusBar()->showMessage(tr("Opening %1…").arg(QDir::toNativeSeparators(target)));
    session_->openModel(target, controls_->device()->choice());
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
        setImageFile(path);  // an image for image models; else a model folder
    else
        openModel(path);
}

QString MainWindow::modelName() const { return modelDisplayName(session_->modelSpec()); }

void MainWindow::runInput() {
    if (!session_->model()) {
        showError(tr("No model is open."), tr("Pick a built-in model or open a model folder first."));
        return;
    }
    if (session_->model()->info().imageInput) {
        runImageInput();
        return;
    }
    if (session_->isBusy()) return;
    statusBar()->showMessage(tr("Running…"));
    state_->setInput({controls_->input()->text(), controls_->idsMode(), controls_->targetText(), QString()});
    session_->runInput(controls_->input()->text(), controls_->idsMode(), controls_->targetText());
    updateCompare(true);
}

void MainWindow::onTraceReady(const std::shared_ptr<const attnscope::Trace>& trace) {
    const auto& blocks = trace->blocks();
    if (!session_->model())
        controls_->outputs()->clear();                                 // maps from an attention file
    else if (!generate_->showStepOutput(trace, controls_->outputs()))  // a generation step: its own output
        controls_->outputs()->showOutputs(*trace, *session_->model(), session_->tokenizer().get(),
                                          !controls_->targetText().trimmed().isEmpty());
    if (blocks.empty()) {
        heatmap_->clear(tr("This model recorded no attention."));
        return;
    }
    QStringList names;
    std::vector<ViewState::BlockShape> shapes;
    for (const auto& b : blocks) {
        names << QString::fromStdString(b.name);
        shapes.push_back({names.back(), b.layers, b.heads});
    }
    statusBar()->showMessage(
            tr("Ran %1 on %2.").arg(tokenCount(trace->ids().size()), QString::fromStdString(trace->device())), 5000);
    // The state keeps the block by name (or starts on cross-attention) and clamps the head.
    shownBlock_ = -1;  // a new trace: the overview and its maps are set up again
    state_->setBlocks(std::move(shapes));
    controls_->setBlocks(names, state_->blockName());
    syncSelectionWidgets();
    if (shownBlock_ < 0) onBlockChanged();
    // A model just opened on its example input: nothing the user made yet, nothing to save.
    if (std::exchange(freshModel_, false) && controls_->input()->text() == exampleShown_ && !restore_)
        modified_ = false;
}

// New block (or trace): the overview's shape, then fresh maps.
void MainWindow::onBlockChanged() {
    const auto trace = session_->trace();
    const int b = state_->block();
    if (!trace || b < 0 || b >= int(trace->blocks().size())) return;
    shownBlock_ = b;
    const auto& block = trace->blocks()[std::size_t(b)];
    overview_->setShape(block.layers, block.heads);
    overview_->setLayerWindows({block.layerWindows.begin(), block.layerWindows.end()});
    overview_->setSelected(state_->layer(), state_->head());
    updateTemperatureApplicability();
    requestDetail();
    requestThumbnails();
    updateCompare(false);
    lab_->onBlockChanged();
}

void MainWindow::onTemperatureChanged() {
    // With the temperature inside the model the maps are drawn at T = 1: they change only with
    // the lab's re-run (LabController::onTemperature), which redraws them when it arrives.
    if (!lab_->temperatureInside()) refreshMaps();
    updateCompare(false);
}

MapKey MainWindow::currentKey() const { return {state_->block(), state_->layer(), state_->head()}; }

void MainWindow::updateTemperatureApplicability() {
    const auto trace = session_->trace();
    const bool compare = tabs_->currentWidget() == compare_;
    const int block = currentKey().block;
    const bool linear = !compare && trace && block >= 0 &&
                        trace->blocks()[std::size_t(block)].kind == attnscope::AttentionKind::Linear;
    // A map source weights the maps the model used: the display temperature does not apply to it.
    const attnscope::MapSource source = compare ? attnscope::MapSource::Weights : state_->mapSource();
    controls_->temperature()->setApplicable(
            !linear && source == attnscope::MapSource::Weights,
            linear ? tr("Linear attention has no softmax, so the temperature does not change its maps.")
            : source != attnscope::MapSource::Weights
                    ? tr("%1 uses the maps the model ran with: the display T does not apply (Inside the model "
                         "does).")
                              .arg(QString::fromUtf8(attnscope::sourceLabel(source)))
                    : QString());
}

// The comparison follows the window's input and selection while its tab is shown.
void MainWindow::updateCompare(bool runIfNeeded) {
    if (tabs_->currentWidget() != compare_) return;
    if (runIfNeeded) {
        // The window's input when its model belongs to the task; else the task's example text
        // (token ids carry over, since they need no tokenizer).
        const auto ownTask = compareTaskOf(session_->modelSpec());
        const QString task = compareTask_;
        QString text = controls_->input()->text();
        if (ownTask != task && !controls_->idsMode())
            text = exampleInput(QStringLiteral("builtin:") + task, true, 0, 0);
        // The window's target too (forced on all three decoders) when the input is the window's.
        compare_->setInput(task, text, controls_->idsMode(), controls_->device()->choice(),
                           ownTask == task ? controls_->targetText() : QString());
    }
    compare_->setSource(state_->mapSource());  // each kind shows it where core computes it
    compare_->setSelection(currentBlockName(), state_->layer(), state_->head(), state_->temperature());
}

void MainWindow::onBusyChanged(bool busy) {
    progressBar_->setVisible(busy);
    cancelButton_->setVisible(busy);
    if (busy) progressBar_->setRange(0, 0);  // a busy bar until the first report
    updateRunEnabled();
}

void MainWindow::onProgress(int permille) {
    if (permille < 0) {
        progressBar_->setRange(0, 0);
        return;
    }
    progressBar_->setRange(0, 1000);
    progressBar_->setValue(permille);
}

void MainWindow::updateRunEnabled() { controls_->runButton()->setEnabled(session_->model() && !session_->isBusy()); }

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
