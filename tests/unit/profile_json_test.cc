// graphscope.profile/1 written and read back on the same struct.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "inspect/formats/chrome_trace.h"
#include "inspect/core/error.h"
#include "inspect/formats/load.h"
#include "inspect/analysis/profile.h"
#include "inspect/formats/profile_json.h"
#include "test_data.h"

using namespace graphscope;

namespace {

void check_same(const ProfileReport& a, const ProfileReport& b) {
  CHECK(a.exec_graph_id == b.exec_graph_id);
  CHECK(a.replays == b.replays);
  CHECK(a.threshold_us == b.threshold_us);
  CHECK(a.tolerance_us == b.tolerance_us);
  CHECK(a.real == b.real);
  CHECK(a.fake == b.fake);
  CHECK(a.blocking == b.blocking);
  CHECK(a.none == b.none);
  CHECK(a.time_lost_us == b.time_lost_us);
  CHECK(a.lane_busy == b.lane_busy);
  CHECK(a.makespan_us == b.makespan_us);
  CHECK(a.critical_path_us == b.critical_path_us);
  CHECK(a.critical_path == b.critical_path);
  CHECK(a.nodes_without_records == b.nodes_without_records);
  CHECK(a.unmatched_records == b.unmatched_records);
  CHECK(a.other_records == b.other_records);
  CHECK(a.streams == b.streams);
  REQUIRE(a.lanes.size() == b.lanes.size());
  for (size_t i = 0; i < a.lanes.size(); ++i) {
    CHECK(a.lanes[i].lane == b.lanes[i].lane);
    CHECK(a.lanes[i].activities == b.lanes[i].activities);
    CHECK(a.lanes[i].busy_us == b.lanes[i].busy_us);
  }
  REQUIRE(a.nodes.size() == b.nodes.size());
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const NodeProfile &x = a.nodes[i], &y = b.nodes[i];
    CAPTURE(i);
    CHECK(x.index == y.index);
    CHECK(x.replays == y.replays);
    if (x.replays) {  // times of nodes without records are not written
      CHECK(x.start_us == y.start_us);
      CHECK(x.end_us == y.end_us);
      CHECK(x.ready_us == y.ready_us);
      CHECK(x.delay_us == y.delay_us);
    }
    CHECK(x.lane.has_value() == y.lane.has_value());
    if (x.lane && y.lane) CHECK(*x.lane == *y.lane);
    CHECK(x.stream == y.stream);
    CHECK(x.observed_dependency == y.observed_dependency);
    CHECK(x.observed_other == y.observed_other);
    CHECK(x.verdict == y.verdict);
    CHECK(x.blocking == y.blocking);
    CHECK(x.blocker == y.blocker);
    CHECK(x.cause == y.cause);
    CHECK(x.lane_busy == y.lane_busy);
    CHECK(x.fake_wait_us == y.fake_wait_us);
    CHECK(x.wait == y.wait);
  }
  REQUIRE(a.findings.size() == b.findings.size());
  for (size_t k = 0; k < a.findings.size(); ++k) {
    CHECK(a.findings[k].kind == b.findings[k].kind);
    CHECK(a.findings[k].part_us == b.findings[k].part_us);
    CHECK(a.findings[k].share == b.findings[k].share);
    CHECK(a.findings[k].from_us == b.findings[k].from_us);
    CHECK(a.findings[k].to_us == b.findings[k].to_us);
    CHECK(a.findings[k].what == b.findings[k].what);
    CHECK(a.findings[k].try_ == b.findings[k].try_);
    CHECK(a.findings[k].text == b.findings[k].text);
  }
}

}  // namespace

TEST_CASE("every recorded profile's report reads back to the same report and the same bytes") {
  const char* samples[] = {"chain.c1",  "chain.c8",   "copies.c1", "copies.c8", "cublas_gemm.c1", "cublas_gemm.c8",
                           "forkjoin.c1", "forkjoin.c8", "memalloc.c1", "memalloc.c8", "mixed.c1",   "mixed.c8",
                           "pdl.c1"};
  for (const char* s : samples) {
    CAPTURE(s);
    const std::string base = std::string("profiles/") + s;
    GraphDocument doc = load_graph(test::data_path(base + ".graph.json"));
    Trace trace = read_chrome_trace(test::read_data(base + ".trace.json"), base);
    ProfileReport r = analyze_profile(doc, trace, {});
    const std::string text = write_profile_json(r, doc);
    ProfileDocument back = read_profile_json(text, "p.json");
    check_same(r, back.report);
    CHECK(write_profile_json(back.report, doc) == text);
    REQUIRE(back.nodes.size() == doc.root.nodes.size());
    for (size_t i = 0; i < back.nodes.size(); ++i) {
      CHECK(back.nodes[i].tools_id == doc.root.nodes[i].tools_id);
      CHECK(back.nodes[i].node_type == to_string(doc.root.nodes[i].type));
    }
    CHECK(back.template_graph_id == doc.root.graph_id);
    check_profile_matches(back, doc, "p.json", "g.json");
  }
}

