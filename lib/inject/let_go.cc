// Letting go of CUPTI: for good when the application subscribes itself
// (stand_down) or GRAPHSCOPE_MAX_GRAPHS graphs are dumped (let_go); when the
// process goes idle, until it begins its next graph, where the preload
// library sees that and graphscope takes CUPTI back (rest, take_back,
// watch_idle). While any subscriber is attached, every graph launch costs
// the application more.
#include <cupti.h>
#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>

#include "capture/origin.h"
#include "injection.h"
#include "writer.h"

namespace graphscope::inject::internal {

// The application subscribes to CUPTI itself (the PyTorch profiler, say):
// CUPTI takes one subscriber, so graphscope lets go, once and for the rest
// of the process, and says so. What it dumped so far stays.
void Injection::stand_down(const char* who) noexcept {
  if (forked_child) return;
  resolve_all();  // while CUPTI's fences still come
  std::lock_guard<std::mutex> taking(take_back_m_);
  // A let go's cuptiFinalize still queued must not end the application's
  // own subscription: it runs first. Waited for without m_ (it may wait
  // for a callback that waits for m_); a let go cannot be queued while m_
  // is held.
  std::unique_lock<std::mutex> lock(m_, std::defer_lock);
  for (;;) {
    wait_detached();
    lock.lock();
    std::lock_guard<std::mutex> d(detach_m_);
    if (!detaching_) break;
    lock.unlock();
  }
  if (stood_down_) return;
  stood_down_ = true;
  stood_down_why_ = std::string("the application subscribed to CUPTI itself (") + who +
                    ", e.g. the PyTorch profiler); graphscope let go of CUPTI and stopped attaching here";
  if (resting_) {  // already let go of it
    resting_ = false;
    preload_rest(false);
    write_index();
    return;
  }
  if (!attached_) return;  // not started yet: initialize() will say it
  try {
    if (collector_.running()) {
      collector_.stop();
      stopped_trace_ = collector_.take();
      have_stopped_trace_ = true;
    }
  } catch (...) {
  }
  capture::OriginRecorder::instance().unsubscribing();
  cuptiUnsubscribe(subscriber_);
  attached_ = false;
  say(stood_down_why_);
  write_index();
}

// GRAPHSCOPE_MAX_GRAPHS graphs dumped, nothing to profile: graphscope has
// nothing left to do, and while any CUPTI subscriber is attached every
// graph launch costs the application more (bench/replay_subscriber.cu:
// 0.3-0.5 us a node of the launch call, on an H200; only cuptiFinalize
// gives it back). For good. Under m_.
void Injection::let_go(const std::string& why) {
  stood_down_ = true;
  stood_down_why_ = why +
                    ": graphscope let go of CUPTI so that the rest of the run is not slowed; "
                    "later graphs and updates are not recorded";
  write_index();
  detach();
  if (!config().quiet) say(stood_down_why_);
}

// Unsubscribes and finalizes CUPTI on the writer thread, after the files
// queued before: never from inside a callback. Under m_.
void Injection::detach() {
  {
    std::lock_guard<std::mutex> lock(detach_m_);
    detaching_ = true;
  }
  launch_callbacks_ = false;
  writer().post([this, sub = subscriber_] {
    capture::OriginRecorder::instance().unsubscribing();
    cuptiUnsubscribe(sub);
    cuptiFinalize();  // unsubscribing alone leaves launches as slow (measured)
    {
      std::lock_guard<std::mutex> lock(detach_m_);
      detaching_ = false;
    }
    detached_.notify_all();
  });
}

void Injection::wait_detached() {
  std::unique_lock<std::mutex> lock(detach_m_);
  detached_.wait(lock, [&] { return !detaching_; });
}

// The preload library's switch (lib/inject/preload.cc): on while
// graphscope rests, so that the application's next graph calls
// take_back() first. False when the library is not loaded.
bool Injection::preload_rest(bool on) {
  using Fn = void (*)(int);
  static Fn f = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "graphscope_preload_rest"));
  if (f) f(on ? 1 : 0);
  return f != nullptr;
}

// Whether this thread is inside a call of the preload library's (a graph
// instantiated or changed there is one it would see while graphscope
// rests). False when the library is not loaded.
bool Injection::preload_seen() {
  using Fn = int (*)();
  static Fn f = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "graphscope_preload_seen"));
  return f && f() != 0;
}

// What the preload library did not see, the first time. Under m_.
void Injection::unseen(const std::string& what) {
  if (!unseen_why_.empty()) return;
  unseen_why_ = what +
                " through a call the preload library does not see (a statically linked CUDA runtime, "
                "or libcuda reached through pointers of its own)";
}

