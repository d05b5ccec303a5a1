// libgraphscope_inject.so: the CUDA injection library that attaches
// graphscope to an unmodified application. The driver loads it through
// CUDA_INJECTION64_PATH at cuInit and calls InitializeInjection(); from then
// on, every graph the process instantiates is walked at
// CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED (while its template is still alive,
// whatever the application does with it afterwards) with lib/capture's
// walker, the one `graphscope capture` uses, and written as one
// graphscope.graph/1 document. With profiling on, CUPTI activity tracing
// runs for the whole process and the replays in a window are analysed at
// exit like `graphscope profile` does.
//
// Configured by the environment (`graphscope capture --exec` sets it):
//   GRAPHSCOPE_OUT            output directory (default graphscope-out); this
//                             process writes into GRAPHSCOPE_OUT/pid-PID
//   GRAPHSCOPE_MIN_NODES      skip graphs with fewer root nodes
//   GRAPHSCOPE_EXEC_IDS       only these exec graph ids (comma-separated)
//   GRAPHSCOPE_MAX_GRAPHS     stop after this many graphs
//   GRAPHSCOPE_PROFILE        1: trace and analyse replays
//   GRAPHSCOPE_SKIP_REPLAYS   replays of each graph left out first (default 1)
//   GRAPHSCOPE_REPLAYS        replays of each graph analysed (default 20)
//   GRAPHSCOPE_THRESHOLD_US, GRAPHSCOPE_TOLERANCE_US   as in `profile`
//   GRAPHSCOPE_QUIET          1: no line on stderr per graph
//
// Rules: nothing here may crash, block or change the behaviour of the host
// application. Every callback catches everything; errors are written into
// the index and said once on stderr. The hot path (a graph launch) takes one
// uncontended lock and one hash lookup.
#include <cuda.h>
#include <cupti.h>
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "capture/activity.h"
#include "capture/walk.h"
#include "inspect/chrome_trace.h"
#include "inspect/demangle.h"
#include "inspect/error.h"
#include "inspect/io.h"
#include "inspect/graph_json.h"
#include "inspect/json_writer.h"
#include "inspect/profile.h"
#include "inspect/profile_json.h"
#include "inspect/profile_report.h"

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

struct Config {
  std::string out = "graphscope-out";
  size_t min_nodes = 0;
  std::set<uint32_t> exec_ids;  // empty: all
  size_t max_graphs = SIZE_MAX;
  bool profile = false;
  uint32_t skip = 1, replays = 20;
  double threshold_us = 5, tolerance_us = 2;
  bool quiet = false;
};

// A malformed variable is said once and its default kept: the application
// must run regardless.
uint64_t env_number(const char* name, uint64_t fallback, std::vector<std::string>& errors) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  errno = 0;
  unsigned long long x = std::strtoull(v, &end, 10);
  if (errno || *end || *v == '-') {
    errors.push_back(std::string(name) + "=" + v + " is not a non-negative integer; using " + std::to_string(fallback));
    return fallback;
  }
  return x;
}

double env_real(const char* name, double fallback, std::vector<std::string>& errors) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  double x = std::strtod(v, &end);
  if (*end || !(x >= 0)) {
    errors.push_back(std::string(name) + "=" + v + " is not a non-negative number; using the default");
    return fallback;
  }
  return x;
}

