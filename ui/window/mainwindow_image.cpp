// MainWindow, continued: the Model tab (the model view that fills the screen) and the Image tab
// (attention over the image). Their controllers follow the window through selectionChanged().
#include "window/mainwindow.h"

#include "panels/imageoverlaypanel.h"
#include "panels/modelviewpanel.h"
#include "window/imagecontroller.h"
#include "window/modelviewcontroller.h"

#include <QTabWidget>

void MainWindow::buildImageViews() {
    modelView_ = new ModelViewController(this);
    tabs_->addTab(modelView_->panel(), tr("M&odel view"));
    imageView_ = new ImageController(
            this, [this](const QString& title, const QString& message) { showError(title, message); });
    tabs_->addTab(imageView_->panel(), tr("&Image"));
}
