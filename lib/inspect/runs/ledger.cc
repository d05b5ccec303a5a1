#include "ledger.h"

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <set>
#include <string_view>

#include "../core/json_writer.h"
#include "../core/stats.h"
#include "../formats/load.h"
#include "../model/graph.h"
#include "ledger_parts.h"
#include "run_dir.h"

namespace graphscope {
namespace {

// Code written at run time by a compiler (TorchInductor's modules, under its
// cache directory): no place a user would recognise as theirs.
bool generated(const SourceFrame& f) { return f.file.find("torchinductor_") != std::string::npos; }

bool same_frame(const SourceFrame& a, const SourceFrame& b) {
  return a.line == b.line && a.file == b.file && a.function == b.function;
}

std::string base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A graph's nodes, edges and launch parameters in one string: two graphs
// with the same are the same executable graph.
std::string shape_key(const Graph& g) {
  std::string k;
  for (const Node& n : g.nodes) {
    k += std::to_string(int(n.type)) + ':' + n.kernel_name;
    if (n.kernel) {
      const KernelInfo& x = *n.kernel;
      k += '[' + std::to_string(x.grid.x) + ',' + std::to_string(x.grid.y) + ',' + std::to_string(x.grid.z) + ';' +
           std::to_string(x.block.x) + ',' + std::to_string(x.block.y) + ',' + std::to_string(x.block.z) + ';' +
           std::to_string(x.shared_mem_bytes) + ']';
    }
    if (n.memcpy) k += "c" + std::to_string(n.memcpy->bytes);
    if (n.memset) k += "s" + std::to_string(n.memset->bytes);
    if (n.mem_alloc) k += "a" + std::to_string(n.mem_alloc->bytes);
    for (const Dependency& d : n.dependencies) k += '<' + std::to_string(d.from) + '.' + std::to_string(int(d.type));
    k += '\n';
  }
  return k;
}

// A kernel's launch geometry: grid, then block.
using Geometry = std::array<uint32_t, 6>;

// A graph's kernels by name, for the fallbacks: its nodes of each and their
// launch geometries.
struct KernelUse {
  uint64_t nodes = 0;
  std::set<Geometry> geometries;
};
using GraphKernels = std::map<std::string, KernelUse, std::less<>>;

// A node's origin for a person reading about a kernel that also ran eager:
// its module and innermost user source line ("blocks.0.1 at
// serving_app.py:40"), else what Origin::describe() says.
std::string node_origin(const Origin& o) {
  std::string where;
  for (const SourceFrame& f : o.python)
    if (!generated(f)) {
      where = base_name(f.file) + ":" + std::to_string(f.line);
      break;
    }
  const std::string module = o.module();
  if (!module.empty() && !where.empty()) return module + " at " + where;
  if (!module.empty()) return module;
  if (!where.empty()) return where;
  return o.describe();
}

// A count estimated as a median of ratios, rounded (a hostile index's
// counts can be near 2^64: no conversion out of range).
uint64_t rounded(double v) {
  if (!(v > 0)) return 0;
  return v >= 1.8e19 ? UINT64_MAX : uint64_t(v + 0.5);
}

// The fallback of a family (LedgerFallback says how it is estimated);
// nullopt when none of its kernels ran eager after the captures ended.
std::optional<LedgerFallback> fallback_of(const LedgerFamily& f, const std::vector<GraphKernels>& uses,
                                          const AttachWork& work) {
  if (!work.captures_end_s) return std::nullopt;
  // Eager launches of each kernel after the captures, by geometry (zeros: none recorded).
  std::map<std::string_view, std::vector<std::pair<Geometry, uint64_t>>> eager;
  for (const AttachWork::Group& g : work.eager)
    if (g.kind == "kernel" && g.launches_after_captures)
      eager[g.name].push_back({{g.grid[0], g.grid[1], g.grid[2], g.block[0], g.block[1], g.block[2]},
                               g.launches_after_captures});
  if (eager.empty()) return std::nullopt;
  LedgerFallback fb;
  const GraphKernels& first = uses[f.graphs.front()];
  for (const auto& [name, use] : first) {
    bool everywhere = true, differ = false;
    std::set<Geometry> any;
    std::vector<double> nodes;
    for (size_t m : f.graphs) {
      const auto it = uses[m].find(name);
      if (it == uses[m].end()) {
        everywhere = false;
        break;
      }
      nodes.push_back(double(it->second.nodes));
      any.insert(it->second.geometries.begin(), it->second.geometries.end());
      differ = differ || it->second.geometries != use.geometries;
    }
    if (!everywhere) continue;
    LedgerFallbackKernel k;
    k.name = name;
    k.per_graph = median(nodes);
    k.tells_apart = differ;
    if (const auto e = eager.find(name); e != eager.end())
      for (const auto& [geometry, n] : e->second) {
        k.eager += n;
        if (geometry[0] == 0 || geometry[3] == 0) continue;
        (any.count(geometry) ? k.at_member_geometry : k.at_other_geometry) += n;
      }
    fb.kernels.push_back(std::move(k));
  }
  uint64_t eager_total = 0;
  bool tells = false;
  for (const LedgerFallbackKernel& k : fb.kernels) eager_total += k.eager, tells = tells || k.tells_apart;
  if (eager_total == 0) return std::nullopt;
  // The median over the kernels of the split (those that tell members apart, if any) of value(k).
  auto over = [&](bool split, const std::function<double(const LedgerFallbackKernel&)>& value) {
    std::vector<double> v;
    for (const LedgerFallbackKernel& k : fb.kernels)
      if (!split || !tells || k.tells_apart) v.push_back(value(k));
    return rounded(median(v));
  };
  fb.runs = over(false, [](const LedgerFallbackKernel& k) { return double(k.eager) / k.per_graph; });
  // Fewer than half the kernels ran eager: other code launched them, not the family's.
  if (fb.runs == 0) return std::nullopt;
  fb.at_member_geometry =
      over(true, [](const LedgerFallbackKernel& k) { return double(k.at_member_geometry) / k.per_graph; });
  fb.at_other_geometry =
      over(true, [](const LedgerFallbackKernel& k) { return double(k.at_other_geometry) / k.per_graph; });
  for (size_t m : f.graphs) {
    const uint64_t runs = over(true, [&](const LedgerFallbackKernel& k) {
      const KernelUse& use = uses[m].find(k.name)->second;
      uint64_t n = 0;
      if (const auto e = eager.find(k.name); e != eager.end())
        for (const auto& [geometry, launches] : e->second)
          if (use.geometries.count(geometry)) n += launches;
      return double(n) / double(use.nodes);
    });
    if (runs) fb.by_member.push_back({m, runs});
  }
  std::stable_sort(fb.by_member.begin(), fb.by_member.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return fb;
}

// The Python frames (file, line) of a graph's nodes: the code a family runs.
using CodeFrames = std::set<std::pair<std::string, uint64_t>>;

std::string frame_text(const AttachWork::SiteFrame& f) {
  return base_name(f.file) + ":" + std::to_string(f.line) + " in " + f.function;
}

// The eager launch sites of a process for the ledger, each tied to the
// family whose code it ran (its innermost frame is one of the family's
// nodes' frames), and each family's fallback told by where it was called
// from (the first frame of the site that is none of the family's).
void sites_of(const AttachWork& w, LedgerWork& l, std::vector<LedgerFamily>& families,
              const std::vector<CodeFrames>& code) {
  l.sites_read = w.sites_read;
  if (!w.sites_read) return;
  l.unsited_launches = w.unsited_launches;
  l.unsited_us = w.unsited_us;
  std::vector<CodeFrames> family_code(families.size());
  for (size_t f = 0; f < families.size(); ++f)
    for (size_t g : families[f].graphs) family_code[f].insert(code[g].begin(), code[g].end());
  std::vector<std::map<std::string, LedgerFallback::From>> from(families.size());
  for (size_t i = 0; i < w.sites.size(); ++i) {
    const AttachWork::Site& x = w.sites[i];
    LedgerSite s;
    if (!x.python.empty()) {
      s.where = frame_text(x.python.front());
      for (size_t k = 1; k < x.python.size(); ++k) s.callers.push_back(frame_text(x.python[k]));
    }
    for (size_t k = 0; k < x.nvtx.size(); ++k) s.nvtx += (k ? " / " : "") + x.nvtx[k];
    if (s.where.empty()) s.where = !s.nvtx.empty() ? "NVTX " + s.nvtx : x.native;
    s.module = x.module;
    s.launches = x.launches, s.launches_after_captures = x.launches_after_captures;
    s.gpu_us = x.gpu_us, s.top = x.top;
    if (!x.python.empty())
      for (size_t f = 0; f < families.size() && !s.family; ++f) {
        const CodeFrames& c = family_code[f];
        if (!c.count({x.python.front().file, x.python.front().line})) continue;
        s.family = f;
        std::string call;
        for (const AttachWork::SiteFrame& fr : x.python)
          if (!c.count({fr.file, fr.line})) {
            call = frame_text(fr);
            break;
          }
        LedgerFallback::From& into = from[f][call];
        into.call = call;
        into.launches += x.launches;
        into.launches_after_captures += x.launches_after_captures;
        into.gpu_us += x.gpu_us;
      }
    if (l.sites.size() < LedgerWork::kTopSites) {
      l.sites.push_back(std::move(s));
    } else {
      l.sites_rest_launches += x.launches;
      l.sites_rest_us += x.gpu_us;
    }
  }
  for (size_t f = 0; f < families.size(); ++f) {
    if (from[f].empty()) continue;
    // Launches after the captures ended are the fallbacks: a family's code
    // run eager before them is the program's warm-up.
    std::vector<LedgerFallback::From> v;
    for (auto& [call, x] : from[f])
      if (x.launches_after_captures) v.push_back(std::move(x));
    if (v.empty()) continue;
    std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
      return a.launches_after_captures > b.launches_after_captures;
    });
    if (!families[f].fallback) families[f].fallback.emplace();
    families[f].fallback->from = std::move(v);
  }
}

// What tells a family's buckets apart (LedgerFamily::bucket_kernel).
void bucket_key(LedgerFamily& f, const std::vector<GraphKernels>& uses) {
  std::string best;
  std::vector<uint64_t> best_blocks;
  uint64_t best_sum = UINT64_MAX;
  for (const auto& [name, first] : uses[f.graphs.front()]) {
    std::vector<uint64_t> blocks;
    std::set<uint64_t> distinct;
    for (size_t m : f.graphs) {
      const auto it = uses[m].find(name);
      if (it == uses[m].end() || it->second.geometries.size() != 1) break;
      const Geometry& g = *it->second.geometries.begin();
      const uint64_t b = uint64_t(g[0]) * g[1] * g[2];
      blocks.push_back(b);
      distinct.insert(b);
    }
    if (blocks.size() != f.graphs.size() || distinct.size() != blocks.size()) continue;
    uint64_t sum = 0;
    for (uint64_t b : blocks) sum = sum > UINT64_MAX - b ? UINT64_MAX : sum + b;
    if (sum < best_sum) best = name, best_blocks = std::move(blocks), best_sum = sum;
  }
  f.bucket_kernel = std::move(best);
  f.bucket_blocks = std::move(best_blocks);
}

// The bucket kernel's eager launches after the captures at sizes no member
// has (LedgerFamily::uncaptured).
void uncaptured_sizes(LedgerFamily& f, const AttachWork& w) {
  if (f.bucket_kernel.empty() || !w.captures_end_s) return;
  const std::set<uint64_t> members(f.bucket_blocks.begin(), f.bucket_blocks.end());
  std::map<uint64_t, uint64_t> sizes;
  for (const AttachWork::Group& g : w.eager) {
    if (g.kind != "kernel" || g.name != f.bucket_kernel || !g.launches_after_captures || !g.grid[0]) continue;
    const uint64_t blocks = uint64_t(g.grid[0]) * g.grid[1] * g.grid[2];
    if (!members.count(blocks)) sizes[blocks] += g.launches_after_captures;
  }
  f.uncaptured.assign(sizes.begin(), sizes.end());
  std::stable_sort(f.uncaptured.begin(), f.uncaptured.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
}

// The process's GPU work for the ledger: eager groups by kind and name, the
// largest first, each with a graph node that runs the same kernel.
LedgerWork work_of(const AttachWork& w, const std::map<std::string, LedgerNodeRef, std::less<>>& node_of) {
  LedgerWork l;
  l.source = w.source;
  l.start_s = w.start_s, l.end_s = w.end_s;
  l.busy_us = w.busy_us, l.graph_us = w.graph_us, l.eager_us = w.eager_us;
  l.graph_records = w.graph_records, l.eager_records = w.eager_records;
  if (w.busy_us > 0) l.in_graph_share = std::min(1.0, w.graph_us / w.busy_us);
  l.captures_end_s = w.captures_end_s;
  std::map<std::pair<std::string_view, std::string_view>, size_t> at;
  std::vector<LedgerEager> all;
  for (const AttachWork::Group& g : w.eager) {
    const auto [it, fresh] = at.emplace(std::make_pair(std::string_view(g.kind), std::string_view(g.name)), all.size());
    if (fresh) {
      LedgerEager e;
      e.kind = g.kind, e.name = g.name;
      if (g.kind == "kernel")
        if (const auto n = node_of.find(g.name); n != node_of.end()) e.graph_node = n->second;
      all.push_back(std::move(e));
    }
    LedgerEager& e = all[it->second];
    e.launches += g.launches;
    e.launches_after_captures += g.launches_after_captures;
    e.gpu_us += g.gpu_us;
    ++e.geometries;
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const LedgerEager& a, const LedgerEager& b) { return a.gpu_us > b.gpu_us; });
  for (size_t i = 0; i < all.size(); ++i) {
    if (i < LedgerWork::kTop) {
      l.top.push_back(std::move(all[i]));
    } else {
      l.rest_launches += all[i].launches;
      l.rest_us += all[i].gpu_us;
    }
  }
  l.rest_launches += w.other_launches;
  l.rest_us += w.other_us;
  l.misstamped_records = w.misstamped_records;
  l.misstamped_us = w.misstamped_us;
  l.bin_s = w.bin_s;
  l.timeline = w.timeline;
  return l;
}

}  // namespace

