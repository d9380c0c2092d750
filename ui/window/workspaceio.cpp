// WorkspaceIo (workspaceio.h): workspace files and the window's layout between starts.
#include "window/workspaceio.h"

#include "controllers/causalcontroller.h"
#include "controllers/generatecontroller.h"
#include "controllers/labcontroller.h"
#include "figure/imagefile.h"
#include "panels/controlpanel.h"
#include "panels/devicecombo.h"
#include "panels/generatepanel.h"
#include "panels/imageinput.h"
#include "services/labservice.h"
#include "services/session.h"
#include "state/recentfiles.h"
#include "state/viewstate.h"
#include "views/heatmapview.h"
#include "window/exporter.h"
#include "window/mappresenter.h"
#include "window/modelinputs.h"
#include "window/windowparts.h"

#include "attnscope/runtime/device.h"

#include <QAction>
#include <QCheckBox>
#include <QDir>
#include <QFileDialog>
#include <QLineEdit>
#include <QMainWindow>
#include <QMenu>
#include <QMessageBox>
#include <QSettings>
#include <QSpinBox>
#include <QStatusBar>

#include <algorithm>

class WorkspaceIo::Restore : public QObject {
public:
    Restore(Workspace ws, QObject* parent) : QObject(parent), ws(std::move(ws)) {}
    enum class Stage { Loading, Running, Rerunning, Fitting, Generating, Drawing };
    Workspace ws;
    Stage stage = Stage::Loading;
};

namespace {

const QString kFilter = QStringLiteral("AttnScope workspace (*.attnscope)");

}  // namespace

// The state's serialisation, with the window's geometry and docks.
Workspace WorkspaceIo::currentWorkspace() const {
    Workspace w = p_.state->workspace();
    w.window.geometry = p_.window->saveGeometry();
    w.window.state = p_.window->saveState();
    return w;
}

// Whatever changes what is shown makes the saved workspace out of date.
void WorkspaceIo::bindModified() {
    for (auto signal :
         {&ViewState::modelChanged, &ViewState::inputChanged, &ViewState::selectionChanged,
          &ViewState::temperatureChanged, &ViewState::insideChanged, &ViewState::variantChanged,
          &ViewState::masksChanged, &ViewState::colorsChanged, &ViewState::viewChanged, &ViewState::mapSourceChanged})
        connect(p_.state, signal, this, [this] { modified_ = true; });
}

void WorkspaceIo::setUnmodifiedUnlessOpening() {
    if (!restore_) modified_ = false;
}

QAction* WorkspaceIo::buildActions(QMenu* file) {
    QAction* open = file->addAction(tr("Open &Workspace…"));
    open->setObjectName(QStringLiteral("openWorkspaceAction"));
    open->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    QAction* save = file->addAction(tr("&Save Workspace…"));
    save->setObjectName(QStringLiteral("saveWorkspaceAction"));
    save->setShortcut(QKeySequence::Save);
    save->setToolTip(
            tr("Model, input, selection, temperatures, lab, masks, colours and layout in one .attnscope file"));
    connect(open, &QAction::triggered, this, [this] {
        auto* dialog = new QFileDialog(p_.window, tr("Open Workspace"), recent::lastFolder(QStringLiteral("workspace")),
                                       kFilter);
        dialog->setObjectName(QStringLiteral("openWorkspaceDialog"));
        dialog->setFileMode(QFileDialog::ExistingFile);
        dialog->setAttribute(Qt::WA_DeleteOnClose);
        connect(dialog, &QFileDialog::fileSelected, this, &WorkspaceIo::openWorkspaceFile);
        dialog->open();
    });
    connect(save, &QAction::triggered, this, [this] { chooseWorkspaceFile(false); });
    return save;
}

