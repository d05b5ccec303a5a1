// The run ledger (runs/ledger.h) on issue 45's recorded programs
// (tests/data/ledger), checked against what the programs counted themselves.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <memory>
#include <vector>

#include "inspect/core/error.h"
#include "inspect/model/graph.h"
#include "inspect/runs/ledger.h"
#include "test_data.h"

using namespace graphscope;

TEST_CASE("ledger: torch.compile's recordings per shape, their launches as the program counted its calls") {
  const Ledger l = make_ledger(test::data_path("ledger/compile_shapes.profile"));
  CHECK(l.profile);
  // The program's own counts: calls per batch size, in the order it called them.
  const auto counts = nlohmann::json::parse(test::read_data("ledger/compile_shapes.plain.counts.json"));
  std::vector<int> first_seen;
  for (int n : counts["shapes_in_order"])
    if (std::find(first_seen.begin(), first_seen.end(), n) == first_seen.end()) first_seen.push_back(n);
  REQUIRE(first_seen.size() == 4);
  const LedgerProcess* app = nullptr;
  for (const LedgerProcess& p : l.processes)
    if (!p.graphs.empty()) app = &p;
  REQUIRE(app);
  CHECK(app->launches_counted);
  // The empty graph cudagraph trees make first, never launched; then one
  // recording per size, in the order the sizes came: each launched on every
  // call of its size but the first (an eager warm-up).
  REQUIRE(app->graphs.size() == 5);
  CHECK(app->graphs[0].nodes == 0);
  CHECK(app->graphs[0].launches == 0u);
  for (size_t i = 0; i < 4; ++i) {
    CAPTURE(first_seen[i]);
    const uint64_t calls = counts["calls_by_batch"][std::to_string(first_seen[i])];
    CHECK(app->graphs[i + 1].launches == calls - 1);
    CHECK(app->graphs[i + 1].site == "compile_shapes_app.py:35 in Block.forward");  // TorchInductor's frames left out
    CHECK(app->graphs[i + 1].makespan_us.value_or(0) > 0);
  }
  REQUIRE(app->families.size() == 1);
  CHECK(app->families[0].graphs == std::vector<size_t>{1, 2, 3, 4});
  const std::string text = format_ledger(l);
  CHECK(text.find("never replayed: exec graph 2 (0 nodes)") != std::string::npos);
  CHECK(text.find("family at compile_shapes_app.py:35 in Block.forward: 4 graphs") != std::string::npos);
}

TEST_CASE("ledger: a serving loop's batch buckets are one family, and capture --exec counts no launches") {
  const Ledger l = make_ledger(test::data_path("ledger/serving.capture"));
  REQUIRE(l.processes.size() == 1);
  const LedgerProcess& p = l.processes[0];
  CHECK_FALSE(p.launches_counted);
  const auto counts = nlohmann::json::parse(test::read_data("ledger/serving.plain.counts.json"));
  REQUIRE(p.graphs.size() == counts["buckets_captured"].size());
  for (const LedgerGraph& g : p.graphs) {
    CHECK_FALSE(g.launches);
    CHECK(g.site == "serving_app.py:85 in capture_bucket");
    CHECK_FALSE(g.identical_to);  // each bucket's own shapes
  }
  REQUIRE(p.families.size() == 1);
  CHECK(p.families[0].graphs.size() == 6);
  const auto j = nlohmann::json::parse(write_ledger_json(l));
  CHECK(j["schema"] == "graphscope.ledger/1");
  CHECK(j["processes"][0]["families"][0]["site"] == "serving_app.py:85 in capture_bucket");
  CHECK(format_ledger(l).find("launches: not counted by capture --exec") != std::string::npos);
}

TEST_CASE("ledger: where a graph was captured without Python: shared NVTX ranges, else the native function") {
  // Two kernels under "decode / step" and "decode / step / attn": the ranges both share.
  Graph g;
  for (int i = 0; i < 2; ++i) {
    Node& n = g.nodes.emplace_back();
    n.index = uint32_t(i);
    n.type = NodeType::kernel;
    Origin o;
    o.nvtx = {{"", "decode", false}, {"", "step", false}};
    if (i) o.nvtx.push_back({"", "attn", false});
    n.origin = std::make_shared<const Origin>(o);
  }
  CHECK(capture_site(g) == "NVTX decode / step");
  auto native = [](const char* function) {
    Origin o;
    o.native = NativeFrame{function, "libengine.so", 64};
    return std::make_shared<const Origin>(o);
  };
  for (Node& n : g.nodes) n.origin = native("engine::capture_decode(int)");
  CHECK(capture_site(g) == "engine::capture_decode(int)");
  g.nodes[1].origin = native("engine::other()");
  CHECK(capture_site(g).empty());
}

TEST_CASE("ledger: a directory that is not an --exec run is refused") {
  CHECK_THROWS_AS(make_ledger(test::data_path("captures")), Error);
}
