#include "window/shortcutsdialog.h"

#include <QAction>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QMenu>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>

namespace {

QString plainText(QString text) {
    text.remove(QLatin1Char('&'));
    return text.trimmed();
}

}  // namespace

std::vector<std::pair<QString, QString>> collectShortcuts(const QWidget* root,
                                                          const std::vector<std::pair<QString, QString>>& extra) {
    std::vector<std::pair<QString, QString>> out;
    for (const QAction* a : root->findChildren<QAction*>()) {
        if (a->shortcut().isEmpty() || a->text().isEmpty()) continue;
        const QString keys = a->shortcut().toString(QKeySequence::NativeText);
        if (std::none_of(out.begin(), out.end(), [&](const auto& p) { return p.first == keys; }))
            out.emplace_back(keys, plainText(a->text()));
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    out.insert(out.end(), extra.begin(), extra.end());
    return out;
}

void addShortcutsToTooltips(QWidget* root) {
    for (QAction* a : root->findChildren<QAction*>()) {
        if (a->shortcut().isEmpty()) continue;
        const QString keys = a->shortcut().toString(QKeySequence::NativeText);
        QString tip = a->toolTip();
        if (tip.isEmpty() || tip == plainText(a->text())) tip = plainText(a->text());
        if (!tip.contains(keys)) a->setToolTip(QStringLiteral("%1 (%2)").arg(tip, keys));
    }
}

ShortcutsDialog::ShortcutsDialog(const std::vector<std::pair<QString, QString>>& shortcuts, QWidget* parent)
    : QDialog(parent) {
    setObjectName(QStringLiteral("shortcutsDialog"));
    setWindowTitle(tr("Keyboard Shortcuts"));
    auto* table = new QTableWidget(int(shortcuts.size()), 2, this);
    table->setObjectName(QStringLiteral("shortcutsTable"));
    table->setHorizontalHeaderLabels({tr("Keys"), tr("Does")});
    table->verticalHeader()->setVisible(false);
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    for (int i = 0; i < int(shortcuts.size()); ++i) {
        table->setItem(i, 0, new QTableWidgetItem(shortcuts[std::size_t(i)].first));
        table->setItem(i, 1, new QTableWidgetItem(shortcuts[std::size_t(i)].second));
    }
    table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    table->horizontalHeader()->setStretchLastSection(true);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::close);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(table);
    layout->addWidget(buttons);
    resize(520, 560);
}
