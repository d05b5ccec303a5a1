// `graphscope ranks` (ranks.h): pairing each rank's graphs with the lowest
// rank's, the differences in diff's terms, collectives per rank, the rank
// read from a launcher's environment; run directories built on disk.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "graph_builder.h"
#include "inspect/runs/attach_session.h"
#include "inspect/core/error.h"
#include "inspect/formats/graph_json.h"
#include "inspect/core/io.h"
#include "inspect/runs/ranks.h"
#include "inspect/runs/run_dir.h"
#include "inspect/core/stats.h"
#include "test_data.h"

using namespace graphscope;
namespace fs = std::filesystem;

namespace {

const char* kNccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";

GraphDocument layer(uint32_t exec, bool extra_collective = false) {
  std::vector<test::Spec> s = {{NodeType::kernel, "_Z4gemmv", {}},
                               {NodeType::kernel, kNccl, {0}},
                               {NodeType::kernel, "_Z4normv", {1}}};
  if (extra_collective) s.push_back({NodeType::kernel, kNccl, {2}});
  return test::make_doc(s, exec);
}

GraphDocument other(uint32_t exec) {
  return test::make_doc({{NodeType::kernel, "_Z7prefillv", {}}, {NodeType::memset, "", {0}}}, exec);
}

// A run directory: one process per rank (rank-R/), graphs in capture order.
struct RunDir {
  fs::path dir;
  AttachRun run;
  explicit RunDir(const std::string& name) : dir(fs::temp_directory_path() / ("gs_ranks_" + name)) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~RunDir() { fs::remove_all(dir); }
  void rank(int64_t r, const std::vector<GraphDocument>& graphs) {
    AttachRun::Process p;
    p.dir = "rank-" + std::to_string(r);
    p.index.pid = 100 + r;
    p.index.rank = AttachRank{r, r, 2, "RANK"};
    fs::create_directories(dir / p.dir);
    for (const auto& g : graphs) {
      AttachedGraph a;
      a.exec_graph_id = *g.exec_graph_id;
      a.file = "graph-" + std::to_string(a.exec_graph_id) + ".json";
      a.nodes = g.root.nodes.size();
      write_output((dir / p.dir / a.file).string(), write_graph_json(g));
      p.index.graphs.push_back(a);
    }
    run.processes.push_back(std::move(p));
  }
  RanksResult compare() const { return compare_ranks(run, dir.string()); }
};

}  // namespace

TEST_CASE("ranks with the same graphs in the same order agree, paired by order") {
  RunDir d("agree");
  d.rank(0, {layer(2), other(3)});
  d.rank(1, {layer(5), other(6)});  // exec ids differ between processes: not compared
  RanksResult r = d.compare();
  CHECK(r.same());
  REQUIRE(r.rows.size() == 2);
  CHECK(r.rows[0].ranks[1].paired_by == "order");
  CHECK(r.rows[0].ranks[1].graph == size_t(0));
  CHECK(r.ranks[0].graphs[0].collectives == 1);
  const std::string text = format_ranks(r);
  CHECK(text.find("graph #0: all 2 ranks agree (3 nodes, 1 collective)") != std::string::npos);
  CHECK(text.find("result: all 2 ranks agree on 2 graphs") != std::string::npos);
}

TEST_CASE("graphs captured in another order are paired by structure") {
  RunDir d("order");
  d.rank(0, {layer(2), other(3)});
  d.rank(1, {other(3), layer(2)});
  RanksResult r = d.compare();
  CHECK(r.same());
  CHECK(r.rows[0].ranks[1].graph == size_t(1));
  CHECK(r.rows[0].ranks[1].paired_by == "structure");
  CHECK(r.rows[1].ranks[1].graph == size_t(0));
}

