#include "headless_qt.h"

#include <QGuiApplication>

#include <iostream>

namespace attnscope::cli {

HeadlessQt::HeadlessQt() {
    if (QGuiApplication::instance()) return;
    if (!qEnvironmentVariableIsSet("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    qInstallMessageHandler([](QtMsgType type, const QMessageLogContext&, const QString& message) {
        if (type == QtCriticalMsg || type == QtFatalMsg) std::cerr << "qt: " << message.toStdString() << "\n";
    });
    // QGuiApplication keeps references to argc and argv for its lifetime.
    static int argc = 1;
    static char name[] = "attnscope-cli";
    static char* args[] = {name, nullptr};
    app_ = std::make_unique<QGuiApplication>(argc, args);
}

HeadlessQt::~HeadlessQt() = default;

}  // namespace attnscope::cli
