// The GPU work of a process (runs/work.h) from hand-built activity records:
// unions, eager groups, per-graph replays and the timeline's bins.
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <string>

#include "inspect/formats/attach_json.h"
#include "inspect/formats/chrome_trace.h"
#include "inspect/runs/work.h"
#include "test_data.h"

using namespace graphscope;

namespace {

constexpr uint64_t kMs = 1000000;  // a millisecond in ns

struct Records {
  Trace t;
  // A record from `start` to `end` milliseconds on the trace's clock.
  Activity& add(ActivityKind kind, const char* name, double start_ms, double end_ms) {
    Activity& a = t.activities.emplace_back();
    a.kind = kind;
    a.name = t.intern(name);
    a.start_ns = uint64_t(start_ms * double(kMs));
    a.end_ns = uint64_t(end_ms * double(kMs));
    return a;
  }
  Activity& graph(uint32_t id, uint32_t correlation, double start_ms, double end_ms) {
    Activity& a = add(ActivityKind::other, "graph", start_ms, end_ms);
    a.graph_id = id;
    a.correlation = correlation;
    return a;
  }
  Activity& kernel(const char* name, double start_ms, double end_ms, uint32_t grid = 8) {
    Activity& a = add(ActivityKind::kernel, name, start_ms, end_ms);
    a.grid[0] = grid, a.grid[1] = a.grid[2] = 1;
    a.block[0] = 128, a.block[1] = a.block[2] = 1;
    return a;
  }
};

}  // namespace

TEST_CASE("work: eager time is the busy time no graph replay covers, and overlap counts as graph") {
  Records r;
  r.graph(2, 10, 1000, 1500);        // 1.0 s to 1.5 s
  r.kernel("_Z4gemmv", 1200, 1800);  // overlaps the replay by 0.3 s
  r.kernel("_Z4gemmv", 2000, 2100);
  r.add(ActivityKind::memcpy, "Memcpy HtoD", 2050, 2060);  // inside the kernel's time
  r.add(ActivityKind::host, "host node", 2500, 2600);      // not GPU work: left out
  r.kernel("_Z7untimedv", 0, 0);                           // no times: left out
  const AttachWork w = summarize_work(r.t, 500 * kMs, std::nullopt, "graph trace");
  CHECK(w.source == "graph trace");
  CHECK(w.start_s == doctest::Approx(0.5));  // since the attach, 0.5 s on the trace's clock
  CHECK(w.end_s == doctest::Approx(1.6));
  CHECK(w.busy_us == doctest::Approx(900e3));
  CHECK(w.graph_us == doctest::Approx(500e3));
  CHECK(w.eager_us == doctest::Approx(400e3));
  CHECK(w.graph_records == 1);
  CHECK(w.eager_records == 3);
  CHECK_FALSE(w.captures_end_s);
  // Groups: durations summed whether or not a replay overlapped them.
  REQUIRE(w.eager.size() == 2);
  CHECK(w.eager[0].kind == "kernel");
  CHECK(w.eager[0].name == "_Z4gemmv");
  CHECK(w.eager[0].grid[0] == 8);
  CHECK(w.eager[0].block[0] == 128);
  CHECK(w.eager[0].launches == 2);
  CHECK(w.eager[0].gpu_us == doctest::Approx(700e3));
  CHECK(w.eager[0].first_s == doctest::Approx(0.7));
  CHECK(w.eager[0].last_s == doctest::Approx(1.5));
  CHECK(w.eager[1].kind == "memcpy");
  CHECK(w.eager[1].grid[0] == 0);
  // Bins of 1 s from the first record: [1.0, 2.0) and [2.0, 3.0).
  CHECK(w.bin_s == 1);
  REQUIRE(w.timeline.size() == 2);
  CHECK(w.timeline[0].graph_us == doctest::Approx(500e3));
  CHECK(w.timeline[0].eager_us == doctest::Approx(300e3));
  CHECK(w.timeline[1].graph_us == 0);
  CHECK(w.timeline[1].eager_us == doctest::Approx(100e3));
}

