#include "replay.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>

#include "activity.h"
#include "capture_hooks.h"
#include "cuda_check.h"
#include "inspect/core/error.h"
#include "inspect/core/io.h"

namespace graphscope::capture {
namespace {

using Clock = std::chrono::steady_clock;

// The child hands each graph's trace back in a private binary file,
// "<index>.trace" in the scratch directory (same machine, same binary: host
// byte order):
//   "GSTRACE1", f64 replay_ms, u64 dropped, u64 untimed,
//   u32 name count, per name u32 length + bytes,
//   u64 activity count, per activity: u8 kind, u8 copy, u8 channel_type,
//   u8 flags (1: graph_id, 2: graph_node_id), u32 name, u64 start, u64 end,
//   u32 device, stream, channel_id, correlation, graph_id, u64 graph_node_id,
//   u64 bytes, u32 grid[3], block[3], shared_bytes, context, u8 has_shared.
constexpr char kMagic[8] = {'G', 'S', 'T', 'R', 'A', 'C', 'E', '2'};

std::string trace_path(const std::string& dir, int index) { return dir + "/" + std::to_string(index) + ".trace"; }

class TraceFileWriter {
 public:
  explicit TraceFileWriter(const std::string& path) : path_(path), f_(std::fopen(path.c_str(), "wb")) {
    if (!f_) fail();
  }
  ~TraceFileWriter() {
    if (f_) std::fclose(f_);
  }
  template <typename T>
  void put(T v) {
    static_assert(std::is_trivially_copyable<T>::value, "plain values only");
    bytes(&v, sizeof v);
  }
  void bytes(const void* p, size_t n) {
    buf_.append(static_cast<const char*>(p), n);
    if (buf_.size() >= (size_t(1) << 20)) drain();
  }
  void close() {
    drain();
    int rc = std::fclose(f_);
    f_ = nullptr;
    if (rc != 0) fail();
  }

 private:
  void drain() {
    if (!buf_.empty() && std::fwrite(buf_.data(), 1, buf_.size(), f_) != buf_.size()) fail();
    buf_.clear();
  }
  [[noreturn]] void fail() { throw Error(ExitCode::workload, path_, std::string("cannot write: ") + std::strerror(errno)); }
  std::string path_;
  std::FILE* f_;
  std::string buf_;
};

struct TraceFile {
  Trace trace;
  double replay_ms = 0;
  uint64_t dropped = 0, untimed = 0;
};

void write_trace_file(const std::string& path, const Trace& t, double replay_ms, uint64_t dropped, uint64_t untimed) {
  TraceFileWriter w(path);
  w.bytes(kMagic, sizeof kMagic);
  w.put(replay_ms);
  w.put(dropped);
  w.put(untimed);
  w.put(uint32_t(t.names.size()));
  for (const std::string& n : t.names) {
    w.put(uint32_t(n.size()));
    w.bytes(n.data(), n.size());
  }
  w.put(uint64_t(t.activities.size()));
  for (const Activity& a : t.activities) {
    w.put(uint8_t(a.kind));
    w.put(uint8_t(a.copy));
    w.put(a.channel_type);
    w.put(uint8_t((a.graph_id ? 1 : 0) | (a.graph_node_id ? 2 : 0)));
    w.put(a.name);
    w.put(a.start_ns);
    w.put(a.end_ns);
    w.put(a.device);
    w.put(a.stream);
    w.put(a.channel_id);
    w.put(a.correlation);
    w.put(a.graph_id.value_or(0));
    w.put(a.graph_node_id.value_or(0));
    w.put(a.bytes);
    for (int i = 0; i < 3; ++i) w.put(a.grid[i]);
    for (int i = 0; i < 3; ++i) w.put(a.block[i]);
    w.put(a.shared_bytes);
    w.put(a.context);
    w.put(uint8_t(a.has_shared ? 1 : 0));
  }
  w.put(uint32_t(t.devices.size()));
  for (const DeviceSms& d : t.devices) {
    w.put(d.device);
    w.put(d.sm_count);
  }
  w.close();
}

class TraceFileReader {
 public:
  TraceFileReader(const std::string& path, const std::string& data) : path_(path), data_(data) {}
  template <typename T>
  T get() {
    T v;
    std::memcpy(&v, take(sizeof v), sizeof v);
    return v;
  }
  const char* take(size_t n) {
    if (data_.size() - pos_ < n) bad("truncated");
    const char* p = data_.data() + pos_;
    pos_ += n;
    return p;
  }
  size_t left() const { return data_.size() - pos_; }
  [[noreturn]] void bad(const std::string& why) const {
    throw Error(ExitCode::workload, path_, "the profiling child's trace file is " + why);
  }

