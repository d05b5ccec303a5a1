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
#include <functional>
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
  // Across ranks (the row's CollectiveWait pairing: every collective of
  // every paired replay, on the ranks' common clock): how long this rank
  // waited at a collective for the last rank to arrive (median over those
  // collectives), and in how many of them it was that last rank.
  std::optional<double> collective_wait_us;
  uint64_t collectives_timed = 0, arrived_last = 0;
};

/// A collective kernel of a rank's graph. A graph's list is in capture
/// order (node index; a nested body's kernels at the node that holds it).
struct RankCollective {
  uint32_t node = 0;     // root node index (the child graph or conditional node, when nested)
  bool nested = false;   // inside a body of that node
  std::string kernel;    // as recorded (mangled)
  std::string name;      // short: short_kernel_name of the demangled name
  std::string origin;    // one line (origin_view.h's shared_origin): op and module, else the Python frame, ...
};

/// A node of a rank's graph as the ranks report names it.
struct RankNode {
  uint32_t node = 0;
  std::string name;    // short kernel name, or the node type
  std::string origin;  // as RankCollective::origin
};

/// One graph of one rank, in that rank's capture order.
struct RankGraph {
  uint32_t exec_graph_id = 0;
  uint32_t version = 1;
  size_t entry = 0;  // index into its process's index graphs (superseded versions included)
  std::string file;  // relative to the run directory: rank-1/graph-2.json
  size_t nodes = 0, collectives = 0;
  std::vector<RankCollective> collective_kernels;  // in capture order; size() == collectives
  std::optional<RankProfile> profile;
  GraphDocument doc;
};

struct RankProcess {
  int64_t rank = 0, pid = 0;
  size_t process = 0;  // index into the run index's processes
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
  // Where it differs first (when it has the graph and differs): the node
  // of the lowest index that only one side has or that changed, in the
  // graph of the side that has it (the reference's for a change), else the
  // node an edge that differs leads to; `first_side` says which, in diff's
  // terms from this rank's side: "added" (only in this rank), "removed"
  // (only in the reference), "changed", "edge_added", "edge_removed",
  // "edge_retyped".
  std::optional<RankNode> first_node;
  std::string first_side;
  // The first place where this rank's collective kernels, in capture order,
  // part from the reference's (a different kernel, or one side has no more):
  // SPEC's divergence. None when the two lists agree.
  std::optional<size_t> collectives_part_at;
};

/// One collective of a row's graph timed across ranks (profile --exec with
/// traces): the position-th collective kernel of a replay (by start) on
/// every rank, over the replays paired in order. A rank that starts a
/// collective before the last rank does waits in it until that rank
/// arrives: its wait in a replay is the last rank's start minus its own.
struct CollectiveWait {
  size_t position = 0;            // among the graph's collective kernels in a replay, by start
  std::string name;               // short name (from the reference's trace)
  std::optional<uint32_t> node;   // the reference graph's node, when its trace names it
  size_t replays = 0;             // replays paired across ranks
  std::vector<double> wait_us;    // per rank of the row: median over the replays of its wait
  std::vector<double> max_wait_us;  // per rank: the longest wait of a replay
  std::vector<uint64_t> arrived_last;  // per rank: in how many replays it started last
  size_t last = 0;                // the rank (position in the row) that arrived last most often; ties: the lowest
  double skew_us = 0;             // median over replays of the last start minus the first
};

/// One row: a graph of the reference and its partner in every other rank,
/// or a graph only other ranks have (reference graph absent).
struct RankRow {
  std::optional<size_t> reference;  // index into ranks[0].graphs
  std::vector<RankMatch> ranks;     // one per rank, the reference first
  // Per collective, when every rank's graph of the row was profiled with a
  // trace whose replays pair (empty otherwise; waits_note says why when
  // the run was profiled).
  std::vector<CollectiveWait> waits;
  std::string waits_note;
  bool same() const;
};

/// Where the ranks differ first: the first row that differs and its first
/// rank that differs (RankMatch says the node and where the collectives part).
struct RankDivergence {
  size_t row = 0;   // index into RanksResult::rows
  size_t rank = 0;  // position in RanksResult::ranks (and in the row)
};

struct RanksResult {
  std::string run_dir;
  std::vector<RankProcess> ranks;  // by rank; the first is the reference
  std::vector<RankRow> rows;
  std::vector<std::string> notes;  // unranked processes left out, ...
  bool profiled = false;           // some rank's graph carries a profile
  std::optional<RankDivergence> first_difference;  // none when the ranks agree
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
/// NAME tells kernels apart (demangle.h's KernelNamer over the diff's
/// kernels) and is followed by the origin the group's nodes share, when
/// they do: "+1 node 3 vectorized_elementwise_kernel<GeluCUDAKernelImpl(float)>
/// (ranks_app.py:40 in forward)".
std::vector<std::string> rank_diff_lines(const GraphDiff& d);

/// The text report (ranks header, a line per graph with where it differs
/// first, the collective kernels of each rank in capture order, profiles
/// side by side and the waits at each collective).
std::string format_ranks(const RanksResult& r);
/// The verdict the report ends with, without "result: ": "all 2 ranks
/// agree on 1 graph", "1 graph differs (rank 1 against rank 0)"; more than
/// eight ranks as ranges: "(ranks 1-3, 9 (4) against rank 0)".
std::string ranks_result_line(const RanksResult& r);
/// The ranks section of a run's page (render/html_report.h ranks_json):
/// the same analysis and numbers as write_ranks_json, in columns per rank,
/// ranks alike in a row (agreeing, or differing the same way with the same
/// collectives) written once as a kind. page_graph(rank, graph): the page's
/// index of that graph (rank: position in r.ranks).
std::string write_ranks_page_json(const RanksResult& r,
                                  const std::function<int64_t(size_t rank, size_t graph)>& page_graph);
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
