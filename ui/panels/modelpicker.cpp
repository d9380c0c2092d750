#include "panels/modelpicker.h"

#include "attnscope/models/model.h"

#include <QDir>
#include <QFileInfo>
#include <QSettings>

namespace {

const char* const kRecentKey = "recentModelFolders";
const int kSpecRole = Qt::UserRole;
const QString kOpenFolder = QStringLiteral("open-folder");
const QString kBrowse = QStringLiteral("browse-models");

// A path on disk is kept absolute; anything else (a hub-cache id org/name, ollama:NAME[:TAG]) is
// kept as given, so that choosing it again resolves it again rather than naming a file that is
// not there. A path that exists wins over an id, as when the model was opened.
QString recentSpec(const QString& spec) {
    const QFileInfo info(spec);
    return info.exists() ? QDir::cleanPath(info.absoluteFilePath()) : spec;
}

}  // namespace

ModelPicker::ModelPicker(QWidget* parent) : QComboBox(parent) {
    setObjectName(QStringLiteral("modelCombo"));
    setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    setMinimumContentsLength(16);
    setToolTip(tr("Built-in models, recent model folders, or open another folder"));
    connect(this, &QComboBox::activated, this, &ModelPicker::onActivated);
    refresh();
}

QStringList ModelPicker::recentFolders() { return QSettings().value(QLatin1String(kRecentKey)).toStringList(); }

void ModelPicker::addRecentFolder(const QString& folder) {
    const QString path = recentSpec(folder);
    QStringList list = recentFolders();
    list.removeAll(path);
    list.prepend(path);
    while (list.size() > kMaxRecent) list.removeLast();
    QSettings().setValue(QLatin1String(kRecentKey), list);
}

void ModelPicker::refresh() {
    const QSignalBlocker blocker(this);
    clear();
    for (const auto& b : attnscope::builtinModels()) {
        const QString name = QString::fromStdString(b.name);
        addItem(tr("%1 (built-in)").arg(name), QStringLiteral("builtin:") + name);
        setItemData(count() - 1, QString::fromStdString(b.folder.string()), Qt::ToolTipRole);
    }
    const QStringList recent = recentFolders();
    if (count() > 0 && !recent.isEmpty()) insertSeparator(count());
    for (const QString& folder : recent) {
        addItem(QFileInfo(folder).fileName(), folder);
        setItemData(count() - 1, QDir::toNativeSeparators(folder), Qt::ToolTipRole);
    }
    if (count() > 0) insertSeparator(count());
    addItem(tr("Browse models…"), kBrowse);
    addItem(tr("Open folder…"), kOpenFolder);
    const int found = findData(current_, kSpecRole);
    setCurrentIndex(found);
}

void ModelPicker::setCurrentSpec(const QString& spec) {
    current_ = spec;
    if (!spec.startsWith(QLatin1String("builtin:"))) {
        addRecentFolder(spec);
        current_ = recentSpec(spec);
    }
    refresh();
}

QString ModelPicker::currentSpec() const { return current_; }

void ModelPicker::onActivated(int index) {
    const QString spec = itemData(index, kSpecRole).toString();
    if (spec == kOpenFolder || spec == kBrowse) {
        setCurrentIndex(findData(current_, kSpecRole));  // stays on the open model
        if (spec == kBrowse)
            emit browseRequested();
        else
            emit openFolderRequested();
    } else if (!spec.isEmpty() && spec != current_) {
        emit modelChosen(spec);
    }
}
