// Splitting independent work over the machine's cores: large graphs and
// traces are formatted, parsed and analysed in slices, one thread each.
#pragma once

#include <algorithm>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace graphscope {

/// How many threads to use for `items` items when slices below `min_per_thread`
/// are not worth a thread: 1 up to hardware_concurrency, at most `most`.
inline unsigned worker_count(size_t items, size_t min_per_thread, unsigned most = 8) {
  unsigned hw = std::min(most, std::max(1u, std::thread::hardware_concurrency()));
  size_t useful = min_per_thread ? items / min_per_thread : items;
  return unsigned(std::max<size_t>(1, std::min<size_t>(hw, useful)));
}

/// Calls body(worker, begin, end) for `workers` contiguous slices of
/// [0, count), worker 0 on the calling thread. The first exception thrown by
/// any slice is rethrown here once all have finished.
template <typename Body>
void parallel_slices(size_t count, unsigned workers, Body body) {
  if (workers <= 1 || count < 2) {
    body(0u, size_t(0), count);
    return;
  }
  std::exception_ptr first;
  std::mutex m;
  auto run = [&](unsigned w) {
    try {
      body(w, count * w / workers, count * (w + 1) / workers);
    } catch (...) {
      std::lock_guard<std::mutex> lock(m);
      if (!first) first = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(workers - 1);
  for (unsigned w = 1; w < workers; ++w) pool.emplace_back(run, w);
  run(0);
  for (auto& t : pool) t.join();
  if (first) std::rethrow_exception(first);
}

/// Runs side() on a thread of its own while the calling thread runs main(),
/// and returns when both have finished. If either threw, side()'s exception
/// is rethrown first (as if it had run first), else main()'s.
template <typename Side, typename Main>
void run_beside(Side side, Main main) {
  std::exception_ptr side_error, main_error;
  std::thread t([&] {
    try {
      side();
    } catch (...) {
      side_error = std::current_exception();
    }
  });
  try {
    main();
  } catch (...) {
    main_error = std::current_exception();
  }
  t.join();
  if (side_error) std::rethrow_exception(side_error);
  if (main_error) std::rethrow_exception(main_error);
}

}  // namespace graphscope
