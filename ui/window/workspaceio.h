// WorkspaceIo: File > Save Workspace… / Open Workspace… (dialogs "saveWorkspaceDialog",
// "openWorkspaceDialog") and the window's layout kept between starts (QSettings
// "window/geometry", "window/state").
//
// Saving writes the ViewState's serialisation (ViewState::workspace()) with the window's geometry:
// nothing is read from the widgets. Opening is a chain of asynchronous steps, each started when
// the previous one has arrived: the model loads (unless it is the open one), the input runs, the
// selection, the colours and the lab's settings are set in the state (masked heads, knockouts
// and the temperature inside the model re-run it), the additive fit is made again
// (deterministic, so it is the same fit), the generation is replayed, the tabs' settings are set
// in the state, and once the final map is drawn its zoom is set and restored() is emitted.
#pragma once

#include "figure/workspace.h"

#include <QObject>

struct WindowParts;
class QAction;
class QMenu;

class WorkspaceIo : public QObject {
    Q_OBJECT
public:
    // Made once the controllers exist (its steps follow theirs); parts must outlive it.
    WorkspaceIo(WindowParts& parts, QObject* parent);

    QAction* buildActions(QMenu* file);  // Open Workspace…, Save Workspace… (returned)
    Workspace currentWorkspace() const;
    bool saveWorkspaceFile(const QString& path);  // errors go to the error dialog (false)
    bool openWorkspaceFile(const QString& path);
    void restoreWindowLayout();  // from QSettings; the app calls it once before show()
    // While a workspace opens: puts its input in the boxes when the model has loaded (true), so
    // the model's example does not replace it.
    bool applyWorkspaceInput();

    // True when what is shown changed since the workspace was last saved or opened.
    bool modified() const { return modified_; }
    // A model just opened on its example input: nothing to save (unless a workspace is opening).
    void setUnmodifiedUnlessOpening();
    // Closing: false (and the window-modal "unsavedWorkspaceDialog") while there are unsaved
    // changes; else the layout is kept in QSettings and the window may close.
    bool mayClose();

signals:
    void restored();  // a workspace opened, and the view is the saved one

private:
    void bindModified();
    void chooseWorkspaceFile(bool closeAfter);
    void askToSaveThenClose();

    class Restore;  // a workspace being opened; a child
    WindowParts& p_;
    Restore* restore_ = nullptr;
    bool modified_ = false;  // since the workspace was saved or opened
    bool closeConfirmed_ = false;
};
