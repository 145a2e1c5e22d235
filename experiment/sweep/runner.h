#pragma once
// The worker threads of `dlsim sweep --jobs N`: a shared counter hands out the next task to whichever thread is
// free, so long and short points balance themselves; tasks are started in order (task 0 first).
#include <atomic>
#include <cstddef>
#include <functional>

namespace dlsim {

// Calls work(i) for every i in [0, count) on `jobs` threads (jobs <= 1: on the calling thread). Once *stop is
// set (Ctrl-C), no further task starts and the ones under way finish. The first exception thrown by a task stops
// the handing out too and is rethrown here after every thread has finished.
void run_on_threads(size_t count, int jobs, const std::function<void(size_t)>& work,
                    const std::atomic<bool>* stop = nullptr);

// The number of cores (std::thread::hardware_concurrency, at least 1): --jobs's default.
int core_count();

}  // namespace dlsim
