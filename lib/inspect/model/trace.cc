#include "trace.h"

#include <algorithm>

namespace graphscope {

std::string_view to_string(ActivityKind k) {
  switch (k) {
    case ActivityKind::kernel: return "kernel";
    case ActivityKind::memcpy: return "memcpy";
    case ActivityKind::memset: return "memset";
    case ActivityKind::host: return "host";
    case ActivityKind::other: return "other";
  }
  return "other";
}

std::string_view to_string(CopyKind k) {
  switch (k) {
    case CopyKind::none: return "none";
    case CopyKind::htod: return "HtoD";
    case CopyKind::dtoh: return "DtoH";
    case CopyKind::dtod: return "DtoD";
    case CopyKind::htoh: return "HtoH";
    case CopyKind::other: return "other";
  }
  return "other";
}

double sm_footprint(const Activity& a, uint32_t sm_count) {
  if (!sm_count || !a.has_geometry() || a.kind != ActivityKind::kernel) return 0;
  const double blocks = double(a.grid[0]) * double(std::max(1u, a.grid[1])) * double(std::max(1u, a.grid[2]));
  return std::min(1.0, blocks / double(sm_count));
}

uint32_t Trace::sm_count(uint32_t device) const {
  for (const DeviceSms& d : devices)
    if (d.device == device) return d.sm_count;
  return 0;
}

bool is_graph_launch_api(std::string_view name) {
  // cudaGraphLaunch, cudaGraphLaunch_v10000, cudaGraphLaunch_ptsz,
  // cuGraphLaunch, cuGraphLaunch_ptsz.
  return name.rfind("cudaGraphLaunch", 0) == 0 || name.rfind("cuGraphLaunch", 0) == 0;
}

uint32_t Trace::intern(std::string_view name) {
  for (uint32_t r : recent_)
    if (r < names.size() && names[r] == name) return r;
  uint32_t i = intern_slow(name);
  recent_[next_recent_++ % 4] = i;
  return i;
}

uint32_t Trace::intern_slow(std::string_view name) {
  // `names` is public: when it was filled or changed without intern(), the
  // index is rebuilt from it (the first of equal names wins).
  auto rebuild = [this] {
    index_.clear();
    for (uint32_t i = 0; i < names.size(); ++i) index_.emplace(names[i], i);
  };
  if (index_.size() != names.size()) rebuild();
  std::string key(name);
  auto it = index_.find(key);
  if (it != index_.end() && (it->second >= names.size() || names[it->second] != name)) {
    rebuild();
    it = index_.find(key);
  }
  if (it != index_.end()) return it->second;
  auto i = static_cast<uint32_t>(names.size());
  names.push_back(key);
  index_.emplace(std::move(key), i);
  return i;
}

}  // namespace graphscope