// The save dialog ("saveWorkspaceDialog"); then, with closeAfter, the window closes once saved.
void WorkspaceIo::chooseWorkspaceFile(bool closeAfter) {
    auto* dialog =
            new QFileDialog(p_.window, tr("Save Workspace"), recent::lastFolder(QStringLiteral("workspace")), kFilter);
    dialog->setObjectName(QStringLiteral("saveWorkspaceDialog"));
    dialog->setAcceptMode(QFileDialog::AcceptSave);
    dialog->setDefaultSuffix(QStringLiteral("attnscope"));
    dialog->selectFile(p_.exporter->suggestedFileName() + QStringLiteral(".attnscope"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QFileDialog::fileSelected, this, [this, closeAfter](const QString& path) {
        if (!saveWorkspaceFile(path)) return;
        p_.statusBar->showMessage(tr("Saved the workspace %1").arg(QDir::toNativeSeparators(path)), 8000);
        if (closeAfter) p_.window->close();
    });
    dialog->open();
}

WorkspaceIo::WorkspaceIo(WindowParts& parts, QObject* parent) : QObject(parent), p_(parts) {
    bindModified();
    // The chain's steps (see the top); each checks that a workspace is being opened and is at its stage.
    // After the generation (or without one): the variant, the tab and the views; then the final map.
    const auto afterGeneration = [this] {
        if (!restore_ || restore_->stage != Restore::Stage::Generating) return;
        const Workspace& ws = restore_->ws;
        restore_->stage = Restore::Stage::Drawing;
        // The Model, Image and Views sections: their controllers follow the state.
        ViewState* state = p_.state;
        state->setTokenSelection(
                ws.views.selectedSide == QLatin1String("query") ? ViewState::TokenSelection{0, ws.views.selectedIndex}
                : ws.views.selectedSide == QLatin1String("key") ? ViewState::TokenSelection{1, ws.views.selectedIndex}
                                                                : ViewState::TokenSelection{});
        state->setTabSetting(&ViewState::TabSettings::modelView, ws.modelView);
        state->setTabSetting(&ViewState::TabSettings::image, ws.image);
        state->setTabSetting(&ViewState::TabSettings::views, ws.views);
        Workspace::View view = state->view();
        view.metricsView = ws.view.metricsView;
        view.compareTask = ws.view.compareTask;  // empty: the built-in reverse task
        state->setView(view);
        if (state->variant() != ws.lab.variant)
            state->setVariant(ws.lab.variant);  // the lab follows, and asks for the map
        else
            p_.presenter->requestDetail();
        state->setTabSetting(&ViewState::TabSettings::causal, ws.causal);            // the Causal tab follows
        state->setTabSetting(&ViewState::TabSettings::longContext, ws.longContext);  // and the Long context tab
        state->setTab(ws.view.tab);
    };
    // After the fit (or without one): the saved generation is replayed (GenerateOptions::forced).
    const auto afterFit = [this, afterGeneration] {
        if (!restore_ || restore_->stage != Restore::Stage::Fitting) return;
        const Workspace::GenerationState& g = restore_->ws.generation;
        restore_->stage = Restore::Stage::Generating;
        // The Generate dock's settings: its panel follows the state (window/docks.cpp).
        Workspace::GenerationState settings = g;
        settings.prompt.clear();
        settings.generated.clear();
        settings.step = 0;
        p_.state->setTabSetting(&ViewState::TabSettings::generation, settings);
        if (g.generated.empty()) return afterGeneration();
        attnscope::GenerateOptions o;
        o.sampling = g.sampling;
        p_.generate->replay(g.prompt, g.generated, o, g.step);
        p_.generate->panel()->tokensSpin()->setValue(g.tokens);  // as saved (replay set it to the ids' count)
    };
    connect(p_.generate, &GenerateController::finished, this, afterGeneration);
    connect(p_.generate, &GenerateController::failed, this, [this] {
        if (!restore_ || restore_->stage != Restore::Stage::Generating) return;
        restore_->deleteLater();  // the error dialog says why
        restore_ = nullptr;
    });
    // After the re-run (or without one): the additive fit, made again on the shown trace.
    const auto afterRerun = [this, afterFit] {
        if (!restore_ || restore_->stage != Restore::Stage::Rerunning) return;
        const Workspace& ws = restore_->ws;
        restore_->stage = Restore::Stage::Fitting;
        if (!ws.lab.fit) return afterFit();
        int block = -1;
        for (int i = 0; i < int(p_.state->blocks().size()); ++i)
            if (p_.state->blocks()[std::size_t(i)].name == ws.lab.fit->block) block = i;
        attnscope::AdditiveFitOptions o;
        o.width = ws.lab.fitWidth;
        o.steps = ws.lab.fitSteps;
        o.temperature = ws.lab.fit->temperature;
        p_.lab->fitAdditive({std::max(0, block), ws.lab.fit->layer, ws.lab.fit->head}, o);
    };
    connect(p_.session, &Session::failed, this, [this] {
        if (!restore_) return;  // the error dialog says why
        restore_->deleteLater();
        restore_ = nullptr;
    });
    connect(p_.session, &Session::traceReady, this, [this, afterRerun] {
        if (!restore_ || restore_->stage != Restore::Stage::Running) return;
        const Workspace& ws = restore_->ws;
        // Selection and colours first: the lab's re-run and fit are for the shown head.
        p_.state->selectByName(ws.selection.block.isEmpty() ? p_.state->blockName() : ws.selection.block,
                               ws.selection.layer, ws.selection.head);
        // The colours, labels, pooling, temperature and the lab's settings: the widgets follow the state.
        p_.state->setColormap(ws.colormap);
        p_.state->setScale(ws.scale);
        Workspace::View view = p_.state->view();
        view.rawTokens = ws.view.rawTokens;
        view.pooling = ws.view.pooling;
        p_.state->setView(view);
        p_.state->setTemperature(ws.temperature);
        Workspace::Lab lab = ws.lab;
        lab.variant = p_.state->variant();                    // set once the fit is made (the last step)
        lab.fit.reset();                                      // made again below
        lab.knockout = p_.state->tabSettings().lab.knockout;  // applied below
        p_.state->setTabSetting(&ViewState::TabSettings::lab, lab);
        QStringList layers;
        for (int l : ws.inside.layers) layers << QString::number(l);
        p_.lab->layersEdit()->setText(layers.join(QLatin1Char(',')));
        emit p_.lab->layersEdit()->editingFinished();  // parses them into the intervention
        restore_->stage = Restore::Stage::Rerunning;
        const bool rerun = ws.inside.enabled || !ws.masked.empty() || !ws.lab.knockout.isEmpty();
        {
            const QSignalBlocker quiet(p_.lab->propagateCheck());  // one re-run, by setMaskedHeads
            p_.lab->propagateCheck()->setChecked(ws.inside.enabled);
        }
        emit p_.lab->temperatureInsideChanged(ws.inside.enabled);
        p_.lab->setKnockoutSpec(ws.lab.knockout, /*apply=*/false);  // checked when the file was read
        p_.lab->setMaskedHeads(ws.masked);
        if (!rerun) afterRerun();
    });
    connect(p_.lab, &LabController::shownTraceChanged, this, afterRerun);
    connect(p_.lab->service(), &LabService::fitReady, this, afterFit);
    connect(p_.heatmap, &HeatmapView::mapShown, this, [this] {
        if (!restore_ || restore_->stage != Restore::Stage::Drawing) return;
        const Workspace ws = restore_->ws;
        restore_->deleteLater();
        restore_ = nullptr;
        if (ws.view.zoom && p_.heatmap->map().rows > 0) {
            MapZoom z = MapZoom::whole(p_.heatmap->map().rows, p_.heatmap->map().cols);
            z.keyLower = ws.view.zoom->keyLower;
            z.keyUpper = ws.view.zoom->keyUpper;
            z.queryLower = ws.view.zoom->queryLower;
            z.queryUpper = ws.view.zoom->queryUpper;
            p_.heatmap->setZoom(z);
        }
        p_.statusBar->showMessage(tr("Opened the workspace."), 5000);
        modified_ = false;  // what is shown is the file's
        emit restored();
    });
}

bool WorkspaceIo::saveWorkspaceFile(const QString& path) {
    if (!p_.session->model()) {
        p_.showError(tr("There is no workspace to save."), tr("Open a model and run an input first."));
        return false;
    }
    try {
        writeWorkspace(currentWorkspace(), path);
        recent::addWorkspace(path);
        recent::rememberFolder(QStringLiteral("workspace"), path);
        modified_ = false;
        return true;
    } catch (const std::exception& e) {
        p_.showError(tr("Could not save the workspace."), QString::fromUtf8(e.what()));
        return false;
    }
}

bool WorkspaceIo::openWorkspaceFile(const QString& path) {
    Workspace ws;
    try {
        ws = readWorkspace(path);
    } catch (const std::exception& e) {
        p_.showError(tr("Could not open the workspace."), QString::fromUtf8(e.what()));
        return false;
    }
    recent::addWorkspace(path);
    recent::rememberFolder(QStringLiteral("workspace"), path);
    p_.state->setTabSetting(&ViewState::TabSettings::figure, ws.figure);  // File > Export starts from it
    if (restore_) restore_->deleteLater();
    restore_ = new Restore(ws, this);
    if (!ws.window.geometry.isEmpty()) p_.window->restoreGeometry(ws.window.geometry);
    if (!ws.window.state.isEmpty()) p_.window->restoreState(ws.window.state);
    p_.statusBar->showMessage(tr("Opening the workspace %1…").arg(QDir::toNativeSeparators(path)));
    if (!ws.input.image.isEmpty()) {
        p_.inputs->setImage(QString(), nullptr);  // read below; runs only once the model is open
        QString error;
        const QImage image = readImageFile(ws.input.image, &error);
        if (image.isNull()) {
            restore_->deleteLater();
            restore_ = nullptr;
            p_.showError(tr("Could not open the workspace's image."), error);
            return false;
        }
        p_.inputs->setImage(ws.input.image, std::make_shared<const attnscope::RgbImage>(toRgbImage(image)));
        p_.controls->imageInput()->setImage(ws.input.image, image);
    }
    const auto device = attnscope::parseDeviceChoice(ws.device.toStdString());
    const bool sameModel =
            p_.session->model() && p_.session->modelSpec() == ws.model && p_.controls->device()->choice() == device;
    {
        const QSignalBlocker quiet(p_.controls->device());  // the model opens on it below
        p_.controls->device()->setChoice(device);
    }
    p_.state->setDevice(ws.device);
    if (sameModel) {
        p_.session->cancel();
        applyWorkspaceInput();
        p_.inputs->runInput();
    } else {
        p_.inputs->openModel(ws.model);  // onModelLoaded asks applyWorkspaceInput(), then runs
    }
    return true;
}

bool WorkspaceIo::applyWorkspaceInput() {
    if (!restore_ || restore_->stage != Restore::Stage::Loading) return false;
    const Workspace& ws = restore_->ws;
    if (p_.controls->idsCheck()->isEnabled()) p_.controls->idsCheck()->setChecked(ws.input.idsMode);
    p_.controls->input()->setText(ws.input.text);
    p_.controls->targetInput()->setText(ws.input.target);
    // The map source before the run, so that it records what the source needs (the values); a
    // source the model cannot show goes back to the weights once its availability is known.
    p_.state->setMapSource(ws.source.source);
    p_.state->setGradientTarget(ws.source.target);
    restore_->stage = Restore::Stage::Running;
    return true;
}

void WorkspaceIo::restoreWindowLayout() {
    QSettings settings;
    p_.window->restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    p_.window->restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
}

bool WorkspaceIo::mayClose() {
    // What is shown changed since it was saved: ask first (window-modal, so the event loop and
    // the workers go on), and close again once answered.
    if (modified_ && p_.session->model() && !closeConfirmed_) {
        askToSaveThenClose();
        return false;
    }
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), p_.window->saveGeometry());
    settings.setValue(QStringLiteral("window/state"), p_.window->saveState());
    return true;
}

void WorkspaceIo::askToSaveThenClose() {
    if (p_.window->findChild<QMessageBox*>(QStringLiteral("unsavedWorkspaceDialog"))) return;
    auto* box = new QMessageBox(QMessageBox::Question, tr("AttnScope"), tr("Save the workspace before quitting?"),
                                QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, p_.window);
    box->setObjectName(QStringLiteral("unsavedWorkspaceDialog"));
    box->setInformativeText(tr("The model, input, selection, lab and views shown now are not saved in a workspace."));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setWindowModality(Qt::WindowModal);
    connect(box, &QMessageBox::finished, this, [this, box](int) {
        const QMessageBox::StandardButton answer = box->standardButton(box->clickedButton());
        if (answer == QMessageBox::Discard) {
            closeConfirmed_ = true;
            p_.window->close();
        } else if (answer == QMessageBox::Save) {
            chooseWorkspaceFile(true);
        }
    });
    box->open();
}
