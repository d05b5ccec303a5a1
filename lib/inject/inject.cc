// libgraphscope_inject.so: the CUDA injection library that attaches
// graphscope to an unmodified application. The driver loads it through
// CUDA_INJECTION64_PATH at cuInit and calls InitializeInjection(); from then
// on, every graph the process instantiates is walked with lib/capture's
// walker, the one `graphscope capture` uses, and written as one
// graphscope.graph/1 document. The walk happens at
// CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED (while its template is still alive,
// whatever the application does with it afterwards), or, where the preload
// library sees the shared CUDA runtime's calls, once the application
// destroys the template, on a thread of graphscope's (walks at destroy,
// below). With profiling on, CUPTI activity tracing
// runs for the whole process and the replays in a window are analysed at
// exit like `graphscope profile` does.
//
// Configured by the environment (`graphscope capture --exec` sets it; the
// variables are AttachConfig's, lib/inspect/runs/attach_session.h). What to dump,
// what to skip, which launches to analyse and the process index are the
// CUDA-free AttachSession's decisions; this file is the CUPTI adapter.
//
// Rules: nothing here may crash, block or change the behaviour of the host
// application. Every callback catches everything; errors are written into
// the index and said once on stderr. The hot path (a graph launch) takes one
// uncontended lock and one hash lookup. The walks at destroy run on the
// walker thread, formatting and writing the documents and the index on the
// writer thread (writer.h), both only where a CPU is idle.
#include <cuda.h>
#include <cupti.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "capture/activity.h"
#include "capture/clock.h"
#include "capture/exec_update.h"
#include "capture/origin.h"
#include "capture/walk.h"
#include "inspect/runs/attach_session.h"
#include "inspect/formats/chrome_trace.h"
#include "inspect/core/demangle.h"
#include "inspect/core/error.h"
#include "inspect/model/exec_update.h"
#include "inspect/formats/graph_json.h"
#include "inspect/core/io.h"
#include "inspect/analysis/profile.h"
#include "inspect/formats/profile_json.h"
#include "inspect/render/profile_report.h"
#include "writer.h"

namespace graphscope::inject {

/// A function of the libcupti this library is linked with, looked up in
/// that very object (by the address of a function graphscope does not
/// define), past the interposers at the end of this file.
void* cupti_symbol(const char* name) {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cuptiGetResultString), &info) && info.dli_fname)
    if (void* h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD))
      if (void* f = dlsym(h, name)) return f;
  return dlsym(RTLD_NEXT, name);
}

namespace {

// This process's command line, from /proc (the application's argv is not
// ours to see otherwise).
std::vector<std::string> command_line() {
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  std::string a;
  while (std::getline(f, a, '\0')) args.push_back(a);
  return args;
}

// Set in a child that fork() made without exec: it has the parent's state
// but none of its threads (the writer), CUPTI and CUDA are not usable there,
// and its directory is the parent's. Everything stays quiet in such a child.
std::atomic<bool> forked_child{false};

// Set on the walker thread (walks at destroy): its own CUDA calls are not
// the application's, and never wait for a walk.
thread_local bool t_walker = false;

// GRAPHSCOPE_DEBUG_TIMES=1: the time the application's threads spent in
// graphscope's callbacks, by kind, said on stderr at exit (to find where an
// attached run's overhead goes; off, it costs one branch per callback).
struct CallbackTimes {
  enum Kind {
    exec_created,
    origins_api,
    origins_created,
    origins_copies,
    origins_resource,
    origins_nvtx,
    other,
    kinds
  };
  std::atomic<uint64_t> ns[kinds] = {}, calls[kinds] = {};
  // The same at the end of the first exec graph's callback: a process's
  // first capture warms every cache (and PyTorch's own), so the later
  // graphs are what a server's hundredth capture costs.
  uint64_t first_ns[kinds] = {}, first_calls[kinds] = {};
  std::atomic<int> graphs{0};
  // The walks' phases (walks run one at a time, under the attacher's lock).
  capture::WalkPhases walk, first_walk;
  // The models made from them on the writer thread (only it touches these).
  capture::WalkPhases built, first_built;
  int builds = 0;
  void build_done() {
    if (builds++ == 0) first_built = built;
  }
  const bool on = [] {
    const char* e = std::getenv("GRAPHSCOPE_DEBUG_TIMES");
    return e && std::strcmp(e, "1") == 0;
  }();
  static uint64_t now() { return capture::monotonic_ns(); }
  void add(Kind k, uint64_t since) {
    ns[k] += now() - since;
    ++calls[k];
  }
  // The kind of a callback that origins took.
  static Kind origins_kind(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
    if (domain == CUPTI_CB_DOMAIN_NVTX) return origins_nvtx;
    if (domain != CUPTI_CB_DOMAIN_RESOURCE) return origins_api;
    if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED) return origins_copies;
    if (cbid != CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED) return origins_resource;
    return capture::OriginRecorder::instance().copying() ? origins_copies : origins_created;
  }
  // After an exec graph's callback (walks are one at a time).
  void graph_done() {
    if (graphs.fetch_add(1) != 0) return;
    for (int k = 0; k < kinds; ++k) {
      first_ns[k] = ns[k].load();
      first_calls[k] = calls[k].load();
    }
    first_walk = walk;
  }
  void say(int pid) const {
    static const char* const names[] = {"exec created (walk)",
                                        "origins: API calls",
                                        "origins: nodes made",
                                        "origins: copies, clones",
                                        "origins: other resources",
                                        "origins: NVTX",
                                        "other"};
    const int later = graphs.load() - 1;
    std::fprintf(stderr, "graphscope: pid %d: %-24s %8s %10s   %s\n", pid, "callbacks", "calls", "all",
                 later > 0 ? "each graph after the first" : "");
    for (int k = 0; k < kinds; ++k) {
      std::fprintf(stderr, "graphscope: pid %d: %-24s %8llu %10.3f ms", pid, names[k],
                   (unsigned long long)calls[k].load(), double(ns[k].load()) / 1e6);
      if (later > 0)
        std::fprintf(stderr, " %10.3f ms (%llu calls)", double(ns[k].load() - first_ns[k]) / 1e6 / later,
                     (unsigned long long)(calls[k].load() - first_calls[k]) / unsigned(later));
      std::fputc('\n', stderr);
    }
    const auto reads = capture::OriginRecorder::instance().read_counts();
    std::fprintf(stderr,
                 "graphscope: pid %d:   Python stack reads: %llu from the caches (%llu the capture before's, "
                 "%llu the stack before, %llu made from known facts), %llu in full, %llu by the proxy, %llu "
                 "given up; %s\n",
                 pid, (unsigned long long)reads.cached, (unsigned long long)reads.prior,
                 (unsigned long long)reads.same, (unsigned long long)reads.made,
                 (unsigned long long)reads.full, (unsigned long long)reads.proxied,
                 (unsigned long long)reads.late,
                 capture::OriginRecorder::instance().reads_at_entry() ? "at the entry of launches"
                                                                      : "where nodes are made");
    const uint64_t answered = reads.prior + reads.same;
    std::fprintf(
        stderr,
        "graphscope: pid %d:   reads through the caches: %.3f ms in all; stacks met before: %.2f compared "
        "a read, %.1f frames a stack that answered; of the time, %.3f ms waiting for the lock, %.3f ms "
        "comparing stacks; %.3f ms recording nodes\n",
        pid, double(reads.ns) / 1e6, reads.cached ? double(reads.tries) / double(reads.cached) : 0.0,
        answered ? double(reads.frames) / double(answered) : 0.0, double(reads.lock_ns) / 1e6,
        double(reads.compare_ns) / 1e6, double(reads.record_ns) / 1e6);
    std::fprintf(
        stderr,
        "graphscope: pid %d:   reads through the caches by how they ended: %.3f ms the capture before's "
        "(%.2f us each), %.3f ms the stack before's (%.2f us), %.3f ms walks (%.2f us), %.3f ms not "
        "answered\n",
        pid, double(reads.path_ns[1]) / 1e6,
        reads.prior ? double(reads.path_ns[1]) / 1e3 / double(reads.prior) : 0.0,
        double(reads.path_ns[2]) / 1e6,
        reads.same ? double(reads.path_ns[2]) / 1e3 / double(reads.same) : 0.0,
        double(reads.path_ns[3]) / 1e6,
        reads.cached > answered ? double(reads.path_ns[3]) / 1e3 / double(reads.cached - answered) : 0.0,
        double(reads.path_ns[0]) / 1e6);
    for (int p = 0; p < capture::WalkPhases::phases; ++p) {
      std::fprintf(stderr, "graphscope: pid %d:   walk: %-16s %10.3f ms", pid, capture::WalkPhases::name(p),
                   double(walk.ns[p]) / 1e6);
      if (later > 0) std::fprintf(stderr, " %10.3f ms", double(walk.ns[p] - first_walk.ns[p]) / 1e6 / later);
      std::fputc('\n', stderr);
    }
    const int fill = capture::WalkPhases::fill;
    std::fprintf(stderr,
                 "graphscope: pid %d:   off the application's thread: the model of %d graphs %10.3f ms", pid,
                 builds, double(built.ns[fill]) / 1e6);
    if (builds > 1)
      std::fprintf(stderr, " %10.3f ms", double(built.ns[fill] - first_built.ns[fill]) / 1e6 / (builds - 1));
    std::fputc('\n', stderr);
  }
};
CallbackTimes& callback_times() {
  static CallbackTimes* t = new CallbackTimes;
  return *t;
}

