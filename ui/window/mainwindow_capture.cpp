// MainWindow's File > Capture Q/K In menu: how the next forwards keep the recorded Q and K
// (Session::setCaptureDtype, RunOptions::captureDtype). Half precision halves the capture, which
// is most of a long input's memory (805 MB of float32 at 16,384 tokens on a 12-layer Llama
// shape); the maps are still computed in float32, within ~1e-3 (float16) or ~1e-2 (bfloat16).
#include "window/mainwindow.h"

#include "services/session.h"

#include <QAction>
#include <QActionGroup>
#include <QMenu>

void MainWindow::buildCaptureMenu(QMenu* file) {
    QMenu* menu = file->addMenu(tr("&Capture Q/K In"));
    menu->setObjectName(QStringLiteral("captureDtypeMenu"));
    auto* group = new QActionGroup(menu);
    const struct {
        const char* text;
        const char* name;
        attnscope::CaptureDtype dtype;
    } choices[] = {
            {QT_TR_NOOP("The Model's Dtype (exact)"), "captureComputeAction", attnscope::CaptureDtype::Compute},
            {QT_TR_NOOP("Float16 (half the memory)"), "captureFloat16Action", attnscope::CaptureDtype::Float16},
            {QT_TR_NOOP("BFloat16 (half the memory)"), "captureBFloat16Action", attnscope::CaptureDtype::BFloat16},
    };
    for (const auto& c : choices) {
        QAction* a = menu->addAction(tr(c.text));
        a->setObjectName(QString::fromLatin1(c.name));
        a->setCheckable(true);
        a->setChecked(session_->captureDtype() == c.dtype);
        group->addAction(a);
        // Applies from the next run; the shown trace keeps the capture it was made with.
        connect(a, &QAction::triggered, this, [this, dtype = c.dtype] { session_->setCaptureDtype(dtype); });
    }
}
