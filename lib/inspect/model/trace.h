// The backend-neutral model of a device activity trace: what CUPTI's
// activity records (live) or a Chrome trace with Kineto's argument keys
// (offline: ours, or a PyTorch profiler export) say about a graph's replays.
// Plain data, no CUPTI header: lib/capture converts CUPTI records into it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace graphscope {

enum class ActivityKind : uint8_t { kernel, memcpy, memset, host, other };
std::string_view to_string(ActivityKind k);

/// Copy directions of memcpy activities (CUPTI's copyKind, reduced).
enum class CopyKind : uint8_t { none, htod, dtoh, dtod, htoh, other };
std::string_view to_string(CopyKind k);

/// One device activity. Times are nanoseconds on the trace's clock.
struct Activity {
  // Eight-byte members first, then four, then one: 104 bytes, not 120 (a
  // 1M-record trace is read into fresh pages, which the development machine
  // zeroes slowly).
  uint64_t start_ns = 0, end_ns = 0;
  uint64_t bytes = 0;  // memcpy/memset size, when known
  // Graph ids of records from graph replays: graph_id is the exec graph's
  // id, graph_node_id = (exec graph id << 32) | local node id.
  std::optional<uint64_t> graph_node_id;
  std::optional<uint32_t> graph_id;
  uint32_t name = 0;  // index into Trace::names
  uint32_t device = 0;
  uint32_t stream = 0;
  // Hardware channel (CUPTI 12.2+): type 1 compute, 2 async memcpy; 0 when
  // the record has none (then lanes fall back to the stream).
  uint32_t channel_id = 0;
  uint32_t correlation = 0;  // of the API call that launched it (the graph launch)
  // Kernels: the launch geometry (zeros when the record has none) and the
  // shared memory per block in bytes, static and dynamic together, as CUPTI
  // and Kineto report it (has_shared false when the record has none).
  uint32_t grid[3] = {0, 0, 0};
  uint32_t block[3] = {0, 0, 0};
  uint32_t shared_bytes = 0;
  uint32_t context = 0;  // CUDA context id, when known
  ActivityKind kind = ActivityKind::other;
  CopyKind copy = CopyKind::none;
  uint8_t channel_type = 0;
  bool has_shared = false;

  bool has_geometry() const { return grid[0] != 0 && block[0] != 0; }
};

/// A graph launch on the host: the runtime or driver API call
/// (cudaGraphLaunch, cuGraphLaunch) whose correlation id the device records
/// of its replay carry. PyTorch profiler exports have these where their
/// device records have no graph ids.
struct GraphLaunch {
  uint32_t correlation = 0;
  uint64_t start_ns = 0, end_ns = 0;
};

/// Whether an API call of this name launches a graph.
bool is_graph_launch_api(std::string_view name);

/// A device's multiprocessor count, for the what-if model's SM occupancy
/// (from the driver in a live profile, Kineto's deviceProperties in an
/// export).
struct DeviceSms {
  uint32_t device = 0;
  uint32_t sm_count = 0;
};

/// The share of the device's SMs a kernel's grid holds while it runs: its
/// blocks over the SMs, at most 1 (a grid of a block per SM or more keeps
/// every SM busy); 0 when the activity has no geometry or sm_count is 0.
double sm_footprint(const Activity& a, uint32_t sm_count);

struct Trace {
  std::vector<Activity> activities;
  std::vector<DeviceSms> devices;  // per device, when known

  /// The device's SM count; 0 when unknown.
  uint32_t sm_count(uint32_t device) const;
  std::vector<GraphLaunch> launches;  // in trace order; empty when the trace has none
  std::vector<std::string> names;  // interned activity names
  std::string source;              // "cupti", "chrome-trace", "pytorch-profiler"

  /// Interns a name; returns its index.
  uint32_t intern(std::string_view name);

 private:
  uint32_t intern_slow(std::string_view name);
  std::unordered_map<std::string, uint32_t> index_;
  // The last names interned, checked against `names` first: a million
  // records of a few kernels find theirs without building a key.
  uint32_t recent_[4] = {UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX};
  uint32_t next_recent_ = 0;
};

}  // namespace graphscope
