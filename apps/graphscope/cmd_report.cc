// graphscope report GRAPH [--trace TRACE] | A B | OUT_DIR  -o REPORT.html
#include <sys/stat.h>
#include <unistd.h>

#include <future>
#include <memory>
#include <optional>

#include "commands.h"
#include "inspect/formats/attach_json.h"
#include "inspect/formats/chrome_trace.h"
#include "inspect/analysis/diff.h"
#include "inspect/analysis/fold.h"
#include "inspect/render/diff_report.h"
#include "inspect/core/error.h"
#include "inspect/render/html_report.h"
#include "inspect/core/io.h"
#include "inspect/formats/load.h"
#include "inspect/analysis/profile.h"
#include "inspect/runs/run_page.h"
#include "inspect/core/text.h"

namespace graphscope::cli {
namespace {

bool is_directory(const std::string& path) {
  struct stat st{};
  return path != "-" && ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string origin(const std::string& path) { return path == "-" ? "standard input" : path; }

/// One graph and its profile, kept alive for the page. The trace may be
/// shared: in a run directory, by every graph whose entry names it.
struct Profiled {
  GraphDocument doc;
  std::shared_ptr<const Trace> trace;
  TraceJoin join;
  ProfileReport report;
  bool has_profile = false;
  std::optional<Folding> folding;  // found once when an analysis needed it before the page
};

ProfileOptions profile_options(const ReportRequest& q) {
  return cli::profile_options(q.threshold_us, q.tolerance_us, q.exec_graph_id, q.launches);
}

/// Joins p.trace, read already, to p.doc; trace_name names it in messages.
void join_trace(Profiled& p, const std::string& trace_name, const ProfileOptions& o) {
  p.report = profile_trace(p.doc, *p.trace, trace_name, o, p.join);
  p.has_profile = true;
}

/// Reads the trace and joins it; trace errors name the trace as given.
void profile_graph(Profiled& p, const std::string& trace_path, const std::string& trace_name, const ProfileOptions& o) {
  {
    InputText text(trace_path, json_head);
    p.trace = std::make_shared<const Trace>(read_chrome_trace(text.view(), trace_name));
  }
  join_trace(p, trace_name, o);
}

void add(HtmlReportInput& in, const Profiled& p, const std::string& label, int process = -1) {
  ReportGraph g;
  g.label = label;
  g.doc = &p.doc;
  g.process = process;
  if (p.has_profile) g.profile = &p.report, g.trace = p.trace.get(), g.join = &p.join;
  if (p.folding) g.folding = &*p.folding;
  in.graphs.push_back(g);
}

/// The page of an --exec output directory (lib/inspect/runs/run_page.h).
std::string run_report(const ReportRequest& q, const std::string& dir) {
  RunPageOptions o;
  o.profile = profile_options(q);
  o.fold = q.fold;
  o.svg_max_nodes = q.svg_max_nodes;
  return write_run_page(dir, o);
}

}  // namespace

std::string make_report(const ReportRequest& q) {
  if (q.inputs.size() == 1 && is_directory(q.inputs[0])) {
    if (!q.trace.empty())
      throw Error(ExitCode::usage, "report", "--trace goes with one graph, not with an --exec output directory");
    return run_report(q, q.inputs[0]);
  }
  for (const auto& path : q.inputs)
    if (is_directory(path))
      throw Error(ExitCode::usage, "report", path + " is a directory; give one --exec output directory alone");
  HtmlReportInput in;
  in.fold = q.fold;
  in.svg_max_nodes = q.svg_max_nodes;
  for (const auto& path : q.inputs) in.sources.push_back(origin(path));
  if (q.inputs.size() == 2) {
    if (!q.trace.empty()) throw Error(ExitCode::usage, "report", "--trace goes with one graph, not with two");
    if (q.inputs[0] == "-" && q.inputs[1] == "-")
      throw Error(ExitCode::usage, "report", "only one of A and B can be standard input");
    Profiled a, b;
    auto read_b = std::async(std::launch::async, [&] { return load_graph(q.inputs[1]); });
    a.doc = load_graph(q.inputs[0]);
    b.doc = read_b.get();
    // What repeats in each, found once for the diff and the page.
    a.folding = find_repeats(a.doc.root);
    b.folding = find_repeats(b.doc.root);
    GraphDiff d = diff_graphs(a.doc, b.doc, {}, &*a.folding, &*b.folding);
    std::string text = format_diff(d, origin(q.inputs[0]), origin(q.inputs[1]), 200);
    in.title = "graphscope diff: " + display_name(origin(q.inputs[0])) + " vs " + display_name(origin(q.inputs[1]));
    add(in, a, "A: " + display_name(origin(q.inputs[0])));
    add(in, b, "B: " + display_name(origin(q.inputs[1])));
    in.diff = &d;
    in.diff_text = text;
    return write_html_report(in);
  }
  Profiled g;
  if (!q.trace.empty() && q.trace == "-" && q.inputs[0] == "-")
    throw Error(ExitCode::usage, "report", "only one of GRAPH and --trace can be standard input");
  g.doc = load_graph(q.inputs[0]);
  in.title = "graphscope report: " + display_name(origin(q.inputs[0]));
  if (!q.trace.empty()) {
    profile_graph(g, q.trace, origin(q.trace), profile_options(q));
    in.sources.push_back(origin(q.trace));
  }
  add(in, g, g.doc.name.empty() ? display_name(origin(q.inputs[0])) : g.doc.name);
  return write_html_report(in);
}

void check_report_output(const std::string& output) {
  if (output == "-" && isatty(STDOUT_FILENO))
    throw Error(ExitCode::usage, "report", "standard output is a terminal; write the page to a file with -o REPORT.html");
}

Handler declare_report(CLI::App& sub) {
  auto q = std::make_shared<ReportRequest>();
  auto output = std::make_shared<std::string>("-");
  // Two positionals rather than one taking one or two, so that the usage
  // line reads INPUT [INPUT2].
  auto first = std::make_shared<std::string>(), second = std::make_shared<std::string>();
  sub.add_option("INPUT", *first, "A graph (any format dump reads), or an --exec output directory")->required();
  sub.add_option("INPUT2", *second, "A second graph: the page compares INPUT (A) with it (B)");
  sub.add_option("--trace", q->trace,
                 "With one graph: a Chrome trace with Kineto keys (graphscope's or a PyTorch profiler export) to "
                 "profile it");
  sub.add_option("-o,--output", *output,
                 "The HTML file, written atomically (default: standard output, when it is not a terminal)");
  sub.add_option("--exec-graph-id", q->exec_graph_id, "Which exec graph's records to analyse")
      ->check(whole_in(0, UINT32_MAX));
  sub.add_option("--launch", q->launches, "Only these graph launches, by correlation id (traces without graph ids)")
      ->delimiter(',')
      ->check(whole_in(0, UINT32_MAX));
  sub.add_option("--threshold-us", q->threshold_us, "Delay past which a node is blocked (default 5)")
      ->check(finite_in(0, 1e9, "a number of microseconds"));
  sub.add_option("--tolerance-us", q->tolerance_us, "How close an end must be to a start (default 2)")
      ->check(finite_in(0, 1e9, "a number of microseconds"));
  sub.add_flag("--no-fold", [q](int64_t) { q->fold = false; },
               "Draw every node (default: one copy of each repeated block, long runs as one box)");
  add_svg_max_nodes(sub, q->svg_max_nodes,
                    "Leave the picture out of larger graphs (the rest of the page still lists every node)");
  return [q, output, first, second] {
    q->inputs = {*first};
    if (!second->empty()) q->inputs.push_back(*second);
    check_report_output(*output);
    write_output(*output, make_report(*q));
    return 0;
  };
}

}  // namespace graphscope::cli
