// File > Open Model… and the model picker's "Browse models…": the model browser
// (panels/modelbrowser.h) over this machine's stores, the recent models and the folders the user
// added; the row chosen opens like any other model argument. File > Compare with Another Model…:
// the open model against another on its last input (panels/comparemodelsdialog.h).
#include "window/modelbrowsing.h"

#include "figure/headfigure.h"
#include "panels/comparemodelsdialog.h"
#include "panels/modelbrowser.h"
#include "panels/modelpicker.h"
#include "services/session.h"
#include "window/mainwindow.h"

#include "attnscope/attention/trace.h"
#include "attnscope/models/model_catalog.h"

#include <QMessageBox>

void browseModels(MainWindow& window) {
    if (auto* open = window.findChild<ModelBrowser*>(QStringLiteral("modelBrowser"))) {
        open->raise();
        open->activateWindow();
        return;
    }
    std::vector<std::string> recents;
    for (const QString& r : ModelPicker::recentFolders()) recents.push_back(r.toStdString());
    std::vector<std::filesystem::path> folders;
    for (const QString& f : ModelBrowser::savedFolders()) folders.emplace_back(f.toStdString());
    auto* browser = new ModelBrowser(attnscope::defaultCatalogSources(recents, folders), &window);
    browser->setAttribute(Qt::WA_DeleteOnClose);
    QObject::connect(browser, &ModelBrowser::modelChosen, &window, &MainWindow::openModel);
    browser->open();
}

void compareWithModel(MainWindow& window) {
    Session* session = window.session();
    if (!session->model() || !session->trace()) {
        auto* box = new QMessageBox(QMessageBox::Information, QObject::tr("Nothing to compare yet"),
                                    QObject::tr("Open a model and run an input first: both models run on its ids."),
                                    QMessageBox::Ok, &window);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
        return;
    }
    auto* dialog = new CompareModelsDialog(session->model(), modelDisplayName(session->modelSpec()),
                                           session->trace()->ids(), &window);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->show();
}
