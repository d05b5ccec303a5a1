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
// walks_at_destroy.cc). With profiling on, CUPTI activity tracing
// runs for the whole process and the replays in a window are analysed at
// exit like `graphscope profile` does.
//
// Configured by the environment (`graphscope capture --exec` sets it; the
// variables are AttachConfig's, lib/inspect/runs/attach_session.h). What to dump,
// what to skip, which launches to analyse and the process index are the
// CUDA-free AttachSession's decisions; this file is the CUPTI adapter, and
// the other files of lib/inject do the rest (README.md).
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
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "callback_times.h"
#include "capture/exec_update.h"
#include "capture/origin.h"
#include "capture/walk.h"
#include "injection.h"
#include "inspect/core/error.h"
#include "inspect/runs/attach_session.h"
#include "inspect/runs/work.h"
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

namespace internal {

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

}  // namespace

// Set in a child that fork() made without exec: it has the parent's state
// but none of its threads (the writer), CUPTI and CUDA are not usable there,
// and its directory is the parent's. Everything stays quiet in such a child.
std::atomic<bool> forked_child{false};

CallbackTimes& callback_times() {
  static CallbackTimes* t = new CallbackTimes;
  return *t;
}

void Injection::initialize() {
  pthread_atfork(nullptr, nullptr, [] { forked_child = true; });
  std::vector<std::string> errors;
  AttachConfig from_env = attach_config_from([](const char* name) { return std::getenv(name); }, errors);
  pid_ = getpid();
  t0_ = std::chrono::steady_clock::now();  // CLOCK_MONOTONIC, as Python's time.monotonic()
  {
    uint64_t cupti_now = 0;
    (void)cuptiGetTimestamp(&cupti_now);
    costs_.start(t0_, cupti_now);
  }
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
  if (config().eager && !config().profile)
    stays_why_ = "it records the run's GPU work (--eager), which needs CUPTI attached";
  else if ((config().let_go_after_s > 0 || config().rest_after_s > 0) && !config().profile)
    std::thread([this] { watch_idle(); }).detach();
}

// Subscribes to CUPTI and enables graphscope's callbacks: when it
// attaches, and again when it takes CUPTI back after a let go. Returns why
// not, or "".
std::string Injection::subscribe() {
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
  // The ledger's costs: rare calls, always on; without them the ledger
  // says so (the index lacks the times), the rest goes on.
  if (ok && !costs_.enable(subscriber_)) say("capture and instantiate times are not recorded (CUPTI refused a callback)");
  // Launches are counted in every run (the ledger): while attached by this
  // callback, unless the launch came through the preload library's
  // forwarders, which count it (they also count while graphscope rests).
  // Not only where the process lacks the shared runtime: XLA's launches
  // (JAX) reach libcuda by a way no forwarder sees (H200, 2026-12-01: with
  // the callback off, its replayed graphs read "never replayed"). What the
  // callback adds to CUPTI's own cost while attached was not resolvable
  // (BENCHMARKS.md, "The run ledger's cost").
  if (ok) ok = enable_launch_callbacks();
  // Input liveness: the driver's allocations, frees and captures.
  if (ok) enable_memory_callbacks();
  if (ok && (config().profile || config().eager) && !collector_.running()) {
    try {
      // Its records converted only where a CPU is idle: beside a capture,
      // the converter slowed the application's threads (serving start-up,
      // 2026-11-27, BENCHMARKS.md).
      collector_.set_background(defer_);
      // Not profiling, the run's GPU work alone (--eager): one record per
      // graph replay instead of one per node (CUPTI's graph trace).
      collector_.set_graph_trace(!config().profile);
      collector_.start();
    } catch (const Error& e) {
      profile_error_ = e.what();
      say(profile_error_ + (config().profile ? "; graphs are dumped, not profiled"
                                             : "; GPU work outside graphs is not recorded"));
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
    if (origins_ && collector_.running()) enable_eager_sites();
  }
  if (!ok) {
    cuptiUnsubscribe(subscriber_);
    return "cuptiEnableCallback failed";
  }
  return {};
}

Injection& Injection::instance() {
  static Injection* i = new Injection;  // never destroyed: callbacks may come late
  return *i;
}

// CUPTI's own cuptiSubscribe, past graphscope's interposer below.
Injection::SubscribeFn Injection::real_subscribe() {
  static SubscribeFn f = reinterpret_cast<SubscribeFn>(cupti_symbol("cuptiSubscribe"));
  if (f) return f;
  return [](CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*) { return CUPTI_ERROR_NOT_INITIALIZED; };
}

// At exit: the profile of every graph, and the final index.
void Injection::finish() noexcept {
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

void Injection::finish_locked() noexcept {
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
      // The run's GPU work, for the ledger: in graphs and outside them.
      std::optional<LaunchSites> sites;
      if (eager_sites_) {
        sites.emplace();
        {
          std::lock_guard<std::mutex> l(sites_m_);
          sites->launches = std::move(site_launches_);
        }
        sites->origins = capture::OriginRecorder::instance().launch_sites();
      }
      session_->index().work =
          summarize_work(stopped_trace_, costs_.start_cupti_ns(), costs_.graphs_end_cupti_ns(),
                         config().profile ? "kernel records" : "graph trace", sites ? &*sites : nullptr);
      if (config().profile) {
        for (size_t g = 0; g < docs_.size(); ++g) profile_one(g, stopped_trace_);
        write_report_text();
      }
    }
  } catch (const std::exception& e) {
    session_->error(std::string("profile at exit: ") + e.what());
  } catch (...) {
    session_->error("profile at exit: unknown error");
  }
  try {
    graph_memory_at_exit(session_->index());
    take_torch_log(session_->index());
    liveness_at_exit(session_->index());
  } catch (...) {
  }
  write_index();
}