std::string capture_site(const Graph& g) {
  // The outermost Python frames every node shares (stacks are innermost first).
  const std::vector<SourceFrame>* first = nullptr;
  size_t shared = 0;  // frames shared, counted from the outermost
  bool python = true;
  for (const Node& n : g.nodes) {
    const std::vector<SourceFrame>* s = n.origin ? &n.origin->python : nullptr;
    if (!s || s->empty()) {
      python = false;
      break;
    }
    if (!first) {
      first = s, shared = s->size();
      continue;
    }
    size_t k = 0;
    while (k < shared && k < s->size() && same_frame((*first)[first->size() - 1 - k], (*s)[s->size() - 1 - k])) ++k;
    shared = k;
  }
  if (python && first && shared) {
    // The innermost shared frame that is not generated code.
    for (size_t k = first->size() - shared; k < first->size(); ++k) {
      const SourceFrame& f = (*first)[k];
      if (!generated(f)) return base_name(f.file) + ":" + std::to_string(f.line) + " in " + f.function;
    }
  }
  // NVTX ranges every node shares, outermost first.
  std::vector<std::string> ranges;
  bool any = false;
  for (const Node& n : g.nodes) {
    std::vector<std::string> mine;
    if (n.origin)
      for (const NvtxRange& r : n.origin->nvtx) mine.push_back(r.message);
    if (!any) {
      ranges = mine, any = true;
      continue;
    }
    size_t k = 0;
    while (k < ranges.size() && k < mine.size() && ranges[k] == mine[k]) ++k;
    ranges.resize(k);
  }
  if (!ranges.empty()) {
    std::string s = "NVTX ";
    for (size_t i = 0; i < ranges.size(); ++i) s += (i ? " / " : "") + ranges[i];
    return s;
  }
  // The native function every node shares.
  std::string native;
  for (const Node& n : g.nodes) {
    if (!n.origin || !n.origin->native || n.origin->native->function.empty()) return "";
    if (native.empty()) native = n.origin->native->function;
    else if (native != n.origin->native->function) return "";
  }
  return native;
}