// A dumped graph's document, made on the writer thread from its walk's
// answers (capture::QueriedGraph): whoever needs it (an update of its exec
// graph, the profile at exit) waits for it. Null when it could not be made
// (the index says why).
class DocSlot {
 public:
  static std::shared_ptr<DocSlot> holding(std::shared_ptr<const GraphDocument> doc) {
    auto s = std::make_shared<DocSlot>();
    s->set(std::move(doc));
    return s;
  }
  void set(std::shared_ptr<const GraphDocument> doc) noexcept {
    {
      std::lock_guard<std::mutex> lock(m_);
      doc_ = std::move(doc);
      done_ = true;
    }
    cv_.notify_all();
  }
  std::shared_ptr<const GraphDocument> get() {
    std::unique_lock<std::mutex> lock(m_);
    cv_.wait(lock, [&] { return done_; });
    return doc_;
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  std::shared_ptr<const GraphDocument> doc_;
  bool done_ = false;
};

class Injection {
  // A dumped exec graph while it lives.
  struct Live {
    size_t g = 0;                                // index entry of its current version
    uint32_t version = 1;
    std::shared_ptr<DocSlot> doc;                // its current version's document
    std::vector<uint64_t> handles;               // the instantiated graph's root nodes, by index
    std::shared_ptr<GraphDocument> pending;      // the next version, while changes gather
    std::vector<std::string> pending_by;         // the calls that made them
    std::vector<std::string> pending_not_recorded;
    std::unordered_map<uint64_t, uint32_t> index_of;  // handles -> index, made at the first setter call
    bool capped = false;  // kMaxExecVersions reached: changes are no longer gathered
  };

 public:
  void initialize() {
    pthread_atfork(nullptr, nullptr, [] { forked_child = true; });
    std::vector<std::string> errors;
    AttachConfig from_env = attach_config_from([](const char* name) { return std::getenv(name); }, errors);
    pid_ = getpid();
    std::optional<AttachRank> rank = attach_rank_from([](const char* name) { return std::getenv(name); }, errors);
    session_.emplace(std::move(from_env), int64_t(pid_), command_line());
    session_->index().rank = rank;
    for (auto& e : errors) session_->error(std::move(e));
    if (!make_process_dir(rank)) {
      say("cannot create " + session_->dir() + " (" + std::strerror(errno) + "); not attaching");
      return;
    }
    dir_ = session_->dir();
    // journal.txt: a line per document queued for the writer, written at
    // once on the application's thread (a write(2) of a few bytes): if the
    // process is killed with documents still queued, `graphscope --exec`
    // can say which ones its last index does not list.
    journal_ = ::open((dir_ + "/journal.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0666);
    if (stood_down_) {
      attach_error_ = stood_down_why_;
      write_index();
      return;
    }
    using Defer = void (*)(int);
    auto preload_defer = reinterpret_cast<Defer>(dlsym(RTLD_DEFAULT, "graphscope_preload_defer"));
    defer_ = preload_defer && config().walk_at_destroy && config().max_graphs == 0;
    if (std::string why = subscribe(); !why.empty()) {
      attach_error_ = why;
      say(attach_error_);
      write_index();
      return;
    }
    attached_ = true;
    if (defer_) {
      preload_defer(1);
      // The walker and the writer only where a CPU is idle: beside a
      // capture, the application's threads (and origins' proxy) go first.
      // The writer's documents, once made after the walk instead of inside
      // the instantiation, ran into the next capture and slowed its stack
      // reads as much as the walk had cost (the Llama on 2 CPUs, H200,
      // 2026-11-27, BENCHMARKS.md). Whoever waits for either leaves a CPU.
      walker().set_background(true);
      writer().set_background(true);
    }
    write_index();
    std::atexit([] { instance().finish(); });
    if ((config().let_go_after_s > 0 || config().rest_after_s > 0) && !config().profile)
      std::thread([this] { watch_idle(); }).detach();
  }

  // Subscribes to CUPTI and enables graphscope's callbacks: when it
  // attaches, and again when it takes CUPTI back after a let go. Returns why
  // not, or "".
  std::string subscribe() {
    CUptiResult r = real_subscribe()(&subscriber_, &Injection::callback, this);
    if (r != CUPTI_SUCCESS) {
      const char* s = nullptr;
      cuptiGetResultString(r, &s);
      return r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
                 ? "CUPTI is in use by another tool (a profiler or another injection library); "
                   "graphscope stays out of the way"
                 : std::string("cuptiSubscribe failed: ") + (s ? s : "?");
    }
    bool ok = cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED) ==
                  CUPTI_SUCCESS &&
              cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RESOURCE,
                                  CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING) == CUPTI_SUCCESS;
    // Exec graphs changed after instantiation (rare calls: always on; a
    // driver without one of them just never makes it).
    if (ok)
      for (CUpti_CallbackId id : capture::exec_change_callbacks())
        cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, id);
    if (ok && config().profile) {
      ok = enable_launch_callbacks();
      try {
        // Its records converted only where a CPU is idle: beside a capture,
        // the converter slowed the application's threads (serving start-up,
        // 2026-11-27, BENCHMARKS.md).
        collector_.set_background(defer_);
        collector_.start();
      } catch (const Error& e) {
        profile_error_ = e.what();
        say(profile_error_ + "; graphs are dumped, not profiled");
      }
    }
    if (ok && defer_ && !enable_fences()) {
      // Without every fence a template could change before its walk.
      defer_ = false;
      say("walks at destroy are off (CUPTI refused a callback they need)");
    }
    if (ok && config().origins) {
      origins_ = capture::OriginRecorder::instance().enable(subscriber_);
      if (origins_ && callback_times().on) capture::OriginRecorder::instance().time_reads(true);
      if (!origins_) say("origins are not recorded (CUPTI refused the callbacks they need)");
    }
    if (!ok) {
      cuptiUnsubscribe(subscriber_);
      return "cuptiEnableCallback failed";
    }
    return {};
  }