void CUPTIAPI Injection::callback(void* self, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                  const void* data) {
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
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API && me->eager_sites_.load(std::memory_order_relaxed) &&
        cbid < me->eager_cbids_.size() && me->eager_cbids_[cbid]) {
      me->eager_launch(cbid, static_cast<const CUpti_CallbackData*>(data));
    }
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
      me->costs_.on_api(cbid, static_cast<const CUpti_CallbackData*>(data));
      if (me->liveness_on_) me->on_memory(cbid, static_cast<const CUpti_CallbackData*>(data));
    }
    if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED)
      me->on_exec_created(static_cast<const CUpti_ResourceData*>(data));
    else if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING)
      me->on_exec_destroy(static_cast<const CUpti_ResourceData*>(data));
    else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && (cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch ||
                                                      cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz)) {
      me->on_launch(static_cast<const CUpti_CallbackData*>(data));
    } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
      const auto* cb = static_cast<const CUpti_CallbackData*>(data);
      if (auto c = capture::exec_change(cbid, cb)) me->on_exec_change(*c);
      else if (auto f = capture::exec_failure(cbid, cb)) me->on_update_failed(*f);
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

void Injection::on_exec_created(const CUpti_ResourceData* rd) {
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
    Deferred entry{reinterpret_cast<CUgraph>(gd->graph), gd->graphExec, *id, device};
    entry.since = liveness_.allocations();
    deferred_.push_back(entry);
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
  dump_walked(gd->graphExec, *id, device, std::move(q), std::move(handles), liveness_.allocations());
}

// phases: the walk's phases go into GRAPHSCOPE_DEBUG_TIMES's (one
// thread at a time: the walker's, or, without walks at destroy, the
// application's under m_).
capture::WalkOptions Injection::walk_options(bool phases) const {
  capture::WalkOptions wo;
  if (origins_)
    wo.origins_of = [](const uint64_t* h, size_t n, std::shared_ptr<const Origin>* out) {
      capture::OriginRecorder::instance().origins_of(h, n, out);
    };
  if (callback_times().on && phases && (t_walker || !defer_)) wo.phases = &callback_times().walk;
  return wo;
}

// The driver's calls that launch kernels and copies outside graphs: each
// call's place is read at its entry (OriginRecorder::launch_site) and kept
// with its correlation id, which its activity record carries.
void Injection::enable_eager_sites() {
  if (eager_sites_) return;
  std::vector<uint8_t> ids(size_t(CUPTI_DRIVER_TRACE_CBID_SIZE), 0);
  size_t on = 0;
  for (int id = 1; id < int(CUPTI_DRIVER_TRACE_CBID_SIZE); ++id) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, uint32_t(id), &name) != CUPTI_SUCCESS || !name) continue;
    const std::string_view n(name);
    const bool launch = n.rfind("cuLaunchKernel", 0) == 0 || n.rfind("cuLaunchCooperativeKernel", 0) == 0 ||
                        n.rfind("cuMemcpy", 0) == 0 || n.rfind("cuMemset", 0) == 0;
    if (!launch) continue;
    // How the call names its kernel: first in its parameters (cuLaunchKernel,
    // cuLaunchCooperativeKernel), after the launch config (cuLaunchKernelEx),
    // or not at all (copies, memsets).
    const uint8_t kind = n.rfind("cuLaunchKernelEx", 0) == 0 ? 2 : n.rfind("cuLaunch", 0) == 0 ? 1 : 3;
    if (cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, CUpti_CallbackId(id)) == CUPTI_SUCCESS)
      ids[size_t(id)] = kind, ++on;
  }
  eager_cbids_ = std::move(ids);
  eager_sites_ = on > 0;
  if (!on) say("eager work is not grouped by origin (CUPTI refused the launch callbacks)");
}

void Injection::eager_launch(CUpti_CallbackId cbid, const CUpti_CallbackData* cb) noexcept {
  if (cb->callbackSite != CUPTI_API_ENTER || finished_) return;
  // The kernel launched (its CUfunction), else the call: what tells places
  // apart on a thread without Python.
  uint64_t what = uint64_t(cbid) << 48;
  const uint8_t kind = eager_cbids_[cbid];
  if (kind == 1 && cb->functionParams)
    what = reinterpret_cast<uintptr_t>(static_cast<const cuLaunchKernel_params*>(cb->functionParams)->f);
  else if (kind == 2 && cb->functionParams)
    what = reinterpret_cast<uintptr_t>(static_cast<const cuLaunchKernelEx_params*>(cb->functionParams)->f);
  const uint32_t site = capture::OriginRecorder::instance().launch_site(what);
  if (!site) return;
  std::lock_guard<std::mutex> lock(sites_m_);
  if (site_launches_.size() >= kMaxSiteLaunches) {
    ++sites_dropped_;
    return;
  }
  site_launches_.emplace_back(cb->correlationId, site);
}