TEST_CASE("a rank with an extra collective node differs, naming the node and the collective counts") {
  RunDir d("extra_node");
  d.rank(0, {layer(2)});
  d.rank(1, {layer(2, true)});
  RanksResult r = d.compare();
  CHECK_FALSE(r.same());
  const RankMatch& m = r.rows[0].ranks[1];
  CHECK_FALSE(m.same);
  REQUIRE(!m.lines.empty());
  CHECK(m.lines[0] == std::string("+1 node 3 ") + kNccl);
  const std::string text = format_ranks(r);
  CHECK(text.find(std::string("rank 1 differs from rank 0: +1 node 3 ") + kNccl + " (collectives 2 vs 1)") !=
        std::string::npos);
  const std::string json = write_ranks_json(r);
  CHECK(json.find("\"schema\": \"graphscope.ranks/1\"") != std::string::npos);
  CHECK(json.find("\"same\": false") != std::string::npos);
}

TEST_CASE("a rank with an extra graph differs, and a rank with one graph fewer says it has no such graph") {
  RunDir d("extra_graph");
  d.rank(0, {layer(2)});
  d.rank(1, {layer(2), other(4)});
  d.rank(2, {});
  RanksResult r = d.compare();
  CHECK_FALSE(r.same());
  REQUIRE(r.rows.size() == 2);
  CHECK(r.rows[0].ranks[1].same);
  CHECK_FALSE(r.rows[0].ranks[2].same);
  CHECK_FALSE(r.rows[0].ranks[2].graph.has_value());
  CHECK_FALSE(r.rows[1].reference.has_value());
  CHECK(r.rows[1].ranks[1].graph == size_t(1));
  const std::string text = format_ranks(r);
  CHECK(text.find("rank 2 has no such graph") != std::string::npos);
  CHECK(text.find("rank 1 graph #1 (exec graph 4, 2 nodes, 0 collectives): an extra graph, not in rank 0") !=
        std::string::npos);
}

TEST_CASE("fewer than two ranked processes, a missing graph file or one outside the run is bad input") {
  RunDir d("bad");
  d.rank(0, {layer(2)});
  auto code = [&] {
    try {
      d.compare();
    } catch (const Error& e) {
      return int(e.code());
    }
    return 0;
  };
  CHECK(code() == int(ExitCode::bad_input));
  d.rank(1, {layer(2)});
  fs::remove(d.dir / "rank-1" / "graph-2.json");
  CHECK(code() == int(ExitCode::bad_input));
  // A name may reach another directory inside the run (run_dir.h), not
  // beyond it.
  d.run.processes[1].index.graphs[0].file = "../rank-0/graph-2.json";
  CHECK(code() == 0);
  d.run.processes[1].index.graphs[0].file = "../../rank-0/graph-2.json";
  CHECK(code() == int(ExitCode::bad_input));
}

TEST_CASE("a trace that a thousand graphs of a rank name is read once, and their waits come from it") {
  // The recorded profiled run (tests/data/ranks/r_prof), each rank's graph
  // entry repeated: every row still gets its waits, from one reading of
  // each rank's trace.
  const fs::path dir = fs::temp_directory_path() / "gs_ranks_one_trace";
  fs::remove_all(dir);
  fs::copy(test::data_path("ranks/r_prof"), dir, fs::copy_options::recursive);
  RunDirectory files(dir.string());
  AttachRun run = files.read_index();
  for (auto& p : run.processes)
    if (!p.index.graphs.empty()) {
      const AttachedGraph one = p.index.graphs[0];
      p.index.graphs.assign(1000, one);
    }
  RunTraces traces(files);
  RanksResult r = compare_ranks(run, files, traces);
  CHECK(traces.files_read() == 2);
  REQUIRE(r.rows.size() == 1000);
  for (const RankRow& row : r.rows)
    for (const RankMatch& m : row.ranks) {
      const RankProfile& q = *r.ranks[m.rank].graphs[*m.graph].profile;
      CHECK(q.collectives_timed == 19);
      CHECK(q.collective_wait_us.has_value());
    }
  CHECK(r.ranks[0].graphs[0].profile->trace == r.ranks[0].graphs[999].profile->trace);
  fs::remove_all(dir);
}

