#include "ranks.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "../model/collective.h"
#include "../model/origin_view.h"
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

// The collective kernels of one graph in one trace, by replay: the records
// of the graph (its exec graph id, where records carry one) grouped by the
// launch that ran them (correlation id), each replay's in start order,
// replays in the order they started.
struct TracedCollective {
  uint64_t start_ns = 0;
  uint32_t name = 0;  // index into the trace's names
  std::optional<uint64_t> graph_node_id;
};
using TracedReplays = std::vector<std::vector<TracedCollective>>;

TracedReplays traced_collectives(const Trace& t, uint32_t exec_graph_id, size_t per_replay) {
  std::vector<std::pair<uint32_t, TracedCollective>> found;  // (correlation, record)
  bool correlated = true;
  for (const Activity& a : t.activities) {
    if (a.kind != ActivityKind::kernel || a.name >= t.names.size() || !is_collective_kernel(t.names[a.name])) continue;
    if (a.graph_id && *a.graph_id != exec_graph_id) continue;
    correlated = correlated && a.correlation != 0;
    found.push_back({a.correlation, {a.start_ns, a.name, a.graph_node_id}});
  }
  std::stable_sort(found.begin(), found.end(), [](const auto& x, const auto& y) {
    return x.second.start_ns < y.second.start_ns;
  });
  TracedReplays out;
  if (correlated) {
    std::map<uint32_t, size_t> replay_of;  // correlation -> replay, in order of first start
    for (const auto& [c, rec] : found) {
      auto [it, fresh] = replay_of.try_emplace(c, out.size());
      if (fresh) out.emplace_back();
      out[it->second].push_back(rec);
    }
  } else if (per_replay) {  // no launch to group by: as many per replay as the graph has
    for (size_t i = 0; i < found.size(); ++i) {
      if (i % per_replay == 0) out.emplace_back();
      out.back().push_back(found[i].second);
    }
  }
  return out;
}

// What one command reads from the run directory: every name through the
// one resolver (run_dir.h), each trace parsed once, and what is made of
// each profile file and each trace once, however many entries name them
// (an index may name one file thousands of times).
struct Reading {
  const RunDirectory& dir;
  RunTraces& traces;
  std::map<std::string, double> collective_us;  // by the profile's real path
  std::map<std::pair<const Trace*, uint32_t>, TracedReplays> collectives;  // by trace and exec graph id
};

// One line of where node v of g came from (origin_view.h, as diff says
// it): op and module, else the Python frame, NVTX ranges or native function.
std::string origin_line(const Graph& g, uint32_t v) { return shared_origin(g, {v}); }

std::string node_name(const Node& n) {
  if (n.type == NodeType::kernel) return short_kernel_name(demangle(n.kernel_name), 60);
  return std::string(to_string(n.type));
}

RankNode rank_node(const Graph& g, uint32_t v) {
  if (v >= g.nodes.size()) return {v, "?", ""};
  return {v, node_name(g.nodes[v]), origin_line(g, v)};
}

// The collective kernels of g in capture order; nested ones at the root
// node that holds them.
void list_collectives(const Graph& g, std::optional<uint32_t> holder, std::vector<RankCollective>& out) {
  for (const Node& n : g.nodes) {
    if (n.type == NodeType::kernel && is_collective_kernel(n.kernel_name))
      out.push_back({holder.value_or(n.index), holder.has_value(), n.kernel_name, node_name(n), origin_line(g, n.index)});
    for (const Graph& b : n.bodies) list_collectives(b, holder ? holder : std::optional<uint32_t>(n.index), out);
  }
}

