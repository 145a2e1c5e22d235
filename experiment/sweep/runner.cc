#include "experiment/sweep/runner.h"

#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace dlsim {

void run_on_threads(size_t count, int jobs, const std::function<void(size_t)>& work, const std::atomic<bool>* stop) {
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr first_error;
  std::mutex error_mutex;
  auto worker = [&] {
    while (!failed.load() && !(stop && stop->load())) {
      const size_t i = next.fetch_add(1);
      if (i >= count) return;
      try {
        work(i);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(error_mutex);
        if (!first_error) first_error = std::current_exception();
        failed = true;
      }
    }
  };
  const size_t threads = jobs <= 1 ? 1 : std::min<size_t>(static_cast<size_t>(jobs), count);
  if (threads <= 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    pool.reserve(threads);
    for (size_t t = 0; t < threads; ++t) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
  }
  if (first_error) std::rethrow_exception(first_error);
}

int core_count() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

}  // namespace dlsim
