// `graphscope ranks` (ranks.h): pairing each rank's graphs with the lowest
// rank's, the differences in diff's terms, collectives per rank, the rank
// read from a launcher's environment; run directories built on disk.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>

#include "graph_builder.h"
#include "inspect/runs/attach_session.h"
#include "inspect/core/error.h"
#include "inspect/formats/graph_json.h"
#include "inspect/core/io.h"
#include "inspect/runs/ranks.h"
#include "inspect/runs/run_dir.h"
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