Config read_config(std::vector<std::string>& errors) {
  Config c;
  if (const char* o = std::getenv("GRAPHSCOPE_OUT"); o && *o) c.out = o;
  c.min_nodes = env_number("GRAPHSCOPE_MIN_NODES", 0, errors);
  c.max_graphs = env_number("GRAPHSCOPE_MAX_GRAPHS", SIZE_MAX, errors);
  c.profile = env_number("GRAPHSCOPE_PROFILE", 0, errors) != 0;
  c.skip = uint32_t(std::min<uint64_t>(env_number("GRAPHSCOPE_SKIP_REPLAYS", 1, errors), UINT32_MAX));
  c.replays = uint32_t(std::min<uint64_t>(env_number("GRAPHSCOPE_REPLAYS", 20, errors), UINT32_MAX));
  c.threshold_us = env_real("GRAPHSCOPE_THRESHOLD_US", 5, errors);
  c.tolerance_us = env_real("GRAPHSCOPE_TOLERANCE_US", 2, errors);
  c.quiet = env_number("GRAPHSCOPE_QUIET", 0, errors) != 0;
  if (const char* ids = std::getenv("GRAPHSCOPE_EXEC_IDS"); ids && *ids) {
    std::string s = ids;
    size_t p = 0;
    while (p <= s.size()) {
      size_t q = s.find(',', p);
      if (q == std::string::npos) q = s.size();
      std::string part = s.substr(p, q - p);
      char* end = nullptr;
      unsigned long v = std::strtoul(part.c_str(), &end, 10);
      if (part.empty() || *end || v > UINT32_MAX) errors.push_back("GRAPHSCOPE_EXEC_IDS: '" + part + "' is not an id");
      else c.exec_ids.insert(uint32_t(v));
      p = q + 1;
    }
  }
  return c;
}

// This process's command line, from /proc (the application's argv is not
// ours to see otherwise).
std::vector<std::string> command_line() {
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  std::string a;
  while (std::getline(f, a, '\0')) args.push_back(a);
  return args;
}

struct Dumped {
  uint32_t exec_id = 0;
  std::string file;
  size_t nodes = 0, total_nodes = 0;
  std::vector<std::string> first_kernels;
  GraphDocument doc;  // kept for the profile (profiling only)
  uint32_t launches = 0;
  std::unordered_set<uint32_t> window;  // correlation ids of the replays analysed
  std::string profile_file, trace_file, profile_error;
  ProfileReport report;
  bool profiled = false;
};

struct Skipped {
  std::optional<uint32_t> exec_id;
  size_t nodes = 0;
  std::string why;
};

