#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <random>

#include "graph_builder.h"
#include "test_data.h"
#include "inspect/formats/load.h"
#include "inspect/core/error.h"
#include "inspect/formats/chrome_trace.h"
#include "inspect/formats/load.h"
#include "inspect/analysis/profile.h"
#include "inspect/formats/profile_json.h"
#include "inspect/render/delay_scale.h"
#include "inspect/render/profile_report.h"
#include "inspect/analysis/simulate.h"
#include "test_data.h"

using namespace graphscope;
using graphscope::test::make_doc;
using graphscope::test::Spec;

namespace {

constexpr uint32_t kExec = 7;

// Hand-built records: the activity source of the analysis, without a GPU.
struct TraceBuilder {
  Trace t;
  TraceBuilder& act(uint32_t node, double start_us, double end_us, uint32_t channel, uint32_t replay = 1,
                    ActivityKind kind = ActivityKind::kernel, CopyKind copy = CopyKind::none,
                    uint8_t channel_type = 1) {
    Activity a;
    a.kind = kind;
    a.copy = copy;
    a.name = t.intern("k" + std::to_string(node));
    a.start_ns = uint64_t(start_us * 1000 + 0.5);
    a.end_ns = uint64_t(end_us * 1000 + 0.5);
    a.channel_id = channel;
    a.channel_type = channel_type;
    a.stream = 100 + node;
    a.correlation = replay;
    a.graph_id = kExec;
    a.graph_node_id = (uint64_t(kExec) << 32) | node;
    t.activities.push_back(a);
    return *this;
  }
  // A record of work outside the graph.
  TraceBuilder& other(const char* name, double start_us, double end_us, uint32_t channel) {
    Activity a;
    a.name = t.intern(name);
    a.start_ns = uint64_t(start_us * 1000 + 0.5);
    a.end_ns = uint64_t(end_us * 1000 + 0.5);
    a.channel_id = channel;
    a.channel_type = 1;
    t.activities.push_back(a);
    return *this;
  }
};

// 0 -> {1, 2} -> 3
GraphDocument fork_join2() {
  return make_doc({{NodeType::kernel, "_Z1av", {}},
                   {NodeType::kernel, "_Z1bv", {0}},
                   {NodeType::kernel, "_Z1cv", {0}},
                   {NodeType::kernel, "_Z1dv", {1, 2}}},
                  kExec);
}

}  // namespace

TEST_CASE("branches serialized on one channel are a blocking fake dependency") {
  TraceBuilder b;
  b.act(0, 0, 10, 0).act(1, 10, 20, 0).act(2, 20.2, 30, 0).act(3, 30.2, 40, 0);
  ProfileReport r = analyze_profile(fork_join2(), b.t, {});
  CHECK(r.replays == 1);
  CHECK(r.nodes[0].verdict == Verdict::none);
  CHECK(r.nodes[1].verdict == Verdict::real);
  CHECK(r.nodes[1].observed_dependency == 0u);
  const auto& n2 = r.nodes[2];
  CHECK(n2.ready_us == doctest::Approx(10));
  CHECK(n2.delay_us == doctest::Approx(10.2));
  CHECK(n2.verdict == Verdict::fake);
  CHECK(n2.blocking);
  CHECK(n2.blocker == 1u);
  CHECK(n2.observed_dependency == 1u);
  CHECK(n2.cause == "same channel");
  CHECK(r.nodes[3].verdict == Verdict::real);
  CHECK(r.nodes[3].ready_us == doctest::Approx(30));
  CHECK(r.real == 2);
  CHECK(r.fake == 1);
  CHECK(r.blocking == 1);
  CHECK(r.none == 1);
  // Its cost: from ready to its blocker's end (the 0.2 us after it are latency).
  CHECK(n2.fake_wait_us == doctest::Approx(10));
  CHECK(n2.latency_us == doctest::Approx(0.2));
  CHECK(n2.wait == AccountCategory::fake_same_channel);
  CHECK(r.time_lost_us == doctest::Approx(10));
  CHECK(r.makespan_us == doctest::Approx(40));
  CHECK_FALSE(n2.lane_busy);  // nothing else ran on channel 0 when it started
  CHECK(r.lane_busy == 0);
}

TEST_CASE("a delayed node that starts while its lane runs other work is lane busy, not blocking") {
  // 0 -> {1, 2, 3}: the branches are dispatched one by one onto channel 0
  // and overlap; 3's blocker (1) ended first, but 2 still ran when 3 started.
  auto doc = make_doc({{NodeType::kernel, "_Z1av", {}},
                       {NodeType::kernel, "_Z1bv", {0}},
                       {NodeType::kernel, "_Z1cv", {0}},
                       {NodeType::kernel, "_Z1dv", {0}}},
                      kExec);
  TraceBuilder b;
  b.act(0, 0, 1, 0).act(1, 8, 10, 0).act(2, 9, 12, 0).act(3, 11, 13, 0);
  ProfileReport r = analyze_profile(doc, b.t, {});
  const auto& n3 = r.nodes[3];
  CHECK(n3.delay_us == doctest::Approx(10));
  CHECK_FALSE(n3.blocking);  // the account's rule: the lane was not holding it back
  CHECK(n3.verdict == Verdict::fake);
  CHECK(n3.blocker == 1u);
  CHECK(n3.cause == "same channel");
  CHECK(n3.lane_busy);
  CHECK(n3.fake_wait_us == 0);
  // Ready at 1; 7 us with nothing running (latency), then 1 and 2 ran.
  CHECK(n3.latency_us == doctest::Approx(7));
  CHECK(n3.concurrent_us == doctest::Approx(3));
  CHECK(r.blocking == 0);
  CHECK(r.lane_busy == 1);
  CHECK(format_profile(r, doc).find("ordering only (lane busy: dispatch), delay 10.00 us: dependency latency 7.00 us, "
                                    "concurrent work 3.00 us") != std::string::npos);
}

TEST_CASE("a fake dependency under the threshold is ordering only") {
  // 0 -> 2, and 1 a root: 1 runs first on 2's channel, 2 starts 0.5 us after its real predecessor.
  auto doc = make_doc({{NodeType::kernel, "_Z1av", {}}, {NodeType::kernel, "_Z1bv", {}}, {NodeType::kernel, "_Z1cv", {0}}},
                      kExec);
  TraceBuilder b;
  b.act(1, 0, 5, 1).act(0, 0, 9, 2).act(2, 9.5, 12, 1);
  ProfileReport r = analyze_profile(doc, b.t, {});
  CHECK(r.nodes[2].delay_us == doctest::Approx(0.5));
  CHECK(r.nodes[2].observed_dependency == 1u);  // its lane predecessor
  CHECK(r.nodes[2].verdict == Verdict::fake);
  CHECK_FALSE(r.nodes[2].blocking);
  CHECK(r.nodes[2].cause.empty());
  CHECK(r.blocking == 0);
  CHECK(r.time_lost_us == 0);
}

TEST_CASE("independent copies of one direction on different channels block through the copy engine") {
  auto doc = make_doc({{NodeType::memcpy, "", {}}, {NodeType::memcpy, "", {}}}, kExec);
  TraceBuilder b;
  b.act(0, 0, 1000, 8, 1, ActivityKind::memcpy, CopyKind::htod, 2)
      .act(1, 1001.5, 2000, 9, 1, ActivityKind::memcpy, CopyKind::htod, 2);
  ProfileReport r = analyze_profile(doc, b.t, {});
  CHECK(r.nodes[1].delay_us == doctest::Approx(1001.5));
  CHECK(r.nodes[1].blocker == 0u);
  CHECK(r.nodes[1].verdict == Verdict::fake);
  CHECK(r.nodes[1].blocking);
  CHECK(r.nodes[1].cause == "copy engine");
}

