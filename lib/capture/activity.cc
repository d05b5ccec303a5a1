#include "activity.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "inspect/error.h"

namespace graphscope::capture {
namespace {

// The kinds a session enables. MEMCPY2 carries peer-to-peer copies, which
// MEMCPY does not report.
struct KindName {
  CUpti_ActivityKind kind;
  const char* name;
};
constexpr KindName kKinds[] = {
    {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL"},
    {CUPTI_ACTIVITY_KIND_MEMCPY, "CUPTI_ACTIVITY_KIND_MEMCPY"},
    {CUPTI_ACTIVITY_KIND_MEMCPY2, "CUPTI_ACTIVITY_KIND_MEMCPY2"},
    {CUPTI_ACTIVITY_KIND_MEMSET, "CUPTI_ACTIVITY_KIND_MEMSET"},
};

constexpr size_t kBufferBytes = size_t(4) << 20;
constexpr size_t kBufferAlign = 8;  // ACTIVITY_RECORD_ALIGNMENT

const char* memcpy_name(uint8_t copy_kind) {
  switch (copy_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "Memcpy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "Memcpy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return "Memcpy HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return "Memcpy AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return "Memcpy AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return "Memcpy AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return "Memcpy DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "Memcpy DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "Memcpy HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "Memcpy PtoP";
    default: return "Memcpy";
  }
}

// CUDA arrays are device memory: a copy to or from one has the direction of
// the plain device copy. Peer copies go between devices: "other".
CopyKind copy_kind_of(uint8_t copy_kind) {
  switch (copy_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return CopyKind::htod;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return CopyKind::dtoh;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return CopyKind::dtod;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return CopyKind::htoh;
    default: return CopyKind::other;
  }
}

// The fields every device record shares. R is a packed CUPTI record type:
// fields are read by value (no references into it).
template <typename R>
void common_fields(const R* r, Activity& a) {
  a.start_ns = r->start;
  a.end_ns = r->end;
  a.device = r->deviceId;
  a.stream = r->streamId;
  a.channel_id = r->channelID;
  a.channel_type = static_cast<uint8_t>(r->channelType);
  a.correlation = r->correlationId;
  uint32_t graph_id = r->graphId;
  uint64_t node_id = r->graphNodeId;
  if (graph_id != 0) a.graph_id = graph_id;
  if (node_id != 0) a.graph_node_id = node_id;
}

// A copy's fields: MEMCPY and MEMCPY2 (peer) records share them.
template <typename R>
void copy_fields(const R* m, Activity& a, Trace& out) {
  a.kind = ActivityKind::memcpy;
  uint8_t ck = m->copyKind;
  a.copy = copy_kind_of(ck);
  a.name = out.intern(memcpy_name(ck));
  a.bytes = m->bytes;
  common_fields(m, a);
}

std::string result_name(CUptiResult r) {
  const char* s = nullptr;
  if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s) return "CUPTI error " + std::to_string(int(r));
  return s;
}

// The one error of a CUPTI call that keeps tracing from starting.
[[noreturn]] void fail_start(CUptiResult r, const std::string& call) {
  const std::string what = "CUPTI activity tracing";
  const std::string name = result_name(r);
  switch (r) {
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
      throw Error(ExitCode::device, what,
                  "another profiler is already using CUPTI in this process (Nsight Systems, Nsight Compute, "
                  "compute-sanitizer or a CUDA injection library): run graphscope outside it; " +
                      call + ": " + name);
    case CUPTI_ERROR_NOT_INITIALIZED:
      throw Error(ExitCode::device, what,
                  "CUPTI cannot be initialized: another profiler may already be using CUPTI, or the driver is "
                  "too old for this CUPTI; " +
                      call + ": " + name);
    case CUPTI_ERROR_NOT_COMPATIBLE:
      throw Error(ExitCode::device, what,
                  "CUPTI refused to trace: another profiler is already using CUPTI, or this device does not "
                  "support the activity kind; " +
                      call + ": " + name);
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      throw Error(ExitCode::device, what, "insufficient privileges for CUPTI; " + call + ": " + name);
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_NOT_SUPPORTED:
      throw Error(ExitCode::device, what, "CUPTI does not support tracing on this device or system; " + call + ": " + name);
    default:
      throw Error(ExitCode::device, what, call + " failed: " + name + " (CUPTI " + std::to_string(int(r)) + ")");
  }
}

// Process-wide state behind CUPTI's global buffer callbacks. Never destroyed:
// CUPTI may call back during process exit.
struct Global {
  std::mutex mu;
  std::vector<uint8_t*> free_buffers;
  ActivityCollector* active = nullptr;
  bool callbacks_registered = false;
};
Global& global() {
  static Global* g = new Global;
  return *g;
}

// In order of start, equal starts in their order of arrival (a stable
// sort): keys and positions are sorted, not the 80-byte records, and not
// at all when CUPTI delivered them in order.
void sort_by_start(std::vector<Activity>& acts) {
  auto earlier = [](const Activity& a, const Activity& b) { return a.start_ns < b.start_ns; };
  if (std::is_sorted(acts.begin(), acts.end(), earlier)) return;
  std::vector<std::pair<uint64_t, uint32_t>> keys(acts.size());
  for (size_t i = 0; i < acts.size(); ++i) keys[i] = {acts[i].start_ns, uint32_t(i)};
  std::sort(keys.begin(), keys.end());
  std::vector<Activity> sorted;
  sorted.reserve(acts.size());
  for (const auto& k : keys) sorted.push_back(acts[k.second]);
  acts.swap(sorted);
}

}  // namespace

void append_record(const CUpti_Activity* rec, Trace& out) {
  if (!rec) return;
  Activity a;
  switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
      a.kind = ActivityKind::kernel;
      const char* name = k->name;
      a.name = out.intern(name && *name ? name : "(unnamed kernel)");
      common_fields(k, a);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      copy_fields(reinterpret_cast<const CUpti_ActivityMemcpy6*>(rec), a, out);
      break;
    case CUPTI_ACTIVITY_KIND_MEMCPY2:  // peer copies
      copy_fields(reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(rec), a, out);
      break;
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(rec);
      a.kind = ActivityKind::memset;
      a.name = out.intern("Memset");
      a.bytes = m->bytes;
      common_fields(m, a);
      break;
    }
    default:
      return;
  }
  out.activities.push_back(a);
}

