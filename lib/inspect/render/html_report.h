// `graphscope report`: one self-contained HTML file (inline script, styles
// and SVG; nothing fetched) that shows a graph's folded picture with its
// profile: pan, zoom and search, node details, the makespan account as one
// bar, fake dependencies and worst delays as tables, one replay's timeline
// by lane; two graphs side by side with their diff; every graph of an
// `--exec` run with an index, under the run's ledger.
//
// The page is data plus a fixed program: the C++ side writes one JSON object
// (columns per node, strings interned, so a 100k-node graph stays a few
// megabytes) into a <script type="application/json"> element, and
// report.js/report.css (lib/inspect/render/report/, embedded at build time) draw
// everything from it.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "../formats/attach_json.h"
#include "../analysis/diff.h"
#include "dot_writer.h"
#include "../model/graph.h"
#include "../analysis/join.h"
#include "../analysis/profile.h"
#include "../model/trace.h"

namespace graphscope {

/// One graph of the report, and its profile when there is one.
struct ReportGraph {
  std::string label;  // how the page names it: "forward", "pid 787 graph 2"
  const GraphDocument* doc = nullptr;
  // A profile: all three, from the same join.
  const ProfileReport* profile = nullptr;
  const Trace* trace = nullptr;
  const TraceJoin* join = nullptr;
  // The root graph's folding (fold.h), when the command found it already
  // for another output; else the page finds it, once.
  const Folding* folding = nullptr;
  std::string profile_note;  // why there is no profile, when one was expected
  int process = -1;          // index into the run's processes (--exec)
};

struct HtmlReportInput {
  std::string title;                 // the page's title
  std::vector<std::string> sources;  // what it was made from (file names, the command)
  std::vector<ReportGraph> graphs;
  // Two graphs compared: graphs[0] is A, graphs[1] is B.
  const GraphDiff* diff = nullptr;
  std::string diff_text;  // the diff's text report
  // An --exec output directory: the run, and the graphs' processes.
  const AttachRun* run = nullptr;
  // A run's graphs repeat (every rank of a job captures the same one):
  // with share_identical, a graph without a profile that the page would
  // show exactly as an earlier one (the same ids, nodes, names, origins,
  // edges and picture) is written as a reference to it (same_as) with its
  // own label, process and profile note, not as another copy.
  bool share_identical = false;
  // A multi-rank run: graphscope ranks' analysis as lib/inspect/runs writes
  // it for the page (runs/ranks.h, write_ranks_page_json); empty: none.
  std::string ranks_json;
  // An --exec run's ledger (runs/ledger.h), drawn first on the page: the
  // graphscope.ledger/1 document as write_ledger_json writes it (empty:
  // none, and ledger_note says why), and the names its kernels are shown
  // by (recorded name, shown name: the script cannot demangle).
  std::string ledger_json;
  std::string ledger_note;
  std::vector<std::pair<std::string, std::string>> ledger_names;
  std::vector<std::string> notes;  // what the page should say it left out
  size_t svg_max_nodes = kDefaultSvgMaxNodes;
  bool fold = true;
};

/// The whole HTML file.
std::string write_html_report(const HtmlReportInput& in);

}  // namespace graphscope