TEST_CASE("a copy after one in the other direction is ordered by it, cause other, but waited for concurrent work") {
  auto doc = make_doc({{NodeType::memcpy, "", {}}, {NodeType::memcpy, "", {}}}, kExec);
  TraceBuilder b;
  b.act(0, 0, 100, 8, 1, ActivityKind::memcpy, CopyKind::htod, 2)
      .act(1, 101, 200, 9, 1, ActivityKind::memcpy, CopyKind::dtoh, 2);
  ProfileReport r = analyze_profile(doc, b.t, {});
  CHECK(r.nodes[1].blocker == 0u);
  CHECK(r.nodes[1].cause == "other");
  CHECK(r.nodes[1].verdict == Verdict::fake);
  // Another engine's copy: no fake wait, in the account as here.
  CHECK_FALSE(r.nodes[1].blocking);
  CHECK(r.nodes[1].concurrent_us == doctest::Approx(100));
  CHECK(r.account.part(AccountCategory::fake_copy_engine) == 0);
}

TEST_CASE("a real dependency that delays is not blocking") {
  // 0 -> 1 on different channels, 1 starts 8 us after 0 ends (launch latency, say).
  auto doc = make_doc({{NodeType::kernel, "_Z1av", {}}, {NodeType::kernel, "_Z1bv", {0}}}, kExec);
  TraceBuilder b;
  b.act(0, 0, 10, 0).act(1, 18, 20, 1);
  ProfileReport r = analyze_profile(doc, b.t, {});
  CHECK(r.nodes[1].delay_us == doctest::Approx(8));
  // Nothing ended within the tolerance before its start: no blocker, and no
  // earlier activity on its own lane.
  CHECK_FALSE(r.nodes[1].blocker);
  CHECK(r.nodes[1].verdict == Verdict::none);
  CHECK_FALSE(r.nodes[1].blocking);
}

TEST_CASE("the blocker on the node's own lane is preferred in a tie") {
  // 2 depends on 0 (ends 10); 1 (other lane) and 3 (own lane) both end at 20.
  auto doc = make_doc({{NodeType::kernel, "_Z1av", {}},
                       {NodeType::kernel, "_Z1bv", {}},
                       {NodeType::kernel, "_Z1cv", {0}},
                       {NodeType::kernel, "_Z1dv", {}}},
                      kExec);
  TraceBuilder b;
  b.act(0, 0, 10, 0).act(1, 5, 20, 5).act(3, 6, 20, 1).act(2, 20.5, 30, 1);
  ProfileReport r = analyze_profile(doc, b.t, {});
  CHECK(r.nodes[2].blocker == 3u);
  CHECK(r.nodes[2].cause == "same channel");
}

TEST_CASE("zero-length activities and thresholds take options") {
  TraceBuilder b;
  b.act(0, 0, 0, 0).act(1, 0, 10, 0).act(2, 13, 13, 0).act(3, 13, 14, 0);
  ProfileOptions o;
  o.threshold_us = 1;
  o.tolerance_us = 4;
  ProfileReport r = analyze_profile(fork_join2(), b.t, o);
  CHECK(r.nodes[2].delay_us == doctest::Approx(13));
  CHECK(r.nodes[2].blocker == 1u);  // ended 3 us before, within the 4 us tolerance
  CHECK(r.nodes[2].blocking);
  CHECK(r.nodes[3].ready_us == doctest::Approx(13));
}

TEST_CASE("records matching no node are counted, never joined by guess") {
  TraceBuilder b;
  b.act(0, 0, 10, 0).act(1, 10, 20, 0).act(2, 20, 30, 1).act(3, 30, 40, 0).act(42, 5, 6, 3);
  b.other("memcpy_of_someone_else", 1, 2, 4);
  ProfileReport r = analyze_profile(fork_join2(), b.t, {});
  CHECK(r.unmatched_records == 1);
  CHECK(r.other_records == 1);
  CHECK(r.nodes_without_records == 0);
}

TEST_CASE("a node with no record passes its predecessors' end on") {
  auto doc = make_doc({{NodeType::kernel, "_Z1av", {}}, {NodeType::host, "", {0}}, {NodeType::kernel, "_Z1cv", {1}}},
                      kExec);
  TraceBuilder b;
  b.act(0, 0, 10, 0).act(2, 15, 20, 0);
  ProfileReport r = analyze_profile(doc, b.t, {});
  CHECK(r.nodes_without_records == 1);
  CHECK(r.nodes[1].replays == 0);
  CHECK(r.nodes[1].verdict == Verdict::none);
  CHECK(r.nodes[2].ready_us == doctest::Approx(10));
  CHECK(r.nodes[2].delay_us == doctest::Approx(5));
  CHECK(r.nodes[2].verdict == Verdict::real);  // lane predecessor 0 reaches 2 through the host node
}

TEST_CASE("several replays give medians, each replay timed from its own start") {
  TraceBuilder b;
  double base[] = {0, 1000, 2000};
  double delay[] = {10, 2, 12};
  for (int k = 0; k < 3; ++k) {
    double t = base[k];
    b.act(0, t, t + 10, 0, uint32_t(k + 1)).act(1, t + 10, t + 20, 1, uint32_t(k + 1));
    b.act(2, t + 10 + delay[k], t + 30, 2, uint32_t(k + 1)).act(3, t + 31, t + 40, 0, uint32_t(k + 1));
  }
  ProfileReport r = analyze_profile(fork_join2(), b.t, {});
  CHECK(r.replays == 3);
  CHECK(r.nodes[2].delay_us == doctest::Approx(10));
  CHECK(r.nodes[2].start_us == doctest::Approx(20));
  CHECK(r.nodes[2].replays == 3);
  CHECK(r.makespan_us == doctest::Approx(40));
}

TEST_CASE("without correlation ids a node's k-th record belongs to replay k") {
  TraceBuilder b;
  for (int k = 0; k < 2; ++k) {
    double t = 1000.0 * k;
    b.act(0, t, t + 10, 0, 0).act(1, t + 10, t + 20, 0, 0).act(2, t + 20, t + 30, 1, 0).act(3, t + 30, t + 40, 0, 0);
  }
  ProfileReport r = analyze_profile(fork_join2(), b.t, {});
  CHECK(r.replays == 2);
  CHECK(r.nodes[3].start_us == doctest::Approx(30));
}

TEST_CASE("critical path follows measured durations") {
  TraceBuilder b;
  b.act(0, 0, 10, 0).act(1, 10, 15, 1).act(2, 10, 40, 2).act(3, 40, 45, 0);
  ProfileReport r = analyze_profile(fork_join2(), b.t, {});
  CHECK(r.critical_path == std::vector<uint32_t>{0, 2, 3});
  CHECK(r.critical_path_us == doctest::Approx(45));
  CHECK(r.makespan_us == doctest::Approx(45));
}

TEST_CASE("the exec graph is chosen by the document, the option, or the only one in the trace") {
  TraceBuilder b;
  b.act(0, 0, 10, 0);
  auto doc = fork_join2();
  doc.exec_graph_id = 99;  // not in the trace
  CHECK(analyze_profile(doc, b.t, {}).exec_graph_id == kExec);  // the only one there
  Activity other = b.t.activities[0];
  other.graph_id = 8;
  other.graph_node_id = (uint64_t(8) << 32);
  b.t.activities.push_back(other);
  try {
    analyze_profile(doc, b.t, {});
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::usage);
    CHECK(std::string(e.what()).find("7 (1 records), 8 (1 records)") != std::string::npos);
  }
  ProfileOptions o;
  o.exec_graph_id = 8;
  CHECK(analyze_profile(doc, b.t, o).exec_graph_id == 8u);
  o.exec_graph_id = 12;
  CHECK_THROWS_AS(analyze_profile(doc, b.t, o), Error);
  Trace empty;
  CHECK_THROWS_AS(analyze_profile(doc, empty, {}), Error);
}

TEST_CASE("an activity outside the graph can be the observed dependency") {
  TraceBuilder b;
  b.act(0, 0, 10, 0).other("someone_elses_kernel", 10, 20, 1).act(1, 20.5, 30, 1);
  auto doc = make_doc({{NodeType::kernel, "_Z1av", {}}, {NodeType::kernel, "_Z1bv", {0}}}, kExec);
  ProfileReport r = analyze_profile(doc, b.t, {});
  CHECK(r.nodes[1].observed_other == "someone_elses_kernel");
  CHECK_FALSE(r.nodes[1].observed_dependency);
  CHECK(r.nodes[1].verdict == Verdict::fake);
  CHECK(r.nodes[1].blocking);
}