Ledger make_ledger(const std::string& run_dir) {
  RunDirectory dir(run_dir);
  const AttachRun run = dir.read_index();
  Ledger l;
  l.run_dir = run_dir;
  l.command = run.command;
  l.profile = run.profile;
  for (size_t p = 0; p < run.processes.size(); ++p) {
    const AttachRun::Process& proc = run.processes[p];
    const AttachIndex& index = proc.index;
    LedgerProcess lp;
    lp.dir = proc.dir;
    lp.pid = index.pid;
    if (index.rank) lp.rank = index.rank->rank;
    lp.command = index.command_line;
    lp.launches_counted = index.profiling || index.launches_counted;
    lp.launches_missed = index.launches_missed;
    lp.graph_mem_reserved_high = index.graph_mem_reserved_high;
    lp.graph_mem_used_high = index.graph_mem_used_high;
    const AttachWork* work = index.work ? &*index.work : nullptr;
    // The records' replays of each exec graph, where its index entry is
    // its only version (records carry the exec graph's id, not a version).
    std::map<uint32_t, size_t> versions;
    for (const AttachedGraph& a : index.graphs) ++versions[a.exec_graph_id];
    std::map<uint32_t, const AttachWork::GraphTime*> times;
    if (work)
      for (const AttachWork::GraphTime& t : work->graphs) times[t.exec_graph_id] = &t;
    std::map<std::string, size_t> shapes;  // shape_key -> first graph with it
    std::vector<GraphKernels> uses;        // per graph
    std::vector<CodeFrames> code;          // per graph
    std::map<std::string, LedgerNodeRef, std::less<>> node_of;  // per kernel name, the first node with an origin
    for (size_t i = 0; i < index.graphs.size(); ++i) {
      const AttachedGraph& a = index.graphs[i];
      const RunFile file = dir.resolve(run, p, i, RunName::file);
      const GraphDocument doc = parse_graph(dir.read(file), file.path);
      LedgerGraph g;
      g.exec_graph_id = a.exec_graph_id;
      g.version = a.version;
      g.file = a.file;
      g.nodes = doc.root.nodes.size();
      GraphKernels& use = uses.emplace_back();
      CodeFrames& frames = code.emplace_back();
      for (const Node& n : doc.root.nodes) {
        if (n.origin)
          for (const SourceFrame& f : n.origin->python) frames.insert({f.file, f.line});
        if (n.mem_alloc) g.alloc_bytes += n.mem_alloc->bytes;
        if (n.type != NodeType::kernel) continue;
        ++g.kernels;
        KernelUse& k = use[n.kernel_name];
        ++k.nodes;
        if (n.kernel && n.kernel->geometry_known) {
          const KernelInfo& x = *n.kernel;
          k.geometries.insert({x.grid.x, x.grid.y, x.grid.z, x.block.x, x.block.y, x.block.z});
        }
        if (n.origin && !node_of.count(n.kernel_name))
          if (std::string o = node_origin(*n.origin); !o.empty())
            node_of.emplace(n.kernel_name, LedgerNodeRef{lp.graphs.size(), n.index, std::move(o)});
      }
      g.site = capture_site(doc.root);
      if (lp.launches_counted) g.launches = a.launches;
      if (a.profiled) g.makespan_us = a.makespan_us;
      g.created_s = a.created_s;
      g.capture_ms = a.capture_ms;
      g.instantiate_ms = a.instantiate_ms;
      g.uploads = a.uploads;
      g.upload_ms = a.upload_ms;
      g.capture_alloc_bytes = a.capture_alloc_bytes;
      g.first_launch_s = a.first_launch_s;
      g.last_launch_s = a.last_launch_s;
      const auto t = versions[a.exec_graph_id] == 1 ? times.find(a.exec_graph_id) : times.end();
      if (t != times.end()) {
        g.replays = t->second->replays;
        g.replay_gpu_us = t->second->gpu_us;
        g.replay_gpu_from = "records";
        if (!g.first_launch_s && t->second->replays) {
          g.first_launch_s = t->second->first_s;
          g.last_launch_s = t->second->last_s;
        }
      } else if (g.makespan_us && g.launches) {
        g.replay_gpu_us = *g.makespan_us * double(*g.launches);
        g.replay_gpu_from = "launches x median makespan";
      }
      if (g.launches) g.replayed = *g.launches > 0;
      else if (work && versions[a.exec_graph_id] == 1) g.replayed = g.replays.value_or(0) > 0;
      // Exec graphs alike (a version of one exec graph is not another graph).
      if (a.version <= 1) {
        const auto [it, fresh] = shapes.emplace(shape_key(doc.root), lp.graphs.size());
        if (!fresh && g.nodes) g.identical_to = it->second;
      }
      // The process's totals.
      auto add = [](auto& total, const auto& v) {
        if (v) total = total.value_or(0) + *v;
      };
      add(lp.capture_ms, g.capture_ms);
      add(lp.instantiate_ms, g.instantiate_ms);
      add(lp.capture_alloc_bytes, g.capture_alloc_bytes);
      lp.uploads += g.uploads;
      lp.upload_ms += g.upload_ms;
      lp.alloc_bytes += g.alloc_bytes;
      lp.graphs.push_back(std::move(g));
    }
    // Families: two or more graphs captured at one place, in index order.
    std::map<std::string, size_t> family_of;
    for (size_t i = 0; i < lp.graphs.size(); ++i) {
      const LedgerGraph& g = lp.graphs[i];
      if (g.site.empty() || g.version > 1) continue;
      auto [it, fresh] = family_of.emplace(g.site, lp.families.size());
      if (fresh) {
        LedgerFamily f;
        f.site = g.site;
        lp.families.push_back(std::move(f));
      }
      lp.families[it->second].graphs.push_back(i);
    }
    lp.families.erase(std::remove_if(lp.families.begin(), lp.families.end(),
                                     [](const LedgerFamily& f) { return f.graphs.size() < 2; }),
                      lp.families.end());
    for (LedgerFamily& f : lp.families) {
      for (size_t i : f.graphs) {
        const LedgerGraph& g = lp.graphs[i];
        if (g.identical_to) f.identical.push_back(i);
        if (g.replayed != false) continue;
        f.never_replayed.push_back(i);
        f.never_replayed_capture_ms += g.capture_ms.value_or(0);
        f.never_replayed_bytes += g.alloc_bytes + g.capture_alloc_bytes.value_or(0);
      }
      if (work) f.fallback = fallback_of(f, uses, *work);
      bucket_key(f, uses);
      if (work) uncaptured_sizes(f, *work);
      // Each member against the one before it (files read again: a run's
      // documents are not all kept in memory).
      std::optional<GraphDocument> before;
      for (size_t k = 0; k < f.graphs.size() && f.recaptures.size() < LedgerFamily::kRecaptures; ++k) {
        const RunFile file = dir.resolve(run, p, f.graphs[k], RunName::file);
        GraphDocument doc = parse_graph(dir.read(file), file.path);
        if (before) f.recaptures.push_back(recapture_of(*before, doc, f.graphs[k - 1], f.graphs[k]));
        before = std::move(doc);
      }
    }
    // Exec graphs' versions, each against the one before it.
    {
      std::map<uint32_t, uint64_t> unchanged, unrecorded;
      std::map<uint32_t, size_t> last;  // exec graph id -> its latest version so far
      std::optional<GraphDocument> before;
      size_t before_i = SIZE_MAX;
      for (size_t i = 0; i < index.graphs.size(); ++i) {
        const AttachedGraph& a = index.graphs[i];
        if (a.unchanged_updates) unchanged[a.exec_graph_id] += a.unchanged_updates;
        if (a.updates_not_recorded) unrecorded[a.exec_graph_id] += a.updates_not_recorded;
        const auto prev = last.find(a.exec_graph_id);
        const bool versioned = a.version > 1 && prev != last.end();
        if (versioned && lp.updates.size() < LedgerProcess::kUpdates) {
          auto read = [&](size_t g) {
            const RunFile file = dir.resolve(run, p, g, RunName::file);
            return parse_graph(dir.read(file), file.path);
          };
          if (before_i != prev->second) before = read(prev->second);
          GraphDocument doc = read(i);
          LedgerUpdate u;
          u.diff = recapture_of(*before, doc, prev->second, i);
          u.updated_by = a.updated_by;
          u.not_recorded = a.not_recorded;
          lp.updates.push_back(std::move(u));
          before = std::move(doc), before_i = i;
        }
        last[a.exec_graph_id] = i;
      }
      lp.unchanged_updates.assign(unchanged.begin(), unchanged.end());
      lp.updates_not_recorded.assign(unrecorded.begin(), unrecorded.end());
    }
    // Liveness findings and refused updates, their nodes said from the documents.
    {
      std::map<size_t, GraphDocument> read;
      why_of(index, [&](size_t g) -> const GraphDocument& {
        auto it = read.find(g);
        if (it != read.end()) return it->second;
        const RunFile file = dir.resolve(run, p, g, RunName::file);
        return read.emplace(g, parse_graph(dir.read(file), file.path)).first->second;
      }, lp);
    }
    if (work) {
      lp.work = work_of(*work, node_of);
      sites_of(*work, *lp.work, lp.families, code);
    }
    // PyTorch's own records of its CUDA graphs, where the Python hook kept
    // them (read through the run directory's resolver, as every file).
    if (!index.torch_log.empty() && index.attached_monotonic_s) {
      const RunFile f = dir.resolve_in_process(run, p, index.torch_log, "torch_log");
      lp.torch = ledger_torch(read_torch_log(dir.read(f), f.path, *index.attached_monotonic_s), lp);
    }
    // What the index does not hold, said once per process. An index of a
    // release before the ledger's is told by its launches not being
    // counted in every run.
    if (!lp.graphs.empty()) {
      const bool before = !index.launches_counted;
      const std::string older = before ? "a release before the ledger; " : "";
      bool costs = false;
      for (const LedgerGraph& g : lp.graphs) costs = costs || g.created_s || g.capture_ms || g.instantiate_ms;
      if (!lp.launches_counted)
        lp.not_recorded.push_back("launches: not counted (a release before the ledger, whose capture --exec did "
                                  "not count them)");
      if (!costs && !lp.graph_mem_reserved_high)
        lp.not_recorded.push_back("capture, instantiate and upload times, memory allocated while capturing, graph "
                                  "memory high-water marks: not recorded" +
                                  std::string(before ? " (a release before the ledger)" : ""));
      else if (!costs)
        lp.not_recorded.push_back("capture, instantiate and upload times, memory allocated while capturing: not "
                                  "recorded");
      else if (!lp.graph_mem_reserved_high)
        lp.not_recorded.push_back("graph memory high-water marks: not recorded (read when the process exits)");
      if (!work)
        lp.not_recorded.push_back("GPU work outside graphs: not recorded (" + older +
                                  "profile --exec records it; capture --exec --eager)");
      else if (!work->captures_end_s && !lp.families.empty())
        lp.not_recorded.push_back("fallbacks: not estimated (the index does not say when the captures ended)");
    }
    l.processes.push_back(std::move(lp));
  }
  return l;
}