TEST_CASE("work: a record that spans bin edges is split between the bins at the edges") {
  Records r;
  r.kernel("_Z5firstv", 500, 600);
  r.graph(4, 1, 1000, 3200);         // across the edges at 1.5 s and 2.5 s
  r.kernel("_Z4longv", 1400, 1700);  // inside the replay: graph time, not eager
  const AttachWork w = summarize_work(r.t, 0, std::nullopt, "graph trace");
  REQUIRE(w.timeline.size() == 3);  // [0.5, 1.5) [1.5, 2.5) [2.5, 3.5)
  CHECK(w.timeline[0].graph_us == doctest::Approx(500e3));
  CHECK(w.timeline[0].eager_us == doctest::Approx(100e3));
  CHECK(w.timeline[1].graph_us == doctest::Approx(1000e3));
  CHECK(w.timeline[1].eager_us == 0);
  CHECK(w.timeline[2].graph_us == doctest::Approx(700e3));
  double graph = 0, eager = 0;
  for (const AttachWork::Bin& b : w.timeline) graph += b.graph_us, eager += b.eager_us;
  CHECK(graph == doctest::Approx(w.graph_us));
  CHECK(eager == doctest::Approx(w.eager_us));
}

TEST_CASE("work: a run without graph replays is all eager") {
  Records r;
  r.kernel("_Z1av", 10, 20);
  r.kernel("_Z1av", 15, 30);  // overlapping: the union counts once
  r.kernel("_Z1bv", 40, 41);
  const AttachWork w = summarize_work(r.t, 0, std::nullopt, "kernel records");
  CHECK(w.graph_us == 0);
  CHECK(w.graph_records == 0);
  CHECK(w.graphs.empty());
  CHECK(w.busy_us == doctest::Approx(21e3));
  CHECK(w.eager_us == doctest::Approx(21e3));
  REQUIRE(w.eager.size() == 2);
  CHECK(w.eager[0].gpu_us == doctest::Approx(25e3));  // durations, summed: 10 + 15 ms
  REQUIRE(w.timeline.size() == 1);
  CHECK(w.timeline[0].eager_us == doctest::Approx(21e3));
}

TEST_CASE("work: a run without eager work counts each graph's replays by their launches") {
  Records r;
  // Kernel records of two replays of exec graph 3 (correlations 7 and 8),
  // overlapping kernels inside each, and one replay of exec graph 9.
  for (uint32_t c : {7u, 8u}) {
    const double at = c == 7 ? 100 : 300;
    for (double k : {0.0, 5.0, 8.0}) {
      Activity& a = r.kernel("_Z4stepv", at + k, at + k + 10);
      a.graph_id = 3, a.correlation = c;
    }
  }
  Activity& a = r.add(ActivityKind::memcpy, "Memcpy DtoD", 200, 204);
  a.graph_id = 9, a.correlation = 12;
  const AttachWork w = summarize_work(r.t, 0, 50 * kMs, "kernel records");
  CHECK(w.eager.empty());
  CHECK(w.eager_records == 0);
  CHECK(w.eager_us == 0);
  CHECK(w.graph_records == 7);
  REQUIRE(w.graphs.size() == 2);
  CHECK(w.graphs[0].exec_graph_id == 3);
  CHECK(w.graphs[0].replays == 2);
  CHECK(w.graphs[0].gpu_us == doctest::Approx(36e3));  // two replays of 18 ms each
  CHECK(w.graphs[0].first_s == doctest::Approx(0.1));
  CHECK(w.graphs[0].last_s == doctest::Approx(0.318));
  CHECK(w.graphs[1].exec_graph_id == 9);
  CHECK(w.graphs[1].replays == 1);
  CHECK(w.graph_us == doctest::Approx(40e3));
  CHECK(w.captures_end_s == doctest::Approx(0.05));
}

TEST_CASE("work: eager groups part by geometry and count the launches after the captures ended") {
  Records r;
  r.kernel("_Z3addv", 10, 11, 4);  // before the captures ended: a warm-up
  r.kernel("_Z3addv", 500, 501, 4);
  r.kernel("_Z3addv", 600, 601, 4);
  r.kernel("_Z3addv", 700, 701, 16);  // another geometry
  const AttachWork w = summarize_work(r.t, 0, 100 * kMs, "graph trace");
  REQUIRE(w.eager.size() == 2);
  CHECK(w.eager[0].grid[0] == 4);
  CHECK(w.eager[0].launches == 3);
  CHECK(w.eager[0].launches_after_captures == 2);
  CHECK(w.eager[1].grid[0] == 16);
  CHECK(w.eager[1].launches_after_captures == 1);
}

