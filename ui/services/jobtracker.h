// JobTracker: runs background jobs on a shared thread pool (services/pools.h: one for model runs,
// one for maps) and hands their results back to the GUI thread, dropping stale ones (the idea of
// KDAB hotspot's src/jobtracker.h).
//
// Each start() bumps an atomic generation id. A job is cancelled once a newer job started,
// cancel() was called or the tracker was destroyed; it can ask with the Stop it is given (cheap,
// any thread) and should then return early. Results travel with
// QMetaObject::invokeMethod(context, ..., Qt::QueuedConnection) and are delivered only while
// their job is still the current one, so a deliver callback never sees an outdated result.
// Workers never block on the GUI thread. The destructor cancels and waits for this tracker's own
// jobs (not the pool's others), so no job outlives its owner.
//
// Ownership: the context object must own the tracker (a member), so the tracker's destructor
// has waited for every worker before the context dies.
#pragma once

#include "services/pools.h"

#include "attnscope/runtime/error.h"

#include <QMetaObject>
#include <QObject>
#include <QString>
#include <QThreadPool>

#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <memory>
#include <utility>

// Inside a catch: the exception being handled as the text a job returns in its result (jobs
// must not throw; see JobTracker::start).
inline QString currentJobError() {
    try {
        throw;
    } catch (const std::exception& e) {
        return QString::fromUtf8(e.what());
    } catch (...) {
        return QStringLiteral("Unknown error in a background job.");
    }
}

// Runs fn() inside a job and returns its exception as text; a cancelled job (attnscope::Cancelled)
// returns "" with `cancelled` set.
template <typename Fn>
QString guardedJob(Fn fn, bool& cancelled) {
    try {
        fn();
    } catch (const attnscope::Cancelled&) {
        cancelled = true;
    } catch (...) {
        return currentJobError();
    }
    return {};
}

class JobTracker {
public:
    // A job's view of its own cancellation; copyable, safe on any thread.
    class Stop {
    public:
        bool requested() const { return generation_->load() != id_; }
        explicit operator bool() const { return requested(); }

    private:
        friend class JobTracker;
        Stop(std::shared_ptr<const std::atomic<quint64>> generation, quint64 id)
            : generation_(std::move(generation)), id_(id) {}
        std::shared_ptr<const std::atomic<quint64>> generation_;
        quint64 id_;
    };

    // Results are delivered in context's thread (the GUI thread); jobs run on pool (shared,
    // outlives the tracker: services/pools.h).
    explicit JobTracker(QObject* context, QThreadPool* pool = mapPool()) : context_(context), pool_(pool) {}
    ~JobTracker() {
        cancel();
        waitForDone();
    }
    JobTracker(const JobTracker&) = delete;
    JobTracker& operator=(const JobTracker&) = delete;

    // Runs job(Stop) on a worker thread; its return value R (copyable) goes to deliver(R) on the
    // GUI thread if no newer job has started by then. Returns the job's id. The job must not
    // throw: catch at the job's boundary and return the error inside R.
    template <typename Job, typename Deliver>
    quint64 start(Job job, Deliver deliver) {
        const quint64 id = ++*generation_;
        running_ = true;
        Stop stop(generation_, id);
        {
            const std::lock_guard<std::mutex> lock(inFlight_->mutex);
            ++inFlight_->count;
        }
        pool_->start([this, job = std::move(job), deliver = std::move(deliver), stop, inFlight = inFlight_]() mutable {
            const InFlight::Done done{inFlight};  // counted down when the job has returned
            const auto result = job(stop);
            if (stop.requested()) return;
            // The queued call checks the generation through its own shared pointer first:
            // `this` is touched only while the job is current, i.e. before cancel()/destruction.
            auto generation = stop.generation_;
            QMetaObject::invokeMethod(
                    context_,
                    [this, generation, id = stop.id_, deliver, result]() {
                        if (generation->load() != id) return;  // stale: a newer job or cancel()
                        running_ = false;
                        deliver(result);
                    },
                    Qt::QueuedConnection);
        });
        return id;
    }

    // Posts fn() to the GUI thread while job `stop` is current (for progress reports).
    template <typename Fn>
    void post(const Stop& stop, Fn fn) {
        if (stop.requested()) return;
        auto generation = stop.generation_;
        QMetaObject::invokeMethod(
                context_,
                [generation, id = stop.id_, fn]() {
                    if (generation->load() == id) fn();
                },
                Qt::QueuedConnection);
    }

    // Cancels the current job; its result will be dropped. Does not wait.
    void cancel() {
        ++*generation_;
        running_ = false;
    }
    // True from start() until the current job's result was delivered or it was cancelled.
    bool isRunning() const { return running_; }
    // Blocks until every job of this tracker, current or superseded, has returned. For shutdown and tests.
    void waitForDone() {
        std::unique_lock<std::mutex> lock(inFlight_->mutex);
        inFlight_->zero.wait(lock, [&] { return inFlight_->count == 0; });
    }

private:
    // This tracker's jobs not yet returned (the pool is shared, so its own waitForDone would wait for others).
    struct InFlight {
        std::mutex mutex;
        std::condition_variable zero;
        int count = 0;
        struct Done {
            std::shared_ptr<InFlight> in;
            ~Done() {
                const std::lock_guard<std::mutex> lock(in->mutex);
                if (--in->count == 0) in->zero.notify_all();
            }
        };
    };

    QObject* context_;
    QThreadPool* pool_;
    std::shared_ptr<InFlight> inFlight_ = std::make_shared<InFlight>();
    std::shared_ptr<std::atomic<quint64>> generation_ = std::make_shared<std::atomic<quint64>>(0);
    bool running_ = false;  // GUI thread only
};
