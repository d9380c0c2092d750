// ModelBrowser: File > Open Model… and the model picker's "Browse models…": the models on this
// machine as core's catalog lists them (models/model_catalog.h: recents, folders the user added,
// the Hugging Face hub cache, LM Studio's and Ollama's GGUF stores, the built-in models), one row
// each with name, source, family, parameters, dtype or quantisation, size on disk and whether
// AttnScope opens it (or why not). A filter box narrows the rows (every column, any order of
// words); Enter in it or on a row opens the current row (the first shown when none is
// selected). The scan is OtherModelsService's, on a worker; the folders added are kept in QSettings.
#pragma once

#include "services/othermodelsservice.h"

#include "attnscope/models/model_catalog.h"

#include <QDialog>
#include <QStringList>

#include <vector>

class QLabel;
class QLineEdit;
class QPushButton;
class QSortFilterProxyModel;
class QStandardItemModel;
class QTreeView;

class ModelBrowser : public QDialog {
    Q_OBJECT
public:
    enum Column { Name, Source, Family, Parameters, Type, Size, Status, ColumnCount };

    // Scans sources (defaultCatalogSources in the window) once shown; rescan() again.
    explicit ModelBrowser(attnscope::CatalogSources sources, QWidget* parent = nullptr);

    // The folders the user added with "Add Folder…" (QSettings), scanned besides the stores.
    static QStringList savedFolders();
    static void saveFolders(const QStringList& folders);

    void rescan();
    void addFolder(const QString& folder);  // scans it too and remembers it
    void setFilter(const QString& text);
    // Opens the current row (the first shown when none is selected): emits modelChosen and
    // closes, or says why the row cannot be opened. False when nothing was opened.
    bool openCurrent();

    const std::vector<attnscope::CatalogEntry>& entries() const { return entries_; }
    int shownRows() const;
    bool isScanning() const { return scanning_; }

signals:
    void modelChosen(const QString& spec);
    void scanFinished();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void fill();
    void chooseFolder();
    int currentEntry() const;  // index into entries_, or -1

    attnscope::CatalogSources sources_;
    std::vector<attnscope::CatalogEntry> entries_;
    QLineEdit* filter_;
    QTreeView* view_;
    QStandardItemModel* model_;
    QSortFilterProxyModel* proxy_;
    QLabel* status_;
    QPushButton* open_;
    bool scanning_ = false;
    OtherModelsService* service_;
};

// "124M", "8.03B" (empty for 0).
QString formatParameters(qint64 n);
