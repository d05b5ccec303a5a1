// The join without graph ids (join.h, join_launch.cc): PyTorch 2.11's
// profiler writes none, so records are grouped by their graph launch and
// given to nodes by kind, name, geometry and the graph's order. Checked
// against the ids on graphscope's own H100 recordings (ids stripped), on
// random graphs with simulated timings, and on real PyTorch exports.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <string>

#include "inspect/formats/chrome_trace.h"
#include "inspect/core/error.h"
#include "inspect/formats/graph_json.h"
#include "inspect/analysis/join.h"
#include "inspect/formats/load.h"
#include "inspect/analysis/profile.h"
#include "inspect/formats/profile_json.h"
#include "inspect/render/profile_report.h"
#include "inspect/model/validate.h"
#include "test_data.h"

using namespace graphscope;

namespace {

Trace without_ids(Trace t) {
  for (Activity& a : t.activities) a.graph_id.reset(), a.graph_node_id.reset();
  return t;
}

struct Agreement {
  size_t nodes = 0, compared = 0, ambiguous = 0, interchangeable = 0, wrong = 0, verdicts_differ = 0;
};

// The join without ids against the join by ids on one recording: the same
// node for every record of a node that is neither ambiguous nor
// interchangeable, and the same verdict for every node that is not
// ambiguous.
void agree(const GraphDocument& doc, const Trace& trace, Agreement& total, const std::string& what,
           bool verdicts = true) {
  CAPTURE(what);
  TraceJoin ids = join_trace(doc, trace);
  const Trace bare = without_ids(trace);
  TraceJoin launches = join_trace(doc, bare);
  REQUIRE(!launches.by_ids);
  CHECK(launches.replays == ids.replays);
  const size_t n = doc.root.nodes.size();
  for (uint32_t v = 0; v < n; ++v) {
    if (!ids.how[v]) continue;
    ++total.nodes;
    REQUIRE(launches.how[v]);
    const Assignment a = *launches.how[v];
    if (a == Assignment::ambiguous) ++total.ambiguous;
    if (a == Assignment::interchangeable) ++total.interchangeable;
  }
  for (size_t k = 0; k < trace.activities.size(); ++k) {
    const uint32_t v = ids.node_of[k];
    if (v == kNoNode) continue;
    const Assignment a = *launches.how[v];
    if (a == Assignment::ambiguous || a == Assignment::interchangeable) continue;
    ++total.compared;
    if (launches.node_of[k] != v) {
      ++total.wrong;
      FAIL_CHECK("record " << k << " of node " << v << " joined to " << launches.node_of[k] << " ("
                           << to_string(a) << ")");
    }
  }
  if (!verdicts) return;
  // Verdicts: the same per node, except that interchangeable nodes may
  // swap theirs: per kernel, the same verdicts among them.
  ProfileReport with = analyze_profile(doc, trace, ids, {});
  ProfileReport without = analyze_profile(doc, bare, launches, {});
  std::map<std::string, std::multiset<std::pair<int, bool>>> swapped_with, swapped_without;
  auto is_ambiguous = [&](std::optional<uint32_t> v) {
    return v && without.nodes[*v].assignment && *without.nodes[*v].assignment == Assignment::ambiguous;
  };
  for (uint32_t v = 0; v < n; ++v) {
    const NodeProfile &x = with.nodes[v], &y = without.nodes[v];
    // A verdict rests on the node's record and on its observed dependency's.
    if (uncertain_verdict(without, v)) continue;
    CHECK(!is_ambiguous(v));
    CHECK(!is_ambiguous(y.observed_dependency));
    if (y.assignment && *y.assignment == Assignment::interchangeable) {
      const std::string& k = doc.root.nodes[v].kernel_name;
      swapped_with[k].insert({int(x.verdict), x.blocking});
      swapped_without[k].insert({int(y.verdict), y.blocking});
      continue;
    }
    if (x.verdict != y.verdict || x.blocking != y.blocking) {
      ++total.verdicts_differ;
      FAIL_CHECK("node " << v << ": verdict " << to_string(x.verdict) << " by ids, " << to_string(y.verdict)
                         << " without (" << (y.assignment ? to_string(*y.assignment) : "-") << ")");
    }
  }
  for (const auto& [kernel, verdicts] : swapped_with)
    if (verdicts != swapped_without[kernel]) {
      ++total.verdicts_differ;
      FAIL_CHECK("interchangeable nodes of " << kernel << " have other verdicts without ids");
    }
  if (launches.assigned[size_t(Assignment::ambiguous)] == 0) {
    CHECK(with.real == without.real);
    CHECK(with.fake == without.fake);
    CHECK(with.blocking == without.blocking);
  }
}

}  // namespace

