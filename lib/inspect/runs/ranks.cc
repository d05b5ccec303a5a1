#include "ranks.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "../model/collective.h"
#include "../core/demangle.h"
#include "../core/error.h"
#include "../core/hash.h"
#include "../formats/load.h"
#include "../formats/profile_json.h"
#include "run_dir.h"
#include "../core/stats.h"
#include "../core/text.h"

namespace graphscope {

bool RankRow::same() const {
  return std::all_of(ranks.begin(), ranks.end(), [](const RankMatch& m) { return m.same; });
}

bool RanksResult::same() const {
  return std::all_of(rows.begin(), rows.end(), [](const RankRow& r) { return r.same(); });
}

namespace {

double collective_us(const ProfileDocument& p) {
  double us = 0;
  for (size_t i = 0; i < p.report.nodes.size() && i < p.nodes.size(); ++i) {
    const NodeProfile& n = p.report.nodes[i];
    if (n.replays && is_collective_kernel(p.nodes[i].kernel_name) && n.end_us > n.start_us) us += n.end_us - n.start_us;
  }
  return us;
}

// What one command reads from the run directory: every name through the
// one resolver (run_dir.h), each trace parsed once, and what is made of
// each profile file and each trace once, however many entries name them
// (an index may name one file thousands of times).
struct Reading {
  const RunDirectory& dir;
  RunTraces& traces;
  std::map<std::string, double> collective_us;                     // by the profile's real path
  std::map<const Trace*, std::vector<uint64_t>> collective_starts;  // of each trace, sorted
};

RankProcess load_rank(const AttachRun& run, size_t process, Reading& in, bool& profiled) {
  const AttachRun::Process& p = run.processes[process];
  const AttachIndex& x = p.index;
  RankProcess r;
  r.rank = x.rank->rank;
  r.local_rank = x.rank->local_rank;
  r.world_size = x.rank->world_size;
  r.source = x.rank->source;
  r.pid = x.pid;
  r.dir = p.dir;
  if (x.device) {
    r.device = x.device->ordinal;
    r.device_name = x.device->name;
    r.pci_bus_id = x.device->pci_bus_id;
  }
  // The current versions, in capture order (an updated exec graph's older
  // versions are superseded: the job runs the last one).
  for (size_t i = 0; i < x.graphs.size(); ++i) {
    const AttachedGraph& a = x.graphs[i];
    if (a.superseded) continue;
    RankGraph g;
    g.exec_graph_id = a.exec_graph_id;
    g.version = a.version;
    g.file = r.dir + "/" + a.file;
    const RunFile file = in.dir.resolve(run, process, i, RunName::file);
    g.doc = parse_graph(in.dir.read(file), file.path);
    g.nodes = g.doc.root.nodes.size();
    g.collectives = count_collectives(g.doc.root);
    if (a.profiled) {
      RankProfile q;
      q.launches = a.launches;
      q.makespan_us = a.makespan_us;
      q.critical_path_us = a.critical_path_us;
      q.fake = a.fake;
      q.blocking = a.blocking;
      const RunFile profile = in.dir.resolve(run, process, i, RunName::profile);
      auto [us, fresh] = in.collective_us.try_emplace(profile.real, 0.0);
      if (fresh) us->second = collective_us(read_profile_json(in.dir.read(profile), profile.path));
      q.collective_us = us->second;
      // A trace that leaves the run directory or is no regular file is bad
      // input; one that cannot be read or parsed only costs the waits.
      const RunFile trace = in.dir.resolve(run, process, i, RunName::trace);
      q.trace_file = r.dir + "/" + a.trace_file;
      try {
        q.trace = in.traces.get(trace);
      } catch (const Error& e) {
        q.trace_error = e.what();
      }
      g.profile = q;
      profiled = true;
    }
    r.graphs.push_back(std::move(g));
  }
  return r;
}

// A cheap key that equal graphs share: node count and the multiset of node
// kinds with their dependency counts. Equal keys are confirmed by diff.
uint64_t structure_key(const Graph& g) {
  uint64_t sum = 0;
  for (const Node& n : g.nodes)
    sum += hash_mix(hash_text(n.kernel_name) ^ (uint64_t(n.type) << 48) ^ (uint64_t(n.dependencies.size()) << 32) ^
                    uint64_t(n.bodies.size()));
  return hash_mix(sum ^ g.nodes.size());
}

std::string kind_text(const NodeKind& k) {
  switch (k.type) {
    case NodeType::kernel: return short_kernel_name(k.name, 60);
    case NodeType::conditional: return "conditional " + k.name;
    case NodeType::unknown: return k.name.empty() ? std::string("unknown") : k.name;
    default: return std::string(to_string(k.type));
  }
}

template <typename T, typename F>
std::string listed(const std::vector<T>& v, F index) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < 5; ++i) s += (i ? ", " : "") + std::to_string(index(v[i]));
  if (v.size() > 5) s += ", ...";
  return s;
}

}  // namespace

