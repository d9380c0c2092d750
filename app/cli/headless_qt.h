// The Qt application the CLI's figure-drawing commands need (export, corpus plots): fonts and
// image writers need a QGuiApplication, which here runs on the offscreen platform, so no
// display is needed. Only in the Qt build (ATTNSCOPE_CLI_EXPORT).
#pragma once

#include <memory>

class QGuiApplication;

namespace attnscope::cli {

// Starts a QGuiApplication for the guard's lifetime unless one already runs (the fork server
// runs commands in one process). QT_QPA_PLATFORM defaults to offscreen. Only Qt's critical
// messages reach stderr, as "qt: ...": its notes (e.g. "XDG_RUNTIME_DIR not set") would break
// the one-line error contract.
class HeadlessQt {
public:
    HeadlessQt();
    ~HeadlessQt();
    HeadlessQt(const HeadlessQt&) = delete;
    HeadlessQt& operator=(const HeadlessQt&) = delete;

private:
    std::unique_ptr<QGuiApplication> app_;  // null when another one was running
};

}  // namespace attnscope::cli
