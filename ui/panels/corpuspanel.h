// CorpusPanel: the Corpus tab. Opens a corpus result folder (heads.json of `attnscope-cli corpus`)
// or asks for a corpus file and a results folder to run through the open model (the run is
// CorpusController's, on CorpusService; the panel shows its progress bar, examples/s and Cancel,
// and the result once it ends; the folder resumes when run again). Shows the layer × head
// importance heat map of a block and the pruning curve; clicking a head asks the window to show
// that head's map on the example chosen from the corpus (headChosen).
// Display only: the numbers come from core/corpus.
#pragma once

#include "figure/colormaps.h"

#include "attnscope/corpus/corpus_result.h"

#include <QFileDialog>
#include <QPointer>
#include <QWidget>

class HeatmapView;
class QComboBox;
class QCustomPlot;
class QLabel;
class QListWidget;
class QProgressBar;
class QPushButton;

class CorpusPanel : public QWidget {
    Q_OBJECT
public:
    explicit CorpusPanel(QWidget* parent = nullptr);

    // Shows dir/heads.json; errors go to the status line and return false. The examples combo is
    // filled from `data`, or else from the corpus file named in dir/run.json when it lies in dir
    // or beside it,
    // else from `data` when given ("-": keep the examples shown).
    bool openResult(const QString& dir, const QString& data = QString());
    // A run of data (its examples fill the combo) into outDir by modelSpec began: the buttons
    // wait, Cancel is offered and the progress bar starts.
    void beginRun(const QString& modelSpec, const QString& data, const QString& outDir);
    // A report of the run: "phase: done/total · rate/s · s left" on the bar.
    void showProgress(const QString& phase, long long done, long long total, double rate);
    // The run ended: error empty shows the folder's result, else the error (or why it stopped)
    // in the status line; finished() follows.
    void endRun(const QString& error);
    QPushButton* cancelButton() const { return cancelButton_; }

    const attnscope::CorpusResult& result() const { return result_; }
    HeatmapView* importanceView() const { return importance_; }
    QCustomPlot* curvePlot() const { return curve_; }
    QComboBox* exampleCombo() const { return examples_; }
    QComboBox* blockCombo() const { return blocks_; }
    // What the heat map shows: item data = the key of corpusQuantities (figure/corpusfigures.h).
    QComboBox* quantityCombo() const { return quantities_; }
    QLabel* statusLabel() const { return status_; }
    QProgressBar* progressBar() const { return progress_; }
    // The text of the chosen example (empty: none).
    QString chosenExample() const;

    // The "Run corpus…" button asks for the corpus file, then for the folder the results go to
    // (never chosen silently; a folder that holds an earlier run of the same file resumes it).
    // The dialogs open without blocking; the one showing now (nullptr: none), for tests.
    QFileDialog* openDialog() const { return dialog_; }
    void chooseRun();
    // The skipped lines of the result shown ("line 3: not JSON (…)"), listed under the status.
    QListWidget* badLinesList() const { return badLines_; }
    // Colours of the importance map (the window's colour map).
    void setColoring(Colormap colormap, const ColorScale& scale);

signals:
    void openRequested();    // the "Open result…" button
    void cancelRequested();  // the Cancel button of a run
    // The user chose a corpus file and an output folder: the window runs it on its model.
    void runRequested(const QString& data, const QString& outDir);
    // A head of the heat map was clicked: show it on the chosen example.
    void headChosen(const QString& block, int layer, int head, const QString& exampleText);
    void finished(bool ok);  // a run ended (endRun): its result is shown, or not

private:
    void showResult();
    void showBlock();
    void loadExamples(const QString& path);

    attnscope::CorpusResult result_;
    QString resultDir_;
    HeatmapView* importance_ = nullptr;
    QCustomPlot* curve_ = nullptr;
    QComboBox* blocks_ = nullptr;
    QComboBox* quantities_ = nullptr;
    QComboBox* examples_ = nullptr;
    QLabel* status_ = nullptr;
    QListWidget* badLines_ = nullptr;
    // The open run dialog, if any; QPointer clears itself when the dialog goes (also while this
    // panel is being destroyed, when a slot on the panel could no longer run).
    QPointer<QFileDialog> dialog_;
    QProgressBar* progress_ = nullptr;
    QPushButton* openButton_ = nullptr;
    QPushButton* runButton_ = nullptr;
    QPushButton* cancelButton_ = nullptr;
    QPoint pressAt_;
};
