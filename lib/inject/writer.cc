#include "writer.h"

#include <pthread.h>
#include <unistd.h>

namespace graphscope::inject {

Writer& writer() {
  static Writer* w = new Writer;
  return *w;
}

Writer::Writer() {
  // fork() while the writer thread holds the lock would leave the child's
  // copy locked forever: hold it across fork, and let the child start over.
  pthread_atfork(&Writer::before_fork, &Writer::after_fork_in_parent, &Writer::after_fork_in_child);
}

void Writer::before_fork() { writer().m_.lock(); }
void Writer::after_fork_in_parent() { writer().m_.unlock(); }
void Writer::after_fork_in_child() {
  Writer& w = writer();
  w.jobs_.clear();  // the parent's: it writes them
  w.busy_ = false;
  w.started_ = false;
  w.forked_ = true;  // no writer thread in this process: jobs run at once
  w.m_.unlock();
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

void Writer::run() noexcept {
  std::unique_lock<std::mutex> lock(m_);
  for (;;) {
    wake_.wait(lock, [&] { return !jobs_.empty(); });
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
