// GUI monkey test (issue 15): a seeded random walk over the real MainWindow on the offscreen
// platform. Each step is one user action on whatever is visible and enabled at that moment:
// buttons, combo boxes, sliders, spin boxes, line edits (then Return), menu actions, keys, drags
// and wheel turns on the maps, switching models (built-ins, the stand-in folder, a folder that
// fails to load, a missing one), cancelling jobs mid-way, switching tabs, closing and reopening
// docks, short waits that let jobs finish. Dialogs, popups and error boxes are closed after each
// step (they are separate windows the walk does not explore).
//
// It fails on a crash (or a sanitizer report in build-sanitize/), on a hang (a watchdog thread
// aborts when one step takes longer than ATTNSCOPE_MONKEY_STEP_S seconds, default 120, printing
// the last steps), on any Qt message about threads or timers (a message handler collects them),
// and when the window no longer opens and runs a model at the end.
//
// Hidden tag [.monkey]; ctest's ui_monkey entry runs it. ATTNSCOPE_MONKEY_ACTIONS (default 5000)
// and ATTNSCOPE_MONKEY_SEED (default 1) choose the walk; docs/monkey.md records long walks.
#include "window_fixture.h"
#include "panels/devicecombo.h"

#include "gpt2_fixture.h"

#include <QAbstractButton>
#include <QAction>
#include <QApplication>
#include <QDialog>
#include <QDockWidget>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QScrollBar>
#include <QTimer>
#include <QWheelEvent>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <random>
#include <thread>

namespace test_monkey {

using namespace uitest;

namespace {

// Qt messages about threads and timers (a timer started from the wrong thread, an object
// moved or parented across threads): each is a bug the walk must not trigger.
std::mutex messagesMutex;
QStringList threadMessages;
QtMessageHandler previousHandler = nullptr;

void monkeyHandler(QtMsgType type, const QMessageLogContext& context, const QString& message) {
    const QString m = message.toLower();
    if (m.contains(QLatin1String("thread")) || m.contains(QLatin1String("timer"))) {
        std::lock_guard<std::mutex> lock(messagesMutex);
        threadMessages << message;
    }
    if (previousHandler) previousHandler(type, context, message);
}

long envNumber(const char* name, long fallback) {
    const char* v = std::getenv(name);
    return v && *v ? std::strtol(v, nullptr, 10) : fallback;
}

// The last steps, for the watchdog's report and failure messages.
class StepLog {
public:
    void add(std::string step) {
        std::lock_guard<std::mutex> lock(mutex_);
        steps_.push_back(std::move(step));
        if (steps_.size() > 20) steps_.pop_front();
    }
    std::string text() const {
        std::lock_guard<std::mutex> lock(mutex_);
        std::string out;
        for (const auto& s : steps_) out += "  " + s + "\n";
        return out;
    }

private:
    mutable std::mutex mutex_;
    std::deque<std::string> steps_;
};

class Watchdog {
public:
    Watchdog(const StepLog& log, long limitSeconds) : log_(log), limit_(limitSeconds) {
        thread_ = std::thread([this] {
            while (!done_) {
                std::this_thread::sleep_for(std::chrono::milliseconds(200));
                const auto since = std::chrono::steady_clock::now() - lastBeat_.load();
                if (since > std::chrono::seconds(limit_)) {
                    std::fprintf(stderr, "monkey: no step finished for %ld s (a hang); the last steps:\n%s", limit_,
                                 log_.text().c_str());
                    std::fflush(stderr);
                    std::abort();
                }
            }
        });
    }
    ~Watchdog() {
        done_ = true;
        thread_.join();
    }
    void beat() { lastBeat_ = std::chrono::steady_clock::now(); }

private:
    const StepLog& log_;
    long limit_;
    std::atomic<bool> done_{false};
    std::atomic<std::chrono::steady_clock::time_point> lastBeat_{std::chrono::steady_clock::now()};
    std::thread thread_;
};

template <typename T>
std::vector<T*> usable(const QWidget& root) {
    std::vector<T*> out;
    for (T* w : root.findChildren<T*>())
        if (w->isVisible() && w->isEnabled()) out.push_back(w);
    return out;
}

std::string nameOf(const QObject* o) {
    const QString n = o->objectName();
    return (n.isEmpty() ? QString::fromLatin1(o->metaObject()->className()) : n).toStdString();
}

}  // namespace

TEST_CASE("Monkey: a seeded random walk over the real window", "[.monkey]") {
    const long actions = envNumber("ATTNSCOPE_MONKEY_ACTIONS", 5000);
    const long seed = envNumber("ATTNSCOPE_MONKEY_SEED", 1);
    std::mt19937 rng(static_cast<std::mt19937::result_type>(seed));
    auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
    auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };

