// WindowMenus (windowmenus.h): the menus and the keys on the maps.
#include "window/windowmenus.h"

#include "controllers/viewscontroller.h"
#include "panels/modelpicker.h"
#include "services/session.h"
#include "state/recentfiles.h"
#include "state/viewstate.h"
#include "window/attentionfiles.h"
#include "window/exporter.h"
#include "window/mainwindow.h"
#include "window/modelbrowsing.h"
#include "window/modelinputs.h"
#include "window/shortcutsdialog.h"
#include "window/windowparts.h"
#include "window/workspaceio.h"

#include <QAction>
#include <QActionGroup>
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QKeySequence>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QShortcut>
#include <QTabWidget>

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

WindowMenus::WindowMenus(WindowParts& parts, QObject* parent) : QObject(parent), p_(parts) {
    fileMenu_ = p_.window->menuBar()->addMenu(tr("&File"));
    fileMenu_->setObjectName(QStringLiteral("fileMenu"));
    QMenu* file = fileMenu_;
    QAction* open = file->addAction(tr("&Open Model Folder…"), p_.inputs, &ModelInputs::chooseModelFolder);
    open->setShortcut(QKeySequence::Open);
    open->setObjectName(QStringLiteral("openAction"));
    auto* window = qobject_cast<MainWindow*>(p_.window);  // the browser opens through the window's openModel
    QAction* browse = file->addAction(tr("Open &Model…"), this, [window] { browseModels(*window); });
    browse->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_M));
    browse->setObjectName(QStringLiteral("browseModelsAction"));
    browse->setToolTip(
            tr("The models on this machine: recent, the Hugging Face cache, LM Studio, Ollama, your folders"));
    QAction* compareModels =
            file->addAction(tr("Compare with Another &Model…"), this, [window] { compareWithModel(*window); });
    compareModels->setObjectName(QStringLiteral("compareModelsAction"));
    compareModels->setToolTip(tr("Run another model (a GGUF copy, say) on the same input and compare every head"));
    file->addAction(p_.attentionFiles->makeAction());
    file->addAction(p_.inputs->openImageAction());
    recentMenu_ = file->addMenu(tr("Open &Recent"));
    recentMenu_->setObjectName(QStringLiteral("recentMenu"));
    connect(recentMenu_, &QMenu::aboutToShow, this, &WindowMenus::updateRecentMenu);
    updateRecentMenu();
    QAction* save = p_.workspace->buildActions(file);
    file->addSeparator();
    QAction* fig = file->addAction(tr("&Export Figure…"), p_.exporter, &Exporter::exportFigure);
    fig->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    fig->setObjectName(QStringLiteral("exportFigureAction"));
    // The view shown in the Views dock as a paper figure.
    QAction* exportView = file->addAction(tr("Export &View\u2026"), p_.views, [this] {
        p_.viewsDock->show();
        p_.viewsDock->raise();
        p_.views->exportShownView();
    });
    exportView->setObjectName(QStringLiteral("exportViewAction"));
    exportView->setToolTip(
            tr("The line, neuron or query\u2013key view shown in the Views dock, at a venue's column width"));
    QAction* data = file->addAction(tr("Export Map &Data (.npy, .csv)…"), p_.exporter, &Exporter::exportMapData);
    data->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E));
    data->setObjectName(QStringLiteral("exportDataAction"));
    file->addSeparator();
    buildCaptureMenu(file);
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), p_.window, &QWidget::close);
    quit->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Q));
    quit->setMenuRole(QAction::QuitRole);

    viewMenu_ = p_.window->menuBar()->addMenu(tr("&View"));
    viewMenu_->setObjectName(QStringLiteral("viewMenu"));
    viewMenu_->addAction(p_.rawTokensAction);
    viewMenu_->addSeparator();
    const struct {
        QDockWidget* dock;
        const char* text;
        const char* name;
        QKeySequence keys;
    } docks[] = {
            {p_.controlsDock, QT_TR_NOOP("&Controls Panel"), "controlsPanelAction", QKeySequence(Qt::CTRL | Qt::Key_K)},
            {p_.labDock, QT_TR_NOOP("&Lab Panel"), "labPanelAction", QKeySequence(Qt::CTRL | Qt::Key_L)},
            {p_.viewsDock, QT_TR_NOOP("&Views (Lines, Neuron, Query\u2013Key)"), "viewsPanelAction",
             QKeySequence(Qt::CTRL | Qt::Key_B)},
            {p_.generateDock, QT_TR_NOOP("&Generate Panel"), "generatePanelAction", QKeySequence(Qt::CTRL | Qt::Key_G)},
    };
    for (const auto& d : docks) {
        QAction* toggle = d.dock->toggleViewAction();
        toggle->setText(tr(d.text));
        toggle->setShortcut(d.keys);
        toggle->setObjectName(QString::fromLatin1(d.name));
        viewMenu_->addAction(toggle);
    }

    QMenu* help = p_.window->menuBar()->addMenu(tr("&Help"));
    help->setObjectName(QStringLiteral("helpMenu"));
    QAction* keys = help->addAction(tr("&Keyboard Shortcuts"), this, &WindowMenus::showShortcuts);
    keys->setObjectName(QStringLiteral("shortcutsAction"));
    keys->setShortcut(QKeySequence(Qt::Key_F1));
    const std::vector<std::pair<QAction*, QString>> tips = {
            {fig, fig->toolTip()}, {data, data->toolTip()}, {save, save->toolTip()}};
    addShortcutsToTooltips(p_.window);
    buildShortcuts();
    gateFileActions(tips);
}

