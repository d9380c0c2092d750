#include "mainwindow.h"

#include "heatmapview.h"
#include "session.h"
#include "tokenids.h"

#include "attnscope/error.h"

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpressionValidator>
#include <QSpinBox>
#include <QStatusBar>
#include <QVBoxLayout>

#include <algorithm>

namespace {

QString formatCount(std::int64_t n) {
    if (n >= 1'000'000'000) return QString::number(n / 1e9, 'f', 2) + QStringLiteral(" B");
    if (n >= 1'000'000) return QString::number(n / 1e6, 'f', 1) + QStringLiteral(" M");
    if (n >= 10'000) return QString::number(n / 1e3, 'f', 1) + QStringLiteral(" k");
    return QString::number(n);
}

QString tokenCount(std::size_t n) {
    return n == 1 ? QStringLiteral("1 token") : QStringLiteral("%1 tokens").arg(n);
}

QStringList toQStringList(const std::vector<std::string>& labels) {
    QStringList out;
    out.reserve(static_cast<qsizetype>(labels.size()));
    for (const auto& s : labels) out << QString::fromStdString(s);
    return out;
}

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
    setWindowTitle(QStringLiteral("AttnScope"));
    session_ = new Session(this);
    session_->setObjectName(QStringLiteral("session"));
    heatmap_ = new HeatmapView(this);
    heatmap_->setObjectName(QStringLiteral("heatmap"));
    setCentralWidget(heatmap_);
    buildControls();
    buildMenus();

    connect(session_, &Session::modelLoaded, this, &MainWindow::onModelLoaded);
    connect(session_, &Session::traceReady, this, &MainWindow::onTraceReady);
    connect(session_, &Session::busyChanged, this, &MainWindow::onBusyChanged);
    connect(session_, &Session::progress, this, &MainWindow::onProgress);
    connect(session_, &Session::failed, this, [this](const QString& message) {
        const QString headline = pendingFolder_.isEmpty()
                                     ? tr("The model could not run these token ids.")
                                     : tr("Could not open the model folder %1.")
                                           .arg(QDir::toNativeSeparators(pendingFolder_));
        pendingFolder_.clear();
        statusBar()->showMessage(tr("Failed: %1").arg(message), 10000);
        showError(headline, message);
    });
    resize(1100, 760);
    statusBar()->showMessage(tr("Open a model folder to begin (Ctrl+O)."));
}

MainWindow::~MainWindow() = default;  // session_ (a child) cancels and waits for its workers

void MainWindow::buildControls() {
    auto* panel = new QWidget;
    auto* form = new QFormLayout(panel);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);

    modelLabel_ = new QLabel(tr("No model"));
    modelLabel_->setObjectName(QStringLiteral("modelLabel"));
    modelLabel_->setWordWrap(true);
    modelLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    form->addRow(tr("Model:"), modelLabel_);

    idsEdit_ = new QLineEdit;
    idsEdit_->setObjectName(QStringLiteral("idsEdit"));
    idsEdit_->setPlaceholderText(tr("comma- or space-separated token ids"));
    idsEdit_->setToolTip(tr("Token ids, used exactly as given (no special tokens added)."));
    idsEdit_->setValidator(new QRegularExpressionValidator(
        QRegularExpression(QStringLiteral("[0-9,\\s]*")), idsEdit_));
    connect(idsEdit_, &QLineEdit::returnPressed, this, &MainWindow::runInput);
    auto* idsLabel = new QLabel(tr("Token ids:"));
    idsLabel->setBuddy(idsEdit_);
    form->addRow(idsLabel);
    form->addRow(idsEdit_);  // full width, so the placeholder fits

    runButton_ = new QPushButton(tr("Run"));
    runButton_->setObjectName(QStringLiteral("runButton"));
    runButton_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Return));
    runButton_->setToolTip(tr("Run the model on the token ids (Ctrl+Return)"));
    runButton_->setEnabled(false);
    connect(runButton_, &QPushButton::clicked, this, &MainWindow::runInput);
    form->addRow(runButton_);

    blockCombo_ = new QComboBox;
    blockCombo_->setObjectName(QStringLiteral("blockCombo"));
    blockLabel_ = new QLabel(tr("Block:"));
    form->addRow(blockLabel_, blockCombo_);
    blockLabel_->setVisible(false);  // only for models with more than one attention block
    blockCombo_->setVisible(false);

    layerSpin_ = new QSpinBox;
    layerSpin_->setObjectName(QStringLiteral("layerSpin"));
    headSpin_ = new QSpinBox;
    headSpin_->setObjectName(QStringLiteral("headSpin"));
    for (QSpinBox* spin : {layerSpin_, headSpin_}) {
        spin->setRange(0, 0);
        spin->setEnabled(false);
        spin->setKeyboardTracking(false);
        connect(spin, &QSpinBox::valueChanged, this, &MainWindow::renderMap);
    }
    form->addRow(tr("Layer:"), layerSpin_);
    form->addRow(tr("Head:"), headSpin_);
    connect(blockCombo_, &QComboBox::currentIndexChanged, this, [this] {
        if (auto trace = session_->trace()) onTraceReady(trace);
    });

    auto* dock = new QDockWidget(tr("Input"), this);
    dock->setObjectName(QStringLiteral("inputDock"));
    dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
    auto* holder = new QWidget;
    auto* column = new QVBoxLayout(holder);
    column->addWidget(panel);
    column->addStretch(1);
    holder->setMinimumWidth(280);
    dock->setWidget(holder);
    addDockWidget(Qt::LeftDockWidgetArea, dock);

    progressBar_ = new QProgressBar;
    progressBar_->setObjectName(QStringLiteral("progressBar"));
    progressBar_->setMaximumWidth(220);
    progressBar_->setVisible(false);
    cancelButton_ = new QPushButton(tr("Cancel"));
    cancelButton_->setObjectName(QStringLiteral("cancelButton"));
    cancelButton_->setVisible(false);
    connect(cancelButton_, &QPushButton::clicked, this, [this] {
        session_->cancel();
        pendingFolder_.clear();
        statusBar()->showMessage(tr("Cancelled."), 5000);
    });
    statusBar()->addPermanentWidget(progressBar_);
    statusBar()->addPermanentWidget(cancelButton_);
}

