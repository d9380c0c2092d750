// Workspace files (.attnscope) through ui/figure's readWorkspace, the one reader of the window's
// File > Open Workspace and `attnscope-cli export --workspace`. What it accepts must write back
// to JSON that reads to the same bytes again (nothing lost or invented on the way).
#include "fuzz_util.h"

#include "figure/workspace.h"

#include "attnscope/runtime/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto file = attnscope::fuzz::scratch() / "w.attnscope";
    attnscope::fuzz::writeBytes(file, attnscope::fuzz::asView(data, size));
    try {
        const Workspace w = readWorkspace(QString::fromStdString(file.string()));
        const QByteArray json = workspaceJson(w);
        if (workspaceJson(parseWorkspace(json, QStringLiteral("again"))) != json) __builtin_trap();
    } catch (const attnscope::Error&) {
    }
    return 0;
}