TEST_CASE("the rank comes from torchrun's, Open MPI's, MPICH's or Slurm's variables, read strictly") {
  auto rank_of = [](std::map<std::string, std::string> vars, std::vector<std::string>& errors) {
    return attach_rank_from(
        [&](const char* k) {
          auto it = vars.find(k);
          return it == vars.end() ? static_cast<const char*>(nullptr) : it->second.c_str();
        },
        errors);
  };
  std::vector<std::string> errors;
  auto r = rank_of({{"RANK", "1"}, {"LOCAL_RANK", "1"}, {"WORLD_SIZE", "2"}, {"SLURM_PROCID", "7"}}, errors);
  REQUIRE(r);
  CHECK(r->rank == 1);
  CHECK(r->local_rank == 1);
  CHECK(r->world_size == 2);
  CHECK(r->source == "RANK");
  CHECK(errors.empty());
  r = rank_of({{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "4"}}, errors);
  CHECK((r && r->rank == 3 && r->world_size == 4 && !r->local_rank && r->source == "OMPI_COMM_WORLD_RANK"));
  r = rank_of({{"PMI_RANK", "0"}, {"PMI_SIZE", "2"}}, errors);
  CHECK((r && r->rank == 0 && r->source == "PMI_RANK"));
  r = rank_of({{"SLURM_PROCID", "5"}, {"SLURM_LOCALID", "1"}, {"SLURM_NTASKS", "8"}}, errors);
  CHECK((r && r->rank == 5 && r->local_rank == 1 && r->source == "SLURM_PROCID"));
  CHECK(errors.empty());
  // Malformed: noted and ignored; a malformed rank falls to the next launcher.
  r = rank_of({{"RANK", "-1"}, {"SLURM_PROCID", "2"}}, errors);
  CHECK((r && r->rank == 2 && r->source == "SLURM_PROCID"));
  CHECK(errors.size() == 1);
  errors.clear();
  for (const char* bad : {"", "x", "1x", " 1", "+1", "99999999999"}) CHECK_FALSE(rank_of({{"RANK", bad}}, errors));
  CHECK(errors.size() == 6);
  errors.clear();
  r = rank_of({{"RANK", "0"}, {"WORLD_SIZE", "two"}, {"LOCAL_RANK", "0"}}, errors);
  CHECK((r && !r->world_size && r->local_rank == 0));
  CHECK(errors.size() == 1);
  CHECK_FALSE(rank_of({}, errors));
}

TEST_CASE("a ranked process takes rank-R, then rank-R.pid-PID, and an unranked one pid-PID") {
  CHECK(attach_dir_names(AttachRank{1, std::nullopt, std::nullopt, "RANK"}, 42) ==
        std::vector<std::string>{"rank-1", "rank-1.pid-42"});
  CHECK(attach_dir_names(std::nullopt, 42) == std::vector<std::string>{"pid-42"});
}

namespace {

// Independently of graphscope's readers: the start (ns, on the common
// clock) of every NCCL kernel of a recorded rank's trace, per graph launch
// (correlation id), launches in the order they started.
std::vector<std::vector<int64_t>> nccl_starts(const std::string& trace) {
  const nlohmann::json t = nlohmann::json::parse(read_file(trace));
  const int64_t base = t["baseTimeNanoseconds"].get<int64_t>();  // as an integer: a double would lose the ns
  std::map<int64_t, std::vector<int64_t>> by_launch;
  for (const auto& e : t["traceEvents"])
    if (e.value("ph", "") == "X" && e.value("cat", "") == "kernel" &&
        e["name"].get<std::string>().find("nccl") != std::string::npos)
      by_launch[e["args"]["correlation"].get<int64_t>()].push_back(base + std::llround(e["ts"].get<double>() * 1000.0));
  std::vector<std::vector<int64_t>> out;
  for (auto& [c, v] : by_launch) {
    std::sort(v.begin(), v.end());
    out.push_back(v);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.front() < b.front(); });
  return out;
}

}  // namespace

