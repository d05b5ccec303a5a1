// The files the injection library writes (graph documents, the index),
// formatted and written on a thread of its own, in the order they were
// asked for: the application's thread only walks its graph, and what can
// leave it (JSON formatting, writing) does. drain() waits for everything
// asked so far (at exit). In a child made by fork() without exec there is no
// writer thread: there each job runs at once, on the caller's thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace graphscope::inject {

class Writer {
 public:
  using Job = std::function<void()>;

  Writer();
  /// Runs job on the writer thread, after every job posted before it. A job
  /// must not throw (exceptions are swallowed) nor take the caller's locks.
  void post(Job job) noexcept;
  /// Returns once every job posted so far has run.
  void drain() noexcept;
  /// On: the thread runs its jobs only where a CPU is idle (SCHED_IDLE),
  /// from its next job on; whoever waits for one leaves a CPU to it.
  void set_background(bool on) noexcept;

 private:
  void run() noexcept;
  static void before_fork();
  static void after_fork_in_parent();
  static void after_fork_in_child();

  std::mutex m_;
  std::condition_variable wake_, idle_;
  std::deque<Job> jobs_;
  bool busy_ = false;
  bool started_ = false;  // the writer thread runs
  bool forked_ = false;   // this process is a child made by fork(): no thread
  std::atomic<bool> background_{false};
};

/// The one writer of this process (never destroyed: the application's own
/// static destructors may still call into the injection library).
Writer& writer();
/// The thread that walks graphs the application has destroyed
/// (walks_at_destroy.cc): a second Writer, so that a walk never waits behind
/// a file being written.
Writer& walker();

}  // namespace graphscope::inject