 private:
  const std::string& path_;
  const std::string& data_;
  size_t pos_ = 0;
};

TraceFile read_trace_file(const std::string& path) {
  std::string data = read_file(path);
  TraceFileReader r(path, data);
  if (std::memcmp(r.take(sizeof kMagic), kMagic, sizeof kMagic) != 0) r.bad("not a graphscope trace file");
  TraceFile f;
  f.trace.source = "cupti";
  f.replay_ms = r.get<double>();
  f.dropped = r.get<uint64_t>();
  f.untimed = r.get<uint64_t>();
  uint32_t names = r.get<uint32_t>();
  if (names > r.left() / 4) r.bad("corrupt (name count)");
  std::vector<uint32_t> name_index(names);
  for (uint32_t i = 0; i < names; ++i) {
    uint32_t len = r.get<uint32_t>();
    const char* p = r.take(len);
    name_index[i] = f.trace.intern(std::string_view(p, len));
  }
  uint64_t count = r.get<uint64_t>();
  constexpr size_t kActivityBytes = 4 + 4 + 8 + 8 + 5 * 4 + 8 + 8 + 8 * 4 + 1;
  if (count > r.left() / kActivityBytes) r.bad("corrupt (activity count)");
  f.trace.activities.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    Activity a;
    uint8_t kind = r.get<uint8_t>(), copy = r.get<uint8_t>();
    if (kind > uint8_t(ActivityKind::other) || copy > uint8_t(CopyKind::other)) r.bad("corrupt (kind)");
    a.kind = ActivityKind(kind);
    a.copy = CopyKind(copy);
    a.channel_type = r.get<uint8_t>();
    uint8_t flags = r.get<uint8_t>();
    uint32_t name = r.get<uint32_t>();
    if (name >= names) r.bad("corrupt (name index)");
    a.name = name_index[name];
    a.start_ns = r.get<uint64_t>();
    a.end_ns = r.get<uint64_t>();
    a.device = r.get<uint32_t>();
    a.stream = r.get<uint32_t>();
    a.channel_id = r.get<uint32_t>();
    a.correlation = r.get<uint32_t>();
    uint32_t graph_id = r.get<uint32_t>();
    uint64_t node_id = r.get<uint64_t>();
    if (flags & 1) a.graph_id = graph_id;
    if (flags & 2) a.graph_node_id = node_id;
    a.bytes = r.get<uint64_t>();
    for (int k = 0; k < 3; ++k) a.grid[k] = r.get<uint32_t>();
    for (int k = 0; k < 3; ++k) a.block[k] = r.get<uint32_t>();
    a.shared_bytes = r.get<uint32_t>();
    a.context = r.get<uint32_t>();
    a.has_shared = r.get<uint8_t>() != 0;
    f.trace.activities.push_back(a);
  }
  const uint32_t devices = r.get<uint32_t>();
  if (devices > r.left() / 8) r.bad("corrupt (device count)");
  for (uint32_t k = 0; k < devices; ++k) {
    DeviceSms d;
    d.device = r.get<uint32_t>();
    d.sm_count = r.get<uint32_t>();
    f.trace.devices.push_back(d);
  }
  if (r.left() != 0) r.bad("corrupt (trailing bytes)");
  return f;
}

bool has_kernel_node(const Graph& g) {
  for (const Node& n : g.nodes) {
    if (n.type == NodeType::kernel) return true;
    for (const Graph& b : n.bodies)
      if (has_kernel_node(b)) return true;
  }
  return false;
}

// In the child, after capture_workload's own work on one graph: warm up,
// trace the replays, write the trace file.
void trace_replays(const ProfileRunOptions& o, const GraphDocument& doc, cudaGraphExec_t exec, cudaStream_t stream,
                   const std::string& dir, int index) {
  for (int i = 0; i < o.warmup; ++i) GS_CUDA(cudaGraphLaunch(exec, stream));
  GS_CUDA(cudaStreamSynchronize(stream));
  GS_CUDA(cudaDeviceSynchronize());  // nothing else in flight when tracing starts

  const bool progress = o.progress && o.replays > 0 && isatty(STDERR_FILENO);
  ActivityCollector collector;
  collector.start();
  auto t0 = Clock::now();
  for (int i = 0; i < o.replays; ++i) {
    GS_CUDA(cudaGraphLaunch(exec, stream));
    if (progress) std::fprintf(stderr, "\rreplay %d/%d", i + 1, o.replays);
  }
  GS_CUDA(cudaStreamSynchronize(stream));
  double replay_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  if (progress) std::fputc('\n', stderr);
  collector.stop();

  if (o.replays > 0 && collector.trace().activities.empty() && has_kernel_node(doc.root))
    throw Error(ExitCode::device, "CUPTI activity tracing",
                "no activity record came back for " + (doc.name.empty() ? std::string("the graph") : "graph " + doc.name) +
                    " after " + std::to_string(o.replays) + " traced replays");
  write_trace_file(trace_path(dir, index), collector.trace(), replay_ms, collector.dropped_records(),
                   collector.untimed_records());
}

}  // namespace