TEST_CASE("the profile report JSON has the keys SPEC.md lists") {
  TraceBuilder b;
  b.act(0, 0, 10, 0).act(1, 10, 20, 0).act(2, 20.2, 30, 0).act(3, 30.2, 40, 0);
  auto doc = fork_join2();
  ProfileReport r = analyze_profile(doc, b.t, {});
  auto j = nlohmann::json::parse(write_profile_json(r, doc));
  CHECK(j["schema"] == "graphscope.profile/1");
  for (const char* k : {"real", "fake", "blocking", "time_lost_us"}) CHECK_MESSAGE(j["summary"].contains(k), k);
  REQUIRE(j["nodes"].size() == 4);
  for (const auto& n : j["nodes"])
    for (const char* k : {"index", "tools_id", "kernel_name", "start_us", "end_us", "ready_us", "delay_us",
                          "observed_dependency", "verdict", "blocking", "blocker", "cause"})
      CHECK_MESSAGE(n.contains(k), k);
  CHECK(j["nodes"][2]["verdict"] == "fake");
  CHECK(j["nodes"][2]["blocker"] == 1);
  CHECK(j["summary"]["time_lost_us"].get<double>() == doctest::Approx(10));  // its fake wait
  CHECK(j["nodes"][2]["fake_wait_us"].get<double>() == doctest::Approx(10));
  CHECK(j["nodes"][2]["wait"] == "fake_same_channel");
  std::string text = format_profile(r, doc);
  CHECK(text.find("1 real") == std::string::npos);
  CHECK(text.find("2 real, 1 fake (1 blocking)") != std::string::npos);
  CHECK(text.find("fake dependencies") != std::string::npos);
}

TEST_CASE("records of the same graph from an earlier replay are not a dependency") {
  TraceBuilder b;
  // Replay 1 ends with node 3 on channel 0; replay 2's root starts right after on channel 0.
  b.act(0, 0, 10, 0, 1).act(1, 10, 20, 0, 1).act(2, 10, 20, 1, 1).act(3, 20, 30, 0, 1);
  b.act(0, 30.1, 40, 0, 2).act(1, 40, 50, 0, 2).act(2, 40, 50, 1, 2).act(3, 50, 60, 0, 2);
  ProfileReport r = analyze_profile(fork_join2(), b.t, {});
  CHECK(r.nodes[0].verdict == Verdict::none);
  CHECK_FALSE(r.nodes[0].observed_dependency);
}

TEST_CASE("the picture overlay colours nodes by delay and says the verdict") {
  TraceBuilder b;
  b.act(0, 0, 10, 0).act(1, 10, 20, 0).act(2, 20.2, 30, 0).act(3, 30.2, 40, 0);
  auto doc = fork_join2();
  ProfileReport r = analyze_profile(doc, b.t, {});
  DotOverlay o = profile_overlay(r);
  REQUIRE(o.fill.size() == 4);
  CHECK(o.fill[0] == "#ffffff");  // no delay
  // 10.2 us against the default threshold of 5 us: past twice the threshold.
  CHECK(o.fill[2] == kDelayBands[3].fill);
  CHECK(o.rank[2] == 3);
  CHECK(o.note[2] == "delay 10.20 us, fake (blocking: same channel)");
  std::string dot = write_dot(doc, &o);
  CHECK(dot.find(kDelayBands[3].fill) != std::string::npos);
  CHECK(dot.find("delay 10.20 us, fake (blocking: same channel)") != std::string::npos);
}

TEST_CASE("delay colours mean the same on every graph: bands of the threshold, not of the worst delay") {
  // The same delay gets the same band whatever else the graph holds.
  CHECK(delay_band(0.0, 5.0) == 0);
  CHECK(delay_band(0.38, 5.0) == 0);  // a healthy Llama's delays stay white
  CHECK(delay_band(2.49, 5.0) == 0);
  CHECK(delay_band(2.5, 5.0) == 1);
  CHECK(delay_band(4.99, 5.0) == 1);
  CHECK(delay_band(5.0, 5.0) == 2);
  CHECK(delay_band(10.0, 5.0) == 3);
  CHECK(delay_band(19.9, 5.0) == 3);
  CHECK(delay_band(20.0, 5.0) == 4);
  CHECK(delay_band(1e6, 5.0) == 4);
  CHECK(delay_band(0.1, 0.0) == kDelayBandCount - 1);
  CHECK(delay_band(0.0, 0.0) == 0);
  for (size_t k = 1; k < kDelayBandCount; ++k) {
    CHECK(kDelayBands[k].from > kDelayBands[k - 1].from);
    CHECK(luminance(kDelayBands[k].fill) < luminance(kDelayBands[k - 1].fill));  // stronger is darker
  }
  // Every fill's label colour reads on it (WCAG AA for normal text: 4.5).
  for (const DelayBand& b : kDelayBands) CHECK(contrast_ratio(b.fill, text_on(b.fill)) >= 4.5);
  CHECK(contrast_ratio(kNoRecordFill, text_on(kNoRecordFill)) >= 4.5);
  CHECK(std::string(text_on(kDelayBands[0].fill)) == "#000000");
  CHECK(std::string(text_on(kDelayBands[kDelayBandCount - 1].fill)) == "#ffffff");
}

TEST_CASE("the report does not depend on the order of the records") {
  // 600 nodes, 4 replays, on two channels, with other work on a third: each
  // node waits for the one two before it, so most are delayed and the
  // neighbour on the other channel often blocks. No two records of a kind
  // end (or start) at once, so the order in the trace breaks no tie. In time
  // order the searches find their lists sorted; shuffled, they sort them
  // (over 1024 records to a lane: the radix sort).
  std::vector<Spec> specs;
  for (uint32_t i = 0; i < 600; ++i) {
    specs.push_back({NodeType::kernel, "_Z1kv", {}});
    if (i >= 2) specs.back().deps.push_back(i - 2);
  }
  auto doc = make_doc(specs, kExec);
  for (bool correlated : {true, false}) {
    TraceBuilder b;
    for (uint32_t k = 0; k < 4; ++k)
      for (uint32_t i = 0; i < 600; ++i) {
        double start = 100000.0 * k + 10 * i + 0.1 * (i % 7);
        b.act(i, start, start + 5 + i % 5, i % 2, correlated ? k + 1 : 0);
        if (i % 50 == 0) b.other("copy_elsewhere", start + 1.05, start + 2.05, 2);
      }
    std::sort(b.t.activities.begin(), b.t.activities.end(),
              [](const Activity& x, const Activity& y) { return x.start_ns < y.start_ns; });
    ProfileReport in_order = analyze_profile(doc, b.t, {});
    CHECK(in_order.replays == 4);
    CHECK(std::count_if(in_order.nodes.begin(), in_order.nodes.end(),
                        [](const NodeProfile& p) { return p.blocker && p.verdict == Verdict::fake; }) > 100);
    std::shuffle(b.t.activities.begin(), b.t.activities.end(), std::mt19937(11));
    ProfileReport shuffled = analyze_profile(doc, b.t, {});
    CHECK(write_profile_json(shuffled, doc) == write_profile_json(in_order, doc));
    CHECK(format_profile(shuffled, doc) == format_profile(in_order, doc));
  }
}