// GRAPHSCOPE_LET_GO_AFTER seconds without a new graph or version: let go
// of CUPTI until the application begins its next graph (take_back), where
// the preload library can see that; else for good, as let_go(). The exec
// graphs dumped so far are no longer followed: their updates while
// resting are not seen, so no later version could be trusted. Under m_.
void Injection::rest(const std::string& why) {
  if (!preload_rest(false)) {  // (off already: this only asks whether it is there)
    let_go(why + " (the preload library that would take it back is not loaded)");
    return;
  }
  const bool shared_runtime = runtime_covered();
  for (auto& [exec, l] : live_) new_version(l);  // changes gathered so far are a version
  // Where every graph and update so far came through the preload
  // library's calls, the exec graphs stay followed: an update through
  // them takes CUPTI back before it is made. Else updates could come
  // unseen, and no later version could be trusted.
  const bool follow = unseen_why_.empty();
  if (!follow) live_.clear();
  resting_ = true;
  ++let_go_count_;
  rest_why_ =
      why +
      ": graphscope let go of CUPTI so that replays are not slowed; it takes CUPTI back when the "
      "process next begins a capture, creates, instantiates or updates a graph through the shared CUDA "
      "runtime (libcudart.so) or libcuda's own functions" +
      (shared_runtime ? std::string()
                      : std::string(" (this process has no libcudart.so loaded: graphs its statically "
                                    "linked CUDA runtime makes are not recorded)")) +
      (follow
           ? std::string("; every graph and update so far came through those calls, so updates of graphs "
                         "dumped before are recorded when they come through them too")
           : "; updates of graphs dumped before are not recorded (" + unseen_why_ + ")");
  write_index();
  detach();
  preload_rest(true);
  if (!config().quiet) say(rest_why_);
}

// The preload library saw the application begin a graph (`call`) while
// graphscope rests: subscribe to CUPTI again before the call goes on, so
// that its nodes and instantiation are seen. On the application's thread;
// threads that begin graphs at once wait for the first.
void Injection::take_back(const char* call) noexcept {
  if (forked_child || finished_) return;
  std::lock_guard<std::mutex> taking(take_back_m_);
  {
    std::lock_guard<std::mutex> lock(m_);
    if (!resting_ || stood_down_) return;
    // Callbacks go on from here; the idle clock starts again once CUPTI
    // is back (watch_idle waits while taking_back_).
    resting_ = false;
    taking_back_ = true;
  }
  wait_detached();
  std::string why;
  try {
    why = subscribe();  // not under m_: a callback it brings on may take it
  } catch (...) {
    why = "unknown error";
  }
  // Only now: another thread beginning a graph meanwhile waited above for
  // CUPTI (take_back_m_), and goes on without asking once this is off.
  preload_rest(false);
  std::lock_guard<std::mutex> lock(m_);
  taking_back_ = false;
  last_graph_ = std::chrono::steady_clock::now();
  if (why.empty()) {
    ++taken_back_count_;
    if (!config().quiet) say(std::string("took CUPTI back (") + call + ")");
  } else {
    stood_down_ = true;
    stood_down_why_ =
        "graphscope could not take CUPTI back after a let go (" + why + "); later graphs are not recorded";
    say(stood_down_why_);
  }
  idle_.notify_all();
  write_index();
}

// GRAPHSCOPE_LET_GO_AFTER (capture --exec --let-go-after): a thread of
// graphscope's that rests once the process has gone that long without a
// new exec graph or version, after its first (a server's start-up is
// over), so that CUPTI stops slowing its replays, and again after each
// take_back. It only ever waits, on m_, for a deadline that each graph
// moves.
void Injection::watch_idle() {
  const bool forced = config().let_go_after_s > 0;
  const auto idle = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(forced ? config().let_go_after_s : config().rest_after_s));
  std::unique_lock<std::mutex> lock(m_);
  while (!finished_ && !stood_down_) {
    if (resting_ || taking_back_ || last_graph_ == std::chrono::steady_clock::time_point{}) {
      idle_.wait_for(lock, idle);  // resting (take_back wakes it), or no graph yet
      continue;
    }
    if (deferred_n_.load()) {  // a walk still to do needs CUPTI's fences
      idle_.wait_for(lock, std::chrono::milliseconds(50));
      continue;
    }
    if (std::chrono::steady_clock::now() >= last_graph_ + idle) {
      char s[96];
      if (forced) {
        std::snprintf(s, sizeof s, "GRAPHSCOPE_LET_GO_AFTER (%g s) without a new graph",
                      config().let_go_after_s);
      } else {
        // Unasked, only where nothing would be lost.
        std::string stay;
        if (!preload_rest(false))
          stay =
              "the preload library (libgraphscope_preload.so), which would take CUPTI back, is not loaded";
        else if (!unseen_why_.empty())
          stay = unseen_why_;
        if (!stay.empty()) {
          stays_why_ =
              "graphscope stays attached to CUPTI, which slows every graph launch, instead of letting go "
              "when the process is idle: " +
              stay + "; --let-go-after lets go anyway";
          write_index();
          return;
        }
        std::snprintf(s, sizeof s, "%g s without a new graph or update", config().rest_after_s);
      }
      rest(s);
      continue;
    }
    idle_.wait_until(lock, last_graph_ + idle);
  }
}

}  // namespace graphscope::inject::internal