void MainWindow::buildMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* open = file->addAction(tr("&Open Model Folder…"), this, &MainWindow::chooseModelFolder);
    open->setShortcut(QKeySequence::Open);
    open->setObjectName(QStringLiteral("openAction"));
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Q));
    quit->setMenuRole(QAction::QuitRole);
}

void MainWindow::chooseModelFolder() {
    const QString start = pendingFolder_.isEmpty() && session_->model()
                              ? QString::fromStdString(session_->model()->info().path.string())
                              : QDir::homePath();
    const QString folder = QFileDialog::getExistingDirectory(
        this, tr("Open Model Folder (config.json + model.safetensors)"), start);
    if (!folder.isEmpty()) openModel(folder);
}

void MainWindow::openModel(const QString& folder) {
    pendingFolder_ = folder;
    statusBar()->showMessage(tr("Opening %1…").arg(QDir::toNativeSeparators(folder)));
    session_->openModel(folder);
}

void MainWindow::onModelLoaded(const attnscope::ModelInfo& info) {
    pendingFolder_.clear();
    const QString folder = QString::fromStdString(info.path.string());
    modelLabel_->setText(tr("<b>%1</b> · %2 layers × %3 heads<br>%4 parameters · %5 · %6")
                             .arg(QString::fromStdString(info.family).toHtmlEscaped())
                             .arg(info.layers)
                             .arg(info.heads)
                             .arg(formatCount(info.parameters))
                             .arg(QString::fromStdString(info.dtype))
                             .arg(QString::fromStdString(info.device)));
    modelLabel_->setToolTip(QDir::toNativeSeparators(folder));
    setWindowTitle(tr("AttnScope — %1 (%2)")
                       .arg(QString::fromStdString(info.family), QFileInfo(folder).fileName()));
    layerSpin_->setEnabled(false);
    headSpin_->setEnabled(false);
    heatmap_->clear(tr("Enter token ids and press Run (Ctrl+Return)."));
    statusBar()->showMessage(tr("Loaded %1 from %2.")
                                 .arg(QString::fromStdString(info.family),
                                      QDir::toNativeSeparators(folder)),
                             5000);
    updateRunEnabled();

    // Put an example on screen: the first ids of the vocabulary, unless the user typed some.
    if (idsEdit_->text().trimmed().isEmpty()) {
        int n = std::min(8, info.vocabSize);
        if (info.maxPositions > 0) n = std::min(n, info.maxPositions);
        std::vector<std::int64_t> ids(static_cast<std::size_t>(std::max(n, 0)));
        for (int i = 0; i < n; ++i) ids[static_cast<std::size_t>(i)] = i;
        idsEdit_->setText(formatTokenIds(ids));
    }
    if (parseTokenIds(idsEdit_->text(), info.vocabSize, info.maxPositions).ok()) runInput();
}

