// Offline analysis at scale: a 100k-node graph and 1M activity records (10
// replays), target at most 1 s and 1 GiB on the 2-core development machine.
// Records are synthesized by scheduling the graph: each node starts 0.2 us
// after its last predecessor ends and on one of 8 compute channels,
// serialized per channel, so both real and fake dependencies occur. Also
// times writing and reading the same trace as Chrome trace JSON.
//
//   bench_profile [NODES] [REPLAYS] [DIR]
// With DIR, also writes the graph (DIR/graph.json) and the trace
// (DIR/trace.json) for timing the whole command (bench/profile_offline.sh).
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "bench_util.h"
#include "inspect/formats/chrome_trace.h"
#include "inspect/core/io.h"
#include "inspect/formats/graph_json.h"
#include "inspect/core/json_writer.h"
#include "inspect/analysis/profile.h"
#include "inspect/model/validate.h"

using namespace graphscope;

static GraphDocument make_graph(uint32_t n, uint32_t exec) {
  GraphDocument doc;
  doc.exec_graph_id = exec;
  doc.root.graph_id = 1;
  doc.root.nodes.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    Node& x = doc.root.nodes[i];
    x.index = x.node_id = i;
    x.type = NodeType::kernel;
    x.kernel_name = i % 2 ? "_Z3addPfPKfi" : "_Z5scalePfif";
    x.graph_id = exec;
    x.tools_id = (uint64_t(exec) << 32) | i;
    uint32_t pos = i % 6;
    if (i == 0) continue;
    if (pos == 0) x.dependencies.push_back({i - 1});
    else if (pos < 5) x.dependencies.push_back({i - pos});
    else
      for (uint32_t b = 1; b <= 4; ++b) x.dependencies.push_back({i - 5 + b});
  }
  link_dependents(doc.root);
  return doc;
}

int main(int argc, char** argv) {
  uint32_t n = argc > 1 ? uint32_t(std::atoi(argv[1])) : 100000;
  uint32_t replays = argc > 2 ? uint32_t(std::atoi(argv[2])) : 10;
  const uint32_t exec = 5;
  GraphDocument doc = make_graph(n, exec);
  Trace t;
  uint32_t names[2] = {t.intern("_Z5scalePfif"), t.intern("_Z3addPfPKfi")};
  t.activities.reserve(size_t(n) * replays);
  std::vector<double> end(n);
  std::minstd_rand pick(7);
  double clock_us = 0;
  for (uint32_t r = 0; r < replays; ++r) {
    double channel_free[8] = {0};
    for (auto& c : channel_free) c = clock_us;
    for (uint32_t i = 0; i < n; ++i) {
      double ready = clock_us;
      for (const auto& d : doc.root.nodes[i].dependencies) ready = std::max(ready, end[d.from]);
      uint32_t ch = uint32_t(pick() % 8);  // siblings share a channel now and then: fake dependencies
      double start = std::max(ready + 0.2, channel_free[ch] + 0.1);
      double dur = 1.0 + (i % 5);
      end[i] = start + dur;
      channel_free[ch] = end[i];
      Activity a;
      a.kind = ActivityKind::kernel;
      a.name = names[i % 2];
      a.start_ns = uint64_t(start * 1000);
      a.end_ns = uint64_t(end[i] * 1000);
      a.channel_type = 1;
      a.channel_id = ch;
      a.stream = 13 + i % 5;
      a.correlation = 1000 + r;
      a.graph_id = exec;
      a.graph_node_id = (uint64_t(exec) << 32) | i;
      t.activities.push_back(a);
    }
    clock_us = *std::max_element(end.begin(), end.end()) + 10;
  }
  ProfileReport rep;
  double analyze = bench::time_ms([&] { rep = analyze_profile(doc, t, {}); });
  // The same trace as PyTorch 2.11 writes it: no graph ids, only the
  // launch's correlation id (join_launch.cc).
  Trace bare = t;
  for (Activity& a : bare.activities) a.graph_id.reset(), a.graph_node_id.reset();
  ProfileReport bare_rep;
  double analyze_bare = bench::time_ms([&] { bare_rep = analyze_profile(doc, bare, {}); });
  std::string json;
  double write = bench::time_ms([&] { json = write_chrome_trace(t, nullptr, nullptr); });
  Trace back;
  double read = bench::time_ms([&] { back = read_chrome_trace(json, "bench"); });
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  std::printf("profile: %u nodes, %zu records, %u replays: real %zu, fake %zu (%zu blocking), time lost %.1f us\n", n,
              t.activities.size(), rep.replays, rep.real, rep.fake, rep.blocking, rep.time_lost_us);
  std::printf("%-34s %9.1f ms  (target <= 1000)\n", "analyze_profile", analyze);
  std::printf("%-34s %9.1f ms  (%.2fx with ids; target <= 1.5x): %zu unique, %zu order, %zu interchangeable, "
              "%zu ambiguous\n",
              "analyze_profile without ids", analyze_bare, analyze_bare / analyze, bare_rep.assigned[1],
              bare_rep.assigned[2], bare_rep.assigned[3], bare_rep.assigned[4]);
  std::printf("%-34s %9.1f ms  (%.1f MB)\n", "write_chrome_trace", write, json.size() / 1e6);
  std::printf("%-34s %9.1f ms\n", "read_chrome_trace", read);
  std::printf("%-34s %9.1f MiB  (target <= 1024)\n", "peak resident memory (whole run)", ru.ru_maxrss / 1024.0);
  if (argc > 3) {
    std::string dir = argv[3];
    write_output(dir + "/graph.json", write_graph_json(doc));
    write_output(dir + "/trace.json", json);
  }
  return back.activities.size() == t.activities.size() ? 0 : 1;
}
