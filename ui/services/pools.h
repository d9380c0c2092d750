// The thread pools every service's JobTracker runs on, shared by the whole window instead of one
// pool per tracker: model runs (loading, forwards, re-runs, fits, generation: heavy in memory, so
// few at once) and maps (maps, thumbnails, metrics, views: many short jobs, one per core). Both
// live until the program ends; a tracker waits only for its own jobs (jobtracker.h).
#pragma once

class QThreadPool;

QThreadPool* modelRunPool();  // at most 3 threads
QThreadPool* mapPool();       // one thread per core, at least 2
