// MainWindow: opens a model, runs token ids through it and shows one head's attention map.
//
// All heavy work goes through Session (worker threads); switching layer or head only asks the
// current Trace for another map (Trace::map, cheap) without running the model again. Errors are
// shown in a non-modal QMessageBox named "errorDialog" and leave the window usable.
#pragma once

#include <QMainWindow>

#include <memory>

namespace attnscope {
struct ModelInfo;
class Trace;
}  // namespace attnscope

class HeatmapView;
class Session;
class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    Session* session() const { return session_; }
    HeatmapView* heatmap() const { return heatmap_; }

    // Loads the model folder in the background; errors show in the error dialog.
    void openModel(const QString& folder);
    // Runs the ids in the ids field (after validating them).
    void runInput();

private:
    void buildControls();
    void buildMenus();
    void chooseModelFolder();
    void onModelLoaded(const attnscope::ModelInfo& info);
    void onTraceReady(const std::shared_ptr<const attnscope::Trace>& trace);
    void onBusyChanged(bool busy);
    void onProgress(int permille);
    void renderMap();
    void updateRunEnabled();
    void showError(const QString& title, const QString& message);

    Session* session_ = nullptr;
    HeatmapView* heatmap_ = nullptr;
    QLabel* modelLabel_ = nullptr;
    QLineEdit* idsEdit_ = nullptr;
    QPushButton* runButton_ = nullptr;
    QComboBox* blockCombo_ = nullptr;
    QLabel* blockLabel_ = nullptr;
    QSpinBox* layerSpin_ = nullptr;
    QSpinBox* headSpin_ = nullptr;
    QProgressBar* progressBar_ = nullptr;
    QPushButton* cancelButton_ = nullptr;
    QString pendingFolder_;   // the folder being opened, for messages
    bool autoRun_ = false;    // run the example ids once the model has loaded
};
