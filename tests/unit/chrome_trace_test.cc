#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "graph_builder.h"
#include "inspect/formats/chrome_trace.h"
#include "inspect/core/error.h"
#include "test_data.h"

using namespace graphscope;
using nlohmann::json;

namespace {

Activity make(ActivityKind kind, uint32_t name, uint64_t start, uint64_t end) {
  Activity a;
  a.kind = kind;
  a.name = name;
  a.start_ns = start;
  a.end_ns = end;
  return a;
}

// Every field of two activities, names compared by text.
void check_same(const Trace& ta, const Activity& a, const Trace& tb, const Activity& b) {
  CHECK(a.kind == b.kind);
  CHECK(a.copy == b.copy);
  CHECK(ta.names.at(a.name) == tb.names.at(b.name));
  CHECK(a.start_ns == b.start_ns);
  CHECK(a.end_ns == b.end_ns);
  CHECK(a.device == b.device);
  CHECK(a.stream == b.stream);
  CHECK(a.channel_id == b.channel_id);
  CHECK(a.channel_type == b.channel_type);
  CHECK(a.correlation == b.correlation);
  CHECK(a.graph_id == b.graph_id);
  CHECK(a.graph_node_id == b.graph_node_id);
  CHECK(a.bytes == b.bytes);
}

// Kernels on compute channels, copies on copy channels, memsets, a host
// activity, one without a channel, absolute times with nanoseconds, and
// graph node ids above 2^53.
Trace hand_built() {
  Trace t;
  t.source = "cupti";
  const uint64_t t0 = 1'700'000'000'123'456'789ull;  // ns since 1970: 2023
  const uint32_t exec = 3'000'000'000u;              // (exec << 32) > 2^53
  uint32_t k1 = t.intern("_Z5scalePfif");
  uint32_t k2 = t.intern("void gemm<float, \"quoted\", \\slash>(Params) \xce\xbb");
  uint32_t h2d = t.intern("Memcpy HtoD (Pinned -> Device)");
  uint32_t d2h = t.intern("Memcpy DtoH (Device -> Pageable)");
  uint32_t copy = t.intern("my copy");
  uint32_t ms = t.intern("Memset (Device)");
  uint32_t host = t.intern("host callback");

  Activity a = make(ActivityKind::kernel, k1, t0, t0 + 1'234);
  a.device = 0, a.stream = 7, a.channel_type = 1, a.channel_id = 3, a.correlation = 41;
  a.graph_id = exec, a.graph_node_id = (uint64_t(exec) << 32) | 1;
  t.activities.push_back(a);
  a = make(ActivityKind::kernel, k2, t0 + 1'235, t0 + 9'999'999);
  a.device = 1, a.stream = 13, a.channel_type = 1, a.channel_id = 4, a.correlation = 41;
  a.graph_id = exec, a.graph_node_id = (uint64_t(exec) << 32) | 0xfffffffeu;
  t.activities.push_back(a);
  a = make(ActivityKind::memcpy, h2d, t0 + 17, t0 + 1'317'001);
  a.copy = CopyKind::htod, a.stream = 7, a.channel_type = 2, a.channel_id = 9, a.correlation = 41, a.bytes = 64 << 20;
  a.graph_id = exec, a.graph_node_id = (uint64_t(exec) << 32) | 2;
  t.activities.push_back(a);
  a = make(ActivityKind::memcpy, d2h, t0 + 2'000'001, t0 + 2'000'002);
  a.copy = CopyKind::dtoh, a.stream = 7, a.channel_type = 2, a.channel_id = 10, a.correlation = 42, a.bytes = 4;
  t.activities.push_back(a);
  a = make(ActivityKind::memcpy, copy, t0 + 3'000'000, t0 + 3'000'000);  // zero length, direction not in name
  a.copy = CopyKind::dtod, a.stream = 8, a.channel_type = 2, a.channel_id = 9, a.correlation = 43, a.bytes = 1;
  t.activities.push_back(a);
  a = make(ActivityKind::memset, ms, t0 + 999, t0 + 1'999);
  a.stream = 7, a.correlation = 41, a.bytes = 4096;  // no channel: a stream lane
  a.graph_id = exec, a.graph_node_id = (uint64_t(exec) << 32) | 3;
  t.activities.push_back(a);
  a = make(ActivityKind::host, host, t0 + 5'000, t0 + 8'000);
  a.stream = 7, a.correlation = 41;
  t.activities.push_back(a);
  a = make(ActivityKind::other, k1, t0 + 6'000, t0 + 6'500);
  a.stream = 9;
  t.activities.push_back(a);
  return t;
}

// The events of a written trace by phase.
std::vector<json> events(const json& doc, const std::string& ph) {
  std::vector<json> out;
  for (const auto& e : doc.at("traceEvents"))
    if (e.at("ph") == ph) out.push_back(e);
  return out;
}

// Pairs of flow events ("s" then "f") of one category: id -> (s, f).
std::map<uint64_t, std::pair<json, json>> flows(const json& doc, const std::string& cat) {
  std::map<uint64_t, std::pair<json, json>> out;
  for (const auto& e : doc.at("traceEvents")) {
    if (!e.contains("cat") || e.at("cat") != cat) continue;
    if (e.at("ph") == "s") out[e.at("id").get<uint64_t>()].first = e;
    if (e.at("ph") == "f") {
      CHECK(e.at("bp") == "e");
      out[e.at("id").get<uint64_t>()].second = e;
    }
  }
  return out;
}

// The "X" event a flow end binds to: on its pid and tid, enclosing its ts.
std::vector<json> enclosing(const json& doc, const json& flow_end) {
  std::vector<json> out;
  double ts = flow_end.at("ts").get<double>();
  for (const auto& e : events(doc, "X"))
    if (e.at("pid") == flow_end.at("pid") && e.at("tid") == flow_end.at("tid") && e.at("ts").get<double>() <= ts &&
        ts <= e.at("ts").get<double>() + e.at("dur").get<double>())
      out.push_back(e);
  return out;
}

// Fork-join 0 -> {1, 2, 3} -> 4 replayed `replays` times (correlation 100,
// 101, ...), each node on its own compute channel; plus a record of another
// graph that must join nothing.
Trace fork_join_trace(const GraphDocument& doc, uint32_t replays) {
  Trace t;
  t.source = "cupti";
  const uint32_t exec = *doc.exec_graph_id;
  for (uint32_t r = 0; r < replays; ++r) {
    uint64_t base = 1'000'000 + r * 100'000;
    for (const auto& n : doc.root.nodes) {
      uint32_t level = n.index == 0 ? 0 : n.index == 4 ? 2 : 1;
      Activity a = make(n.type == NodeType::memset ? ActivityKind::memset : ActivityKind::kernel,
                        t.intern(n.type == NodeType::memset ? "Memset (Device)" : n.kernel_name),
                        base + level * 10'000, base + level * 10'000 + 5'000);
      a.stream = 7;
      a.channel_type = 1;
      a.channel_id = n.index;
      a.correlation = 100 + r;
      a.graph_id = exec;
      a.graph_node_id = *n.tools_id;
      t.activities.push_back(a);
    }
  }
  Activity other = make(ActivityKind::kernel, t.intern("other_graph"), 50, 60);
  other.graph_id = exec + 1;
  other.graph_node_id = (uint64_t(exec + 1) << 32) | 1;
  other.correlation = 100;
  t.activities.push_back(other);
  return t;
}

// No two complete events of one thread overlap (viewers drop such slices).
void check_no_overlap(const json& doc) {
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> by_thread;
  for (const auto& e : events(doc, "X")) {
    double ts = e.at("ts").get<double>();
    by_thread[{e.at("pid").get<int>(), e.at("tid").get<int>()}].push_back({ts, ts + e.at("dur").get<double>()});
  }
  for (auto& [thread, slices] : by_thread) {
    std::sort(slices.begin(), slices.end());
    for (size_t i = 1; i < slices.size(); ++i) CHECK(slices[i - 1].second <= slices[i].first);
  }
}

void check_bad(const std::string& text, const std::string& expected) {
  CAPTURE(text.substr(0, 200));
  try {
    (void)read_chrome_trace(text, "t.json");
    FAIL("accepted");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::bad_input);
    CHECK(e.subject() == "t.json");
    CAPTURE(e.what());
    CHECK(std::string(e.what()).find(expected) != std::string::npos);
  }
}

// A one-event trace with the given members of a kernel event.
std::string kernel_event(const std::string& members) {
  return R"({"traceEvents": [{"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "x"}}, )"
         R"({"ph": "X", "cat": "kernel", )" +
         members + "}]}";
}

}  // namespace