    // Exports and recent-folder settings go to a throwaway home.
    const auto home = attnscope::testing::freshDir("ui-monkey-home");
    const QByteArray oldHome = qgetenv("HOME");
    qputenv("HOME", home.string().c_str());
    const auto broken = attnscope::testing::freshDir("ui-monkey-broken");
    attnscope::testing::writeText(broken / "config.json", "{\"model_type\": \"gpt2\", \"n_layer\": ");
    const QStringList specs = {QStringLiteral("builtin:reverse-dot"),
                               QStringLiteral("builtin:reverse-additive"),
                               QStringLiteral("builtin:reverse-linear"),
                               QStringLiteral("builtin:sentiment-dot"),
                               QStringLiteral("builtin:sentiment-additive"),
                               QStringLiteral("builtin:sentiment-linear"),
                               qpath(attnscope::testing::standInModel()),
                               qpath(broken),
                               qpath(home / "no-such-model")};
    const QStringList texts = {QStringLiteral("hello42"),
                               QStringLiteral("1,2,3"),
                               QStringLiteral("abc"),
                               QString(),
                               QStringLiteral("a great film"),
                               QStringLiteral("x,y"),
                               QStringLiteral("99999999999999999999"),
                               QStringLiteral("naïve 東京 😀"),
                               QStringLiteral("0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25"),
                               QStringLiteral("-1"),
                               QStringLiteral("reverse me please")};
    const std::vector<int> keys = {Qt::Key_Left,     Qt::Key_Right, Qt::Key_Up,   Qt::Key_Down,   Qt::Key_PageUp,
                                   Qt::Key_PageDown, Qt::Key_Home,  Qt::Key_End,  Qt::Key_Escape, Qt::Key_Tab,
                                   Qt::Key_Return,   Qt::Key_Space, Qt::Key_Plus, Qt::Key_Minus,  Qt::Key_Delete};

    {
        std::lock_guard<std::mutex> lock(messagesMutex);
        threadMessages.clear();
    }
    previousHandler = qInstallMessageHandler(monkeyHandler);
    StepLog log;
    auto window = std::make_unique<MainWindow>();
    window->show();
    REQUIRE(QTest::qWaitForWindowExposed(window.get()));
    // A popup or modal loop opened by an action is closed from inside its own event loop.
    QTimer closer;
    QObject::connect(&closer, &QTimer::timeout, [] {
        if (QWidget* p = QApplication::activePopupWidget()) p->close();
        if (QWidget* m = QApplication::activeModalWidget()) m->close();
    });
    closer.start(50);

