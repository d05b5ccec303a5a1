#include "writer.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <mutex>

namespace graphscope::inject {

Writer& writer() {
  static Writer* w = new Writer;
  return *w;
}

Writer& walker() {
  static Writer* w = new Writer;
  return *w;
}

namespace {
// Every Writer of the process (two: never destroyed), for the fork handlers;
// registered under writers_m, the count published after the pointer.
Writer* all_writers[2];
std::atomic<int> writers{0};
std::mutex writers_m;
int held = 0;  // how many before_fork locked (the forking thread's)
}  // namespace

Writer::Writer() {
  // fork() while a thread holds the lock would leave the child's copy
  // locked forever: hold it across fork, and let the child start over.
  std::lock_guard<std::mutex> lock(writers_m);
  const int i = writers.load();
  if (i >= 2) return;  // (never: there are two)
  all_writers[i] = this;
  writers.store(i + 1, std::memory_order_release);
  if (i == 0)
    pthread_atfork(&Writer::before_fork, &Writer::after_fork_in_parent, &Writer::after_fork_in_child);
}

void Writer::before_fork() {
  writers_m.lock();  // no Writer made meanwhile
  held = writers.load(std::memory_order_acquire);
  for (int i = 0; i < held; ++i) all_writers[i]->m_.lock();
}
void Writer::after_fork_in_parent() {
  for (int i = held - 1; i >= 0; --i) all_writers[i]->m_.unlock();
  writers_m.unlock();
}
void Writer::after_fork_in_child() {
  for (int i = held - 1; i >= 0; --i) {
    Writer& w = *all_writers[i];
    w.jobs_.clear();  // the parent's: it does them
    w.busy_ = false;
    w.started_ = false;
    w.forked_ = true;  // no thread in this process: jobs run at once
    w.m_.unlock();
  }
  writers_m.unlock();
}

void Writer::post(Job job) noexcept {
  try {
    std::unique_lock<std::mutex> lock(m_);
    if (!started_ && !forked_) {
      std::thread(&Writer::run, this).detach();
      started_ = true;
    }
    if (started_) {
      jobs_.push_back(std::move(job));
      wake_.notify_one();
      return;
    }
  } catch (...) {
  }
  try {  // a forked child, or no thread could be started: do it here
    job();
  } catch (...) {
  }
}

void Writer::drain() noexcept {
  std::unique_lock<std::mutex> lock(m_);
  if (!started_) return;
  idle_.wait(lock, [&] { return jobs_.empty() && !busy_; });
}

void Writer::set_background(bool on) noexcept {
  background_.store(on, std::memory_order_relaxed);
}

void Writer::run() noexcept {
  bool background = false;
  std::unique_lock<std::mutex> lock(m_);
  for (;;) {
    wake_.wait(lock, [&] { return !jobs_.empty(); });
    if (const bool b = background_.load(std::memory_order_relaxed); b != background) {
      sched_param p{};
      pthread_setschedparam(pthread_self(), b ? SCHED_IDLE : SCHED_OTHER, &p);
      background = b;
    }
    Job job = std::move(jobs_.front());
    jobs_.pop_front();
    busy_ = true;
    lock.unlock();
    try {
      job();
    } catch (...) {
    }
    lock.lock();
    busy_ = false;
    if (jobs_.empty()) idle_.notify_all();
  }
}

}  // namespace graphscope::inject
