#include "work.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <cstring>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "../core/hash.h"
#include "../core/order.h"

namespace graphscope {
namespace {

constexpr uint64_t kSecondNs = 1000000000;

struct Span {
  uint64_t start = 0, end = 0;
};

// Adds [s, e) to a union built from spans in order of start.
void extend(std::vector<Span>& u, uint64_t s, uint64_t e) {
  if (!u.empty() && s <= u.back().end) {
    u.back().end = std::max(u.back().end, e);
    return;
  }
  u.push_back({s, e});
}

uint64_t length(const std::vector<Span>& u) {
  uint64_t n = 0;
  for (const Span& s : u) n += s.end - s.start;
  return n;
}

// a less b, both sorted and disjoint: the busy time no graph record covers.
std::vector<Span> minus(const std::vector<Span>& a, const std::vector<Span>& b) {
  std::vector<Span> out;
  size_t j = 0;
  for (const Span& x : a) {
    uint64_t at = x.start;
    while (j < b.size() && b[j].end <= at) ++j;
    for (size_t k = j; k < b.size() && b[k].start < x.end; ++k) {
      if (b[k].start > at) out.push_back({at, b[k].start});
      at = std::max(at, b[k].end);
    }
    if (at < x.end) out.push_back({at, x.end});
  }
  return out;
}

struct GroupKey {
  ActivityKind kind;
  uint32_t name;
  uint32_t grid[3], block[3];
  bool operator==(const GroupKey& o) const {
    return kind == o.kind && name == o.name && std::memcmp(grid, o.grid, sizeof grid) == 0 &&
           std::memcmp(block, o.block, sizeof block) == 0;
  }
};

struct GroupKeyHash {
  size_t operator()(const GroupKey& k) const {
    uint64_t h = hash_mix(uint64_t(k.kind) << 32 | k.name);
    for (int i = 0; i < 3; ++i) h = hash_mix(h ^ (uint64_t(k.grid[i]) << 32 | k.block[i]));
    return size_t(h);
  }
};

struct GroupAcc {
  GroupKey key;
  uint64_t launches = 0, after = 0;
  uint64_t gpu_ns = 0, first_ns = 0, last_ns = 0;
};

struct GraphAcc {
  std::unordered_set<uint32_t> correlations;
  Span open;  // the union's span being extended
  uint64_t union_ns = 0, first_ns = 0, last_end_ns = 0;
  bool any = false;
};

// The part of each span inside each bin, added to the bins' `field`.
void spread(const std::vector<Span>& spans, uint64_t t0, uint64_t bin_ns, std::vector<AttachWork::Bin>& bins,
            double AttachWork::Bin::*field) {
  for (const Span& s : spans) {
    uint64_t at = s.start;
    size_t i = size_t((at - t0) / bin_ns);
    while (at < s.end && i < bins.size()) {
      const uint64_t edge = t0 + (uint64_t(i) + 1) * bin_ns;
      const uint64_t to = std::min(s.end, edge);
      bins[i].*field += double(to - at) / 1e3;
      at = to, ++i;
    }
  }
}

// CUPTI stamps some eager records with an end long after the next work on
// their stream began (DtoD copies on a compute channel of a PyTorch
// serving loop, H200, 2026-12-01: 32 KiB copies "lasting" 27-119 ms, all
// ending near one instant, while the kernels after them ran). Work on one
// stream runs in order, so such an end is wrong, and no right one is known:
// per record of kept (in `order`), 1 where an eager record ends more than
// kLate after the start of the next kept record on its (device, context,
// stream); records that name no stream (0) are not checked.
constexpr uint64_t kLate = 2000;  // ns: what two records' stamps may overlap by

std::vector<uint8_t> stamped_late(const std::vector<Activity>& acts, const std::vector<uint32_t>& kept,
                                  const std::vector<uint32_t>& order) {
  std::vector<uint8_t> late(kept.size(), 0);
  struct Stream {
    uint32_t device, context, stream;
    bool operator==(const Stream& o) const { return device == o.device && context == o.context && stream == o.stream; }
  };
  struct StreamHash {
    size_t operator()(const Stream& x) const {
      return size_t(hash_mix((uint64_t(x.device) << 32 | x.context) ^ hash_mix(x.stream)));
    }
  };
  std::unordered_map<Stream, uint32_t, StreamHash> last;  // a stream -> the latest record seen there
  for (uint32_t k : order) {
    const Activity& a = acts[kept[k]];
    if (a.stream == 0) continue;  // a record that names no stream: nothing to order it by
    auto [it, fresh] = last.emplace(Stream{a.device, a.context, a.stream}, k);
    if (!fresh) {
      const Activity& before = acts[kept[it->second]];
      if (!before.graph_id && before.end_ns > a.start_ns + kLate) late[it->second] = 1;
      it->second = k;
    }
  }
  return late;
}

// The site of an origin as the index keeps it.
AttachWork::Site site_of(const Origin& o) {
  AttachWork::Site x;
  for (const SourceFrame& f : o.python) {
    if (x.python.size() == 3) break;
    x.python.push_back({f.file, f.line, f.function});
  }
  x.module = module_pattern(o.module());
  // A path of indices alone ("0", "1.2": an nn.Sequential's children) says
  // nothing once they are "*": the module's class instead.
  if (x.module.find_first_not_of("*.") == std::string::npos) x.module = o.modules.empty() ? "" : o.modules.back().type;
  for (const NvtxRange& r : o.nvtx) x.nvtx.push_back(r.message);
  if (o.native) x.native = o.native->function;
  return x;
}

std::string site_identity(const AttachWork::Site& x) {
  std::string k;
  for (const auto& f : x.python) k += f.file + '\x1f' + std::to_string(f.line) + '\x1f' + f.function + '\x1e';
  k += '\x1d' + x.module + '\x1d';
  for (const auto& r : x.nvtx) k += r + '\x1e';
  return k + '\x1d' + x.native;
}

}  // namespace

std::string module_pattern(const std::string& path) {
  std::string out;
  size_t at = 0;
  for (;;) {
    const size_t dot = path.find('.', at);
    const std::string part = path.substr(at, dot == std::string::npos ? std::string::npos : dot - at);
    const bool index =
        !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return std::isdigit((unsigned char)c) != 0; });
    if (at) out += '.';
    out += index ? std::string("*") : part;
    if (dot == std::string::npos) return out;
    at = dot + 1;
  }
}

