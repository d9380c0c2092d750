#include "window/mainwindow.h"

#include "panels/comparepanel.h"
#include "panels/controlpanel.h"
#include "panels/corpuspanel.h"
#include "panels/metricspanel.h"
#include "panels/devicecombo.h"
#include "window/generatecontroller.h"
#include "figure/figure.h"
#include "figure/headfigure.h"
#include "views/heatmapview.h"
#include "panels/imageinput.h"
#include "window/labcontroller.h"
#include "panels/modelpicker.h"
#include "panels/outputpanel.h"
#include "views/overviewgrid.h"
#include "services/session.h"
#include "views/temperatureslider.h"

#include "attnscope/runtime/error.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
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

namespace {

QString formatCount(std::int64_t n) {
    if (n >= 1'000'000'000) return QString::number(n / 1e9, 'f', 2) + QStringLiteral(" B");
    if (n >= 1'000'000) return QString::number(n / 1e6, 'f', 1) + QStringLiteral(" M");
    if (n >= 10'000) return QString::number(n / 1e3, 'f', 1) + QStringLiteral(" k");
    return QString::number(n);
}

QString tokenCount(std::size_t n) { return n == 1 ? QStringLiteral("1 token") : QStringLiteral("%1 tokens").arg(n); }

// A dropped or given path: the folder itself, or the folder of a dropped config.json.
QString modelFolderOf(const QString& path) {
    const QFileInfo info(path);
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
    session_ = new Session(this);
    session_->setObjectName(QStringLiteral("session"));
    maps_ = new MapService(this);

    overview_ = new OverviewGrid;
    overview_->setObjectName(QStringLiteral("overview"));
    auto* scroll = new QScrollArea;
    scroll->setWidget(overview_);
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    heatmap_ = new HeatmapView;
    heatmap_->setObjectName(QStringLiteral("heatmap"));
    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(scroll);
    split->addWidget(heatmap_);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 3);
    compare_ = new ComparePanel(maps_);
    compare_->setObjectName(QStringLiteral("comparePanel"));
    tabs_ = new QTabWidget;
    tabs_->setObjectName(QStringLiteral("viewTabs"));
    tabs_->addTab(split, tr("&Explore"));
    tabs_->addTab(compare_, tr("&Compare dot · additive · linear"));
    setCentralWidget(tabs_);

    controls_ = new ControlPanel;
    auto* dock = new QDockWidget(tr("Controls"), this);
    dock->setObjectName(QStringLiteral("controlsDock"));
    dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
    auto* dockScroll = new QScrollArea;
    dockScroll->setWidget(controls_);
    dockScroll->setWidgetResizable(true);
    dockScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    dockScroll->setMinimumWidth(300);
    dock->setWidget(dockScroll);
    addDockWidget(Qt::LeftDockWidgetArea, dock);

    progressBar_ = new QProgressBar;
    progressBar_->setObjectName(QStringLiteral("progressBar"));
    progressBar_->setMaximumWidth(420);  // wide enough for "Running: layer 12 of 32 · 18 s left"
    progressBar_->setMinimumWidth(300);
    progressBar_->setVisible(false);
    cancelButton_ = new QPushButton(tr("Cancel"));
    cancelButton_->setObjectName(QStringLiteral("cancelButton"));
    cancelButton_->setVisible(false);
    statusBar()->addPermanentWidget(progressBar_);
    statusBar()->addPermanentWidget(cancelButton_);
    buildMenus();
    buildShortcuts();
    buildFamilyInputs();

    const ControlPanel* c = controls_;
    connect(c->picker(), &ModelPicker::modelChosen, this, &MainWindow::openModel);
    connect(c->picker(), &ModelPicker::openFolderRequested, this, &MainWindow::chooseModelFolder);
    connect(c->runButton(), &QPushButton::clicked, this, &MainWindow::runInput);
    connect(c->input(), &QLineEdit::returnPressed, this, &MainWindow::runInput);
    connect(c->targetInput(), &QLineEdit::returnPressed, this, &MainWindow::runInput);
    connect(c->blockCombo(), &QComboBox::currentIndexChanged, this, &MainWindow::onBlockChanged);
    for (QSpinBox* spin : {c->layerSpin(), c->headSpin()})
        connect(spin, &QSpinBox::valueChanged, this, [this] {
            overview_->setSelected(controls_->layerSpin()->value(), controls_->headSpin()->value());
            requestDetail();
            updateCompare(false);
        });
    connect(c->temperature(), &TemperatureSlider::temperatureChanged, this, &MainWindow::onTemperatureChanged);
    connect(controls_, &ControlPanel::coloringChanged, this, [this] {
        heatmap_->setColoring(controls_->colormap(), controls_->colorScale());
        compare_->setColoring(controls_->colormap(), controls_->colorScale());
        // Every map follows the colour map: the Metrics tab's block view and the Corpus tab's too.
        if (lab_) lab_->metrics()->setColoring(controls_->colormap(), controls_->colorScale());
        if (corpus_) corpus_->setColoring(controls_->colormap(), controls_->colorScale());
        requestThumbnails();
    });
    connect(overview_, &OverviewGrid::headChosen, this, [this](int layer, int head) {
        const QSignalBlocker b1(controls_->layerSpin()), b2(controls_->headSpin());
        controls_->layerSpin()->setValue(layer);
        controls_->headSpin()->setValue(head);
        requestDetail();
        updateCompare(false);
    });
    connect(tabs_, &QTabWidget::currentChanged, this, [this] {
        updateCompare(true);
        updateTemperatureApplicability();
    });
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

    buildLab();
    buildAttentionFileMenu();
    buildImageViews();
    buildGenerate();
    buildViews();
    buildCorpus();
    buildWorkspace();  // last: it saves and restores the others' state
    heatmap_->clear(tr("Open a model (Ctrl+O) or pick a built-in one to see its attention."));
    resize(1280, 820);
    statusBar()->showMessage(tr("Pick a model to begin, or drop a model folder on the window."));
}

MainWindow::~MainWindow() {
    // Workers first: their results must not reach half-destroyed views.
    lab_->shutdown();
    maps_->cancelAll();
    maps_->waitForWorkers();
}

void MainWindow::buildMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->setObjectName(QStringLiteral("fileMenu"));
    QAction* open = file->addAction(tr("&Open Model Folder…"), this, &MainWindow::chooseModelFolder);
    open->setShortcut(QKeySequence::Open);
    open->setObjectName(QStringLiteral("openAction"));
    file->addSeparator();
    QAction* fig = file->addAction(tr("&Export Figure…"), this, &MainWindow::exportFigure);
    fig->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    fig->setObjectName(QStringLiteral("exportFigureAction"));
    QAction* data = file->addAction(tr("Export Map &Data (.npy, .csv)…"), this, &MainWindow::exportMapData);
    data->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E));
    data->setObjectName(QStringLiteral("exportDataAction"));
    file->addSeparator();
    buildCaptureMenu(file);
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Q));
    quit->setMenuRole(QAction::QuitRole);
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

