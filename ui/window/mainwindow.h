// MainWindow: opens a model (a built-in one or a folder), runs an input through it and shows
// every head of the chosen block as an overview grid next to one head's heat map, with the
// Compare, Metrics, Model view, Image, Corpus and Causal tabs and the Controls, Lab, Views and
// Generate docks.
//
// What is shown lives in one ViewState (state/viewstate.h): the widgets request changes to it and
// follow its signals, and the workspace file is its serialisation. The window only composes small
// classes that share its parts (window/windowparts.h): DockBuilder places the widgets and makes
// the controllers (each gets the state and the services, never the window), MapPresenter keeps
// the central maps on the state, ModelInputs opens models and runs inputs, AttentionFiles opens
// .npy maps, Exporter writes figures and map data, WorkspaceIo saves and opens workspaces, and
// WindowMenus builds every menu in one place. Heavy work runs on workers (ui/services); errors
// show in a non-modal QMessageBox named "errorDialog" and leave the window usable.
#pragma once

#include "services/mapservice.h"
#include "window/windowparts.h"

#include <QMainWindow>

#include <memory>

namespace attnscope {
struct BlockInfo;
struct RgbImage;
class Trace;
}  // namespace attnscope

class DockBuilder;
class QMenu;
struct Figure;
struct Workspace;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // The parts (windowparts.h), for tests and the app.
    ViewState* state() const { return parts_.state; }  // what the window shows
    Session* session() const { return parts_.session; }
    MapService* maps() const { return parts_.maps; }
    HeatmapView* heatmap() const { return parts_.heatmap; }
    OverviewGrid* overview() const { return parts_.overview; }
    ComparePanel* compare() const { return parts_.compare; }
    ControlPanel* controls() const { return parts_.controls; }
    QTabWidget* tabs() const { return parts_.tabs; }
    LabController* lab() const { return parts_.lab; }
    ImageController* imageView() const { return parts_.imageView; }  // the Image tab
    ModelViewController* modelView() const { return parts_.modelView; }
    GenerateController* generation() const { return parts_.generate; }
    ViewsController* views() const { return parts_.views; }       // the line, neuron and query-key views
    SourceController* sources() const { return parts_.sources; }  // the Show selector (map sources)
    CorpusPanel* corpus() const { return parts_.corpus; }
    CorpusController* corpusTab() const { return parts_.corpusTab; }     // its runs (corpuscontroller.h)
    LongController* longContext() const { return parts_.longContext; }   // the Long context tab (longcontroller.h)
    CausalController* causal() const { return parts_.causal; }           // the Causal tab (causalcontroller.h)
    QAction* rawTokensAction() const { return parts_.rawTokensAction; }  // View > Raw Tokens
    QMenu* viewMenu() const;
    QMenu* recentMenu() const;  // File > Open Recent

    // What the parts do (their headers say how).
    bool openCorpusResult(const QString& dir);
    void showShortcuts();
    QString shortcutsText() const;
    void openModel(const QString& spec);
    void runInput();
    void moveSelection(int dLayer, int dHead);  // the arrow keys: clamped
    void exportFigure();
    void exportMapData();
    void refreshMaps();
    void requestDetail();
    Figure currentFigure() const;
    bool writeCurrentMapData(const QString& path);
    void openImage();
    bool setImageFile(const QString& path);
    QString imageFile() const;
    std::shared_ptr<const attnscope::RgbImage> image() const;
    void openAttentionFileDialog();
    void openAttentionFile(const QString& npy, const QString& tokens = QString());
    // A block's row (queries) or column labels, readable or raw (View > Raw Tokens).
    QStringList axisLabels(const attnscope::Trace& trace, const attnscope::BlockInfo& block, bool queries,
                           bool raw) const;
    static QString exampleInput(const QString& spec, bool hasTokenizer, int vocabSize, int maxPositions);
    MapKey currentKey() const;
    QString currentBlockName() const;
    void selectHead(const QString& block, int layer, int head);
    bool metricsShown() const;
    void showExplore();
    Workspace currentWorkspace() const;
    bool saveWorkspaceFile(const QString& path);
    bool openWorkspaceFile(const QString& path);
    void restoreWindowLayout();
    bool workspaceModified() const;

signals:
    void workspaceRestored();

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void bindState();
    void showError(const QString& title, const QString& message);

    WindowParts parts_;
    DockBuilder* docks_ = nullptr;
};
