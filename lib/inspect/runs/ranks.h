// `graphscope ranks RUN_DIR`: the graphs of a multi-rank job (one process
// per GPU, each run by a launcher that gave it a rank: torchrun, mpirun,
// srun), recorded by `capture --exec` or `profile --exec`, compared across
// ranks. A rank whose graph differs (an extra collective, another branch
// taken at capture) hangs or slows the whole job; this says which rank, which
// graph and which nodes, in `diff`'s terms. Each rank's graphs are paired
// with the lowest rank's by capture order, and where the orders differ by
// structure (diff.h's match finds no difference). Compute here, render in
// ranks_report.cc; no CUDA header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../formats/attach_json.h"
#include "../analysis/diff.h"
#include "run_dir.h"
#include "../model/trace.h"

namespace graphscope {

/// What the profile of one rank's graph says (profile --exec runs only).
struct RankProfile {
  uint64_t launches = 0;
  double makespan_us = 0, critical_path_us = 0;
  uint64_t fake = 0, blocking = 0;
  double collective_us = 0;  // sum of the median durations of its collective kernels
  std::string trace_file;    // relative to the run directory
  // The trace, read and parsed once however many graphs name it (shared
  // with them); null when it could not be read or parsed (trace_error says
  // why): then there are no waits.
  std::shared_ptr<const Trace> trace;
  std::string trace_error;
  // Across ranks (every rank's trace of the graph with as many collective
  // kernels, paired by start order on the ranks' common clock): how long
  // this rank waited at a collective for the last rank to arrive (median
  // over collectives), and how often it was that last rank.
  std::optional<double> collective_wait_us;
  uint64_t collectives_timed = 0, arrived_last = 0;
};

/// One graph of one rank, in that rank's capture order.
struct RankGraph {
  uint32_t exec_graph_id = 0;
  uint32_t version = 1;
  std::string file;  // relative to the run directory: rank-1/graph-2.json
  size_t nodes = 0, collectives = 0;
  std::optional<RankProfile> profile;
  GraphDocument doc;
};

struct RankProcess {
  int64_t rank = 0, pid = 0;
  std::optional<int64_t> local_rank, world_size;
  std::string source;  // the variable the rank came from
  std::string dir;
  std::optional<int64_t> device;  // CUDA ordinal
  std::string device_name, pci_bus_id;
  std::vector<RankGraph> graphs;
};

/// How one rank's graph compares with the reference's (the lowest rank).
struct RankMatch {
  size_t rank = 0;               // position in RanksResult::ranks
  std::optional<size_t> graph;   // index into that rank's graphs; none: the rank lacks it
  std::string paired_by;         // "order", "structure"; empty for the reference or when missing
  bool same = true;              // the graph agrees with the reference's
  std::vector<std::string> lines;  // the differences in diff's terms ("+1 node 17 ncclDevKernel_...")
  std::optional<GraphDiff> diff;   // when it differs
};

/// One row: a graph of the reference and its partner in every other rank,
/// or a graph only other ranks have (reference graph absent).
struct RankRow {
  std::optional<size_t> reference;  // index into ranks[0].graphs
  std::vector<RankMatch> ranks;     // one per rank, the reference first
  bool same() const;
};

struct RanksResult {
  std::string run_dir;
  std::vector<RankProcess> ranks;  // by rank; the first is the reference
  std::vector<RankRow> rows;
  std::vector<std::string> notes;  // unranked processes left out, ...
  bool profiled = false;           // some rank's graph carries a profile
  bool same() const;
};

/// Compares the ranks of a run index (the processes that carry a rank).
/// Every file the index names is read through dir's resolver (run_dir.h),
/// each trace once through traces. Throws Error(bad_input) with fewer than
/// two ranked processes, or when a graph, profile or trace name of a ranked
/// process is refused by the resolver (outside the run directory, not a
/// regular file, missing), or a graph or profile file is unreadable or
/// malformed (a trace that cannot be read or parsed only leaves the waits
/// out).
RanksResult compare_ranks(const AttachRun& run, const RunDirectory& dir, RunTraces& traces);
/// The same, with a resolver and trace cache of its own for run_dir.
RanksResult compare_ranks(const AttachRun& run, const std::string& run_dir);
/// Reads RUN_DIR/index.json (RunDirectory::read_index), then compare_ranks.
RanksResult compare_ranks(const std::string& run_dir);

/// The differences of b against a in diff's terms, one line per group:
/// "+1 node 17 NAME", "-2 nodes 3, 4 NAME", "~1 node 5 NAME: grid 1x1x1 -> 2x1x1",
/// "+3 edges between matched nodes", ... (the report adds the collective counts).
std::vector<std::string> rank_diff_lines(const GraphDiff& d);

/// The text report (ranks header, a line per graph, profiles side by side).
std::string format_ranks(const RanksResult& r);
/// graphscope.ranks/1 JSON.
std::string write_ranks_json(const RanksResult& r);
/// One Chrome trace of every rank's profiled replays: a process per rank,
/// times on the ranks' common clock, collective kernels marked
/// (args "collective": library). Throws Error(bad_input) when no rank has a trace.
std::string merge_rank_traces(const RanksResult& r);

/// The one line `capture --exec` and `profile --exec` end with when their
/// run had two or more ranked processes (empty otherwise); never throws.
std::string ranks_summary_line(const AttachRun& run, const std::string& run_dir);

}  // namespace graphscope