TEST_CASE("without ids, graphscope's own H100 recordings join as they do by ids") {
  Agreement total;
  size_t recordings = 0;
  for (const auto& entry : std::filesystem::directory_iterator(test::data_path("profiles"))) {
    const std::string name = entry.path().filename().string();
    const std::string suffix = ".trace.json";
    if (name.size() < suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    const std::string stem = name.substr(0, name.size() - suffix.size());
    const std::string graph = "profiles/" + stem + ".graph.json";
    if (!std::filesystem::exists(test::data_path(graph))) continue;
    GraphDocument doc = read_graph_json(test::read_data(graph), graph);
    Trace trace = read_chrome_trace(test::read_data("profiles/" + name), name);
    agree(doc, trace, total, stem);
    ++recordings;
  }
  MESSAGE(recordings << " recordings, " << total.nodes << " nodes: " << total.compared << " records compared, "
                     << total.interchangeable << " interchangeable, " << total.ambiguous << " ambiguous");
  CHECK(recordings >= 20);
  CHECK(total.wrong == 0);
  CHECK(total.verdicts_differ == 0);
  CHECK(total.ambiguous * 50 <= total.nodes);  // at most 2%
}

namespace {

// A random DAG of kernels of a few names and geometries, and its replays
// scheduled as the driver would: each node on a stream (a chain keeps its
// predecessor's), starting after its predecessors end and its stream is
// free, plus a random dispatch delay.
struct Simulated {
  GraphDocument doc;
  Trace trace;
};

Simulated simulate(std::mt19937& rng, uint32_t n, uint32_t replays, uint32_t names) {
  Simulated s;
  GraphDocument& doc = s.doc;
  doc.exec_graph_id = 3;
  doc.root.nodes.resize(n);
  std::uniform_int_distribution<uint32_t> pick_name(0, names - 1), coin(0, 99);
  std::vector<uint32_t> stream(n);
  std::vector<char> stream_taken(n, 0);
  uint32_t streams = 0;
  for (uint32_t i = 0; i < n; ++i) {
    Node& x = doc.root.nodes[i];
    x.index = x.node_id = i;
    x.type = NodeType::kernel;
    x.graph_id = 3;
    x.tools_id = (uint64_t(3) << 32) | i;
    x.kernel_name = "_Z6kernel" + std::to_string(pick_name(rng)) + "v";
    x.kernel.emplace();
    x.kernel->grid = {1u + coin(rng) % 2, 1, 1};
    x.kernel->block = {128, 1, 1};
    if (i > 0) {
      // Mostly one predecessor, at times two or three, among the recent
      // nodes: chains that fork and join, as model graphs do.
      const uint32_t roll = coin(rng), preds = roll < 70 ? 1 : roll < 90 ? 2 : 3;
      for (uint32_t k = 0; k < preds; ++k) {
        uint32_t p = i - 1 - coin(rng) % std::min<uint32_t>(i, 8);
        bool dup = false;
        for (const auto& d : x.dependencies) dup |= d.from == p;
        if (!dup && (coin(rng) < 85 || x.dependencies.empty())) x.dependencies.push_back({p});
      }
      if (coin(rng) < 10) x.dependencies.clear();  // a new root now and then
    }
    const uint32_t first = x.dependencies.empty() ? UINT32_MAX : x.dependencies[0].from;
    if (first != UINT32_MAX && !stream_taken[first]) {
      stream[i] = stream[first];
      stream_taken[first] = 1;
    } else {
      stream[i] = streams++;
    }
  }
  link_dependents(doc.root);
  std::uniform_real_distribution<double> dispatch(0.2, 3.0), duration(1.0, 8.0);
  double clock = 0;
  const uint32_t name = s.trace.intern("unused");
  (void)name;
  for (uint32_t r = 0; r < replays; ++r) {
    std::vector<double> end(n), stream_free(streams, clock);
    for (uint32_t i = 0; i < n; ++i) {
      double ready = clock;
      for (const auto& d : doc.root.nodes[i].dependencies) ready = std::max(ready, end[d.from]);
      const double start = std::max(ready, stream_free[stream[i]]) + dispatch(rng);
      end[i] = start + duration(rng);
      stream_free[stream[i]] = end[i];
      Activity a;
      a.kind = ActivityKind::kernel;
      a.name = s.trace.intern(doc.root.nodes[i].kernel_name);
      a.start_ns = uint64_t(start * 1000), a.end_ns = uint64_t(end[i] * 1000);
      a.stream = 100 + stream[i];
      a.correlation = 500 + r;
      a.grid[0] = doc.root.nodes[i].kernel->grid.x, a.grid[1] = a.grid[2] = 1;
      a.block[0] = 128, a.block[1] = a.block[2] = 1;
      a.graph_id = 3;
      a.graph_node_id = (uint64_t(3) << 32) | i;
      s.trace.activities.push_back(a);
    }
    clock = *std::max_element(end.begin(), end.end()) + 20;
  }
  // The records of a replay in start order, as a trace has them.
  std::stable_sort(s.trace.activities.begin(), s.trace.activities.end(),
                   [](const Activity& a, const Activity& b) { return a.start_ns < b.start_ns; });
  return s;
}

}  // namespace

TEST_CASE("without ids, random graphs with simulated timings join as they do by ids") {
  std::mt19937 rng(20261124);
  Agreement total;
  for (int trial = 0; trial < 60; ++trial) {
    const uint32_t n = 5 + uint32_t(rng() % 120), names = 1 + uint32_t(rng() % 6);
    Simulated s = simulate(rng, n, 2 + uint32_t(rng() % 4), names);
    // Records only: on dense random graphs a node's median verdict may
    // still move with its ambiguous neighbours' (see the recordings' test
    // for verdicts).
    agree(s.doc, s.trace, total, "trial " + std::to_string(trial) + ", " + std::to_string(n) + " nodes", false);
  }
  MESSAGE("random graphs: " << total.nodes << " nodes: " << total.compared << " records compared, "
                            << total.interchangeable << " interchangeable, " << total.ambiguous << " ambiguous");
  CHECK(total.wrong == 0);
  CHECK(total.compared > total.nodes);  // most nodes were decided
}

TEST_CASE("PyTorch 2.11 profiler exports join by launch: three replays each, every node decided") {
  for (std::string name : {"torch_mlp", "torch_two_stream", "torch_four_branch", "torch_llama"}) {
    CAPTURE(name);
    GraphDocument doc = load_graph(test::data_path("torch/" + name + ".debug_dump.dot"));
    Trace t = read_chrome_trace(test::read_data("torch/" + name + ".kineto.json"), name);
    CHECK(t.launches.size() == 3);  // the cudaGraphLaunch calls
    TraceJoin j = join_trace(doc, t);
    CHECK(!j.by_ids);
    CHECK(j.replays == 3);
    CHECK(j.unmatched_records == 0);
    CHECK(j.assigned[size_t(Assignment::ambiguous)] == 0);
    size_t decided = 0;
    for (int k = 0; k < kAssignmentCount; ++k) decided += j.assigned[k];
    CHECK(decided == doc.root.nodes.size());
    // The four identical branches are interchangeable; everything else is
    // decided by name, geometry and order.
    CHECK(j.assigned[size_t(Assignment::interchangeable)] == (name == "torch_four_branch" ? 12u : 0u));
    for (const auto& l : j.launches) CHECK(l.status == LaunchUse::Status::used);
  }
}

TEST_CASE("launches that do not match the graph are skipped, cut ones reported partial, and none matching is one line") {
  GraphDocument doc = load_graph(test::data_path("torch/torch_mlp.debug_dump.dot"));
  Trace t = read_chrome_trace(test::read_data("torch/torch_mlp.kineto.json"), "mlp");
  // The last launch cut by the window: its last two records gone.
  Trace cut = t;
  cut.activities.resize(cut.activities.size() - 2);
  TraceJoin j = join_trace(doc, cut);
  REQUIRE(j.launches.size() == 3);
  CHECK(j.replays == 2);
  CHECK(j.launches[2].status == LaunchUse::Status::partial);
  CHECK(j.launches[2].why == "4 of the graph's 6 records (cut by the profiler's window)");
  CHECK(j.other_records == 4);
  // Asked for one launch by correlation id.
  JoinOptions one;
  one.launches = {16};
  j = join_trace(doc, t, one);
  CHECK(j.replays == 1);
  CHECK(j.launches[0].why == "not asked for");
  try {
    one.launches = {12345};
    join_trace(doc, t, one);
    FAIL("joined a launch the trace does not have");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) == "trace (no device records of a graph launch with correlation id 12345)");
  }
  // Another graph's trace: the first differences, exit 3.
  GraphDocument other = load_graph(test::data_path("torch/torch_two_stream.debug_dump.dot"));
  try {
    join_trace(other, t);
    FAIL("joined another graph's trace");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::bad_input);
    CHECK(std::string(e.what()).find("no graph launch of the trace matches the graph (3 launches); launch 7 has 6 "
                                     "records, the graph 7; first absent from the graph: kernel ") != std::string::npos);
  }
}

