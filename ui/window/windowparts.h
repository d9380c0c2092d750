// WindowParts: what the main window is made of, in one plain struct that MainWindow owns and the
// small classes it composes (window/*.h) share. The state and the services come first; the
// widgets and controllers are filled in by DockBuilder (window/docks.h); the last group are the
// composed classes themselves, so that one can ask another (the workspace opening asks the
// inputs to run, the exporter asks the map presenter what it drew). Pointers only: Qt's
// parent-child ownership holds the objects.
#pragma once

#include <QString>

#include <functional>

class CausalController;
class LongController;
class ComparePanel;
class ControlPanel;
class CorpusController;
class CorpusPanel;
class GenerateController;
class HeatmapView;
class RouterStripView;
class ImageController;
class LabController;
class MapService;
class ModelViewController;
class OverviewGrid;
class Session;
class SourceController;
class ViewState;
class ViewsController;
class QAction;
class QDockWidget;
class QLabel;
class QMainWindow;
class QProgressBar;
class QPushButton;
class QStatusBar;
class QTabWidget;

class AttentionFiles;
class Exporter;
class MapPresenter;
class ModelInputs;
class WindowMenus;
class WorkspaceIo;

struct WindowParts {
    QMainWindow* window = nullptr;  // parents the dialogs and docks
    QStatusBar* statusBar = nullptr;
    // Shows an error in the window's non-modal dialog ("errorDialog").
    std::function<void(const QString& title, const QString& message)> showError;

    // What is shown, and the services that compute it.
    ViewState* state = nullptr;
    Session* session = nullptr;
    MapService* maps = nullptr;

    // The central tabs, the Controls dock and the status bar's job widgets.
    QTabWidget* tabs = nullptr;
    OverviewGrid* overview = nullptr;
    HeatmapView* heatmap = nullptr;
    RouterStripView* router = nullptr;  // MoE decoders: the routers under the map
    ComparePanel* compare = nullptr;
    CorpusPanel* corpus = nullptr;
    ControlPanel* controls = nullptr;
    QProgressBar* progressBar = nullptr;
    QPushButton* cancelButton = nullptr;
    QLabel* sourceTabNote = nullptr;     // beside the tabs: why a tab cannot show the source
    QAction* rawTokensAction = nullptr;  // View > Raw Tokens
    QDockWidget* controlsDock = nullptr;
    QDockWidget* labDock = nullptr;
    QDockWidget* viewsDock = nullptr;
    QDockWidget* generateDock = nullptr;

    // The controllers (controllers/): each gets the state and the services.
    LabController* lab = nullptr;
    ImageController* imageView = nullptr;
    ModelViewController* modelView = nullptr;
    GenerateController* generate = nullptr;
    ViewsController* views = nullptr;
    SourceController* sources = nullptr;
    CausalController* causal = nullptr;
    LongController* longContext = nullptr;  // the Long context tab
    CorpusController* corpusTab = nullptr;  // the Corpus tab's runs (its panel: corpus)

    // The window's own parts.
    MapPresenter* presenter = nullptr;  // the central maps (window/mappresenter.h)
    ModelInputs* inputs = nullptr;      // models, inputs and runs (window/modelinputs.h)
    AttentionFiles* attentionFiles = nullptr;
    Exporter* exporter = nullptr;
    WorkspaceIo* workspace = nullptr;
    WindowMenus* menus = nullptr;
};
