// syncSection: keeps one section of the ViewState's tab settings (the Model tab's, the Image
// tab's, the Causal tab's, the Views dock's, the generation's) and the widgets that show it in
// step. The user's changes to an input under `root` (views/inputwatch.h) write get() into the
// state; when the state's section is changed by someone else (a workspace being opened), set()
// puts it on the widgets. Neither a change of another section nor this sync's own write sets
// the widgets back. Returns the call that writes get() now, for changes that are not a widget's
// (a generation arriving, the Causal tab's answer chosen).
#pragma once

#include "state/viewstate.h"
#include "views/inputwatch.h"

#include <QObject>

#include <functional>
#include <memory>

template <class T>
std::function<void()> syncSection(ViewState* state, QWidget* root, QObject* owner, T ViewState::TabSettings::*section,
                                  std::function<T()> get, std::function<void(const T&)> set) {
    struct Sync {
        bool following = false;
        bool writing = false;         // the state's signal of this sync's own write is not followed
        ViewState::TabSettings seen;  // section: the state's as this sync last wrote or followed it
    };
    auto sync = std::make_shared<Sync>();
    sync->seen = state->tabSettings();
    std::function<void()> write = [state, section, get, sync] {
        if (sync->following) return;
        sync->writing = true;
        state->setTabSetting(section, get());
        sync->writing = false;
        sync->seen.*section = state->tabSettings().*section;
    };
    watchInputs(root, owner, write);
    QObject::connect(state, &ViewState::tabSettingsChanged, owner, [state, section, set, sync, write] {
        if (sync->following || sync->writing) return;
        ViewState::TabSettings seen = state->tabSettings();
        seen.*section = sync->seen.*section;
        if (ViewState::sameTabSettings(seen, state->tabSettings())) return;  // another section changed
        sync->following = true;
        set(state->tabSettings().*section);
        sync->following = false;
        sync->seen.*section = state->tabSettings().*section;
        write();  // what the widgets took
    });
    return write;
}
