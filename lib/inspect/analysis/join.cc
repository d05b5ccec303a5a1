#include "join.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "../core/error.h"
#include "../core/id_map.h"
#include "../core/order.h"
#include "../core/parallel.h"

namespace graphscope {

std::string_view to_string(Assignment a) {
  switch (a) {
    case Assignment::id: return "id";
    case Assignment::unique: return "unique";
    case Assignment::order: return "order";
    case Assignment::interchangeable: return "interchangeable";
    case Assignment::ambiguous: return "ambiguous";
  }
  return "ambiguous";
}

bool parse_assignment(std::string_view s, Assignment* out) {
  for (int k = 0; k < kAssignmentCount; ++k)
    if (to_string(Assignment(k)) == s) {
      *out = Assignment(k);
      return true;
    }
  return false;
}

std::string_view to_string(LaunchUse::Status s) {
  switch (s) {
    case LaunchUse::Status::used: return "used";
    case LaunchUse::Status::partial: return "partial";
    case LaunchUse::Status::skipped: return "skipped";
  }
  return "skipped";
}

std::optional<uint32_t> exec_graph_of(const Activity& a) {
  if (a.graph_id) return a.graph_id;
  if (a.graph_node_id) return uint32_t(*a.graph_node_id >> 32);
  return std::nullopt;
}

namespace {

// The exec graph whose records are joined: asked for, the document's when
// the trace has it, else the trace's only one.
uint32_t choose_exec(const GraphDocument& doc, const std::map<uint32_t, size_t>& per_graph,
                     const JoinOptions& opt) {
  auto listed = [&] {
    std::string s;
    for (const auto& [id, count] : per_graph)
      s += (s.empty() ? "" : ", ") + std::to_string(id) + " (" + std::to_string(count) + " records)";
    return s.empty() ? std::string("none: no record carries a graph id") : s;
  };
  uint32_t exec = 0;
  if (opt.exec_graph_id) exec = *opt.exec_graph_id;
  else if (doc.exec_graph_id && per_graph.count(*doc.exec_graph_id)) exec = *doc.exec_graph_id;
  else if (per_graph.size() == 1) exec = per_graph.begin()->first;
  else if (per_graph.empty())
    throw_input("trace", "no record belongs to a graph replay (no graph id in any record): nothing to join");
  else
    throw Error(ExitCode::usage, "several exec graphs in the trace",
                "pick one with --exec-graph-id; the trace has " + listed());
  if (!per_graph.count(exec))
    throw_input("trace", "no record of exec graph " + std::to_string(exec) + "; the trace has " + listed());
  return exec;
}

// Node index by local node id (the low 32 bits of a record's graph node
// id); the first node of a local id has it. Local ids are usually the
// indices: then a table, else a hash map.
class NodeByLocal {
 public:
  explicit NodeByLocal(const Graph& g) {
    const size_t n = g.nodes.size();
    uint32_t max_local = 0;
    for (const auto& node : g.nodes) max_local = std::max(max_local, node.node_id);
    dense_ = n && max_local <= 4 * n + 1024;
    table_.assign(dense_ ? size_t(max_local) + 1 : 0, kNoNode);
    for (const auto& node : g.nodes) {
      if (!dense_) map_.emplace(node.node_id, node.index);
      else if (table_[node.node_id] == kNoNode) table_[node.node_id] = node.index;
    }
  }
  uint32_t operator()(uint32_t local) const {
    if (dense_) return local < table_.size() ? table_[local] : kNoNode;
    auto it = map_.find(local);
    return it == map_.end() ? kNoNode : it->second;
  }