  static Injection& instance() {
    static Injection* i = new Injection;  // never destroyed: callbacks may come late
    return *i;
  }

  using SubscribeFn = CUptiResult (*)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*);
  // CUPTI's own cuptiSubscribe, past graphscope's interposer below.
  static SubscribeFn real_subscribe() {
    static SubscribeFn f = reinterpret_cast<SubscribeFn>(cupti_symbol("cuptiSubscribe"));
    if (f) return f;
    return [](CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*) { return CUPTI_ERROR_NOT_INITIALIZED; };
  }

  // The application subscribes to CUPTI itself (the PyTorch profiler, say):
  // CUPTI takes one subscriber, so graphscope lets go, once and for the rest
  // of the process, and says so. What it dumped so far stays.
  void stand_down(const char* who) noexcept {
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

  // At exit: the profile of every graph, and the final index.
  void finish() noexcept {
    if (forked_child || finished_) return;
    resolve_all();  // the walks still to do, before the documents can be complete
    if (finished_.exchange(true)) return;
    // The documents still queued first, then the profiles and the final
    // index, written before the process ends.
    writer().drain();
    if (callback_times().on) {
      callback_times().say(int(pid_));
      std::lock_guard<std::mutex> l(dm_);
      std::fprintf(stderr,
                   "graphscope: pid %d:   walks at destroy: %s; %llu on the walker thread, %llu on the "
                   "application's at a fence, launch or exit\n",
                   int(pid_), defer_ ? "on" : "off", (unsigned long long)walked_at_destroy_,
                   (unsigned long long)walked_here_);
    }
    finish_locked();
    writer().drain();
  }

 private:
  void finish_locked() noexcept {
    std::lock_guard<std::mutex> lock(m_);
    try {
      for (auto& [exec, l] : live_) new_version(l);  // changes never launched are versions too
    } catch (const std::exception& e) {
      session_->error(std::string("versions at exit: ") + e.what());
    }
    try {
      if (collector_.running() || have_stopped_trace_) {
        if (collector_.running()) {
          collector_.stop();
          stopped_trace_ = collector_.take();
        }
        for (size_t g = 0; g < docs_.size(); ++g) profile_one(g, stopped_trace_);
        write_report_text();
      }
    } catch (const std::exception& e) {
      session_->error(std::string("profile at exit: ") + e.what());
    } catch (...) {
      session_->error("profile at exit: unknown error");
    }
    write_index();
  }

  static void CUPTIAPI callback(void* self, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
    auto* me = static_cast<Injection*>(self);
    if (forked_child) return;
    CallbackTimes& times = callback_times();
    const uint64_t t0 = times.on ? CallbackTimes::now() : 0;
    try {
      if (me->deferred_n_.load(std::memory_order_relaxed) && !t_walker) {
        if (domain == CUPTI_CB_DOMAIN_DRIVER_API)
          me->fence(cbid, static_cast<const CUpti_CallbackData*>(data));
        if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)
          me->resolve_all();
      }
      if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED)
        me->on_exec_created(static_cast<const CUpti_ResourceData*>(data));
      else if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING)
        me->on_exec_destroy(static_cast<const CUpti_ResourceData*>(data));
      else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && (cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch ||
                                                        cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz)) {
        me->on_launch(static_cast<const CUpti_CallbackData*>(data));
      } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
        if (auto c = capture::exec_change(cbid, static_cast<const CUpti_CallbackData*>(data))) me->on_exec_change(*c);
      }
      uint64_t t1 = 0;
      if (times.on) {
        const bool created = domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED;
        times.add(created ? CallbackTimes::exec_created : CallbackTimes::other, t0);
        if (created) times.graph_done();
        t1 = CallbackTimes::now();
      }
      if (me->origins_) {
        capture::OriginRecorder::instance().on_callback(domain, cbid, data);
        if (times.on)
          times.add(CallbackTimes::origins_kind(domain, cbid), t1);
      }
    } catch (const std::exception& e) {
      me->error(std::string("callback: ") + e.what());
    } catch (...) {
      me->error("callback: unknown error");
    }
  }

  void on_exec_created(const CUpti_ResourceData* rd) {
    const auto* gd = static_cast<const CUpti_GraphData*>(rd->resourceDescriptor);
    if (!gd || !gd->graph || !gd->graphExec || finished_) return;
    const bool seen = preload_seen();
    std::lock_guard<std::mutex> lock(m_);
    if (!seen) unseen("a graph was instantiated");
    if (stood_down_ || resting_) return;
    // An exec graph followed at this handle before was destroyed while
    // graphscope rested (unseen): its changes must not count for this one,
    // whether this one is dumped or skipped.
    live_.erase(gd->graphExec);
    last_graph_ = std::chrono::steady_clock::now();
    std::optional<uint32_t> id = capture::exec_graph_id(reinterpret_cast<cudaGraphExec_t>(gd->graphExec));
    if (session_->skip_before_walk(id)) return;
    std::optional<DeviceInfo> device = device_info(rd->context);
    // Walks at destroy: the walk waits for the application to destroy the
    // graph (PyTorch does at once), and then runs on the walker thread.
    if (defer_ && runtime_covered()) {
      std::lock_guard<std::mutex> d(dm_);
      deferred_.push_back(Deferred{reinterpret_cast<CUgraph>(gd->graph), gd->graphExec, *id, device});
      deferred_n_.fetch_add(1, std::memory_order_release);
      return;
    }
    capture::WalkOptions wo = walk_options(true);
    std::vector<uint64_t> handles;
    wo.root_handles = &handles;
    // The driver's answers now, on the application's thread (it may destroy
    // the graph as soon as instantiation returns); the document from them on
    // the writer thread, unless conditional bodies must go into it first.
    capture::QueriedGraph q = capture::query_graph(reinterpret_cast<cudaGraph_t>(gd->graph), wo);
    dump_walked(gd->graphExec, *id, device, std::move(q), std::move(handles));
  }

  // A walked graph's index entry and document. Under m_.
  void dump_walked(CUgraphExec exec, uint32_t exec_id, const std::optional<DeviceInfo>& device,
                   capture::QueriedGraph&& q, std::vector<uint64_t>&& handles) {
    if (session_->skip_after_walk(exec_id, q.nodes())) {
      write_index();
      return;
    }
    auto finish_doc = [exec_id, device](GraphDocument&& d) {
      capture::assign_exec_ids(d, exec_id);
      d.name = "exec" + std::to_string(exec_id);
      d.device = device;
      return std::make_shared<const GraphDocument>(std::move(d));
    };
    std::function<std::shared_ptr<const GraphDocument>()> make;
    std::shared_ptr<const GraphDocument> made;
    size_t g;
    if (q.has_conditional()) {
      made = finish_doc(std::move(q).build(callback_times().on ? &callback_times().walk : nullptr));
      g = session_->dumped(exec_id, AttachSession::summary_of(*made));
    } else {
      g = session_->dumped(exec_id, {q.nodes(), q.nodes_with_bodies(), q.first_kernel_names(3)});
      make = [finish_doc, q = std::make_shared<capture::QueriedGraph>(std::move(q))] {
        CallbackTimes& times = callback_times();
        auto doc = finish_doc(std::move(*q).build(times.on ? &times.built : nullptr));
        if (times.on) times.build_done();
        return doc;
      };
    }
    const AttachedGraph& entry = session_->index().graphs[g];
    std::string said;
    if (!config().quiet) {
      char line[96];
      std::snprintf(line, sizeof line, "graphscope: pid %d: exec graph %u, %zu nodes -> ", int(pid_), exec_id,
                    size_t(entry.nodes));
      said = line + dir_ + "/" + entry.file;
    }
    auto shared = made ? post_document(entry.file, made, std::move(said))
                       : post_document(entry.file, std::move(make), std::move(said));
    docs_.push_back(collector_.running() ? shared : nullptr);
    reports_.emplace_back();
    Live& l = live_[exec];
    l = Live{};
    l.g = g;
    l.doc = std::move(shared);
    l.handles = std::move(handles);
    write_index();  // complete after every graph, whatever happens to the process later
    if (++dumped_execs_ == config().max_graphs && !config().profile)
      let_go("GRAPHSCOPE_MAX_GRAPHS (" + std::to_string(config().max_graphs) + ") graphs dumped");
  }

  // Walks at destroy. An exec graph's template is walked, not inside its
  // instantiation on the application's thread, but once the application
  // destroys the template (through the preload library, which hands it
  // over: the walker thread walks it, then destroys it), or else on the
  // application's thread at the first call that could change the template
  // or needs the exec graph's entry: a call that adds to, sets, removes
  // from, instantiates, updates from or destroys any graph (the fences,
  // driver callbacks), a launch of the exec graph, its update or
  // destruction, the context's destruction, the application's own CUPTI
  // subscription, and the exit. So a template is read either as it was
  // instantiated or after the application gave it up, never while it
  // changes or after it is gone; a graph that nothing ever ends waits until
  // the exit (and is lost if the process is killed).
  enum class Walk : uint8_t { pending, queued, walking };  // to do here; handed to the walker; under way
  struct Deferred {
    CUgraph graph = nullptr;
    CUgraphExec exec = nullptr;
    uint32_t exec_id = 0;
    std::optional<DeviceInfo> device;
    Walk state = Walk::pending;
    bool destroy = false;  // the application destroyed it: graphscope does after the walk
  };

  // Whether the process has the shared CUDA runtime loaded (whose
  // cudaGraphDestroy and cudaGraphLaunch the preload library sees): else no
  // graph waits, since nothing would end its wait but the fences.
  bool runtime_covered() {
    if (covered_) return true;
    using Covers = int (*)();
    static Covers covers = reinterpret_cast<Covers>(dlsym(RTLD_DEFAULT, "graphscope_preload_covers"));
    covered_ = covers && covers() != 0;
    return covered_;
  }

  // The walk of an entry taken for walking (state walking), on this thread,
  // and its dump; no lock held.
  void walk_deferred(const Deferred& d) noexcept {
    try {
      capture::WalkOptions wo = walk_options(t_walker);
      std::vector<uint64_t> handles;
      wo.root_handles = &handles;
      capture::QueriedGraph q = capture::query_graph(reinterpret_cast<cudaGraph_t>(d.graph), wo);
      std::lock_guard<std::mutex> lock(m_);
      if (!finished_) dump_walked(d.exec, d.exec_id, d.device, std::move(q), std::move(handles));
    } catch (const std::exception& e) {
      error(std::string("walking exec graph ") + std::to_string(d.exec_id) + ": " + e.what());
    } catch (...) {
      error("walking exec graph " + std::to_string(d.exec_id) + ": unknown error");
    }
    bool destroy = false;
    {
      std::lock_guard<std::mutex> l(dm_);
      for (auto it = deferred_.begin(); it != deferred_.end(); ++it)
        if (it->graph == d.graph && it->state == Walk::walking) {
          destroy = it->destroy;
          deferred_.erase(it);
          deferred_n_.fetch_sub(1, std::memory_order_release);
          break;
        }
      t_walker ? ++walked_at_destroy_ : ++walked_here_;
    }
    dcv_.notify_all();
    // The application destroyed it already, as far as it knows.
    if (destroy) cudaGraphDestroy(reinterpret_cast<cudaGraph_t>(d.graph));
  }

  // Every walk still to do of an entry that `which` picks, here; with
  // wait, also those handed to the walker and not yet begun, and then
  // until those under way elsewhere are done. Never under m_.
  template <typename Which>
  void resolve(Which which, bool wait) noexcept {
    if (forked_child || t_walker || !deferred_n_.load(std::memory_order_acquire)) return;
    try {
      for (;;) {
        Deferred d;
        {
          std::lock_guard<std::mutex> l(dm_);
          auto it = std::find_if(deferred_.begin(), deferred_.end(), [&](const Deferred& x) {
            return (x.state == Walk::pending || (wait && x.state == Walk::queued)) && which(x);
          });
          if (it == deferred_.end()) break;
          it->state = Walk::walking;
          d = *it;
        }
        walk_deferred(d);
      }
      if (!wait) return;
      std::unique_lock<std::mutex> l(dm_);
      dcv_.wait(l, [&] { return std::none_of(deferred_.begin(), deferred_.end(), which); });
    } catch (...) {
    }
  }
  void resolve_all() noexcept {
    resolve([](const Deferred&) { return true; }, true);
  }

  // A driver call that may change a graph (fence_kinds_): the walks still
  // to do first, while the templates are as they were instantiated.
  enum Fence : uint8_t { kNoFence = 0, kFenceAll = 1, kFenceDestroy = 2 };
  static uint8_t fence_kind(const char* f) {
    auto starts = [f](const char* p) { return std::strncmp(f, p, std::strlen(p)) == 0; };
    if (starts("cuStreamBeginCaptureToGraph")) return kFenceAll;
    if (!starts("cuGraph") || starts("cuGraphics")) return kNoFence;
    if (std::strcmp(f, "cuGraphDestroy") == 0) return kFenceDestroy;
    if (starts("cuGraphExecUpdate")) return kFenceAll;
    if (starts("cuGraphExec") || starts("cuGraphLaunch") || starts("cuGraphUpload"))
      return kNoFence;  // exec graphs
    if (std::strstr(f, "Get") || std::strstr(f, "SetEnabled") ||
        std::strcmp(f, "cuGraphDebugDotPrint") == 0 || std::strcmp(f, "cuGraphNodeFindInClone") == 0 ||
        std::strcmp(f, "cuGraphClone") == 0 || std::strcmp(f, "cuGraphCreate") == 0)
      return kNoFence;  // reads, and new graphs
    return kFenceAll;   // adds, sets, removes, instantiates, user objects
  }
  void fence(CUpti_CallbackId cbid, const CUpti_CallbackData* cb) {
    if (!cb || cb->callbackSite != CUPTI_API_ENTER || cbid >= fence_kinds_.size()) return;
    switch (fence_kinds_[cbid]) {
      case kFenceAll:
        resolve([](const Deferred&) { return true; }, false);
        break;
      case kFenceDestroy:
        if (cb->functionParams) {
          CUgraph g = static_cast<const cuGraphDestroy_params*>(cb->functionParams)->hGraph;
          resolve([g](const Deferred& d) { return d.graph == g; }, true);
        }
        break;
      default:
        break;
    }
  }
  // Enables the fences' callbacks and the context's destruction. Once,
  // before the first subscription's callbacks can come (fence_kinds_ is
  // read unlocked).
  bool enable_fences() {
    if (fence_kinds_.empty()) {
      std::vector<uint8_t> kinds(CUPTI_DRIVER_TRACE_CBID_SIZE, kNoFence);
      for (int id = 1; id < int(CUPTI_DRIVER_TRACE_CBID_SIZE); ++id) {
        const char* name = nullptr;
        if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, CUpti_CallbackId(id), &name) == CUPTI_SUCCESS &&
            name)
          kinds[size_t(id)] = fence_kind(name);
      }
      fence_kinds_ = std::move(kinds);
    }
    bool ok = cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RESOURCE,
                                  CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) == CUPTI_SUCCESS;
    for (size_t id = 1; id < fence_kinds_.size() && ok; ++id)
      if (fence_kinds_[id] != kNoFence)
        ok = cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, CUpti_CallbackId(id)) ==
             CUPTI_SUCCESS;
    return ok;
  }

 public:
  // The preload library's cudaGraphDestroy (or cuGraphDestroy): true when
  // graphscope takes the graph over (its walk is still to do): the walker
  // thread walks it and destroys it, and the application's call returns at
  // once.
  bool take_destroy(CUgraph g) noexcept {
    if (forked_child || t_walker || !deferred_n_.load(std::memory_order_acquire)) return false;
    try {
      {
        std::lock_guard<std::mutex> l(dm_);
        auto it =
            std::find_if(deferred_.begin(), deferred_.end(), [g](const Deferred& d) { return d.graph == g; });
        if (it == deferred_.end()) return false;
        it->destroy = true;  // by whoever walks it, after the walk
        if (it->state != Walk::pending) return true;
        it->state = Walk::queued;
      }
      walker().post([this, g] {
        t_walker = true;
        wait_for_captures();
        Deferred d;
        {
          std::lock_guard<std::mutex> l(dm_);
          auto it = std::find_if(deferred_.begin(), deferred_.end(),
                                 [g](const Deferred& x) { return x.graph == g && x.state == Walk::queued; });
          if (it == deferred_.end()) return;
          it->state = Walk::walking;
          d = *it;
        }
        walk_deferred(d);
      });
      return true;
    } catch (...) {
      return false;
    }
  }
  // The walker begins a walk once no stream capture is under way, or after
  // kCaptureWait: a walk beside a capture slows the capture's launches
  // more than it saves (the Llama's 392-node captures on 2 CPUs, H200,
  // 2026-11-27). Whoever needs the walk meanwhile does it (resolve).
  static constexpr auto kCaptureWait = std::chrono::milliseconds(200);
  void wait_for_captures() const {
    if (!origins_) return;  // captures are counted by origins' callbacks
    const auto until = std::chrono::steady_clock::now() + kCaptureWait;
    while (capture::OriginRecorder::instance().captures_active() > 0 &&
           std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
  }

  // The preload library's cudaGraphLaunch (or cuGraphLaunch): the exec
  // graph's walk, if still to do, before it runs.
  void launching(CUgraphExec e) noexcept {
    resolve([e](const Deferred& d) { return d.exec == e; }, true);
  }

 private:
  // GRAPHSCOPE_MAX_GRAPHS graphs dumped, nothing to profile: graphscope has
  // nothing left to do, and while any CUPTI subscriber is attached every
  // graph launch costs the application more (bench/replay_subscriber.cu:
  // 0.3-0.5 us a node of the launch call, on an H200; only cuptiFinalize
  // gives it back). For good. Under m_.
  void let_go(const std::string& why) {
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
  void detach() {
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
  void wait_detached() {
    std::unique_lock<std::mutex> lock(detach_m_);
    detached_.wait(lock, [&] { return !detaching_; });
  }

  // The preload library's switch (lib/inject/preload.cc): on while
  // graphscope rests, so that the application's next graph calls
  // take_back() first. False when the library is not loaded.
  static bool preload_rest(bool on) {
    using Fn = void (*)(int);
    static Fn f = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "graphscope_preload_rest"));
    if (f) f(on ? 1 : 0);
    return f != nullptr;
  }

  // Whether this thread is inside a call of the preload library's (a graph
  // instantiated or changed there is one it would see while graphscope
  // rests). False when the library is not loaded.
  static bool preload_seen() {
    using Fn = int (*)();
    static Fn f = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "graphscope_preload_seen"));
    return f && f() != 0;
  }
  // What the preload library did not see, the first time. Under m_.
  void unseen(const std::string& what) {
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
  void rest(const std::string& why) {
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

 public:
  // The preload library saw the application begin a graph (`call`) while
  // graphscope rests: subscribe to CUPTI again before the call goes on, so
  // that its nodes and instantiation are seen. On the application's thread;
  // threads that begin graphs at once wait for the first.
  void take_back(const char* call) noexcept {
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

 private:
  // GRAPHSCOPE_LET_GO_AFTER (capture --exec --let-go-after): a thread of
  // graphscope's that rests once the process has gone that long without a
  // new exec graph or version, after its first (a server's start-up is
  // over), so that CUPTI stops slowing its replays, and again after each
  // take_back. It only ever waits, on m_, for a deadline that each graph
  // moves.
  void watch_idle() {
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

  // A graph document for FILE: in the journal at once; made (make: from a
  // walk's answers, or already made), formatted and written on the writer
  // thread (writer.h), not the application's. `said`: a line for stderr
  // once the file is written. Its slot has the document once made.
  std::shared_ptr<DocSlot> post_document(const std::string& file,
                                         std::function<std::shared_ptr<const GraphDocument>()> make,
                                         std::string said = {}, std::shared_ptr<DocSlot> slot = nullptr) {
    journal(file);
    if (!slot) slot = std::make_shared<DocSlot>();
    writer().post([path = dir_ + "/" + file, slot, make = std::move(make), said = std::move(said)] {
      std::shared_ptr<const GraphDocument> doc;
      try {
        doc = make();
      } catch (const std::exception& e) {
        slot->set(nullptr);
        instance().job_error(std::string("making ") + path + ": " + e.what());
        return;
      } catch (...) {
        slot->set(nullptr);
        instance().job_error("making " + path + ": unknown error");
        return;
      }
      slot->set(doc);
      try {
        write_graph_json_file(path, *doc);
      } catch (const std::exception& e) {
        instance().job_error(std::string("writing ") + path + ": " + e.what());
        return;
      }
      if (!said.empty()) std::fprintf(stderr, "%s\n", said.c_str());
    });
    return slot;
  }

  // One already made: its slot has it at once.
  std::shared_ptr<DocSlot> post_document(const std::string& file, std::shared_ptr<const GraphDocument> doc,
                                         std::string said = {}) {
    return post_document(
        file, [doc] { return doc; }, std::move(said), DocSlot::holding(doc));
  }

  // An error on the writer thread: said at once, and into the index the next
  // time it is written (m_ is not taken here: a thread holding it may be
  // waiting for a document this thread makes).
  void job_error(const std::string& e) noexcept {
    try {
      {
        std::lock_guard<std::mutex> lock(job_m_);
        job_errors_.push_back(e);
      }
      say(e);
    } catch (...) {
    }
  }

  // phases: the walk's phases go into GRAPHSCOPE_DEBUG_TIMES's (one
  // thread at a time: the walker's, or, without walks at destroy, the
  // application's under m_).
  capture::WalkOptions walk_options(bool phases) const {
    capture::WalkOptions wo;
    if (origins_)
      wo.origins_of = [](const uint64_t* h, size_t n, std::shared_ptr<const Origin>* out) {
        capture::OriginRecorder::instance().origins_of(h, n, out);
      };
    if (callback_times().on && phases && (t_walker || !defer_)) wo.phases = &callback_times().walk;
    return wo;
  }

  bool enable_launch_callbacks() {
    if (launch_callbacks_) return true;
    launch_callbacks_ =
        cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch) ==
            CUPTI_SUCCESS &&
        cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz) ==
            CUPTI_SUCCESS;
    return launch_callbacks_;
  }

  // cuGraphExecUpdate or a per-node setter changed a dumped exec graph: the
  // change goes into the next version's document, which becomes a version
  // when the exec graph is next launched (so a version is what ran, and many
  // setter calls between two launches make one version), destroyed, or the
  // process exits.
  void on_exec_change(const capture::ExecChange& c) {
    if (finished_) return;
    launching(c.exec);  // its walk first, if still to do
    const bool seen = preload_seen();
    std::lock_guard<std::mutex> lock(m_);
    if (!seen)
      unseen("an exec graph was changed (" + (c.node ? c.node->call : std::string("cuGraphExecUpdate")) +
             ")");
    if (stood_down_ || resting_) return;
    auto it = live_.find(c.exec);
    if (it == live_.end()) return;  // not dumped (skipped, or made before graphscope attached)
    Live& l = it->second;
    if (l.capped) return;  // its index entry says later updates are not recorded
    // Launches must be seen to know which version ran: from the first
    // update on, also when only dumping.
    if (!enable_launch_callbacks() && l.pending_not_recorded.empty())
      l.pending_not_recorded.push_back("launches are not seen (CUPTI refused): versions may not match what ran");
    auto by = [&](const std::string& call) {
      std::string name = call;
      if (size_t v = name.rfind("_v"); v != std::string::npos && v + 2 < name.size() &&
                                        name.find_first_not_of("0123456789", v + 2) == std::string::npos)
        name.resize(v);
      if (std::find(l.pending_by.begin(), l.pending_by.end(), name) == l.pending_by.end())
        l.pending_by.push_back(name);
    };
    if (!c.whole && !c.node) return;
    // The current version's document, where the change starts from it (made
    // on the writer thread: waited for; m_ is held, and no writer job takes
    // it). A setter call with changes already gathered needs none (XLA
    // makes hundreds a step). None: it could not be made, and the index
    // says so.
    std::shared_ptr<const GraphDocument> current;
    if (c.whole || !l.pending) {
      current = l.doc->get();
      if (!current) return;
    }
    if (c.whole) {
      // The exec graph now runs the parameters of c.whole: walk it now (the
      // application may destroy it right after).
      GraphDocument w = capture::walk_graph(reinterpret_cast<cudaGraph_t>(c.whole), walk_options(false));
      capture::assign_exec_ids(w, *current->exec_graph_id);
      std::string why;
      if (!carry_exec_node_ids(*current, w, &why))
        w.warnings.push_back("node ids are the update's graph's, and records of this exec graph may not join: " + why);
      w.name = current->name;
      w.device = current->device;
      const GraphDocument& before = l.pending ? *l.pending : *current;
      ExecVersion v;
      if (before.exec_version) v.disabled_nodes = before.exec_version->disabled_nodes;
      w.exec_version = std::move(v);
      // XLA updates its command buffers this way at every step: the same
      // graph again is no new version (unless the current one leaves
      // something out that this walk now shows).
      const bool current_complete = !current->exec_version || current->exec_version->not_recorded.empty();
      if (current_complete && same_recorded_content(w, *current)) {
        l.pending.reset();
        l.pending_by.clear();
        session_->unchanged_update(l.g);
        return;
      }
      l.pending = std::make_shared<GraphDocument>(std::move(w));
      by("cuGraphExecUpdate");
      return;
    }
    if (!l.pending) l.pending = std::make_shared<GraphDocument>(*current);
    // XLA sets hundreds of nodes of a graph of thousands per step: a table,
    // not a search per call.
    if (l.index_of.empty())
      for (size_t i = 0; i < l.handles.size(); ++i) l.index_of.emplace(l.handles[i], uint32_t(i));
    auto at = l.index_of.find(c.node->node);
    const uint32_t index = at == l.index_of.end() ? UINT32_MAX : at->second;
    std::string why;
    switch (apply_node_update(*l.pending, index, *c.node, &why)) {
      case UpdateEffect::changed: by(c.node->call); break;
      case UpdateEffect::unchanged: session_->unchanged_update(l.g); break;
      case UpdateEffect::not_recorded: {
        ExecVersion& v = l.pending->exec_version ? *l.pending->exec_version : l.pending->exec_version.emplace();
        if (std::find(v.not_recorded.begin(), v.not_recorded.end(), why) == v.not_recorded.end())
          v.not_recorded.push_back(why);
        by(c.node->call);
        break;
      }
    }
  }

  // The pending changes of l, if any, become its next version. Under m_.
  void new_version(Live& l) {
    if (!l.pending || l.pending_by.empty()) return;
    last_graph_ = std::chrono::steady_clock::now();
    GraphDocument doc = std::move(*l.pending);
    l.pending.reset();
    ExecVersion& v = doc.exec_version ? *doc.exec_version : doc.exec_version.emplace();
    v.version = l.version + 1;
    v.updated_by = std::move(l.pending_by);
    l.pending_by.clear();
    for (auto& n : l.pending_not_recorded) v.not_recorded.push_back(std::move(n));
    l.pending_not_recorded.clear();
    std::optional<size_t> g = session_->updated(l.g, doc);
    if (!g) {
      l.capped = true;  // no copy of the document per change from now on
      write_index();
      return;
    }
    const AttachedGraph& entry = session_->index().graphs[*g];
    auto shared = post_document(entry.file, std::make_shared<const GraphDocument>(std::move(doc)));
    if (!config().quiet) {
      std::string calls;
      for (const auto& x : entry.updated_by) calls += (calls.empty() ? "" : ", ") + x;
      std::fprintf(stderr, "graphscope: pid %d: exec graph %u updated (%s): version %u -> %s/%s\n", int(pid_),
                   entry.exec_graph_id, calls.c_str(), entry.version, dir_.c_str(), entry.file.c_str());
    }
    docs_.push_back(collector_.running() ? shared : nullptr);
    reports_.emplace_back();
    l.g = *g;
    l.doc = std::move(shared);
    ++l.version;
    write_index();
  }

  void on_exec_destroy(const CUpti_ResourceData* rd) {
    const auto* gd = static_cast<const CUpti_GraphData*>(rd->resourceDescriptor);
    if (!gd) return;
    launching(gd->graphExec);  // its walk first, if still to do
    std::lock_guard<std::mutex> lock(m_);
    auto it = live_.find(gd->graphExec);
    if (it == live_.end()) return;
    new_version(it->second);
    live_.erase(it);  // the handle may be reused by a new exec
  }

  // The hot path: one lock, one lookup, one insert while in the window.
  void on_launch(const CUpti_CallbackData* cb) {
    if (cb->callbackSite != CUPTI_API_ENTER || !cb->functionParams) return;
    auto exec = static_cast<const cuGraphLaunch_params*>(cb->functionParams)->hGraph;
    launching(exec);  // its walk first, if still to do
    std::lock_guard<std::mutex> lock(m_);
    auto it = live_.find(exec);
    if (it == live_.end()) return;
    if (it->second.pending) new_version(it->second);
    if (config().profile) session_->launched(it->second.g, cb->correlationId);
  }

  void profile_one(size_t g, const Trace& all) {
    std::string why;
    Trace t = session_->replays_of(g, all, collector_.dropped_records(), &why);
    if (!why.empty()) {
      session_->not_profiled(g, why);
      return;
    }
    const AttachConfig& c = config();
    ProfileOptions po;
    po.threshold_us = c.threshold_us;
    po.tolerance_us = c.tolerance_us;
    po.exec_graph_id = session_->index().graphs[g].exec_graph_id;
    const std::shared_ptr<const GraphDocument> made = docs_[g] ? docs_[g]->get() : nullptr;
    if (!made) {
      session_->not_profiled(g, "its graph document could not be made");
      return;
    }
    const GraphDocument& doc = *made;
    TraceJoin join = join_trace(doc, t, join_options(po));
    reports_[g] = analyze_profile(doc, t, join, po);
    session_->profiled(g, reports_[g]);
    const AttachedGraph& x = session_->index().graphs[g];
    write_output(dir_ + "/" + x.profile_file, write_profile_json(reports_[g], doc));
    write_output(dir_ + "/" + x.trace_file, write_chrome_trace(t, &doc, &reports_[g], &join));
  }

  void write_report_text() {
    write_output(dir_ + "/report.txt", session_->report_text([&](size_t g) {
      const auto doc = docs_[g] ? docs_[g]->get() : nullptr;
      return doc ? format_profile(reports_[g], *doc) : std::string();
    }));
  }

  // graphscope.attach/1: what this process did, rewritten after each graph.
  void write_index() noexcept {
    try {
      {
        std::lock_guard<std::mutex> lock(job_m_);
        for (auto& e : job_errors_) session_->error(std::move(e));
        job_errors_.clear();
      }
      AttachIndex& x = session_->index();
      x.attached = attached_ || (stood_down_ && !x.graphs.empty());
      x.let_go = stood_down_ ? stood_down_why_ : resting_ ? rest_why_ : std::string();
      x.let_go_count = let_go_count_;
      x.stays_attached = stays_why_;
      x.taken_back_count = taken_back_count_;
      x.attach_error = attach_error_;
      x.complete = finished_;
      x.profile = config().profile && profile_error_.empty();
      x.profile_error = profile_error_;
      if (device_) {
        AttachDevice d;
        d.name = device_->name;
        if (device_->cc_major && device_->cc_minor)
          d.compute_capability = std::to_string(*device_->cc_major) + "." + std::to_string(*device_->cc_minor);
        if (device_->driver_version) d.driver_version = *device_->driver_version;
        if (device_->runtime_version) d.runtime_version = *device_->runtime_version;
        d.ordinal = device_ordinal_;
        d.pci_bus_id = device_pci_bus_id_;
        x.device = d;
      }
      x.dropped_records = collector_.dropped_records();
      // A snapshot, written after the files posted before it.
      writer().post([path = dir_ + "/index.json", x = AttachIndex(x)] {
        try {
          write_output(path, write_attach_index(x));
        } catch (...) {
        }
      });
    } catch (...) {
      // Nowhere left to say it: the directory is gone or full.
    }
  }

  // Once per device: cudaGetDeviceProperties reads every attribute, and it
  // ran in the application's thread for every graph. The first device a
  // graph was made on is the process's (the index's device: with one
  // process per GPU, the rank's).
  std::optional<DeviceInfo> device_info(CUcontext ctx) {
    uint32_t dev = 0;
    if (cuptiGetDeviceId(ctx, &dev) != CUPTI_SUCCESS) return std::nullopt;
    auto known = devices_.find(dev);
    if (known == devices_.end()) {
      std::string pci;
      std::optional<DeviceInfo> info = read_device_info(dev, pci);
      if (!info) return std::nullopt;
      known = devices_.emplace(dev, std::make_pair(*info, pci)).first;
    }
    if (!device_) {
      device_ = known->second.first;
      device_ordinal_ = int64_t(dev);
      device_pci_bus_id_ = known->second.second;
    }
    return known->second.first;
  }

  // The ordinal is the CUDA one (within CUDA_VISIBLE_DEVICES); the PCI bus
  // id, from the same properties, names the GPU on the host.
  static std::optional<DeviceInfo> read_device_info(uint32_t dev, std::string& pci_bus_id) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, int(dev)) != cudaSuccess) return std::nullopt;
    char pci[32];
    std::snprintf(pci, sizeof pci, "%04x:%02x:%02x.0", unsigned(p.pciDomainID) & 0xffffu, unsigned(p.pciBusID) & 0xffu,
                  unsigned(p.pciDeviceID) & 0xffu);
    pci_bus_id = pci;
    DeviceInfo info;
    info.name = p.name;
    info.cc_major = p.major;
    info.cc_minor = p.minor;
    int v = 0;
    if (cudaDriverGetVersion(&v) == cudaSuccess) info.driver_version = v;
    if (cudaRuntimeGetVersion(&v) == cudaSuccess) info.runtime_version = v;
    return info;
  }

  void error(const std::string& e) {
    std::lock_guard<std::mutex> lock(m_);
    if (session_->error(e)) say(e);  // once; the index has them all
    write_index();
  }

  const AttachConfig& config() const { return session_->config(); }

  void journal(const std::string& file) const {
    if (journal_ < 0) return;
    const std::string line = "queued " + file + "\n";
    ssize_t ignored = ::write(journal_, line.data(), line.size());
    (void)ignored;
  }

  void say(const std::string& s) const { std::fprintf(stderr, "graphscope: pid %d: %s\n", int(pid_), s.c_str()); }

  // OUT/rank-R, created exclusively (another process of the run may hold
  // that rank: a forked worker that inherited RANK), else OUT/rank-R.pid-PID;
  // OUT/pid-PID without a rank.
  bool make_process_dir(const std::optional<AttachRank>& rank) {
    if (!make_dirs(config().out)) return false;
    const std::vector<std::string> names = attach_dir_names(rank, int64_t(pid_));
    for (size_t i = 0; i < names.size(); ++i) {
      session_->use_dir(names[i]);
      const bool last = i + 1 == names.size();
      if (mkdir(session_->dir().c_str(), 0777) == 0 || (last && errno == EEXIST)) return true;
      if (errno != EEXIST) return false;
    }
    return false;
  }

  static bool make_dirs(const std::string& path) {
    for (size_t p = 1; p <= path.size(); ++p) {
      if (p < path.size() && path[p] != '/') continue;
      std::string part = path.substr(0, p);
      if (mkdir(part.c_str(), 0777) != 0 && errno != EEXIST) return false;
    }
    return true;
  }

  std::mutex m_;
  std::condition_variable idle_;  // watch_idle's wait (on m_)
  // The last exec graph made or version recorded (watch_idle); under m_.
  std::chrono::steady_clock::time_point last_graph_;
  std::mutex job_m_;                      // guards job_errors_ (never with m_ taken inside it)
  std::vector<std::string> job_errors_;   // the writer thread's, until the index is next written
  std::optional<AttachSession> session_;  // made by initialize(), before any callback
  pid_t pid_ = 0;
  std::string dir_;
  CUpti_SubscriberHandle subscriber_ = nullptr;
  bool attached_ = false;
  std::atomic<bool> origins_{false};  // the origin recorder gets callbacks
  std::unordered_map<uint32_t, std::pair<DeviceInfo, std::string>> devices_;  // by device id, with PCI bus id; under m_
  std::string attach_error_, profile_error_;
  std::atomic<bool> finished_{false};
  bool stood_down_ = false;  // let go of CUPTI for good
  std::string stood_down_why_;
  // Let go of CUPTI until the application begins its next graph (rest,
  // take_back); under m_.
  bool resting_ = false, taking_back_ = false;
  // The first graph or update the preload library did not see (one it
  // would not see while graphscope rests), said as such; "": none.
  std::string unseen_why_;
  // Why graphscope did not let go unasked when the process went idle.
  std::string stays_why_;
  std::string rest_why_;
  uint64_t let_go_count_ = 0, taken_back_count_ = 0;
  std::mutex take_back_m_;  // one take_back (or stand_down) at a time; taken before m_
  // A detach() queued on the writer thread and not yet done.
  std::mutex detach_m_;  // taken last, never with another inside it
  std::condition_variable detached_;
  bool detaching_ = false;
  Trace stopped_trace_;  // the activities traced before standing down or at exit
  bool have_stopped_trace_ = false;
  std::vector<std::shared_ptr<DocSlot>> docs_;  // per dumped graph: its document (profiling only)
  std::vector<ProfileReport> reports_;  // per dumped graph: its report, once analysed
  std::optional<DeviceInfo> device_;  // the first device a graph was made on
  std::optional<int64_t> device_ordinal_;
  std::string device_pci_bus_id_;
  std::unordered_map<CUgraphExec, Live> live_;
  bool launch_callbacks_ = false;
  int journal_ = -1;  // journal.txt
  uint64_t dumped_execs_ = 0;  // exec graphs dumped (versions not counted)
  // Walks at destroy: on when the preload library is there to hand graphs
  // over (set before the first subscription).
  bool defer_ = false;
  std::atomic<bool> covered_{false};
  std::mutex dm_;  // deferred_ and the counts; taken alone or inside m_, never with m_ inside it
  std::condition_variable dcv_;  // an entry left deferred_
  std::vector<Deferred> deferred_;
  std::atomic<int> deferred_n_{0};                    // deferred_.size(), read without dm_
  uint64_t walked_at_destroy_ = 0, walked_here_ = 0;  // under dm_
  std::vector<uint8_t> fence_kinds_;                  // by driver callback id: Fence
  capture::ActivityCollector collector_;
};

}  // namespace

