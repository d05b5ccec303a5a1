// The run ledger (graphscope.ledger/1): every graph an `--exec` run dumped,
// per process, with where it was captured, what it cost (capture,
// instantiate and upload times, the memory the driver allocated while
// capturing it, its graph memory), its launches and the GPU time of its
// replays; graphs captured at one place grouped as a family (a serving
// engine's batch buckets) with the members never replayed and what they
// cost, and graphs identical to another (one executable graph would have
// done); the GPU work outside graphs (eager) with its share of the GPU's
// busy time, its largest kernels and copies, a timeline, and the fallbacks:
// a family's kernels run eager after its graphs were captured. Read from a
// recorded run directory alone (its indexes and graph files; no trace);
// what an index does not hold is said, never guessed. No CUDA header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../formats/attach_json.h"

namespace graphscope {

struct Graph;

struct LedgerGraph {
  uint32_t exec_graph_id = 0, version = 1;
  std::string file;  // as the index names it, relative to the process's directory
  uint64_t nodes = 0, kernels = 0;
  uint64_t alloc_bytes = 0;  // bytes its memory alloc nodes allocate (graph memory)
  std::string site;          // where it was captured (capture_site()); "" unknown
  std::optional<uint64_t> launches;      // counted by the run (profile --exec; capture --exec since the ledger)
  std::optional<double> makespan_us;     // median over the replays profiled
  std::optional<size_t> identical_to;    // an earlier graph of the process with the same nodes, edges and launches
  // What it cost, as its index recorded it (absent: not recorded; times in
  // seconds are since the process attached).
  std::optional<double> created_s, capture_ms, instantiate_ms;
  uint64_t uploads = 0;
  double upload_ms = 0;
  std::optional<uint64_t> capture_alloc_bytes;  // allocated by the driver while it was captured (PyTorch's pool)
  std::optional<double> first_launch_s, last_launch_s;  // the index's counts, else the activity records'
  std::optional<uint64_t> replays;                      // as the activity records show them
  // GPU time in its replays: the union of its records (replay_gpu_from
  // "records"), else launches x the median makespan ("launches x median
  // makespan"). An exec graph updated into versions has records of them
  // all under one id: its versions get the estimate only.
  std::optional<double> replay_gpu_us;
  std::string replay_gpu_from;
  std::optional<bool> replayed;  // ever replayed, where launches or records say
};

/// A kernel every member of a family has, and its eager launches after the
/// process's captures ended.
struct LedgerFallbackKernel {
  std::string name;              // as recorded (mangled)
  double per_graph = 0;          // its nodes per member graph, the median over members
  uint64_t eager = 0;            // its eager launches after the captures ended
  uint64_t at_member_geometry = 0;  // of them, at a grid and block some member has for it
  uint64_t at_other_geometry = 0;   // at one no member has (launches without a geometry: neither)
  bool tells_apart = false;      // the members' geometries for it differ: it says which bucket would fit
};

/// The family's code run without its graphs: a fallback. K is the set of
/// kernels (by name) every member has; runs is the median over K of (eager
/// launches of k after the captures ended) / (k's nodes per member, the
/// median over members), rounded. The split by geometry is over the kernels
/// of K whose geometry differs between members (all of K when none does):
/// at_member_geometry and at_other_geometry the same median of the launches
/// at a geometry some member has for k, and at one none has; by_member, per
/// member m, the median of the launches at m's own geometries for k over
/// m's nodes of k (members with at least one run). Absent when runs rounds
/// to 0 (no kernel of K, or fewer than half of them, ran eager after the
/// captures ended: other code launched those) or the index does not say
/// when the captures ended.
struct LedgerFallback {
  uint64_t runs = 0, at_member_geometry = 0, at_other_geometry = 0;
  std::vector<std::pair<size_t, uint64_t>> by_member;  // (graph index, runs), most runs first
  std::vector<LedgerFallbackKernel> kernels;           // K, in name order
  /// Where the run read launch sites: the eager launches that ran the
  /// family's code (a site whose innermost Python frame is a frame of the
  /// members' nodes), by the frame they were called from (the site's first
  /// frame that is none of the nodes'), most launches first.
  struct From {
    std::string call;  // "serving_app.py:120 in serve_eager"; "" when every frame was the family's
    uint64_t launches = 0, launches_after_captures = 0;
    double gpu_us = 0;
  };
  std::vector<From> from;
};

/// A family member against the member captured before it at the same place
/// (diff_graphs' terms: nodes only one side has, matched nodes that launch
/// or copy differently), the changes counted by (field, before, after).
struct LedgerRecapture {
  size_t graph = 0, previous = 0;  // indices into LedgerProcess::graphs
  uint64_t added = 0, removed = 0;  // nodes only the graph has, only the previous one has
  struct Change {
    std::string field, before, after;  // "grid", "32x1x1", "16x1x1"
    uint64_t nodes = 0;
  };
  std::vector<Change> changes;  // most nodes first
  // Kernel arguments: whether both documents record them, and the
  // addresses in them that moved (diff's moved_addresses: not changes).
  bool args_compared = false;
  uint64_t moved_addresses = 0, moved_address_nodes = 0;
};

/// A replay that touched memory freed since its graph's capture (the
/// process index's finding, with its node said).
struct LedgerLivenessFinding {
  LivenessFinding f;
  std::string node;  // "node 3 scale (Block.proj)": its kernel or type, module or Python line
  std::string uses;  // "reads", "writes", "reads or writes"
};
struct LedgerLiveness {
  std::string mode;
  uint64_t watched = 0;
  bool torch = false;
  std::vector<LedgerLivenessFinding> findings;  // replayed after the free
  uint64_t unreplayed = 0;  // findings whose exec graph was not launched after the free (no harm done)
  uint64_t dropped = 0;
  std::vector<std::string> notes;
};

/// An exec graph's version after the first (an update or a per-node setter
/// changed it) against the version before it.
struct LedgerUpdate {
  LedgerRecapture diff;              // graph: this version, previous: the one before (indices into graphs)
  std::vector<std::string> updated_by;  // the calls that made it
  std::vector<std::string> not_recorded;  // changes its document does not show
};

/// Graphs of one process captured at one place.
struct LedgerFamily {
  std::string site;
  std::vector<size_t> graphs;  // indices into LedgerProcess::graphs, in index order
  std::vector<size_t> never_replayed;  // members never replayed (where launches or records say)
  double never_replayed_capture_ms = 0;  // their capture time, where recorded
  uint64_t never_replayed_bytes = 0;     // their graph memory and memory allocated while capturing
  std::vector<size_t> identical;         // members identical to an earlier graph
  std::optional<LedgerFallback> fallback;
  // What tells the buckets apart, as far as the graphs show it (the batch
  // size itself is the program's, not the driver's): a kernel every member
  // has at one launch geometry of its own, a different one in each member;
  // of those, the one with the fewest blocks over the members. bucket_blocks:
  // its blocks (grid x*y*z) in each member, parallel to graphs. "" none.
  std::string bucket_kernel;
  std::vector<uint64_t> bucket_blocks;
  // Where the run recorded its GPU work: that kernel's eager launches after
  // the captures at block counts no member has (sizes no bucket was
  // captured for), as (blocks, launches), most launches first.
  std::vector<std::pair<uint64_t, uint64_t>> uncaptured;
  // Each member after the first against the one before it, in index order
  // (at most kRecaptures; a member whose file is too large is left out).
  static constexpr size_t kRecaptures = 64;
  std::vector<LedgerRecapture> recaptures;
};

/// A graph node, for an eager kernel that a graph also runs.
struct LedgerNodeRef {
  size_t graph = 0;    // index into LedgerProcess::graphs
  uint32_t node = 0;   // its index in the graph
  std::string origin;  // "blocks.0.1 at serving_app.py:40": the node's origin, not the eager launch's
};

/// Eager work of one kind and name (launch geometries together).
struct LedgerEager {
  std::string kind;  // "kernel", "memcpy", "memset"
  std::string name;  // as recorded
  uint64_t launches = 0, launches_after_captures = 0;
  double gpu_us = 0;
  size_t geometries = 0;  // the index's groups merged
  std::optional<LedgerNodeRef> graph_node;  // the first graph node with the same kernel and an origin
};

/// Eager work launched at one place (AttachWork::Site).
struct LedgerSite {
  std::string where;                // the innermost frame: "serving_app.py:40 in forward"; else NVTX or native
  std::vector<std::string> callers;  // the next frames out, innermost first
  std::string module;               // indices as "*"
  std::string nvtx;                 // ranges open, outermost first, " / " between
  uint64_t launches = 0, launches_after_captures = 0;
  double gpu_us = 0;
  std::string top;                     // its largest kernel or copy
  std::optional<size_t> family;        // the family whose code it ran (index into families)
};

/// The GPU work of a process, inside and outside graphs (AttachIndex::work).
struct LedgerWork {
  std::string source;
  double start_s = 0, end_s = 0, busy_us = 0, graph_us = 0, eager_us = 0;
  uint64_t graph_records = 0, eager_records = 0;
  std::optional<double> in_graph_share;  // graph_us / busy_us, when the GPU was busy
  std::optional<double> captures_end_s;
  static constexpr size_t kTop = 20;
  std::vector<LedgerEager> top;  // by GPU time, at most kTop
  uint64_t rest_launches = 0;    // eager launches past the top, and past the index's groups
  double rest_us = 0;
  uint64_t misstamped_records = 0;  // eager records CUPTI stamped to end late: no duration counted
  double misstamped_us = 0;         // what they claimed
  double bin_s = 1;
  std::vector<AttachWork::Bin> timeline;  // from start_s
  // Eager work by where it was launched, where the run read launch sites
  // (--eager, profile --exec): at most kTopSites, by GPU time; the rest, and
  // launches no site was read for, after.
  bool sites_read = false;
  static constexpr size_t kTopSites = 20;
  std::vector<LedgerSite> sites;
  uint64_t sites_rest_launches = 0, unsited_launches = 0;
  double sites_rest_us = 0, unsited_us = 0;
};

/// One of PyTorch's own records about its CUDA graphs (runs/torch_log.h),
/// with what it caused: for a skip, the compiled function's eager runs from
/// then on; for another record, the graph captured next.
struct LedgerTorchRecord {
  double t_s = 0;    // seconds since the process attached
  std::string kind;  // "skip", "rerecord_limit", "sizes", "other"
  std::string level, headline;
  std::string at;    // the user's code it names ("compile_shapes_app.py:40 in bump"); "" none
  std::optional<size_t> next_graph;  // the graph instantiated next (index into graphs); for "sizes" and "other"
  std::string caused;                // said in words
};

/// What torch.compile's cudagraph trees did, by PyTorch's own records and
/// counters, and the family members recorded again after the first.
struct LedgerTorch {
  std::vector<LedgerTorchRecord> records;
  std::vector<std::pair<std::string, uint64_t>> counters;  // torch._dynamo.utils.counters["inductor"] cudagraph_*
  // Graphs of a family made after its first at the same place: recorded
  // again (a new shape, a changed static input). (family index, graph index)
  std::vector<std::pair<size_t, size_t>> rerecorded;
};

struct LedgerProcess {
  std::string dir;  // relative to the run directory
  int64_t pid = 0;
  std::optional<int64_t> rank;
  std::vector<std::string> command;
  bool launches_counted = false;  // the run counted launches (profile --exec; capture --exec since the ledger)
  std::string launches_missed;    // why some may not be counted ("" none)
  std::vector<LedgerGraph> graphs;
  std::vector<LedgerFamily> families;  // of at least two graphs
  // Exec graphs changed after instantiation: each version after the first,
  // in index order (at most kUpdates), and per exec graph the update calls
  // that changed nothing recorded, summed over its versions.
  static constexpr size_t kUpdates = 256;
  std::vector<LedgerUpdate> updates;
  std::vector<std::pair<uint32_t, uint64_t>> unchanged_updates;  // (exec graph id, calls), by id
  std::vector<std::pair<uint32_t, uint64_t>> updates_not_recorded;  // (exec graph id, calls after its last version)
  // Updates the driver refused, the exec graph's node it named said
  // (from_node_text filled from the exec graph's document).
  std::vector<UpdateFailure> update_failures;
  std::optional<LedgerLiveness> liveness;  // where the run checked it
  // Totals over its graphs of what their entries recorded (absent: none did).
  std::optional<double> capture_ms, instantiate_ms;
  uint64_t uploads = 0;
  double upload_ms = 0;
  std::optional<uint64_t> capture_alloc_bytes;
  uint64_t alloc_bytes = 0;  // of their memory alloc nodes
  std::optional<uint64_t> graph_mem_reserved_high, graph_mem_used_high;
  std::optional<LedgerWork> work;
  std::optional<LedgerTorch> torch;  // where the Python hook kept PyTorch's records (torch_log)
  std::vector<std::string> not_recorded;  // what its index does not hold, each with where it comes from
};

struct Ledger {
  std::string run_dir;
  std::vector<std::string> command;
  bool profile = false;
  std::vector<LedgerProcess> processes;
};

/// Where a graph was captured: of the Python frames all its nodes share
/// (outermost ones; generated code such as TorchInductor's left out), the
/// innermost, as "file.py:85 in capture_bucket"; else the NVTX ranges all
/// share; else the native function all share; "" when nodes share none.
std::string capture_site(const Graph& g);

/// The ledger of RUN_DIR (the --out-dir of capture --exec or profile
/// --exec). Throws Error(bad_input) as the run directory's reader does.
Ledger make_ledger(const std::string& run_dir);

/// The ledger as text (ledger_text.cc), and as graphscope.ledger/1 JSON
/// (ends with a newline).
std::string format_ledger(const Ledger& l);
std::string write_ledger_json(const Ledger& l);
/// The few lines `capture --exec` and `profile --exec` print at the end:
/// per process its graphs, launches, capture and instantiate time and
/// in-graph share, the buckets never replayed and the fallbacks.
std::string format_ledger_summary(const Ledger& l);

}  // namespace graphscope
