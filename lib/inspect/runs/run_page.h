// `graphscope report RUN_DIR`: the page of an `--exec` run. First the run's
// ledger (ledger.h: the document of `graphscope ledger --json`; where it
// cannot be made, one line why), then every graph of every process, read
// through the run directory's resolver (run_dir.h); with two or more
// ranks, graphscope ranks' analysis above the graphs (whether the
// ranks agree, where they differ first, each rank's collectives, the waits
// at each collective). What repeats is written once: a graph the page would
// show exactly as an earlier one names it (thousands of ranks of one job
// capture the same graph), and of a large profiled run the page keeps the
// profiles that tell something (the reference rank's, the ranks that
// arrived last, waited or took longest), the ranks section the figures of
// every rank. Rendering is render/html_report.cc's; no CUDA header.
#pragma once

#include <cstddef>
#include <string>

#include "../analysis/profile.h"
#include "../render/dot_writer.h"

namespace graphscope {

struct RunPageOptions {
  ProfileOptions profile;  // threshold and tolerance; each graph's exec graph id is its own
  bool fold = true;
  size_t svg_max_nodes = kDefaultSvgMaxNodes;
  // Profiled graphs of a run with more are not all on the page: it keeps
  // the telling ones (above) and fills up to this many in index order.
  size_t max_profiles = 32;
  // The ledger of a run with more processes is on the page for this many:
  // those with a fallback or a bucket never replayed first, then the first
  // in index order (`graphscope ledger RUN_DIR` has every one).
  size_t max_ledger_processes = 64;
};

/// The whole HTML page of the run directory dir. Throws Error(bad_input)
/// as RunDirectory and the readers do (a name that leaves the run
/// directory, a missing or malformed file).
std::string write_run_page(const std::string& dir, const RunPageOptions& options);

}  // namespace graphscope