void MainWindow::runInput() {
    const auto model = session_->model();
    if (!model) {
        showError(tr("No model is open."), tr("Open a model folder first (File > Open Model Folder…)."));
        return;
    }
    if (session_->isBusy()) return;
    const auto& info = model->info();
    const TokenIdsParse parsed = parseTokenIds(idsEdit_->text(), info.vocabSize, info.maxPositions);
    if (!parsed.ok()) {
        showError(tr("These token ids cannot be used."), parsed.error);
        return;
    }
    statusBar()->showMessage(tr("Running %1…").arg(tokenCount(parsed.ids.size())));
    session_->run(parsed.ids);
}

void MainWindow::onTraceReady(const std::shared_ptr<const attnscope::Trace>& trace) {
    const auto& blocks = trace->blocks();
    if (blocks.empty()) {
        heatmap_->clear(tr("This model recorded no attention."));
        return;
    }
    {
        const QSignalBlocker blockBlocker(blockCombo_);
        const int keep = blockCombo_->currentIndex();
        const QString keepName = keep >= 0 ? blockCombo_->itemText(keep) : QString();
        blockCombo_->clear();
        for (const auto& b : blocks) blockCombo_->addItem(QString::fromStdString(b.name));
        const int found = blockCombo_->findText(keepName);
        blockCombo_->setCurrentIndex(found >= 0 ? found : 0);
        blockLabel_->setVisible(blocks.size() > 1);
        blockCombo_->setVisible(blocks.size() > 1);
    }
    const auto& block = blocks[static_cast<std::size_t>(blockCombo_->currentIndex())];
    {
        // Keep the chosen layer/head where the new bounds allow; render once below.
        const QSignalBlocker layerBlocker(layerSpin_);
        const QSignalBlocker headBlocker(headSpin_);
        layerSpin_->setRange(0, std::max(0, block.layers - 1));
        headSpin_->setRange(0, std::max(0, block.heads - 1));
        layerSpin_->setEnabled(true);
        headSpin_->setEnabled(true);
    }
    statusBar()->showMessage(tr("Ran %1 on %2.")
                                 .arg(tokenCount(trace->ids().size()),
                                      QString::fromStdString(trace->device())),
                             5000);
    renderMap();
}

// Asks the current trace for the chosen head's map; the model does not run again.
void MainWindow::renderMap() {
    const auto trace = session_->trace();
    if (!trace || blockCombo_->currentIndex() < 0) return;
    const int blockIndex = blockCombo_->currentIndex();
    const auto& block = trace->blocks()[static_cast<std::size_t>(blockIndex)];
    const int layer = layerSpin_->value();
    const int head = headSpin_->value();
    try {
        const attnscope::HeadMap map = trace->map(blockIndex, layer, head);
        QString title = tr("layer %1 · head %2").arg(layer).arg(head);
        if (trace->blocks().size() > 1) title = QString::fromStdString(block.name) + QStringLiteral(" · ") + title;
        heatmap_->setMap(map, toQStringList(block.queryTokens), toQStringList(block.keyTokens), title);
    } catch (const std::exception& e) {
        showError(tr("Could not compute this attention map."), QString::fromStdString(e.what()));
    }
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

void MainWindow::updateRunEnabled() {
    runButton_->setEnabled(session_->model() && !session_->isBusy());
}

void MainWindow::showError(const QString& title, const QString& message) {
    auto* box = new QMessageBox(QMessageBox::Warning, tr("AttnScope"), title, QMessageBox::Ok, this);
    box->setObjectName(QStringLiteral("errorDialog"));
    box->setInformativeText(message);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}
