#include "activity.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "driver_api.h"
#include "inspect/core/error.h"
#include "inspect/core/order.h"

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
  a.context = r->contextId;
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
// sort): positions ordered by start (order_by: nothing to do when CUPTI
// delivered the records in order, else a radix sort), then the records moved
// in place.
void sort_by_start(std::vector<Activity>& acts) {
  if (acts.size() >= UINT32_MAX) {  // positions are 32-bit
    std::stable_sort(acts.begin(), acts.end(), [](const Activity& a, const Activity& b) { return a.start_ns < b.start_ns; });
    return;
  }
  std::vector<uint32_t> order = order_by(acts.size(), [&](size_t i) { return acts[i].start_ns; });
  apply_order(acts, order);
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
      // Kineto's "grid", "block" and "shared memory" (static and dynamic).
      const int32_t geometry[6] = {k->gridX, k->gridY, k->gridZ, k->blockX, k->blockY, k->blockZ};
      bool positive = true;
      for (int32_t x : geometry) positive = positive && x > 0;
      if (positive) {
        for (int i = 0; i < 3; ++i) a.grid[i] = uint32_t(geometry[i]), a.block[i] = uint32_t(geometry[3 + i]);
      }
      const int32_t shared_static = k->staticSharedMemory, shared_dynamic = k->dynamicSharedMemory;
      if (shared_static >= 0 && shared_dynamic >= 0) {
        a.shared_bytes = uint32_t(shared_static) + uint32_t(shared_dynamic);
        a.has_shared = true;
      }
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      copy_fields(reinterpret_cast<const CUpti_ActivityMemcpy6*>(rec), a, out);
      break;
    case CUPTI_ACTIVITY_KIND_MEMCPY2:  // peer copies
      copy_fields(reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(rec), a, out);
      break;
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: {  // a whole replay (set_graph_trace)
      const auto* g = reinterpret_cast<const CUpti_ActivityGraphTrace2*>(rec);
      a.kind = ActivityKind::other;
      a.name = out.intern("graph");
      a.start_ns = g->start;
      a.end_ns = g->end;
      a.device = g->deviceId;
      a.stream = g->streamId;
      a.correlation = g->correlationId;
      a.context = g->contextId;
      if (g->graphId != 0) a.graph_id = g->graphId;
      break;
    }
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
  static void dropped(ActivityCollector& c, size_t n) { c.dropped_ += n; }
  static void hold(ActivityCollector& c, uint8_t* buffer, size_t valid) {
    c.pending_.emplace_back(buffer, valid);
    c.wake_.notify_one();
  }
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
  // Converting records here, on CUPTI's thread, held CUPTI up and slowed the
  // traced replays 1.8x: a completed buffer is only queued for the
  // collector's own thread.
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
  std::vector<KindName> kinds(std::begin(kKinds), std::end(kKinds));
  if (graph_trace_) kinds.push_back({CUPTI_ACTIVITY_KIND_GRAPH_TRACE, "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"});
  size_t enabled = 0;
  for (const KindName& k : kinds) {
    CUptiResult r = cuptiActivityEnable(k.kind);
    if (r == CUPTI_SUCCESS) {
      ++enabled;
      continue;
    }
    for (size_t i = 0; i < enabled; ++i) (void)cuptiActivityDisable(kinds[i].kind);
    {
      std::lock_guard<std::mutex> lock(g.mu);
      g.active = nullptr;
    }
    fail_start(r, std::string("cuptiActivityEnable(") + k.name + ")");
  }
  {
    std::lock_guard<std::mutex> lock(g.mu);
    finishing_ = false;
  }
  converter_ = std::thread([this] { convert_buffers(); });
  running_ = true;
}