TEST_CASE("reads the PyTorch profiler trace of the MLP recorded on the H100: 18 kernels of 3 replays") {
  Trace t = read_chrome_trace(test::read_data("torch/torch_mlp.kineto.json"), "torch_mlp.kineto.json");
  CHECK(t.source == "pytorch-profiler");
  REQUIRE(t.activities.size() == 18);
  std::map<uint32_t, int> per_correlation;
  for (const auto& a : t.activities) {
    CHECK(a.kind == ActivityKind::kernel);
    CHECK(a.device == 0);
    CHECK(a.stream == 7);
    CHECK(a.channel_type == 0);
    CHECK(!a.graph_node_id);
    CHECK(a.end_ns > a.start_ns);
    ++per_correlation[a.correlation];
  }
  CHECK(per_correlation == std::map<uint32_t, int>{{7, 6}, {16, 6}, {25, 6}});
  const Activity& first = t.activities.front();
  CHECK(t.names[first.name] ==
        "void cutlass::Kernel2<cutlass_80_simt_sgemm_64x64_8x5_tn_align1>(cutlass_80_simt_sgemm_64x64_8x5_tn_align1::Params)");
  // "ts": 4496281713816.316, "dur": 6.048: to the nanosecond.
  CHECK(first.start_ns == 4496281713816316ull);
  CHECK(first.end_ns - first.start_ns == 6048);
  CHECK(t.names.size() == 4);  // distinct kernels, interned once
}

TEST_CASE("reads the PyTorch profiler trace of two streams: kernels on streams 7 and 144") {
  Trace t = read_chrome_trace(test::read_data("torch/torch_two_stream.kineto.json"), "two_stream");
  CHECK(t.source == "pytorch-profiler");
  REQUIRE(t.activities.size() == 21);
  std::map<uint32_t, int> per_stream;
  for (const auto& a : t.activities) ++per_stream[a.stream];
  CHECK(per_stream == std::map<uint32_t, int>{{7, 12}, {144, 9}});
  const Activity& first = t.activities.front();
  CHECK(first.start_ns == 4496281841794020ull);
  CHECK(first.end_ns - first.start_ns == 9920);
  CHECK(first.correlation == 654);
}

