// What the injection library (lib/inject) decides and records while it is
// attached to an application, apart from CUPTI: the options it was given
// (through the environment), which instantiated graphs to dump and which to
// skip and why, how graph files are named, which launches of a graph are
// the replays to analyse, which trace records are those replays', and the
// process index (attach_json.h). lib/inject is the thin CUPTI adapter that
// calls this; unit tests drive it with hand-built calls and records.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "../formats/attach_json.h"
#include "../model/graph.h"
#include "../analysis/profile.h"
#include "../model/trace.h"

namespace graphscope {

/// The options of an attached run, as `graphscope --exec` passes them to
/// each process of the application in GRAPHSCOPE_* variables.
struct AttachConfig {
  std::string out = "graphscope-out";  // GRAPHSCOPE_OUT: each process writes OUT/pid-PID (or rank-R)
  uint64_t min_nodes = 0;              // GRAPHSCOPE_MIN_NODES: skip smaller graphs (root nodes)
  std::vector<uint32_t> exec_ids;      // GRAPHSCOPE_EXEC_IDS (comma-separated): only these; empty: all
  uint64_t max_graphs = 0;             // GRAPHSCOPE_MAX_GRAPHS: dump at most this many; 0: no limit
  double let_go_after_s = 0;           // GRAPHSCOPE_LET_GO_AFTER: idle seconds, then let go; 0: never
  // GRAPHSCOPE_REST_AFTER: idle seconds, then let go where nothing would be
  // lost (every graph and update so far through the preload library's
  // calls, which take CUPTI back); 0: never (capture --exec --stay-attached).
  double rest_after_s = 2;
  bool profile = false;                // GRAPHSCOPE_PROFILE=1: trace and analyse replays
  uint32_t skip_replays = 1;           // GRAPHSCOPE_SKIP_REPLAYS: launches left out first
  uint32_t replays = 20;               // GRAPHSCOPE_REPLAYS: launches analysed
  double threshold_us = 5, tolerance_us = 2;  // GRAPHSCOPE_THRESHOLD_US, GRAPHSCOPE_TOLERANCE_US
  bool quiet = false;                  // GRAPHSCOPE_QUIET=1: no line per graph on stderr
  bool origins = true;                 // GRAPHSCOPE_ORIGINS=0: record no node origins
  // GRAPHSCOPE_WALK_AT_DESTROY=0: walk each graph inside its instantiation,
  // on the application's thread, even where it could wait for the graph's
  // destruction and be walked off that thread.
  bool walk_at_destroy = true;
  // GRAPHSCOPE_EAGER=1 (capture --exec --eager): record the GPU work of the
  // whole run, in graphs and outside them (activity records: one per graph
  // replay and one per eager kernel or copy), for the ledger. graphscope
  // then stays attached. profile --exec records every record anyway.
  bool eager = false;
  // GRAPHSCOPE_LIVENESS (--liveness): whether each replay's inputs are
  // checked for memory freed since the graph's capture: "off", "report"
  // (the findings in the index, the ledger) or "error" (as report, and
  // such a replay's launch fails with cudaErrorIllegalState, where it goes
  // through graphscope's preload library).
  std::string liveness = "report";
};

/// The variables that carry config (numbers exactly: doubles as %.17g).
std::vector<std::pair<std::string, std::string>> attach_environment(const AttachConfig& config);

/// The config from the variables that getenv returns (null: unset). A
/// malformed variable is said in errors and its default kept: the
/// application must run regardless.
AttachConfig attach_config_from(const std::function<const char*(const char*)>& getenv,
                                std::vector<std::string>& errors);

/// The rank a launcher gave this process, from the first family of
/// variables whose rank is set: torchrun's RANK (LOCAL_RANK, WORLD_SIZE),
/// Open MPI's OMPI_COMM_WORLD_RANK (_LOCAL_RANK, _SIZE), MPICH's PMI_RANK
/// (PMI_SIZE), Slurm's SLURM_PROCID (SLURM_LOCALID, SLURM_NTASKS). Values
/// are read strictly (decimal digits only, below 2^31): a malformed one is
/// said in errors and ignored (a malformed rank: the next family is tried).
std::optional<AttachRank> attach_rank_from(const std::function<const char*(const char*)>& getenv,
                                           std::vector<std::string>& errors);

/// The directory names a process may take under OUT, in the order to try
/// them: "rank-R" then "rank-R.pid-PID" (rank-R taken already, e.g. by the
/// parent of a forked worker that inherited RANK), or "pid-PID" alone.
std::vector<std::string> attach_dir_names(const std::optional<AttachRank>& rank, int64_t pid);

class AttachSession {
 public:
  AttachSession(AttachConfig config, int64_t pid, std::vector<std::string> command_line);

