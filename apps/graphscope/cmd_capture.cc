// graphscope capture WORKLOAD.so [options] [-- ARGS]
#include <memory>

#include "attach.h"
#include "commands.h"
#include "inspect/analysis/fold.h"
#include "inspect/render/dot_writer.h"
#include "inspect/core/error.h"
#include "inspect/core/io.h"
#include "inspect/formats/graph_json.h"
#include "inspect/core/json_writer.h"
#include "inspect/analysis/summary.h"
#include "capture/capture.h"

namespace graphscope::cli {
namespace {

struct CaptureCli {
  std::string workload;
  std::vector<std::string> args;
  std::string output = "-", dot, svg, nvidia_dot, nvidia_dot_flags = "verbose", graph;
  std::string mode = "global", instantiate = "now";
  bool summary = false, no_details = false, handles = false;
  int replays = 20, device = 0;
  double timeout = 120;
  size_t svg_max_nodes = kDefaultSvgMaxNodes;
  bool no_fold = false;
  // --exec: attach to a command instead of loading a workload.
  bool exec = false;
  AttachOptions attach;
};

// "out.json" -> "out.forward.json" when a workload has several graphs.
std::string per_graph(const std::string& path, const std::string& name, bool several) {
  return several ? with_tag(path, name) : path;
}

unsigned parse_dot_flags(const std::string& s) {
  if (s == "verbose") return 1;
  if (s == "default" || s == "none") return 0;
  char* end = nullptr;
  unsigned long v = std::strtoul(s.c_str(), &end, 0);
  if (!s.empty() && end && *end == 0 && v <= 0xffffffffUL) return unsigned(v);
  throw Error(ExitCode::usage, "--nvidia-dot-flags " + s, "expected verbose, default or a number of cudaGraphDebugDotFlags");
}

int run_capture(const CaptureCli& c) {
  capture::CaptureOptions o;
  o.workload = c.workload;
  o.args = c.args;
  o.graph = c.graph;
  o.capture_mode = c.mode;
  o.instantiate = c.instantiate == "later" ? capture::Instantiate::later
                  : c.instantiate == "never" ? capture::Instantiate::never
                                             : capture::Instantiate::now;
  o.replays = c.replays;
  o.timeout_s = c.timeout;
  o.device = c.device;
  o.walk.details = !c.no_details;
  o.walk.handles = c.handles;
  o.origins = !c.attach.no_origins;
  o.nvidia_dot = !c.nvidia_dot.empty();
  if (o.nvidia_dot) o.nvidia_dot_flags = parse_dot_flags(c.nvidia_dot_flags);
  std::vector<capture::CapturedGraph> graphs = capture::capture_workload(o);
  bool several = graphs.size() > 1;
  if (several && c.output == "-" && !c.summary) {
    std::string names;
    for (const auto& g : graphs) names += (names.empty() ? "" : ", ") + g.doc.name;
    throw Error(ExitCode::usage, "the workload has " + std::to_string(graphs.size()) + " graphs (" + names + ")",
                "pick one with --graph, or write one file each with -o FILE.json");
  }
  // Everything made first, then published together: a failure leaves no
  // output at all.
  OutputSet outputs;
  std::string text;
  for (const auto& g : graphs) {
    // What repeats, found once for every output of this graph.
    const Folding folding = find_repeats(g.doc.root);
    const Folding* drawn = c.no_fold ? nullptr : &folding;
    if (c.summary)
      text += format_summary(g.doc, summarize(g.doc), c.workload + " graph " + g.doc.name, &folding) + "\n";
    if (c.output != "-" || !c.summary)
      outputs.add(per_graph(c.output, g.doc.name, several), write_graph_json(g.doc, &folding));
    if (!c.dot.empty()) outputs.add(per_graph(c.dot, g.doc.name, several), write_dot(g.doc, nullptr, drawn));
    if (!c.svg.empty())
      outputs.add(per_graph(c.svg, g.doc.name, several), render_svg(g.doc, c.svg_max_nodes, nullptr, drawn));
    if (!c.nvidia_dot.empty()) outputs.add(per_graph(c.nvidia_dot, g.doc.name, several), g.nvidia_dot);
  }
  if (c.summary) outputs.add("-", text);
  outputs.commit();
  return 0;
}

}  // namespace

Handler declare_capture(CLI::App& sub) {
  auto c = std::make_shared<CaptureCli>();
  sub.add_option("WORKLOAD", c->workload, "Workload shared object (see graphscope/workload.h); with --exec, the "
                                         "command to run");
  sub.add_option("ARGS", c->args, "Arguments for the workload's setup, after --; with --exec, the command's");
  add_attach_options(sub, c->exec, c->attach, true);
  sub.add_option("--exec-graph-id", c->attach.exec_ids, "--exec: dump only these exec graph ids")
      ->check(whole_in(0, UINT32_MAX));
  sub.add_option("-o,--output", c->output, "graphscope.graph/1 JSON (default: standard output); several graphs: "
                                           "FILE.NAME.json each");
  sub.add_flag("--summary", c->summary, "Print the summary of each graph instead of JSON on standard output");
  sub.add_option("--dot", c->dot, "Also write graphscope's DOT picture to FILE")->type_name("FILE");
  sub.add_option("--svg", c->svg, "Also write the picture laid out as SVG to FILE")->type_name("FILE");
  add_svg_max_nodes(sub, c->svg_max_nodes, "Refuse to lay out larger pictures as SVG");
  sub.add_flag("--no-fold", c->no_fold,
               "DOT/SVG: draw every node (default: one copy of each repeated block, long runs as one box)");
  sub.add_option("--name", c->graph, "Capture only the workload's graph of this name");
  sub.add_option("--graph", c->graph, "Deprecated alias of --name (removed in the next release)");
  sub.add_option("--capture-mode", c->mode, "cudaStreamCaptureMode: global (default), thread_local or relaxed")
      ->check(CLI::IsMember({"global", "thread_local", "relaxed"}));
  sub.add_option("--instantiate", c->instantiate,
                 "now (default: instantiate, then walk), later (walk the template, then instantiate) or never "
                 "(template only: no exec graph id, no replay)")
      ->check(CLI::IsMember({"now", "later", "never"}));
  sub.add_option("--replays", c->replays, "Steady-state replays timed after the first (default 20)")
      ->check(whole_in(0, 1000000));
  sub.add_option("--timeout", c->timeout, "Seconds the workload may run, set-up to tear-down (default 120)")
      ->check(finite_in(0.1, 1e7, "a number of seconds"));
  sub.add_option("--device", c->device, "CUDA device ordinal (default 0)")->check(whole_in(0, 1024));
  sub.add_flag("--no-details", c->no_details, "Walk types, ids, kernel names and edges only");
  sub.add_flag("--handles", c->handles, "Also record node and function handles (process addresses)");
  sub.add_option("--nvidia-dot", c->nvidia_dot, "Also write cudaGraphDebugDotPrint of the same graph");
  sub.add_option("--nvidia-dot-flags", c->nvidia_dot_flags,
                 "Flags for --nvidia-dot: verbose (default), default, or a number");
  return [c] {
    capture::require_cuda("capture");
    if (c->exec) {
      c->attach.command = c->args;
      if (!c->workload.empty()) c->attach.command.insert(c->attach.command.begin(), c->workload);
      return run_attached(c->attach);
    }
    if (c->workload.empty())
      throw Error(ExitCode::usage, "capture", "give a WORKLOAD.so, or --exec -- COMMAND to attach to a program");
    return run_capture(*c);
  };
}

}  // namespace graphscope::cli
