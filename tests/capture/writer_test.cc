// lib/inject/writer.h: the injection library's writer thread.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "inject/writer.h"

using graphscope::inject::writer;

TEST_CASE("the writer runs jobs off the caller's thread, in order, and drain waits for them") {
  std::mutex m;
  std::vector<int> order;
  const auto caller = std::this_thread::get_id();
  std::atomic<bool> off_thread{true};
  for (int i = 0; i < 200; ++i)
    writer().post([&, i] {
      if (std::this_thread::get_id() == caller) off_thread = false;
      if (i == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the caller is not held up
      std::lock_guard<std::mutex> lock(m);
      order.push_back(i);
    });
  {
    std::lock_guard<std::mutex> lock(m);
    CHECK(order.size() < 200);  // still queued behind the first job's sleep
  }
  writer().drain();
  CHECK(off_thread);
  REQUIRE(order.size() == 200);
  for (int i = 0; i < 200; ++i) CHECK(order[size_t(i)] == i);
  writer().post([] { throw 1; });  // a throwing job is swallowed
  writer().drain();
}

TEST_CASE("in a child made by fork() the writer runs each job at once, and the parent's queue is not run there") {
  std::atomic<int> parent_ran{0};
  writer().post([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ++parent_ran;
  });
  writer().post([&] { ++parent_ran; });
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    bool ran = false;
    writer().post([&] { ran = true; });  // inline: done when post returns
    writer().drain();                    // no thread to wait for: returns at once
    _exit(ran && parent_ran.load() == 0 ? 0 : 1);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  writer().drain();
  CHECK(parent_ran.load() == 2);
}

TEST_CASE(
    "the walker is a second writer: both survive fork() while busy, and run in the background when asked") {
  using graphscope::inject::walker;
  walker().set_background(true);  // SCHED_IDLE from its next job on: still runs where a CPU is idle
  std::atomic<int> parent_ran{0};
  for (auto* w : {&writer(), &walker()}) {
    w->post([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      ++parent_ran;
    });
  }
  for (int round = 0; round < 3; ++round) {  // forks while both threads hold jobs
    pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      int ran = 0;
      writer().post([&] { ++ran; });
      walker().post([&] { ++ran; });
      writer().drain();
      walker().drain();
      _exit(ran == 2 ? 0 : 1);
    }
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  std::atomic<bool> on_walker{false};
  walker().post([&] { on_walker = true; });
  writer().drain();
  walker().drain();
  CHECK(parent_ran.load() == 2);
  CHECK(on_walker.load());
  walker().set_background(false);
}