TEST_CASE("reads the bare array form and skips CPU ops, flows and metadata") {
  std::string text = R"J([
    {"name": "process_name", "ph": "M", "pid": 0, "tid": 0, "args": {"name": "GPU 0"}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaGraphLaunch", "pid": 1, "tid": 2, "ts": 1, "dur": 3, "args": {"correlation": 5}},
    {"ph": "s", "id": 5, "pid": 1, "tid": 2, "ts": 1, "cat": "ac2g", "name": "ac2g"},
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 1, "tid": 3, "ts": 10.5, "dur": 2, "args": {"device": 1, "stream": 3, "correlation": 5}},
    {"ph": "f", "id": 5, "pid": 1, "tid": 3, "ts": 10.5, "cat": "ac2g", "name": "ac2g", "bp": "e"},
    {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 2, "tid": 4, "ts": 20, "dur": 0.0015},
    {"ph": "X", "cat": "graph_host", "name": "only ours", "ts": 1, "dur": 1},
    {"ph": "i", "name": "instant", "ts": 3, "s": "g"}
  ])J";
  Trace t = read_chrome_trace(text, "bare");
  CHECK(t.source == "chrome-trace");
  REQUIRE(t.activities.size() == 2);
  const Activity& k = t.activities[0];
  CHECK(k.kind == ActivityKind::kernel);
  CHECK(t.names[k.name] == "k");
  CHECK(k.start_ns == 10'500);
  CHECK(k.end_ns == 12'500);
  CHECK(k.device == 1);
  CHECK(k.stream == 3);
  CHECK(k.correlation == 5);
  // Without args, Kineto's layout: pid is the device, tid the stream.
  const Activity& m = t.activities[1];
  CHECK(m.kind == ActivityKind::memset);
  CHECK(m.device == 2);
  CHECK(m.stream == 4);
  CHECK(m.end_ns - m.start_ns == 2);  // 1.5 ns rounds to 2
  CHECK(read_chrome_trace("[]", "empty").activities.empty());
}

TEST_CASE("reads Kineto's channel and graph keys, copy directions and 64-bit graph node ids") {
  std::string text = R"J({"schemaVersion": 1, "traceEvents": [
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pinned -> Device)", "pid": 0, "tid": 7, "ts": 1, "dur": 1,
     "args": {"device": 0, "stream": 7, "correlation": 9, "bytes": 67108864, "graph node id": 12884901890, "graph id": 3,
              "channel": 9, "channel_type": 2}},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pageable)", "ts": 2, "dur": 1, "args": {}},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy PtoP (Device -> Device)", "ts": 3, "dur": 1,
     "args": {"fromDevice": 0, "inDevice": 2, "toDevice": 1}},
    {"ph": "X", "cat": "gpu_memcpy", "name": "copy", "ts": 4, "dur": 1, "args": {"copy kind": 9}},
    {"ph": "X", "cat": "kernel", "name": "k", "ts": 5, "dur": 1,
     "args": {"graph node id": "18446744069414584321", "graph id": "4294967295", "device": 3.0}},
    {"ph": "X", "cat": "kernel", "name": "k", "ts": 6, "dur": 1, "args": {"graph node id": 13835058055282163712}}
  ]})J";
  Trace t = read_chrome_trace(text, "kineto");
  CHECK(t.source == "pytorch-profiler");
  REQUIRE(t.activities.size() == 6);
  const auto& c = t.activities[0];
  CHECK(c.copy == CopyKind::htod);
  CHECK(c.bytes == 64u << 20);
  CHECK(c.channel_type == 2);
  CHECK(c.channel_id == 9);
  CHECK(c.graph_id == 3u);
  CHECK(c.graph_node_id == (uint64_t(3) << 32 | 2));
  CHECK(t.activities[1].copy == CopyKind::dtoh);
  CHECK(t.activities[2].copy == CopyKind::dtod);
  CHECK(t.activities[2].device == 2);
  CHECK(t.activities[3].copy == CopyKind::htoh);
  CHECK(t.activities[4].graph_node_id == 18446744069414584321ull);  // 2^64 - 2^32 + 1
  CHECK(t.activities[4].graph_id == 4294967295u);
  CHECK(t.activities[4].device == 3);
  CHECK(t.activities[5].graph_node_id == 13835058055282163712ull);  // 3 << 62, above 2^53
}

TEST_CASE("round trip: reading the written trace gives back every activity to the nanosecond") {
  Trace t = hand_built();
  std::string text = write_chrome_trace(t, nullptr, nullptr);
  Trace back = read_chrome_trace(text, "round.json");
  CHECK(back.source == "graphscope");
  REQUIRE(back.activities.size() == t.activities.size());
  for (size_t i = 0; i < t.activities.size(); ++i) {
    CAPTURE(i);
    check_same(t, t.activities[i], back, back.activities[i]);
  }
  // Written again, the same text (the source aside, which is now ours).
  Trace again = read_chrome_trace(write_chrome_trace(back, nullptr, nullptr), "again.json");
  CHECK(write_chrome_trace(again, nullptr, nullptr) == write_chrome_trace(back, nullptr, nullptr));
  CHECK(write_chrome_trace(t, nullptr, nullptr) == text);  // deterministic
}

