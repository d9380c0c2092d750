// ModelPicker: a combo box of the built-in models (builtin:NAME, from core's builtinModels()),
// the recently opened model folders (kept in QSettings, newest first, at most 8) and
// "Browse models…" and "Open folder…". Choosing an entry asks the window to open it.
#pragma once

#include <QComboBox>
#include <QStringList>

class ModelPicker : public QComboBox {
    Q_OBJECT
public:
    explicit ModelPicker(QWidget* parent = nullptr);

    // Rebuilds the list (built-ins are looked up again) and selects spec if present.
    void refresh();
    // Shows spec (a folder or file, a hub-cache id, ollama:NAME[:TAG] or builtin:NAME) as the
    // current entry; all but built-ins become recent ones (paths made absolute, ids as given).
    void setCurrentSpec(const QString& spec);
    QString currentSpec() const;

    static QStringList recentFolders();
    static void addRecentFolder(const QString& folder);
    static constexpr int kMaxRecent = 8;

signals:
    void modelChosen(const QString& spec);
    void openFolderRequested();
    void browseRequested();  // "Browse models…": the model browser

private:
    void onActivated(int index);
    QString current_;
};
