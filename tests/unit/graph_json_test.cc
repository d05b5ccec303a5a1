// graphscope.graph/1 written and read back on the same struct, on every
// recorded graph document and on one with every capture record set.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "graph_builder.h"
#include "inspect/formats/graph_json.h"
#include "inspect/formats/load.h"
#include "inspect/analysis/summary.h"
#include "test_data.h"

using namespace graphscope;

TEST_CASE("every recorded graph document writes, reads back and writes the same bytes") {
  size_t seen = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(test::data_path(""))) {
    const std::string path = e.path().string();
    if (e.path().extension() != ".json" && e.path().extension() != ".dot") continue;
    GraphDocument doc;
    try {
      doc = load_graph(path);
    } catch (const std::exception&) {
      continue;  // traces, profile reports, rules, indexes: not graph documents
    }
    CAPTURE(path);
    ++seen;
    const std::string text = write_graph_json(doc);
    GraphDocument back = read_graph_json(text, path);
    CHECK(write_graph_json(back) == text);
    CHECK(back.warnings == doc.warnings);
    CHECK(back.capture.has_value() == doc.capture.has_value());
    CHECK(back.timings.has_value() == doc.timings.has_value());
    CHECK(back.graph_memory.has_value() == doc.graph_memory.has_value());
    CHECK(back.extra_json == doc.extra_json);
    if (doc.source_format == "graphscope" && doc.capture) {
      // A capture's record is read into its typed members, nothing left over.
      CHECK(doc.extra_json.empty());
      CHECK(doc.timings);
    }
  }
  CHECK(seen >= 40);
}

TEST_CASE("a capture's record is typed, written in capture's order and summarized") {
  GraphDocument doc = test::fork_join();
  doc.warnings = {"ids read another way", "a second \"warning\""};
  doc.capture = CaptureInfo{"w.so", "forkjoin", {"--n", "4096"}, "global", "now"};
  CaptureTimings t;
  t.capture_ms = 0.25, t.instantiate_ms = 1.5, t.walk_ms = 3, t.first_replay_ms = 0.0625;
  t.steady_replay_ms = 0.015, t.steady_replays = 20;
  doc.timings = t;
  doc.graph_memory = GraphMemory{1 << 20, 2 << 20, 4 << 20, 8 << 20};
  doc.extra_json.emplace_back("future_key", R"({"a": [1, 2]})");
  const std::string text = write_graph_json(doc);
  CHECK(text.find("  \"warnings\": [\"ids read another way\", \"a second \\\"warning\\\"\"],\n"
                  "  \"capture\": {\"workload\": \"w.so\", \"workload_name\": \"forkjoin\", \"args\": [\"--n\", "
                  "\"4096\"], \"mode\": \"global\", \"instantiate\": \"now\"},\n"
                  "  \"timings\": {\"capture_ms\": 0.25, \"instantiate_ms\": 1.5, \"walk_ms\": 3, "
                  "\"first_replay_ms\": 0.0625, \"steady_replay_ms\": 0.015, \"steady_replays\": 20},\n"
                  "  \"graph_memory\": {\"used_current\": 1048576, \"used_high\": 2097152, \"reserved_current\": "
                  "4194304, \"reserved_high\": 8388608},\n"
                  "  \"future_key\": {\"a\": [1, 2]},\n") != std::string::npos);
  GraphDocument back = read_graph_json(text, "g.json");
  CHECK(back.warnings == doc.warnings);
  REQUIRE(back.capture);
  CHECK(back.capture->args == doc.capture->args);
  REQUIRE(back.timings);
  CHECK(back.timings->walk_ms == 3.0);
  CHECK(back.timings->steady_replays == 20u);
  REQUIRE(back.graph_memory);
  CHECK(back.graph_memory->reserved_high == uint64_t(8 << 20));
  REQUIRE(back.extra_json.size() == 1);
  CHECK(back.extra_json[0].first == "future_key");
  CHECK(write_graph_json(back) == text);
  std::string summary = format_summary(back, summarize(back), "g.json");
  CHECK(summary.find("warning        ids read another way\n") != std::string::npos);
  CHECK(summary.find("timings        capture 0.25 ms, instantiate 1.5 ms, walk 3 ms, first replay 0.0625 ms, "
                     "steady replay 0.015 ms\n") != std::string::npos);
  CHECK(summary.find("graph memory   used 1 MiB, reserved 4 MiB\n") != std::string::npos);
}

TEST_CASE("a capture record of another shape is passed through whole, never half-read") {
  GraphDocument doc = test::fork_join();
  doc.extra_json.emplace_back("timings", R"({"capture_ms": 1, "gpu_temperature_c": 40})");
  doc.extra_json.emplace_back("graph_memory", R"({"used_current": -1})");
  doc.extra_json.emplace_back("warnings", R"("one, not a list")");
  const std::string text = write_graph_json(doc);
  GraphDocument back = read_graph_json(text, "g.json");
  CHECK_FALSE(back.timings);
  CHECK_FALSE(back.graph_memory);
  CHECK(back.warnings.empty());
  CHECK(back.extra_json.size() == 3);
  CHECK(write_graph_json(back) == text);
}

TEST_CASE("a real number passed through stays a real, so a second read sees the same document") {
  // Found by fuzz_pytorch_json in CI: graph_memory with 1e2 (a real) was
  // passed through, written back as 100 and then read as a typed record.
  const std::string text = R"({"nodes": [], "graph_memory": {"used_current": 1e2, "used_high": 2,
      "reserved_current": 3, "reserved_high": 4.0}, "timings": {"steady_replays": 5E0}})";
  GraphDocument first = read_graph_json(text, "p.json");
  CHECK_FALSE(first.graph_memory);
  CHECK_FALSE(first.timings);
  const std::string written = write_graph_json(first);
  CHECK(written.find(R"("used_current": 100.0)") != std::string::npos);
  GraphDocument second = read_graph_json(written, "g.json");
  CHECK_FALSE(second.graph_memory);
  CHECK_FALSE(second.timings);
  CHECK(write_graph_json(second) == written);
}

TEST_CASE("dependents of a large graph, made in parallel slices, agree with one pass over the edges") {
  Graph g;
  const uint32_t n = 30000;
  g.nodes.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    g.nodes[i].index = i;
    if (i) g.nodes[i].dependencies.push_back({i - 1});
    if (i > 2 && i / 3 != i - 1) g.nodes[i].dependencies.push_back({i / 3});
    if (i % 7 == 0 && i + 5 < n) g.nodes[i].dependencies.push_back({i + 5});  // a later node: not in node order
    g.nodes[i].dependents = {99};  // replaced, not added to
  }
  g.nodes[10].dependencies.push_back({n + 3});  // outside the graph: left out
  link_dependents(g);
  std::vector<std::vector<uint32_t>> want(n);
  for (uint32_t i = 0; i < n; ++i)
    for (const auto& d : g.nodes[i].dependencies)
      if (d.from < n) want[d.from].push_back(i);
  for (auto& w : want) std::sort(w.begin(), w.end());
  size_t differ = 0;
  for (uint32_t i = 0; i < n; ++i) differ += g.nodes[i].dependents != want[i];
  CHECK(differ == 0);
  CHECK(g.nodes[0].dependents == std::vector<uint32_t>{1});
}
