// JSON write and read of a 100k-node graph document (targets on the 2-core
// development machine: write under 0.5 s; read and validate under 150 ms,
// issue 17). The graph has the shape of the
// recorded 100k-node benchmark graph: chained blocks of fork, four branches
// and join, kernels with launch geometry and ids, a memset every 50 blocks.
//
//   bench_json [NODES] [REPEATS]
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench_util.h"
#include "inspect/formats/graph_json.h"
#include "inspect/analysis/fold.h"
#include "inspect/core/json_tape.h"
#include "inspect/core/json_writer.h"
#include "inspect/model/validate.h"

using namespace graphscope;

static GraphDocument make_graph(uint32_t n) {
  GraphDocument doc;
  doc.exec_graph_id = 38;
  doc.root.graph_id = 37;
  doc.source_format = "graphscope";
  doc.root.nodes.resize(n);
  const char* names[] = {"_Z5scalePfif", "_Z3addPfPKfi"};
  for (uint32_t i = 0; i < n; ++i) {
    Node& x = doc.root.nodes[i];
    x.index = x.node_id = i;
    x.graph_id = 38;
    x.tools_id = (uint64_t(38) << 32) | i;
    x.template_tools_id = (uint64_t(37) << 32) | i;
    x.handle = 0x5636D1F54988ull + 0x768ull * i;
    uint32_t pos = i % 6, block = i / 6;
    if (pos == 4 && block % 50 == 49) {
      x.type = NodeType::memset;
      x.memset = MemsetInfo{0, 4, 1024, 1, 4096, 0x7EFF07E80000ull};
    } else {
      x.type = NodeType::kernel;
      x.kernel_name = names[pos % 2];
      KernelInfo k;
      k.demangled = pos % 2 ? "add(float*, float const*, int)" : "scale(float*, int, float)";
      k.grid = {256u / (pos + 1), 1, 1};
      k.block = {256, 1, 1};
      k.function_handle = 0x5636D1F32080ull;
      x.kernel = k;
    }
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
  int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  GraphDocument doc = make_graph(n);
  validate_graph(doc, "bench");
  std::string text;
  std::vector<double> w, f, t, r, v, rv;
  for (int i = 0; i < reps; ++i) w.push_back(bench::time_ms([&] { text = write_graph_json(doc); }));
  // Folding alone (the JSON's "repeats" section is part of every write).
  for (int i = 0; i < reps; ++i) f.push_back(bench::time_ms([&] { (void)find_repeats(doc.root); }));
  // The tape alone (issue 17: how much of a read is the parse), then the
  // read as commands do it; read + validate is taken per call, so its median
  // is of whole calls.
  for (int i = 0; i < reps; ++i) t.push_back(bench::time_ms([&] { JsonTape::parse(text, "bench", 64); }));
  for (int i = 0; i < reps; ++i) {
    GraphDocument back;
    r.push_back(bench::time_ms([&] { back = read_graph_json(text, "bench"); }));
    v.push_back(bench::time_ms([&] { validate_graph(back, "bench"); }));
    rv.push_back(r.back() + v.back());
    if (back.root.nodes.size() != n) return 1;
  }
  auto row = [](const char* step, const std::vector<double>& x, const char* target) {
    auto s = bench::stats(x);
    std::printf("%-22s %10.1f %10.1f %10s\n", step, s.best, s.median, target);
  };
  std::printf("json: %u nodes, %.1f MB\n", n, text.size() / 1e6);
  std::printf("%-22s %10s %10s %10s\n", "step", "best ms", "median ms", "target ms");
  row("write_graph_json", w, "500");
  row("  find_repeats", f, "");
  row("  JsonTape::parse", t, "");
  row("read_graph_json", r, "");
  row("  + validate_graph", v, "");
  row("read + validate", rv, "150");
  return 0;
}