AttachWork summarize_work(const Trace& trace, uint64_t base_ns, std::optional<uint64_t> captures_end_ns,
                          std::string source, const LaunchSites* sites) {
  AttachWork w;
  w.source = std::move(source);
  auto since = [&](uint64_t t) { return t > base_ns ? double(t - base_ns) / 1e9 : 0.0; };
  if (captures_end_ns) w.captures_end_s = since(*captures_end_ns);

  // The records that count, in order of start.
  const std::vector<Activity>& acts = trace.activities;
  std::vector<uint32_t> kept;
  kept.reserve(acts.size());
  for (size_t i = 0; i < acts.size(); ++i) {
    const Activity& a = acts[i];
    if (a.start_ns == 0 && a.end_ns == 0) continue;
    const bool eager_kind =
        a.kind == ActivityKind::kernel || a.kind == ActivityKind::memcpy || a.kind == ActivityKind::memset;
    if (a.graph_id || eager_kind) kept.push_back(uint32_t(i));
  }
  if (kept.empty()) return w;
  const std::vector<uint32_t> order = order_by(kept.size(), [&](size_t i) { return acts[kept[i]].start_ns; });
  const std::vector<uint8_t> misstamped = stamped_late(acts, kept, order);

  // Launch sites: correlation -> the merged site of its origin.
  std::vector<std::pair<uint32_t, uint32_t>> by_corr;
  std::vector<int64_t> merged_of;  // site id - 1 -> index into site_accs, -1 unknown
  struct SiteAcc {
    AttachWork::Site site;
    uint64_t gpu_ns = 0;
    std::map<uint32_t, uint64_t> by_name;  // record name -> GPU ns
  };
  std::vector<SiteAcc> site_accs;
  uint64_t unsited_ns = 0;
  if (sites) {
    w.sites_read = true;
    by_corr = sites->launches;
    std::sort(by_corr.begin(), by_corr.end());
    std::unordered_map<std::string, size_t> merged;
    merged_of.assign(sites->origins.size(), -1);
    for (size_t i = 0; i < sites->origins.size(); ++i) {
      if (!sites->origins[i]) continue;
      AttachWork::Site x = site_of(*sites->origins[i]);
      auto [it, fresh] = merged.emplace(site_identity(x), site_accs.size());
      if (fresh) site_accs.push_back({std::move(x), 0, {}});
      merged_of[i] = int64_t(it->second);
    }
  }
  auto site_acc = [&](uint32_t correlation) -> SiteAcc* {
    auto it = std::lower_bound(by_corr.begin(), by_corr.end(), std::make_pair(correlation, uint32_t(0)));
    if (it == by_corr.end() || it->first != correlation) return nullptr;
    const uint32_t id = it->second;
    if (id == 0 || id > merged_of.size() || merged_of[id - 1] < 0) return nullptr;
    return &site_accs[size_t(merged_of[id - 1])];
  };
  std::vector<Span> busy, graph;
  std::unordered_map<GroupKey, size_t, GroupKeyHash> group_of;
  std::vector<GroupAcc> groups;
  std::unordered_map<uint32_t, GraphAcc> graphs;
  const uint64_t t0 = acts[kept[order.front()]].start_ns;
  uint64_t t_end = t0;
  for (uint32_t k : order) {
    const Activity& a = acts[kept[k]];
    const uint64_t s = a.start_ns, e = std::max(a.start_ns, a.end_ns);
    if (a.graph_id) {
      t_end = std::max(t_end, e);
      extend(busy, s, e);
      ++w.graph_records;
      extend(graph, s, e);
      GraphAcc& g = graphs[*a.graph_id];
      g.correlations.insert(a.correlation);
      if (!g.any) {
        g.any = true, g.first_ns = s, g.open = {s, e};
      } else if (s <= g.open.end) {
        g.open.end = std::max(g.open.end, e);
      } else {
        g.union_ns += g.open.end - g.open.start;
        g.open = {s, e};
      }
      g.last_end_ns = std::max(g.last_end_ns, e);
      continue;
    }
    ++w.eager_records;
    uint64_t took = e - s;
    if (misstamped[k]) {
      ++w.misstamped_records;
      w.misstamped_us += double(took) / 1e3;
      took = 0;  // its launch counts; no duration it claimed does
    } else {
      extend(busy, s, e);
    }
    GroupKey key{a.kind, a.name, {a.grid[0], a.grid[1], a.grid[2]}, {a.block[0], a.block[1], a.block[2]}};
    const auto [it, fresh] = group_of.emplace(key, groups.size());
    if (fresh) groups.push_back({key, 0, 0, 0, s, s});
    GroupAcc& g = groups[it->second];
    ++g.launches;
    if (captures_end_ns && s > *captures_end_ns) ++g.after;
    g.gpu_ns += took;
    g.last_ns = s;
    t_end = std::max(t_end, took ? e : s);
    if (sites) {
      if (SiteAcc* sa = site_acc(a.correlation)) {
        ++sa->site.launches;
        if (captures_end_ns && s > *captures_end_ns) ++sa->site.launches_after_captures;
        sa->gpu_ns += took;
        sa->by_name[a.name] += took;
      } else {
        ++w.unsited_launches;
        unsited_ns += took;
      }
    }
  }

  w.start_s = since(t0);
  w.end_s = since(t_end);
  const uint64_t busy_ns = length(busy), graph_ns = length(graph);  // graph's union lies inside busy's
  w.busy_us = double(busy_ns) / 1e3;
  w.graph_us = double(graph_ns) / 1e3;
  w.eager_us = double(busy_ns - graph_ns) / 1e3;

  // Groups: the largest first; ties by name and geometry, so that the
  // document does not depend on the hash map's order.
  auto name_of = [&](uint32_t n) -> const std::string& {
    static const std::string none;
    return n < trace.names.size() ? trace.names[n] : none;
  };
  std::sort(groups.begin(), groups.end(), [&](const GroupAcc& a, const GroupAcc& b) {
    if (a.gpu_ns != b.gpu_ns) return a.gpu_ns > b.gpu_ns;
    if (a.launches != b.launches) return a.launches > b.launches;
    if (a.key.kind != b.key.kind) return a.key.kind < b.key.kind;
    if (int c = name_of(a.key.name).compare(name_of(b.key.name))) return c < 0;
    if (int c = std::memcmp(a.key.grid, b.key.grid, sizeof a.key.grid)) return c < 0;
    return std::memcmp(a.key.block, b.key.block, sizeof a.key.block) < 0;
  });
  for (size_t i = 0; i < groups.size(); ++i) {
    const GroupAcc& g = groups[i];
    if (i >= AttachWork::kMaxGroups) {
      w.other_launches += g.launches;
      w.other_us += double(g.gpu_ns) / 1e3;
      continue;
    }
    AttachWork::Group x;
    x.kind = std::string(to_string(g.key.kind));
    x.name = name_of(g.key.name);
    std::copy(g.key.grid, g.key.grid + 3, x.grid);
    std::copy(g.key.block, g.key.block + 3, x.block);
    x.launches = g.launches;
    x.launches_after_captures = g.after;
    x.gpu_us = double(g.gpu_ns) / 1e3;
    x.first_s = since(g.first_ns);
    x.last_s = since(g.last_ns);
    w.eager.push_back(std::move(x));
  }

  // Sites: the largest first (ties by identity, for a stable document).
  std::sort(site_accs.begin(), site_accs.end(), [&](const SiteAcc& a, const SiteAcc& b) {
    if (a.gpu_ns != b.gpu_ns) return a.gpu_ns > b.gpu_ns;
    if (a.site.launches != b.site.launches) return a.site.launches > b.site.launches;
    return site_identity(a.site) < site_identity(b.site);
  });
  for (size_t i = 0; i < site_accs.size(); ++i) {
    SiteAcc& sa = site_accs[i];
    if (!sa.site.launches) continue;
    if (w.sites.size() >= AttachWork::kMaxSites) {
      w.unsited_launches += sa.site.launches;
      unsited_ns += sa.gpu_ns;
      continue;
    }
    sa.site.gpu_us = double(sa.gpu_ns) / 1e3;
    uint32_t top = 0;
    uint64_t top_ns = 0;
    bool any = false;
    for (const auto& [name, ns] : sa.by_name)
      if (!any || ns > top_ns) top = name, top_ns = ns, any = true;
    if (any) sa.site.top = name_of(top);
    w.sites.push_back(std::move(sa.site));
  }
  w.unsited_us = double(unsited_ns) / 1e3;

  for (auto& [id, g] : graphs) {
    AttachWork::GraphTime t;
    t.exec_graph_id = id;
    t.replays = g.correlations.size();
    t.gpu_us = double(g.union_ns + (g.open.end - g.open.start)) / 1e3;
    t.first_s = since(g.first_ns);
    t.last_s = since(g.last_end_ns);
    w.graphs.push_back(t);
  }
  std::sort(w.graphs.begin(), w.graphs.end(),
            [](const AttachWork::GraphTime& a, const AttachWork::GraphTime& b) {
              return a.exec_graph_id < b.exec_graph_id;
            });

  // The timeline: whole seconds per bin, as few as keep kMaxBins.
  const uint64_t span = t_end - t0;
  const uint64_t most = uint64_t(AttachWork::kMaxBins) * kSecondNs;
  const uint64_t bin_seconds = std::max<uint64_t>(1, (span + most - 1) / most);
  const uint64_t bin_ns = bin_seconds * kSecondNs;
  w.bin_s = double(bin_seconds);
  w.timeline.assign(size_t(std::max<uint64_t>(1, (span + bin_ns - 1) / bin_ns)), {});
  spread(graph, t0, bin_ns, w.timeline, &AttachWork::Bin::graph_us);
  spread(minus(busy, graph), t0, bin_ns, w.timeline, &AttachWork::Bin::eager_us);
  return w;
}

}  // namespace graphscope
