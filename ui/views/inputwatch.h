// watchInputs: calls `changed` whenever an input widget under `root` takes another value (a
// button toggled, a combo box's item, a spin box's or slider's value, a line edit's text once
// edited, a tab widget's page), including the inputs made later (a view's per-head buttons).
// What a controller uses to request the state's change for its settings when the user changes
// them, without one connection per widget. Synchronous: the state is current when the call
// that changed the widget returns. `context` ends the watching when destroyed.
#pragma once

#include <functional>

class QObject;
class QWidget;

void watchInputs(QWidget* root, QObject* context, std::function<void()> changed);
