// The documents of `--exec` (attaching to an unmodified application), read
// and written on the same structs: "graphscope.attach/1", the index each
// process writes into OUT/pid-PID/index.json (OUT/rank-R/ when a launcher
// gave it a rank) (rewritten after every graph,
// so it is valid whenever the process ends), and "graphscope.attach-run/1",
// OUT/index.json, the run: the command, its exit code and every process's
// index.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace graphscope {

inline constexpr std::string_view kAttachSchema = "graphscope.attach/1";
inline constexpr std::string_view kAttachRunSchema = "graphscope.attach-run/1";

/// A graph a process dumped, and with profiling, what its replays showed.
struct AttachedGraph {
  uint32_t exec_graph_id = 0;
  std::string file;  // graph-ID.json, beside the index
  uint64_t nodes = 0, nodes_with_bodies = 0;
  std::vector<std::string> first_kernels;  // short names of its first three kernels
  // An exec graph changed after instantiation gets one entry per version
  // (the same exec_graph_id; files graph-ID.vN.json from version 2 on).
  uint32_t version = 1;
  std::vector<std::string> updated_by;    // version > 1: the calls that made it
  bool superseded = false;                // a later version replaced this one
  uint64_t unchanged_updates = 0;         // update calls while current that changed nothing recorded
  uint64_t updates_not_recorded = 0;      // update calls after the last version graphscope records
  std::vector<std::string> not_recorded;  // changes its document does not show, each with why
  // Profiling runs only (AttachIndex::profiling):
  uint64_t launches = 0, replays_analysed = 0;
  bool profiled = false;
  std::string profile_file, trace_file;  // when profiled
  uint64_t fake = 0, blocking = 0;
  double makespan_us = 0, critical_path_us = 0;
  std::string profile_error;  // why it was not profiled ("" while unknown)
  // What it cost the process (the run ledger), from the driver calls
  // graphscope saw, in every run; absent when not seen (a graph built with
  // the graph API has no capture; calls made while graphscope rested).
  // Times in seconds are since the process attached; durations are the
  // host's wall time of the calls.
  std::optional<double> created_s;       // its instantiation ended
  std::optional<double> capture_ms;      // its template's stream capture, begin to end
  std::optional<double> instantiate_ms;  // the instantiate call
  uint64_t uploads = 0;                  // cuGraphUpload calls
  double upload_ms = 0;                  // their time, together
  // Device memory the driver allocated on the capturing thread while the
  // capture ran (cuMemAlloc*, cuMemCreate): PyTorch's private pool's new
  // segments, as the driver saw them.
  std::optional<uint64_t> capture_alloc_bytes;
  // The first and last launch counted (AttachIndex::launches_counted).
  std::optional<double> first_launch_s, last_launch_s;
};

