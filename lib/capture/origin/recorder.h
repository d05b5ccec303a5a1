// The recorder's state (OriginRecorder::Impl) and what its files share:
// each thread's state in the callbacks, and the entries recorded per node.
#pragma once

#include "capture/origin.h"

#include <cuda.h>
#include <generated_nvtx_meta.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "capture/flat_map.h"
#include "python_cache.h"
#include "symbols.h"

namespace graphscope::capture {
namespace origin_internal __attribute__((visibility("hidden"))) {

// ---------------------------------------------------------------------------
// NVTX: each thread's open ranges.
struct ThreadState {
  int depth = 0;                           // nesting of runtime/driver API calls
  std::shared_ptr<const Origin> pending;   // made at the outermost call's entry
  struct Open {
    const void* domain;
    uint64_t id;   // started ranges: the range id
    uint64_t seq;  // when it was opened, on this thread
    NvtxRange range;
  };
  std::vector<Open> pushed;   // outermost first
  std::vector<Open> started;  // ranges this thread started and has not ended
  bool copying = false;       // inside a call whose node copies need no origin (copies_nodes())
  uint64_t seq = 0;
  Script script;  // changed by this thread alone, under the origins cache's lock (Impl::py_m)
};

// This thread's state (recorder.cc).
ThreadState& thread_state();

// Whether s begins with p (recorder.cc).
bool has_prefix(const char* s, const char* p);

// A node's origin; without Python, the return addresses of the call that
// made it, symbolized when first asked (clones share both).
struct Entry {
  std::shared_ptr<const Origin> origin;
  std::shared_ptr<std::vector<void*>> pcs;
  const void* graph = nullptr;  // the graph the node was made in
};

}  // namespace origin_internal

struct __attribute__((visibility("hidden"))) OriginRecorder::Impl {
  std::mutex m;  // everything below
  FlatMap<uint64_t, Entry> nodes;
  // A node's origin (native frames symbolized on the first ask). Under m.
  std::shared_ptr<const Origin> origin_locked(uint64_t node_handle);
  std::unordered_map<const void*, std::string> domains;  // nvtxDomainHandle_t -> name
  std::unordered_map<const void*, std::string> strings;  // nvtxStringHandle_t -> text
  std::mutex py_m;
  PyCache py_cache;
  std::atomic<int> captures{0};
  // Return address -> its frame, or nullopt for one to step over.
  std::unordered_map<const void*, std::optional<NativeFrame>> frames;
  std::unordered_map<std::string, std::unique_ptr<SymbolTable>> tables;

  // NVTX ranges and the names NVTX registered (nvtx.cc).
  std::string message(const nvtxEventAttributes_t* a);
  std::string domain_name(const void* d);
  void nvtx(CUpti_CallbackId cbid, const CUpti_NvtxData* d);

  // How a read may reach Python: not at all; at an API call's entry, where
  // the driver holds no lock of its own and the GIL may be waited for; or
  // inside the driver (a node-created callback), where waiting for the GIL
  // without a bound could deadlock against a thread that holds it and
  // waits for the driver: a thread that holds the GIL already reads in
  // full, any other has the proxy read for it (proxy_read), or gives up.
  enum class Read { none, at_entry, in_driver };

  // This thread's origin now (recorder.cc).
  std::shared_ptr<const Origin> now(Read how);

  // The proxy: a thread of graphscope's that reads the stack of a thread
  // inside the driver that does not hold the GIL (the common case: PyTorch
  // lets it go around every op), when the caches cannot answer (the first
  // capture, a module changed, a new line of code). It takes the GIL, reads
  // the asking thread's frames (which cannot change: that thread is in a
  // CUDA call) and hands the origin back. The asking thread waits at most
  // kProxyWait for the proxy to begin: a thread holding the GIL while it
  // waits for the driver's lock (which the asking thread holds) then
  // costs one node its Python stack, never a deadlock. Once the proxy has
  // the GIL and began, it needs nothing of the asking thread's; its read
  // is waited for up to a second (it runs no Python code of the
  // application's, unless a module overrides __getattribute__).
  static constexpr std::chrono::milliseconds kProxyWait{20};
  enum class Proxied { read, late, unavailable };
  struct ProxyJob {
    std::timed_mutex asking;  // one asking thread at a time
    // idle -> waiting (asked) -> reading (begun, with the GIL) -> done
    // (answered) -> idle; waiting -> idle when the asking thread stops
    // waiting before the read began; reading -> abandoned -> idle when it
    // stops waiting after (the proxy then drops its result).
    enum State : int { idle, waiting, reading, done, abandoned };
    std::atomic<int> state{idle};
    std::mutex m;  // for the condition variables (state changes notify under it)
    std::condition_variable to_proxy, to_asker;
    // The job, written by the asking thread before `waiting` and read by the
    // proxy after it; the result, written by the proxy before `done`.
    void* target = nullptr;  // the asking thread's thread state
    bool uncached = false, reuse = false;
    std::shared_ptr<Origin> o;
    std::shared_ptr<const Origin> result;
    std::atomic<bool> started{false}, failed{false}, off{false};  // off: proxy_off_for_tests
    std::atomic<int> wait_ms{int(kProxyWait.count())};

