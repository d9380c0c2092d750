#include "views/inputwatch.h"

#include <QAbstractButton>
#include <QAbstractSlider>
#include <QChildEvent>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QPointer>
#include <QSet>
#include <QSpinBox>
#include <QTabWidget>

#include <utility>

namespace {

// Follows the widgets under one root: hooks each input once, and the children added later.
class InputWatcher : public QObject {
public:
    InputWatcher(QWidget* root, QObject* context, std::function<void()> changed)
        : QObject(context), changed_(std::move(changed)) {
        hookTree(root);
    }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override {
        // A child being constructed is not a QWidget yet: the parent is looked through again at
        // the loop's next turn, and when a child is polished (before it is first shown).
        if (event->type() == QEvent::ChildAdded || event->type() == QEvent::ChildPolished)
            if (auto* parent = qobject_cast<QWidget*>(watched)) {
                if (event->type() == QEvent::ChildPolished) {
                    if (auto* w = qobject_cast<QWidget*>(static_cast<QChildEvent*>(event)->child())) hookTree(w);
                } else {
                    pending_.append(parent);
                    if (pending_.size() == 1)
                        QMetaObject::invokeMethod(this, &InputWatcher::hookPending, Qt::QueuedConnection);
                }
            }
        return QObject::eventFilter(watched, event);
    }

private:
    void hookPending() {
        const QList<QPointer<QWidget>> pending = std::exchange(pending_, {});
        for (const QPointer<QWidget>& p : pending)
            if (p) hookTree(p);
    }
    void hookTree(QWidget* root) {
        hook(root);
        for (QWidget* w : root->findChildren<QWidget*>()) hook(w);
    }
    void hook(QWidget* w) {
        if (hooked_.contains(w)) return;
        hooked_.insert(w);
        connect(w, &QObject::destroyed, this, [this, w] { hooked_.remove(w); });
        w->installEventFilter(this);  // its children made later
        const auto call = [this] { changed_(); };
        if (auto* b = qobject_cast<QAbstractButton*>(w)) {
            connect(b, &QAbstractButton::toggled, this, call);  // checkable ones only emit it
        } else if (auto* c = qobject_cast<QComboBox*>(w)) {
            connect(c, &QComboBox::currentIndexChanged, this, call);
        } else if (auto* s = qobject_cast<QSpinBox*>(w)) {
            connect(s, &QSpinBox::valueChanged, this, call);
        } else if (auto* d = qobject_cast<QDoubleSpinBox*>(w)) {
            connect(d, &QDoubleSpinBox::valueChanged, this, call);
        } else if (auto* sl = qobject_cast<QAbstractSlider*>(w)) {
            connect(sl, &QAbstractSlider::valueChanged, this, call);
        } else if (auto* e = qobject_cast<QLineEdit*>(w)) {
            // A spin box's or combo box's own editor is its parent's value.
            if (!qobject_cast<QAbstractSpinBox*>(e->parentWidget()) && !qobject_cast<QComboBox*>(e->parentWidget()))
                connect(e, &QLineEdit::editingFinished, this, call);
        } else if (auto* t = qobject_cast<QTabWidget*>(w)) {
            connect(t, &QTabWidget::currentChanged, this, call);
        }
    }

    std::function<void()> changed_;
    QSet<QObject*> hooked_;
    QList<QPointer<QWidget>> pending_;  // parents with children added, looked through at the next turn
};

}  // namespace

void watchInputs(QWidget* root, QObject* context, std::function<void()> changed) {
    new InputWatcher(root, context, std::move(changed));
}