TEST_CASE("a blocker on another lane is the latest to end, however the device is searched") {
  // 2 waits for nothing yet starts at 12: 0 (channel 1) and 1 (channel 2)
  // ended within the tolerance before, 1 later. Few records on the device:
  // searched in one list of them by end; with many records elsewhere on
  // the device (channel 3), lane by lane. Both find 1; and when 0 and 1 end
  // at once, the one recorded later.
  auto doc = make_doc({{NodeType::kernel, "_Z1av", {}}, {NodeType::kernel, "_Z1bv", {}}, {NodeType::kernel, "_Z1cv", {}}},
                      kExec);
  for (bool tie : {false, true})
    for (size_t padding : {0, 200}) {
      TraceBuilder b;
      b.act(0, 0, tie ? 11 : 10, 1).act(1, 0, 11, 2).act(2, 12, 20, 0);
      for (size_t k = 0; k < padding; ++k) {
        double start = 1000 + 10.0 * double(k);
        b.other("elsewhere", start, start + 5, 3);
      }
      ProfileReport r = analyze_profile(doc, b.t, {});
      CAPTURE(tie);
      CAPTURE(padding);
      CHECK(r.nodes[2].delay_us == doctest::Approx(12));
      CHECK(r.nodes[2].blocker == 1u);
      CHECK(r.nodes[2].cause == "other");
      // Another lane's work ran while it waited: concurrent work, as the
      // account says, not a wait behind its blocker.
      CHECK_FALSE(r.nodes[2].blocking);
      CHECK(r.nodes[2].concurrent_us == doctest::Approx(11));
      CHECK(r.other_records == padding);
    }
}

// ---------------------------------------------------------------------------
// The makespan account (account.h): every nanosecond once.

namespace {

int64_t parts_sum(const MakespanAccount& a) {
  int64_t s = 0;
  for (const AccountPart& p : a.parts) s += p.ns;
  return s;
}

}  // namespace

TEST_CASE("account: a chain is its kernels' work and the gaps between them") {
  TraceBuilder b;
  b.act(0, 0, 10, 0).act(1, 10.5, 20, 0).act(2, 20.3, 30, 0);
  GraphDocument doc = make_doc({{NodeType::kernel, "_Z1av", {}}, {NodeType::kernel, "_Z1bv", {0}}, {NodeType::kernel, "_Z1cv", {1}}}, kExec);
  const MakespanAccount& a = analyze_profile(doc, b.t, {}).account;
  REQUIRE(a.replays == 1);
  CHECK(a.makespan_ns == 30000);
  CHECK(parts_sum(a) == a.makespan_ns);
  CHECK(a.part(AccountCategory::kernel) == 29200);
  CHECK(a.part(AccountCategory::latency) == 800);
  CHECK(a.chain_nodes == 3);
  CHECK(a.nodes[1].work_ns == 9500);
  CHECK(a.nodes[1].wait_ns == 500);
  CHECK(a.nodes[1].wait == AccountCategory::latency);
}

TEST_CASE("account: a branch held back on its channel by its sibling is a fake wait, same channel") {
  TraceBuilder b;
  b.act(0, 0, 10, 0).act(1, 10, 20, 0).act(2, 20.2, 30, 0).act(3, 30.2, 40, 0);
  const MakespanAccount& a = analyze_profile(fork_join2(), b.t, {}).account;
  CHECK(a.makespan_ns == 40000);
  CHECK(parts_sum(a) == 40000);
  CHECK(a.part(AccountCategory::fake_same_channel) == 10000);  // ready at 10, its sibling ended at 20
  CHECK(a.part(AccountCategory::latency) == 400);
  CHECK(a.part(AccountCategory::kernel) == 29600);
  CHECK(a.nodes[2].on_chain);
  CHECK(!a.nodes[1].on_chain);  // the walk goes on along the real dependency, not the fake one
  CHECK(a.nodes[2].wait == AccountCategory::fake_same_channel);
}

TEST_CASE("account: copies on two channels of one copy engine are a fake wait, copy engine") {
  TraceBuilder b;
  b.act(0, 0, 100, 10, 1, ActivityKind::memcpy, CopyKind::htod, 2)
      .act(1, 100.5, 200, 11, 1, ActivityKind::memcpy, CopyKind::htod, 2);
  GraphDocument doc = make_doc({{NodeType::memcpy, "", {}}, {NodeType::memcpy, "", {}}}, kExec);
  const MakespanAccount& a = analyze_profile(doc, b.t, {}).account;
  CHECK(parts_sum(a) == 200000);
  CHECK(a.part(AccountCategory::memcpy) == 99500);
  CHECK(a.part(AccountCategory::fake_copy_engine) == 100000);
  CHECK(a.part(AccountCategory::latency) == 500);
  CHECK(a.chain_nodes == 1);
}

TEST_CASE("account: a node that starts late while the graph's other branch runs is concurrent work") {
  // 0 -> 1 -> 3, 0 -> 2; 2 is long, on another channel; 3 waits 14 us after 1.
  TraceBuilder b;
  b.act(0, 0, 10, 0).act(1, 10, 11, 0).act(2, 10, 30, 1).act(3, 25, 40, 0);
  GraphDocument doc = make_doc({{NodeType::kernel, "_Z1av", {}},
                                {NodeType::kernel, "_Z1bv", {0}},
                                {NodeType::kernel, "_Z1cv", {0}},
                                {NodeType::kernel, "_Z1dv", {1}}},
                               kExec);
  const MakespanAccount& a = analyze_profile(doc, b.t, {}).account;
  CHECK(parts_sum(a) == 40000);
  CHECK(a.part(AccountCategory::concurrent) == 14000);
  CHECK(a.part(AccountCategory::kernel) == 26000);
  CHECK(a.part(AccountCategory::latency) == 0);
  CHECK(!a.nodes[2].on_chain);
  // Only partly covered: the rest of the gap is latency.
  TraceBuilder c;
  c.act(0, 0, 10, 0).act(1, 10, 11, 0).act(2, 10, 15, 1).act(3, 25, 40, 0);
  const MakespanAccount& d = analyze_profile(doc, c.t, {}).account;
  CHECK(parts_sum(d) == 40000);
  CHECK(d.part(AccountCategory::concurrent) == 4000);
  CHECK(d.part(AccountCategory::latency) == 10000);
}

TEST_CASE("account: a host function's time, which has no record, is the host nodes' part") {
  TraceBuilder b;
  b.act(0, 0, 10, 0).act(3, 60, 70, 0);
  GraphDocument doc = make_doc({{NodeType::kernel, "_Z1av", {}},
                                {NodeType::host, "", {0}},
                                {NodeType::event_record, "", {1}},
                                {NodeType::kernel, "_Z1bv", {2}}},
                               kExec);
  const MakespanAccount& a = analyze_profile(doc, b.t, {}).account;
  CHECK(parts_sum(a) == 70000);
  CHECK(a.part(AccountCategory::host) == 50000);
  CHECK(a.part(AccountCategory::kernel) == 20000);
}

TEST_CASE("account: records the join left without a node, after the last node, are unexplained") {
  TraceBuilder b;
  b.act(0, 0, 10, 0).act(1, 10, 20, 0).act(9, 20, 25, 0);  // node 9 does not exist
  GraphDocument doc = make_doc({{NodeType::kernel, "_Z1av", {}}, {NodeType::kernel, "_Z1bv", {0}}}, kExec);
  const ProfileReport r = analyze_profile(doc, b.t, {});
  CHECK(r.unmatched_records == 1);
  CHECK(parts_sum(r.account) == r.account.makespan_ns);
  CHECK(r.account.makespan_ns == 25000);
  CHECK(r.account.part(AccountCategory::unexplained) == 5000);
}

TEST_CASE("account: replays that disagree: the median replay in full, medians and spread per part") {
  TraceBuilder b;
  // Three replays of a two-kernel chain, gaps 1, 5 and 3 us.
  const double gaps[] = {1, 5, 3};
  for (uint32_t k = 0; k < 3; ++k) {
    const double t = 1000.0 * k;
    b.act(0, t, t + 10, 0, k + 1).act(1, t + 10 + gaps[k], t + 20 + gaps[k], 0, k + 1);
  }
  GraphDocument doc = make_doc({{NodeType::kernel, "_Z1av", {}}, {NodeType::kernel, "_Z1bv", {0}}}, kExec);
  const MakespanAccount& a = analyze_profile(doc, b.t, {}).account;
  CHECK(a.replays == 3);
  CHECK(a.makespan_ns == 23000);  // the replay of median makespan: gap 3
  CHECK(parts_sum(a) == 23000);
  const AccountPart& lat = a.parts[size_t(AccountCategory::latency)];
  CHECK(lat.ns == 3000);
  CHECK(lat.median_us == doctest::Approx(3));
  CHECK(lat.min_us == doctest::Approx(1));
  CHECK(lat.max_us == doctest::Approx(5));
}

