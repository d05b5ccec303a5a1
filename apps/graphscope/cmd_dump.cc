// graphscope dump FILE [--json|--dot|--svg] [--dot FILE] [--svg FILE] [-o OUT]
#include <memory>
#include <optional>
#include <vector>

#include "commands.h"
#include "inspect/analysis/fold.h"
#include "inspect/analysis/summary.h"
#include "inspect/core/error.h"
#include "inspect/core/io.h"
#include "inspect/core/json_writer.h"
#include "inspect/formats/graph_json.h"
#include "inspect/formats/load.h"
#include "inspect/render/dot_writer.h"

namespace graphscope::cli {
namespace {

// --dot and --svg mean what they mean in capture and profile: write that
// picture to FILE. Given without FILE, dump writes the picture instead of
// the summary, to -o or standard output.
struct PictureOption {
  CLI::Option* option = nullptr;
  std::vector<std::string> files;  // the FILE given, if any
  bool given() const { return option && option->count() > 0; }
  bool to_file() const { return given() && !files.empty() && !files.back().empty(); }
  bool to_output() const { return given() && !to_file(); }
};

struct DumpOptions {
  std::string input;
  std::string output = "-";
  bool json = false;
  PictureOption dot, svg;
  size_t svg_max_nodes = kDefaultSvgMaxNodes;
  bool no_fold = false;
};

int run_dump(const DumpOptions& o) {
  if (int(o.json) + int(o.dot.to_output()) + int(o.svg.to_output()) > 1)
    throw Error(ExitCode::usage, "--json, --dot and --svg without a FILE each choose what -o gets: give one",
                "name a file for the others: --dot FILE, --svg FILE");
  GraphDocument doc = load_graph(o.input);
  // What repeats, found once for every output.
  std::optional<Folding> folding;
  auto fold = [&]() -> const Folding* {
    if (!folding) folding = find_repeats(doc.root);
    return &*folding;
  };
  auto drawn = [&]() -> const Folding* { return o.no_fold ? nullptr : fold(); };
  // Everything made first, then published together.
  OutputSet outputs;
  if (o.dot.to_file()) outputs.add(o.dot.files.back(), write_dot(doc, nullptr, drawn()));
  if (o.svg.to_file()) outputs.add(o.svg.files.back(), render_svg(doc, o.svg_max_nodes, nullptr, drawn()));
  if (o.json && outputs.empty()) {
    write_graph_json_file(o.output, doc, fold());  // a large graph's first nodes written while the rest are formatted
    return 0;
  }
  if (o.json) outputs.add(o.output, write_graph_json(doc, fold()));
  else if (o.dot.to_output()) outputs.add(o.output, write_dot(doc, nullptr, drawn()));
  else if (o.svg.to_output()) outputs.add(o.output, render_svg(doc, o.svg_max_nodes, nullptr, drawn()));
  else outputs.add(o.output, format_summary(doc, summarize(doc), o.input == "-" ? "standard input" : o.input, fold()));
  outputs.commit();
  return 0;
}

}  // namespace

Handler declare_dump(CLI::App& sub) {
  auto o = std::make_shared<DumpOptions>();
  sub.add_option("FILE", o->input, "Graph document: .json (graphscope or PyTorch) or .dot; - reads stdin")
      ->required();
  sub.add_flag("--json", o->json, "Write graphscope.graph/1 JSON instead of the summary");
  o->dot.option = sub.add_option("--dot", o->dot.files,
                                 "Also write graphscope's DOT picture to FILE; without FILE, instead of the summary")
                      ->expected(0, 1)
                      ->type_name("[FILE]");
  o->svg.option = sub.add_option("--svg", o->svg.files,
                                 "Also write the picture laid out as SVG to FILE; without FILE, instead of the summary")
                      ->expected(0, 1)
                      ->type_name("[FILE]");
  sub.add_option("-o,--output", o->output, "Output file, written atomically (default: standard output)");
  sub.add_flag("--no-fold", o->no_fold,
               "DOT/SVG: draw every node (default: one copy of each repeated block, long runs as one box)");
  add_svg_max_nodes(sub, o->svg_max_nodes, "Refuse to lay out larger pictures as SVG");
  return [o] { return run_dump(*o); };
}

}  // namespace graphscope::cli
