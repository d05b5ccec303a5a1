// The recorder: CUPTI's callbacks (API calls that begin and end captures
// and make nodes, nodes created and cloned, graphs destroyed) turned into
// an origin per node, and OriginRecorder's public functions.
#include "recorder.h"

#include <dlfcn.h>
#include <execinfo.h>

#include <cstdlib>
#include <cstring>
#include <thread>

#include "capture/clock.h"

namespace graphscope::capture {

namespace origin_internal {

ThreadState& thread_state() {
  // Never freed: a callback may come while the thread is going away.
  static thread_local ThreadState* ts = new ThreadState;
  return *ts;
}

bool has_prefix(const char* s, const char* p) { return std::strncmp(s, p, std::strlen(p)) == 0; }

namespace {

// API calls that add a node to a capturing stream's graph, or to a graph.
bool makes_node(const char* f) {
  static const char* const kPrefixes[] = {
      "cudaLaunch", "cudaMemcpy", "cudaMemset", "cudaEventRecord", "cudaStreamWaitEvent", "cudaMallocAsync",
      "cudaFreeAsync", "cudaMallocFromPoolAsync", "cudaGraphAdd", "cuLaunch", "cuMemcpy", "cuMemset",
      "cuEventRecord", "cuStreamWaitEvent", "cuMemAllocAsync", "cuMemFreeAsync", "cuMemAllocFromPoolAsync",
      "cuGraphAdd", "cuStreamWriteValue", "cuStreamWaitValue", "cuStreamBatchMemOp"};
  for (const char* p : kPrefixes)
    if (has_prefix(f, p)) return true;
  return false;
}

bool graph_add(const char* f) { return has_prefix(f, "cudaGraphAdd") || has_prefix(f, "cuGraphAdd"); }

// Calls that create or destroy the nodes of an exec graph (instantiation's
// copies): nothing looks those nodes up, so their resource callbacks return
// at once instead of copying and erasing origins (a sixth of an attached
// capture's time went there).
bool copies_nodes(const char* f) {
  return has_prefix(f, "cudaGraphInstantiate") || has_prefix(f, "cuGraphInstantiate") ||
         has_prefix(f, "cudaGraphExecDestroy") || has_prefix(f, "cuGraphExecDestroy");
}

}  // namespace
}  // namespace origin_internal

// This thread's origin now: NVTX ranges, and the Python stack as `how`
// allows.
std::shared_ptr<const Origin> OriginRecorder::Impl::now(Read how) {
  ThreadState& ts = thread_state();
  const Python& py = python();
  const bool python_ready = how != Read::none && py.ready();
  const bool gil = python_ready && py.holds_gil();
  if (python_ready && ts.pushed.empty() && ts.started.empty())
    if (auto made = read_python_cached(py, py_cache, py_m, gil, &ts.script)) {
      g_reads_cached.fetch_add(1, std::memory_order_relaxed);
      return made;
    }
  auto o = std::make_shared<Origin>();
  // Pushed and started ranges, in the order they were opened.
  for (size_t i = 0, j = 0; i < ts.pushed.size() || j < ts.started.size();)
    if (j == ts.started.size() || (i < ts.pushed.size() && ts.pushed[i].seq < ts.started[j].seq))
      o->nvtx.push_back(ts.pushed[i++].range);
    else
      o->nvtx.push_back(ts.started[j++].range);
  for (size_t i = o->nvtx.size(); i-- > 0;)
    if (o->nvtx[i].message.rfind("aten::", 0) == 0) {
      o->op = o->nvtx[i].message.substr(0, o->nvtx[i].message.find(','));
      break;
    }
  if (python_ready && (how == Read::at_entry || gil)) {
    g_reads_full.fetch_add(1, std::memory_order_relaxed);
    if (auto same = read_python(py, py_cache, py_m, o, o->nvtx.empty())) return same;
  } else if (python_ready) {
    // A Python thread that let the GIL go launches (PyTorch lets it go
    // around every op; ctypes, NCCL through c10d, pynccl).
    std::shared_ptr<const Origin> same;
    switch (proxy_read(py, o, o->nvtx.empty(), same)) {
      case Proxied::read:
        g_reads_proxied.fetch_add(1, std::memory_order_relaxed);
        if (same) return same;
        break;
      case Proxied::late:  // this node goes without its Python stack
        g_reads_late.fetch_add(1, std::memory_order_relaxed);
        break;
      case Proxied::unavailable:  // this one too, and later ones are read at the entry
        read_at_entry();
        break;
    }
  }
  return o;
}

void OriginRecorder::Impl::read_at_entry() {
  if (entry_reads.exchange(true)) return;
  std::thread([this] {
    std::lock_guard<std::mutex> lock(sub_m);
    if (!subscriber) return;
    for (int id = 1; id < int(driver_kinds.size()); ++id)
      if (driver_kinds[size_t(id)] == kMakes)
        cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, CUpti_CallbackId(id));
  }).detach();
}