void MainWindow::moveSelection(int dLayer, int dHead) {
    QSpinBox* layer = controls_->layerSpin();
    QSpinBox* head = controls_->headSpin();
    if (!layer->isEnabled()) return;
    const QSignalBlocker b1(layer), b2(head);
    layer->setValue(std::clamp(layer->value() + dLayer, layer->minimum(), layer->maximum()));
    head->setValue(std::clamp(head->value() + dHead, head->minimum(), head->maximum()));
    overview_->setSelected(layer->value(), head->value());
    requestDetail();
    updateCompare(false);
}

void MainWindow::chooseModelFolder() {
    auto* dialog = new QFileDialog(this, tr("Open Model Folder (config.json + model.safetensors)"));
    dialog->setObjectName(QStringLiteral("openFolderDialog"));
    dialog->setFileMode(QFileDialog::Directory);
    dialog->setOption(QFileDialog::ShowDirsOnly);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    const QStringList recent = ModelPicker::recentFolders();
    dialog->setDirectory(recent.isEmpty() ? QDir::homePath() : QFileInfo(recent.first()).absolutePath());
    connect(dialog, &QFileDialog::fileSelected, this, &MainWindow::openModel);
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

QString MainWindow::exampleInput(const QString& spec, bool hasTokenizer, int vocabSize, int maxPositions) {
    if (!hasTokenizer) {
        int n = std::min(8, vocabSize);
        if (maxPositions > 0) n = std::min(n, maxPositions);
        QStringList ids;
        for (int i = 0; i < n; ++i) ids << QString::number(i);
        return ids.join(QLatin1Char(' '));
    }
    if (spec.startsWith(QLatin1String("builtin:reverse"))) return QStringLiteral("attention2026");
    if (spec.startsWith(QLatin1String("builtin:sentiment")))
        return QStringLiteral("the acting was not good but the plot was great");
    return QStringLiteral("The quick brown fox jumps over the lazy dog");
}

QString MainWindow::modelName() const { return modelDisplayName(session_->modelSpec()); }

void MainWindow::onModelLoaded(const attnscope::ModelInfo& info) {
    const QString spec = pendingSpec_.isEmpty() ? session_->modelSpec() : pendingSpec_;
    pendingSpec_.clear();
    controls_->picker()->setCurrentSpec(spec);
    // The family's notes (windows, soft-cap, ALiBi, partial rotary, kv groups) say what shapes its maps.
    QStringList notes;
    for (const std::string& note : info.notes) notes << QString::fromStdString(note).toHtmlEscaped();
    if (!info.weights.empty())
        notes.prepend(tr("weights: %1").arg(QString::fromStdString(info.weights).toHtmlEscaped()));
    controls_->modelLabel()->setText(
            tr("<b>%1</b> · %2 layers × %3 heads<br>%4 parameters · %5 · %6")
                    .arg(QString::fromStdString(info.family).toHtmlEscaped())
                    .arg(info.layers)
                    .arg(info.heads)
                    .arg(formatCount(info.parameters))
                    .arg(QString::fromStdString(info.dtype))
                    .arg(QString::fromStdString(info.device)) +
            (notes.isEmpty() ? QString() : QStringLiteral("<br>") + notes.join(QStringLiteral(" · "))));
    controls_->modelLabel()->setToolTip(QDir::toNativeSeparators(QString::fromStdString(info.path.string())));
    setWindowTitle(tr("AttnScope — %1").arg(modelName()));
    controls_->layerSpin()->setEnabled(false);
    controls_->headSpin()->setEnabled(false);
    controls_->outputs()->clear();
    maps_->cancelAll();
    heatmap_->clear(tr("Type an input and press Run."));
    overview_->setShape(0, 0);
    updateHeadGroup();  // no trace yet: the previous model's key/value group line goes
    updateRunEnabled();

    // Keep what the user typed when it suits this model (same input mode, same built-in task or
    // both not built-in); otherwise put an example in.
    const bool hadIds = controls_->idsMode();
    controls_->setTokenizerAvailable(session_->hasTokenizer());
    controls_->setImageInput(info.imageInput);
    controls_->setTargetInput(info.encoderDecoder);
    QLineEdit* input = controls_->input();
    const bool sameKindOfInput = compareTaskOf(previousSpec_) == compareTaskOf(spec);
    previousSpec_ = spec;
    if (!applyWorkspaceInput() && (input->text().trimmed().isEmpty() || input->text() == exampleShown_ ||
                                   hadIds != controls_->idsMode() || !sameKindOfInput)) {
        exampleShown_ = exampleInput(spec, session_->hasTokenizer(), info.vocabSize, info.maxPositions);
        input->setText(exampleShown_);
        controls_->targetInput()->clear();  // a target belongs to its source
    }
    statusBar()->showMessage(tr("Loaded %1.").arg(modelName()), 5000);
    if (const auto task = compareTaskOf(spec)) compareTask_ = *task;  // compare this model's task
    runInput();
}

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
    for (const auto& b : blocks) names << QString::fromStdString(b.name);
    controls_->setBlocks(names, controls_->blockCombo()->currentText());
    statusBar()->showMessage(
            tr("Ran %1 on %2.").arg(tokenCount(trace->ids().size()), QString::fromStdString(trace->device())), 5000);
    onBlockChanged();
}