std::vector<ProfiledGraph> profile_workload(const ProfileRunOptions& o) {
  if (o.warmup < 0) throw Error(ExitCode::usage, "--warmup " + std::to_string(o.warmup), "must be 0 or more");
  if (o.replays < 0) throw Error(ExitCode::usage, "--replays " + std::to_string(o.replays), "must be 0 or more");
  if (o.connections < 0 || o.connections > 32)
    throw Error(ExitCode::usage, "--connections " + std::to_string(o.connections),
                "CUDA_DEVICE_MAX_CONNECTIONS is 1 to 32; 0 leaves it alone");
  if (o.capture.instantiate == Instantiate::never)
    throw Error(ExitCode::usage, "--instantiate never", "profiling replays the graph: it must be instantiated");

  detail::CaptureHooks hooks;
  if (o.connections > 0) {
    const std::string value = std::to_string(o.connections);
    hooks.before_cuda = [value] {
      if (setenv("CUDA_DEVICE_MAX_CONNECTIONS", value.c_str(), 1) != 0)
        throw Error(ExitCode::workload, "setenv CUDA_DEVICE_MAX_CONNECTIONS", std::strerror(errno));
    };
  }
  hooks.after_graph = [&o](const GraphDocument& doc, cudaGraphExec_t exec, cudaStream_t stream,
                           const std::string& dir, int index) { trace_replays(o, doc, exec, stream, dir, index); };
  std::vector<TraceFile> traces;
  hooks.read_back = [&](const std::string& dir, int index) {
    std::string path = trace_path(dir, index);
    if (access(path.c_str(), R_OK) != 0)
      throw Error(ExitCode::workload, o.capture.workload,
                  "the profile produced no trace for graph " + std::to_string(index));
    traces.push_back(read_trace_file(path));
  };

  std::vector<CapturedGraph> captured = detail::run_capture(o.capture, hooks);
  std::vector<ProfiledGraph> out;
  out.reserve(captured.size());
  for (size_t i = 0; i < captured.size(); ++i) {
    ProfiledGraph g;
    g.doc = std::move(captured[i].doc);
    g.trace = std::move(traces.at(i).trace);
    g.replay_ms_total = traces[i].replay_ms;
    g.dropped_records = traces[i].dropped;
    g.untimed_records = traces[i].untimed;
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace graphscope::capture
