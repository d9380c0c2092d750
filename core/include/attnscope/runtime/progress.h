#pragma once

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>

namespace attnscope {

// Called between compute steps with (done, total) in the step's own units. Returning false asks
// the computation to stop; it then throws attnscope::Cancelled. May be called from any thread.
using Progress = std::function<bool(long long done, long long total)>;

// Time left of a job from the rate of its steps so far (the GUI's bars and the CLI's --progress).
// Measured from the first report, so the wait before the first step (loading, a queued job)
// does not count as work. Not thread-safe: one per job.
class ProgressClock {
public:
    // Seconds left after `done` of `total` steps, or < 0 while no step has finished since the
    // first report.
    double secondsLeft(long long done, long long total) {
        const auto now = std::chrono::steady_clock::now();
        if (firstDone_ < 0 || done < firstDone_) {
            firstDone_ = done;
            start_ = now;
        }
        if (done <= firstDone_ || total <= done) return done >= total && total > 0 ? 0.0 : -1.0;
        const double elapsed = std::chrono::duration<double>(now - start_).count();
        return elapsed / static_cast<double>(done - firstDone_) * static_cast<double>(total - done);
    }
    // "7 s", "2 min 05 s", "1 h 03 min".
    static std::string format(double seconds) {
        char text[32];
        const long long s = static_cast<long long>(seconds + 0.5);
        if (s < 60)
            std::snprintf(text, sizeof text, "%lld s", s);
        else if (s < 3600)
            std::snprintf(text, sizeof text, "%lld min %02lld s", s / 60, s % 60);
        else
            std::snprintf(text, sizeof text, "%lld h %02lld min", s / 3600, (s % 3600) / 60);
        return text;
    }

private:
    long long firstDone_ = -1;
    std::chrono::steady_clock::time_point start_;
};

}  // namespace attnscope
