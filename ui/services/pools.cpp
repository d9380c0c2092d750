#include "services/pools.h"

#include <QThread>
#include <QThreadPool>

#include <algorithm>

QThreadPool* modelRunPool() {
    static QThreadPool* pool = [] {
        auto* p = new QThreadPool;  // never deleted: jobs may run until the program ends
        p->setMaxThreadCount(3);
        return p;
    }();
    return pool;
}

QThreadPool* mapPool() {
    static QThreadPool* pool = [] {
        auto* p = new QThreadPool;
        p->setMaxThreadCount(std::max(2, QThread::idealThreadCount()));
        return p;
    }();
    return pool;
}
