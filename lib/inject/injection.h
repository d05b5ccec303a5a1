// The injection library's state, class Injection, and what the files of
// lib/inject share (README.md says which file does which job). Private to
// libgraphscope_inject.so, which exports only the entry points of inject.cc.
#pragma once

#include <cuda.h>
#include <cupti.h>
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "capture/activity.h"
#include "costs.h"
#include "capture/exec_update.h"
#include "capture/walk.h"
#include "inspect/analysis/profile.h"
#include "inspect/model/graph.h"
#include "inspect/model/liveness.h"
#include "inspect/runs/attach_session.h"

namespace graphscope::inject {
// In a namespace of their own (they were inject.cc's unnamed namespace's).
namespace internal {

// Set in a child that fork() made without exec (inject.cc).
extern std::atomic<bool> forked_child;
// Set on the walker thread (walks_at_destroy.cc).
extern thread_local bool t_walker;

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
    uint64_t launches = 0;     // its launches seen (count_launch)
    bool refused_said = false; // a refused launch said on stderr (--liveness=error)
  };

 public:
  // inject.cc: attaching, and the CUPTI adapter.
  void initialize();
  std::string subscribe();
  static Injection& instance();
  using SubscribeFn = CUptiResult (*)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*);
  static SubscribeFn real_subscribe();
  // let_go.cc
  void stand_down(const char* who) noexcept;
  // inject.cc
  void finish() noexcept;

 private:
  void finish_locked() noexcept;
  static void CUPTIAPI callback(void* self, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data);
  void on_exec_created(const CUpti_ResourceData* rd);
  // documents.cc
  void dump_walked(CUgraphExec exec, uint32_t exec_id, const std::optional<DeviceInfo>& device,
                   capture::QueriedGraph&& q, std::vector<uint64_t>&& handles, uint64_t since);

  // Walks at destroy (walks_at_destroy.cc says how they go).
  enum class Walk : uint8_t { pending, queued, walking };  // to do here; handed to the walker; under way
  struct Deferred {
    CUgraph graph = nullptr;
    CUgraphExec exec = nullptr;
    uint32_t exec_id = 0;
    std::optional<DeviceInfo> device;
    Walk state = Walk::pending;
    bool destroy = false;  // the application destroyed it: graphscope does after the walk
    uint64_t since = 0;    // the liveness clock at its instantiation
  };
  bool runtime_covered();
  void walk_deferred(const Deferred& d) noexcept;
  template <typename Which>  // defined, and used, in walks_at_destroy.cc alone
  void resolve(Which which, bool wait) noexcept;
  void resolve_all() noexcept;
  // A driver call that may change a graph (fence_kinds_): the walks still
  // to do first, while the templates are as they were instantiated.
  enum Fence : uint8_t { kNoFence = 0, kFenceAll = 1, kFenceDestroy = 2 };
  static uint8_t fence_kind(const char* f);
  void fence(CUpti_CallbackId cbid, const CUpti_CallbackData* cb);
  bool enable_fences();

 public:
  bool take_destroy(CUgraph g) noexcept;
  // The walker begins a walk once no stream capture is under way, or after
  // kCaptureWait: a walk beside a capture slows the capture's launches
  // more than it saves (the Llama's 392-node captures on 2 CPUs, H200,
  // 2026-11-27). Whoever needs the walk meanwhile does it (resolve).
  static constexpr auto kCaptureWait = std::chrono::milliseconds(200);
  void wait_for_captures() const;
  void launching(CUgraphExec e) noexcept;
  // The preload library's graph launch (lib/inject/preload.cc), before the
  // real call: its walk first, if still to do, and, unless profiling
  // (CUPTI's callback counts every launch then), the launch counted.
  // True: refuse the launch (--liveness=error: it would touch memory freed
  // since its capture); the preload library returns cudaErrorIllegalState.
  bool preload_launch(CUgraphExec e) noexcept;

 private:
  // let_go.cc: letting go of CUPTI, for good or until the next graph.
  void let_go(const std::string& why);
  void detach();
  void wait_detached();
  static bool preload_rest(bool on);
  static bool preload_seen();
  void unseen(const std::string& what);
  void rest(const std::string& why);

 public:
  void take_back(const char* call) noexcept;

 private:
  void watch_idle();

  // documents.cc: the documents the writer writes, and the index.
  std::shared_ptr<DocSlot> post_document(const std::string& file,
                                         std::function<std::shared_ptr<const GraphDocument>()> make,
                                         std::string said = {}, std::shared_ptr<DocSlot> slot = nullptr);
  std::shared_ptr<DocSlot> post_document(const std::string& file, std::shared_ptr<const GraphDocument> doc,
                                         std::string said = {});
  void job_error(const std::string& e) noexcept;

  // inject.cc
  capture::WalkOptions walk_options(bool phases) const;
  bool enable_launch_callbacks();

  // documents.cc: exec graphs' versions.
  void on_exec_change(const capture::ExecChange& c);
  void new_version(Live& l);

  // inject.cc
  void on_exec_destroy(const CUpti_ResourceData* rd);
  void on_launch(const CUpti_CallbackData* cb);
  // A launch of the dumped graph whose exec graph l is: counted in its
  // index entry, with its correlation id when profiling. Under m_.
  void count_launch(CUgraphExec e, Live& l, uint32_t correlation);
  static bool preload_in_launch();
  // The costs of each graph into its index entry, the launches' coverage,
  // and at exit the device's graph memory (documents.cc). Under m_.
  void fill_costs(AttachIndex& x);
  void graph_memory_at_exit(AttachIndex& x);
  // The Python hook's file of PyTorch's cudagraph records, moved into the
  // process's directory (documents.cc).
  void take_torch_log(AttachIndex& x);

  // documents.cc
  void profile_one(size_t g, const Trace& all);
  void write_report_text();
  void write_index() noexcept;

  // inject.cc
  std::optional<DeviceInfo> device_info(CUcontext ctx);
  static std::optional<DeviceInfo> read_device_info(uint32_t dev, std::string& pci_bus_id);

  // documents.cc
  void error(const std::string& e);

  const AttachConfig& config() const { return session_->config(); }

  void journal(const std::string& file) const;

  void say(const std::string& s) const { std::fprintf(stderr, "graphscope: pid %d: %s\n", int(pid_), s.c_str()); }

  bool make_process_dir(const std::optional<AttachRank>& rank);
  static bool make_dirs(const std::string& path);

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
  // Eager launch sites (the ledger's eager work by origin; with origins,
  // where the run's GPU work is recorded): the driver's launch and copy
  // calls by callback id, and each launch's (correlation, site), under
  // sites_m_, at most kMaxSiteLaunches (the rest counted in sites_dropped_).
  std::atomic<bool> eager_sites_{false};
  std::vector<uint8_t> eager_cbids_;
  std::mutex sites_m_;
  std::vector<std::pair<uint32_t, uint32_t>> site_launches_;
  uint64_t sites_dropped_ = 0;
  static constexpr size_t kMaxSiteLaunches = size_t(1) << 24;
  void enable_eager_sites();
  void eager_launch(CUpti_CallbackId cbid, const CUpti_CallbackData* cb) noexcept;
  // liveness.cc: input liveness at replay, and updates the driver refused.
 public:
  void torch_memory(uint64_t ptr, bool alloc) noexcept;
  void torch_watch(const char* why) noexcept;
  void rest_memory(bool alloc, uint64_t ptr, uint64_t size) noexcept;

 private:
  void enable_memory_callbacks();
  void on_memory(CUpti_CallbackId cbid, const CUpti_CallbackData* cb) noexcept;
  static std::vector<LivenessTracker::Address> addresses_of(const GraphDocument& doc);
  void watch_document(CUgraphExec exec, uint32_t exec_id, const GraphDocument& doc, uint64_t since);
  bool refuse_launch(CUgraphExec e, Live& l) noexcept;  // under m_
  void liveness_at_exit(AttachIndex& x);
  void on_update_failed(const capture::ExecFailure& f);
  LivenessTracker liveness_;
  bool liveness_on_ = false;
  std::atomic<int> capturing_{0};  // stream captures under way in the process
  std::atomic<bool> torch_seen_{false};
  std::string torch_watch_error_;
  std::vector<std::string> liveness_notes_;
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
  Costs costs_;  // capture, instantiate and upload times, memory at capture
  std::chrono::steady_clock::time_point t0_;  // when the process attached
};

}  // namespace internal
// Seen from graphscope::inject unqualified, as the unnamed namespace's names
// were (graphscope::inject::Injection::instance() in the entry points).
using namespace internal;
}  // namespace graphscope::inject