RankProcess load_rank(const AttachRun& run, size_t process, Reading& in, bool& profiled) {
  const AttachRun::Process& p = run.processes[process];
  const AttachIndex& x = p.index;
  RankProcess r;
  r.rank = x.rank->rank;
  r.local_rank = x.rank->local_rank;
  r.world_size = x.rank->world_size;
  r.source = x.rank->source;
  r.pid = x.pid;
  r.process = process;
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
    g.entry = i;
    g.nodes = g.doc.root.nodes.size();
    list_collectives(g.doc.root, std::nullopt, g.collective_kernels);
    g.collectives = g.collective_kernels.size();
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

// A kind as the lines name it; kernels by the diff's KernelNamer (no two
// different kernels of one diff read the same).
std::string kind_text(const NodeKind& k, const KernelNamer& kernels) {
  switch (k.type) {
    case NodeType::kernel: return kernels(k.name);
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
  KernelNamer kernels(64);
  for (const auto* v : {&s.added, &s.removed})
    for (const NodeGroup& g : *v)
      if (g.kind.type == NodeType::kernel) kernels.add(g.kind.name);
  for (const ChangeGroup& g : s.changed)
    if (g.kind.type == NodeType::kernel) kernels.add(g.kind.name);
  // "+1 node 3 NAME (aten::gelu, model.layers.0.mlp)": the origin the nodes share.
  auto of = [](const std::string& origin) { return origin.empty() ? "" : " (" + origin + ")"; };
  for (const NodeGroup& g : s.added)
    out.push_back("+" + std::to_string(g.nodes.size()) + nodes(g.nodes.size()) +
                  listed(g.nodes, [](uint32_t i) { return i; }) + " " + kind_text(g.kind, kernels) + of(g.origin));
  for (const NodeGroup& g : s.removed)
    out.push_back("-" + std::to_string(g.nodes.size()) + nodes(g.nodes.size()) +
                  listed(g.nodes, [](uint32_t i) { return i; }) + " " + kind_text(g.kind, kernels) + of(g.origin));
  for (const ChangeGroup& g : s.changed) {
    std::string fields;
    for (const FieldChange& f : g.changes) fields += (fields.empty() ? "" : ", ") + f.field + " " + f.a + " -> " + f.b;
    out.push_back("~" + std::to_string(g.nodes.size()) + nodes(g.nodes.size()) +
                  listed(g.nodes, [](const auto& p) { return p.second; }) + " " + kind_text(g.kind, kernels) +
                  of(g.origin) + ": " + fields);
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

// The waits at the collectives of one row whose graphs every rank
// profiled: per rank, its trace's collectives of the graph by replay; the
// i-th replay of every rank is one step of the job (the collectives make
// the ranks move together), the k-th collective of it one collective.
static void collective_waits(RanksResult& r, RankRow& row, Reading& in) {
  std::vector<RankProfile*> profs;
  std::vector<const TracedReplays*> traced;
  std::vector<const RankProcess*> who;
  const RankGraph* reference = nullptr;
  const Trace* reference_trace = nullptr;
  for (const RankMatch& m : row.ranks) {
    RankProcess& p = r.ranks[m.rank];
    const std::string name = "rank " + std::to_string(p.rank);
    if (!m.graph) return void(row.waits_note = name + " has no such graph");
    RankGraph& g = p.graphs[*m.graph];
    if (!g.profile) return void(row.waits_note = name + "'s graph was not profiled");
    if (!g.profile->trace) return void(row.waits_note = name + "'s trace: " + g.profile->trace_error);
    const Trace& t = *g.profile->trace;
    auto [c, fresh] = in.collectives.try_emplace({&t, g.exec_graph_id});
    if (fresh) c->second = traced_collectives(t, g.exec_graph_id, g.collectives);
    if (!reference) reference = &g, reference_trace = &t;
    profs.push_back(&*g.profile);
    traced.push_back(&c->second);
    who.push_back(&p);
  }
  // Every rank the same number of replays, each with the same number of
  // collectives; else the pairing would be a guess.
  const TracedReplays& first = *traced[0];
  const size_t per = first.empty() ? 0 : first[0].size();
  if (first.empty() || per == 0) return void(row.waits_note = "rank " + std::to_string(who[0]->rank) +
                                                              "'s trace has no collective kernel of the graph");
  for (size_t i = 0; i < traced.size(); ++i) {
    if (traced[i]->size() != first.size())
      return void(row.waits_note = "rank " + std::to_string(who[i]->rank) + "'s trace has " +
                                   plural(traced[i]->size(), "replay", "replays") + " with collectives, rank " +
                                   std::to_string(who[0]->rank) + "'s " + std::to_string(first.size()));
    for (const auto& rp : *traced[i])
      if (rp.size() != per)
        return void(row.waits_note = "rank " + std::to_string(who[i]->rank) + "'s replays do not all have " +
                                     plural(per, "collective", "collectives"));
  }
  const size_t n = profs.size(), replays = first.size();
  std::map<uint32_t, uint32_t> node_of;  // the reference graph's node ids -> node indices
  for (const Node& v : reference->doc.root.nodes) node_of.emplace(v.node_id, v.index);
  std::vector<std::vector<double>> all(n);  // per rank, every wait
  for (size_t k = 0; k < per; ++k) {
    CollectiveWait cw;
    cw.position = k;
    const TracedCollective& ref = first[0][k];
    cw.name = short_kernel_name(demangle(reference_trace->names[ref.name]), 60);
    if (ref.graph_node_id)
      if (auto it = node_of.find(uint32_t(*ref.graph_node_id)); it != node_of.end()) cw.node = it->second;
    cw.replays = replays;
    cw.arrived_last.assign(n, 0);
    cw.max_wait_us.assign(n, 0);
    std::vector<std::vector<double>> waited(n);
    std::vector<double> skew;
    for (size_t i = 0; i < replays; ++i) {
      uint64_t last = 0, early = UINT64_MAX;
      for (size_t x = 0; x < n; ++x) {
        last = std::max(last, (*traced[x])[i][k].start_ns);
        early = std::min(early, (*traced[x])[i][k].start_ns);
      }
      skew.push_back(double(last - early) / 1000.0);
      for (size_t x = 0; x < n; ++x) {
        const uint64_t start = (*traced[x])[i][k].start_ns;
        const double w = double(last - start) / 1000.0;
        waited[x].push_back(w);
        all[x].push_back(w);
        cw.max_wait_us[x] = std::max(cw.max_wait_us[x], w);
        if (start == last) ++cw.arrived_last[x];
      }
    }
    for (size_t x = 0; x < n; ++x) {
      cw.wait_us.push_back(median(waited[x]));
      if (cw.arrived_last[x] > cw.arrived_last[cw.last]) cw.last = x;
    }
    cw.skew_us = median(skew);
    row.waits.push_back(std::move(cw));
  }
  for (size_t x = 0; x < n; ++x) {
    profs[x]->collectives_timed = per * replays;
    profs[x]->arrived_last = 0;
    for (const CollectiveWait& cw : row.waits) profs[x]->arrived_last += cw.arrived_last[x];
    profs[x]->collective_wait_us = median(all[x]);
  }
}

// Where a differing rank's graph differs first, and where its collectives
// part from the reference's.
static void locate_difference(const RanksResult& r, const RankRow& row, RankMatch& m) {
  const RankGraph* ref = row.reference ? &r.ranks[0].graphs[*row.reference] : nullptr;
  const RankGraph* own = m.graph ? &r.ranks[m.rank].graphs[*m.graph] : nullptr;
  static const std::vector<RankCollective> none;
  const auto& a = ref ? ref->collective_kernels : none;
  const auto& b = own ? own->collective_kernels : none;
  for (size_t k = 0; k < std::max(a.size(), b.size()); ++k)
    if (k >= a.size() || k >= b.size() || a[k].kernel != b[k].kernel) {
      m.collectives_part_at = k;
      break;
    }
  if (!m.diff || !ref || !own) return;
  const StructureDiff& d = m.diff->root;
  std::optional<uint32_t> best;
  auto consider = [&](uint32_t v, const char* side, bool on_own) {
    if (best && *best <= v) return;
    best = v;
    m.first_side = side;
    m.first_node = rank_node(on_own ? own->doc.root : ref->doc.root, v);
  };
  for (const NodeGroup& g : d.added)
    for (uint32_t v : g.nodes) consider(v, "added", true);
  for (const NodeGroup& g : d.removed)
    for (uint32_t v : g.nodes) consider(v, "removed", false);
  for (const ChangeGroup& g : d.changed)
    for (const auto& pr : g.nodes) consider(pr.first, "changed", false);
  if (best) return;
  for (const EdgeGroup& g : d.added_edges)
    for (const auto& e : g.edges) consider(e.second, "edge_added", true);
  for (const EdgeGroup& g : d.removed_edges)
    for (const auto& e : g.edges) consider(e.second, "edge_removed", false);
  for (const EdgeGroup& g : d.retyped_edges)
    for (const auto& e : g.edges) consider(e.second, "edge_retyped", false);
}

RanksResult compare_ranks(const AttachRun& run, const RunDirectory& dir, RunTraces& traces) {
  const std::string& run_dir = dir.dir();
  RanksResult r;
  r.run_dir = run_dir;
  for (const std::string& n : run.recovery_notes) r.notes.push_back(n);
  std::vector<const AttachRun::Process*> ranked;
  for (const auto& p : run.processes) {
    if (p.index.rank) ranked.push_back(&p);
    else if (!p.index.graphs.empty())  // a launcher without graphs (torchrun's agent) needs no word
      r.notes.push_back("pid " + std::to_string(p.index.pid) + " (" + p.dir + ") has no rank: its graphs are left out");
  }
  if (ranked.size() < 2) {
    // A killed job's directory: what could not be read is why.
    std::string missing;
    for (size_t i = 1; i < run.recovery_notes.size() && missing.size() < 400; ++i)
      missing += "; " + run.recovery_notes[i];
    throw Error(ExitCode::bad_input, run_dir,
                std::to_string(ranked.size()) + " ranked process" + (ranked.size() == 1 ? "" : "es") +
                    (run.recovered ? " (no index.json" + missing + ")" : "") +
                    "; ranks needs two or more: run the job under torchrun, mpirun or srun with --exec");
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto* a, const auto* b) { return a->index.rank->rank < b->index.rank->rank; });
  for (size_t i = 1; i < ranked.size(); ++i)
    if (ranked[i]->index.rank->rank == ranked[i - 1]->index.rank->rank)
      r.notes.push_back("rank " + std::to_string(ranked[i]->index.rank->rank) + " is held by pid " +
                        std::to_string(ranked[i - 1]->index.pid) + " and pid " + std::to_string(ranked[i]->index.pid) +
                        " (a forked worker that inherited it?): both are compared");
  Reading in{dir, traces, {}, {}};
  // Every rank's traces first, read on all cores; a name the resolver
  // refuses is refused below, in its turn.
  std::vector<RunFile> wanted;
  for (const auto* p : ranked) {
    const size_t at = size_t(p - run.processes.data());
    for (size_t i = 0; i < p->index.graphs.size(); ++i) {
      const AttachedGraph& a = p->index.graphs[i];
      if (a.superseded || !a.profiled) continue;
      try {
        wanted.push_back(dir.resolve(run, at, i, RunName::trace));
      } catch (const Error&) {
      }
    }
  }
  traces.prefetch(wanted);
  for (const auto* p : ranked) r.ranks.push_back(load_rank(run, size_t(p - run.processes.data()), in, r.profiled));

  const std::vector<RankGraph>& ref = r.ranks[0].graphs;
  std::vector<uint64_t> ref_keys;
  for (const auto& g : ref) ref_keys.push_back(structure_key(g.doc.root));
  for (size_t k = 0; k < ref.size(); ++k) {
    RankRow row;
    row.reference = k;
    RankMatch m;
    m.graph = k;
    row.ranks.push_back(std::move(m));
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
  for (size_t k = 0; k < r.rows.size(); ++k)
    for (RankMatch& m : r.rows[k].ranks) {
      if (m.same) continue;
      locate_difference(r, r.rows[k], m);
      if (!r.first_difference) r.first_difference = RankDivergence{k, m.rank};
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
