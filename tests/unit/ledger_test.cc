// The run ledger (runs/ledger.h) on issue 45's recorded programs
// (tests/data/ledger), checked against what the programs counted themselves,
// and on a synthetic run directory built here (an index with the ledger's
// fields filled and its GPU work) for what those recordings lack.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "graph_builder.h"
#include "inspect/core/error.h"
#include "inspect/core/io.h"
#include "inspect/formats/attach_json.h"
#include "inspect/formats/graph_json.h"
#include "inspect/model/graph.h"
#include "inspect/runs/ledger.h"
#include "test_data.h"

using namespace graphscope;
namespace fs = std::filesystem;

namespace {

bool has(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return true;
  MESSAGE("not found: " << part << "\nin:\n" << text);
  return false;
}

// A bucket of a synthetic serving loop, batch size `batch`: norm, two gemms
// and an activation, captured in capture_bucket (serve.py:85) from the
// model's forward (lines 40 to 43), each kernel's grid the batch size but the
// activation's.
GraphDocument bucket(uint32_t exec, uint32_t batch, uint32_t site_line = 85, const char* site = "capture_bucket") {
  GraphDocument doc = test::make_doc({{NodeType::kernel, "_Z4normv", {}},
                                      {NodeType::kernel, "_Z4gemmv", {0}},
                                      {NodeType::kernel, "_Z4gemmv", {1}},
                                      {NodeType::kernel, "_Z3actv", {2}}},
                                     exec, exec - 1);
  for (Node& n : doc.root.nodes) {
    n.kernel->grid = {n.kernel_name == "_Z3actv" ? 1 : batch, 1, 1};
    Origin o;
    o.modules = {{"", "Model"}, {"blocks.0", "Block"}};
    o.python = {{"/srv/serve.py", 40 + n.index, "Block.forward"},
                {"/srv/serve.py", site_line, site},
                {"/srv/serve.py", 100, "main"}};
    n.origin = std::make_shared<const Origin>(o);
  }
  return doc;
}

AttachWork::Group group(const char* name, uint32_t grid, uint64_t launches, uint64_t after, double gpu_us) {
  AttachWork::Group g;
  g.kind = "kernel", g.name = name;
  g.grid[0] = grid, g.grid[1] = g.grid[2] = 1;
  g.block[0] = 128, g.block[1] = g.block[2] = 1;
  g.launches = launches, g.launches_after_captures = after, g.gpu_us = gpu_us;
  g.first_s = 1.2, g.last_s = 9.5;
  return g;
}

// A run directory in a fresh temporary directory: one process (pid 42) with
// the three buckets of one family (batch 1, 2, 4: exec graphs 2, 5, 8; 8
// never launched), a graph identical to the batch-2 bucket captured elsewhere (exec
// graph 11, never launched either), and GPU work: eager launches of the
// family's kernels after the captures ended, at batch 3 (no bucket has it)
// and at batch 2 (bucket exec graph 5 has it).
struct SyntheticRun {
  fs::path dir;
  AttachRun run;
  SyntheticRun() {
    char tmpl[] = "/tmp/gs_ledger_test.XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    dir = tmpl;
    fs::create_directory(dir / "pid-42");
    AttachIndex x;
    x.pid = 42;
    x.command_line = {"python3", "serve.py"};
    x.attached = x.complete = true;
    x.launches_counted = true;
    x.graph_mem_reserved_high = 4 << 20;
    x.graph_mem_used_high = 3 << 20;
    const struct {
      uint32_t exec, batch;
      uint64_t launches;
      double capture_ms;
    } graphs[] = {{2, 1, 10, 12.5}, {5, 2, 4, 11.0}, {8, 4, 0, 12.3}};
    for (const auto& b : graphs) {
      write_output((dir / "pid-42" / ("graph-" + std::to_string(b.exec) + ".json")).string(),
                   write_graph_json(bucket(b.exec, b.batch)));
      AttachedGraph a;
      a.exec_graph_id = b.exec;
      a.file = "graph-" + std::to_string(b.exec) + ".json";
      a.nodes = a.nodes_with_bodies = 4;
      a.created_s = 1.0 + b.batch * 0.1;
      a.capture_ms = b.capture_ms;
      a.instantiate_ms = 1.5;
      a.capture_alloc_bytes = 2 << 20;
      a.launches = b.launches;
      if (b.launches) a.first_launch_s = 2.5, a.last_launch_s = 9.0;
      x.graphs.push_back(a);
    }
    write_output((dir / "pid-42" / "graph-11.json").string(),
                 write_graph_json(bucket(11, 2, 90, "warm_up")));
    AttachedGraph warm;
    warm.exec_graph_id = 11, warm.file = "graph-11.json", warm.nodes = warm.nodes_with_bodies = 4;
    warm.instantiate_ms = 0.5;
    x.graphs.push_back(warm);
    AttachWork w;
    w.source = "graph trace";
    w.start_s = 1, w.end_s = 10;
    w.busy_us = 6e6, w.graph_us = 4.26e6, w.eager_us = 1.74e6;
    w.graph_records = 14, w.eager_records = 253;
    w.captures_end_s = 2.0;
    w.eager = {group("_Z5otherv", 8, 100, 100, 700e3), group("_Z4gemmv", 3, 40, 40, 400e3),
               group("_Z4normv", 3, 20, 20, 100e3), group("_Z3actv", 1, 25, 25, 50e3),
               group("_Z4gemmv", 2, 10, 10, 45e3), group("_Z4normv", 2, 5, 5, 20e3),
               group("_Z4normv", 1, 3, 0, 5e3)};  // the warm-up before the captures
    AttachWork::Group copy;
    copy.kind = "memcpy", copy.name = "Memcpy HtoD", copy.launches = 30, copy.launches_after_captures = 30;
    copy.gpu_us = 80e3, copy.first_s = 1.1, copy.last_s = 9.9;
    w.eager.push_back(copy);
    w.graphs = {{2, 10, 3e6, 2.5, 9.0}, {5, 4, 1.26e6, 3.0, 8.0}};
    // The first second eager (warm-up and captures), then mostly replays.
    w.timeline.assign(9, {532.5e3, 142.5e3});
    w.timeline[0] = {0, 600e3};
    x.work = w;
    run.command = x.command_line;
    run.processes.push_back({"pid-42", x});
    write_output((dir / "index.json").string(), write_attach_run(run));
  }
  ~SyntheticRun() { fs::remove_all(dir); }
};

}  // namespace

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

