// What the window-layout tests share (issue 29): a 12-layer × 12-head model, every dock open,
// the window's minimum size, and square cells.
#pragma once

#include <QSize>

#include <filesystem>

class HeatmapView;
class MainWindow;

namespace uitest {

// A GPT-2-shaped folder of 12 layers × 12 heads (random weights, ids input), written once.
std::filesystem::path gpt2TwelveByTwelve();
// Every dock shown, docked and raised once (so that its content's size counts), the Views dock
// on its Lines tab (one toggle per head).
void showEveryDock(MainWindow& window);
// The smallest size the window's layout allows now (logical pixels).
QSize windowMinimum(MainWindow& window);
// Checks the view's cells are square within 1 px and lie within the view (letterboxed).
void requireSquareCells(const HeatmapView& view, const char* where);

}  // namespace uitest