namespace {

void indices(JsonWriter& w, const char* key, const std::vector<size_t>& v) {
  w.key(key).begin_array();
  for (size_t i : v) w.value(uint64_t(i));
  w.end_array();
}

void fallback_json(JsonWriter& w, const LedgerFallback& f) {
  w.key("fallback").begin_object();
  w.key("runs").value(f.runs);
  w.key("at_member_geometry").value(f.at_member_geometry).key("at_other_geometry").value(f.at_other_geometry);
  w.key("by_member").begin_array();
  for (const auto& [graph, runs] : f.by_member)
    w.begin_object().key("graph").value(uint64_t(graph)).key("runs").value(runs).end_object();
  w.end_array();
  if (!f.from.empty()) {
    w.key("from").begin_array();
    for (const LedgerFallback::From& x : f.from) {
      w.begin_object().key("call").value(x.call).key("launches").value(x.launches);
      w.key("launches_after_captures").value(x.launches_after_captures).key("gpu_us").value(x.gpu_us).end_object();
    }
    w.end_array();
  }
  w.key("kernels").begin_array();
  for (const LedgerFallbackKernel& k : f.kernels) {
    w.begin_object().key("name").value(k.name).key("per_graph").value(k.per_graph).key("eager").value(k.eager);
    w.key("at_member_geometry").value(k.at_member_geometry).key("at_other_geometry").value(k.at_other_geometry);
    w.key("tells_apart").value(k.tells_apart).end_object();
  }
  w.end_array();
  w.end_object();
}

void work_json(JsonWriter& w, const LedgerWork& k) {
  w.key("work").begin_object();
  w.key("source").value(k.source).key("start_s").value(k.start_s).key("end_s").value(k.end_s);
  w.key("busy_us").value(k.busy_us).key("graph_us").value(k.graph_us).key("eager_us").value(k.eager_us);
  w.key("graph_records").value(k.graph_records).key("eager_records").value(k.eager_records);
  if (k.in_graph_share) w.key("in_graph_share").value(*k.in_graph_share);
  if (k.captures_end_s) w.key("captures_end_s").value(*k.captures_end_s);
  if (k.misstamped_records)
    w.key("misstamped_records").value(k.misstamped_records).key("misstamped_us").value(k.misstamped_us);
  w.key("top").begin_array();
  for (const LedgerEager& e : k.top) {
    w.begin_object().key("kind").value(e.kind).key("name").value(e.name);
    w.key("launches").value(e.launches).key("launches_after_captures").value(e.launches_after_captures);
    w.key("gpu_us").value(e.gpu_us).key("geometries").value(uint64_t(e.geometries));
    if (const auto& n = e.graph_node) {
      w.key("graph_node").begin_object().key("graph").value(uint64_t(n->graph)).key("node").value(n->node);
      w.key("origin").value(n->origin).end_object();
    }
    w.end_object();
  }
  w.end_array();
  w.key("rest_launches").value(k.rest_launches).key("rest_us").value(k.rest_us);
  if (k.sites_read) {
    w.key("sites").begin_array();
    for (const LedgerSite& x : k.sites) {
      w.begin_object().key("where").value(x.where);
      if (!x.callers.empty()) {
        w.key("callers").begin_array();
        for (const std::string& c : x.callers) w.value(c);
        w.end_array();
      }
      if (!x.module.empty()) w.key("module").value(x.module);
      if (!x.nvtx.empty()) w.key("nvtx").value(x.nvtx);
      w.key("launches").value(x.launches).key("launches_after_captures").value(x.launches_after_captures);
      w.key("gpu_us").value(x.gpu_us);
      if (!x.top.empty()) w.key("top").value(x.top);
      if (x.family) w.key("family").value(uint64_t(*x.family));
      w.end_object();
    }
    w.end_array();
    w.key("sites_rest_launches").value(k.sites_rest_launches).key("sites_rest_us").value(k.sites_rest_us);
    w.key("unsited_launches").value(k.unsited_launches).key("unsited_us").value(k.unsited_us);
  }
  w.key("bin_s").value(k.bin_s).key("timeline").begin_array();
  for (const AttachWork::Bin& b : k.timeline) w.begin_array().value(b.graph_us).value(b.eager_us).end_array();
  w.end_array();
  w.end_object();
}

}  // namespace