/// The GPU work of a process over its run, from activity records (every
/// record under profile --exec; capture --exec --eager: one record per
/// graph replay, CUPTI's graph trace, and one per eager kernel or copy):
/// inside graph replays and outside them (eager), by kernel, and per
/// interval of the run. Made by summarize_work (runs/work.h).
struct AttachWork {
  std::string source;             // "kernel records" or "graph trace"
  double start_s = 0, end_s = 0;  // the first record's start, the last end (since attach)
  double busy_us = 0;             // the union of every record's interval
  double graph_us = 0;            // the union of graph replays' records
  double eager_us = 0;            // busy_us less the time graph replays cover
  uint64_t graph_records = 0, eager_records = 0;
  // The process last made a graph (a stream capture ended, or an instantiation:
  // graphs built with the graph API have no capture).
  std::optional<double> captures_end_s;
  /// Eager records of one kind, name and launch geometry.
  struct Group {
    std::string kind;  // "kernel", "memcpy", "memset"
    std::string name;  // as the records name it (kernels: mangled); copies: "memcpy HtoD" ...
    uint32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
    uint64_t launches = 0;
    uint64_t launches_after_captures = 0;  // that started after captures_end_s
    double gpu_us = 0;                      // their durations, summed
    double first_s = 0, last_s = 0;         // the first start, the last start
  };
  std::vector<Group> eager;  // largest gpu_us first, at most kMaxGroups
  uint64_t other_launches = 0;  // eager records past kMaxGroups groups, together
  double other_us = 0;
  // Eager records whose end CUPTI stamped after the next work on their
  // stream had begun (stream order forbids it; seen on DtoD copies of a
  // compute channel, ending tens of milliseconds late): their launches
  // count, their durations do not. misstamped_us: what they claimed.
  uint64_t misstamped_records = 0;
  double misstamped_us = 0;
  static constexpr size_t kMaxGroups = 2000;
  /// Eager records by where they were launched (a launch site: the thread's
  /// Python stack, NVTX ranges or native function when the launch call
  /// began), when the run read them (--eager and profile --exec, with
  /// origins): sites_read. Records of one place together, the largest
  /// gpu_us first, at most kMaxSites; the rest, and records whose launch no
  /// site was read for, in unsited_*.
  struct SiteFrame {
    std::string file;
    uint64_t line = 0;
    std::string function;
  };
  struct Site {
    std::vector<SiteFrame> python;  // innermost first, outside the framework (at most 3)
    std::string module;             // the innermost module's path, its indices as "*"
    std::vector<std::string> nvtx;  // the ranges open, outermost first
    std::string native;             // the launching native function (no Python)
    uint64_t launches = 0, launches_after_captures = 0;
    double gpu_us = 0;
    std::string top;  // the name of its records' largest kernel or copy by GPU time
  };
  bool sites_read = false;
  std::vector<Site> sites;
  uint64_t unsited_launches = 0;
  double unsited_us = 0;
  static constexpr size_t kMaxSites = 200;
  /// Per exec graph: its replays as the records show them.
  struct GraphTime {
    uint32_t exec_graph_id = 0;
    uint64_t replays = 0;   // distinct launch correlations
    double gpu_us = 0;      // the union of its records' intervals
    double first_s = 0, last_s = 0;  // the first replay's start, the last one's end
  };
  std::vector<GraphTime> graphs;  // by exec graph id
  double bin_s = 1;  // the timeline's interval: 1 s, longer to keep at most kMaxBins
  static constexpr size_t kMaxBins = 3600;
  struct Bin {
    double graph_us = 0, eager_us = 0;  // GPU busy time in the interval, in and outside replays
  };
  std::vector<Bin> timeline;  // from start_s
};

/// A graph instantiated but not dumped, and why.
struct SkippedGraph {
  std::optional<uint32_t> exec_graph_id;
  uint64_t nodes = 0;  // 0 when not walked
  std::string why;
};

struct AttachDevice {
  std::string name;
  std::string compute_capability;  // "9.0"; empty when unknown
  std::optional<int64_t> driver_version, runtime_version;
  std::optional<int64_t> ordinal;  // the CUDA device ordinal the graphs ran on
  std::string pci_bus_id;          // "0000:65:00.0"; empty when unknown
};

/// The rank a launcher gave the process (torchrun, Open MPI, MPICH, Slurm),
/// read from its environment (attach_session.h's attach_rank_from).
struct AttachRank {
  int64_t rank = 0;
  std::optional<int64_t> local_rank, world_size;
  std::string source;  // the variable the rank came from: "RANK", "OMPI_COMM_WORLD_RANK", ...
};

/// An update of an exec graph that the driver refused (cuGraphExecUpdate,
/// a per-node setter): the driver's own result and the nodes it named.
/// Failures alike (exec graph, call, error, result, nodes) are counted in one.
struct UpdateFailure {
  std::optional<uint32_t> exec_graph_id;
  std::string call;    // "cuGraphExecUpdate_v2", "cuGraphExecKernelNodeSetParams_v2", ...
  std::string error;   // the call's CUresult, "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE"
  std::string result;  // cuGraphExecUpdate's: "CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED"; "" for setters
  // The exec graph's node the driver names (errorFromNode; a setter's node):
  // its index in the exec graph's document, and what it is.
  std::optional<uint32_t> from_node;
  std::string from_node_text;
  // The node of the graph offered (errorNode), what it is and its origin.
  std::string node_text;
  uint64_t count = 1;
  double first_s = 0;  // since the process attached
};