    const auto started = std::chrono::steady_clock::now();
    {
        Watchdog watchdog(log, envNumber("ATTNSCOPE_MONKEY_STEP_S", 120));
        for (long step = 0; step < actions; ++step) {
            std::string what;
            const int kind = pick(100);
            QWidget& w = *window;
            if (kind < 15) {
                auto buttons = usable<QAbstractButton>(w);
                if (!buttons.empty()) {
                    QAbstractButton* b = buttons[std::size_t(pick(int(buttons.size())))];
                    what = "click " + nameOf(b) + " '" + b->text().toStdString() + "'";
                    QTest::mouseClick(b, Qt::LeftButton);
                }
            } else if (kind < 25) {
                auto combos = usable<QComboBox>(w);
                if (!combos.empty()) {
                    QComboBox* c = combos[std::size_t(pick(int(combos.size())))];
                    if (c->count() > 0) {
                        const int i = pick(c->count());
                        what = "combo " + nameOf(c) + " -> " + std::to_string(i);
                        c->setCurrentIndex(i);
                        emit c->activated(i);  // as a user's pick
                    }
                }
            } else if (kind < 34) {
                auto sliders = usable<QAbstractSlider>(w);
                if (!sliders.empty()) {
                    QAbstractSlider* s = sliders[std::size_t(pick(int(sliders.size())))];
                    const int v =
                            s->minimum() +
                            pick(int(std::min<std::int64_t>(std::int64_t(s->maximum()) - s->minimum() + 1, INT_MAX)));
                    what = "slider " + nameOf(s) + " -> " + std::to_string(v);
                    if (chance(0.5))
                        s->setValue(v);
                    else
                        QTest::keyClick(s, chance(0.5) ? Qt::Key_PageUp : Qt::Key_Right);
                }
            } else if (kind < 43) {
                auto spins = usable<QAbstractSpinBox>(w);
                if (!spins.empty()) {
                    QAbstractSpinBox* s = spins[std::size_t(pick(int(spins.size())))];
                    what = "spin " + nameOf(s);
                    if (auto* i = qobject_cast<QSpinBox*>(s); i && chance(0.5))
                        i->setValue(i->minimum() +
                                    pick(int(std::min<std::int64_t>(std::int64_t(i->maximum()) - i->minimum() + 1,
                                                                    64))));  // ranges up to INT_MAX (seeds)
                    else
                        s->stepBy(chance(0.5) ? 1 : -1);
                }
            } else if (kind < 50) {
                auto edits = usable<QLineEdit>(w);
                if (!edits.empty()) {
                    QLineEdit* e = edits[std::size_t(pick(int(edits.size())))];
                    const QString t = texts[pick(int(texts.size()))];
                    what = "type '" + t.toStdString() + "' into " + nameOf(e);
                    e->clear();
                    bool ascii = true;
                    for (QChar c : t) ascii = ascii && c.unicode() < 128;
                    if (ascii)
                        QTest::keyClicks(e, t);
                    else
                        e->insert(t);  // QTest types ASCII only
                    if (chance(0.7)) QTest::keyClick(e, Qt::Key_Return);
                }
            } else if (kind < 57) {
                std::vector<QAction*> acts;
                for (QAction* a : w.findChildren<QAction*>())
                    if (a->isEnabled() && !a->isSeparator() && !a->menu() && !a->text().contains(QLatin1String("Quit")))
                        acts.push_back(a);
                if (!acts.empty()) {
                    QAction* a = acts[std::size_t(pick(int(acts.size())))];
                    what = "action '" + a->text().toStdString() + "'";
                    a->trigger();
                }
            } else if (kind < 66) {
                QWidget* target = QApplication::focusWidget();
                if (!target || !target->isVisible() || chance(0.4))
                    target = chance(0.5) ? static_cast<QWidget*>(window->heatmap()) : window->overview();
                const int key = keys[std::size_t(pick(int(keys.size())))];
                const Qt::KeyboardModifiers mods = chance(0.2)   ? Qt::ControlModifier
                                                   : chance(0.2) ? Qt::ShiftModifier
                                                                 : Qt::NoModifier;
                what = "key " + std::to_string(key) + " on " + nameOf(target);
                QTest::keyClick(target, Qt::Key(key), mods);
            } else if (kind < 75) {
                QWidget* map = chance(0.5) ? static_cast<QWidget*>(window->heatmap()) : window->overview();
                if (map->isVisible() && map->width() > 2 && map->height() > 2) {
                    auto at = [&] { return QPoint(pick(map->width()), pick(map->height())); };
                    const Qt::KeyboardModifiers mods = chance(0.3) ? Qt::ControlModifier : Qt::NoModifier;
                    const QPoint a = at(), b = at();
                    what = "drag on " + nameOf(map);
                    QWidget* target = map->childAt(a) ? map->childAt(a) : map;
                    const QPoint pa = target->mapFrom(map, a);
                    QTest::mousePress(target, Qt::LeftButton, mods, pa);
                    for (int i = 1; i <= 3; ++i) QTest::mouseMove(target, target->mapFrom(map, a + (b - a) * i / 3));
                    QTest::mouseRelease(target, Qt::LeftButton, mods, target->mapFrom(map, b));
                    if (chance(0.3)) {
                        QWheelEvent wheel(QPointF(pa), QPointF(target->mapToGlobal(pa)), QPoint(),
                                          QPoint(0, chance(0.5) ? 120 : -120), Qt::NoButton, Qt::NoModifier,
                                          Qt::NoScrollPhase, false);
                        QApplication::sendEvent(target, &wheel);
                    }
                }
            } else if (kind < 80) {
                const QString spec = specs[pick(int(specs.size()))];
                what = "open " + spec.toStdString();
                window->openModel(spec);
            } else if (kind < 84) {
                // Start something long, then cancel it before it can finish.
                what = "start and cancel";
                if (chance(0.5))
                    window->openModel(specs[pick(6)]);
                else
                    window->runInput();
                QTest::qWait(pick(30));
                for (QAbstractButton* b : usable<QAbstractButton>(w))
                    if (b->text().contains(QLatin1String("Cancel"))) QTest::mouseClick(b, Qt::LeftButton);
            } else if (kind < 87) {
                auto docks = w.findChildren<QDockWidget*>();
                if (!docks.isEmpty()) {
                    QDockWidget* d = docks[pick(int(docks.size()))];
                    what = std::string(d->isVisible() ? "close" : "show") + " dock " + d->windowTitle().toStdString();
                    if (d->isVisible())
                        d->close();
                    else
                        d->show();
                    if (chance(0.2)) d->setFloating(!d->isFloating());
                }
            } else if (kind < 92) {
                const int t = pick(window->tabs()->count());
                what = "tab " + std::to_string(t);
                window->tabs()->setCurrentIndex(t);
            } else {
                const int ms = pick(60);
                what = "wait " + std::to_string(ms) + " ms";
                QTest::qWait(ms);
            }
            log.add(std::to_string(step) + ": " + (what.empty() ? std::string("(nothing to do)") : what));
            QCoreApplication::processEvents();
            // Dialogs and message boxes are their own windows: closed, the walk goes on.
            for (QWidget* top : QApplication::topLevelWidgets())
                if (top != window.get() && top->isVisible() &&
                    (qobject_cast<QDialog*>(top) || qobject_cast<QMenu*>(top)))
                    top->close();
            if (!window->isVisible()) window->show();
            watchdog.beat();
        }

        // Still a working window: it opens a model, and a valid input typed in runs to the end
        // (the walk may have left anything in the input box, so the open's own run may fail).
        log.add("final: open builtin:reverse-dot, run 'hello42' and wait for the trace");
        window->session()->cancel();
        INFO("last steps:\n" << log.text());
        // The walk may have picked CUDA (no GPU here) or left a refusal pending: the CPU, and the
        // reason in the failure message if the model still does not load.
        window->controls()->device()->setChoice(attnscope::DeviceChoice::Cpu);
        QSignalSpy loaded(window->session(), &Session::modelLoaded);
        QSignalSpy refused(window->session(), &Session::failed);
        window->openModel(QStringLiteral("builtin:reverse-dot"));
        REQUIRE(QTest::qWaitFor([&] { return loaded.count() > 0 || refused.count() > 0; }, 60000));
        INFO("the load failed: " << (refused.isEmpty() ? QString() : refused.first().first().toString()).toStdString());
        REQUIRE(loaded.count() == 1);
        REQUIRE(QTest::qWaitFor([&] { return !window->session()->isBusy(); }, 60000));
        watchdog.beat();
        window->controls()->idsCheck()->setChecked(false);
        window->controls()->input()->setText(QStringLiteral("hello42"));
        window->controls()->targetInput()->clear();  // the walk may have typed a target too
        QSignalSpy traced(window->session(), &Session::traceReady);
        window->runInput();
        REQUIRE(traced.wait(60000));
        CHECK(window->session()->trace()->ids().size() > 0);
        watchdog.beat();
        window->session()->waitForWorkers();
        window->maps()->waitForWorkers();
        window->compare()->session()->waitForWorkers();
        QTest::qWait(20);
        closer.stop();
        window.reset();  // the destructor waits for every worker
        watchdog.beat();
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::printf("monkey: %ld actions (seed %ld) in %.1f s\n", actions, seed, seconds);
    qInstallMessageHandler(previousHandler);
    qputenv("HOME", oldHome);
    std::lock_guard<std::mutex> lock(messagesMutex);
    INFO("Qt messages about threads or timers:\n" << threadMessages.join(QLatin1Char('\n')).toStdString());
    CHECK(threadMessages.isEmpty());
}

}  // namespace test_monkey
