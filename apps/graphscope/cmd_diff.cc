// graphscope diff A B [--json] [-o OUT] [--ignore-geometry] [--ignore-sizes] [-q]
#include <future>
#include <memory>

#include "commands.h"
#include "inspect/analysis/diff.h"
#include "inspect/formats/diff_json.h"
#include "inspect/render/diff_report.h"
#include "inspect/core/error.h"
#include "inspect/core/io.h"
#include "inspect/formats/load.h"

namespace graphscope::cli {
namespace {

struct DiffCli {
  std::string a, b;
  std::string output = "-";
  bool json = false, quiet = false;
  size_t max_lines = 20;
  DiffOptions options;
};

std::string origin(const std::string& path) {
  return path == "-" ? "standard input" : path;
}

int run_diff(const DiffCli& c) {
  if (c.a == "-" && c.b == "-")
    throw Error(ExitCode::usage, "diff", "only one of A and B can be standard input");
  // The two documents are read side by side: for large JSON documents the
  // reading is most of the time. A's error is the one reported when both
  // are bad.
  auto b = std::async(std::launch::async, [&] { return load_graph(c.b); });
  GraphDocument a = load_graph(c.a);
  GraphDocument bd = b.get();
  GraphDiff d = diff_graphs(a, bd, c.options);
  if (!c.quiet) {
    std::string text = c.json ? write_diff_json(d, origin(c.a), origin(c.b))
                              : format_diff(d, origin(c.a), origin(c.b), c.max_lines);
    write_output(c.output, text);
  }
  return static_cast<int>(d.same() ? ExitCode::ok : ExitCode::failed);
}

}  // namespace

Handler declare_diff(CLI::App& sub) {
  auto c = std::make_shared<DiffCli>();
  sub.add_option("A", c->a, "The first graph document (any format dump reads); - reads stdin")->required();
  sub.add_option("B", c->b, "The second graph document")->required();
  auto* json = sub.add_flag("--json", c->json, "Write graphscope.diff/1 JSON (every node and edge)");
  auto* quiet =
      sub.add_flag("-q,--quiet", c->quiet, "Write nothing: the exit code says same (0) or differ (1)");
  json->excludes(quiet);
  sub.add_option("-o,--output", c->output, "Output file, written atomically (default: standard output)");
  sub.add_flag("--ignore-geometry", c->options.ignore_geometry,
               "Do not compare grid, block, cluster and shared memory of kernels");
  sub.add_flag("--ignore-sizes", c->options.ignore_sizes,
               "Do not compare memcpy, memset and allocation sizes or memset values");
  sub.add_option("--max-lines", c->max_lines, "Lines per section of the text report (default 20)")
      ->check(whole_in(1, 1000000000));
  return [c] { return run_diff(*c); };
}

}  // namespace graphscope::cli