/// A replay that reads or writes memory freed since its graph was captured
/// (lib/inspect/model/liveness.h says what is watched).
struct LivenessFinding {
  uint32_t exec_graph_id = 0;
  uint32_t node = 0;  // its index in the exec graph's document
  uint32_t arg = 0;   // kernel argument (from 0); copies: 0 source, 1 destination; memsets 0
  uint32_t offset = 0;  // of the address inside the argument
  uint64_t address = 0;
  std::string source;  // "driver" or "torch" (PyTorch's caching allocator)
  uint64_t block = 0, block_size = 0;  // the allocation (size 0: not known)
  std::string allocated_at, freed_at, reused_at;  // places ("" not known); reused_at: handed out again there
  bool reused = false;
  uint64_t first_replay = 0;  // the exec graph's launch (from 1) that first touched it (0: none after the free)
  uint64_t replays = 0, refused = 0;
  uint64_t addresses = 1;     // the exec graph's watched addresses in that allocation
};

struct AttachLiveness {
  std::string mode;           // "report" or "error"
  uint64_t watched = 0;       // addresses watched over the run
  bool torch = false;         // PyTorch's caching allocator's allocations and frees were seen
  std::vector<LivenessFinding> findings;
  uint64_t dropped = 0;       // findings past the limit
  std::vector<std::string> notes;  // what was not watched, and why
};

/// graphscope.attach/1: one process.
struct AttachIndex {
  int64_t pid = 0;
  std::vector<std::string> command_line;
  bool attached = false;
  std::string let_go;  // why graphscope let go of CUPTI, while it has ("" it has not)
  // Times it let go when idle (--let-go-after), and took CUPTI back when the
  // application began another graph.
  uint64_t let_go_count = 0, taken_back_count = 0;
  // Why it stayed attached when the process went idle, where letting go
  // would have lost graphs or updates ("" it did not decide so).
  std::string stays_attached;
  std::string attach_error;  // why it did not attach ("" it did)
  bool complete = false;     // the process ran its exit handlers
  bool profile = false;      // profiling asked for and started
  std::string profile_error;
  bool profiling = false;    // profiling asked for: graphs carry launch counts (not a key of its own)
  std::optional<AttachRank> rank;  // absent when no launcher set one
  std::optional<AttachDevice> device;
  std::vector<AttachedGraph> graphs;
  std::vector<SkippedGraph> skipped;
  uint64_t dropped_records = 0;
  // Launches of the dumped graphs are counted (AttachedGraph::launches):
  // in every run since the ledger; older indexes count them only when
  // profiling. launches_missed says why some may not be ("" none).
  bool launches_counted = false;
  std::string launches_missed;
  // The device's graph memory (memory alloc nodes) at exit, as the runtime
  // reports it (cudaGraphMemAttrReservedMemHigh, UsedMemHigh).
  std::optional<uint64_t> graph_mem_reserved_high, graph_mem_used_high;
  std::optional<AttachWork> work;  // with activity records only
  // The process attached at this instant of the monotonic clock (seconds):
  // times the Python hook writes (torch_log) are on that clock.
  std::optional<double> attached_monotonic_s;
  // PyTorch's records about its CUDA graphs that the Python hook kept
  // (lib/inject/python-hook): a file beside the index, "" when none.
  std::string torch_log;
  std::vector<UpdateFailure> update_failures;
  std::optional<AttachLiveness> liveness;
  std::vector<std::string> errors;
  // Set by `graphscope --exec` for a process that ended without its exit
  // handlers: documents it queued (journal.txt) that its last index snapshot
  // does not list, each "FILE (written ...)" or "FILE (lost: ...)".
  std::vector<std::string> unindexed;
};

/// graphscope.attach-run/1: the whole run.
struct AttachRun {
  std::vector<std::string> command;
  int64_t exit_code = 0;
  bool profile = false;
  struct Process {
    std::string dir;  // rank-R, rank-R.pid-PID or pid-PID, relative to the run's directory
    AttachIndex index;
  };
  std::vector<Process> processes;  // ranked ones first by rank, then by pid
  // Not in the document: the run directory had no index.json (its launcher
  // did not finish: a hung job killed) and the processes were read from
  // their own indexes (RunDirectory::read_index); what that left unknown.
  bool recovered = false;
  std::vector<std::string> recovery_notes;
};

/// The process index as JSON (ends with a newline).
std::string write_attach_index(const AttachIndex& x);
/// Reads a process index; throws Error(bad_input) "origin (json.path: why)".
AttachIndex read_attach_index(std::string_view text, const std::string& origin);

/// The run index as JSON (ends with a newline).
std::string write_attach_run(const AttachRun& r);
/// Reads a run index; throws Error(bad_input) "origin (json.path: why)".
AttachRun read_attach_run(std::string_view text, const std::string& origin);

}  // namespace graphscope