namespace {

// The one process of a recorded run that has graphs.
const LedgerProcess& app_of(const Ledger& l) {
  const LedgerProcess* app = nullptr;
  for (const LedgerProcess& p : l.processes)
    if (!p.graphs.empty()) app = &p;
  REQUIRE(app);
  return *app;
}

}  // namespace

TEST_CASE("ledger: a serving loop's buckets are one family, each launched as often as the program replayed it") {
  // Recorded on an H200 (tests/data/ledger/README.md): capture --exec counts
  // the launches through the preload library, also after graphscope let go.
  const auto counts = nlohmann::json::parse(test::read_data("ledger/serving.capture/serving.capture.counts.json"));
  const Ledger l = make_ledger(test::data_path("ledger/serving.capture"));
  const LedgerProcess& p = app_of(l);
  CHECK(p.launches_counted);
  // The buckets were captured largest first: exec graph ids in that order.
  std::vector<int> buckets;
  for (int b : counts["buckets_captured"]) buckets.push_back(b);
  std::sort(buckets.rbegin(), buckets.rend());
  REQUIRE(p.graphs.size() == buckets.size());
  for (size_t i = 0; i < buckets.size(); ++i) {
    const LedgerGraph& g = p.graphs[i];
    CAPTURE(buckets[i]);
    CHECK(g.launches == uint64_t(counts["replays"][std::to_string(buckets[i])]));
    CHECK(g.site == "serving_app.py:92 in capture_bucket");
    CHECK(g.capture_ms.value_or(0) > 0);
    CHECK(g.instantiate_ms.value_or(0) > 0);
    CHECK_FALSE(g.identical_to);  // each bucket's own shapes
  }
  // PyTorch's pool grew while the first (largest) bucket was captured; the
  // others fit in it.
  CHECK(p.graphs[0].capture_alloc_bytes.value_or(0) > 0);
  CHECK(p.graphs[1].capture_alloc_bytes == uint64_t(0));
  REQUIRE(p.families.size() == 1);
  const size_t never = size_t(std::find(buckets.begin(), buckets.end(), int(counts["bucket_never_used"])) -
                              buckets.begin());
  CHECK(p.families[0].never_replayed == std::vector<size_t>{never});
  const std::string text = format_ledger(l);
  CHECK(has(text, "bucket exec graph " + std::to_string(p.graphs[never].exec_graph_id) + " never replayed: "));
  CHECK(has(text, "GPU work outside graphs: not recorded (profile --exec records it; capture --exec --eager)"));
  CHECK_FALSE(p.work);
  const auto j = nlohmann::json::parse(write_ledger_json(l));
  CHECK(j["schema"] == "graphscope.ledger/1");
  CHECK(j["processes"][0]["families"][0]["site"] == "serving_app.py:92 in capture_bucket");
}