TEST_CASE("a hand-built report with every field set reads back") {
  GraphDocument doc;
  doc.exec_graph_id = 9;
  doc.root.graph_id = 4;
  doc.name = "forward";
  for (uint32_t i = 0; i < 3; ++i) {
    Node n;
    n.index = i;
    n.node_id = i;
    n.type = i == 2 ? NodeType::memcpy : NodeType::kernel;
    n.tools_id = (uint64_t(9) << 32) | i;
    if (n.type == NodeType::kernel) n.kernel_name = "_Z1kv";
    doc.root.nodes.push_back(n);
  }
  ProfileReport r;
  r.exec_graph_id = 9;
  r.replays = 3;
  r.threshold_us = 5.5;
  r.tolerance_us = 0.25;
  r.real = 1, r.fake = 1, r.blocking = 1, r.none = 1;
  r.time_lost_us = 12.125;
  r.lane_busy = 1;
  r.makespan_us = 40.5;
  r.critical_path_us = 30.25;
  r.critical_path = {0, 1};
  r.nodes_without_records = 0;
  r.unmatched_records = 2;
  r.other_records = 7;
  r.lanes = {{Lane{0, 1, 3}, 2, 20.5}, {Lane{1, 2, 9}, 1, 4}, {Lane{0, 0, 17}, 1, 1}};
  r.streams = {13, 17};
  for (uint32_t i = 0; i < 3; ++i) {
    NodeProfile p;
    p.index = i;
    p.replays = 3;
    p.start_us = 1.5 * i, p.end_us = 1.5 * i + 1, p.ready_us = 0.5, p.delay_us = 1.5 * i - 0.5;
    p.stream = 13;
    r.nodes.push_back(p);
  }
  r.nodes[0].verdict = Verdict::none;
  r.nodes[0].lane = Lane{0, 1, 3};
  r.nodes[1].verdict = Verdict::real;
  r.nodes[1].observed_dependency = 0;
  r.nodes[1].lane = Lane{1, 2, 9};
  r.nodes[2].verdict = Verdict::fake;
  r.nodes[2].observed_other = "_Z5otherv";
  r.nodes[2].blocking = true;
  r.nodes[2].blocker = 1;
  r.nodes[2].cause = "copy engine";
  r.nodes[2].fake_wait_us = 2.25;
  r.nodes[2].wait = AccountCategory::fake_copy_engine;
  r.nodes[1].wait = AccountCategory::concurrent;
  r.nodes[1].lane_busy = true;
  r.nodes[2].lane = Lane{0, 7, 2};
  const std::string text = write_profile_json(r, doc);
  ProfileDocument back = read_profile_json(text, "p.json");
  check_same(r, back.report);
  CHECK(back.name == "forward");
  CHECK(back.template_graph_id == 4u);
  CHECK(back.nodes[0].kernel_name == "_Z1kv");
  CHECK(back.nodes[2].kernel_name.empty());
  CHECK(back.nodes[2].node_type == "memcpy");
  CHECK(write_profile_json(back.report, doc) == text);
}

TEST_CASE("lanes are spelled one way and read back") {
  for (Lane l : {Lane{0, 1, 3}, Lane{0, 2, 11}, Lane{0, 0, 7}, Lane{2, 1, 0}, Lane{0, 9, 4}, Lane{5, 200, 1}}) {
    Lane back;
    REQUIRE(parse_lane(describe(l), &back));
    CHECK(back == l);
  }
  CHECK(describe(Lane{0, 1, 3}) == "compute channel 3");
  CHECK(describe(Lane{1, 0, 7}) == "stream 7 (device 1)");
  Lane x;
  for (const char* bad : {"", "compute channel", "compute channel x", "stream 7 (device 0)", "copy channel 3 ",
                          "channel type 1 id 3", "lane 4"})
    CHECK_FALSE(parse_lane(bad, &x));
}

TEST_CASE("a report's node lines must name their lanes") {
  std::string err;
  try {
    read_profile_json(R"({"schema":"graphscope.profile/1","summary":{"makespan_us":1,"critical_path_us":1},)"
                      R"("nodes":[{"index":0,"delay_us":1,"verdict":"none","blocking":false,"blocker":null,)"
                      R"("lane":"the fast one"}]})",
                      "p.json");
  } catch (const Error& e) {
    err = e.what();
  }
  CHECK(err == "p.json (nodes[0].lane: \"the fast one\" is not a lane (\"compute channel 3\", \"stream 7\"))");
}