// Lets the CUPTI callbacks fill a collector (under Global::mu).
struct CollectorAccess {
  static void add(ActivityCollector& c, const CUpti_Activity* rec) {
    size_t before = c.trace_.activities.size();
    append_record(rec, c.trace_);
    if (c.trace_.activities.size() > before) {
      const Activity& a = c.trace_.activities.back();
      if (a.kind == ActivityKind::kernel && a.start_ns == 0 && a.end_ns == 0) ++c.untimed_;
    }
  }
  static void dropped(ActivityCollector& c, size_t n) { c.dropped_ += n; }
  static void hold(ActivityCollector& c, uint8_t* buffer, size_t valid) { c.pending_.emplace_back(buffer, valid); }
};

namespace {

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  uint8_t* b = nullptr;
  {
    Global& g = global();
    std::lock_guard<std::mutex> lock(g.mu);
    if (!g.free_buffers.empty()) {
      b = g.free_buffers.back();
      g.free_buffers.pop_back();
    }
  }
  if (!b) b = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlign, kBufferBytes));
  *buffer = b;  // null declines the request: CUPTI then drops records, and counts them
  *size = b ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t, size_t valid) {
  Global& g = global();
  std::lock_guard<std::mutex> lock(g.mu);
  ActivityCollector* c = g.active;  // null: a session's leftovers after stop, discarded
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS && dropped && c)
    CollectorAccess::dropped(*c, dropped);
  // Records are converted in stop(), after the replays: while tracing, a
  // completed buffer is only set aside, so the work being traced competes
  // with nothing of graphscope's.
  if (buffer && valid > 0 && c) CollectorAccess::hold(*c, buffer, valid);
  else if (buffer) g.free_buffers.push_back(buffer);
}

}  // namespace

ActivityCollector::ActivityCollector() { trace_.source = "cupti"; }

ActivityCollector::~ActivityCollector() {
  try {
    stop();
  } catch (...) {
  }
}

void ActivityCollector::start() {
  if (running_) return;
  Global& g = global();
  {
    std::lock_guard<std::mutex> lock(g.mu);
    if (g.active)
      throw Error(ExitCode::device, "CUPTI activity tracing", "another activity collector of this process is running");
    if (!g.callbacks_registered) {
      CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
      if (r != CUPTI_SUCCESS) fail_start(r, "cuptiActivityRegisterCallbacks");
      g.callbacks_registered = true;
    }
    g.active = this;
  }
  size_t enabled = 0;
  for (const KindName& k : kKinds) {
    CUptiResult r = cuptiActivityEnable(k.kind);
    if (r == CUPTI_SUCCESS) {
      ++enabled;
      continue;
    }
    for (size_t i = 0; i < enabled; ++i) (void)cuptiActivityDisable(kKinds[i].kind);
    {
      std::lock_guard<std::mutex> lock(g.mu);
      g.active = nullptr;
    }
    fail_start(r, std::string("cuptiActivityEnable(") + k.name + ")");
  }
  running_ = true;
}

void ActivityCollector::stop() {
  if (!running_) return;
  Global& g = global();
  // As libkineto does: disable, then a forced flush hands back every buffer,
  // through buffer_completed, in this thread or CUPTI's.
  for (const KindName& k : kKinds) (void)cuptiActivityDisable(k.kind);
  CUptiResult flushed = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  size_t dropped = 0;
  CUptiResult counted = cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped);
  std::vector<std::pair<uint8_t*, size_t>> pending;
  {
    std::lock_guard<std::mutex> lock(g.mu);
    if (counted == CUPTI_SUCCESS) dropped_ += dropped;
    g.active = nullptr;
    pending.swap(pending_);
  }
  running_ = false;
  for (const auto& [buffer, valid] : pending) {
    CUpti_Activity* rec = nullptr;
    // Stops at the end (MAX_LIMIT_REACHED) or at an incomplete record (INVALID_KIND).
    while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) CollectorAccess::add(*this, rec);
  }
  {
    std::lock_guard<std::mutex> lock(g.mu);
    for (const auto& [buffer, valid] : pending) g.free_buffers.push_back(buffer);
  }
  sort_by_start(trace_.activities);
  if (flushed != CUPTI_SUCCESS)
    throw Error(ExitCode::device, "CUPTI activity tracing",
                "cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) failed: " + result_name(flushed));
}

Trace ActivityCollector::take() {
  std::lock_guard<std::mutex> lock(global().mu);  // records may still arrive while running
  Trace t = std::move(trace_);
  trace_ = Trace();
  trace_.source = "cupti";
  t.source = "cupti";
  return t;
}

}  // namespace graphscope::capture