TEST_CASE("ledger: the serving loop's fallbacks are the eager runs of its step the program counted") {
  // capture --exec --eager: a record per replay and per eager kernel.
  const auto counts = nlohmann::json::parse(test::read_data("ledger/serving.eager/serving.eager.counts.json"));
  const Ledger l = make_ledger(test::data_path("ledger/serving.eager"));
  const LedgerProcess& p = app_of(l);
  REQUIRE(p.work);
  CHECK(p.work->graph_us > 0);
  CHECK(p.work->eager_us > 0);
  REQUIRE(p.families.size() == 1);
  REQUIRE(p.families[0].fallback);
  // Fallback steps (sizes above the largest bucket and the forgotten one)
  // and the checks against eager: the program ran its model eagerly this
  // often after the captures.
  CHECK(p.families[0].fallback->runs == uint64_t(counts["eager_model_runs_after_capture"]));
  uint64_t replays = 0;
  for (const LedgerGraph& g : p.graphs) replays += g.replays.value_or(0);
  CHECK(replays == uint64_t(counts["graph_steps"]));
  CHECK(has(format_ledger(l), "ran eager about " + std::to_string(int(counts["eager_model_runs_after_capture"])) +
                                  " times after its graphs were captured"));
}

TEST_CASE("ledger: each bucket is the one captured before it captured again, with what changed") {
  // Buckets 32, 16, 8, 4, 2, 1 captured in that order (tests/data/ledger):
  // the row kernels' grids halve from one to the next.
  const Ledger l = make_ledger(test::data_path("ledger/serving.capture"));
  const LedgerProcess& p = app_of(l);
  REQUIRE(p.families.size() == 1);
  const LedgerFamily& f = p.families[0];
  REQUIRE(f.recaptures.size() == f.graphs.size() - 1);
  const uint32_t sizes[] = {32, 16, 8, 4, 2, 1};
  for (size_t k = 0; k < f.recaptures.size(); ++k) {
    const LedgerRecapture& r = f.recaptures[k];
    CHECK(r.previous == f.graphs[k]);
    CHECK(r.graph == f.graphs[k + 1]);
    bool halved = false;
    for (const LedgerRecapture::Change& c : r.changes)
      halved = halved || (c.field == "grid" && c.before == std::to_string(sizes[k]) + "x1x1" &&
                          c.after == std::to_string(sizes[k + 1]) + "x1x1");
    CHECK_MESSAGE(halved, "bucket " << sizes[k + 1] << " against " << sizes[k]);
  }
  CHECK(has(format_ledger(l), "    exec graph 5 is exec graph 2 captured again: "));
  // The same in the JSON, by graph index.
  const auto j = nlohmann::json::parse(write_ledger_json(l));
  bool found = false;
  for (const auto& jp : j["processes"])
    for (const auto& jf : jp["families"])
      if (jf.contains("recaptures")) found = jf["recaptures"].size() == f.recaptures.size();
  CHECK(found);
}