std::string write_ledger_json(const Ledger& l) {
  JsonWriter w(3);
  w.begin_object();
  w.key("schema").value("graphscope.ledger/1");
  w.key("graphscope_version").value(GRAPHSCOPE_VERSION);
  w.key("run_dir").value(l.run_dir);
  auto strings = [&](const char* key, const std::vector<std::string>& v) {
    w.key(key).begin_array();
    for (const std::string& a : v) w.value(a);
    w.end_array();
  };
  strings("command", l.command);
  w.key("profile").value(l.profile);
  w.key("processes").begin_array();
  for (const LedgerProcess& p : l.processes) {
    w.begin_object();
    w.key("dir").value(p.dir).key("pid").value(p.pid);
    if (p.rank) w.key("rank").value(*p.rank);
    strings("command", p.command);
    w.key("launches_counted").value(p.launches_counted);
    w.key("graphs").begin_array();
    for (const LedgerGraph& g : p.graphs) {
      w.begin_object();
      w.key("exec_graph_id").value(g.exec_graph_id).key("version").value(g.version).key("file").value(g.file);
      w.key("nodes").value(g.nodes).key("kernels").value(g.kernels).key("alloc_bytes").value(g.alloc_bytes);
      w.key("site").value(g.site);
      if (g.launches) w.key("launches").value(*g.launches);
      if (g.makespan_us) w.key("makespan_us").value(*g.makespan_us);
      if (g.identical_to) w.key("identical_to").value(uint64_t(*g.identical_to));
      if (g.created_s) w.key("created_s").value(*g.created_s);
      if (g.capture_ms) w.key("capture_ms").value(*g.capture_ms);
      if (g.instantiate_ms) w.key("instantiate_ms").value(*g.instantiate_ms);
      if (g.uploads) w.key("uploads").value(g.uploads).key("upload_ms").value(g.upload_ms);
      if (g.capture_alloc_bytes) w.key("capture_alloc_bytes").value(*g.capture_alloc_bytes);
      if (g.first_launch_s) w.key("first_launch_s").value(*g.first_launch_s);
      if (g.last_launch_s) w.key("last_launch_s").value(*g.last_launch_s);
      if (g.replays) w.key("replays").value(*g.replays);
      if (g.replay_gpu_us)
        w.key("replay_gpu_us").value(*g.replay_gpu_us).key("replay_gpu_from").value(g.replay_gpu_from);
      if (g.replayed) w.key("replayed").value(*g.replayed);
      w.end_object();
    }
    w.end_array();
    w.key("families").begin_array();
    for (const LedgerFamily& f : p.families) {
      w.begin_object().key("site").value(f.site);
      indices(w, "graphs", f.graphs);
      indices(w, "never_replayed", f.never_replayed);
      w.key("never_replayed_capture_ms").value(f.never_replayed_capture_ms);
      w.key("never_replayed_bytes").value(f.never_replayed_bytes);
      indices(w, "identical", f.identical);
      if (!f.bucket_kernel.empty()) {
        w.key("bucket_kernel").value(f.bucket_kernel).key("bucket_blocks").begin_array();
        for (uint64_t b : f.bucket_blocks) w.value(b);
        w.end_array();
        if (!f.uncaptured.empty()) {
          w.key("uncaptured").begin_array();
          for (const auto& [blocks, launches] : f.uncaptured)
            w.begin_object().key("blocks").value(blocks).key("launches").value(launches).end_object();
          w.end_array();
        }
      }
      write_recaptures(w, f);
      if (f.fallback) fallback_json(w, *f.fallback);
      w.end_object();
    }
    w.end_array();
    write_updates(w, p);
    write_why(w, p);
    if (!p.launches_missed.empty()) w.key("launches_missed").value(p.launches_missed);
    w.key("costs").begin_object();
    if (p.capture_ms) w.key("capture_ms").value(*p.capture_ms);
    if (p.instantiate_ms) w.key("instantiate_ms").value(*p.instantiate_ms);
    w.key("uploads").value(p.uploads).key("upload_ms").value(p.upload_ms);
    if (p.capture_alloc_bytes) w.key("capture_alloc_bytes").value(*p.capture_alloc_bytes);
    w.key("alloc_bytes").value(p.alloc_bytes);
    if (p.graph_mem_reserved_high) w.key("graph_mem_reserved_high").value(*p.graph_mem_reserved_high);
    if (p.graph_mem_used_high) w.key("graph_mem_used_high").value(*p.graph_mem_used_high);
    w.end_object();
    if (p.work) work_json(w, *p.work);
    if (p.torch) write_ledger_torch(w, *p.torch);
    strings("not_recorded", p.not_recorded);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return std::string(w.view()) + "\n";
}

}  // namespace graphscope
