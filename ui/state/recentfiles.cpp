#include "state/recentfiles.h"

#include <QDir>
#include <QFileInfo>
#include <QSettings>
#include <QStandardPaths>

namespace recent {

namespace {
const QString kWorkspacesKey = QStringLiteral("recent/workspaces");
}

QStringList workspaces() {
    QStringList out;
    for (const QString& p : QSettings().value(kWorkspacesKey).toStringList())
        if (QFileInfo(p).isFile()) out << p;
    return out;
}

void addWorkspace(const QString& path) {
    const QString absolute = QFileInfo(path).absoluteFilePath();
    QStringList list = QSettings().value(kWorkspacesKey).toStringList();
    list.removeAll(absolute);
    list.prepend(absolute);
    while (list.size() > kMaxFiles) list.removeLast();
    QSettings().setValue(kWorkspacesKey, list);
}

QString lastFolder(const QString& kind) {
    const QString folder = QSettings().value(QStringLiteral("folders/") + kind).toString();
    return !folder.isEmpty() && QDir(folder).exists() ? folder : QDir::homePath();
}

void rememberFolder(const QString& kind, const QString& path) {
    if (path.isEmpty()) return;
    const QFileInfo info(path);
    QSettings().setValue(QStringLiteral("folders/") + kind,
                         info.isDir() ? info.absoluteFilePath() : info.absolutePath());
}

QString exportFolder() {
    const QString folder = QSettings().value(QStringLiteral("folders/export")).toString();
    if (!folder.isEmpty() && QDir(folder).exists()) return folder;
    const QString docs = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    return !docs.isEmpty() && QDir(docs).exists() ? docs : QDir::homePath();
}

}  // namespace recent