TEST_CASE("the recorded profiled run: per collective, each rank's wait and the rank that arrived last") {
  RanksResult r = compare_ranks(test::data_path("ranks/r_prof"));
  REQUIRE(r.rows.size() == 1);
  const RankRow& row = r.rows[0];
  REQUIRE(row.waits.size() == 1);
  const CollectiveWait& w = row.waits[0];
  // Computed here from the two recorded traces: the i-th launch of each
  // rank is one step; a rank waits from its start to the last rank's.
  const auto a = nccl_starts(test::data_path("ranks/r_prof/rank-0/trace-2.json"));
  const auto b = nccl_starts(test::data_path("ranks/r_prof/rank-1/trace-2.json"));
  REQUIRE(a.size() == b.size());
  CHECK(w.replays == a.size());
  std::vector<double> wait0, wait1;
  uint64_t last0 = 0, last1 = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    REQUIRE(a[i].size() == 1);
    const int64_t last = std::max(a[i][0], b[i][0]);
    wait0.push_back(double(last - a[i][0]) / 1000.0);
    wait1.push_back(double(last - b[i][0]) / 1000.0);
    last0 += a[i][0] == last;
    last1 += b[i][0] == last;
  }
  CHECK(w.arrived_last[0] == last0);
  CHECK(w.arrived_last[1] == last1);
  CHECK(w.wait_us[0] == doctest::Approx(median(wait0)).epsilon(1e-6));
  CHECK(w.wait_us[1] == doctest::Approx(median(wait1)).epsilon(1e-6));
  CHECK(w.max_wait_us[0] == doctest::Approx(*std::max_element(wait0.begin(), wait0.end())).epsilon(1e-6));
  // The rank the others waited for is the one that started last most often.
  const int64_t last_rank = r.ranks[row.ranks[w.last].rank].rank;
  CHECK(last_rank == (last1 > last0 ? 1 : 0));
  CHECK(w.arrived_last[w.last] == std::max(last0, last1));
  // The kernel and the node of the graph it is.
  CHECK(w.name == "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  REQUIRE(w.node.has_value());
  const Graph& g = r.ranks[0].graphs[0].doc.root;
  CHECK(g.nodes[*w.node].kernel_name.find("ncclDevKernel_AllReduce") != std::string::npos);
  // The ranks' totals come from the same pairing.
  const RankProfile& p0 = *r.ranks[0].graphs[0].profile;
  const RankProfile& p1 = *r.ranks[1].graphs[0].profile;
  CHECK(p0.collectives_timed == a.size());
  CHECK(p0.arrived_last == last0);
  CHECK(p1.arrived_last == last1);
  CHECK(*p0.collective_wait_us == w.wait_us[0]);
  // The text and the JSON say the same numbers.
  const std::string text = format_ranks(r);
  CHECK(text.find("graph #0, collective 1: node " + std::to_string(*w.node) + " ncclDevKernel_AllReduce_Sum_f32_RING_LL, " +
                  std::to_string(a.size()) + " replays; rank " + std::to_string(last_rank) + " arrived last in " +
                  std::to_string(std::max(last0, last1)) + " of " + std::to_string(a.size())) != std::string::npos);
  const auto j = nlohmann::json::parse(write_ranks_json(r));
  const auto& jw = j["graphs"][0]["collective_waits"][0];
  CHECK(jw["last_rank"] == last_rank);
  CHECK(jw["ranks"][0]["wait_us"].get<double>() == w.wait_us[0]);
  CHECK(jw["ranks"][1]["arrived_last"].get<uint64_t>() == w.arrived_last[1]);
  CHECK(j["first_difference"].is_null());
}

