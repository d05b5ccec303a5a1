// Input liveness at replay (--liveness) and the updates the driver refused.
// Liveness: the driver's allocations and frees (CUPTI's callbacks), and
// PyTorch's caching allocator's (the Python hook hands them to
// graphscope_torch_memory), go to a LivenessTracker
// (lib/inspect/model/liveness.h), with the place each was made at; each
// dumped exec graph's addresses (kernel arguments' 8-byte aligned words,
// copy and memset pointers) are watched from its document; each launch
// asks whether the exec graph lost any. Under --liveness=error the preload
// library's launch is refused (preload_launch); a launch it does not see
// (the static CUDA runtime) is reported, not refused.
#include <execinfo.h>

#include <cstring>

#include "capture/driver_api.h"
#include "capture/origin.h"
#include "injection.h"
#include "inspect/core/demangle.h"
#include "inspect/core/hash.h"

namespace graphscope::inject::internal {

namespace {

enum MemoryCall : uint8_t {
  kNotMemory = 0,
  kAlloc,
  kAllocPitch,
  kAllocManaged,
  kAllocAsync,
  kAllocFromPool,
  kAllocHost,
  kHostAlloc,
  kFree,
  kFreeAsync,
  kFreeHost,
  kBeginCapture,
  kEndCapture,
};

const std::vector<uint8_t>& memory_calls() {
  static const std::vector<uint8_t> kinds = [] {
    std::vector<uint8_t> k(CUPTI_DRIVER_TRACE_CBID_SIZE, kNotMemory);
    k[CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2] = kAlloc;
    k[CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2] = kAllocPitch;
    k[CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged] = kAllocManaged;
    k[CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync] = kAllocAsync;
    k[CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz] = kAllocAsync;
    k[CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync] = kAllocFromPool;
    k[CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz] = kAllocFromPool;
    k[CUPTI_DRIVER_TRACE_CBID_cuMemAllocHost_v2] = kAllocHost;
    k[CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc] = kHostAlloc;
    k[CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2] = kFree;
    k[CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync] = kFreeAsync;
    k[CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz] = kFreeAsync;
    k[CUPTI_DRIVER_TRACE_CBID_cuMemFreeHost] = kFreeHost;
    for (auto id : {CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture, CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_ptsz,
                    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2,
                    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2_ptsz,
                    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph,
                    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph_ptsz})
      k[id] = kBeginCapture;
    k[CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture] = kEndCapture;
    k[CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture_ptsz] = kEndCapture;
    return k;
  }();
  return kinds;
}

// An allocation call's result at its exit: the address it wrote (dptr, or
// pp for pinned host memory) and the size asked for.
template <typename P>
void device_allocation(const P* a, uint64_t& base, uint64_t& size) {
  if (a->dptr) base = *a->dptr;
  size = a->bytesize;
}
template <typename P>
void host_allocation(const P* a, uint64_t& base, uint64_t& size) {
  if (a->pp) base = reinterpret_cast<uintptr_t>(*a->pp);
  size = a->bytesize;
}

// The place of an allocation or free on this thread: its Python line, else
// its native caller (a thread without Python is told apart by its return
// addresses, read here: allocation calls are few and slow).
uint64_t return_addresses() {
  // The whole stack: the driver's and CUPTI's frames above the caller are
  // the same for every allocation call.
  void* pcs[48];
  const int n = backtrace(pcs, 48);
  uint64_t what = 0x6d656d6f7279ull;
  for (int i = 0; i < n; ++i) what = hash_mix(what ^ uint64_t(reinterpret_cast<uintptr_t>(pcs[i])));
  return what;
}
uint32_t memory_site() { return capture::OriginRecorder::instance().launch_site(&return_addresses); }

// "file.py:88 in fn (module)", the native function, or the NVTX range.
std::string place_text(const Origin* o) {
  if (!o) return {};
  std::string s;
  if (!o->python.empty()) {
    const SourceFrame& f = o->python.front();
    const size_t slash = f.file.rfind('/');
    s = (slash == std::string::npos ? f.file : f.file.substr(slash + 1)) + ":" + std::to_string(f.line);
    if (!f.function.empty()) s += " in " + f.function;
    if (o->python.size() > 1) {
      const SourceFrame& c = o->python[1];
      const size_t cs = c.file.rfind('/');
      s += " (called from " + (cs == std::string::npos ? c.file : c.file.substr(cs + 1)) + ":" +
           std::to_string(c.line) + ")";
    }
    return s;
  }
  if (o->native && !o->native->function.empty()) {
    // Without its parameter list: "make_input(std::vector<float> const&)" -> "make_input".
    std::string f = o->native->function;
    if (!f.empty() && f.back() == ')') {
      int depth = 0;
      for (size_t i = f.size(); i-- > 0;) {
        if (f[i] == ')') ++depth;
        else if (f[i] == '(' && --depth == 0) {
          if (i) f.resize(i);
          break;
        }
      }
    }
    return f;
  }
  if (!o->nvtx.empty()) return "NVTX " + o->nvtx.back().message;
  return o->describe();
}

}  // namespace

void Injection::enable_memory_callbacks() {
  liveness_on_ = config().liveness != "off";
  if (!liveness_on_) return;
  const auto& kinds = memory_calls();
  size_t refused = 0;
  for (size_t id = 1; id < kinds.size(); ++id)
    if (kinds[id] && cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, CUpti_CallbackId(id)) !=
                         CUPTI_SUCCESS)
      ++refused;
  if (refused)
    liveness_notes_.push_back("CUPTI refused " + std::to_string(refused) +
                              " of the driver's allocation and capture callbacks: frees through them are not seen");
}