// Called by the interposers below.
void stand_down(const char* who) noexcept { Injection::instance().stand_down(who); }

}  // namespace graphscope::inject

// Called by the preload library (lib/inject/preload.cc) when the application
// begins a graph while graphscope rests.
extern "C" __attribute__((visibility("default"))) void graphscope_take_back(const char* call) {
  graphscope::inject::Injection::instance().take_back(call ? call : "?");
}

// Called by the preload library's cudaGraphDestroy and cuGraphDestroy: 1
// when graphscope took the graph over (walks at destroy), and the call is to
// return success without destroying it.
extern "C" __attribute__((visibility("default"))) int graphscope_graph_destroy(void* graph) {
  return graphscope::inject::Injection::instance().take_destroy(static_cast<CUgraph>(graph)) ? 1 : 0;
}

// Called by the preload library's graph launches: the exec graph's walk
// first, if still to do.
extern "C" __attribute__((visibility("default"))) void graphscope_graph_launch(void* exec) {
  graphscope::inject::Injection::instance().launching(static_cast<CUgraphExec>(exec));
}

// `graphscope capture --exec` also preloads this library (LD_PRELOAD), so
// that these definitions come before CUPTI's: an application that subscribes
// to CUPTI finds graphscope out of its way instead of
// CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED. They forward to CUPTI.
extern "C" __attribute__((visibility("default"))) CUptiResult cuptiSubscribe(CUpti_SubscriberHandle* subscriber,
                                                                             CUpti_CallbackFunc callback,
                                                                             void* userdata) {
  graphscope::inject::stand_down("cuptiSubscribe");
  using Fn = CUptiResult (*)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*);
  static Fn real = reinterpret_cast<Fn>(graphscope::inject::cupti_symbol("cuptiSubscribe"));
  return real ? real(subscriber, callback, userdata) : CUPTI_ERROR_NOT_INITIALIZED;
}