 private:
  bool dense_ = false;
  std::vector<uint32_t> table_;
  std::unordered_map<uint32_t, uint32_t> map_;
};

}  // namespace

TraceJoin join_trace(const GraphDocument& doc, const Trace& trace, const JoinOptions& opt) {
  const std::vector<Activity>& acts = trace.activities;
  const size_t N = acts.size();
  if (N >= kNoNode) throw_input("trace", "more than " + std::to_string(kNoNode - 1) + " records");
  TraceJoin j;
  const unsigned workers = worker_count(N, 100000);

  // The records per exec graph, in slices: records come in runs of one graph.
  std::vector<std::map<uint32_t, size_t>> graphs_of(workers);
  parallel_slices(N, workers, [&](unsigned w, size_t begin, size_t end) {
    size_t* count = nullptr;
    uint32_t last = 0;
    for (size_t k = begin; k < end; ++k) {
      auto g = exec_graph_of(acts[k]);
      if (!g) continue;
      if (!count || *g != last) last = *g, count = &graphs_of[w][last];
      ++*count;
    }
  });
  std::map<uint32_t, size_t> per_graph;
  for (const auto& m : graphs_of)
    for (const auto& [id, count] : m) per_graph[id] += count;
  // No record has a graph id: by launches.
  if (per_graph.empty()) return join_by_launches(doc, trace, opt);
  const uint32_t exec = j.exec_graph_id = choose_exec(doc, per_graph, opt);

  // Each of the exec graph's records' node and correlation id, numbered per
  // slice in replay_of for now, with the earliest start of each.
  const NodeByLocal node_by_local(doc.root);
  const std::unordered_set<uint32_t> wanted(opt.launches.begin(), opt.launches.end());
  j.node_of.assign(N, kNoNode);
  j.replay_of.assign(N, kNoNode);
  std::vector<size_t> others(workers, 0), unmatched(workers, 0);
  std::vector<IdMap> corrs_of(workers);
  std::vector<std::vector<uint64_t>> first_of(workers);
  parallel_slices(N, workers, [&](unsigned w, size_t begin, size_t end) {
    auto& first = first_of[w];
    for (size_t k = begin; k < end; ++k) {
      const Activity& a = acts[k];
      auto g = exec_graph_of(a);
      if (!g || *g != exec || (!wanted.empty() && !wanted.count(a.correlation))) {
        ++others[w];
        continue;
      }
      if (a.graph_node_id) j.node_of[k] = node_by_local(uint32_t(*a.graph_node_id & 0xffffffffu));
      unmatched[w] += j.node_of[k] == kNoNode;
      uint32_t c = corrs_of[w].id(0, a.correlation);
      if (c == first.size()) first.push_back(a.start_ns);
      else first[c] = std::min(first[c], a.start_ns);
      j.replay_of[k] = c;
    }
  });
  for (size_t o : others) j.other_records += o;
  for (size_t u : unmatched) j.unmatched_records += u;
  bool have_corr = false;
  for (const auto& m : corrs_of)
    for (const auto& k : m.keys()) have_corr |= k.lo != 0;

  // Replays: the records of one graph launch share its correlation id.
  // Without correlation ids, a node's k-th record (by start, then position)
  // belongs to replay k. Either way each key's earliest start, in key order.
  std::vector<uint64_t> front;
  if (have_corr) {
    std::vector<uint32_t> corr;
    for (const auto& m : corrs_of)
      for (const auto& k : m.keys()) corr.push_back(k.lo);
    std::sort(corr.begin(), corr.end());
    corr.erase(std::unique(corr.begin(), corr.end()), corr.end());
    front.assign(corr.size(), UINT64_MAX);
    std::vector<std::vector<uint32_t>> key_of(workers);
    for (unsigned w = 0; w < workers; ++w)
      for (size_t c = 0; c < corrs_of[w].keys().size(); ++c) {
        uint32_t key =
            uint32_t(std::lower_bound(corr.begin(), corr.end(), corrs_of[w].keys()[c].lo) - corr.begin());
        key_of[w].push_back(key);
        front[key] = std::min(front[key], first_of[w][c]);
      }
    parallel_slices(N, workers, [&](unsigned w, size_t begin, size_t end) {
      for (size_t k = begin; k < end; ++k)
        if (j.replay_of[k] != kNoNode) j.replay_of[k] = key_of[w][j.replay_of[k]];
    });
  } else {
    std::vector<uint32_t> mine;
    for (size_t k = 0; k < N; ++k)
      if (j.replay_of[k] != kNoNode) mine.push_back(uint32_t(k));
    IdMap locals;
    std::vector<uint32_t> seen;
    for (uint32_t p : order_by(mine.size(), [&](size_t p) { return acts[mine[p]].start_ns; })) {
      const Activity& a = acts[mine[p]];
      uint32_t local = a.graph_node_id ? uint32_t(*a.graph_node_id & 0xffffffffu) : 0xffffffffu;
      uint32_t id = locals.id(0, local);
      if (id == seen.size()) seen.push_back(0);
      uint32_t key = seen[id]++;
      if (key == front.size()) front.push_back(a.start_ns);  // the key's first record: the earliest
      j.replay_of[mine[p]] = key;
    }
  }
  // Replays in time order (by std::sort with the same comparisons, so ties
  // fall as they always have).
  std::vector<uint32_t> by_start(front.size());
  for (uint32_t k = 0; k < by_start.size(); ++k) by_start[k] = k;
  std::sort(by_start.begin(), by_start.end(), [&](uint32_t x, uint32_t y) { return front[x] < front[y]; });
  std::vector<uint32_t> replay_of_key(front.size());
  for (uint32_t k = 0; k < by_start.size(); ++k) replay_of_key[by_start[k]] = k;
  parallel_slices(N, workers, [&](unsigned, size_t begin, size_t end) {
    for (size_t k = begin; k < end; ++k)
      if (j.replay_of[k] != kNoNode) j.replay_of[k] = replay_of_key[j.replay_of[k]];
  });
  j.replays = front.size();
  if (j.replays == 0)
    throw_input("trace", "no record of exec graph " + std::to_string(exec) + " in the launches asked for");
  j.how.assign(doc.root.nodes.size(), std::nullopt);
  for (size_t k = 0; k < N; ++k) {
    const uint32_t v = j.node_of[k];
    if (v != kNoNode && !j.how[v]) j.how[v] = Assignment::id, ++j.assigned[size_t(Assignment::id)];
  }
  return j;
}

}  // namespace graphscope
