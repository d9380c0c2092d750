// MainWindow: opens a model (a built-in one or a folder), runs an input through it and shows
// every head of the chosen block as an overview grid next to one head's heat map, or the three
// attention kinds of a built-in task side by side (Compare tab).
//
// All heavy work runs on workers: loading and running through Session, maps through MapService
// (Trace::map), comparison runs through ComparePanel's CompareSession. Moving the temperature,
// layer or head only asks the current Trace for other maps; the model does not run again.
// Errors show in a non-modal QMessageBox named "errorDialog" and leave the window usable.
// What is shown lives in one ViewState (state/viewstate.h): the window's widgets request changes
// to it and follow its signals, and the controllers (controllers/) get the state and the services,
// never the window. The window places their widgets in docks and tabs and builds the menus in one
// place (buildMenus).
#pragma once

#include "figure/colormaps.h"
#include "services/mapservice.h"

#include <QMainWindow>

#include <memory>

namespace attnscope {
struct BlockInfo;
struct ModelInfo;
struct RgbImage;
class Trace;
}  // namespace attnscope

class ComparePanel;
class ControlPanel;
class CausalController;
class CorpusPanel;
class ExportDialog;
class GenerateController;
class HeatmapView;
class RouterStripView;
class ImageController;
class LabController;
class ModelViewController;
class SourceController;
class ViewsController;
class ViewState;
class OverviewGrid;
class Session;
class QAction;
class QDockWidget;
class QLabel;
class QMenu;
class QProgressBar;
class QPushButton;
class QTabWidget;
struct Figure;
struct Workspace;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    ViewState* state() const { return state_; }  // what the window shows
    Session* session() const { return session_; }
    MapService* maps() const { return maps_; }
    HeatmapView* heatmap() const { return heatmap_; }
    OverviewGrid* overview() const { return overview_; }
    ComparePanel* compare() const { return compare_; }
    ControlPanel* controls() const { return controls_; }
    QTabWidget* tabs() const { return tabs_; }
    LabController* lab() const { return lab_; }
    // The Image tab (attention over the image) and the Model tab (mainwindow_image.cpp).
    ImageController* imageView() const { return imageView_; }
    ModelViewController* modelView() const { return modelView_; }
    GenerateController* generation() const { return generate_; }
    ViewsController* views() const { return views_; }       // the line, neuron and query-key views
    SourceController* sources() const { return sources_; }  // the Show selector (map sources)
    // The Corpus tab (mainwindow_corpus.cpp); openCorpusResult shows a result folder in it.
    CorpusPanel* corpus() const { return corpus_; }
    CausalController* causal() const { return causal_; }  // the Causal tab (causalcontroller.h)
    bool openCorpusResult(const QString& dir);
    // The window's View menu.
    QMenu* viewMenu() const { return viewMenu_; }
    // Help > Keyboard Shortcuts: every action's and key's shortcut, in a non-modal dialog
    // ("shortcutsDialog"); the text it lists (tests).
    void showShortcuts();
    QString shortcutsText() const;

    // Loads a model folder or builtin:NAME in the background, then runs the input (an example
    // when the box holds none for this model); errors show in the error dialog.
    void openModel(const QString& spec);
    // Runs what the input box holds.
    void runInput();
    // Moves the selection by (layers, heads), clamped; what the arrow keys do.
    void moveSelection(int dLayer, int dHead);
    // File > Export figure… (non-modal dialog "exportDialog") and File > Export map data….
    void exportFigure();
    void exportMapData();
    // Asks for the shown head's map and the overview again (the lab changed what they show).
    void refreshMaps();
    // Asks for the shown head's map alone (the lab changed how it is drawn, not the overview).
    void requestDetail();
    // The figure of the current tab (Explore: the shown head; Compare: the three kinds).
    Figure currentFigure() const;
    // Writes the shown head's map (.npy or .csv); errors go to the error dialog.
    bool writeCurrentMapData(const QString& path);

    // Image models (mainwindow_inputs.cpp): File > Open Image… (non-modal dialog "openImageDialog"),
    // or a file given here or dropped on the window: decoded with QImage, then run when the
    // current model takes images. Unreadable files show in the error dialog; returns success.
    void openImage();
    bool setImageFile(const QString& path);
    QString imageFile() const { return imagePath_; }
    // Attention files (mainwindow_npy.cpp): File > Open Attention File… (non-modal dialog
    // "openAttentionDialog": the .npy and optionally its tokens JSON), or a .npy given here (its
    // tokens: the JSON given, else tokensBeside). The maps replace the model; errors go to the
    // error dialog.
    void openAttentionFileDialog();
    void openAttentionFile(const QString& npy, const QString& tokens = QString());
    std::shared_ptr<const attnscope::RgbImage> image() const { return image_; }
    // View > Raw Tokens: the axes show the raw vocabulary strings instead of the readable forms.
    QAction* rawTokensAction() const { return rawTokensAction_; }

    // An example input for a model: text for the built-in tasks, else the first token ids.
    // A block's row (queries) or column labels, readable or raw (View > Raw Tokens).
    QStringList axisLabels(const attnscope::Trace& trace, const attnscope::BlockInfo& block, bool queries,
                           bool raw) const;

    static QString exampleInput(const QString& spec, bool hasTokenizer, int vocabSize, int maxPositions);

    // The shown head (the state's block index, layer, head) and its block's name ("self" while none).
    MapKey currentKey() const;
    QString currentBlockName() const;
    // Shows block/layer/head (a block name the trace does not have keeps the block).
    void selectHead(const QString& block, int layer, int head);
    bool metricsShown() const;
    void showExplore();

    // Workspaces (mainwindow_workspace.cpp): File > Save Workspace… / Open Workspace… (dialogs
    // "saveWorkspaceDialog", "openWorkspaceDialog"). Opening loads the model if it is another,
    // runs the input, then applies the selection, temperatures, lab, masks, fit, colours and
    // view; workspaceRestored() follows once the view is the saved one. Errors go to the error
    // dialog (false). The window's layout and size are kept between starts (QSettings).
    Workspace currentWorkspace() const;
    bool saveWorkspaceFile(const QString& path);
    bool openWorkspaceFile(const QString& path);
    void restoreWindowLayout();  // from QSettings; the app calls it once before show()
    // True when what is shown changed since the workspace was last saved or opened (closing
    // then asks whether to save it: a window-modal "unsavedWorkspaceDialog").
    bool workspaceModified() const { return modified_; }
    // File > Open Recent: the recent model folders and workspaces (state/recentfiles.h).
    QMenu* recentMenu() const { return recentMenu_; }