TEST_CASE("written trace is Chrome trace JSON: lanes per channel, named GPU processes, Kineto's args") {
  Trace t = hand_built();
  json j = json::parse(write_chrome_trace(t, nullptr, nullptr));
  CHECK(j.at("displayTimeUnit") == "ns");
  CHECK(j.at("graphscope").at("schema") == "graphscope.trace/1");
  CHECK(j.at("graphscope").at("source") == "cupti");
  CHECK(j.at("graphscope").at("activities") == t.activities.size());

  std::map<std::pair<int, int>, std::string> thread_names;
  std::map<int, std::string> process_names;
  for (const auto& e : events(j, "M")) {
    if (e.at("name") == "thread_name")
      thread_names[{e.at("pid").get<int>(), e.at("tid").get<int>()}] = e.at("args").at("name").get<std::string>();
    if (e.at("name") == "process_name") process_names[e.at("pid").get<int>()] = e.at("args").at("name").get<std::string>();
  }
  CHECK(process_names == std::map<int, std::string>{{0, "GPU 0"}, {1, "GPU 1"}});
  std::set<std::string> lanes0;
  for (const auto& [k, v] : thread_names)
    if (k.first == 0) lanes0.insert(v);
  CHECK(lanes0 == std::set<std::string>{"compute channel 3", "copy channel 9", "copy channel 10", "stream 7", "stream 9"});

  auto xs = events(j, "X");
  REQUIRE(xs.size() == t.activities.size());
  for (const auto& e : xs) {
    CAPTURE(e.dump());
    const auto& args = e.at("args");
    // Each activity on the lane its thread is named after.
    std::string lane = thread_names.at({e.at("pid").get<int>(), e.at("tid").get<int>()});
    lane = lane.substr(0, lane.find(" ("));  // rows of concurrent activities
    if (args.contains("channel_type")) {
      std::string kind = args.at("channel_type") == 1 ? "compute" : "copy";
      CHECK(lane == kind + " channel " + std::to_string(args.at("channel").get<int>()));
    } else {
      CHECK(lane == "stream " + std::to_string(args.at("stream").get<int>()));
    }
    CHECK(e.at("pid") == args.at("device"));
    CHECK(args.contains("correlation"));
  }
  // The first activity starts at 0; the kernel's args carry Kineto's keys.
  const auto& k = xs[0];
  CHECK(k.at("cat") == "kernel");
  CHECK(k.at("ts").get<double>() == 0.0);
  CHECK(k.at("dur").get<double>() == doctest::Approx(1.234));
  CHECK(k.at("args").at("graph node id").get<uint64_t>() == ((uint64_t(3'000'000'000u) << 32) | 1));
  CHECK(k.at("args").at("graph id") == 3'000'000'000u);
  CHECK(k.at("args").at("channel") == 3);
  CHECK(k.at("args").at("channel_type") == 1);
  CHECK(xs[2].at("cat") == "gpu_memcpy");
  CHECK(xs[2].at("args").at("bytes") == 64 << 20);
  CHECK(xs[5].at("cat") == "gpu_memset");
  CHECK(!k.at("args").contains("verdict"));
  check_no_overlap(j);
}

TEST_CASE("concurrent activities on one channel go on rows of their own, named after the channel") {
  Trace t;
  uint32_t k = t.intern("k");
  // [0, 10], [5, 15], [12, 20], [14, 16] us on compute channel 1: rows 1, 2, 1, 3.
  for (auto [s, e] : {std::pair{0, 10}, {5, 15}, {12, 20}, {14, 16}}) {
    Activity a = make(ActivityKind::kernel, k, uint64_t(s) * 1000, uint64_t(e) * 1000);
    a.channel_type = 1;
    a.channel_id = 1;
    t.activities.push_back(a);
  }
  Activity other = make(ActivityKind::kernel, k, 0, 1000);  // the next lane numbers on
  other.channel_type = 1;
  other.channel_id = 2;
  t.activities.push_back(other);
  std::string text = write_chrome_trace(t, nullptr, nullptr);
  json j = json::parse(text);
  check_no_overlap(j);
  std::map<int, std::string> names;
  for (const auto& e : events(j, "M"))
    if (e.at("name") == "thread_name") names[e.at("tid").get<int>()] = e.at("args").at("name").get<std::string>();
  // Channel lanes are tracks of their own, numbered from 2^30 (below it,
  // Kineto's tids: streams).
  const int B = 1 << 30;
  CHECK(names == std::map<int, std::string>{{B, "compute channel 1"},
                                            {B + 1, "compute channel 1 (2)"},
                                            {B + 2, "compute channel 1 (3)"},
                                            {B + 3, "compute channel 2"}});
  std::vector<int> tids;
  for (const auto& e : events(j, "X")) tids.push_back(e.at("tid").get<int>() - B);
  CHECK(tids == std::vector<int>{0, 1, 0, 2, 3});
  // Out of start order in the trace: the same rows.
  Trace reversed = t;
  std::reverse(reversed.activities.begin(), reversed.activities.end());
  json r = json::parse(write_chrome_trace(reversed, nullptr, nullptr));
  check_no_overlap(r);
  std::vector<int> reversed_tids;
  for (const auto& e : events(r, "X")) reversed_tids.push_back(e.at("tid").get<int>() - B);
  CHECK(reversed_tids == std::vector<int>{3, 2, 0, 1, 0});
  Trace back = read_chrome_trace(text, "rows");
  REQUIRE(back.activities.size() == t.activities.size());
  for (size_t i = 0; i < t.activities.size(); ++i) check_same(t, t.activities[i], back, back.activities[i]);
}

TEST_CASE("an empty trace writes and reads back empty") {
  Trace t;
  std::string text = write_chrome_trace(t, nullptr, nullptr);
  json j = json::parse(text);
  CHECK(j.at("traceEvents").empty());
  CHECK(read_chrome_trace(text, "empty").activities.empty());
}

TEST_CASE("with the graph, flow arrows follow its edges within each replay") {
  GraphDocument doc = test::fork_join();
  Trace t = fork_join_trace(doc, 2);
  json j = json::parse(write_chrome_trace(t, &doc, nullptr));
  CHECK(j.at("graphscope").at("exec_graph_id") == 7);
  CHECK(j.at("graphscope").at("replays") == 2);
  auto edges = flows(j, "graph edge");
  // 0->1, 0->2, 0->3, 1->4, 2->4, 3->4 in each of two replays.
  CHECK(edges.size() == 12);
  CHECK(j.at("graphscope").at("graph_edge_flows") == 12);
  std::multiset<std::pair<int, int>> seen;
  for (const auto& [id, ends] : edges) {
    CAPTURE(id);
    REQUIRE(!ends.first.is_null());
    REQUIRE(!ends.second.is_null());
    auto from = enclosing(j, ends.first), to = enclosing(j, ends.second);
    REQUIRE(from.size() == 1);
    REQUIRE(to.size() == 1);
    CHECK(from[0].at("args").at("correlation") == to[0].at("args").at("correlation"));
    seen.insert({from[0].at("args").at("node index").get<int>(), to[0].at("args").at("node index").get<int>()});
  }
  for (auto e : {std::pair{0, 1}, {0, 2}, {0, 3}, {1, 4}, {2, 4}, {3, 4}}) CHECK(seen.count(e) == 2);
  // Activities carry their node; the other graph's record joins nothing.
  for (const auto& e : events(j, "X")) {
    if (e.at("name") == "other_graph") {
      CHECK(!e.at("args").contains("node index"));
      continue;
    }
    int index = e.at("args").at("node index").get<int>();
    CHECK(e.at("args").at("node type") == std::string(to_string(doc.root.nodes[size_t(index)].type)));
  }
  // Still reads back as the same activities.
  Trace back = read_chrome_trace(write_chrome_trace(t, &doc, nullptr), "flows");
  REQUIRE(back.activities.size() == t.activities.size());
  for (size_t i = 0; i < t.activities.size(); ++i) check_same(t, t.activities[i], back, back.activities[i]);
}

TEST_CASE("flow arrows pass through nodes without activities (empty nodes)") {
  // 0 -> 1 (empty) -> 2, and 0 -> 2 directly is not an edge.
  GraphDocument doc = test::make_doc({{NodeType::kernel, "_Z1av", {}}, {NodeType::empty, "", {0}},
                                      {NodeType::kernel, "_Z1bv", {1}}});
  for (auto& n : doc.root.nodes) n.dependents.clear();  // edges come from the dependencies
  Trace t;
  for (uint32_t i : {0u, 2u}) {
    Activity a = make(ActivityKind::kernel, t.intern(doc.root.nodes[i].kernel_name), i * 1000, i * 1000 + 500);
    a.correlation = 1;
    a.graph_node_id = *doc.root.nodes[i].tools_id;
    t.activities.push_back(a);
  }
  json j = json::parse(write_chrome_trace(t, &doc, nullptr));
  auto edges = flows(j, "graph edge");
  REQUIRE(edges.size() == 1);
  // Kineto's convention: the demangled name, the mangled one in args.
  CHECK(enclosing(j, edges.begin()->second.first).at(0).at("name") == "a()");
  CHECK(enclosing(j, edges.begin()->second.first).at(0).at("args").at("mangled name") == "_Z1av");
  CHECK(enclosing(j, edges.begin()->second.second).at(0).at("name") == "b()");
}

TEST_CASE("with a profile report, fake dependencies are marked and drawn from the observed activity") {
  GraphDocument doc = test::fork_join();
  Trace t = fork_join_trace(doc, 2);
  ProfileReport r;
  r.exec_graph_id = 7;
  r.replays = 2;
  for (uint32_t i = 0; i < doc.root.nodes.size(); ++i) {
    NodeProfile p;
    p.index = i;
    r.nodes.push_back(p);
  }
  r.nodes[1].verdict = Verdict::real;
  r.nodes[1].observed_dependency = 0;
  r.nodes[2].verdict = Verdict::fake;
  r.nodes[2].observed_dependency = 1;
  r.nodes[2].blocking = true;
  r.nodes[2].blocker = 1;
  r.nodes[2].delay_us = 12.5;
  r.nodes[2].cause = "same channel";
  r.nodes[3].verdict = Verdict::fake;
  r.nodes[3].observed_dependency = 2;
  r.real = 1, r.fake = 2, r.blocking = 1;
  r.time_lost_us = 12.5;

  std::string text = write_chrome_trace(t, &doc, &r);
  json j = json::parse(text);
  CHECK(j.at("graphscope").at("fake") == 2);
  CHECK(j.at("graphscope").at("blocking") == 1);
  CHECK(j.at("graphscope").at("fake_dependency_flows") == 4);
  int marked = 0;
  for (const auto& e : events(j, "X")) {
    const auto& args = e.at("args");
    if (!args.contains("node index")) continue;
    int index = args.at("node index").get<int>();
    CAPTURE(index);
    if (index == 0 || index == 4) CHECK(!args.contains("verdict"));
    if (index == 1) CHECK(args.at("verdict") == "real");
    if (index == 2) {
      CHECK(args.at("verdict") == "fake");
      CHECK(args.at("observed dependency") == 1);
      CHECK(args.at("blocking") == true);
      CHECK(args.at("delay_us") == 12.5);
      CHECK(args.at("cause") == "same channel");
      ++marked;
    }
    if (index == 3) {
      CHECK(args.at("verdict") == "fake");
      CHECK(args.at("observed dependency") == 2);
      CHECK(args.at("blocking") == false);
      CHECK(args.at("cause").is_null());
      ++marked;
    }
  }
  CHECK(marked == 4);  // two nodes in two replays
  auto fakes = flows(j, "fake dependency");
  REQUIRE(fakes.size() == 4);
  std::multiset<std::pair<int, int>> seen;
  for (const auto& [id, ends] : fakes) {
    auto from = enclosing(j, ends.first), to = enclosing(j, ends.second);
    REQUIRE(from.size() == 1);
    REQUIRE(to.size() == 1);
    CHECK(from[0].at("args").at("correlation") == to[0].at("args").at("correlation"));
    seen.insert({from[0].at("args").at("node index").get<int>(), to[0].at("args").at("node index").get<int>()});
  }
  CHECK(seen == std::multiset<std::pair<int, int>>{{1, 2}, {1, 2}, {2, 3}, {2, 3}});
  // Graph edges and fake dependencies have distinct flow ids.
  std::set<uint64_t> ids;
  for (const auto& [id, ends] : flows(j, "graph edge")) ids.insert(id);
  for (const auto& [id, ends] : fakes) CHECK(ids.insert(id).second);
  CHECK(write_chrome_trace(t, &doc, &r) == text);  // deterministic
}

TEST_CASE("refuses hostile traces with one bad_input error naming the event and field") {
  // Not JSON, or not a trace.
  check_bad(R"({"traceEvents": [{"ph": "X", "cat": "kernel")", "unexpected end of input");
  check_bad("", "unexpected end of input");
  check_bad("{}", "no \"traceEvents\" array");
  check_bad("42", "is an integer, expected a Chrome trace");
  check_bad(R"("trace")", "is a string, expected a Chrome trace");
  check_bad("null", "is null, expected a Chrome trace");
  check_bad(R"({"traceEvents": {}})", "traceEvents: is an object, expected an array");
  check_bad(std::string(100000, '[') + std::string(100000, ']'), "nested deeper");
  check_bad(R"({"traceEvents": [1]})", "traceEvents[0]: is 1, expected an object");
  check_bad(R"([{"ph": "M"}, "x"])", "[1]: is the string \"x\", expected an object");
  // Wrong types and values in a device event.
  check_bad(kernel_event(R"("name": "k", "ts": "12", "dur": 1)"), "traceEvents[1].ts: is the string \"12\", expected a number");
  check_bad(kernel_event(R"("name": "k", "ts": 1, "dur": "5")"), "traceEvents[1].dur: is the string \"5\", expected a number");
  check_bad(kernel_event(R"("name": "k", "ts": 1, "dur": null)"), "traceEvents[1].dur: is null, expected a number");
  check_bad(kernel_event(R"("name": "k", "ts": 1, "dur": -5)"), "traceEvents[1].dur: is negative (-5)");
  check_bad(kernel_event(R"("name": "k", "ts": -0.5, "dur": 5)"), "traceEvents[1].ts: is negative (-0.5)");
  check_bad(kernel_event(R"("name": "k", "ts": 1e400, "dur": 5)"), "number out of range");
  check_bad(kernel_event(R"("name": "k", "ts": 1e300, "dur": 5)"), "traceEvents[1].ts: is 1e+300, out of range");
  check_bad(kernel_event(R"("name": "k", "ts": 1, "dur": 18446744073709551615)"), "traceEvents[1].dur: is 18446744073709551615, out of range");
  check_bad(kernel_event(R"("name": "k", "ts": NaN, "dur": 5)"), "unexpected character");
  check_bad(kernel_event(R"("name": "k", "ts": 1)"), "traceEvents[1].dur: is missing");
  check_bad(kernel_event(R"("ts": 1, "dur": 1)"), "traceEvents[1].name: is missing");
  check_bad(kernel_event(R"("name": 5, "ts": 1, "dur": 1)"), "traceEvents[1].name: is 5, expected a string");
  check_bad(kernel_event("\"name\": \"\xff\", \"ts\": 1, \"dur\": 1"), "invalid UTF-8");
  check_bad(kernel_event(R"("name": "k", "ts": 1, "dur": 1, "args": [])"), "traceEvents[1].args: is an array, expected an object");
  check_bad(kernel_event(R"("name": "k", "ts": 1, "dur": 1, "args": {"stream": "7"})"), "traceEvents[1].args.stream: is the string \"7\", expected an integer");
  check_bad(kernel_event(R"("name": "k", "ts": 1, "dur": 1, "args": {"device": -1})"), "traceEvents[1].args.device: is -1, expected a non-negative integer");
  check_bad(kernel_event(R"("name": "k", "ts": 1, "dur": 1, "args": {"correlation": 4294967296})"), "args.correlation: is 4294967296, larger than 4294967295");
  check_bad(kernel_event(R"("name": "k", "ts": 1, "dur": 1, "args": {"channel_type": 300})"), "args.channel_type: is 300, larger than 255");
  check_bad(kernel_event(R"("name": "k", "ts": 1, "dur": 1, "args": {"channel": 2.5})"), "args.channel: is 2.5, expected a non-negative integer");
  check_bad(kernel_event(R"("name": "k", "ts": 1, "dur": 1, "args": {"graph node id": "12a"})"), "args.graph node id: is the string \"12a\", expected a decimal integer");
  check_bad(kernel_event(R"("name": "k", "ts": 1, "dur": 1, "args": {"graph node id": "-1"})"), "expected a decimal integer");
  check_bad(kernel_event(R"("name": "k", "ts": 1, "dur": 1, "args": {"graph node id": "18446744073709551616"})"), "expected a decimal integer");
  check_bad(kernel_event(R"("name": "k", "ts": 1, "dur": 1, "args": {"graph id": true})"), "args.graph id: is a boolean, expected an integer");
  check_bad(kernel_event(R"("name": "k", "ts": 1, "dur": 1, "args": {"bytes": {}})"), "args.bytes: is an object, expected an integer");
  check_bad(R"({"traceEvents": [{"ph": 3, "cat": "kernel"}]})", "traceEvents[0].ph: is 3, expected a string");
  check_bad(R"({"traceEvents": [{"ph": "X", "cat": ["kernel"]}]})", "traceEvents[0].cat: is an array, expected a string");
  // graphscope's metadata.
  check_bad(R"({"graphscope": 3, "traceEvents": []})", "graphscope: is 3, expected an object");
  check_bad(R"({"graphscope": {}, "traceEvents": []})", "graphscope.schema: is missing");
  check_bad(R"({"graphscope": {"schema": "graphscope.trace/2"}, "traceEvents": []})", "graphscope.schema: is the string");
  check_bad(R"({"graphscope": {"schema": "graphscope.trace/1", "time_base_ns": "0"}, "traceEvents": []})",
            "graphscope.time_base_ns: is the string \"0\"");
}

TEST_CASE("accepts what Chrome traces may hold beyond device activities") {
  // Events without ph or cat, string pids, unknown categories, metadata
  // with odd values: none of it is read, none of it refused.
  std::string text = R"({"traceEvents": [
    {"name": "no phase"},
    {"ph": "X", "name": "no category", "ts": "not read"},
    {"ph": "X", "cat": "Trace", "pid": "Spans", "tid": "PyTorch Profiler", "ts": 1, "dur": 2, "name": "span"},
    {"ph": "B", "cat": "kernel", "name": "begin, not complete", "ts": "x"},
    {"ph": "X", "cat": "kernel", "name": "k", "ts": 0, "dur": 0}
  ], "displayTimeUnit": "ms", "otherData": {"a": [1, {"b": null}]}})";
  Trace t = read_chrome_trace(text, "lenient");
  CHECK(t.source == "chrome-trace");
  REQUIRE(t.activities.size() == 1);
  CHECK(t.activities[0].start_ns == 0);
  CHECK(t.activities[0].end_ns == 0);
}

TEST_CASE("interns names once and keeps kinds' spellings") {
  Trace t;
  CHECK(t.intern("a") == 0);
  CHECK(t.intern("b") == 1);
  CHECK(t.intern("a") == 0);
  t.names.push_back("c");  // filled directly: intern still finds it
  CHECK(t.intern("c") == 2);
  CHECK(t.intern("d") == 3);
  CHECK(t.names == std::vector<std::string>{"a", "b", "c", "d"});
  CHECK(to_string(ActivityKind::kernel) == "kernel");
  CHECK(to_string(ActivityKind::memcpy) == "memcpy");
  CHECK(to_string(ActivityKind::memset) == "memset");
  CHECK(to_string(CopyKind::htod) == "HtoD");
  CHECK(to_string(CopyKind::dtoh) == "DtoH");
  CHECK(to_string(CopyKind::none) == "none");
}

TEST_CASE("large traces are read on several threads with the same result and messages") {
  graphscope::Trace t;
  uint32_t k = t.intern("_Z6kernelv");
  for (uint32_t i = 0; i < 150000; ++i) {
    graphscope::Activity a;
    a.kind = graphscope::ActivityKind::kernel;
    a.name = k;
    a.start_ns = 1000ull * i;
    a.end_ns = 1000ull * i + 700;
    a.channel_type = 1;
    a.channel_id = i % 3;
    a.stream = 7;
    a.correlation = 1 + i / 1000;
    a.graph_id = 5;
    a.graph_node_id = (uint64_t(5) << 32) | (i % 1000);
    t.activities.push_back(a);
  }
  std::string text = graphscope::write_chrome_trace(t, nullptr, nullptr);
  REQUIRE(text.size() > (size_t(1) << 20));
  graphscope::Trace back = graphscope::read_chrome_trace(text, "big.json");
  REQUIRE(back.activities.size() == t.activities.size());
  for (size_t i = 0; i < t.activities.size(); i += 9973) {
    CHECK(back.activities[i].start_ns == t.activities[i].start_ns);
    CHECK(back.activities[i].graph_node_id == t.activities[i].graph_node_id);
    CHECK(back.activities[i].correlation == t.activities[i].correlation);
  }
  // A bad value deep in the file is reported with its index in the whole array.
  size_t at = text.find("\"dur\":", text.size() * 3 / 4);
  REQUIRE(at != std::string::npos);
  std::string bad = text;
  bad.replace(at, 6, "\"dur\":\"x\",\"was\":");
  try {
    graphscope::read_chrome_trace(bad, "bad.json");
    FAIL("accepted");
  } catch (const graphscope::Error& e) {
    CHECK(e.code() == graphscope::ExitCode::bad_input);
    CHECK(std::string(e.what()).find(".dur: is the string") != std::string::npos);
  }
  // A missing comma between events is a syntax error with a line number.
  std::string broken = text;
  size_t comma = broken.find("},", broken.size() / 2);
  broken[comma + 1] = ' ';
  CHECK_THROWS_AS(graphscope::read_chrome_trace(broken, "broken.json"), graphscope::Error);
}

TEST_CASE("an escaped key that spells traceEvents is that key, in large traces too") {
  // "trace\u0045vents" is "traceEvents", so the two arrays are one key twice:
  // refused, in a small file as in a large one (found by fuzz_trace_json,
  // blanks to 1 MiB).
  std::string text =
      R"({"trace\u0045vents": [{"ph": "X", "cat": "kernel", "name": "a", "ts": 1, "dur": 2}],)"
      R"( "traceEvents": [{"ph": "X", "cat": "kernel", "name": "b", "ts": 1, "dur": 2}]})";
  check_bad(text, "t.json (traceEvents: appears twice)");
  text.resize(size_t(1) << 20, ' ');
  check_bad(text, "t.json (traceEvents: appears twice)");
  // Alone, the escaped key is the events.
  std::string alone =
      R"({"trace\u0045vents": [{"ph": "X", "cat": "kernel", "name": "a", "ts": 1, "dur": 2}]})";
  alone.resize(size_t(1) << 20, ' ');
  graphscope::Trace big = graphscope::read_chrome_trace(alone, "big.json");
  REQUIRE(big.activities.size() == 1);
  CHECK(big.names[big.activities[0].name] == "a");
}

TEST_CASE("a key twice in a trace is refused with its path in the whole document") {
  check_bad(kernel_event(R"("name": "k", "ts": 1, "dur": 1, "dur": 2)"),
            "t.json (traceEvents[1].dur: appears twice)");
  check_bad(kernel_event(R"("name": "k", "ts": 1, "dur": 1, "args": {"stream": 7, "dur": 1, "dur": 1})"),
            "t.json (traceEvents[1].args.dur: appears twice)");
  check_bad(kernel_event(R"("name": "k", "ts": 1, "dur": 1,)"
                         R"( "args": {"Ext\u0065rnal id": 1, "External id": 1})"),
            "t.json (traceEvents[1].args.External id: appears twice)");
  check_bad(R"([{"ph": "M"}, {"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1, "name": "j"}])",
            "t.json ([1].name: appears twice)");
  check_bad(R"({"graphscope": {"schema": "graphscope.trace/1", "schema": "graphscope.trace/1"},)"
            R"( "traceEvents": []})",
            "t.json (graphscope.schema: appears twice)");
  check_bad(R"({"traceEvents": [], "otherData": {"a": 1}, "traceEvents": []})",
            "t.json (traceEvents: appears twice)");
  check_bad(R"({"traceEvents": [], "deviceProperties": [{"id": 0, "numSms": 132, "id": 1}]})",
            "t.json (deviceProperties[0].id: appears twice)");

  // A large trace is read in parts on several threads, its events one at a
  // time where the scanner bails: the path is still the event's index in
  // the whole array, whichever way it is read.
  Trace t;
  const uint32_t k = t.intern("_Z6kernelv");
  for (uint32_t i = 0; i < 150000; ++i) {
    Activity a = make(ActivityKind::kernel, k, 1000ull * i, 1000ull * i + 700);
    a.stream = 7;
    a.correlation = 1 + i;
    t.activities.push_back(a);
  }
  std::string text = write_chrome_trace(t, nullptr, nullptr);
  const size_t at = text.find("\"stream\":", text.size() * 3 / 4);
  REQUIRE(at != std::string::npos);
  text.insert(at, "\"stream\": 8, ");
  // The event's index: events before it, each with one "ph".
  size_t index = 0;
  for (size_t p = text.find("\"ph\""); p < at; p = text.find("\"ph\"", p + 1)) ++index;
  REQUIRE(index > 100000);
  const std::string expected =
      "big.json (traceEvents[" + std::to_string(index - 1) + "].args.stream: appears twice)";
  auto message = [&](unsigned threads) {
    try {
      if (threads) detail::read_chrome_trace_split(text, "big.json", threads);
      else read_chrome_trace(text, "big.json");
    } catch (const Error& e) {
      CHECK(e.code() == ExitCode::bad_input);
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  for (unsigned threads : {0u, 1u, 3u, 8u}) {
    CAPTURE(threads);
    CHECK(message(threads) == expected);
  }
}

TEST_CASE("the trace written follows Kineto: tid the stream, grid, block, shared memory, context, base time") {
  Trace t;
  Activity a;
  a.kind = ActivityKind::kernel;
  a.name = t.intern("_Z5scalePfif");
  a.start_ns = 5000, a.end_ns = 7000;
  a.stream = 7, a.correlation = 42, a.context = 1;
  a.grid[0] = 8, a.grid[1] = 1, a.grid[2] = 4;
  a.block[0] = 128, a.block[1] = 1, a.block[2] = 1;
  a.shared_bytes = 20480, a.has_shared = true;
  t.activities.push_back(a);
  GraphLaunch l;
  l.correlation = 42, l.start_ns = 1000, l.end_ns = 3000;
  t.launches.push_back(l);
  const std::string text = write_chrome_trace(t, nullptr, nullptr);
  json j = json::parse(text);
  CHECK(j.at("baseTimeNanoseconds") == 1000);
  const auto x = events(j, "X");
  REQUIRE(x.size() == 2);
  const json& k = x[0].at("cat") == "kernel" ? x[0] : x[1];
  CHECK(k.at("name") == "scale(float*, int, float)");
  CHECK(k.at("tid") == 7);
  CHECK(k.at("ts") == 4.0);
  CHECK(k.at("args").at("grid") == json::array({8, 1, 4}));
  CHECK(k.at("args").at("block") == json::array({128, 1, 1}));
  CHECK(k.at("args").at("shared memory") == 20480);
  CHECK(k.at("args").at("context") == 1);
  CHECK(k.at("args").at("mangled name") == "_Z5scalePfif");
  const json& launch = x[0].at("cat") == "kernel" ? x[1] : x[0];
  CHECK(launch.at("cat") == "cuda_runtime");
  CHECK(launch.at("name") == "cudaGraphLaunch");
  CHECK(launch.at("args").at("correlation") == 42);
  // And it reads back as it was.
  Trace back = read_chrome_trace(text, "kineto");
  REQUIRE(back.activities.size() == 1);
  CHECK(back.names[back.activities[0].name] == "_Z5scalePfif");
  CHECK(back.activities[0].start_ns == 5000);
  CHECK(back.activities[0].has_shared);
  CHECK(back.activities[0].grid[2] == 4);
  REQUIRE(back.launches.size() == 1);
  CHECK(back.launches[0].start_ns == 1000);
  CHECK(back.launches[0].correlation == 42);
}

TEST_CASE("SM counts: Kineto's deviceProperties are read, graphscope's devices round-trip, bad ones are refused") {
  Trace kineto = read_chrome_trace(test::read_data("torch/torch_four_branch.kineto.json"), "four_branch");
  REQUIRE(kineto.devices.size() == 1);
  CHECK(kineto.devices[0].device == 0);
  CHECK(kineto.sm_count(0) == 132);  // the H100 it was recorded on
  CHECK(kineto.sm_count(1) == 0);
  Trace t = hand_built();
  t.devices = {{0, 132}, {3, 78}};
  const std::string text = write_chrome_trace(t, nullptr, nullptr);
  CHECK(text.find(R"("devices": [{"device": 0, "sm_count": 132}, {"device": 3, "sm_count": 78}])") != std::string::npos);
  const Trace back = read_chrome_trace(text, "round.json");
  CHECK(back.sm_count(0) == 132);
  CHECK(back.sm_count(3) == 78);
  CHECK(write_chrome_trace(back, nullptr, nullptr).find(R"("sm_count": 78)") != std::string::npos);
  const std::string head = R"({"graphscope": {"schema": "graphscope.trace/1", "time_base_ns": 0, "activities": 0, "lanes": 0, )";
  check_bad(head + R"("devices": {}}, "traceEvents": []})", "graphscope.devices: is an object, expected an array");
  check_bad(head + R"("devices": [{"device": 0}]}, "traceEvents": []})", "graphscope.devices[0].sm_count: is missing");
  check_bad(head + R"("devices": [{"device": -1, "sm_count": 2}]}, "traceEvents": []})", "graphscope.devices[0].device");
}

TEST_CASE("a kernel's SM footprint: its blocks over the SMs, at most 1, 0 without geometry") {
  Activity a;
  a.kind = ActivityKind::kernel;
  CHECK(sm_footprint(a, 132) == 0);
  a.grid[0] = 66, a.grid[1] = 1, a.grid[2] = 1, a.block[0] = 128, a.block[1] = 1, a.block[2] = 1;
  CHECK(sm_footprint(a, 132) == doctest::Approx(0.5));
  CHECK(sm_footprint(a, 0) == 0);
  a.grid[1] = 4;
  CHECK(sm_footprint(a, 132) == 1);
  a.kind = ActivityKind::memcpy;
  CHECK(sm_footprint(a, 132) == 0);
}