    // Until state is `want` or the deadline: spinning a little first (a
    // first capture asks for hundreds of reads back to back, and a sleep
    // and a wake-up cost more than a read), then sleeping on `cv`.
    bool wait_for(int want, std::condition_variable& cv, std::chrono::steady_clock::time_point deadline,
                  std::chrono::microseconds spin) {
      const auto spin_end = std::min(deadline, std::chrono::steady_clock::now() + spin);
      do {
        if (state.load(std::memory_order_acquire) == want) return true;
        std::this_thread::yield();
      } while (std::chrono::steady_clock::now() < spin_end);
      std::unique_lock<std::mutex> lock(m);
      return cv.wait_until(lock, deadline, [&] { return state.load(std::memory_order_acquire) == want; });
    }
    void set(int to, std::condition_variable& cv) {
      {
        std::lock_guard<std::mutex> lock(m);
        state.store(to, std::memory_order_release);
      }
      cv.notify_all();
    }
    bool move(int from, int to, std::condition_variable& cv) {
      bool moved;
      {
        std::lock_guard<std::mutex> lock(m);
        moved = state.compare_exchange_strong(from, to, std::memory_order_acq_rel);
      }
      if (moved) cv.notify_all();
      return moved;
    }
  } proxy;

  // proxy.cc
  Proxied proxy_read(const Python& py, const std::shared_ptr<Origin>& o, bool reuse,
                     std::shared_ptr<const Origin>& out);
  void proxy_loop();

  // Stack reads at the entry of the calls that make nodes (the driver
  // callbacks that enable() left off: on the H100 host, CUPTI's delivery of
  // them alone added 0.3-0.6 ms to each capture of the Llama's 392 launches,
  // a diagnostic of 2026-11-26, in git history). Turned on once, for the rest of the
  // process, where the proxy cannot be used (a Python without
  // PyEval_SaveThread, PyEval_RestoreThread or PyThreadState_GetFrame, or
  // its thread could not start), by a helper thread: CUPTI is not asked to
  // change its callbacks from inside one. Until it has, nodes made without
  // the GIL go without their Python stack.
  std::atomic<bool> entry_reads{false};
  std::mutex sub_m;  // subscriber
  CUpti_SubscriberHandle subscriber = nullptr;
  void read_at_entry();

  // What an API call is to origins (kind_of), by the driver's callback id:
  // filled by enable(), so a callback compares no names.
  enum Kind : uint8_t { kMakes = 1, kGraphAdd = 2, kCopies = 4, kBegin = 8, kEnd = 16 };
  static uint8_t kind_of(const char* f);
  std::vector<uint8_t> driver_kinds;  // by CUPTI_DRIVER_TRACE_CBID_*

  // The callbacks (recorder.cc).
  void api(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* cb);
  void created(const CUpti_GraphData* g);
  void cloned(const CUpti_GraphData* g);

  // Entries go with their graph (CUPTI_CBID_RESOURCE_GRAPH_DESTROY_STARTING,
  // one callback a graph), not with each node: the node-destroy callbacks,
  // three a node in a PyTorch capture (its template, instantiation's copy,
  // the exec graph), are not enabled. A node destroyed alone leaves its
  // entry until its graph goes; a new node at its address replaces it
  // (created, cloned: each node a walk can meet is made by a capture, a
  // graph-add call or a clone).
  std::unordered_map<const void*, std::vector<uint64_t>> by_graph;  // under m
  // The graph the last node was recorded in, and its list (a capture's
  // nodes come one graph at a time; a map's values stay where they are).
  const void* last_graph = nullptr;
  std::vector<uint64_t>* last_list = nullptr;

  // Launch sites (sites.cc): by key, and in id order.
  std::mutex sites_m;
  std::unordered_map<uint64_t, uint32_t> site_ids;
  std::vector<Entry> sites;

  void record(const void* node, Entry e);
  void forget(const void* node);
  void graph_destroyed(const CUpti_GraphData* g);

  // Native frames (symbols.cc).
  std::optional<NativeFrame> symbolize(const std::vector<void*>& pcs);
  static std::optional<NativeFrame> frame_at(void* pc,
                                             std::unordered_map<std::string, std::unique_ptr<SymbolTable>>& tables);
};

}  // namespace graphscope::capture
