#include "panels/modelbrowser.h"

#include "state/recentfiles.h"

#include <QDialogButtonBox>

#include <algorithm>
#include <QDir>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QStandardItemModel>
#include <QTreeView>
#include <QVBoxLayout>

namespace {

const char* const kFoldersKey = "modelBrowserFolders";
const int kEntryRole = Qt::UserRole + 1;
const int kSortRole = Qt::UserRole + 2;

// Rows whose text (all columns) contains every word of the filter.
class WordsFilter : public QSortFilterProxyModel {
public:
    using QSortFilterProxyModel::QSortFilterProxyModel;
    void setWords(const QString& text) {
        words_ = text.split(QRegularExpression(QStringLiteral("\\s+")), Qt::SkipEmptyParts);
        invalidateFilter();
    }

protected:
    bool filterAcceptsRow(int row, const QModelIndex& parent) const override {
        QString all;
        for (int c = 0; c < sourceModel()->columnCount(parent); ++c)
            all += sourceModel()->index(row, c, parent).data().toString() + QLatin1Char(' ');
        for (const QString& w : words_)
            if (!all.contains(w, Qt::CaseInsensitive)) return false;
        return true;
    }

private:
    QStringList words_;
};

QString sourceName(const std::string& s) {
    if (s == "hub") return QObject::tr("HF cache");
    if (s == "lmstudio") return QObject::tr("LM Studio");
    if (s == "ollama") return QObject::tr("Ollama");
    if (s == "builtin") return QObject::tr("built-in");
    if (s == "recent") return QObject::tr("recent");
    return QObject::tr("folder");
}

QString formatBytes(quint64 n) { return n ? QLocale::c().formattedDataSize(qint64(n), 2) : QString(); }

}  // namespace

QString formatParameters(qint64 n) {
    if (n <= 0) return {};
    const double v = double(n);
    if (v >= 1e9) return QString::number(v / 1e9, 'f', v >= 1e11 ? 0 : 2) + QLatin1Char('B');
    if (v >= 1e6) return QString::number(v / 1e6, 'f', v >= 1e8 ? 0 : 1) + QLatin1Char('M');
    if (v >= 1e3) return QString::number(v / 1e3, 'f', 1) + QLatin1Char('K');
    return QString::number(n);
}

ModelBrowser::ModelBrowser(attnscope::CatalogSources sources, QWidget* parent)
    : QDialog(parent), sources_(std::move(sources)), service_(new OtherModelsService(this)) {
    setObjectName(QStringLiteral("modelBrowser"));
    setWindowTitle(tr("Open Model"));
    resize(980, 520);

    filter_ = new QLineEdit(this);
    filter_->setObjectName(QStringLiteral("modelFilter"));
    filter_->setPlaceholderText(tr("Filter: name, family, Q4_K, ollama, …  (Enter opens)"));
    filter_->setClearButtonEnabled(true);
    filter_->installEventFilter(this);
    auto* addFolderButton = new QPushButton(tr("Add Folder…"), this);
    addFolderButton->setObjectName(QStringLiteral("addFolderButton"));
    addFolderButton->setToolTip(tr("Scan a folder (three levels deep) for model folders and GGUF files"));
    auto* rescanButton = new QPushButton(tr("Rescan"), this);
    auto* top = new QHBoxLayout;
    top->addWidget(filter_, 1);
    top->addWidget(addFolderButton);
    top->addWidget(rescanButton);

    model_ = new QStandardItemModel(0, ColumnCount, this);
    model_->setHorizontalHeaderLabels(
            {tr("Name"), tr("Source"), tr("Family"), tr("Parameters"), tr("Type"), tr("Size"), tr("Opens?")});
    auto* proxy = new WordsFilter(this);
    proxy->setSourceModel(model_);
    proxy->setSortRole(kSortRole);
    proxy_ = proxy;
    view_ = new QTreeView(this);
    view_->setObjectName(QStringLiteral("modelList"));
    view_->setModel(proxy_);
    view_->setRootIsDecorated(false);
    view_->setUniformRowHeights(true);
    view_->setAlternatingRowColors(true);
    view_->setSortingEnabled(true);
    view_->sortByColumn(-1, Qt::AscendingOrder);  // the catalog's order until a header is clicked
    view_->setSelectionBehavior(QAbstractItemView::SelectRows);
    view_->header()->setStretchLastSection(true);
    view_->installEventFilter(this);

    status_ = new QLabel(this);
    status_->setObjectName(QStringLiteral("browserStatus"));
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Open | QDialogButtonBox::Cancel, this);
    open_ = buttons->button(QDialogButtonBox::Open);
    open_->setAutoDefault(false);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(view_, 1);
    layout->addWidget(status_);
    layout->addWidget(buttons);

    connect(filter_, &QLineEdit::textChanged, this, &ModelBrowser::setFilter);
    connect(view_, &QTreeView::activated, this, [this] { openCurrent(); });
    connect(view_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this] {
        const int i = currentEntry();
        if (i < 0) return;
        const auto& e = entries_[std::size_t(i)];
        status_->setText(QDir::toNativeSeparators(QString::fromStdString(e.path.string())) +
                         (e.openable ? QString() : QStringLiteral("\n") + QString::fromStdString(e.reason)));
    });
    connect(open_, &QPushButton::clicked, this, &ModelBrowser::openCurrent);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(addFolderButton, &QPushButton::clicked, this, &ModelBrowser::chooseFolder);
    connect(rescanButton, &QPushButton::clicked, this, &ModelBrowser::rescan);
    filter_->setFocus();
    rescan();
}