TEST_CASE("a torch.compile(mode=reduce-overhead) export: its graph launches are read") {
  Trace t = read_chrome_trace(test::read_data("torch/torch_compile.kineto.json"), "compile");
  CHECK(t.source == "pytorch-profiler");
  CHECK(t.launches.size() == 3);
  size_t in_launches = 0;
  for (const Activity& a : t.activities)
    for (const GraphLaunch& l : t.launches) in_launches += a.correlation == l.correlation;
  CHECK(in_launches == 15);  // 5 kernels per replay; 3 more kernels ran outside the graph
}

TEST_CASE("offline verdicts from PyTorch exports, joined without ids, agree with graphscope's live ones per node") {
  // The same programs, recorded in separate runs on the H100: the PyTorch
  // profiler's export with the graph's debug_dump, and `profile --exec`
  // (tests/data/torch/live/README.md).
  for (std::string name : {"mlp", "two_stream", "four_branch", "llama", "compile"}) {
    CAPTURE(name);
    const std::string dot = name == "compile" ? "torch/torch_compile.1.debug_dump.dot" : "torch/torch_" + name + ".debug_dump.dot";
    GraphDocument doc = load_graph(test::data_path(dot));
    Trace t = read_chrome_trace(test::read_data("torch/torch_" + name + ".kineto.json"), name);
    ProfileReport offline = analyze_profile(doc, t, ProfileOptions{});
    CHECK(!offline.by_ids);
    ProfileDocument live =
        read_profile_json(test::read_data("torch/live/torch_" + name + ".live.profile.json"), name + " live");
    GraphDocument live_graph = load_graph(test::data_path("torch/live/torch_" + name + ".live.graph.json"));
    REQUIRE(live.report.nodes.size() == offline.nodes.size());
    for (size_t i = 0; i < offline.nodes.size(); ++i) {
      CAPTURE(i);
      REQUIRE(doc.root.nodes[i].kernel_name == live_graph.root.nodes[i].kernel_name);  // the same node
      CHECK(offline.nodes[i].verdict == live.report.nodes[i].verdict);
      CHECK(offline.nodes[i].blocking == live.report.nodes[i].blocking);
      CHECK(!uncertain_verdict(offline, uint32_t(i)));
    }
    CHECK(offline.real == live.report.real);
    CHECK(offline.fake == live.report.fake);
  }
}