// Export Figure, Export Map Data and Save Workspace need a map (or a model): disabled until
// there is one, their tooltip (shown in the menu) saying why, then their own again.
void WindowMenus::gateFileActions(const std::vector<std::pair<QAction*, QString>>& tips) {
    fileMenu_->setToolTipsVisible(true);
    const auto update = [this, tips] {
        const bool map = p_.session->trace() != nullptr, model = p_.session->model() != nullptr;
        for (const auto& [action, tip] : tips) {
            const bool needsModel = action->objectName() == QLatin1String("saveWorkspaceAction");
            const bool on = needsModel ? model : map;
            const QString why = needsModel ? tr("Open a model first: there is no workspace to save.")
                                           : tr("Run an input first: there is no map to export yet.");
            const QString keys = action->shortcut().toString(QKeySequence::NativeText);
            action->setEnabled(on);
            action->setToolTip(QStringLiteral("%1 (%2)").arg(on ? tip : why, keys));
        }
    };
    connect(p_.session, &Session::modelLoaded, this, update);
    connect(p_.session, &Session::attentionFileLoaded, this, update);
    connect(p_.session, &Session::traceReady, this, update);
    connect(p_.session, &Session::failed, this, update);
    update();
}

QString WindowMenus::shortcutsText() const {
    QStringList lines;
    for (const auto& [keys, what] : collectShortcuts(p_.window, mapKeys())) lines << keys + QLatin1Char('\t') + what;
    return lines.join(QLatin1Char('\n'));
}

void WindowMenus::showShortcuts() {
    auto* dialog = p_.window->findChild<ShortcutsDialog*>(QStringLiteral("shortcutsDialog"));
    if (!dialog) {
        dialog = new ShortcutsDialog(collectShortcuts(p_.window, mapKeys()), p_.window);
        dialog->setAttribute(Qt::WA_DeleteOnClose);
    }
    dialog->show();
    dialog->raise();
}

void WindowMenus::updateRecentMenu() {
    recentMenu_->clear();
    const QStringList models = ModelPicker::recentFolders(), workspaces = recent::workspaces();
    for (const QString& m : models)
        recentMenu_->addAction(QDir::toNativeSeparators(m), this, [this, m] { p_.inputs->openModel(m); });
    if (!models.isEmpty() && !workspaces.isEmpty()) recentMenu_->addSeparator();
    for (const QString& w : workspaces)
        recentMenu_
                ->addAction(tr("Workspace %1").arg(QFileInfo(w).fileName()), this,
                            [this, w] { p_.workspace->openWorkspaceFile(w); })
                ->setToolTip(QDir::toNativeSeparators(w));
    recentMenu_->setEnabled(!models.isEmpty() || !workspaces.isEmpty());
}

// Arrows on the maps (overview, heat map, comparison): left/right = head, up/down = layer.
void WindowMenus::buildShortcuts() {
    const struct {
        Qt::Key key;
        int dLayer, dHead;
    } moves[] = {{Qt::Key_Left, 0, -1}, {Qt::Key_Right, 0, 1}, {Qt::Key_Up, -1, 0}, {Qt::Key_Down, 1, 0}};
    for (const auto& m : moves) {
        auto* s = new QShortcut(QKeySequence(m.key), p_.tabs);
        s->setContext(Qt::WidgetWithChildrenShortcut);
        connect(s, &QShortcut::activated, this, [this, m] {
            if (!p_.state->blocks().empty()) p_.state->moveSelection(m.dLayer, m.dHead);
        });
    }
}

// File > Capture Q/K In: how the next forwards keep the recorded Q and K (Session::setCaptureDtype,
// RunOptions::captureDtype). Half precision halves the capture, which is most of a long input's
// memory; the maps are still computed in float32, within ~1e-3 (float16) or ~1e-2 (bfloat16).
void WindowMenus::buildCaptureMenu(QMenu* file) {
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
        a->setChecked(p_.session->captureDtype() == c.dtype);
        group->addAction(a);
        // Applies from the next run; the shown trace keeps the capture it was made with.
        connect(a, &QAction::triggered, this, [this, dtype = c.dtype] { p_.session->setCaptureDtype(dtype); });
    }
}