std::vector<std::string> rank_diff_lines(const GraphDiff& d) {
  std::vector<std::string> out;
  const StructureDiff& s = d.root;
  auto nodes = [](size_t n) { return std::string(n == 1 ? " node " : " nodes "); };
  for (const NodeGroup& g : s.added)
    out.push_back("+" + std::to_string(g.nodes.size()) + nodes(g.nodes.size()) +
                  listed(g.nodes, [](uint32_t i) { return i; }) + " " + kind_text(g.kind));
  for (const NodeGroup& g : s.removed)
    out.push_back("-" + std::to_string(g.nodes.size()) + nodes(g.nodes.size()) +
                  listed(g.nodes, [](uint32_t i) { return i; }) + " " + kind_text(g.kind));
  for (const ChangeGroup& g : s.changed) {
    std::string fields;
    for (const FieldChange& f : g.changes) fields += (fields.empty() ? "" : ", ") + f.field + " " + f.a + " -> " + f.b;
    out.push_back("~" + std::to_string(g.nodes.size()) + nodes(g.nodes.size()) +
                  listed(g.nodes, [](const auto& p) { return p.second; }) + " " + kind_text(g.kind) + ": " + fields);
  }
  auto edges = [&](const std::vector<EdgeGroup>& v, const char* sign, const char* what) {
    size_t n = 0;
    for (const EdgeGroup& g : v) n += g.edges.size();
    if (n) out.push_back(sign + plural(n, "edge", "edges") + what);
  };
  edges(s.added_edges, "+", " between matched nodes");
  edges(s.removed_edges, "-", " between matched nodes");
  edges(s.retyped_edges, "~", " retyped");
  if (!s.nested.empty()) out.push_back(plural(s.nested.size(), "nested body differs", "nested bodies differ"));
  if (out.empty() && !s.same()) out.push_back("depth or width differs");
  return out;
}

// The waits at collectives of one row whose graphs every rank profiled:
// the k-th collective kernel of each rank's trace (by start) is one
// collective; the ranks that started it before the last one waited.
static void collective_waits(RanksResult& r, RankRow& row, Reading& in) {
  std::vector<RankProfile*> profs;
  std::vector<const std::vector<uint64_t>*> starts;
  for (const RankMatch& m : row.ranks) {
    if (!m.graph) return;
    RankGraph& g = r.ranks[m.rank].graphs[*m.graph];
    if (!g.profile || !g.profile->trace) return;  // no waits without the trace; the rest of the report stands
    const Trace& t = *g.profile->trace;
    auto [s, fresh] = in.collective_starts.try_emplace(&t);
    if (fresh) {
      for (const Activity& a : t.activities)
        if (a.kind == ActivityKind::kernel && a.name < t.names.size() && is_collective_kernel(t.names[a.name]))
          s->second.push_back(a.start_ns);
      std::sort(s->second.begin(), s->second.end());
    }
    if (s->second.empty() || (!starts.empty() && s->second.size() != starts[0]->size())) return;
    profs.push_back(&*g.profile);
    starts.push_back(&s->second);
  }
  const size_t n = starts.empty() ? 0 : starts[0]->size();
  std::vector<std::vector<double>> waited(profs.size());
  for (size_t k = 0; k < n; ++k) {
    uint64_t last = 0;
    for (const auto* s : starts) last = std::max(last, (*s)[k]);
    for (size_t i = 0; i < profs.size(); ++i) {
      waited[i].push_back(double(last - (*starts[i])[k]) / 1000.0);
      if ((*starts[i])[k] == last) ++profs[i]->arrived_last;
    }
  }
  for (size_t i = 0; i < profs.size(); ++i) {
    profs[i]->collectives_timed = n;
    profs[i]->collective_wait_us = median(waited[i]);
  }
}