class Injection {
 public:
  void initialize() {
    config_ = read_config(errors_);
    pid_ = getpid();
    args_ = command_line();
    dir_ = config_.out + "/pid-" + std::to_string(pid_);
    if (!make_dirs(dir_)) {
      say("cannot create " + dir_ + " (" + std::strerror(errno) + "); not attaching");
      return;
    }
    if (stood_down_) {
      attach_error_ = stood_down_why_;
      write_index();
      return;
    }
    CUptiResult r = real_subscribe()(&subscriber_, &Injection::callback, this);
    if (r != CUPTI_SUCCESS) {
      const char* s = nullptr;
      cuptiGetResultString(r, &s);
      attach_error_ = r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
                          ? "CUPTI is in use by another tool (a profiler or another injection library); "
                            "graphscope stays out of the way"
                          : std::string("cuptiSubscribe failed: ") + (s ? s : "?");
      say(attach_error_);
      write_index();
      return;
    }
    bool ok = cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED) ==
                  CUPTI_SUCCESS &&
              cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RESOURCE,
                                  CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING) == CUPTI_SUCCESS;
    if (ok && config_.profile) {
      ok = cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch) ==
               CUPTI_SUCCESS &&
           cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API,
                               CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz) == CUPTI_SUCCESS;
      try {
        collector_.start();
      } catch (const Error& e) {
        profile_error_ = e.what();
        say(profile_error_ + "; graphs are dumped, not profiled");
      }
    }
    if (!ok) {
      attach_error_ = "cuptiEnableCallback failed";
      say(attach_error_);
      cuptiUnsubscribe(subscriber_);
      write_index();
      return;
    }
    attached_ = true;
    write_index();
    std::atexit([] { instance().finish(); });
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
    std::lock_guard<std::mutex> lock(m_);
    if (stood_down_) return;
    stood_down_ = true;
    stood_down_why_ = std::string("the application subscribed to CUPTI itself (") + who +
                      ", e.g. the PyTorch profiler); graphscope let go of CUPTI and stopped attaching here";
    if (!attached_) return;  // not started yet: initialize() will say it
    try {
      if (collector_.running()) {
        collector_.stop();
        stopped_trace_ = collector_.take();
        have_stopped_trace_ = true;
      }
    } catch (...) {
    }
    cuptiUnsubscribe(subscriber_);
    attached_ = false;
    say(stood_down_why_);
    write_index();
  }

  // At exit: the profile of every graph, and the final index.
  void finish() noexcept {
    if (finished_.exchange(true)) return;
    std::lock_guard<std::mutex> lock(m_);
    try {
      if (collector_.running() || have_stopped_trace_) {
        if (collector_.running()) {
          collector_.stop();
          stopped_trace_ = collector_.take();
        }
        for (auto& d : dumped_) profile_one(d, stopped_trace_);
        write_report_text();
      }
    } catch (const std::exception& e) {
      errors_.push_back(std::string("profile at exit: ") + e.what());
    } catch (...) {
      errors_.push_back("profile at exit: unknown error");
    }
    write_index();
  }

 private:
  static void CUPTIAPI callback(void* self, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
    auto* me = static_cast<Injection*>(self);
    try {
      if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED)
        me->on_exec_created(static_cast<const CUpti_ResourceData*>(data));
      else if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING)
        me->on_exec_destroy(static_cast<const CUpti_ResourceData*>(data));
      else if (domain == CUPTI_CB_DOMAIN_DRIVER_API)
        me->on_launch(static_cast<const CUpti_CallbackData*>(data));
    } catch (const std::exception& e) {
      me->error(std::string("callback: ") + e.what());
    } catch (...) {
      me->error("callback: unknown error");
    }
  }

  void on_exec_created(const CUpti_ResourceData* rd) {
    const auto* gd = static_cast<const CUpti_GraphData*>(rd->resourceDescriptor);
    if (!gd || !gd->graph || !gd->graphExec || finished_) return;
    std::lock_guard<std::mutex> lock(m_);
    if (stood_down_) return;
    auto exec = reinterpret_cast<cudaGraphExec_t>(gd->graphExec);
    std::optional<uint32_t> id = capture::exec_graph_id(exec);
    if (dumped_.size() >= config_.max_graphs) {
      skipped_.push_back({id, 0, "GRAPHSCOPE_MAX_GRAPHS reached"});
      return;
    }
    if (!id) {
      skipped_.push_back({id, 0, "no exec graph id (CUPTI unavailable)"});
      return;
    }
    if (!config_.exec_ids.empty() && !config_.exec_ids.count(*id)) {
      skipped_.push_back({id, 0, "not in GRAPHSCOPE_EXEC_IDS"});
      return;
    }
    capture::WalkOptions wo;
    GraphDocument doc = capture::walk_graph(reinterpret_cast<cudaGraph_t>(gd->graph), wo);
    if (doc.root.nodes.size() < config_.min_nodes) {
      skipped_.push_back({id, doc.root.nodes.size(), "fewer than GRAPHSCOPE_MIN_NODES nodes"});
      write_index();
      return;
    }
    capture::assign_exec_ids(doc, *id);
    doc.name = "exec" + std::to_string(*id);
    doc.device = device_info(rd->context);
    if (!device_ && doc.device) device_ = doc.device;
    Dumped d;
    d.exec_id = *id;
    d.file = "graph-" + std::to_string(*id) + ".json";
    d.nodes = doc.root.nodes.size();
    d.total_nodes = total_nodes(doc.root);
    for (const auto& n : doc.root.nodes) {
      if (n.type != NodeType::kernel) continue;
      d.first_kernels.push_back(short_kernel_name(n.kernel_name, 60));
      if (d.first_kernels.size() == 3) break;
    }
    write_output(dir_ + "/" + d.file, write_graph_json(doc));
    if (!config_.quiet)
      std::fprintf(stderr, "graphscope: pid %d: exec graph %u, %zu nodes -> %s/%s\n", int(pid_), *id, d.nodes,
                   dir_.c_str(), d.file.c_str());
    if (collector_.running()) d.doc = std::move(doc);
    live_[gd->graphExec] = dumped_.size();
    dumped_.push_back(std::move(d));
    write_index();  // complete after every graph, whatever happens to the process later
  }

  void on_exec_destroy(const CUpti_ResourceData* rd) {
    const auto* gd = static_cast<const CUpti_GraphData*>(rd->resourceDescriptor);
    if (!gd) return;
    std::lock_guard<std::mutex> lock(m_);
    live_.erase(gd->graphExec);  // the handle may be reused by a new exec
  }

  // The hot path: one lock, one lookup, one insert while in the window.
  void on_launch(const CUpti_CallbackData* cb) {
    if (cb->callbackSite != CUPTI_API_ENTER || !cb->functionParams) return;
    auto exec = static_cast<const cuGraphLaunch_params*>(cb->functionParams)->hGraph;
    std::lock_guard<std::mutex> lock(m_);
    auto it = live_.find(exec);
    if (it == live_.end()) return;
    Dumped& d = dumped_[it->second];
    uint32_t k = ++d.launches;
    if (k > config_.skip && k - config_.skip <= config_.replays) d.window.insert(cb->correlationId);
  }

  void profile_one(Dumped& d, const Trace& all) {
    if (d.window.empty()) {
      d.profile_error = d.launches ? "no replay in the window (GRAPHSCOPE_SKIP_REPLAYS " + std::to_string(config_.skip) +
                                         ", " + std::to_string(d.launches) + " launches)"
                                   : "never launched";
      return;
    }
    // This graph's replays in the window, and any other work that ran while
    // they did (it may have blocked them).
    Trace t;
    t.source = all.source;
    t.names = all.names;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (const auto& a : all.activities)
      if (a.graph_id && *a.graph_id == d.exec_id && d.window.count(a.correlation)) {
        lo = std::min(lo, a.start_ns);
        hi = std::max(hi, a.end_ns);
      }
    for (const auto& a : all.activities) {
      bool mine = a.graph_id && *a.graph_id == d.exec_id && d.window.count(a.correlation);
      bool during = !(a.graph_id && *a.graph_id == d.exec_id) && a.end_ns >= lo && a.start_ns <= hi;
      if (mine || during) t.activities.push_back(a);
    }
    if (lo == UINT64_MAX) {
      d.profile_error = "no activity record of its replays (dropped records: " +
                        std::to_string(collector_.dropped_records()) + ")";
      return;
    }
    ProfileOptions po;
    po.threshold_us = config_.threshold_us;
    po.tolerance_us = config_.tolerance_us;
    po.exec_graph_id = d.exec_id;
    d.report = analyze_profile(d.doc, t, po);
    d.profiled = true;
    d.profile_file = "profile-" + std::to_string(d.exec_id) + ".json";
    d.trace_file = "trace-" + std::to_string(d.exec_id) + ".json";
    write_output(dir_ + "/" + d.profile_file, write_profile_json(d.report, d.doc));
    write_output(dir_ + "/" + d.trace_file, write_chrome_trace(t, &d.doc, &d.report));
  }

  void write_report_text() {
    std::string out;
    for (const auto& d : dumped_) {
      out += "== pid " + std::to_string(pid_) + ", exec graph " + std::to_string(d.exec_id) + " (" +
             std::to_string(d.nodes) + " nodes, " + std::to_string(d.launches) + " launches)\n";
      out += d.profiled ? format_profile(d.report, d.doc) : "not profiled: " + d.profile_error + "\n";
      out += "\n";
    }
    write_output(dir_ + "/report.txt", out);
  }

  // graphscope.attach/1: what this process did, rewritten after each graph.
  void write_index() noexcept {
    try {
      JsonWriter w(2);
      w.begin_object();
      w.key("schema").value("graphscope.attach/1");
      w.key("pid").value(int64_t(pid_));
      w.key("command_line").begin_array();
      for (const auto& a : args_) w.value(a);
      w.end_array();
      w.key("attached").value(attached_ || (stood_down_ && !dumped_.empty()));
      if (stood_down_) w.key("let_go").value(stood_down_why_);
      if (!attach_error_.empty()) w.key("attach_error").value(attach_error_);
      w.key("complete").value(bool(finished_));
      w.key("profile").value(config_.profile && profile_error_.empty());
      if (!profile_error_.empty()) w.key("profile_error").value(profile_error_);
      if (device_) {
        w.key("device").begin_object();
        w.key("name").value(device_->name);
        if (device_->cc_major && device_->cc_minor)
          w.key("compute_capability").value(std::to_string(*device_->cc_major) + "." + std::to_string(*device_->cc_minor));
        if (device_->driver_version) w.key("driver_version").value(*device_->driver_version);
        if (device_->runtime_version) w.key("runtime_version").value(*device_->runtime_version);
        w.end_object();
      }
      w.key("graphs").begin_array();
      for (const auto& d : dumped_) {
        w.begin_object();
        w.key("exec_graph_id").value(uint64_t(d.exec_id));
        w.key("file").value(d.file);
        w.key("nodes").value(uint64_t(d.nodes));
        w.key("nodes_with_bodies").value(uint64_t(d.total_nodes));
        w.key("first_kernels").begin_array();
        for (const auto& k : d.first_kernels) w.value(k);
        w.end_array();
        if (config_.profile) {
          w.key("launches").value(uint64_t(d.launches));
          w.key("replays_analysed").value(uint64_t(d.window.size()));
          if (d.profiled) {
            w.key("profile").value(d.profile_file).key("trace").value(d.trace_file);
            w.key("fake").value(uint64_t(d.report.fake)).key("blocking").value(uint64_t(d.report.blocking));
            w.key("makespan_us").value(d.report.makespan_us).key("critical_path_us").value(d.report.critical_path_us);
          } else if (!d.profile_error.empty()) {
            w.key("profile_error").value(d.profile_error);
          }
        }
        w.end_object();
      }
      w.end_array();
      w.key("skipped").begin_array();
      for (const auto& s : skipped_) {
        w.begin_object();
        w.key("exec_graph_id");
        s.exec_id ? w.value(uint64_t(*s.exec_id)) : w.null();
        w.key("nodes").value(uint64_t(s.nodes)).key("why").value(s.why);
        w.end_object();
      }
      w.end_array();
      if (collector_.dropped_records()) w.key("dropped_records").value(collector_.dropped_records());
      w.key("errors").begin_array();
      for (const auto& e : errors_) w.value(e);
      w.end_array();
      w.end_object();
      std::string text(w.view());
      text += '\n';
      write_output(dir_ + "/index.json", text);
    } catch (...) {
      // Nowhere left to say it: the directory is gone or full.
    }
  }

  std::optional<DeviceInfo> device_info(CUcontext ctx) {
    uint32_t dev = 0;
    if (cuptiGetDeviceId(ctx, &dev) != CUPTI_SUCCESS) return std::nullopt;
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, int(dev)) != cudaSuccess) return std::nullopt;
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
    if (errors_.empty()) say(e);  // once; the index has them all
    if (errors_.size() < 100) errors_.push_back(e);
    write_index();
  }

  void say(const std::string& s) const { std::fprintf(stderr, "graphscope: pid %d: %s\n", int(pid_), s.c_str()); }

  static bool make_dirs(const std::string& path) {
    for (size_t p = 1; p <= path.size(); ++p) {
      if (p < path.size() && path[p] != '/') continue;
      std::string part = path.substr(0, p);
      if (mkdir(part.c_str(), 0777) != 0 && errno != EEXIST) return false;
    }
    return true;
  }

  std::mutex m_;
  Config config_;
  pid_t pid_ = 0;
  std::vector<std::string> args_;
  std::string dir_;
  CUpti_SubscriberHandle subscriber_ = nullptr;
  bool attached_ = false;
  std::string attach_error_, profile_error_;
  std::atomic<bool> finished_{false};
  bool stood_down_ = false;
  std::string stood_down_why_;
  Trace stopped_trace_;  // the activities traced before standing down or at exit
  bool have_stopped_trace_ = false;
  std::vector<Dumped> dumped_;
  std::optional<DeviceInfo> device_;
  std::vector<Skipped> skipped_;
  std::unordered_map<CUgraphExec, size_t> live_;
  std::vector<std::string> errors_;
  capture::ActivityCollector collector_;
};

}  // namespace

// Called by the interposers below.
void stand_down(const char* who) noexcept { Injection::instance().stand_down(who); }

}  // namespace graphscope::inject

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