TEST_CASE("account: on random graphs and records, the parts add up to the makespan to the nanosecond") {
  std::mt19937 rng(7);
  for (int round = 0; round < 300; ++round) {
    const uint32_t n = 1 + rng() % 12;
    std::vector<Spec> specs;
    for (uint32_t i = 0; i < n; ++i) {
      std::vector<uint32_t> deps;
      for (uint32_t j = 0; j < i; ++j)
        if (rng() % 3 == 0) deps.push_back(j);
      NodeType type = rng() % 7 == 0 ? NodeType::host : rng() % 5 == 0 ? NodeType::memcpy : NodeType::kernel;
      specs.push_back({type, type == NodeType::kernel ? "_Z1kv" : "", deps});
    }
    GraphDocument doc = make_doc(specs, kExec);
    TraceBuilder b;
    const uint32_t replays = 1 + rng() % 3;
    for (uint32_t k = 0; k < replays; ++k)
      for (uint32_t i = 0; i < n; ++i) {
        if (specs[i].type == NodeType::host) continue;
        const double s = 500.0 * k + double(rng() % 40000) / 1000.0;
        const bool copy = specs[i].type == NodeType::memcpy;
        b.act(i, s, s + 0.001 + double(rng() % 20000) / 1000.0, rng() % 3, k + 1,
              copy ? ActivityKind::memcpy : ActivityKind::kernel, copy ? CopyKind::htod : CopyKind::none, copy ? 2 : 1);
      }
    if (b.t.activities.empty()) continue;
    const ProfileReport r = analyze_profile(doc, b.t, {});
    CAPTURE(round);
    CHECK(parts_sum(r.account) == r.account.makespan_ns);
    for (const AccountPart& p : r.account.parts) {
      CHECK(p.ns >= 0);
      CHECK(p.min_us <= p.median_us + 1e-9);
      CHECK(p.median_us <= p.max_us + 1e-9);
    }
  }
}

TEST_CASE("account: a large graph's replays, accounted in parallel, each as when accounted alone") {
  // 9 replays of 25,000 nodes: past the size where account_makespan splits
  // the replays over threads. Each replay accounted alone (one replay, one
  // thread) must give what the parallel pass gives it.
  std::mt19937 rng(11);
  const uint32_t n = 25000, replays = 9;
  std::vector<Spec> specs;
  for (uint32_t i = 0; i < n; ++i) {
    std::vector<uint32_t> deps;
    for (uint32_t j = i > 3 ? i - 3 : 0; j < i; ++j)
      if (rng() % 2 == 0) deps.push_back(j);
    specs.push_back({NodeType::kernel, "_Z1kv", deps});
  }
  GraphDocument doc = make_doc(specs, kExec);
  TraceBuilder all;
  std::vector<TraceBuilder> alone(replays);
  for (uint32_t k = 0; k < replays; ++k)
    for (uint32_t i = 0; i < n; ++i) {
      const double s = 1e6 * k + 2.0 * i + double(rng() % 1500) / 1000.0;
      const double e = s + 0.5 + double(rng() % (k + 2) * 400) / 1000.0;
      const uint32_t channel = rng() % 3;
      all.act(i, s, e, channel, k + 1);
      alone[k].act(i, s, e, channel, k + 1);
    }
  const MakespanAccount a = analyze_profile(doc, all.t, {}).account;
  REQUIRE(a.replays == replays);
  CHECK(parts_sum(a) == a.makespan_ns);
  std::vector<MakespanAccount> one;
  for (uint32_t k = 0; k < replays; ++k) one.push_back(analyze_profile(doc, alone[k].t, {}).account);
  bool representative = false;
  for (const MakespanAccount& o : one) {
    if (o.makespan_ns != a.makespan_ns) continue;
    bool same = o.nodes.size() == a.nodes.size();
    for (size_t c = 0; c < kAccountCategories; ++c) same = same && o.parts[c].ns == a.parts[c].ns;
    for (size_t i = 0; same && i < o.nodes.size(); ++i)
      same = o.nodes[i].work_ns == a.nodes[i].work_ns && o.nodes[i].wait_ns == a.nodes[i].wait_ns &&
             o.nodes[i].on_chain == a.nodes[i].on_chain;
    representative = representative || same;
  }
  CHECK(representative);
  for (size_t c = 0; c < kAccountCategories; ++c) {
    double lo = 1e300, hi = -1e300;
    for (const MakespanAccount& o : one)
      lo = std::min(lo, double(o.parts[c].ns) / 1000.0), hi = std::max(hi, double(o.parts[c].ns) / 1000.0);
    CAPTURE(c);
    CHECK(a.parts[c].min_us == doctest::Approx(lo));
    CHECK(a.parts[c].max_us == doctest::Approx(hi));
  }
}

TEST_CASE("account: written to the profile JSON and read back, and a report whose parts do not add up is refused") {
  TraceBuilder b;
  b.act(0, 0, 10, 0).act(1, 10, 20, 0).act(2, 20.2, 30, 0).act(3, 30.2, 40, 0);
  GraphDocument doc = fork_join2();
  ProfileReport r = analyze_profile(doc, b.t, {});
  const std::string text = write_profile_json(r, doc);
  ProfileDocument back = read_profile_json(text, "p.json");
  const MakespanAccount& a = back.report.account;
  CHECK(a.makespan_ns == r.account.makespan_ns);
  for (size_t c = 0; c < kAccountCategories; ++c) CHECK(a.parts[c].ns == r.account.parts[c].ns);
  CHECK(a.nodes[2].on_chain);
  CHECK(a.nodes[2].wait == AccountCategory::fake_same_channel);
  CHECK(write_profile_json(back.report, doc) == text);
  std::string bad = text;
  const std::string was = "\"latency\": {\"ns\": 400,";
  const size_t at = bad.find(was);
  REQUIRE(at != std::string::npos);
  bad.replace(at, was.size(), "\"latency\": {\"ns\": 401,");
  CHECK_THROWS_WITH_AS(read_profile_json(bad, "p.json"), doctest::Contains("add up to 40001 ns"), Error);
}

TEST_CASE("account: the Chrome trace shows it as tracks, one per part, that the reader leaves alone") {
  TraceBuilder b;
  b.act(0, 0, 10, 0).act(1, 10, 20, 0).act(2, 20.2, 30, 0).act(3, 30.2, 40, 0);
  GraphDocument doc = fork_join2();
  ProfileReport r = analyze_profile(doc, b.t, {});
  const std::string text = write_chrome_trace(b.t, &doc, &r);
  CHECK(text.find("\"name\": \"makespan account: replay 0\"") != std::string::npos);
  CHECK(text.find("\"cat\": \"makespan account\", \"name\": \"fake wait: same channel\"") != std::string::npos);
  // The segments cover the makespan once.
  int64_t sum = 0;
  for (const AccountSegment& g : r.account.segments) sum += g.end_ns - g.start_ns;
  CHECK(sum == r.account.makespan_ns);
  Trace back = read_chrome_trace(text, "t.json");
  CHECK(back.activities.size() == b.t.activities.size());
  CHECK(analyze_profile(doc, back, {}).account.part(AccountCategory::fake_same_channel) == 10000);
}

// ---------------------------------------------------------------------------
// What-if (simulate.h): the schedule replayed on the model.

TEST_CASE("what-if: a chain is replayed to its makespan, and zero latency removes the gaps") {
  TraceBuilder b;
  b.act(0, 0, 10, 0).act(1, 10.5, 20, 0).act(2, 20.3, 30, 0);
  GraphDocument doc = make_doc({{NodeType::kernel, "_Z1av", {}}, {NodeType::kernel, "_Z1bv", {0}}, {NodeType::kernel, "_Z1cv", {1}}}, kExec);
  const WhatIf w = what_if(doc, analyze_profile(doc, b.t, {}));
  CHECK(w.measured_us == doctest::Approx(30));
  CHECK(w.as_measured_us == doctest::Approx(30));
  CHECK(w.model.latency_us == doctest::Approx(0.4));  // the mean of 0.5 and 0.3
  CHECK(w.zero_latency_us == doctest::Approx(29.2));
  CHECK(w.without_fake_us == doctest::Approx(30));
  CHECK(format_what_if(w).find("the model, as measured") != std::string::npos);
}