void Injection::on_memory(CUpti_CallbackId cbid, const CUpti_CallbackData* cb) noexcept {
  const auto& kinds = memory_calls();
  if (cbid >= kinds.size() || !kinds[cbid] || !cb->functionParams || finished_) return;
  const uint8_t kind = kinds[cbid];
  const bool exit = cb->callbackSite == CUPTI_API_EXIT;
  const bool ok = exit && cb->functionReturnValue && *static_cast<const CUresult*>(cb->functionReturnValue) == CUDA_SUCCESS;
  try {
    const void* p = cb->functionParams;
    using S = LivenessTracker::Source;
    switch (kind) {
      case kBeginCapture:
        if (ok) capturing_.fetch_add(1, std::memory_order_relaxed);
        return;
      case kEndCapture:
        if (exit && capturing_.load(std::memory_order_relaxed) > 0) capturing_.fetch_sub(1, std::memory_order_relaxed);
        return;
      case kFree:
      case kFreeAsync:
      case kFreeHost: {
        if (exit) return;  // at entry, while the allocation is still there
        uint64_t base = 0;
        if (kind == kFree) base = static_cast<const cuMemFree_v2_params*>(p)->dptr;
        else if (kind == kFreeAsync) base = static_cast<const cuMemFreeAsync_params*>(p)->dptr;
        else base = reinterpret_cast<uintptr_t>(static_cast<const cuMemFreeHost_params*>(p)->p);
        // A stream-ordered free during a capture is a node of the graph.
        if (!base || (kind == kFreeAsync && capturing_.load(std::memory_order_relaxed))) return;
        liveness_.freed(S::driver, base, 0, memory_site());
        return;
      }
      default: break;
    }
    if (!ok) return;
    uint64_t base = 0, size = 0;
    switch (kind) {
      case kAlloc: device_allocation(static_cast<const cuMemAlloc_v2_params*>(p), base, size); break;
      case kAllocManaged: device_allocation(static_cast<const cuMemAllocManaged_params*>(p), base, size); break;
      case kAllocAsync: device_allocation(static_cast<const cuMemAllocAsync_params*>(p), base, size); break;
      case kAllocFromPool: device_allocation(static_cast<const cuMemAllocFromPoolAsync_params*>(p), base, size); break;
      case kAllocHost: host_allocation(static_cast<const cuMemAllocHost_v2_params*>(p), base, size); break;
      case kHostAlloc: host_allocation(static_cast<const cuMemHostAlloc_params*>(p), base, size); break;
      case kAllocPitch: {
        const auto* a = static_cast<const cuMemAllocPitch_v2_params*>(p);
        if (a->dptr) base = *a->dptr;
        if (a->pPitch) size = *a->pPitch * a->Height;
        break;
      }
      default: return;
    }
    if (base && size)
      liveness_.allocated(S::driver, base, size, memory_site(), capturing_.load(std::memory_order_relaxed) > 0);
  } catch (...) {
  }
}

