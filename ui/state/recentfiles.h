// What the window remembers between starts besides its layout (QSettings): the recent workspace
// files (File > Open Recent; the recent model folders are ModelPicker::recentFolders()) and the
// folder each kind of file dialog was last used in ("model", "workspace", "image", "attention",
// "corpus", "export"), so a dialog opens where the user was rather than in $HOME.
#pragma once

#include <QString>
#include <QStringList>

namespace recent {

constexpr int kMaxFiles = 8;

// Newest first, at most kMaxFiles, only files that still exist.
QStringList workspaces();
void addWorkspace(const QString& path);

// The folder a dialog of this kind opened last; home when none (or it has gone).
QString lastFolder(const QString& kind);
// path: a file (its folder is kept) or a folder.
void rememberFolder(const QString& kind, const QString& path);
// Where figures and map data are exported: the folder of the last export, else Documents when it
// exists, else home. Every export dialog starts there; ExportDialog remembers its own writes.
QString exportFolder();

}  // namespace recent