  const AttachConfig& config() const { return config_; }
  /// The process index as it stands (graphs, skips, errors, state).
  AttachIndex& index() { return index_; }
  const AttachIndex& index() const { return index_; }
  /// OUT/NAME: NAME is pid-PID until use_dir() says otherwise.
  std::string dir() const;
  /// The process's directory is OUT/name (one of attach_dir_names()).
  void use_dir(std::string name) { dir_name_ = std::move(name); }

  /// A graph was instantiated (before walking it): the reason to skip it
  /// (recorded in the index), or nullopt to walk it. Checks the graph limit,
  /// that it has an exec id, and the exec id filter.
  std::optional<std::string> skip_before_walk(std::optional<uint32_t> exec_id);
  /// The walk gave `root_nodes` nodes: true (and recorded) when it is under
  /// the node minimum.
  bool skip_after_walk(uint32_t exec_id, size_t root_nodes);
  /// What an index entry says of a graph's document: its node counts and
  /// first kernels (mangled names, as the document has them).
  struct Summary {
    size_t nodes = 0, nodes_with_bodies = 0;
    std::vector<std::string> first_kernels;
  };
  static Summary summary_of(const GraphDocument& doc);
  /// The graph is dumped: its index entry (file name, node counts, first
  /// kernels), from a summary of its document (which an attached graphscope
  /// makes later, off the application's thread). Returns its number, for
  /// launched() and the profile calls.
  size_t dumped(uint32_t exec_id, const Summary& summary);
  /// Dumped graph g's exec graph was changed after instantiation and doc is
  /// its next version (doc.exec_version says which and by what): a new
  /// entry, launches from now on count there, g is superseded. Nullopt
  /// (said in g's not_recorded) past kMaxExecVersions versions.
  std::optional<size_t> updated(size_t g, const GraphDocument& doc);
  /// An update call on g's exec graph changed nothing a document records.
  void unchanged_update(size_t g);
  /// An update call of g's exec graph after its last recorded version.
  void update_not_recorded(size_t g);
  static constexpr uint32_t kMaxExecVersions = 32;

  /// A launch of dumped graph g with this correlation id, when_s seconds
  /// after the process attached: counted; true when it is one of the
  /// replays to analyse (after skip_replays, at most replays of them).
  bool launched(size_t g, uint32_t correlation, double when_s = 0);
  /// A launch of dumped graph g counted, not profiled (capture --exec).
  void counted(size_t g, double when_s);
  /// The records of graph g's analysed replays out of the whole trace, and
  /// every other record that ran while they did (it may have blocked them).
  /// Empty with *why set when there is nothing to analyse.
  Trace replays_of(size_t g, const Trace& all, uint64_t dropped_records, std::string* why) const;
  /// Graph g was analysed; its report and files are in the index.
  void profiled(size_t g, const ProfileReport& r);
  /// Graph g could not be analysed, and why.
  void not_profiled(size_t g, std::string why);
  /// The text report of every graph (report.txt), given each one's report
  /// (null when not profiled).
  std::string report_text(const std::function<std::string(size_t g)>& report_of) const;

  /// An error to keep in the index (at most 100); true for the first one
  /// (to be said on stderr once).
  bool error(std::string e);

 private:
  AttachConfig config_;
  AttachIndex index_;
  std::string dir_name_;
  std::vector<std::unordered_set<uint32_t>> windows_;  // per dumped graph: correlation ids analysed
};

}  // namespace graphscope
