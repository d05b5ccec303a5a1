#include "commands.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "inspect/render/dot_writer.h"

namespace graphscope::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"dump", "Read a graph document (graphscope JSON, PyTorch get_graph_data JSON or a "
               "cudaGraphDebugDotPrint .dot) and write a summary, JSON, DOT or SVG",
       declare_dump},
      {"capture", "Load a workload shared object, capture its work into CUDA graphs (template kept), "
                  "instantiate, replay and walk every node into graphscope.graph/1 JSON",
       declare_capture},
      {"profile", "Replay a workload's graph under CUPTI tracing, or read a graph and a trace, and say which "
                  "orderings are real graph dependencies and which are fake, with what each cost",
       declare_profile},
      {"check", "Check a graph (and its profile report) against CI rules: node, kernel and depth limits, forbidden "
                "node types, node count against a baseline, blocking fake dependencies, critical-path efficiency",
       declare_check},
      {"diff", "Compare two graph documents of any format: nodes added or removed by kind (ids and handles "
               "ignored), changed launch geometry and sizes, edges added, removed or retyped, depth and width; "
               "exit 0 same, 1 differ",
       declare_diff},
      {"report", "Write one self-contained HTML page (no network) of a graph, a graph with its profile, two graphs' "
                 "diff or an --exec output directory: the folded picture with pan, zoom and search, node details, "
                 "the makespan account, fake dependencies, worst delays and a replay's timeline",
       declare_report},
      {"ranks", "Compare the graphs of a multi-rank job's ranks (an --exec output of torchrun, mpirun or srun): "
                "graphs paired by capture order or structure, nodes that differ, collective kernels per rank, "
                "profiles side by side, one merged trace; exit 0 all agree, 1 differ",
       declare_ranks},
      {"ledger", "The ledger of an --exec run: every graph per process with where it was captured, what it "
                 "cost (capture, instantiate, upload, pool and graph memory), its launches and GPU time in replays; "
                 "graphs captured at one place as a family, the buckets never replayed, identical ones; GPU work "
                 "outside graphs, the in-graph share, a timeline and fallbacks to eager",
       declare_ledger},
  };
  return table;
}

ProfileOptions profile_options(double threshold_us, double tolerance_us, int64_t exec_graph_id,
                               const std::vector<uint32_t>& launches) {
  ProfileOptions o;
  o.threshold_us = threshold_us;
  o.tolerance_us = tolerance_us;
  if (exec_graph_id >= 0) o.exec_graph_id = uint32_t(exec_graph_id);
  o.launches = launches;
  return o;
}

namespace {
// 1e9 as "1000000000", 0.1 as "0.1": bounds as a person writes them.
std::string bound(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}
}  // namespace

CLI::Validator finite_in(double lo, double hi, const std::string& what) {
  const std::string range = what + " from " + bound(lo) + " to " + bound(hi);
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        double v = 0;
        auto r = std::from_chars(s.data(), s.data() + s.size(), v);
        if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size() || !std::isfinite(v) || v < lo ||
            v > hi)
          return (s.size() > 40 ? s.substr(0, 40) + "..." : s) + " is not " + range;
        return "";
      },
      "NUMBER");
}

CLI::Validator whole_in(uint64_t lo, uint64_t hi) {
  const std::string range = "a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        uint64_t v = 0;
        auto r = std::from_chars(s.data(), s.data() + s.size(), v);
        if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size() || v < lo || v > hi)
          return (s.size() > 40 ? s.substr(0, 40) + "..." : s) + " is not " + range;
        return "";
      },
      "N");
}

CLI::Option* add_svg_max_nodes(CLI::App& sub, size_t& value, const std::string& help) {
  return sub.add_option("--svg-max-nodes", value, help + " (default " + std::to_string(kDefaultSvgMaxNodes) + ")")
      ->check(whole_in(0, 100000000));
}

std::string with_tag(const std::string& path, const std::string& tag) {
  if (tag.empty() || path.empty() || path == "-") return path;
  size_t slash = path.rfind('/');
  size_t dot = path.rfind('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return path + "." + tag;
  return path.substr(0, dot) + "." + tag + path.substr(dot);
}

}  // namespace graphscope::cli