// The converter thread: converts each completed buffer as it comes, so that
// the buffer goes back to CUPTI during the replays (as with bare tracing)
// and little is left to do in stop(). Ends when stop() says so and the
// queue is empty.
void ActivityCollector::convert_buffers() {
  if (background_) {
    sched_param p{};
    pthread_setschedparam(pthread_self(), SCHED_IDLE, &p);
  }
  Global& g = global();
  std::unique_lock<std::mutex> lock(g.mu);
  for (;;) {
    wake_.wait(lock, [this] { return !pending_.empty() || finishing_; });
    if (pending_.empty()) return;
    auto [buffer, valid] = pending_.front();
    pending_.pop_front();
    lock.unlock();
    try {
      CUpti_Activity* rec = nullptr;
      // Stops at the end (MAX_LIMIT_REACHED) or at an incomplete record (INVALID_KIND).
      while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) append_record(rec, converted_);
    } catch (...) {  // out of memory: said by stop()
      if (!convert_error_) convert_error_ = std::current_exception();
    }
    lock.lock();
    g.free_buffers.push_back(buffer);
  }
}

void ActivityCollector::stop() {
  if (!running_) return;
  Global& g = global();
  auto now = [] { return std::chrono::steady_clock::now(); };
  auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  auto t0 = now();
  // As libkineto does: disable, then a forced flush hands back every buffer,
  // through buffer_completed, in this thread or CUPTI's.
  for (const KindName& k : kKinds) (void)cuptiActivityDisable(k.kind);
  if (graph_trace_) (void)cuptiActivityDisable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
  CUptiResult flushed = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  size_t dropped = 0;
  CUptiResult counted = cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped);
  {
    std::lock_guard<std::mutex> lock(g.mu);
    if (counted == CUPTI_SUCCESS) dropped_ += dropped;
    g.active = nullptr;
    finishing_ = true;
  }
  auto t1 = now();
  // What the converter has not done yet: mostly the buffers of the flush.
  wake_.notify_one();
  converter_.join();
  running_ = false;
  auto t2 = now();
  const size_t first_new = trace_.activities.size();
  {
    std::vector<uint32_t> renamed(converted_.names.size());
    for (size_t k = 0; k < renamed.size(); ++k) renamed[k] = trace_.intern(converted_.names[k]);
    bool same_names = true;
    for (size_t k = 0; k < renamed.size(); ++k) same_names &= renamed[k] == k;
    if (first_new == 0 && same_names) {
      trace_.activities.swap(converted_.activities);  // the first session: names in the same order
    } else {
      trace_.activities.reserve(first_new + converted_.activities.size());
      for (Activity a : converted_.activities) {
        a.name = renamed[a.name];
        trace_.activities.push_back(a);
      }
    }
    converted_ = Trace();
  }
  for (size_t i = first_new; i < trace_.activities.size(); ++i) {
    const Activity& a = trace_.activities[i];
    if (a.kind == ActivityKind::kernel && a.start_ns == 0 && a.end_ns == 0) ++untimed_;
  }
  auto t3 = now();
  sort_by_start(trace_.activities);
  stop_times_ = {ms(t0, t1), ms(t1, t2), ms(t2, t3), ms(t3, now())};
  if (convert_error_) {
    std::exception_ptr e = convert_error_;
    convert_error_ = nullptr;
    std::rethrow_exception(e);
  }
  if (flushed != CUPTI_SUCCESS)
    throw Error(ExitCode::device, "CUPTI activity tracing",
                "cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) failed: " + result_name(flushed));
}

static void add_device_sms(Trace& t) {
  std::vector<uint32_t> seen;
  for (const Activity& a : t.activities)
    if (a.kind == ActivityKind::kernel && std::find(seen.begin(), seen.end(), a.device) == seen.end()) seen.push_back(a.device);
  if (seen.empty()) return;
  const DriverApi& api = driver_api();
  if (!api.device_get || !api.device_get_attribute) return;
  std::sort(seen.begin(), seen.end());
  for (uint32_t d : seen) {
    if (t.sm_count(d)) continue;
    CUdevice dev = 0;
    int sms = 0;
    if (d > uint32_t(INT32_MAX) || api.device_get(&dev, int(d)) != CUDA_SUCCESS ||
        api.device_get_attribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev) != CUDA_SUCCESS || sms <= 0)
      continue;  // the model goes without SM occupancy for this device
    t.devices.push_back({d, uint32_t(sms)});
  }
}

Trace ActivityCollector::take() {
  std::lock_guard<std::mutex> lock(global().mu);  // records may still arrive while running
  Trace t = std::move(trace_);
  trace_ = Trace();
  trace_.source = "cupti";
  t.source = "cupti";
  add_device_sms(t);
  return t;
}

}  // namespace graphscope::capture