uint8_t OriginRecorder::Impl::kind_of(const char* f) {
  return uint8_t((makes_node(f) ? kMakes : 0) | (graph_add(f) ? kGraphAdd : 0) | (copies_nodes(f) ? kCopies : 0) |
                 (has_prefix(f, "cudaStreamBeginCapture") || has_prefix(f, "cuStreamBeginCapture") ? kBegin : 0) |
                 (has_prefix(f, "cudaStreamEndCapture") || has_prefix(f, "cuStreamEndCapture") ? kEnd : 0));
}

void OriginRecorder::Impl::api(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                               const CUpti_CallbackData* cb) {
  ThreadState& ts = thread_state();
  const uint8_t kind = domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid < driver_kinds.size()
                           ? driver_kinds[cbid]
                           : kind_of(cb->functionName ? cb->functionName : "");
  // A call that only makes nodes, while its callbacks should be off (a
  // caller that delivers every call, as the tests' harness does): as if
  // it had not come.
  if (kind == kMakes && !entry_reads.load(std::memory_order_relaxed)) return;
  if (cb->callbackSite == CUPTI_API_ENTER) {
    if (++ts.depth != 1) return;
    if (kind & kCopies) {
      ts.copying = true;
      // A graph is done (instantiated, or an exec graph destroyed): the
      // next one, explicit or captured, checks what it uses again.
      std::lock_guard<std::mutex> lock(py_m);
      py_cache.next_graph();
      return;
    }
    if (kind & kEnd) {
      {
        std::lock_guard<std::mutex> lock(py_m);
        ts.script.end();
      }
      int c = captures.load();
      while (c > 0 && !captures.compare_exchange_weak(c, c - 1)) {
      }
      return;
    }
    // Graph-add calls always; stream-captured launches only once reads
    // at the entry are on (read_at_entry), else in created().
    if ((kind & kGraphAdd) ||
        ((kind & kMakes) && captures.load(std::memory_order_relaxed) > 0 && entry_reads.load(std::memory_order_relaxed)))
      ts.pending = now(Read::at_entry);
    return;
  }
  if (--ts.depth > 0) {
    if (ts.depth < 0) ts.depth = 0;
    return;
  }
  ts.depth = 0;
  ts.pending.reset();
  ts.copying = false;
  if ((kind & kBegin) && cb->functionReturnValue && *static_cast<const int*>(cb->functionReturnValue) == 0) {
    captures.fetch_add(1);
    // Whatever changed before this capture began (on any thread: others
    // may be capturing) is seen by its reads: what was learnt of Python
    // objects is checked again before use, here at once for what the
    // last captures used (precheck), with the GIL, which the reads inside
    // the driver cannot take.
    {
      std::lock_guard<std::mutex> lock(py_m);
      py_cache.next_graph();
      ts.script.begin();
    }
    const Python& py = python();
    if (py.ready() && py.frames) {
      HeldGil gil(py);
      KeptError kept(py);
      std::lock_guard<std::mutex> lock(py_m);
      precheck(py, py_cache);
    }
  }
}

void OriginRecorder::Impl::created(const CUpti_GraphData* g) {
  if (!g->node) return;
  ThreadState& ts = thread_state();
  if (ts.copying) return;  // an exec graph's node: never looked up
  // Without a node-making call under way and with no capture active, the
  // node is not the caller's: nothing to record, and whatever an earlier
  // node at its address left goes (see graph_destroyed).
  if (!ts.pending && captures.load(std::memory_order_relaxed) == 0) return forget(g->node);
  Entry e;
  // Inside a call that made its origin at the entry, that one; else
  // (a stream-captured launch) the stack read here, in the driver.
  e.origin = ts.pending ? ts.pending : now(ts.depth > 0 ? Read::none : Read::in_driver);
  if (e.origin->python.empty()) {
    // Deep enough to get past CUPTI's, the driver's and the runtime's
    // own frames to the caller's.
    void* pcs[64];
    const int n = backtrace(pcs, 64);
    if (n > 0) e.pcs = std::make_shared<std::vector<void*>>(pcs, pcs + n);
  }
  if (e.origin->empty() && !e.pcs) return forget(g->node);
  e.graph = g->graph;
  const bool timed = g_time_reads.load(std::memory_order_relaxed);
  const uint64_t t0 = timed ? monotonic_ns() : 0;
  record(g->node, std::move(e));
  if (timed) g_record_ns.fetch_add(monotonic_ns() - t0, std::memory_order_relaxed);
}

