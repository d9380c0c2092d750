// For the self-test of check_jobs.cmake: a panel that runs its own thread, which it must report.
#pragma once

#include <thread>

struct Worker {
    std::thread thread;
};