TEST_CASE("what-if: copies that shared a copy engine run side by side without it") {
  TraceBuilder b;
  b.act(0, 0, 100, 10, 1, ActivityKind::memcpy, CopyKind::htod, 2)
      .act(1, 100.5, 200, 11, 1, ActivityKind::memcpy, CopyKind::htod, 2);
  GraphDocument doc = make_doc({{NodeType::memcpy, "", {}}, {NodeType::memcpy, "", {}}}, kExec);
  for (Node& n : doc.root.nodes) n.memcpy = MemcpyInfo{"HtoD"};
  const WhatIf w = what_if(doc, analyze_profile(doc, b.t, {}));
  CHECK(w.as_measured_us == doctest::Approx(199.5));  // one after the other (the dispatch gap is not modelled)
  CHECK(w.without_fake_us == doctest::Approx(100));
}

TEST_CASE("what-if: siblings dispatched one by one, and a host node's gap") {
  // A fan-out of four roots started 0.5 us apart; then 5 joins them after a host node.
  TraceBuilder b;
  b.act(0, 0, 2, 0).act(1, 0.5, 2.5, 1).act(2, 1, 3, 2).act(3, 1.5, 3.5, 3).act(5, 23.5, 25, 0);
  GraphDocument doc = make_doc({{NodeType::kernel, "_Z1av", {}},
                                {NodeType::kernel, "_Z1av", {}},
                                {NodeType::kernel, "_Z1av", {}},
                                {NodeType::kernel, "_Z1av", {}},
                                {NodeType::host, "", {0, 1, 2, 3}},
                                {NodeType::kernel, "_Z1bv", {4}}},
                               kExec);
  const ProfileReport r = analyze_profile(doc, b.t, {});
  const WhatIf w = what_if(doc, r);
  CHECK(w.model.dispatch_us == doctest::Approx(0.5));
  CHECK(w.measured_us == doctest::Approx(25));
  CHECK(w.as_measured_us == doctest::Approx(25).epsilon(0.05));
  CHECK(w.zero_latency_us < w.as_measured_us);
}

TEST_CASE("what-if: a memory alloc node without a record keeps the gap measured after it") {
  // 0 ends at 10; 1 (alloc, no record) follows it; 2 starts at 14 (4 us
  // after 0, where direct dependents start 0.5 us after); 3 follows 2.
  TraceBuilder b;
  b.act(0, 0, 10, 0).act(2, 14, 20, 0).act(3, 20.5, 25, 0);
  GraphDocument doc = make_doc({{NodeType::kernel, "_Z1av", {}},
                                {NodeType::mem_alloc, "", {0}},
                                {NodeType::kernel, "_Z1bv", {1}},
                                {NodeType::kernel, "_Z1cv", {2}}},
                               kExec);
  const WhatIf w = what_if(doc, analyze_profile(doc, b.t, {}));
  CHECK(w.measured_us == doctest::Approx(25));
  CHECK(w.as_measured_us == doctest::Approx(25));  // before: 21.5, the alloc's 3.5 us lost
  REQUIRE(w.gap_nodes);
  CHECK(*w.gap_nodes == 1);
  // Zero latency keeps the alloc's own time (4 us less the 0.5 us latency).
  CHECK(w.zero_latency_us == doctest::Approx(24));
  CHECK(format_what_if(w).find("1 node without an activity record") != std::string::npos);
}

TEST_CASE("what-if: NVIDIA's conjugateGradientCudaGraphs, recorded, is replayed to its measured makespan") {
  // tests/data/attach/cg: alloc and free nodes without records; on main
  // the model read 62.8 us against 70.8 us measured.
  const GraphDocument doc = load_graph(test::data_path("attach/cg/pid-964/graph-2.json"));
  const Trace t = read_chrome_trace(test::read_data("attach/cg/pid-964/trace-2.json"), "trace-2.json");
  const ProfileReport r = analyze_profile(doc, t, {});
  REQUIRE(r.what_if);
  CHECK(r.nodes_without_records == 4);
  CHECK(r.what_if->measured_us == doctest::Approx(70.8).epsilon(0.01));
  CHECK(r.what_if->as_measured_us == doctest::Approx(r.what_if->measured_us).epsilon(0.02));
  CHECK(r.what_if->gap_nodes.value_or(0) >= 2);
  // The JSON keeps the count, so the report read back says it too.
  const ProfileDocument back = read_profile_json(write_profile_json(r, doc), "cg.profile.json");
  REQUIRE(back.report.what_if);
  CHECK(back.report.what_if->gap_nodes == r.what_if->gap_nodes);
  CHECK(format_what_if(*back.report.what_if).find("without an activity record") != std::string::npos);
}

namespace {
// Kernels of a grid of `blocks` on a device of 132 SMs.
void give_grid(Trace& t, uint32_t blocks) {
  for (Activity& a : t.activities)
    if (a.kind == ActivityKind::kernel) a.grid[0] = blocks, a.grid[1] = a.grid[2] = 1, a.block[0] = 128, a.block[1] = a.block[2] = 1;
  t.devices = {{0, 132}};
}
}  // namespace

TEST_CASE("what-if: kernels that fill the SMs cannot overlap for free, and without SM counts they would") {
  // Two independent roots: 1 launched 10 us late, after 0 ended; each
  // fills every SM (a block per SM).
  TraceBuilder b;
  b.act(0, 0, 10, 0).act(1, 10, 20, 1);
  GraphDocument doc = make_doc({{NodeType::kernel, "_Z1av", {}}, {NodeType::kernel, "_Z1bv", {}}}, kExec);
  const ProfileReport pr = analyze_profile(doc, b.t, {});
  // 1 started as 0 ended, on another channel: ordered by it (cause
  // "other"), but while it waited 0 ran (concurrent work, as the account
  // says), not blocking; the model keeps its own delay.
  REQUIRE(pr.nodes[1].blocker == 0u);
  CHECK(pr.nodes[1].cause == "other");
  CHECK_FALSE(pr.nodes[1].blocking);
  CHECK(pr.nodes[1].concurrent_us == doctest::Approx(10));
  const WhatIf plain = what_if(doc, pr);
  CHECK(plain.as_measured_us == doctest::Approx(20));
  CHECK(plain.zero_latency_us == doctest::Approx(10));  // side by side, each in its measured time
  give_grid(b.t, 132);
  const ProfileReport r = analyze_profile(doc, b.t, {});
  REQUIRE(r.sm_share.size() == 2);
  CHECK(r.sm_share[0] == doctest::Approx(1));
  const WhatIf w = what_if(doc, r);
  CHECK(w.as_measured_us == doctest::Approx(20));
  CHECK(w.zero_latency_us == doctest::Approx(20));  // together, each at half speed
  // Half the SMs each: they fit side by side.
  give_grid(b.t, 66);
  CHECK(what_if(doc, analyze_profile(doc, b.t, {})).zero_latency_us == doctest::Approx(10));
}

TEST_CASE("what-if: kernels measured sharing the SMs are replayed exactly, and run faster alone") {
  // 0 and 1 ran together, each filling the SMs: 20 us each, 10 us of work.
  // 2 follows 0. Delay 1's launch (its own delay kept) and they would not share.
  TraceBuilder b;
  b.act(0, 0, 20, 0).act(1, 0, 20, 1).act(2, 20.5, 30, 0);
  b.t.activities[2].grid[0] = 0;  // 2 has no geometry: not modelled
  GraphDocument doc = make_doc({{NodeType::kernel, "_Z1av", {}}, {NodeType::kernel, "_Z1bv", {}}, {NodeType::kernel, "_Z1cv", {0}}}, kExec);
  give_grid(b.t, 132);
  b.t.activities[2].grid[0] = 0;
  const ProfileReport r = analyze_profile(doc, b.t, {});
  CHECK(r.sm_share[2] == 0);
  const WhatIf w = what_if(doc, r);
  CHECK(w.as_measured_us == doctest::Approx(30));
  REQUIRE(w.fitted_us);
  CHECK(*w.fitted_us == doctest::Approx(30));
  CHECK(w.zero_latency_us == doctest::Approx(29.5));
}