void Injection::torch_memory(uint64_t ptr, bool alloc) noexcept {
  if (!liveness_on_ || finished_ || forked_child || !ptr) return;
  try {
    const uint32_t site = memory_site();
    if (alloc)
      liveness_.allocated(LivenessTracker::Source::torch, ptr, 0, site,
                          capturing_.load(std::memory_order_relaxed) > 0);
    else
      liveness_.freed(LivenessTracker::Source::torch, ptr, 0, site);
  } catch (...) {
  }
}

// The preload library's allocations and frees while graphscope rests.
void Injection::rest_memory(bool alloc, uint64_t ptr, uint64_t size) noexcept {
  if (!liveness_on_ || finished_ || forked_child || !ptr) return;
  try {
    const uint32_t site = memory_site();
    if (alloc) liveness_.allocated(LivenessTracker::Source::driver, ptr, size, site, false);
    else liveness_.freed(LivenessTracker::Source::driver, ptr, 0, site);
  } catch (...) {
  }
}

// The Python hook's word: PyTorch's allocator is watched (why == null), or
// could not be.
void Injection::torch_watch(const char* why) noexcept {
  try {
    if (!why) torch_seen_.store(true);
    else if (torch_watch_error_.empty()) torch_watch_error_ = std::string(why).substr(0, 300);
  } catch (...) {
  }
}

std::vector<LivenessTracker::Address> Injection::addresses_of(const GraphDocument& doc) {
  std::vector<LivenessTracker::Address> v;
  const auto& nodes = doc.root.nodes;
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    if (n.kernel) {
      for (uint32_t a = 0; a < n.kernel->args.size(); ++a) {
        const KernelArg& k = n.kernel->args[a];
        for (size_t at = (8 - k.offset % 8) % 8; at + 8 <= k.raw.size(); at += 8) {
          uint64_t w;
          std::memcpy(&w, k.raw.data() + at, 8);
          if (is_address_word(w)) v.push_back({i, a, uint32_t(at), w});
        }
      }
    } else if (n.memcpy) {
      if (n.memcpy->src) v.push_back({i, 0, 0, *n.memcpy->src});
      if (n.memcpy->dst) v.push_back({i, 1, 0, *n.memcpy->dst});
    } else if (n.memset && n.memset->dst) {
      v.push_back({i, 0, 0, *n.memset->dst});
    }
  }
  return v;
}

void Injection::watch_document(CUgraphExec exec, uint32_t exec_id, const GraphDocument& doc, uint64_t since) {
  if (!liveness_on_) return;
  liveness_.watch(reinterpret_cast<uintptr_t>(exec), exec_id, addresses_of(doc), since);
}

// Under --liveness=error, before the preload library's launch: refused
// (true) when the exec graph lost memory it reads or writes; said once an
// exec graph.
bool Injection::refuse_launch(CUgraphExec e, Live& l) noexcept {
  if (config().liveness != "error") return false;
  LivenessTracker::Finding f;
  if (!liveness_.lost(reinterpret_cast<uintptr_t>(e), &f)) return false;
  liveness_.launched(reinterpret_cast<uintptr_t>(e), l.launches + 1, true);
  if (!l.refused_said) {
    l.refused_said = true;
    say("--liveness=error: launch " + std::to_string(l.launches + 1) + " of exec graph " +
        std::to_string(f.exec_graph_id) + " refused (cudaErrorIllegalState): node " + std::to_string(f.at.node) +
        " argument " + std::to_string(f.at.arg) + " holds memory freed since the capture; `graphscope ledger` " +
        "says where");
  }
  return true;
}