QStringList ModelBrowser::savedFolders() { return QSettings().value(QLatin1String(kFoldersKey)).toStringList(); }

void ModelBrowser::saveFolders(const QStringList& folders) {
    QSettings().setValue(QLatin1String(kFoldersKey), folders);
}

void ModelBrowser::rescan() {
    scanning_ = true;
    status_->setText(tr("Looking for models…"));
    service_->scan(sources_, [this](const CatalogScan& r) {
        entries_ = *r.entries;
        scanning_ = false;
        fill();
        int openable = 0;
        for (const auto& e : entries_) openable += e.openable ? 1 : 0;
        status_->setText(tr("%1 models, %2 of them open in AttnScope (scanned in %3 s): recents, added "
                            "folders, the Hugging Face cache, LM Studio, Ollama, built-in.")
                                 .arg(entries_.size())
                                 .arg(openable)
                                 .arg(r.seconds, 0, 'f', 1));
        emit scanFinished();
    });
}

void ModelBrowser::fill() {
    model_->removeRows(0, model_->rowCount());
    const QColor grey = palette().color(QPalette::Disabled, QPalette::Text);
    for (std::size_t i = 0; i < entries_.size(); ++i) {
        const auto& e = entries_[i];
        QList<QStandardItem*> row;
        auto cell = [&](const QString& text, const QVariant& sort) {
            auto* item = new QStandardItem(text);
            item->setEditable(false);
            item->setData(int(i), kEntryRole);
            item->setData(sort, kSortRole);
            if (!e.openable) item->setForeground(grey);
            row << item;
        };
        const QString name = QString::fromStdString(e.name);
        cell(name, name.toLower());
        cell(sourceName(e.source), sourceName(e.source));
        cell(QString::fromStdString(e.family), QString::fromStdString(e.family));
        cell(formatParameters(e.parameters), qlonglong(e.parameters));
        cell(QString::fromStdString(e.dtype), QString::fromStdString(e.dtype));
        cell(formatBytes(e.bytes), qulonglong(e.bytes));
        const QString reason = QString::fromStdString(e.reason);
        cell(e.openable ? tr("yes") : tr("no: %1").arg(reason), e.openable ? 0 : 1);
        const QString tip = QDir::toNativeSeparators(QString::fromStdString(e.path.string())) +
                            (e.openable ? QString() : QStringLiteral("\n") + reason);
        for (auto* item : row) item->setToolTip(tip);
        model_->appendRow(row);
    }
    for (int c = 0; c < Status; ++c) view_->resizeColumnToContents(c);
    if (proxy_->rowCount() > 0) view_->setCurrentIndex(proxy_->index(0, 0));
}

void ModelBrowser::setFilter(const QString& text) {
    if (filter_->text() != text) filter_->setText(text);  // comes back here through textChanged
    static_cast<WordsFilter*>(proxy_)->setWords(text);
    // The best match is the first row shown: Enter opens it.
    if (proxy_->rowCount() > 0) view_->setCurrentIndex(proxy_->index(0, 0));
}

int ModelBrowser::shownRows() const { return proxy_->rowCount(); }

int ModelBrowser::currentEntry() const {
    QModelIndex index = view_->currentIndex();
    if (!index.isValid() && proxy_->rowCount() > 0) index = proxy_->index(0, 0);
    return index.isValid() ? index.data(kEntryRole).toInt() : -1;
}

bool ModelBrowser::openCurrent() {
    const int i = currentEntry();
    if (i < 0 || std::size_t(i) >= entries_.size()) {
        status_->setText(scanning_ ? tr("Still looking for models…") : tr("No model matches the filter."));
        return false;
    }
    const auto& e = entries_[std::size_t(i)];
    if (!e.openable) {
        status_->setText(
                tr("%1 cannot be opened: %2").arg(QString::fromStdString(e.name), QString::fromStdString(e.reason)));
        return false;
    }
    emit modelChosen(QString::fromStdString(e.spec));
    accept();
    return true;
}

void ModelBrowser::addFolder(const QString& folder) {
    const QString clean = QDir::cleanPath(folder);
    QStringList saved = savedFolders();
    if (!saved.contains(clean)) saveFolders(saved << clean);
    sources_.folders.push_back(clean.toStdString());
    rescan();
}

void ModelBrowser::chooseFolder() {
    const QString folder = QFileDialog::getExistingDirectory(this, tr("Folder with models"),
                                                             recent::lastFolder(QStringLiteral("model")));
    if (folder.isEmpty()) return;
    recent::rememberFolder(QStringLiteral("model"), folder);
    addFolder(folder);
}

bool ModelBrowser::eventFilter(QObject* watched, QEvent* event) {
    if (event->type() != QEvent::KeyPress) return QDialog::eventFilter(watched, event);
    auto* key = static_cast<QKeyEvent*>(event);
    // Up and Down in the filter box move through the rows; Enter on a row opens it.
    if (watched == filter_ && (key->key() == Qt::Key_Down || key->key() == Qt::Key_Up)) {
        const int row = view_->currentIndex().isValid() ? view_->currentIndex().row() : -1;
        const int next = std::clamp(row + (key->key() == Qt::Key_Down ? 1 : -1), 0, proxy_->rowCount() - 1);
        if (next >= 0) view_->setCurrentIndex(proxy_->index(next, 0));
        return true;
    }
    // Enter in the filter box or on a row opens the current row (and nothing else: the dialog's
    // default button would open it a second time).
    if ((watched == view_ || watched == filter_) && (key->key() == Qt::Key_Return || key->key() == Qt::Key_Enter)) {
        openCurrent();
        return true;
    }
    return QDialog::eventFilter(watched, event);
}
