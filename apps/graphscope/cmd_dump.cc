// graphscope dump FILE [--json|--dot|--svg] [-o OUT]
#include <memory>

#include "commands.h"
#include "inspect/render/dot_writer.h"
#include "inspect/core/io.h"
#include "inspect/formats/graph_json.h"
#include "inspect/core/json_writer.h"
#include "inspect/formats/load.h"
#include "inspect/analysis/summary.h"

namespace graphscope::cli {
namespace {

struct DumpOptions {
  std::string input;
  std::string output = "-";
  bool json = false, dot = false, svg = false;
  size_t svg_max_nodes = kDefaultSvgMaxNodes;
  bool no_fold = false;
};

int run_dump(const DumpOptions& o) {
  GraphDocument doc = load_graph(o.input);
  std::string text;
  if (o.json) {
    write_graph_json_file(o.output, doc);  // a large graph's first nodes written while the rest are formatted
    return 0;
  }
  if (o.dot) text = write_dot(doc, nullptr, !o.no_fold);
  else if (o.svg) text = render_svg(doc, o.svg_max_nodes, nullptr, !o.no_fold);
  else text = format_summary(doc, summarize(doc), o.input == "-" ? "standard input" : o.input);
  write_output(o.output, text);
  return 0;
}

}  // namespace

Handler declare_dump(CLI::App& sub) {
  auto o = std::make_shared<DumpOptions>();
  sub.add_option("FILE", o->input, "Graph document: .json (graphscope or PyTorch) or .dot; - reads stdin")
      ->required();
  auto* json = sub.add_flag("--json", o->json, "Write graphscope.graph/1 JSON");
  auto* dot = sub.add_flag("--dot", o->dot, "Write a Graphviz DOT picture");
  auto* svg = sub.add_flag("--svg", o->svg, "Write the picture laid out as SVG");
  json->excludes(dot)->excludes(svg);
  dot->excludes(svg);
  sub.add_option("-o,--output", o->output, "Output file, written atomically (default: standard output)");
  sub.add_flag("--no-fold", o->no_fold,
               "DOT/SVG: draw every node (default: one copy of each repeated block, long runs as one box)");
  add_svg_max_nodes(sub, o->svg_max_nodes, "Refuse to lay out larger pictures as SVG");
  return [o] { return run_dump(*o); };
}

}  // namespace graphscope::cli
