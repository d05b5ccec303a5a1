// graphscope profile WORKLOAD.so [options] [-- ARGS]
// graphscope profile --graph GRAPH --trace TRACE [options]
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include "attach.h"
#include "commands.h"
#include "inspect/formats/chrome_trace.h"
#include "inspect/analysis/fold.h"
#include "inspect/render/dot_writer.h"
#include "inspect/core/error.h"
#include "inspect/core/io.h"
#include "inspect/formats/graph_json.h"
#include "inspect/render/html_report.h"
#include "inspect/core/json_writer.h"
#include "inspect/formats/load.h"
#include "inspect/core/parallel.h"
#include "inspect/analysis/profile.h"
#include "inspect/formats/profile_json.h"
#include "inspect/render/profile_report.h"
#include "inspect/core/text.h"
#include "capture/replay.h"

namespace graphscope::cli {
namespace {

struct ProfileCli {
  std::string workload, graph, trace, output = "-", trace_out, graph_out, svg, dot, name, html;
  size_t svg_max_nodes = kDefaultSvgMaxNodes;
  bool no_fold = false;
  std::vector<std::string> args;
  bool json = false;
  double threshold = 5, tolerance = 2, timeout = 300;
  int64_t exec_graph_id = -1;
  std::vector<uint32_t> launches;
  int replays = 20, warmup = 3, device = 0;
  bool exec = false;
  AttachOptions attach;
  std::vector<int> connections;
  std::string mode = "global";
};

// GRAPHSCOPE_TIMINGS=1: each phase's wall time on standard error, for the
// benchmarks (bench/profile_offline.sh) and for users with huge traces.
class Phases {
 public:
  Phases() : on_(std::getenv("GRAPHSCOPE_TIMINGS") && *std::getenv("GRAPHSCOPE_TIMINGS")) {}
  void done(const char* phase) {
    if (!on_) return;
    auto now = std::chrono::steady_clock::now();
    std::fprintf(stderr, "timing  %-14s %8.1f ms\n", phase, std::chrono::duration<double, std::milli>(now - last_).count());
    last_ = now;
  }