RanksResult compare_ranks(const AttachRun& run, const RunDirectory& dir, RunTraces& traces) {
  const std::string& run_dir = dir.dir();
  RanksResult r;
  r.run_dir = run_dir;
  std::vector<const AttachRun::Process*> ranked;
  for (const auto& p : run.processes) {
    if (p.index.rank) ranked.push_back(&p);
    else if (!p.index.graphs.empty())  // a launcher without graphs (torchrun's agent) needs no word
      r.notes.push_back("pid " + std::to_string(p.index.pid) + " (" + p.dir + ") has no rank: its graphs are left out");
  }
  if (ranked.size() < 2)
    throw Error(ExitCode::bad_input, run_dir,
                std::to_string(ranked.size()) + " ranked process" + (ranked.size() == 1 ? "" : "es") +
                    "; ranks needs two or more: run the job under torchrun, mpirun or srun with --exec");
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto* a, const auto* b) { return a->index.rank->rank < b->index.rank->rank; });
  for (size_t i = 1; i < ranked.size(); ++i)
    if (ranked[i]->index.rank->rank == ranked[i - 1]->index.rank->rank)
      r.notes.push_back("rank " + std::to_string(ranked[i]->index.rank->rank) + " is held by pid " +
                        std::to_string(ranked[i - 1]->index.pid) + " and pid " + std::to_string(ranked[i]->index.pid) +
                        " (a forked worker that inherited it?): both are compared");
  Reading in{dir, traces, {}, {}};
  for (const auto* p : ranked) r.ranks.push_back(load_rank(run, size_t(p - run.processes.data()), in, r.profiled));

  const std::vector<RankGraph>& ref = r.ranks[0].graphs;
  std::vector<uint64_t> ref_keys;
  for (const auto& g : ref) ref_keys.push_back(structure_key(g.doc.root));
  for (size_t k = 0; k < ref.size(); ++k) {
    RankRow row;
    row.reference = k;
    row.ranks.push_back({0, k, "", true, {}, std::nullopt});
    r.rows.push_back(std::move(row));
  }
  for (size_t ri = 1; ri < r.ranks.size(); ++ri) {
    const std::vector<RankGraph>& gs = r.ranks[ri].graphs;
    std::vector<uint64_t> keys;
    for (const auto& g : gs) keys.push_back(structure_key(g.doc.root));
    std::vector<std::optional<size_t>> partner(ref.size());
    std::vector<std::string> how(ref.size());
    std::vector<bool> used(gs.size(), false);
    auto equal = [&](size_t i, size_t j) {
      return ref_keys[i] == keys[j] && diff_graphs(ref[i].doc, gs[j].doc).same();
    };
    auto pair = [&](size_t i, size_t j, const char* by) {
      partner[i] = j, how[i] = by, used[j] = true;
    };
    // Same place, same structure; then the same structure elsewhere (the
    // orders differ); then what is left, by place, to be diffed.
    for (size_t k = 0; k < ref.size() && k < gs.size(); ++k)
      if (equal(k, k)) pair(k, k, "order");
    for (size_t i = 0; i < ref.size(); ++i)
      for (size_t j = 0; j < gs.size() && !partner[i]; ++j)
        if (!used[j] && equal(i, j)) pair(i, j, "structure");
    for (size_t k = 0; k < ref.size() && k < gs.size(); ++k)
      if (!partner[k] && !used[k]) pair(k, k, "order");
    size_t j = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
      if (partner[i]) continue;
      while (j < gs.size() && used[j]) ++j;
      if (j < gs.size()) pair(i, j, "order");
    }
    for (size_t i = 0; i < ref.size(); ++i) {
      RankMatch m;
      m.rank = ri;
      m.graph = partner[i];
      m.paired_by = how[i];
      if (!partner[i]) {
        m.same = false;
        m.lines.push_back("has no such graph (" + plural(gs.size(), "graph", "graphs") + " against " +
                          std::to_string(ref.size()) + ")");
      } else {
        const RankGraph& b = gs[*partner[i]];
        GraphDiff d = diff_graphs(ref[i].doc, b.doc);
        if (!d.same()) {
          m.same = false;
          m.lines = rank_diff_lines(d);
          m.diff = std::move(d);
        }
      }
      r.rows[i].ranks.push_back(std::move(m));
    }
    for (size_t g = 0; g < gs.size(); ++g) {
      if (used[g]) continue;
      RankRow row;  // a graph only this rank has
      for (size_t o = 0; o < r.ranks.size(); ++o) {
        RankMatch m;
        m.rank = o;
        if (o == ri) {
          m.graph = g;
          m.same = false;
          m.lines.push_back("an extra graph, not in rank " + std::to_string(r.ranks[0].rank));
        }
        row.ranks.push_back(std::move(m));
      }
      r.rows.push_back(std::move(row));
    }
  }
  if (r.profiled)
    for (RankRow& row : r.rows) collective_waits(r, row, in);
  return r;
}

RanksResult compare_ranks(const AttachRun& run, const std::string& run_dir) {
  RunDirectory dir(run_dir);
  RunTraces traces(dir);
  return compare_ranks(run, dir, traces);
}

RanksResult compare_ranks(const std::string& run_dir) {
  RunDirectory dir(run_dir);
  RunTraces traces(dir);
  return compare_ranks(dir.read_index(), dir, traces);
}

std::string ranks_summary_line(const AttachRun& run, const std::string& run_dir) {
  size_t ranked = 0;
  for (const auto& p : run.processes) ranked += p.index.rank.has_value();
  if (ranked < 2) return {};
  try {
    RanksResult r = compare_ranks(run, run_dir);
    size_t differ = 0;
    for (const auto& row : r.rows) differ += !row.same();
    if (!differ)
      return "ranks: all " + std::to_string(r.ranks.size()) + " ranks agree on " +
             plural(r.rows.size(), "graph", "graphs") + " (details: graphscope ranks " + run_dir + ")";
    return "ranks: " + plural(differ, "graph differs", "graphs differ") + " across " + std::to_string(r.ranks.size()) +
           " ranks: see graphscope ranks " + run_dir;
  } catch (const std::exception& e) {
    return "ranks: " + std::to_string(ranked) + " ranked processes; not compared (" + e.what() +
           "): graphscope ranks " + run_dir;
  }
}

}  // namespace graphscope
