// The page of an --exec run (runs/run_page.h) on the recorded two-GPU runs
// of tests/data/ranks: graphscope ranks' analysis on top, with its numbers,
// and a rank's graph the page would show exactly as an earlier one written
// once.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "inspect/runs/ranks.h"
#include "inspect/runs/run_page.h"
#include "page_data.h"
#include "test_data.h"

using namespace graphscope;
using graphscope::test::page_data;

TEST_CASE("a run page writes a rank's graph that shows as an earlier one once, and says whether the ranks agree") {
  const auto d = page_data(write_run_page(test::data_path("ranks/r_equal"), {}));
  REQUIRE(d["graphs"].size() == 2);
  const auto& a = d["graphs"][0];
  const auto& b = d["graphs"][1];
  CHECK(a.contains("svg"));
  CHECK_FALSE(a.contains("same_as"));
  // Rank 1's graph: its own label and ids, the rest rank 0's.
  CHECK(b["same_as"] == 0);
  CHECK(b["label"].get<std::string>().rfind("rank 1 ", 0) == 0);
  CHECK(b["exec_graph_id"] == a["exec_graph_id"]);
  CHECK_FALSE(b.contains("svg"));
  CHECK_FALSE(b.contains("name"));  // the node names column is read through same_as
  CHECK_FALSE(b.contains("deps"));  // node columns: rank 0's
  // The process index still names each rank's own graph.
  CHECK(d["run"]["processes"][1]["graphs"] == nlohmann::json::array({1}));
  REQUIRE(d.contains("ranks"));
  CHECK(d["ranks"]["same"] == true);
  CHECK(d["ranks"]["graphs"][0]["page"] == nlohmann::json::array({0, 1}));
  CHECK(d["ranks"]["graphs"][0]["kinds"].size() == 1);
}

TEST_CASE("a run page of ranks that differ draws each rank's graph, and says where they differ first") {
  const auto d = page_data(write_run_page(test::data_path("ranks/r_extra"), {}));
  REQUIRE(d["graphs"].size() == 2);
  CHECK_FALSE(d["graphs"][1].contains("same_as"));
  CHECK(d["graphs"][1].contains("svg"));
  const auto& r = d["ranks"];
  CHECK(r["same"] == false);
  CHECK(r["result"] == "1 graph differs (rank 1 against rank 0)");
  const auto& row = r["graphs"][0];
  REQUIRE(row["kinds"].size() == 2);
  const auto& odd = row["kinds"][row["kind"][1].get<size_t>()];
  CHECK(odd["collectives"].size() == 2);
  CHECK(odd["collectives_part_at"] == 1);
  CHECK(odd["first_node"]["side"] == "added");
  CHECK(r["first_difference"]["rank"] == 1);
}

TEST_CASE("a profiled run page has every rank's waits as graphscope ranks --json says them") {
  const auto d = page_data(write_run_page(test::data_path("ranks/r_prof"), {}));
  const auto j = nlohmann::json::parse(write_ranks_json(compare_ranks(test::data_path("ranks/r_prof"))));
  const auto& row = d["ranks"]["graphs"][0];
  const auto& want = j["graphs"][0];
  REQUIRE(row["waits"].size() == want["collective_waits"].size());
  for (size_t k = 0; k < row["waits"].size(); ++k) {
    const auto& w = row["waits"][k];
    const auto& x = want["collective_waits"][k];
    CHECK(w["last_rank"] == x["last_rank"]);
    CHECK(w["skew_us"] == x["skew_us"]);
    for (size_t r = 0; r < x["ranks"].size(); ++r) {
      CHECK(w["wait_us"][r] == x["ranks"][r]["wait_us"]);
      CHECK(w["max_wait_us"][r] == x["ranks"][r]["max_wait_us"]);
      CHECK(w["arrived_last"][r] == x["ranks"][r]["arrived_last"]);
    }
  }
  for (size_t r = 0; r < want["ranks"].size(); ++r) {
    CHECK(row["profile"]["makespan_us"][r] == want["ranks"][r]["profile"]["makespan_us"]);
    CHECK(row["profile"]["collective_wait_us"][r] == want["ranks"][r]["profile"]["collective_wait_us"]);
  }
  // Profiled graphs are drawn each with its own profile, never shared.
  for (const auto& g : d["graphs"]) {
    CHECK_FALSE(g.contains("same_as"));
    CHECK(g["profile"].is_object());
  }
}
