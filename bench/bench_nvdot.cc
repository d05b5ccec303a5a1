// Reading a cudaGraphDebugDotPrint file and writing its JSON, against the
// anchor: cgraph's bare agread of the same file, side by side in one run
// (target: at most 1.3x). Runs alternate anchor and candidate so both see
// the same machine state.
//
//   bench_nvdot FILE.dot [REPEATS]
#include <graphviz/cgraph.h>

#include <cstdio>
#include <cstdlib>

#include "bench_util.h"
#include "inspect/core/io.h"
#include "inspect/formats/graph_json.h"
#include "inspect/core/json_writer.h"
#include "inspect/formats/nvdot_reader.h"
#include "inspect/model/validate.h"

using namespace graphscope;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_nvdot FILE.dot [REPEATS]\n");
    return 2;
  }
  int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  std::string text = read_file(argv[1]);
  std::vector<double> anchor, read, full;
  size_t nodes = 0, json_bytes = 0;
  for (int i = 0; i < reps; ++i) {
    // The anchor reads the file itself, as `agread` is used bare: the
    // candidate's time includes reading the file too.
    anchor.push_back(bench::time_ms([&] {
      FILE* f = std::fopen(argv[1], "r");
      Agraph_t* g = f ? agread(f, nullptr) : nullptr;
      if (!g) std::exit(1);
      agclose(g);
      std::fclose(f);
    }));
    read.push_back(bench::time_ms([&] { nodes = total_nodes(read_nvidia_dot(read_file(argv[1]), argv[1]).root); }));
    full.push_back(bench::time_ms([&] {
      GraphDocument doc = read_nvidia_dot(read_file(argv[1]), argv[1]);
      validate_graph(doc, argv[1]);
      json_bytes = write_graph_json(doc).size();
    }));
  }
  auto a = bench::stats(anchor), r = bench::stats(read), f = bench::stats(full);
  std::printf("nvdot: %s, %.1f MB, %zu nodes, JSON %.1f MB, %d repeats\n", argv[1], text.size() / 1e6, nodes,
              json_bytes / 1e6, reps);
  std::printf("%-38s %9s %9s %7s\n", "step", "best ms", "median", "ratio");
  std::printf("%-38s %9.1f %9.1f %7s\n", "anchor: cgraph agread(FILE) + agclose", a.best, a.median, "1.00");
  std::printf("%-38s %9.1f %9.1f %7.2f\n", "read file + read_nvidia_dot", r.best, r.median, r.median / a.median);
  std::printf("%-38s %9.1f %9.1f %7.2f  (target <= 1.30)\n", "read file + nvdot + validate + JSON", f.best, f.median,
              f.median / a.median);
  return 0;
}