TEST_CASE("ledger: the serving loop's eager work by origin names the program's two eager calls of its model") {
  // Recorded with launch sites (tests/data/ledger/README.md): the model runs
  // eager from run_eager (fallback steps) and from main (the checks).
  const auto counts = nlohmann::json::parse(test::read_data("ledger/serving.eager/serving.eager.counts.json"));
  const Ledger l = make_ledger(test::data_path("ledger/serving.eager"));
  const LedgerProcess& p = app_of(l);
  REQUIRE(p.work);
  REQUIRE(p.work->sites_read);
  REQUIRE(p.families.size() == 1);
  const LedgerFamily& f = p.families[0];
  // The buckets' sizes as the graphs show them: 32 down to 1, captured largest first.
  CHECK(f.bucket_blocks == std::vector<uint64_t>{32, 16, 8, 4, 2, 1});
  // The sizes it ran eager at that no bucket has: most of all the program's
  // two fallback sizes (40, above the largest bucket; 3, the one it forgot),
  // at least once a fallback step each; the checks add sizes of their own.
  REQUIRE(f.uncaptured.size() >= 2);
  std::map<uint64_t, uint64_t> eager_sizes;
  for (const auto& [size, steps] : counts["eager_steps"].items()) eager_sizes[std::stoull(size)] = steps;
  CHECK(std::set<uint64_t>{f.uncaptured[0].first, f.uncaptured[1].first} == std::set<uint64_t>{40, 3});
  for (size_t i = 0; i < 2; ++i) CHECK(f.uncaptured[i].second >= eager_sizes[f.uncaptured[i].first]);
  REQUIRE(f.fallback);
  std::map<std::string, uint64_t> from;
  for (const LedgerFallback::From& x : f.fallback->from) from[x.call] = x.launches_after_captures;
  REQUIRE(from.size() == 2);
  const uint64_t steps = counts["eager_steps_total"], checks = counts["checks"];
  const uint64_t at_run_eager = from["serving_app.py:97 in run_eager"], at_main = from["serving_app.py:137 in main"];
  CHECK(at_run_eager >= steps);  // at least a launch a model run
  CHECK(at_run_eager <= 64 * steps);
  CHECK(at_main >= checks);
  CHECK(at_main <= 64 * checks);
  // The sites tied to the family are the model's forward lines; the warm-up
  // before the captures (capture_bucket's line 88) is no fallback.
  bool warm_up = false;
  for (const LedgerSite& x : p.work->sites) {
    if (!x.family) continue;
    CHECK(x.where.rfind("serving_app.py:5", 0) == 0);
    if (!x.callers.empty() && x.callers[0] == "serving_app.py:88 in capture_bucket") {
      warm_up = true;
      CHECK(x.launches_after_captures == 0);
    }
  }
  CHECK(warm_up);
  const std::string text = format_ledger(l);
  CHECK(has(text, "  eager work by origin (where each launch was made):\n"));
  CHECK(has(text, "      from serving_app.py:97 in run_eager: "));
  CHECK(has(text, "    bucket sizes as the graphs show them (blocks of "));
}

TEST_CASE("ledger: torch.compile's debug records say what it recorded and warmed up, without changing its output") {
  const Ledger l = make_ledger(test::data_path("ledger/compile_shapes.eager"));
  const LedgerProcess& p = app_of(l);
  REQUIRE(p.torch);
  size_t recording = 0;
  for (const LedgerTorchRecord& r : p.torch->records)
    if (r.level == "DEBUG" && r.headline.find("Recording function=partition_0") != std::string::npos) {
      ++recording;
      CHECK(r.next_graph);
    }
  // A recording per batch size (4, 8, 16, 3).
  CHECK(recording == 4);
  // The program printed what it prints without graphscope: no debug record.
  const std::string out = test::read_data("ledger/compile_shapes.eager.out");
  CHECK(out.find("Recording function") == std::string::npos);
}

TEST_CASE("ledger: a native program's launches are all counted, on the shared and the static CUDA runtime") {
  // attach_stress idle: one graph launched 2 x (1 + 500) times around a
  // pause in which graphscope let go of CUPTI (shared runtime: the preload
  // library counted on) or stayed attached (static); five more graphs
  // launched once each.
  for (const char* run : {"ledger/native.capture", "ledger/native_static.capture", "ledger/native.eager"}) {
    CAPTURE(run);
    const Ledger l = make_ledger(test::data_path(run));
    const LedgerProcess& p = app_of(l);
    uint64_t launches = 0;
    for (const LedgerGraph& g : p.graphs) launches += g.launches.value_or(0);
    CHECK(launches == 1007);
    CHECK(p.graphs[0].launches == 1002u);
    CHECK(p.graphs[0].site.find("capture_chain") != std::string::npos);  // a native function
  }
}

