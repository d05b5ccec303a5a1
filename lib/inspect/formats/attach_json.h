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
  std::vector<std::string> not_recorded;  // changes its document does not show, each with why
  // Profiling runs only (AttachIndex::profiling):
  uint64_t launches = 0, replays_analysed = 0;
  bool profiled = false;
  std::string profile_file, trace_file;  // when profiled
  uint64_t fake = 0, blocking = 0;
  double makespan_us = 0, critical_path_us = 0;
  std::string profile_error;  // why it was not profiled ("" while unknown)
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
