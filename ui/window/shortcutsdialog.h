// Help > Keyboard Shortcuts: every shortcut of a window, in one list. The menus' actions are
// read from the window itself (so the list cannot drift from what the keys do); the keys that
// are not menu actions (the arrow keys on the maps, zoom) are given by the window.
#pragma once

#include <QDialog>
#include <QString>
#include <QStringList>

#include <utility>
#include <vector>

class QWidget;

// (keys, what they do) for every QAction with a shortcut under root, menu order, then `extra`.
std::vector<std::pair<QString, QString>> collectShortcuts(const QWidget* root,
                                                          const std::vector<std::pair<QString, QString>>& extra);

// Adds " (Ctrl+O)" to every action's tooltip under root that has a shortcut and does not say it yet.
void addShortcutsToTooltips(QWidget* root);

class ShortcutsDialog : public QDialog {
    Q_OBJECT
public:
    ShortcutsDialog(const std::vector<std::pair<QString, QString>>& shortcuts, QWidget* parent);
};
