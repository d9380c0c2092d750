// WindowMenus: every menu of the window, assembled here in one place once every action's owner
// exists (File, with Open Recent and Capture Q/K In; View, with the docks' toggles; Help >
// Keyboard Shortcuts), and the arrow keys on the maps.
#pragma once

#include <QObject>
#include <QString>

#include <utility>
#include <vector>

struct WindowParts;
class QAction;
class QMenu;

class WindowMenus : public QObject {
    Q_OBJECT
public:
    WindowMenus(WindowParts& parts, QObject* parent);  // builds the menus; parts must outlive it

    QMenu* viewMenu() const { return viewMenu_; }
    QMenu* recentMenu() const { return recentMenu_; }  // the recent model folders and workspaces
    // Help > Keyboard Shortcuts: every action's and key's shortcut, in a non-modal dialog
    // ("shortcutsDialog"); the text it lists.
    void showShortcuts();
    QString shortcutsText() const;

private:
    void buildCaptureMenu(QMenu* file);
    void gateFileActions(const std::vector<std::pair<QAction*, QString>>& tips);
    void buildShortcuts();
    void updateRecentMenu();

    WindowParts& p_;
    QMenu* fileMenu_ = nullptr;
    QMenu* viewMenu_ = nullptr;
    QMenu* recentMenu_ = nullptr;
};