void Injection::liveness_at_exit(AttachIndex& x) {
  if (!liveness_on_) return;
  AttachLiveness l;
  l.mode = config().liveness;
  l.watched = liveness_.watched();
  l.torch = torch_seen_.load();
  l.dropped = liveness_.dropped();
  l.notes = liveness_notes_;
  if (!torch_watch_error_.empty())
    l.notes.push_back("PyTorch's caching allocator is not watched (" + torch_watch_error_ +
                      "): frees of its blocks are not seen");
  const auto sites = capture::OriginRecorder::instance().launch_sites();
  auto place = [&](uint32_t id) -> std::string {
    return id && id <= sites.size() ? place_text(sites[id - 1].get()) : std::string();
  };
  for (const LivenessTracker::Finding& f : liveness_.findings()) {
    LivenessFinding o;
    o.exec_graph_id = f.exec_graph_id;
    o.node = f.at.node, o.arg = f.at.arg, o.offset = f.at.offset, o.address = f.at.value;
    o.source = f.source == LivenessTracker::Source::torch ? "torch" : "driver";
    o.block = f.block, o.block_size = f.block_size;
    o.allocated_at = place(f.allocated_site);
    o.freed_at = place(f.freed_site);
    o.reused = f.reused;
    if (f.reused) o.reused_at = place(f.reused_site);
    o.first_replay = f.first_replay, o.replays = f.replays, o.refused = f.refused, o.addresses = f.addresses;
    l.findings.push_back(std::move(o));
  }
  x.liveness = std::move(l);
}

// An update the driver refused: its error and result, the nodes it named,
// and how many alike; the exec graph's node by its index in the document,
// the offered graph's by what it is and where it came from.
void Injection::on_update_failed(const capture::ExecFailure& f) {
  const capture::DriverApi& api = capture::driver_api();
  std::string node_text;
  if (f.node) {
    CUgraphNodeType t{};
    if (api.graph_node_get_type && api.graph_node_get_type(f.node, &t) == CUDA_SUCCESS) {
      node_text = std::string(to_string(capture::node_type_of(t)));
      if (t == CU_GRAPH_NODE_TYPE_KERNEL && api.graph_kernel_node_get_params) {
        CUDA_KERNEL_NODE_PARAMS p{};
        const char* name = nullptr;
        if (api.graph_kernel_node_get_params(f.node, &p) == CUDA_SUCCESS && p.func && api.func_get_name &&
            api.func_get_name(&name, p.func) == CUDA_SUCCESS && name)
          node_text += " " + demangle(name);
      }
    }
    if (origins_) {
      const uint64_t h = reinterpret_cast<uintptr_t>(f.node);
      std::shared_ptr<const Origin> o;
      capture::OriginRecorder::instance().origins_of(&h, 1, &o);
      if (o && !o->empty()) node_text += (node_text.empty() ? "" : " ") + std::string("at ") + place_text(o.get());
    }
  }
  const char* err = nullptr;
  if (!api.get_error_name || api.get_error_name(f.error, &err) != CUDA_SUCCESS || !err) err = nullptr;
  const char* result = f.has_result ? capture::update_result_name(f.result) : nullptr;
  std::lock_guard<std::mutex> lock(m_);
  UpdateFailure u;
  u.call = f.call;
  u.error = err ? err : "CUresult " + std::to_string(int(f.error));
  if (f.has_result) u.result = result ? result : "result " + std::to_string(int(f.result));
  u.node_text = std::move(node_text);
  auto it = live_.find(f.exec);
  if (it != live_.end()) {
    Live& l = it->second;
    u.exec_graph_id = session_->index().graphs[l.g].exec_graph_id;
    if (f.from_node) {
      if (l.index_of.empty())
        for (size_t i = 0; i < l.handles.size(); ++i) l.index_of.emplace(l.handles[i], uint32_t(i));
      auto at = l.index_of.find(reinterpret_cast<uintptr_t>(f.from_node));
      if (at != l.index_of.end()) u.from_node = at->second;
    }
  } else if (auto id = capture::exec_graph_id(reinterpret_cast<cudaGraphExec_t>(f.exec))) {
    u.exec_graph_id = *id;
  }
  u.first_s = costs_.since_start(std::chrono::steady_clock::now());
  auto& all = session_->index().update_failures;
  for (UpdateFailure& x : all)
    if (x.exec_graph_id == u.exec_graph_id && x.call == u.call && x.error == u.error && x.result == u.result &&
        x.from_node == u.from_node && x.node_text == u.node_text) {
      ++x.count;
      return;
    }
  if (all.size() < 1000) all.push_back(std::move(u));
  write_index();
}

}  // namespace graphscope::inject::internal
