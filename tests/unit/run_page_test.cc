// The page of an --exec run (runs/run_page.h) on the recorded two-GPU runs
// of tests/data/ranks: graphscope ranks' analysis on top, with its numbers,
// and a rank's graph the page would show exactly as an earlier one written
// once; on a recorded run of tests/data/ledger, the run's ledger first.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "inspect/runs/ledger.h"
#include "inspect/runs/ranks.h"
#include "inspect/runs/run_page.h"
#include "page_data.h"
#include "test_data.h"

using namespace graphscope;
namespace fs = std::filesystem;
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

TEST_CASE("a run page carries the run's ledger as graphscope ledger --json writes it, and draws it first") {
  const std::string dir = test::data_path("ledger/compile_shapes.profile");
  const std::string html = write_run_page(dir, {});
  const auto d = page_data(html);
  REQUIRE(d.contains("ledger"));
  CHECK_FALSE(d.contains("ledger_note"));
  // The document itself, every key and number: the page's script shows these.
  CHECK(d["ledger"] == nlohmann::json::parse(write_ledger_json(make_ledger(dir))));
  CHECK(d["ledger"]["schema"] == "graphscope.ledger/1");
  // Ledger process k's graph i is the page's graph the run index names for it.
  const auto& lp = d["ledger"]["processes"];
  const auto& rp = d["run"]["processes"];
  REQUIRE(lp.size() == rp.size());
  size_t graphs = 0;
  for (size_t k = 0; k < lp.size(); ++k) {
    CHECK(lp[k]["dir"] == rp[k]["dir"]);
    REQUIRE(lp[k]["graphs"].size() == rp[k]["graphs"].size());
    for (size_t i = 0; i < lp[k]["graphs"].size(); ++i, ++graphs) {
      const auto& g = d["graphs"][rp[k]["graphs"][i].get<size_t>()];
      CHECK(g["exec_graph_id"] == lp[k]["graphs"][i]["exec_graph_id"]);
      CHECK(g["nodes"] == lp[k]["graphs"][i]["nodes"]);
    }
  }
  CHECK(graphs > 0);
  // Each recorded kernel name the ledger section lists has the name it is shown by.
  for (const auto& p : lp)
    if (p.contains("work"))
      for (const auto& e : p["work"]["top"])
        if (e["kind"] == "kernel") CHECK(d["ledger_names"].contains(e["name"].get<std::string>()));
  // The section is the page's first after the header: before the ranks and the processes.
  const size_t main_at = html.find("function main()");
  REQUIRE(main_at != std::string::npos);
  const size_t ledger_at = html.find("LEDGER.section()", main_at);
  REQUIRE(ledger_at != std::string::npos);
  CHECK(ledger_at < html.find("RUN.ranksSection()", main_at));
  CHECK(ledger_at < html.find("RUN.runIndex()", main_at));
}

TEST_CASE("a run page whose ledger cannot be made says why in one line and shows the rest of the run") {
  // The recorded run, its PyTorch log broken: the ledger reads that file,
  // the rest of the page does not.
  char tmpl[] = "/tmp/gs_run_page_test.XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  const fs::path dir = tmpl;
  fs::copy(test::data_path("ledger/compile_shapes.profile"), dir, fs::copy_options::recursive);
  size_t broken = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.path().filename() == "torch_log.jsonl") {
      std::ofstream(e.path(), std::ios::trunc) << "not a record\n";
      ++broken;
    }
  REQUIRE(broken == 1);
  const auto d = page_data(write_run_page(dir.string(), {}));
  CHECK_FALSE(d.contains("ledger"));
  REQUIRE(d.contains("ledger_note"));
  const std::string note = d["ledger_note"];
  CHECK(note.rfind("no ledger: ", 0) == 0);
  CHECK(note.find("torch_log.jsonl") != std::string::npos);
  CHECK(note.find('\n') == std::string::npos);
  CHECK(d["graphs"].size() == 5);
  fs::remove_all(dir);
}

TEST_CASE("a run page of more processes than it keeps the ledger of keeps the telling ones and says so") {
  const std::string dir = test::data_path("ledger/compile_shapes.profile");
  RunPageOptions o;
  o.max_ledger_processes = 1;
  const auto d = page_data(write_run_page(dir, o));
  const auto whole = nlohmann::json::parse(write_ledger_json(make_ledger(dir)));
  REQUIRE(whole["processes"].size() == 2);
  REQUIRE(d["ledger"]["processes"].size() == 1);
  // The process with a graph never replayed, though the other comes first
  // in index order or not: the same entry as the whole ledger's.
  const auto& kept = d["ledger"]["processes"][0];
  for (const auto& p : whole["processes"])
    if (p["dir"] == kept["dir"]) CHECK(p == kept);
  bool never = false;
  for (const auto& g : kept["graphs"]) never = never || (g.contains("replayed") && g["replayed"] == false);
  CHECK(never);
  CHECK(d["ledger_note"].get<std::string>().find("1 of the run's 2 processes") != std::string::npos);
  CHECK(d["run"]["processes"].size() == 2);  // the rest of the page: every process
}