TEST_CASE("work: past the cap on groups the smallest are counted together") {
  Records r;
  const size_t n = AttachWork::kMaxGroups + 5;
  for (size_t i = 0; i < n; ++i) {
    const std::string name = "_Z1k" + std::to_string(i);
    r.kernel(name.c_str(), double(i), double(i) + 0.001 * double(i + 1));  // kernel i lasts (i + 1) us
  }
  const AttachWork w = summarize_work(r.t, 0, std::nullopt, "kernel records");
  REQUIRE(w.eager.size() == AttachWork::kMaxGroups);
  CHECK(w.eager.front().name == "_Z1k" + std::to_string(n - 1));  // the longest first
  for (size_t i = 1; i < w.eager.size(); ++i) CHECK(w.eager[i - 1].gpu_us >= w.eager[i].gpu_us);
  CHECK(w.other_launches == 5);
  CHECK(w.other_us == doctest::Approx(1 + 2 + 3 + 4 + 5).epsilon(0.01));  // the five shortest
  CHECK(w.eager_records == n);
}

TEST_CASE("work: a run longer than the bins allow gets bins of whole seconds") {
  Records r;
  r.kernel("_Z1av", 0.5, 1);
  r.kernel("_Z1av", 2 * 3600 * 1000 + 0.5, 2 * 3600 * 1000 + 1000.5);  // two hours and a second later
  const AttachWork w = summarize_work(r.t, 0, std::nullopt, "kernel records");
  CHECK(w.bin_s == 3);  // 7201 s in at most 3600 bins
  CHECK(w.timeline.size() == 2401);
  CHECK(w.timeline.size() <= AttachWork::kMaxBins);
  CHECK(w.timeline.back().eager_us == doctest::Approx(1e6));
  // An hour exactly still fits in bins of a second.
  Records h;
  h.kernel("_Z1av", 0, 1);
  h.kernel("_Z1av", 3600 * 1000 - 1, 3600 * 1000);
  CHECK(summarize_work(h.t, 0, std::nullopt, "kernel records").timeline.size() == 3600);
}

TEST_CASE("work: no records, no work") {
  Trace t;
  const AttachWork w = summarize_work(t, 0, std::nullopt, "kernel records");
  CHECK(w.busy_us == 0);
  CHECK(w.timeline.empty());
  CHECK(w.eager.empty());
}

TEST_CASE("work: a summary writes into the process index and reads back the same") {
  Records r;
  r.graph(2, 10, 1000, 1500);
  r.kernel("_Z4gemmv", 1200, 1800);
  r.add(ActivityKind::memset, "Memset", 2000, 2001);
  AttachIndex x;
  x.pid = 7;
  x.work = summarize_work(r.t, 0, 900 * kMs, "graph trace");
  const std::string text = write_attach_index(x);
  const AttachIndex back = read_attach_index(text, "i.json");
  REQUIRE(back.work);
  CHECK(back.work->eager.size() == 2);
  CHECK(back.work->eager[0].launches_after_captures == 1);
  CHECK(back.work->graphs.size() == 1);
  CHECK(back.work->timeline.size() == x.work->timeline.size());
  CHECK(write_attach_index(back) == text);
}

TEST_CASE("work: an eager record stamped to end after the next work on its stream began lasts nothing") {
  Records r;
  // A copy "ending" 100 ms late, after the kernel behind it on its stream
  // (stream 7) ran; a kernel on another stream overlaps it rightly.
  Activity& copy = r.add(ActivityKind::memcpy, "Memcpy DtoD", 0, 100);
  copy.stream = 7;
  r.kernel("k", 2, 3).stream = 7;
  r.kernel("other", 1, 4).stream = 9;
  const AttachWork w = summarize_work(r.t, 0, std::nullopt, "kernel records");
  CHECK(w.misstamped_records == 1);
  CHECK(w.misstamped_us == doctest::Approx(100e3));
  CHECK(w.eager_records == 3);
  // Busy: the two kernels' union, 1 to 4 ms; the copy's claim left out.
  CHECK(w.busy_us == doctest::Approx(3e3));
  for (const AttachWork::Group& g : w.eager)
    if (g.name == "Memcpy DtoD") {
      CHECK(g.launches == 1);
      CHECK(g.gpu_us == 0);
    }
  const AttachWork back = read_attach_index(write_attach_index([&] {
                                              AttachIndex x;
                                              x.work = w;
                                              return x;
                                            }()),
                                            "i.json")
                              .work.value();
  CHECK(back.misstamped_records == 1);
  CHECK(back.misstamped_us == doctest::Approx(100e3));
}