extern "C" __attribute__((visibility("default"))) CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle* subscriber,
                                                                                CUpti_CallbackFunc callback,
                                                                                void* userdata,
                                                                                CUpti_SubscriberParams* params) {
  graphscope::inject::stand_down("cuptiSubscribe_v2");
  using Fn = CUptiResult (*)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*, CUpti_SubscriberParams*);
  static Fn real = reinterpret_cast<Fn>(graphscope::inject::cupti_symbol("cuptiSubscribe_v2"));
  return real ? real(subscriber, callback, userdata, params) : CUPTI_ERROR_NOT_INITIALIZED;
}

// Preloaded, this runs before the application: NVTX, on its first call,
// loads the injection NVTX_INJECTION64_PATH names, and graphscope's origins
// need that to be CUPTI (the libcupti this library uses).
__attribute__((constructor)) static void graphscope_point_nvtx_at_cupti() {
  const char* o = std::getenv("GRAPHSCOPE_ORIGINS");
  if (o && std::strcmp(o, "0") == 0) return;
  graphscope::capture::OriginRecorder::inject_nvtx();
}

// The entry point the CUDA driver calls once, at cuInit, in every process
// started with CUDA_INJECTION64_PATH naming this library. Returns 1 (the
// driver ignores it); never throws.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  try {
    graphscope::inject::Injection::instance().initialize();
  } catch (...) {
    std::fprintf(stderr, "graphscope: injection failed to start; the application runs without it\n");
  }
  return 1;
}
