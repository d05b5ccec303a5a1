// The attach documents (attach_json.h) and the CUDA-free session the
// injection library drives (attach_session.h), on recorded outputs and
// hand-built calls and records.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <string>

#include "graph_builder.h"
#include "inspect/formats/attach_json.h"
#include "inspect/runs/attach_session.h"
#include "inspect/core/error.h"
#include "test_data.h"

using namespace graphscope;

namespace {

std::vector<std::string> files_named(const std::string& name, int depth) {
  std::vector<std::string> out;
  for (auto it = std::filesystem::recursive_directory_iterator(test::data_path("attach"));
       it != std::filesystem::recursive_directory_iterator(); ++it)
    if (it->path().filename() == name && it.depth() == depth + 1) out.push_back(it->path().string());
  std::sort(out.begin(), out.end());
  return out;
}

void check_same(const AttachIndex& a, const AttachIndex& b) {
  CHECK(a.pid == b.pid);
  CHECK(a.command_line == b.command_line);
  CHECK(a.attached == b.attached);
  CHECK(a.let_go == b.let_go);
  CHECK(a.let_go_count == b.let_go_count);
  CHECK(a.taken_back_count == b.taken_back_count);
  CHECK(a.stays_attached == b.stays_attached);
  CHECK(a.attach_error == b.attach_error);
  CHECK(a.complete == b.complete);
  CHECK(a.profile == b.profile);
  CHECK(a.profile_error == b.profile_error);
  CHECK(a.device.has_value() == b.device.has_value());
  CHECK(a.graphs.size() == b.graphs.size());
  for (size_t i = 0; i < a.graphs.size() && i < b.graphs.size(); ++i) {
    CHECK(a.graphs[i].exec_graph_id == b.graphs[i].exec_graph_id);
    CHECK(a.graphs[i].file == b.graphs[i].file);
    CHECK(a.graphs[i].first_kernels == b.graphs[i].first_kernels);
    CHECK(a.graphs[i].launches == b.graphs[i].launches);
    CHECK(a.graphs[i].makespan_us == b.graphs[i].makespan_us);
  }
  CHECK(a.skipped.size() == b.skipped.size());
  CHECK(a.errors == b.errors);
}

struct Env {
  std::map<std::string, std::string> vars;
  std::function<const char*(const char*)> getenv() const {
    return [this](const char* k) {
      auto it = vars.find(k);
      return it == vars.end() ? static_cast<const char*>(nullptr) : it->second.c_str();
    };
  }
};

}  // namespace

TEST_CASE("every recorded process index reads back and writes the same bytes") {
  auto files = files_named("index.json", 1);
  CHECK(files.size() >= 8);
  for (const auto& f : files) {
    CAPTURE(f);
    const std::string text = read_file(f);
    AttachIndex x = read_attach_index(text, f);
    // Recordings made before documents named their writer lack the version
    // line; everything else is written back byte for byte.
    std::string written = write_attach_index(x);
    const std::string version_line = "  \"graphscope_version\": \"" GRAPHSCOPE_VERSION "\",\n";
    if (text.find("\"graphscope_version\"") == std::string::npos) {
      const auto at = written.find(version_line);
      REQUIRE(at != std::string::npos);
      written.erase(at, version_line.size());
    }
    CHECK(written == text);
    check_same(x, read_attach_index(write_attach_index(x), f));
  }
}

TEST_CASE("every recorded run index reads back, and writes what it reads") {
  auto files = files_named("index.json", 0);
  CHECK(files.size() >= 8);
  for (const auto& f : files) {
    CAPTURE(f);
    AttachRun run = read_attach_run(read_file(f), f);
    CHECK_FALSE(run.command.empty());
    for (const auto& p : run.processes) CHECK(p.dir == "pid-" + std::to_string(p.index.pid));
    const std::string text = write_attach_run(run);
    AttachRun back = read_attach_run(text, "run.json");
    CHECK(back.command == run.command);
    CHECK(back.exit_code == run.exit_code);
    CHECK(back.profile == run.profile);
    REQUIRE(back.processes.size() == run.processes.size());
    for (size_t i = 0; i < run.processes.size(); ++i) check_same(run.processes[i].index, back.processes[i].index);
    CHECK(write_attach_run(back) == text);
  }
}

