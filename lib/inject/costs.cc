#include "costs.h"

#include <cuda.h>
#include <cupti.h>

#include <cstring>

#include "capture/walk.h"

namespace graphscope::inject::internal {
namespace {

using Clock = std::chrono::steady_clock;

// This thread's device allocations so far (bytes), and when its current
// call of each kind began (the calls Costs times do not nest in one another).
thread_local uint64_t t_alloc = 0;
thread_local Clock::time_point t_entered[16];

bool succeeded(const CUpti_CallbackData* cb) {
  return cb->functionReturnValue && *static_cast<const CUresult*>(cb->functionReturnValue) == CUDA_SUCCESS;
}

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

void Costs::start(Clock::time_point t0, uint64_t t0_cupti_ns) {
  t0_ = t0;
  t0_cupti_ns_ = t0_cupti_ns;
}

bool Costs::enable(CUpti_SubscriberHandle subscriber) {
  if (kinds_.empty()) {
    std::vector<uint8_t> kinds(CUPTI_DRIVER_TRACE_CBID_SIZE, kNone);
    auto set = [&](CUpti_CallbackId id, Kind k) {
      if (id < kinds.size()) kinds[id] = k;
    };
    set(CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture, kBegin);
    set(CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_ptsz, kBegin);
    set(CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2, kBegin);
    set(CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2_ptsz, kBegin);
    set(CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph, kBeginToGraph);
    set(CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph_ptsz, kBeginToGraph);
    set(CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture, kEnd);
    set(CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture_ptsz, kEnd);
    set(CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate, kInstantiate);
    set(CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate_v2, kInstantiate);
    set(CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithFlags, kInstantiate);
    set(CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams, kInstantiate);
    set(CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams_ptsz, kInstantiate);
    set(CUPTI_DRIVER_TRACE_CBID_cuGraphUpload, kUpload);
    set(CUPTI_DRIVER_TRACE_CBID_cuGraphUpload_ptsz, kUpload);
    // Stream-ordered allocations inside a capture are graph memory nodes
    // (the graph's own alloc_bytes), not allocations: left out.
    set(CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, kAlloc);
    set(CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2, kAllocPitch);
    set(CUPTI_DRIVER_TRACE_CBID_cuMemCreate, kCreate);
    kinds_ = std::move(kinds);
  }
  bool ok = true;
  for (size_t id = 1; id < kinds_.size() && ok; ++id)
    if (kinds_[id] != kNone)
      ok = cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, CUpti_CallbackId(id)) == CUPTI_SUCCESS;
  return ok;
}

void Costs::on_api(CUpti_CallbackId cbid, const CUpti_CallbackData* cb) noexcept {
  if (cbid >= kinds_.size() || !cb || !cb->functionParams) return;
  const uint8_t kind = kinds_[cbid];
  if (kind == kNone) return;
  const Clock::time_point now = Clock::now();
  if (cb->callbackSite == CUPTI_API_ENTER) {
    t_entered[kind] = now;
    return;
  }
  if (!succeeded(cb)) return;
  try {
    const void* p = cb->functionParams;
    switch (kind) {
      case kBegin:  // the _v2 and plain parameters begin alike
        begin(static_cast<const cuStreamBeginCapture_v2_params*>(p)->hStream, t_entered[kind]);
        break;
      case kBeginToGraph:
        begin(static_cast<const cuStreamBeginCaptureToGraph_params*>(p)->hStream, t_entered[kind]);
        break;
      case kEnd: {
        const auto* e = static_cast<const cuStreamEndCapture_params*>(p);
        if (e->phGraph) end(e->hStream, *e->phGraph, now);
        break;
      }
      case kInstantiate: {
        // Every instantiate call's parameters begin with the exec graph's
        // address and the template.
        const auto* i = static_cast<const cuGraphInstantiateWithFlags_params*>(p);
        if (i->phGraphExec && *i->phGraphExec) instantiated(i->hGraph, *i->phGraphExec, t_entered[kind], now);
        break;
      }
      case kUpload:
        uploaded(static_cast<const cuGraphUpload_params*>(p)->hGraph, ms_between(t_entered[kind], now));
        break;
      case kAlloc:
        t_alloc += static_cast<const cuMemAlloc_v2_params*>(p)->bytesize;
        break;
      case kAllocPitch: {
        const auto* a = static_cast<const cuMemAllocPitch_v2_params*>(p);
        if (a->pPitch) t_alloc += uint64_t(*a->pPitch) * a->Height;
        break;
      }
      case kCreate:
        t_alloc += static_cast<const cuMemCreate_params*>(p)->size;
        break;
      default:
        break;
    }
  } catch (...) {
    // A cost not recorded; the application goes on.
  }
}

void Costs::begin(CUstream s, Clock::time_point t) {
  std::lock_guard<std::mutex> lock(m_);
  capturing_[s] = Capturing{t, t_alloc, &t_alloc};  // a thread-local's address names the thread
}

void Costs::end(CUstream s, CUgraph g, Clock::time_point t) {
  uint64_t cupti_now = 0;
  const bool stamped = cuptiGetTimestamp(&cupti_now) == CUPTI_SUCCESS;
  std::lock_guard<std::mutex> lock(m_);
  if (stamped) graphs_end_cupti_ns_ = cupti_now;
  auto it = capturing_.find(s);
  if (it == capturing_.end()) return;  // begun while graphscope rested
  Captured c;
  c.begin_s = since_start(it->second.begin);
  c.ms = ms_between(it->second.begin, t);
  // The allocations are this thread's: known when it began the capture too.
  if (it->second.thread == &t_alloc) c.alloc_bytes = t_alloc - it->second.thread_alloc;
  capturing_.erase(it);
  captured_[g] = c;
}

void Costs::instantiated(CUgraph g, CUgraphExec e, Clock::time_point t0, Clock::time_point t1) {
  const std::optional<uint32_t> id = capture::exec_graph_id(reinterpret_cast<cudaGraphExec_t>(e));
  if (!id) return;
  uint64_t cupti_now = 0;
  const bool stamped = cuptiGetTimestamp(&cupti_now) == CUPTI_SUCCESS;
  std::lock_guard<std::mutex> lock(m_);
  // Graphs built with the graph API (XLA's command buffers) have no
  // capture: their instantiation ends their making.
  if (stamped) graphs_end_cupti_ns_ = cupti_now;
  Exec& x = execs_[*id];
  x = Exec{};
  x.created_s = since_start(t1);
  x.instantiate_ms = ms_between(t0, t1);
  auto c = captured_.find(g);
  if (c != captured_.end() && !c->second.charged) {
    c->second.charged = true;
    x.capture_ms = c->second.ms;
    x.alloc_bytes = c->second.alloc_bytes;
  }
}

void Costs::uploaded(CUgraphExec e, double ms) {
  const std::optional<uint32_t> id = capture::exec_graph_id(reinterpret_cast<cudaGraphExec_t>(e));
  if (!id) return;
  std::lock_guard<std::mutex> lock(m_);
  Exec& x = execs_[*id];
  ++x.uploads;
  x.upload_ms += ms;
}

void Costs::fill(uint32_t exec_id, AttachedGraph& g) const {
  std::lock_guard<std::mutex> lock(m_);
  auto it = execs_.find(exec_id);
  if (it == execs_.end()) return;
  const Exec& x = it->second;
  g.created_s = x.created_s;
  g.capture_ms = x.capture_ms;
  g.instantiate_ms = x.instantiate_ms;
  g.uploads = x.uploads;
  g.upload_ms = x.upload_ms;
  g.capture_alloc_bytes = x.alloc_bytes;
}

std::optional<uint64_t> Costs::graphs_end_cupti_ns() const {
  std::lock_guard<std::mutex> lock(m_);
  return graphs_end_cupti_ns_;
}

}  // namespace graphscope::inject::internal