signals:
    void workspaceRestored();

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void buildMenus();
    void buildShortcuts();
    void bindState();
    void connectSession();
    bool inputFits(const QString& text, bool ids) const;  // the open model's tokenizer takes it
    void onSelectionChanged();
    void syncSelectionWidgets();
    void syncTab();
    QString tabName() const;
    QDockWidget* addPanelDock(QWidget* content, const QString& title, const QString& name, bool scroll);
    void updateRecentMenu();
    void askToSaveThenClose();
    void chooseWorkspaceFile(bool closeAfter);
    void buildFamilyInputs();
    // Encoder-decoders: the export dialog also offers the alignment figures (mainwindow_alignment.cpp).
    void offerAlignmentFigures(ExportDialog& dialog) const;
    // The shown layer's heads as a grid and every layer as PDF pages (mainwindow_workspace.cpp).
    void offerBatchFigures(ExportDialog& dialog) const;
    void buildLab();
    void buildCaptureMenu(QMenu* file);
    void buildAttentionFile();
    void onAttentionFileLoaded(const QString& npy);
    void setMapsOnly(const QString& mapsFile);  // empty: a model is open
    void buildImageViews();
    void buildWorkspace();
    QAction* makeOpenImageAction();
    QAction* makeAttentionFileAction();
    void buildWorkspaceActions(QMenu* file);
    // While a workspace opens: puts its input in the boxes when the model has loaded (true), so
    // onModelLoaded keeps it rather than an example.
    bool applyWorkspaceInput();
    void currentViewSections(Workspace& w) const;   // the Model, Image, Views and generation state
    void applyWorkspaceViews(const Workspace& ws);  // ... set back (not the generation: replayed)
    void buildGenerate();
    void buildViews();
    void buildSources();  // mainwindow_maps.cpp
    // The trace a source's maps are drawn from: the session's for the gradient sources (their
    // maps hold the interventions), else the lab's shown one (its re-run when there is one).
    std::shared_ptr<const attnscope::Trace> sourceTrace(const ShownSource& source) const;
    void requestSourceDetail(const ShownSource& source);
    void applyDetailColors();  // the heat map's colours for the source it shows
    // Beside the tabs, while a map source is shown on a tab that draws the weights only
    // (Compare, Metrics, Model view): that it does, and why ("sourceTabNote").
    void updateSourceTabNote();
    void buildCorpus();
    void buildCausal();
    bool runImageInput();
    void updateHeadGroup();
    void chooseModelFolder();
    void onModelLoaded(const attnscope::ModelInfo& info);
    void onTraceReady(const std::shared_ptr<const attnscope::Trace>& trace);
    void onDetail(const DetailResult& result);
    void showDetail(const DetailResult& result);
    bool refuseWhileMapPending();  // true (and a dialog) while the heat map waits for its values
    void onRawTokensToggled();
    void onThumbnails(const ThumbnailResult& result);
    void onBusyChanged(bool busy);
    void onProgress(int permille);
    void onBlockChanged();
    void onTemperatureChanged();
    void requestThumbnails();
    void updateCompare(bool runIfNeeded);
    void updateTemperatureApplicability();
    void updateRunEnabled();
    void showError(const QString& title, const QString& message);
    QString modelName() const;
    QString suggestedFileName() const;

    ViewState* state_ = nullptr;
    Session* session_ = nullptr;
    MapService* maps_ = nullptr;
    ControlPanel* controls_ = nullptr;
    QTabWidget* tabs_ = nullptr;
    OverviewGrid* overview_ = nullptr;
    HeatmapView* heatmap_ = nullptr;
    RouterStripView* router_ = nullptr;  // MoE decoders: the routers under the map
    ComparePanel* compare_ = nullptr;
    QProgressBar* progressBar_ = nullptr;
    QPushButton* cancelButton_ = nullptr;
    LabController* lab_ = nullptr;  // the attention lab (labcontroller.h)
    ImageController* imageView_ = nullptr;
    ModelViewController* modelView_ = nullptr;
    GenerateController* generate_ = nullptr;  // generation and its steps (generatecontroller.h)
    ViewsController* views_ = nullptr;        // line, neuron, query-key views (viewscontroller.h)
    SourceController* sources_ = nullptr;     // the Show selector (sourcecontroller.h)
    QLabel* sourceTabNote_ = nullptr;
    CorpusPanel* corpus_ = nullptr;
    CausalController* causal_ = nullptr;
    QString pendingSpec_;   // the model being opened, for messages
    QString exampleShown_;  // the example the input box was given (replaced on a model change)
    QString compareTask_ = QStringLiteral("reverse");   // the task the Compare tab runs
    QString imagePath_;                                 // the image file image models run on
    std::shared_ptr<const attnscope::RgbImage> image_;  // its pixels; null before the first image
    QAction* rawTokensAction_ = nullptr;
    QMenu* fileMenu_ = nullptr;
    QMenu* viewMenu_ = nullptr;
    QMenu* recentMenu_ = nullptr;
    QDockWidget* labDock_ = nullptr;
    QDockWidget* viewsDock_ = nullptr;
    QDockWidget* generateDock_ = nullptr;
    int shownBlock_ = -1;    // the block the overview and the ranges were set up for
    bool modified_ = false;  // since the workspace was saved or opened
    bool closeConfirmed_ = false;
    bool freshModel_ = false;   // a model loaded, its first trace not yet shown
    DetailResult shownDetail_;  // the map MapService drew last (no trace when it failed)
    // Requests made in one pass of the event loop (a layer and a head changed together, a new
    // trace then a head) go out once, for the last state, at the loop's next turn: no job is
    // started for a head shown for no frame (mainwindow_maps.cpp).
    bool detailQueued_ = false;
    bool levelOfDetailQueued_ = false;
    attnscope::PoolRequest levelOfDetailWanted_;
    void sendDetailRequest();
    void askLevelOfDetail(const attnscope::PoolRequest& request);
    class WorkspaceRestore;  // a workspace being opened (mainwindow_workspace.cpp); a child
    WorkspaceRestore* restore_ = nullptr;
};