TEST_CASE("what-if: replays that disagree are simulated one by one, not as a schedule of medians") {
  // Two branches; in replay 1 branch 1 waited 10 us, in replay 2 branch 3
  // did. Per-node medians would have both wait in one schedule.
  TraceBuilder b;
  b.act(0, 0, 10, 0, 1).act(1, 20, 30, 0, 1).act(2, 0, 10, 1, 1).act(3, 10.5, 20.5, 1, 1);
  b.act(0, 1000, 1010, 0, 2).act(1, 1010.5, 1020.5, 0, 2).act(2, 1000, 1010, 1, 2).act(3, 1020, 1030, 1, 2);
  b.act(0, 2000, 2010, 0, 3).act(1, 2020, 2030, 0, 3).act(2, 2000, 2010, 1, 3).act(3, 2010.5, 2020.5, 1, 3);
  GraphDocument doc = make_doc({{NodeType::kernel, "_Z1av", {}}, {NodeType::kernel, "_Z1bv", {0}}, {NodeType::kernel, "_Z1cv", {}},
                                {NodeType::kernel, "_Z1dv", {2}}},
                               kExec);
  const ProfileReport r = analyze_profile(doc, b.t, {});
  REQUIRE(r.replay_times.size() == 3);
  const WhatIf w = what_if(doc, r);
  CHECK(w.replays_simulated == 3u);
  CHECK(w.measured_us == doctest::Approx(30));
  CHECK(w.as_measured_us == doctest::Approx(30));
  CHECK(format_what_if(w).find("replay by replay, medians of 3") != std::string::npos);
  // Read back from JSON: the numbers as written.
  const ProfileDocument back = read_profile_json(write_profile_json(r, doc), "r.json");
  const WhatIf again = what_if(doc, back.report);
  CHECK(again.as_measured_us == doctest::Approx(w.as_measured_us));
  CHECK(again.fitted_us == w.fitted_us);
  CHECK(again.replays_simulated == 3u);
}

TEST_CASE("account: a node held back on its channel by work outside the replay is a fake wait, other work") {
  TraceBuilder b;
  b.act(0, 0, 10, 0).other("eager", 5, 20, 0).act(1, 20.2, 30, 0);
  GraphDocument doc = make_doc({{NodeType::kernel, "_Z1av", {}}, {NodeType::kernel, "_Z1bv", {0}}}, kExec);
  const MakespanAccount& a = analyze_profile(doc, b.t, {}).account;
  CHECK(parts_sum(a) == a.makespan_ns);
  CHECK(a.part(AccountCategory::fake_other) == 10000);  // ready at 10, the eager kernel ended at 20
  CHECK(a.nodes[1].wait == AccountCategory::fake_other);
  CHECK(account_key(AccountCategory::fake_other) == "fake_other");
  AccountCategory c;
  CHECK(parse_account_key("fake_other", &c));
  CHECK(is_fake_wait(AccountCategory::fake_other));
}

TEST_CASE("what-if: a dependent that waited for SMs other kernels held does not set the fitted latency") {
  // 0 -> 1 and 2 -> 3; kernels 0 and 2 fill the SMs together; 3 waited
  // 30 us for them, 1 only 0.5 us after its predecessor.
  TraceBuilder b;
  b.act(0, 0, 20, 0).act(2, 0, 60, 1).act(1, 20.5, 30, 0).act(3, 0.0, 0.0, 1);
  b.t.activities[3].start_ns = 90000, b.t.activities[3].end_ns = 100000;  // 3: ready at 60, started at 90
  GraphDocument doc = make_doc({{NodeType::kernel, "_Z1av", {}}, {NodeType::kernel, "_Z1bv", {0}}, {NodeType::kernel, "_Z1cv", {}},
                                {NodeType::kernel, "_Z1dv", {2}}},
                               kExec);
  const ScheduleModel plain = what_if(doc, analyze_profile(doc, b.t, {})).model;
  CHECK(plain.latency_us == doctest::Approx(15.25));  // the mean of 0.5 and 30
  give_grid(b.t, 132);
  // 3 was ready at 60 with nothing running: its 30 us count. 1 was ready at
  // 20 while 2 held every SM: left out.
  CHECK(what_if(doc, analyze_profile(doc, b.t, {})).model.latency_us == doctest::Approx(30));
}

TEST_CASE("what-if: copies that took their engine in another order each replay replay to their makespan") {
  // Three copies of one direction on three channels; the engine served them
  // in a different order in each replay.
  TraceBuilder b;
  const double order[3][3] = {{0, 1, 2}, {2, 0, 1}, {1, 2, 0}};
  for (uint32_t r = 0; r < 3; ++r)
    for (uint32_t k = 0; k < 3; ++k) {
      const double t0 = 1000.0 * r + 100.5 * order[r][k];
      b.act(k, t0, t0 + 100, 10 + k, r + 1, ActivityKind::memcpy, CopyKind::htod, 2);
    }
  GraphDocument doc = make_doc({{NodeType::memcpy, "", {}}, {NodeType::memcpy, "", {}}, {NodeType::memcpy, "", {}}}, kExec);
  for (Node& n : doc.root.nodes) n.memcpy = MemcpyInfo{"HtoD"};
  const WhatIf w = what_if(doc, analyze_profile(doc, b.t, {}));
  CHECK(w.measured_us == doctest::Approx(301));
  CHECK(w.as_measured_us == doctest::Approx(301).epsilon(0.01));
  CHECK(w.without_fake_us == doctest::Approx(100).epsilon(0.01));  // each on its own
}

TEST_CASE("what-if: a node's own measured delay does not hold back the nodes the model dispatches") {
  // 0 started 50 us late (a wait the model does not know); 2 follows a host
  // node (no record), so the model dispatches it: at 5 us, as measured.
  TraceBuilder b;
  b.act(0, 50, 60, 0).act(2, 5, 15, 1);
  GraphDocument doc = make_doc({{NodeType::kernel, "_Z1av", {}}, {NodeType::host, "", {}}, {NodeType::kernel, "_Z1bv", {1}}}, kExec);
  const WhatIf w = what_if(doc, analyze_profile(doc, b.t, {}));
  CHECK(w.measured_us == doctest::Approx(55));
  CHECK(w.as_measured_us == doctest::Approx(55));
}

// --- the recordings: per-node verdicts and the account tell one story -------

namespace {

struct Recorded {
  GraphDocument doc;
  Trace trace;
  TraceJoin join;
  ProfileReport report;
};

Recorded recorded(const std::string& name, double tolerance_us = 2.0) {
  Recorded x;
  x.doc = load_graph(test::data_path("profiles/" + name + ".graph.json"));
  x.trace = read_chrome_trace(test::read_data("profiles/" + name + ".trace.json"), name + ".trace.json");
  ProfileOptions o;
  o.tolerance_us = tolerance_us;
  x.report = profile_trace(x.doc, x.trace, name, o, x.join);
  return x;
}

// Every node on the account's chain: its delay is split in the account's
// replay, as the walk split it, and a fake wait there makes the node
// blocking with that wait as its cost; every blocking node waited behind a
// fake dependency; no lane-busy node is blocking.
void one_story(const Recorded& x) {
  const ProfileReport& r = x.report;
  const MakespanAccount& a = r.account;
  REQUIRE(a.replays > 0);
  double fake_on_chain_us = 0;
  for (uint32_t i = 0; i < r.nodes.size(); ++i) {
    const NodeProfile& p = r.nodes[i];
    CAPTURE(i);
    if (p.blocking) {
      CHECK(p.verdict == Verdict::fake);
      CHECK(p.fake_wait_us > 0);
      CHECK_FALSE(p.lane_busy);
    } else {
      CHECK(p.fake_wait_us == 0);
    }
    if (!a.nodes[i].on_chain || !a.nodes[i].wait_ns) continue;
    CHECK(p.wait_replay == a.replay);
    CHECK((p.fake_wait_us + p.latency_us + p.concurrent_us + p.host_us) * 1000 ==
          doctest::Approx(double(a.nodes[i].wait_ns)));
    if (is_fake_wait(a.nodes[i].wait)) CHECK(p.blocking);
    fake_on_chain_us += p.fake_wait_us;
  }
  int64_t fake_parts = 0;
  for (const AccountPart& part : a.parts)
    if (is_fake_wait(part.category)) fake_parts += part.ns;
  CHECK(fake_on_chain_us * 1000 == doctest::Approx(double(fake_parts)));
  double lost = 0;
  for (const NodeProfile& p : r.nodes) lost += p.blocking ? p.fake_wait_us : 0;
  CHECK(r.time_lost_us == doctest::Approx(lost));
}

}  // namespace