TEST_CASE("work: a recorded serving loop's DtoD copies that CUPTI stamped late are left out of its times") {
  // One window of replays of the serving loop under profile --exec (H200,
  // tests/data/ledger/README.md): among its 68 copies, DtoD copies of 1 to
  // 32 KiB on the compute channel "last" 27-119 ms, all ending near one
  // instant, while the kernels behind them on their stream ran.
  const Trace t = read_chrome_trace(test::read_data("ledger/serving.profile.pid-759.trace-2.json"), "trace-2.json");
  uint64_t first = UINT64_MAX, last = 0;
  for (const Activity& a : t.activities) {
    first = std::min(first, a.start_ns);
    if (!(a.kind == ActivityKind::memcpy && t.names[a.name] == "Memcpy DtoD")) last = std::max(last, a.end_ns);
  }
  const AttachWork w = summarize_work(t, first, std::nullopt, "kernel records");
  CHECK(w.misstamped_records >= 4);
  CHECK(w.misstamped_us > 100e3);  // over 100 ms claimed
  // What is left fits in the window the other records span.
  CHECK(w.busy_us <= double(last - first) / 1e3);
  for (const AttachWork::Group& g : w.eager)
    if (g.name == "Memcpy DtoD") CHECK(g.gpu_us < 1e3);  // under a millisecond in all
}

namespace {

std::shared_ptr<const Origin> python_origin(const char* file, uint64_t line, const char* function,
                                            const char* module = "") {
  auto o = std::make_shared<Origin>();
  SourceFrame f;
  f.file = file, f.line = line, f.function = function;
  o->python.push_back(f);
  SourceFrame caller;
  caller.file = "/srv/app.py", caller.line = 120, caller.function = "step";
  o->python.push_back(caller);
  if (*module) {
    ModuleFrame m;
    m.name = module;
    o->modules.push_back(m);
  }
  return o;
}

}  // namespace

TEST_CASE("work: eager records go with the place their launch came from, places of one origin together") {
  Records r;
  r.kernel("_Z4gemmv", 10, 12).correlation = 1;
  r.kernel("_Z4gemmv", 13, 14).correlation = 2;
  r.kernel("_Z4relu", 15, 15.5).correlation = 3;
  r.kernel("_Z4gemmv", 20, 24).correlation = 4;   // site 3: the same origin as site 1
  r.kernel("_Z4norm", 30, 31).correlation = 5;    // site 2
  r.kernel("_Z4lost", 40, 41).correlation = 99;   // no site read for its launch
  r.kernel("_Z4anon", 50, 52).correlation = 6;    // site 4: nothing known of it
  LaunchSites sites;
  sites.launches = {{4, 3}, {1, 1}, {2, 1}, {3, 1}, {5, 2}, {6, 4}};
  sites.origins = {python_origin("/srv/model.py", 40, "forward", "layers.3.mlp"),
                   python_origin("/srv/model.py", 55, "forward"),
                   python_origin("/srv/model.py", 40, "forward", "layers.7.mlp"),  // another layer, the same code
                   nullptr};
  const AttachWork w = summarize_work(r.t, 0, uint64_t(16 * kMs), "graph trace", &sites);
  REQUIRE(w.sites_read);
  REQUIRE(w.sites.size() == 2);
  const AttachWork::Site& a = w.sites[0];
  CHECK(a.module == "layers.*.mlp");
  REQUIRE(a.python.size() == 2);
  CHECK(a.python[0].line == 40);
  CHECK(a.python[1].function == "step");
  CHECK(a.launches == 4);
  CHECK(a.launches_after_captures == 1);  // only the record at 20 ms began after 16 ms
  CHECK(a.gpu_us == doctest::Approx(7.5e3));
  CHECK(a.top == "_Z4gemmv");
  CHECK(w.sites[1].python[0].line == 55);
  CHECK(w.sites[1].launches == 1);
  CHECK(w.unsited_launches == 2);  // correlation 99 and the site with no origin
  CHECK(w.unsited_us == doctest::Approx(3e3));
  // Into the index and back.
  AttachIndex x;
  x.work = w;
  const AttachIndex back = read_attach_index(write_attach_index(x), "index.json");
  REQUIRE(back.work);
  REQUIRE(back.work->sites.size() == 2);
  CHECK(back.work->sites[0].module == "layers.*.mlp");
  CHECK(back.work->sites[0].python[1].line == 120);
  CHECK(back.work->unsited_launches == 2);
  // Without sites, none are said to be read.
  CHECK_FALSE(summarize_work(r.t, 0, std::nullopt, "graph trace").sites_read);
}

TEST_CASE("work: module paths keep their names and lose their indices") {
  CHECK(module_pattern("model.layers.12.self_attn.q_proj") == "model.layers.*.self_attn.q_proj");
  CHECK(module_pattern("blocks.0.1") == "blocks.*.*");
  CHECK(module_pattern("head") == "head");
  CHECK(module_pattern("") == "");
  CHECK(module_pattern("a1.b") == "a1.b");
}