TEST_CASE("ledger: JAX's command buffers are instantiated without a capture, and their updates are versions") {
  const Ledger l = make_ledger(test::data_path("ledger/jax.eager"));
  const LedgerProcess& p = app_of(l);
  size_t versions = 0;
  for (const LedgerGraph& g : p.graphs) {
    CHECK_FALSE(g.capture_ms);  // built with the graph API
    if (g.version == 1) CHECK(g.instantiate_ms.value_or(0) > 0);
    versions += g.version > 1;
    CHECK(g.site.find("jax_app.py:") == 0);
  }
  CHECK(versions > 0);
  REQUIRE(p.work);
  CHECK(p.work->graph_us > 0);
}

TEST_CASE("ledger: an exec graph's versions, each against the one before, and the updates that changed nothing") {
  // JAX's while loop (tests/data/ledger/jax.eager): exec graph 36 updated
  // into versions 2, 3 and 4 by memcpy and kernel node setters.
  const Ledger l = make_ledger(test::data_path("ledger/jax.eager"));
  const LedgerProcess& p = app_of(l);
  REQUIRE(p.updates.size() == 3);
  for (size_t k = 0; k < 3; ++k) {
    const LedgerUpdate& u = p.updates[k];
    CHECK(p.graphs[u.diff.graph].exec_graph_id == 36);
    CHECK(p.graphs[u.diff.graph].version == k + 2);
    CHECK(p.graphs[u.diff.previous].version == k + 1);
    CHECK(u.updated_by == std::vector<std::string>{"cuGraphExecMemcpyNodeSetParams", "cuGraphExecKernelNodeSetParams"});
    CHECK(u.diff.added + u.diff.removed == 0);  // setters change parameters, not the topology
  }
  // The calls that changed nothing, one figure an exec graph, as the index counted them.
  std::map<uint32_t, uint64_t> want;
  const AttachIndex x = read_attach_index(test::read_data("ledger/jax.eager/pid-1770/index.json"), "index.json");
  for (const AttachedGraph& a : x.graphs)
    if (a.unchanged_updates) want[a.exec_graph_id] += a.unchanged_updates;
  CHECK(std::map<uint32_t, uint64_t>(p.unchanged_updates.begin(), p.unchanged_updates.end()) == want);
  const std::string text = format_ledger(l);
  CHECK(has(text, "  exec graphs changed after instantiation (each version against the one before):\n"));
  CHECK(has(text, "    exec graph 36: 6 update calls changed nothing recorded\n"));
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

TEST_CASE("ledger: a family's buckets with what they cost, the one never replayed, and its fallback to eager") {
  SyntheticRun r;
  const Ledger l = make_ledger(r.dir.string());
  REQUIRE(l.processes.size() == 1);
  const LedgerProcess& p = l.processes[0];
  CHECK(p.launches_counted);  // capture --exec with the ledger counts them
  CHECK(p.not_recorded.empty());
  REQUIRE(p.graphs.size() == 4);
  const LedgerGraph& b1 = p.graphs[0];
  CHECK(b1.site == "serve.py:85 in capture_bucket");
  CHECK(b1.capture_ms == 12.5);
  CHECK(b1.instantiate_ms == 1.5);
  CHECK(b1.capture_alloc_bytes == uint64_t(2 << 20));
  CHECK(b1.launches == 10u);
  CHECK(b1.replays == 10u);
  CHECK(b1.replay_gpu_us == 3e6);
  CHECK(b1.replay_gpu_from == "records");
  CHECK(b1.first_launch_s == 2.5);
  CHECK(b1.replayed == true);
  CHECK(p.graphs[2].replayed == false);
  CHECK_FALSE(p.graphs[2].replay_gpu_us);
  // Exec graph 11, captured elsewhere, is bucket 2's twin.
  CHECK(p.graphs[3].site == "serve.py:90 in warm_up");
  CHECK(p.graphs[3].identical_to == size_t(1));
  // The process's totals.
  CHECK(p.capture_ms == doctest::Approx(35.8));
  CHECK(p.instantiate_ms == doctest::Approx(5.0));
  CHECK(p.capture_alloc_bytes == uint64_t(6 << 20));
  CHECK(p.graph_mem_reserved_high == uint64_t(4 << 20));
  // The family: three buckets, the one of batch 4 never replayed.
  REQUIRE(p.families.size() == 1);
  const LedgerFamily& f = p.families[0];
  CHECK(f.graphs == std::vector<size_t>{0, 1, 2});
  CHECK(f.never_replayed == std::vector<size_t>{2});
  CHECK(f.never_replayed_capture_ms == doctest::Approx(12.3));
  CHECK(f.never_replayed_bytes == uint64_t(2 << 20));
  // The fallback: norm once, gemm twice and act once per bucket. After the
  // captures norm ran 25 times eager, gemm 50, act 25: 25 runs each. norm
  // and gemm tell the buckets apart (act's grid is 1 in every bucket): at
  // batch 3, 20 runs (20 / 1, 40 / 2), no bucket's; at batch 2, bucket
  // exec graph 5's, 5 runs (5 / 1, 10 / 2). The warm-up before the captures
  // ended does not count.
  REQUIRE(f.fallback);
  const LedgerFallback& b = *f.fallback;
  CHECK(b.runs == 25);
  CHECK(b.at_other_geometry == 20);
  CHECK(b.at_member_geometry == 5);
  REQUIRE(b.by_member.size() == 1);
  CHECK(b.by_member[0] == std::pair<size_t, uint64_t>{1, 5});
  REQUIRE(b.kernels.size() == 3);
  CHECK(b.kernels[0].name == "_Z3actv");
  CHECK_FALSE(b.kernels[0].tells_apart);
  CHECK(b.kernels[1].name == "_Z4gemmv");
  CHECK(b.kernels[1].per_graph == 2);
  CHECK(b.kernels[1].eager == 50);
  CHECK(b.kernels[1].at_other_geometry == 40);
  CHECK(b.kernels[2].at_member_geometry == 5);
  // Outside graphs: the in-graph share, the top by GPU time, with the
  // origin of a graph node that runs the same kernel labelled as the graph's.
  REQUIRE(p.work);
  const LedgerWork& w = *p.work;
  CHECK(w.in_graph_share == doctest::Approx(0.71));
  REQUIRE(w.top.size() == 5);
  CHECK(w.top[0].name == "_Z5otherv");
  CHECK_FALSE(w.top[0].graph_node);
  CHECK(w.top[1].name == "_Z4gemmv");
  CHECK(w.top[1].launches == 50);
  CHECK(w.top[1].geometries == 2);
  REQUIRE(w.top[1].graph_node);
  CHECK(w.top[1].graph_node->graph == 0);
  CHECK(w.top[1].graph_node->node == 1);
  CHECK(w.top[1].graph_node->origin == "blocks.0 at serve.py:41");
  CHECK(w.top[3].kind == "memcpy");
  CHECK_FALSE(w.top[3].graph_node);

  const std::string text = format_ledger(l);
  CHECK(has(text, "pid 42 (python3 serve.py): 4 graphs, 14 launches\n"));
  CHECK(has(text, "  family at serve.py:85 in capture_bucket: 3 graphs (buckets), runs per bucket: exec graph 2 x10, "
                  "5 x4, 8 x0\n"));
  CHECK(has(text, "    bucket exec graph 8 never replayed: 12.30 ms of capture, 2.0 MiB\n"));
  CHECK(has(text, "    fallback: the family at serve.py:85 in capture_bucket ran eager about 25 times after its graphs "
                  "were captured (median over 3 kernels every member has; 20 at geometries no member has)\n"));
  CHECK(has(text, "      about 5 at a geometry bucket exec graph 5 has: the graph could have run\n"));
  CHECK(has(text, "  never replayed: exec graph 8 (4 nodes), exec graph 11 (4 nodes)\n"));
  CHECK(has(text, "  exec graph 11 is identical to exec graph 5: one executable graph would have done\n"));
  CHECK(has(text, "in graphs 71% of GPU busy time"));
  CHECK(has(text, "(the kernel of exec graph 2 node 1: blocks.0 at serve.py:41)"));
  CHECK(has(text, "  cost: capture 35.80 ms, instantiate 5.00 ms\n"));
  CHECK(has(text, "graph memory high-water 4.0 MiB reserved, 3.0 MiB used"));
  CHECK(has(text, "  timeline (9 bins of 1 s), from the first record\n"));
  CHECK(has(text, "    1.0-2.0 s     graphs     0.0 us (  0%)  eager  600.00 ms ( 60%)  idle 40%\n"));
  CHECK(text.find("not recorded") == std::string::npos);
  const std::string summary = format_ledger_summary(l);
  CHECK(has(summary, "  pid 42: 4 graphs, 14 launches; capture 35.80 ms, instantiate 5.00 ms; in graphs 71% of GPU "
                     "busy time\n"));
  CHECK(has(summary, "ran eager about 25 times"));

  const auto j = nlohmann::json::parse(write_ledger_json(l));
  const auto& jp = j["processes"][0];
  CHECK(jp["graphs"][0]["capture_ms"] == 12.5);
  CHECK(jp["graphs"][0]["replay_gpu_from"] == "records");
  CHECK(jp["graphs"][2]["replayed"] == false);
  CHECK(jp["families"][0]["never_replayed"] == nlohmann::json::array({2}));
  CHECK(jp["families"][0]["fallback"]["runs"] == 25);
  CHECK(jp["families"][0]["fallback"]["by_member"][0]["graph"] == 1);
  CHECK(jp["costs"]["capture_alloc_bytes"] == 6 << 20);
  CHECK(jp["work"]["in_graph_share"] == doctest::Approx(0.71));
  CHECK(jp["work"]["top"][1]["graph_node"]["origin"] == "blocks.0 at serve.py:41");
  CHECK(jp["work"]["timeline"].size() == 9);
  CHECK(jp["not_recorded"].empty());
}

TEST_CASE("ledger: no fallback is said for a family whose kernels did not run eager after the captures") {
  SyntheticRun r;
  AttachRun run = r.run;
  AttachWork& w = *run.processes[0].index.work;
  for (AttachWork::Group& g : w.eager)
    if (g.name != "_Z5otherv") g.launches_after_captures = 0;
  write_output((r.dir / "index.json").string(), write_attach_run(run));
  const Ledger l = make_ledger(r.dir.string());
  REQUIRE(l.processes[0].families.size() == 1);
  CHECK_FALSE(l.processes[0].families[0].fallback);
  CHECK(format_ledger(l).find("fallback") == std::string::npos);
  // One kernel of the three run eager is other code's, not the family's.
  for (AttachWork::Group& g : w.eager)
    if (g.name == "_Z4gemmv") g.launches_after_captures = g.launches;
  write_output((r.dir / "index.json").string(), write_attach_run(run));
  CHECK_FALSE(make_ledger(r.dir.string()).processes[0].families[0].fallback);
  // Without the end of the captures, a fallback cannot be told from a warm-up: said so.
  w.captures_end_s.reset();
  for (AttachWork::Group& g : w.eager) g.launches_after_captures = 0;
  write_output((r.dir / "index.json").string(), write_attach_run(run));
  CHECK(has(format_ledger(make_ledger(r.dir.string())),
            "fallbacks: not estimated (the index does not say when the captures ended)"));
}

TEST_CASE("ledger: without activity records a replay's GPU time is launches x the median makespan, labelled so") {
  SyntheticRun r;
  AttachRun run = r.run;
  AttachIndex& x = run.processes[0].index;
  x.work.reset();
  x.profile = x.profiling = true;
  x.graphs[0].profiled = true;
  x.graphs[0].profile_file = "profile-2.json", x.graphs[0].trace_file = "trace-2.json";
  x.graphs[0].makespan_us = 20;
  write_output((r.dir / "index.json").string(), write_attach_run(run));
  const Ledger l = make_ledger(r.dir.string());
  const LedgerGraph& g = l.processes[0].graphs[0];
  CHECK(g.replay_gpu_us == 200);
  CHECK(g.replay_gpu_from == "launches x median makespan");
  CHECK(g.replayed == true);
  const std::string text = format_ledger(l);
  CHECK(has(text, "~200.0 us"));
  CHECK(has(text, "  in replays: ~ launches x the median makespan of the replays profiled\n"));
  CHECK(has(text, "GPU work outside graphs: not recorded (profile --exec records it; capture --exec --eager)"));
}