 private:
  bool on_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

// Report (text or JSON) and the optional trace, rendered before anything is
// written, so a failure leaves no output.
ProfileReport emit(const ProfileCli& c, const GraphDocument& doc, const Trace& trace, const std::string& trace_name,
                   std::vector<std::pair<std::string, std::string>>& out, std::string& text, const std::string& suffix,
                   Phases* phases = nullptr) {
  const ProfileOptions o = profile_options(c.threshold, c.tolerance, c.exec_graph_id, c.launches);
  TraceJoin join;
  ProfileReport r = profile_trace(doc, trace, trace_name, o, join);
  if (phases) phases->done("analyze");
  std::string report = c.json ? write_profile_json(r, doc) : format_profile(r, doc);
  if (phases) phases->done("report");
  if (c.output == "-") text += (suffix.empty() || c.json ? "" : "== " + suffix + "\n") + report + (c.json ? "" : "\n");
  else out.emplace_back(with_tag(c.output, suffix), std::move(report));
  // The join made for the analysis serves the trace; what repeats is found
  // once for the graph, the page and the pictures.
  if (!c.trace_out.empty()) out.emplace_back(with_tag(c.trace_out, suffix), write_chrome_trace(trace, &doc, &r, &join));
  std::optional<Folding> found;
  auto folding = [&]() -> const Folding& { return found ? *found : found.emplace(find_repeats(doc.root)); };
  if (!c.graph_out.empty()) out.emplace_back(with_tag(c.graph_out, suffix), write_graph_json(doc, &folding()));
  if (!c.html.empty()) {
    HtmlReportInput in;
    in.title = "graphscope profile: " + (doc.name.empty() ? trace_name : doc.name);
    in.sources = {c.workload.empty() ? c.graph : c.workload};
    if (c.workload.empty()) in.sources.push_back(c.trace);
    in.fold = !c.no_fold;
    in.svg_max_nodes = c.svg_max_nodes;
    ReportGraph g;
    g.label = doc.name.empty() ? "the graph" : doc.name;
    g.doc = &doc, g.profile = &r, g.trace = &trace, g.join = &join, g.folding = &folding();
    in.graphs.push_back(g);
    out.emplace_back(with_tag(c.html, suffix), write_html_report(in));
  }
  if (!c.svg.empty() || !c.dot.empty()) {
    DotOverlay overlay = profile_overlay(r);
    const Folding* drawn = c.no_fold ? nullptr : &folding();
    if (!c.svg.empty()) out.emplace_back(with_tag(c.svg, suffix), render_svg(doc, c.svg_max_nodes, &overlay, drawn));
    if (!c.dot.empty()) out.emplace_back(with_tag(c.dot, suffix), write_dot(doc, &overlay, drawn));
  }
  return r;
}

// Publishes what emit() made, all or nothing: the files, then the text on
// standard output.
void publish(const std::vector<std::pair<std::string, std::string>>& out, const std::string& text) {
  OutputSet set;
  for (const auto& [path, data] : out) set.add(path, data);
  if (!text.empty()) set.add("-", text);
  set.commit();
}

// How the verdicts of one graph change between runs with different numbers
// of hardware connections: totals per run, then every node whose verdict or
// blocking differs.
std::string compare_runs(const GraphDocument& doc, const std::vector<int>& runs,
                         const std::vector<ProfileReport>& reports) {
  std::string s = "verdicts by CUDA_DEVICE_MAX_CONNECTIONS" +
                  (doc.name.empty() ? "" : " (graph " + printable(doc.name) + ")") + "\n";
  char buf[256];
  for (size_t k = 0; k < runs.size(); ++k) {
    const auto& r = reports[k];
    std::snprintf(buf, sizeof buf, "  %2d connections: %zu real, %zu fake (%zu blocking), time lost %.1f us, makespan %.1f us\n",
                  runs[k], r.real, r.fake, r.blocking, r.time_lost_us, r.makespan_us);
    s += buf;
  }
  size_t changed = 0;
  for (size_t i = 0; i < doc.root.nodes.size(); ++i) {
    bool same = true;
    for (size_t k = 1; k < reports.size(); ++k)
      same &= reports[k].nodes[i].verdict == reports[0].nodes[i].verdict &&
              reports[k].nodes[i].blocking == reports[0].nodes[i].blocking;
    if (same) continue;
    if (changed++ == 0) s += "  changed:\n";
    std::snprintf(buf, sizeof buf, "    node %zu:", i);
    s += buf;
    for (size_t k = 0; k < runs.size(); ++k) {
      const auto& p = reports[k].nodes[i];
      s += " " + std::to_string(runs[k]) + ": " + std::string(to_string(p.verdict)) + (p.blocking ? " blocking" : "") +
           (k + 1 < runs.size() ? "," : "");
    }
    s += "\n";
  }
  if (!changed) s += "  no node's verdict changes\n";
  return s;
}

int run_offline(const ProfileCli& c) {
  if (c.graph.empty() || c.trace.empty())
    throw Error(ExitCode::usage, "profile", "give a WORKLOAD.so, or both --graph and --trace");
  if (c.graph == "-" && c.trace == "-")
    throw Error(ExitCode::usage, "profile", "only one of --graph and --trace can be standard input");
  Phases phases;
  // The graph is read while the trace is: on a large trace, the graph's
  // reader (one thread) and the trace's (every core) together. The graph's
  // error, when both fail, is the one reported, as if read first.
  GraphDocument doc;
  Trace trace;
  run_beside([&] { doc = load_graph(c.graph); },
             [&] {
               InputText text(c.trace, json_head);
               trace = read_chrome_trace(text.view(), c.trace);
             });
  phases.done("read inputs");
  std::vector<std::pair<std::string, std::string>> out;
  std::string text;
  emit(c, doc, trace, c.trace, out, text, "", &phases);
  publish(out, text);
  phases.done("write");
  return 0;
}

int run_live(const ProfileCli& c) {
  std::vector<int> runs = c.connections.empty() ? std::vector<int>{0} : c.connections;
  std::vector<std::pair<std::string, std::string>> out;
  std::string text;
  std::map<std::string, std::pair<GraphDocument, std::vector<ProfileReport>>> by_graph;
  for (int conn : runs) {
    capture::ProfileRunOptions o;
    o.capture.workload = c.workload;
    o.capture.args = c.args;
    o.capture.graph = c.name;
    o.capture.capture_mode = c.mode;
    o.capture.timeout_s = c.timeout;
    o.capture.device = c.device;
    o.capture.origins = !c.attach.no_origins;
    o.capture.replays = 0;  // the traced replays below are the measurement
    o.warmup = c.warmup;
    o.replays = c.replays;
    o.connections = conn;
    o.progress = isatty(STDERR_FILENO);
    auto graphs = capture::profile_workload(o);
    for (const auto& g : graphs) {
      std::string suffix;
      if (graphs.size() > 1) suffix += g.doc.name;
      if (runs.size() > 1) suffix += (suffix.empty() ? "c" : ".c") + std::to_string(conn);
      ProfileReport r = emit(c, g.doc, g.trace, "the trace of " + c.workload + " graph " + g.doc.name, out, text, suffix);
      auto& entry = by_graph[g.doc.name];
      if (entry.second.empty()) entry.first = g.doc;
      entry.second.push_back(std::move(r));
    }
  }
  if (runs.size() > 1 && !c.json) {
    std::string cmp;
    for (const auto& [name, entry] : by_graph)
      if (entry.second.size() == runs.size()) cmp += compare_runs(entry.first, runs, entry.second);
    if (c.output == "-") text += cmp;
    else out.emplace_back(with_tag(c.output, "compare"), cmp);
  }
  publish(out, text);
  return 0;
}

}  // namespace

Handler declare_profile(CLI::App& sub) {
  auto c = std::make_shared<ProfileCli>();
  sub.add_option("WORKLOAD", c->workload, "Workload shared object to capture and replay under CUPTI");
  sub.add_option("ARGS", c->args, "Arguments for the workload's setup, after --");
  // Options by mode: offline (a graph and a trace), live (a workload, or an
  // application with --exec), and those of every mode.
  CLI::App* offline = sub.add_option_group("Offline", "profile --graph GRAPH --trace TRACE");
  CLI::App* live = sub.add_option_group("Live", "profile WORKLOAD.so [-- ARGS], and --exec");
  CLI::App* attach = sub.add_option_group("Attach", "profile --exec [options] -- COMMAND [ARGS]");
  offline->add_option("--graph", c->graph, "Offline: the graph (graphscope or PyTorch JSON, or cudaGraphDebugDotPrint DOT)");
  offline->add_option("--trace", c->trace, "Offline: a Chrome trace with Kineto keys (graphscope's or a PyTorch profiler export)");
  sub.add_option("--exec-graph-id", c->exec_graph_id, "Which exec graph's records to analyse")
      ->check(whole_in(0, UINT32_MAX));
  offline->add_option("--launch", c->launches,
                      "Offline: only these graph launches, by correlation id (traces without graph ids; "
                      "default: every launch that matches the graph)")
      ->delimiter(',')
      ->check(whole_in(0, UINT32_MAX));
  sub.add_flag("--json", c->json, "Write the graphscope.profile/1 report instead of text");
  sub.add_option("-o,--output", c->output, "Report file (default: standard output)");
  sub.add_option("--trace-out", c->trace_out, "Also write a Chrome trace (Perfetto UI) with lanes per channel, "
                                              "graph edges as flows and fake dependencies marked");
  sub.add_option("--threshold-us", c->threshold, "Delay past which a node is blocked (default 5)")->check(finite_in(0, 1e9, "a number of microseconds"));
  sub.add_option("--tolerance-us", c->tolerance, "How close an end must be to a start (default 2)")
      ->check(finite_in(0, 1e9, "a number of microseconds"));
  live->add_option("--replays", c->replays, "Live: traced replays (default 20)")->check(whole_in(1, 1000000));
  live->add_option("--warmup", c->warmup, "Live: untraced replays first (default 3; with --exec 1)")->check(whole_in(0, 1000000));
  live->add_option("--connections", c->connections,
                   "Live: run with CUDA_DEVICE_MAX_CONNECTIONS=N (1-32); several values compare runs")
      ->check(whole_in(1, 32));
  sub.add_option("--svg", c->svg, "Also write the picture laid out as SVG to FILE, nodes coloured by their delay")->type_name("FILE");
  sub.add_option("--dot", c->dot, "Also write that picture as DOT to FILE")->type_name("FILE");
  sub.add_option("--html", c->html,
                 "Also write a self-contained HTML report (as `graphscope report` makes; with --exec, of the "
                 "whole output directory)");
  add_svg_max_nodes(sub, c->svg_max_nodes, "Refuse to lay out larger pictures as SVG");
  sub.add_flag("--no-fold", c->no_fold,
               "DOT/SVG: draw every node (default: one copy of each repeated block, long runs as one box)");
  live->add_option("--graph-out", c->graph_out, "Live: also write the captured graph (graphscope.graph/1 JSON)");
  live->add_option("--name", c->name, "Live: profile only the workload's graph of this name");
  live->add_option("--capture-mode", c->mode, "Live: global (default), thread_local or relaxed")
      ->check(CLI::IsMember({"global", "thread_local", "relaxed"}));
  live->add_option("--timeout", c->timeout, "Live: seconds the workload may run (default 300)")->check(finite_in(0.1, 1e7, "a number of seconds"));
  live->add_option("--device", c->device, "Live: CUDA device ordinal (default 0)")->check(whole_in(0, 1024));
  add_attach_options(*attach, c->exec, c->attach, false);
  auto* warmup = live->get_option("--warmup");
  return [c, warmup]() -> int {
    if (c->exec) {
      // A usage error before what this build can do.
      if (c->attach.let_go_after_s > 0)
        throw Error(ExitCode::usage, "--let-go-after",
                    "profile --exec traces replays until the application exits; use it with capture --exec");
      if (c->attach.stay_attached)
        throw Error(ExitCode::usage, "--stay-attached",
                    "profile --exec stays attached until the application exits; use it with capture --exec");
      capture::require_cuda("profile --exec");
      AttachOptions& a = c->attach;
      a.command = c->args;
      if (!c->workload.empty()) a.command.insert(a.command.begin(), c->workload);
      a.profile = true;
      a.replays = uint32_t(c->replays);
      a.skip_replays = warmup->count() ? uint32_t(c->warmup) : 1;  // an application may replay a graph only a few times
      a.threshold_us = c->threshold;
      a.tolerance_us = c->tolerance;
      if (c->exec_graph_id >= 0) a.exec_ids = {uint32_t(c->exec_graph_id)};
      a.report = c->output;
      // The reports and the page are published together, after the
      // application ended (its exit code is passed through).
      OutputSet outputs;
      const int rc = run_attached(a, &outputs);
      if (!c->html.empty()) {
        ReportRequest q;
        q.inputs = {a.out_dir};
        q.threshold_us = c->threshold, q.tolerance_us = c->tolerance;
        q.fold = !c->no_fold;
        q.svg_max_nodes = c->svg_max_nodes;
        outputs.add(c->html, make_report(q));
      }
      outputs.commit();
      return rc;
    }
    if (c->workload.empty()) return run_offline(*c);
    if (!c->graph.empty() || !c->trace.empty())
      throw Error(ExitCode::usage, "profile", "give either a WORKLOAD.so or --graph and --trace, not both");
    return run_live(*c);
  };
}

}  // namespace graphscope::cli