void OriginRecorder::Impl::cloned(const CUpti_GraphData* g) {
  if (!g->node || !g->originalNode || thread_state().copying) return;
  std::unique_lock<std::mutex> lock(m);
  const Entry* it = nodes.find(reinterpret_cast<uintptr_t>(g->originalNode));
  if (!it) {
    lock.unlock();
    return forget(g->node);
  }
  Entry e = *it;
  e.graph = g->graph;
  lock.unlock();
  record(g->node, std::move(e));
}

void OriginRecorder::Impl::record(const void* node, Entry e) {
  const auto h = reinterpret_cast<uintptr_t>(node);
  const void* graph = e.graph;
  std::lock_guard<std::mutex> lock(m);
  if (nodes.size() >= (size_t(1) << 22)) return;
  nodes[h] = std::move(e);
  if (!graph) return;
  if (graph != last_graph) {
    last_list = &by_graph[graph];
    last_graph = graph;
  }
  last_list->push_back(h);
}

void OriginRecorder::Impl::forget(const void* node) {
  std::lock_guard<std::mutex> lock(m);
  if (!nodes.empty()) nodes.erase(reinterpret_cast<uintptr_t>(node));
}

void OriginRecorder::Impl::graph_destroyed(const CUpti_GraphData* g) {
  if (!g->graph) return;
  std::lock_guard<std::mutex> lock(m);
  auto it = by_graph.find(g->graph);
  if (it == by_graph.end()) return;
  for (uint64_t h : it->second) {
    const Entry* n = nodes.find(h);
    if (n && n->graph == g->graph) nodes.erase(h);
  }
  if (last_graph == g->graph) {
    last_graph = nullptr;
    last_list = nullptr;
  }
  by_graph.erase(it);
}

OriginRecorder::OriginRecorder() : impl_(new Impl) {}

void OriginRecorder::uncached_for_tests(bool on) { g_uncached = on; }

void OriginRecorder::proxy_wait_for_tests(int milliseconds) {
  impl_->proxy.wait_ms = milliseconds;
}

void OriginRecorder::proxy_off_for_tests() { impl_->proxy.off = true; }

bool OriginRecorder::reads_at_entry() const { return impl_->entry_reads.load(); }

bool OriginRecorder::copying() const { return thread_state().copying; }

int OriginRecorder::captures_active() const {
  return impl_->captures.load(std::memory_order_relaxed);
}