TEST_CASE("attach documents of another kind or shape are refused in one line") {
  auto err = [](auto f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(err([] { read_attach_index(R"({"schema": "graphscope.attach-run/1"})", "i.json"); }) ==
        "i.json (schema: \"graphscope.attach-run/1\" is not a process index (expected graphscope.attach/1))");
  CHECK(err([] { read_attach_index(R"({"schema": "graphscope.attach/1", "pid": 1})", "i.json"); }) ==
        "i.json (command_line: missing)");
  CHECK(err([] { read_attach_run("[]", "r.json"); }) == "r.json (the document is an array, not a run index)");
}

TEST_CASE("the options travel through the environment and back") {
  AttachConfig c;
  c.out = "/tmp/out dir";
  c.min_nodes = 3;
  c.exec_ids = {7, 9};
  c.max_graphs = 4;
  c.let_go_after_s = 2.5;
  c.rest_after_s = 0;  // --stay-attached
  c.profile = true;
  c.skip_replays = 2;
  c.replays = 30;
  c.threshold_us = 0.1;
  c.tolerance_us = 2.5;
  c.quiet = true;
  c.walk_at_destroy = false;
  Env env;
  for (auto& [k, v] : attach_environment(c)) env.vars[k] = v;
  CHECK(env.vars.at("GRAPHSCOPE_THRESHOLD_US") == "0.10000000000000001");
  std::vector<std::string> errors;
  AttachConfig back = attach_config_from(env.getenv(), errors);
  CHECK(errors.empty());
  CHECK(back.out == c.out);
  CHECK(back.min_nodes == 3);
  CHECK(back.exec_ids == c.exec_ids);
  CHECK(back.max_graphs == 4);
  CHECK(back.let_go_after_s == 2.5);
  CHECK(back.rest_after_s == 0);
  CHECK(back.profile);
  CHECK(back.skip_replays == 2);
  CHECK(back.replays == 30);
  CHECK(back.threshold_us == c.threshold_us);
  CHECK(back.tolerance_us == c.tolerance_us);
  CHECK(back.quiet);
  CHECK(!back.walk_at_destroy);
  CHECK(attach_config_from(Env().getenv(), errors).walk_at_destroy);  // on unless said
  CHECK(attach_config_from(Env().getenv(), errors).rest_after_s == 2);
  // The default rest travels as no variable at all.
  for (auto& [k, v] : attach_environment(AttachConfig())) CHECK(k != "GRAPHSCOPE_REST_AFTER");
}

TEST_CASE("a malformed variable is said and its default kept") {
  Env env;
  env.vars = {{"GRAPHSCOPE_MIN_NODES", "-3"},     {"GRAPHSCOPE_REPLAYS", "many"},
              {"GRAPHSCOPE_THRESHOLD_US", "nan"}, {"GRAPHSCOPE_LET_GO_AFTER", "-1"},
              {"GRAPHSCOPE_REST_AFTER", "soon"},  {"GRAPHSCOPE_EXEC_IDS", "4,,x,5"}};
  std::vector<std::string> errors;
  AttachConfig c = attach_config_from(env.getenv(), errors);
  CHECK(c.min_nodes == 0);
  CHECK(c.replays == 20);
  CHECK(c.threshold_us == 5);
  CHECK(c.let_go_after_s == 0);
  CHECK(c.rest_after_s == 2);
  CHECK(c.exec_ids == std::vector<uint32_t>{4, 5});
  CHECK(errors == std::vector<std::string>{
                      "GRAPHSCOPE_MIN_NODES=-3 is not a non-negative integer; using 0",
                      "GRAPHSCOPE_LET_GO_AFTER=-1 is not a non-negative number; using the default",
                      "GRAPHSCOPE_REST_AFTER=soon is not a non-negative number; using the default",
                      "GRAPHSCOPE_REPLAYS=many is not a non-negative integer; using 20",
                      "GRAPHSCOPE_THRESHOLD_US=nan is not a non-negative number; using the default",
                      "GRAPHSCOPE_EXEC_IDS: '' is not an id",
                      "GRAPHSCOPE_EXEC_IDS: 'x' is not an id",
                  });
}

TEST_CASE("a session dumps or skips each graph, and says why in its index") {
  AttachConfig c;
  c.out = "out";
  c.min_nodes = 3;
  c.exec_ids = {2, 3, 4};
  c.max_graphs = 2;
  AttachSession s(c, 42, {"python3", "app.py"});
  CHECK(s.dir() == "out/pid-42");
  CHECK(s.skip_before_walk(std::nullopt) == std::optional<std::string>("no exec graph id (CUPTI unavailable)"));
  CHECK(s.skip_before_walk(9u) == std::optional<std::string>("not in GRAPHSCOPE_EXEC_IDS"));
  CHECK_FALSE(s.skip_before_walk(2u));
  CHECK(s.skip_after_walk(2, 2));  // under the minimum
  GraphDocument doc = test::fork_join();
  CHECK_FALSE(s.skip_before_walk(3u));
  CHECK_FALSE(s.skip_after_walk(3, doc.root.nodes.size()));
  CHECK(s.dumped(3, AttachSession::summary_of(doc)) == 0);
  CHECK_FALSE(s.skip_before_walk(4u));
  CHECK(s.dumped(4, AttachSession::summary_of(doc)) == 1);
  CHECK(s.skip_before_walk(2u) == std::optional<std::string>("GRAPHSCOPE_MAX_GRAPHS reached"));
  const AttachIndex& x = s.index();
  REQUIRE(x.graphs.size() == 2);
  CHECK(x.graphs[0].file == "graph-3.json");
  CHECK(x.graphs[0].nodes == doc.root.nodes.size());
  CHECK(x.graphs[0].first_kernels == std::vector<std::string>{"fork", "scale", "scale"});
  REQUIRE(x.skipped.size() == 4);
  CHECK(x.skipped[2].nodes == 2);
  CHECK(x.skipped[2].why == "fewer than GRAPHSCOPE_MIN_NODES nodes");
  for (int i = 0; i < 150; ++i) s.error("e" + std::to_string(i));
  CHECK(s.index().errors.size() == 100);
}

TEST_CASE("a session analyses the replays in its window and the work that ran beside them") {
  AttachConfig c;
  c.profile = true;
  c.skip_replays = 1;
  c.replays = 2;
  AttachSession s(c, 7, {});
  GraphDocument doc = test::fork_join();
  size_t g = s.dumped(5, AttachSession::summary_of(doc));
  size_t never = s.dumped(6, AttachSession::summary_of(doc));
  CHECK_FALSE(s.launched(g, 100));  // the first launch is left out
  CHECK(s.launched(g, 101));
  CHECK(s.launched(g, 102));
  CHECK_FALSE(s.launched(g, 103));  // past the window
  CHECK(s.index().graphs[g].launches == 4);
  CHECK(s.index().graphs[g].replays_analysed == 2);
  Trace all;
  auto act = [&](std::optional<uint32_t> graph, uint32_t corr, uint64_t start, uint64_t end) {
    Activity a;
    a.graph_id = graph;
    a.correlation = corr;
    a.start_ns = start;
    a.end_ns = end;
    all.activities.push_back(a);
  };
  act(5, 100, 0, 10);          // left out: before the window
  act(5, 101, 100, 110);       // in
  act(std::nullopt, 0, 105, 200);  // other work while it ran: in
  act(5, 102, 300, 310);       // in
  act(5, 103, 400, 410);       // left out: after the window
  act(std::nullopt, 0, 500, 600);  // other work after: left out
  std::string why;
  Trace t = s.replays_of(g, all, 0, &why);
  CHECK(why.empty());
  REQUIRE(t.activities.size() == 3);
  CHECK(t.activities[1].graph_id == std::nullopt);
  s.replays_of(never, all, 3, &why);
  CHECK(why == "never launched");
  s.not_profiled(never, why);
  ProfileReport r;
  r.fake = 2, r.blocking = 1, r.makespan_us = 12.5, r.critical_path_us = 8;
  s.profiled(g, r);
  const AttachIndex& x = s.index();
  CHECK(x.graphs[g].profile_file == "profile-5.json");
  CHECK(x.graphs[g].trace_file == "trace-5.json");
  CHECK(x.graphs[g].fake == 2);
  CHECK(x.graphs[never].profile_error == "never launched");
  CHECK(s.report_text([](size_t) { return std::string("REPORT\n"); }) ==
        "== pid 7, exec graph 5 (5 nodes, 4 launches)\nREPORT\n\n"
        "== pid 7, exec graph 6 (5 nodes, 0 launches)\nnot profiled: never launched\n\n");
  // The index says what was analysed, and reads back.
  AttachIndex back = read_attach_index(write_attach_index(x), "i.json");
  CHECK(back.profiling);
  CHECK(back.graphs[g].replays_analysed == 2);
  CHECK(back.graphs[never].profile_error == "never launched");
  CHECK(write_attach_index(back) == write_attach_index(x));
}

TEST_CASE("a launch window with no record of its replays says how many records were dropped") {
  AttachConfig c;
  c.skip_replays = 0;
  AttachSession s(c, 1, {});
  size_t g = s.dumped(5, AttachSession::summary_of(test::fork_join()));
  s.launched(g, 9);
  std::string why;
  Trace none;
  s.replays_of(g, none, 17, &why);
  CHECK(why == "no activity record of its replays (dropped records: 17)");
  AttachSession late(c, 1, {});
  size_t h = late.dumped(5, AttachSession::summary_of(test::fork_join()));
  c.skip_replays = 5;
  AttachSession skipping(c, 1, {});
  size_t k = skipping.dumped(5, AttachSession::summary_of(test::fork_join()));
  skipping.launched(k, 1);
  skipping.replays_of(k, none, 0, &why);
  CHECK(why == "no replay in the window (GRAPHSCOPE_SKIP_REPLAYS 5, 1 launches)");
  (void)h;
}

TEST_CASE("a process index carries its rank and the device's ordinal and PCI bus id, and reads them back") {
  AttachIndex x = read_attach_index(test::read_data("attach/profile/pid-787/index.json"), "i.json");
  CHECK_FALSE(x.rank.has_value());  // an index of a release before ranks still reads
  x.rank = AttachRank{1, 1, 2, "RANK"};
  REQUIRE(x.device);
  x.device->ordinal = 1;
  x.device->pci_bus_id = "0000:65:00.0";
  const std::string text = write_attach_index(x);
  AttachIndex back = read_attach_index(text, "i.json");
  REQUIRE(back.rank);
  CHECK(back.rank->rank == 1);
  CHECK(back.rank->local_rank == 1);
  CHECK(back.rank->world_size == 2);
  CHECK(back.rank->source == "RANK");
  CHECK(back.device->ordinal == 1);
  CHECK(back.device->pci_bus_id == "0000:65:00.0");
  CHECK(write_attach_index(back) == text);
  AttachRun run;
  run.command = {"torchrun"};
  run.processes.push_back({"rank-1", x});
  AttachRun run_back = read_attach_run(write_attach_run(run), "run.json");
  CHECK(run_back.processes[0].dir == "rank-1");
  CHECK(run_back.processes[0].index.rank->source == "RANK");
  // A malformed rank object is refused in one line.
  std::string bad = text;
  bad.replace(bad.find("\"rank\": 1"), 9, "\"rank\": -1");
  CHECK_THROWS_AS(read_attach_index(bad, "i.json"), Error);
}

TEST_CASE("a process index counts its let gos and take backs, and reads them back") {
  AttachIndex x = read_attach_index(test::read_data("attach/profile/pid-787/index.json"), "i.json");
  CHECK(x.let_go_count == 0);  // absent: none
  const std::string none = write_attach_index(x);
  CHECK(none.find("let_go_count") == std::string::npos);
  CHECK(none.find("taken_back_count") == std::string::npos);
  x.let_go_count = 2;
  x.taken_back_count = 1;
  x.let_go = "GRAPHSCOPE_LET_GO_AFTER (1 s) without a new graph";
  const std::string text = write_attach_index(x);
  CHECK(text.find("\"let_go_count\": 2") != std::string::npos);
  AttachIndex back = read_attach_index(text, "i.json");
  CHECK(back.let_go_count == 2);
  CHECK(back.taken_back_count == 1);
  CHECK(back.stays_attached.empty());
  CHECK(write_attach_index(back) == text);
  // Staying attached, and why.
  x.let_go.clear();
  x.stays_attached =
      "graphscope stays attached to CUPTI: a graph was instantiated through a call the preload "
      "library does not see";
  const std::string stays = write_attach_index(x);
  CHECK(stays.find("\"stays_attached\": \"graphscope stays attached") != std::string::npos);
  CHECK(read_attach_index(stays, "i.json").stays_attached == x.stays_attached);
  // A count that is not a count is refused in one line.
  std::string bad = text;
  bad.replace(bad.find("\"let_go_count\": 2"), 17, "\"let_go_count\": \"2\"");
  CHECK_THROWS_AS(read_attach_index(bad, "i.json"), Error);
}

TEST_CASE("a process index carries the ledger's costs, launches and GPU work, and reads them back") {
  // Recorded on an H200 (tests/data/ledger): costs and launches as written.
  AttachIndex x = read_attach_index(test::read_data("ledger/serving.capture/pid-1148/index.json"), "i.json");
  CHECK_FALSE(x.profiling);
  CHECK(x.launches_counted);
  REQUIRE(x.graphs.size() >= 2);
  CHECK(x.graphs[0].capture_ms.value_or(0) > 0);
  CHECK(x.graphs[0].first_launch_s.value_or(0) > 0);
  CHECK(x.attached_monotonic_s);
  CHECK(read_attach_index(write_attach_index(x), "i.json").graphs[0].capture_ms == x.graphs[0].capture_ms);
  x.launches_counted = true;
  x.launches_missed = "launches while graphscope had let go of CUPTI are not counted";
  x.graph_mem_reserved_high = 4 << 20;
  x.graph_mem_used_high = 3 << 20;
  AttachedGraph& g = x.graphs[0];
  g.created_s = 1.25;
  g.capture_ms = 12.5;
  g.instantiate_ms = 0.75;
  g.uploads = 1;
  g.upload_ms = 0.125;
  g.capture_alloc_bytes = 2 << 20;
  g.launches = 111;
  g.first_launch_s = 2.5;
  g.last_launch_s = 9.75;
  x.graphs[1].launches = 0;  // counted, never launched
  AttachWork w;
  w.source = "graph trace";
  w.start_s = 1, w.end_s = 10;
  w.busy_us = 5000, w.graph_us = 4000, w.eager_us = 1000;
  w.graph_records = 111, w.eager_records = 40;
  w.captures_end_s = 1.5;
  AttachWork::Group k;
  k.kind = "kernel";
  k.name = "_Z4gemmv";
  k.grid[0] = 8, k.grid[1] = k.grid[2] = 1;
  k.block[0] = 128, k.block[1] = k.block[2] = 1;
  k.launches = 30, k.launches_after_captures = 20, k.gpu_us = 900, k.first_s = 1.1, k.last_s = 9.5;
  w.eager.push_back(k);
  AttachWork::Group c;
  c.kind = "memcpy", c.name = "Memcpy HtoD", c.launches = 10, c.gpu_us = 100, c.first_s = 1, c.last_s = 2;
  w.eager.push_back(c);
  w.other_launches = 3, w.other_us = 1.5;
  w.graphs.push_back({2, 111, 4000, 2.5, 9.8});
  w.timeline = {{0, 300}, {400, 0}, {3600, 700}};
  w.bin_s = 3;
  x.work = w;
  const std::string text = write_attach_index(x);
  CHECK(text.find("\"launches_counted\": true") != std::string::npos);
  CHECK(text.find("\"timeline\": [[0, 300], [400, 0], [3600, 700]]") != std::string::npos);
  CHECK(text.find("replays_analysed") == std::string::npos);  // not profiled: launches only
  const AttachIndex back = read_attach_index(text, "i.json");
  CHECK(back.launches_counted);
  CHECK_FALSE(back.profiling);  // launches no longer say profiling where the index counts them
  CHECK(back.launches_missed == x.launches_missed);
  CHECK(back.graph_mem_reserved_high == uint64_t(4 << 20));
  CHECK(back.graph_mem_used_high == uint64_t(3 << 20));
  const AttachedGraph& b = back.graphs[0];
  CHECK(b.created_s == 1.25);
  CHECK(b.capture_ms == 12.5);
  CHECK(b.instantiate_ms == 0.75);
  CHECK(b.uploads == 1);
  CHECK(b.upload_ms == 0.125);
  CHECK(b.capture_alloc_bytes == uint64_t(2 << 20));
  CHECK(b.launches == 111);
  CHECK(b.first_launch_s == 2.5);
  CHECK(b.last_launch_s == 9.75);
  CHECK(back.graphs[1].capture_ms == x.graphs[1].capture_ms);  // as recorded
  REQUIRE(back.work);
  const AttachWork& bw = *back.work;
  CHECK(bw.source == "graph trace");
  CHECK(bw.start_s == 1);
  CHECK(bw.end_s == 10);
  CHECK(bw.busy_us == 5000);
  CHECK(bw.graph_us == 4000);
  CHECK(bw.eager_us == 1000);
  CHECK(bw.graph_records == 111);
  CHECK(bw.eager_records == 40);
  CHECK(bw.captures_end_s == 1.5);
  REQUIRE(bw.eager.size() == 2);
  CHECK(bw.eager[0].kind == "kernel");
  CHECK(bw.eager[0].name == "_Z4gemmv");
  CHECK(bw.eager[0].grid[0] == 8);
  CHECK(bw.eager[0].block[0] == 128);
  CHECK(bw.eager[0].block[2] == 1);
  CHECK(bw.eager[0].launches == 30);
  CHECK(bw.eager[0].launches_after_captures == 20);
  CHECK(bw.eager[0].gpu_us == 900);
  CHECK(bw.eager[0].first_s == 1.1);
  CHECK(bw.eager[0].last_s == 9.5);
  CHECK(bw.eager[1].grid[0] == 0);  // a copy has no geometry
  CHECK(bw.other_launches == 3);
  CHECK(bw.other_us == 1.5);
  REQUIRE(bw.graphs.size() == 1);
  CHECK(bw.graphs[0].exec_graph_id == 2);
  CHECK(bw.graphs[0].replays == 111);
  CHECK(bw.graphs[0].gpu_us == 4000);
  CHECK(bw.graphs[0].first_s == 2.5);
  CHECK(bw.graphs[0].last_s == 9.8);
  CHECK(bw.bin_s == 3);
  REQUIRE(bw.timeline.size() == 3);
  CHECK(bw.timeline[2].graph_us == 3600);
  CHECK(bw.timeline[2].eager_us == 700);
  CHECK(write_attach_index(back) == text);
  // The run index embeds the same members.
  AttachRun run;
  run.command = {"python3"};
  run.processes.push_back({"pid-754", x});
  const std::string run_text = write_attach_run(run);
  const AttachRun run_back = read_attach_run(run_text, "run.json");
  REQUIRE(run_back.processes[0].index.work);
  CHECK(run_back.processes[0].index.work->timeline.size() == 3);
  CHECK(run_back.processes[0].index.graphs[0].capture_alloc_bytes == uint64_t(2 << 20));
  CHECK(write_attach_run(run_back) == run_text);
}

TEST_CASE("an index from before the ledger reads its launches as profiling did") {
  const AttachIndex x = read_attach_index(test::read_data("attach/profile/pid-787/index.json"), "i.json");
  CHECK(x.profiling);
  CHECK_FALSE(x.launches_counted);
  CHECK_FALSE(x.work);
  const std::string text = write_attach_index(x);
  CHECK(text.find("launches_counted") == std::string::npos);
  CHECK(text.find("replays_analysed") != std::string::npos);
}

TEST_CASE("the ledger's figures in an index are refused in one line when negative, too large or too many") {
  AttachIndex x;
  x.pid = 7;
  AttachWork w;
  w.source = "kernel records";
  w.timeline = {{1, 2}};
  x.work = w;
  const std::string text = write_attach_index(x);
  auto refusal = [&](const std::string& from, const std::string& to) {
    std::string bad = text;
    const size_t at = bad.find(from);
    REQUIRE(at != std::string::npos);
    bad.replace(at, from.size(), to);
    try {
      read_attach_index(bad, "i.json");
    } catch (const Error& e) {
      CHECK(e.code() == ExitCode::bad_input);
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(refusal("\"busy_us\": 0", "\"busy_us\": -1") == "i.json (work.busy_us: is negative (-1))");
  CHECK(refusal("\"end_s\": 0", "\"end_s\": 1e300") == "i.json (work.end_s: is 1e+300, more than 1000000000)");
  CHECK(refusal("\"bin_s\": 1", "\"bin_s\": 0") == "i.json (work.bin_s: is 0, expected a positive interval)");
  CHECK(refusal("[[1, 2]]", "[[1, 2, 3]]") ==
        "i.json (work.timeline[0]: holds 3 numbers, expected 2: [graph_us, eager_us])");
  std::string bins = "[";
  for (size_t i = 0; i <= AttachWork::kMaxBins; ++i) bins += i ? ", [0, 0]" : "[0, 0]";
  CHECK(refusal("[[1, 2]]", bins + "]") == "i.json (work.timeline: holds 3601 entries, more than 3600)");
  std::string groups = "[";
  for (size_t i = 0; i <= AttachWork::kMaxGroups; ++i)
    groups += std::string(i ? ", " : "") +
              R"({"kind": "kernel", "name": "k", "launches": 1, "gpu_us": 1, "first_s": 0, "last_s": 0})";
  CHECK(refusal("\"eager\": []", "\"eager\": " + groups + "]") ==
        "i.json (work.eager: holds 2001 entries, more than 2000)");
  CHECK(refusal("\"eager\": []",
                R"("eager": [{"kind": "kernel", "name": "k", "grid": [1, 1], "block": [1, 1, 1], "launches": 1, )"
                R"("gpu_us": 1, "first_s": 0, "last_s": 0}])") ==
        "i.json (work.eager[0].grid: holds 2 numbers, expected 3)");
  CHECK(refusal("\"eager\": []",
                R"("eager": [{"kind": "kernel", "name": "k", "launches": 1, "launches_after_captures": 2, )"
                R"("gpu_us": 1, "first_s": 0, "last_s": 0}])") ==
        "i.json (work.eager[0].launches_after_captures: is more than launches)");
}