// New block (or trace): bounds of layer and head, the overview's shape, then fresh maps.
void MainWindow::onBlockChanged() {
    const auto trace = session_->trace();
    if (!trace || controls_->blockCombo()->currentIndex() < 0) return;
    const auto& block = trace->blocks()[std::size_t(controls_->blockCombo()->currentIndex())];
    QSpinBox* layer = controls_->layerSpin();
    QSpinBox* head = controls_->headSpin();
    {
        const QSignalBlocker b1(layer), b2(head);
        layer->setRange(0, std::max(0, block.layers - 1));
        head->setRange(0, std::max(0, block.heads - 1));
        layer->setEnabled(true);
        head->setEnabled(true);
    }
    overview_->setShape(block.layers, block.heads);
    overview_->setLayerWindows({block.layerWindows.begin(), block.layerWindows.end()});
    overview_->setSelected(layer->value(), head->value());
    updateTemperatureApplicability();
    requestDetail();
    requestThumbnails();
    updateCompare(false);
}

void MainWindow::onTemperatureChanged() {
    // With the temperature inside the model the maps are drawn at T = 1: they change only with
    // the lab's re-run (LabController::onTemperature), which redraws them when it arrives.
    if (!lab_->temperatureInside()) refreshMaps();
    updateCompare(false);
}

MapKey MainWindow::currentKey() const {
    return {controls_->blockCombo()->currentIndex(), controls_->layerSpin()->value(), controls_->headSpin()->value()};
}

void MainWindow::updateTemperatureApplicability() {
    const auto trace = session_->trace();
    const bool compare = tabs_->currentWidget() == compare_;
    const int block = currentKey().block;
    const bool linear = !compare && trace && block >= 0 &&
                        trace->blocks()[std::size_t(block)].kind == attnscope::AttentionKind::Linear;
    controls_->temperature()->setApplicable(
            !linear,
            linear ? tr("Linear attention has no softmax, so the temperature does not change its maps.") : QString());
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
    compare_->setSelection(currentBlockName(), controls_->layerSpin()->value(), controls_->headSpin()->value(),
                           controls_->temperature()->temperature());
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
