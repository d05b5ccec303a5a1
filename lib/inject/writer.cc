#include "writer.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>

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
// Every Writer of the process (two: never destroyed), for the fork handlers.
Writer* all_writers[2];
std::atomic<int> writers{0};
}  // namespace

Writer::Writer() {
  // fork() while a thread holds the lock would leave the child's copy
  // locked forever: hold it across fork, and let the child start over.
  const int i = writers.fetch_add(1);
  if (i < 2) all_writers[i] = this;
  if (i == 0)
    pthread_atfork(&Writer::before_fork, &Writer::after_fork_in_parent, &Writer::after_fork_in_child);
}

void Writer::before_fork() {
  for (int i = 0; i < writers.load() && i < 2; ++i) all_writers[i]->m_.lock();
}
void Writer::after_fork_in_parent() {
  for (int i = std::min(writers.load(), 2) - 1; i >= 0; --i) all_writers[i]->m_.unlock();
}
void Writer::after_fork_in_child() {
  for (int i = std::min(writers.load(), 2) - 1; i >= 0; --i) {
    Writer& w = *all_writers[i];
    w.jobs_.clear();  // the parent's: it does them
    w.busy_ = false;
    w.started_ = false;
    w.forked_ = true;  // no thread in this process: jobs run at once
    w.m_.unlock();
  }
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