bool Injection::enable_launch_callbacks() {
  if (launch_callbacks_) return true;
  launch_callbacks_ =
      cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch) ==
          CUPTI_SUCCESS &&
      cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz) ==
          CUPTI_SUCCESS;
  return launch_callbacks_;
}

void Injection::on_exec_destroy(const CUpti_ResourceData* rd) {
  const auto* gd = static_cast<const CUpti_GraphData*>(rd->resourceDescriptor);
  if (!gd) return;
  launching(gd->graphExec);  // its walk first, if still to do
  std::lock_guard<std::mutex> lock(m_);
  auto it = live_.find(gd->graphExec);
  if (it == live_.end()) return;
  new_version(it->second);
  live_.erase(it);  // the handle may be reused by a new exec
  liveness_.forget(reinterpret_cast<uintptr_t>(gd->graphExec));
}

// The hot path: one lock, one lookup, one insert while in the window.
void Injection::on_launch(const CUpti_CallbackData* cb) {
  if (cb->callbackSite != CUPTI_API_ENTER || !cb->functionParams) return;
  auto exec = static_cast<const cuGraphLaunch_params*>(cb->functionParams)->hGraph;
  launching(exec);  // its walk first, if still to do
  // Not profiling, a launch through the preload library's forwarders was
  // counted there (it counts while graphscope rests too).
  const bool counted = !config().profile && preload_in_launch();
  std::lock_guard<std::mutex> lock(m_);
  auto it = live_.find(exec);
  if (it == live_.end()) return;
  if (it->second.pending) new_version(it->second);
  if (!counted) count_launch(exec, it->second, cb->correlationId);
}

bool Injection::preload_launch(CUgraphExec e) noexcept {
  if (forked_child || !session_ || dir_.empty()) return false;  // not attached in this process
  launching(e);
  if (finished_) return false;
  try {
    std::lock_guard<std::mutex> lock(m_);
    auto it = live_.find(e);
    if (it == live_.end()) return false;
    if (it->second.pending) new_version(it->second);  // as the callback inside the call would
    if (refuse_launch(e, it->second)) return true;    // its addresses as this version has them
    if (config().profile) return false;  // CUPTI's callback counts every launch then
    count_launch(e, it->second, 0);
  } catch (...) {
  }
  return false;
}

void Injection::count_launch(CUgraphExec e, Live& l, uint32_t correlation) {
  liveness_.launched(reinterpret_cast<uintptr_t>(e), ++l.launches, false);
  const double when = costs_.since_start(std::chrono::steady_clock::now());
  if (config().profile) session_->launched(l.g, correlation, when);
  else session_->counted(l.g, when);
}

// Whether this thread is inside the preload library's graph launch (false
// when the library is not loaded).
bool Injection::preload_in_launch() {
  using Fn = int (*)();
  static Fn f = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "graphscope_preload_in_launch"));
  return f && f() != 0;
}

// Once per device: cudaGetDeviceProperties reads every attribute, and it
// ran in the application's thread for every graph. The first device a
// graph was made on is the process's (the index's device: with one
// process per GPU, the rank's).
std::optional<DeviceInfo> Injection::device_info(CUcontext ctx) {
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
std::optional<DeviceInfo> Injection::read_device_info(uint32_t dev, std::string& pci_bus_id) {
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

}  // namespace internal

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
extern "C" __attribute__((visibility("default"))) int graphscope_graph_launch(void* exec) {
  return graphscope::inject::Injection::instance().preload_launch(static_cast<CUgraphExec>(exec)) ? 1 : 0;
}

// Called by the preload library for an allocation (alloc 1) or free (0)
// while graphscope rests.
extern "C" __attribute__((visibility("default"))) void graphscope_rest_memory(int alloc, unsigned long long ptr,
                                                                               unsigned long long size) {
  graphscope::inject::Injection::instance().rest_memory(alloc != 0, ptr, size);
}

// Called by the Python hook (lib/inject/python-hook) for each block
// PyTorch's caching allocator hands out and takes back, and once to say
// whether it could watch them (why: null, or why not).
extern "C" __attribute__((visibility("default"))) void graphscope_torch_alloc(unsigned long long ptr) {
  graphscope::inject::Injection::instance().torch_memory(ptr, true);
}
extern "C" __attribute__((visibility("default"))) void graphscope_torch_free(unsigned long long ptr) {
  graphscope::inject::Injection::instance().torch_memory(ptr, false);
}
extern "C" __attribute__((visibility("default"))) void graphscope_torch_watch(const char* why) {
  graphscope::inject::Injection::instance().torch_watch(why);
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