OriginRecorder::ReadCounts OriginRecorder::read_counts() const {
  auto n = [](const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  return {n(g_reads_cached), n(g_reads_same),
          n(g_reads_prior),  n(g_reads_made),
          n(g_reads_full),   n(g_reads_proxied),
          n(g_reads_late),   n(g_reads_tries),
          n(g_reads_frames), n(g_reads_ns),
          n(g_lock_ns),      n(g_compare_ns),
          n(g_record_ns),    {n(g_path_ns[0]), n(g_path_ns[1]), n(g_path_ns[2]), n(g_path_ns[3])}};
}

void OriginRecorder::time_reads(bool on) {
  g_time_reads = on;
}

OriginRecorder& OriginRecorder::instance() {
  static OriginRecorder* r = new OriginRecorder;
  return *r;
}

bool OriginRecorder::enable(CUpti_SubscriberHandle s) {
  // Only the calls that make nodes or begin and end a capture: every other
  // API call of the application then costs nothing.
  bool ok = true;
  // The driver's calls alone: the runtime makes each node through one of
  // them, whose callbacks come on the same thread with the same Python
  // stack, so the runtime's callbacks would only double the count (on an
  // H200, 2026-11-26, the Llama capture with origins took 17.2 ms with both
  // domains and 13.7 ms with the driver's alone, medians of 20 captures;
  // every one of its 392 nodes had the same origin either way).
  const auto domain = CUPTI_CB_DOMAIN_DRIVER_API;
  // Each call's kind by its id, filled once, before any of its callbacks
  // is enabled (and never changed after: callbacks read it unlocked).
  if (impl_->driver_kinds.empty()) {
    std::vector<uint8_t> kinds(CUPTI_DRIVER_TRACE_CBID_SIZE, 0);
    for (int id = 1; id < int(CUPTI_DRIVER_TRACE_CBID_SIZE); ++id) {
      const char* name = nullptr;
      if (cuptiGetCallbackName(domain, CUpti_CallbackId(id), &name) == CUPTI_SUCCESS && name)
        kinds[size_t(id)] = Impl::kind_of(name);
    }
    impl_->driver_kinds = std::move(kinds);
  }
  // Launches and the other calls that only make nodes (Impl::kMakes
  // alone) are left off: their nodes' stacks are read in the node-created
  // callback (Impl::created), unless reads at the entry were turned on.
  std::lock_guard<std::mutex> lock(impl_->sub_m);
  const bool all = impl_->entry_reads.load();
  for (int id = 1; id < int(CUPTI_DRIVER_TRACE_CBID_SIZE) && ok; ++id) {
    const uint8_t kind = impl_->driver_kinds[size_t(id)];
    if (kind && (all || kind != Impl::kMakes))
      ok = cuptiEnableCallback(1, s, domain, CUpti_CallbackId(id)) == CUPTI_SUCCESS;
  }
  for (CUpti_CallbackId id : {CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED,
                              CUPTI_CBID_RESOURCE_GRAPH_DESTROY_STARTING})
    ok = ok && cuptiEnableCallback(1, s, CUPTI_CB_DOMAIN_RESOURCE, id) == CUPTI_SUCCESS;
  // NVTX callbacks come only when NVTX was pointed at CUPTI; not an error.
  (void)cuptiEnableDomain(1, s, CUPTI_CB_DOMAIN_NVTX);
  if (ok) impl_->subscriber = s;
  return ok;
}

void OriginRecorder::unsubscribing() {
  std::lock_guard<std::mutex> lock(impl_->sub_m);
  impl_->subscriber = nullptr;
}

namespace {
void CUPTIAPI own_callback(void* self, CUpti_CallbackDomain d, CUpti_CallbackId id, const void* data) {
  static_cast<OriginRecorder*>(self)->on_callback(d, id, data);
}
}  // namespace

bool OriginRecorder::subscribe() {
  CUpti_SubscriberHandle s = nullptr;
  if (cuptiSubscribe(&s, own_callback, this) != CUPTI_SUCCESS) return false;
  if (!enable(s)) {
    unsubscribing();
    cuptiUnsubscribe(s);
    return false;
  }
  return true;
}

void OriginRecorder::on_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) noexcept {
  if (!data) return;
  try {
    switch (domain) {
      case CUPTI_CB_DOMAIN_RUNTIME_API:
      case CUPTI_CB_DOMAIN_DRIVER_API:
        impl_->api(domain, cbid, static_cast<const CUpti_CallbackData*>(data));
        break;
      case CUPTI_CB_DOMAIN_NVTX:
        impl_->nvtx(cbid, static_cast<const CUpti_NvtxData*>(data));
        break;
      case CUPTI_CB_DOMAIN_RESOURCE: {
        auto* rd = static_cast<const CUpti_ResourceData*>(data);
        auto* g = static_cast<const CUpti_GraphData*>(rd->resourceDescriptor);
        if (!g) break;
        if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED) impl_->created(g);
        else if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED) impl_->cloned(g);
        else if (cbid == CUPTI_CBID_RESOURCE_GRAPH_DESTROY_STARTING) impl_->graph_destroyed(g);
        break;
      }
      default:
        break;
    }
  } catch (...) {
    // An origin is a nicety: never let it disturb the application.
  }
}

std::shared_ptr<const Origin> OriginRecorder::origin_of(uint64_t node_handle) {
  std::lock_guard<std::mutex> lock(impl_->m);
  return impl_->origin_locked(node_handle);
}

void OriginRecorder::origins_of(const uint64_t* handles, size_t n, std::shared_ptr<const Origin>* out) {
  std::lock_guard<std::mutex> lock(impl_->m);
  for (size_t i = 0; i < n; ++i) out[i] = impl_->origin_locked(handles[i]);
}

std::shared_ptr<const Origin> OriginRecorder::Impl::origin_locked(uint64_t node_handle) {
  Entry* it = nodes.find(node_handle);
  if (!it) return nullptr;
  Entry& e = *it;
  if (e.pcs) {
    auto native = symbolize(*e.pcs);
    e.pcs.reset();
    if (native) {
      auto o = std::make_shared<Origin>(*e.origin);
      o->native = std::move(native);
      e.origin = std::move(o);
    }
  }
  if (e.origin->empty()) return nullptr;
  return e.origin;
}

std::string OriginRecorder::cupti_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cuptiGetResultString), &info) && info.dli_fname) return info.dli_fname;
  return "";
}

std::string OriginRecorder::inject_nvtx() {
  const char* set = std::getenv("NVTX_INJECTION64_PATH");
  if (set && *set) return "";
  std::string p = cupti_path();
  if (p.empty()) return "";
  setenv("NVTX_INJECTION64_PATH", p.c_str(), 1);
  return p;
}

}  // namespace graphscope::capture