TEST_CASE("recorded copies, tolerance 0.5 us: the copies the account charges a fake wait are blocking, that wait their cost") {
  // The four 64 MB copies of copies.c1 ran one after another on copy
  // channel 1, each starting 1.3 us after the one before ended: beyond a
  // 0.5 us tolerance, which once left them "ordering only" while the
  // account said 75% of the makespan was a fake wait for the copy engine.
  for (double tol : {0.5, 2.0}) {
    CAPTURE(tol);
    const Recorded x = recorded("copies.c1", tol);
    const ProfileReport& r = x.report;
    one_story(x);
    CHECK(r.blocking == 3);
    CHECK(r.fake == 3);
    double fake_share = 0;
    for (const AccountPart& p : r.account.parts)
      if (is_fake_wait(p.category)) fake_share += double(p.ns) / double(r.account.makespan_ns);
    CHECK(fake_share > 0.7);
    for (uint32_t i = 1; i < 4; ++i) {
      const NodeProfile& p = r.nodes[i];
      CAPTURE(i);
      CHECK(p.blocking);
      CHECK(p.cause == "copy engine");  // copies of one direction, one channel or eight
      CHECK(p.blocker == i - 1);
      CHECK(p.observed_dependency == i - 1);
      // From ready (the graph's start) to the copy before it ended; the
      // 1.3 us after it are dependency latency.
      CHECK(p.fake_wait_us > 1000.0 * i);
      CHECK(p.latency_us == doctest::Approx(1.3).epsilon(0.1));
      CHECK(p.wait == AccountCategory::fake_copy_engine);
    }
  }
}

TEST_CASE("recorded copies on eight channels, taking the engine in another order each replay: still one story") {
  for (double tol : {0.5, 2.0}) {
    CAPTURE(tol);
    const Recorded x = recorded("copies.c8", tol);
    one_story(x);
    CHECK(x.report.blocking >= 3);
    for (const NodeProfile& p : x.report.nodes)
      if (p.blocking) CHECK(p.cause == "copy engine");
  }
}

TEST_CASE("recorded wide fan-out: branches dispatched onto a busy channel are not blocking, their delay is latency and concurrent work") {
  const Recorded x = recorded("wide.c1");
  const ProfileReport& r = x.report;
  one_story(x);
  CHECK(r.blocking == 0);
  CHECK(r.time_lost_us == 0);
  CHECK(r.lane_busy == 56);
  size_t busy = 0;
  for (const NodeProfile& p : r.nodes) {
    if (!p.lane_busy) continue;
    ++busy;
    CAPTURE(p.index);
    CHECK(p.verdict == Verdict::fake);
    CHECK(p.blocker);
    CHECK_FALSE(p.blocking);
    // The 17 us after wide_source (the fan-out's dispatch), then other
    // branches running: the account's terms, adding up to the delay.
    CHECK(p.latency_us > 10);
    CHECK(p.concurrent_us > 0);
    CHECK(p.latency_us + p.concurrent_us + p.host_us == doctest::Approx(p.delay_us).epsilon(0.02));
    CHECK((p.wait == AccountCategory::latency || p.wait == AccountCategory::concurrent));
  }
  CHECK(busy == 56);
  CHECK(format_profile(r, x.doc).find("ordering only (lane busy: dispatch)") != std::string::npos);
}

TEST_CASE("recorded chain and fork-join: nothing blocks, and the account has no fake wait") {
  for (const char* name : {"chain.c1", "chain.c8", "forkjoin.c1", "forkjoin.c8"}) {
    CAPTURE(name);
    const Recorded x = recorded(name);
    one_story(x);
    CHECK(x.report.blocking == 0);
    CHECK(x.report.time_lost_us == 0);
    for (const AccountPart& p : x.report.account.parts)
      if (is_fake_wait(p.category)) CHECK(p.ns == 0);
  }
}

TEST_CASE("a fake wait no longer than the threshold is latency, in the account as in the verdicts") {
  // 0 -> {1, 2} on one channel: 2 waits for its sibling 1 (3 us past its
  // ready): under the 5 us threshold, not a wait (the sibling ran:
  // concurrent work); past a 2 us one, a wait.
  TraceBuilder b;
  b.act(0, 0, 10, 0).act(1, 10, 13, 0).act(2, 13.2, 20, 0).act(3, 20.2, 30, 0);
  ProfileReport r = analyze_profile(fork_join2(), b.t, {});
  CHECK_FALSE(r.nodes[2].blocking);
  CHECK(r.account.part(AccountCategory::fake_same_channel) == 0);
  CHECK(r.account.part(AccountCategory::concurrent) == 3000);
  CHECK(r.nodes[2].concurrent_us == doctest::Approx(3));
  CHECK(r.nodes[2].latency_us == doctest::Approx(0.2));
  ProfileOptions o;
  o.threshold_us = 2;
  r = analyze_profile(fork_join2(), b.t, o);
  CHECK(r.nodes[2].blocking);
  CHECK(r.nodes[2].fake_wait_us == doctest::Approx(3));
  CHECK(r.account.part(AccountCategory::fake_same_channel) == 3000);
}

TEST_CASE("a node the account charges a fake wait in its replay is blocking though its median delay is small") {
  // 0 -> {1, 2} -> 3, three replays. In the replay of median makespan (the
  // second) 2 waited 10 us behind its sibling 1 on channel 0; in the other
  // two 1 ran on channel 1 and 2 started 0.3 us after its ready.
  TraceBuilder b;
  const double end3[] = {30, 40, 50};
  for (uint32_t k = 0; k < 3; ++k) {
    const double t = 1000.0 * k;
    b.act(0, t, t + 10, 0, k + 1);
    if (k == 1)
      b.act(1, t + 10.2, t + 20, 0, k + 1).act(2, t + 20.3, t + 35, 0, k + 1).act(3, t + 35.2, t + end3[k], 0, k + 1);
    else
      b.act(1, t + 10.2, t + 15, 1, k + 1).act(2, t + 10.3, t + 25, 0, k + 1).act(3, t + 25.2, t + end3[k], 0, k + 1);
  }
  const ProfileReport r = analyze_profile(fork_join2(), b.t, {});
  REQUIRE(r.account.replay == 1);
  REQUIRE(r.account.nodes[2].on_chain);
  CHECK(r.account.part(AccountCategory::fake_same_channel) == 10000);
  const NodeProfile& p = r.nodes[2];
  CHECK(p.delay_us == doctest::Approx(0.3));  // its median
  CHECK(p.blocking);                          // in the account's replay
  CHECK(p.wait_replay == 1u);
  CHECK(p.fake_wait_us == doctest::Approx(10));
  CHECK(p.blocker == 1u);
  CHECK(p.cause == "same channel");
  CHECK(r.time_lost_us == doctest::Approx(10));
  CHECK(format_profile(r, fork_join2()).find("delay 0.30 us (median; 10.30 us in replay 1: fake wait 10.00 us, "
                                             "dependency latency 0.30 us)") != std::string::npos);
}