TEST_CASE("the recorded run whose rank 1 captured one all-reduce more: where the ranks differ first") {
  RanksResult r = compare_ranks(test::data_path("ranks/r_extra"));
  REQUIRE(r.first_difference.has_value());
  CHECK(r.first_difference->row == 0);
  CHECK(r.ranks[r.first_difference->rank].rank == 1);
  const RankMatch& m = r.rows[0].ranks[1];
  const Graph& own = r.ranks[1].graphs[0].doc.root;
  // Its collective kernels in capture order, against rank 0's.
  const auto& a = r.ranks[0].graphs[0].collective_kernels;
  const auto& b = r.ranks[1].graphs[0].collective_kernels;
  REQUIRE(a.size() == 1);
  REQUIRE(b.size() == 2);
  CHECK(b[0].kernel == a[0].kernel);
  CHECK(b[1].name == "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  CHECK(own.nodes[b[1].node].kernel_name == b[1].kernel);
  CHECK(b[0].node < b[1].node);
  CHECK(b[1].origin.find("ranks_app.py:") != std::string::npos);
  REQUIRE(m.collectives_part_at.has_value());
  CHECK(*m.collectives_part_at == 1);
  // The first node that differs: the lowest index of rank 1's added nodes.
  REQUIRE(m.first_node.has_value());
  REQUIRE(m.diff.has_value());
  uint32_t lowest = UINT32_MAX;
  for (const NodeGroup& g : m.diff->root.added) lowest = std::min(lowest, *std::min_element(g.nodes.begin(), g.nodes.end()));
  CHECK(m.first_side == "added");
  CHECK(m.first_node->node == lowest);
  CHECK(m.first_node->name == std::string(to_string(own.nodes[lowest].type)));
  const std::string text = format_ranks(r);
  CHECK(text.find("    first: node " + std::to_string(lowest) + " " + m.first_node->name + ", only in rank 1") !=
        std::string::npos);
  CHECK(text.find("    collectives part at the 2nd: rank 0 has no more; rank 1 node " + std::to_string(b[1].node) +
                  " ncclDevKernel_AllReduce_Sum_f32_RING_LL") != std::string::npos);
  const auto j = nlohmann::json::parse(write_ranks_json(r));
  CHECK(j["first_difference"]["rank"] == 1);
  CHECK(j["graphs"][0]["ranks"][1]["collectives_part_at"] == 1);
  CHECK(j["graphs"][0]["ranks"][1]["first_node"]["side"] == "added");
  CHECK(j["graphs"][0]["ranks"][1]["collective_kernels"].size() == 2);
}

TEST_CASE("collectives part where a rank's kernels in capture order differ, not where its other nodes do") {
  const char* gather = "ncclDevKernel_AllGather_RING_LL";
  RunDir d("part");
  d.rank(0, {test::make_doc({{NodeType::kernel, kNccl, {}}, {NodeType::kernel, gather, {0}}}, 2)});
  d.rank(1, {test::make_doc({{NodeType::kernel, kNccl, {}}, {NodeType::kernel, gather, {0}}}, 2)});
  d.rank(2, {test::make_doc({{NodeType::kernel, gather, {}}, {NodeType::kernel, kNccl, {0}}}, 2)});
  d.rank(3, {test::make_doc({{NodeType::kernel, kNccl, {}}, {NodeType::kernel, "_Z4gemmv", {0}},
                             {NodeType::kernel, gather, {1}}}, 2)});
  RanksResult r = d.compare();
  const RankRow& row = r.rows[0];
  CHECK_FALSE(row.ranks[1].collectives_part_at.has_value());
  REQUIRE(row.ranks[2].collectives_part_at.has_value());
  CHECK(*row.ranks[2].collectives_part_at == 0);  // the other order: they part at once
  CHECK_FALSE(row.ranks[3].collectives_part_at.has_value());  // a GEMM more, the same collectives
  REQUIRE(row.ranks[3].first_node.has_value());
  CHECK(row.ranks[3].first_node->node == 1);
  CHECK(row.ranks[3].first_side == "added");
  REQUIRE(r.first_difference.has_value());
  CHECK(r.first_difference->rank == 2);
}

TEST_CASE("the page's ranks section holds the numbers of graphscope ranks --json, ranks alike once") {
  RanksResult r = compare_ranks(test::data_path("ranks/r_prof"));
  const auto page = nlohmann::json::parse(write_ranks_page_json(r, [](size_t rank, size_t) { return int64_t(rank); }));
  const auto doc = nlohmann::json::parse(write_ranks_json(r));
  CHECK(page["same"] == doc["same"]);
  REQUIRE(page["graphs"].size() == doc["graphs"].size());
  const auto& row = page["graphs"][0];
  for (size_t x = 0; x < r.ranks.size(); ++x) {
    const auto& q = doc["graphs"][0]["ranks"][x]["profile"];
    CHECK(row["profile"]["makespan_us"][x] == q["makespan_us"]);
    CHECK(row["profile"]["collective_wait_us"][x] == q["collective_wait_us"]);
    CHECK(row["profile"]["arrived_last"][x] == q["arrived_last"]);
    CHECK(row["waits"][0]["wait_us"][x] == doc["graphs"][0]["collective_waits"][0]["ranks"][x]["wait_us"]);
    CHECK(row["page"][x] == int64_t(x));
  }
  // Both ranks agree and capture the same collectives: one kind.
  CHECK(row["kinds"].size() == 1);
  CHECK(row["kind"] == nlohmann::json::array({0, 0}));
  RanksResult e = compare_ranks(test::data_path("ranks/r_extra"));
  const auto extra = nlohmann::json::parse(write_ranks_page_json(e, [](size_t, size_t) { return int64_t(0); }));
  CHECK_FALSE(extra.contains("kinds"));
  CHECK(extra["graphs"][0]["kinds"].size() == 2);
  CHECK(extra["first_difference"]["rank"] == 1);
  CHECK(extra["result"] == "1 graph differs (rank 1 against rank 0)");
}

TEST_CASE("a killed job's directory without its run index is read from the ranks' own indexes") {
  // tests/data/ranks/r_act (two H200s, ReLU against GELU) as a hung job
  // killed before graphscope's launcher wrote index.json leaves it.
  char tmpl[] = "/tmp/gs_ranks_killed.XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  const fs::path dir = tmpl;
  fs::copy(test::data_path("ranks/r_act"), dir, fs::copy_options::recursive);
  fs::remove(dir / "index.json");
  const AttachRun run = RunDirectory(dir.string()).read_index();
  CHECK(run.recovered);
  REQUIRE(run.processes.size() == 3);
  CHECK(run.processes[0].dir == "rank-0");
  CHECK(run.processes[1].dir == "rank-1");
  CHECK(run.processes[2].dir == "pid-807");
  const RanksResult r = compare_ranks(dir.string());
  REQUIRE(r.first_difference);
  CHECK(r.first_difference->rank == 1);
  REQUIRE_FALSE(r.notes.empty());
  CHECK(r.notes[0].find("no index.json: graphscope's launcher did not finish") == 0);
  // A rank whose index was cut short by the kill: said, and the ranks too few.
  write_output((dir / "rank-1" / "index.json").string(), "{\"schema\": \"graphscope.attach/1\", \"pid\": 8");
  try {
    compare_ranks(dir.string());
    FAIL("a run with one readable rank was compared");
  } catch (const Error& e) {
    const std::string what = e.what();
    CHECK(what.find("1 ranked process (no index.json; unreadable: ") != std::string::npos);
    CHECK(what.find("rank-1/index.json") != std::string::npos);
  }
  // No process index at all: not a run.
  fs::remove_all(dir / "rank-0");
  fs::remove_all(dir / "rank-1");
  fs::remove_all(dir / "pid-807");
  CHECK_THROWS_WITH_AS(RunDirectory(dir.string()).read_index(), doctest::Contains("it has no index.json"), Error);
  fs::remove_all(dir);
}
