// The run ledger (graphscope.ledger/1): every graph an `--exec` run dumped,
// per process, with where it was captured, what it holds and, where the run
// counted them (profile --exec), its launches; graphs captured at one place
// grouped as a family (a serving engine's batch buckets), the ones never
// replayed, and graphs identical to another (one executable graph would
// have done). Read from a recorded run directory alone (its indexes and
// graph files; no trace). No CUDA header.
//
// Not in it yet (issue 45): capture, instantiate and upload times, the
// memory of PyTorch's private pools, first and last replay times, GPU work
// outside graphs, torch.compile's reasons; launches under capture --exec.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace graphscope {

struct Graph;

struct LedgerGraph {
  uint32_t exec_graph_id = 0, version = 1;
  std::string file;  // as the index names it, relative to the process's directory
  uint64_t nodes = 0, kernels = 0;
  uint64_t alloc_bytes = 0;  // bytes its memory alloc nodes allocate (graph memory)
  std::string site;          // where it was captured (capture_site()); "" unknown
  std::optional<uint64_t> launches;      // counted by the run (profile --exec)
  std::optional<double> makespan_us;     // median over the replays profiled
  std::optional<size_t> identical_to;    // an earlier graph of the process with the same nodes, edges and launches
};

/// Graphs of one process captured at one place.
struct LedgerFamily {
  std::string site;
  std::vector<size_t> graphs;  // indices into LedgerProcess::graphs, in index order
};

struct LedgerProcess {
  std::string dir;  // relative to the run directory
  int64_t pid = 0;
  std::optional<int64_t> rank;
  std::vector<std::string> command;
  bool launches_counted = false;  // the run counted launches (profile --exec)
  std::vector<LedgerGraph> graphs;
  std::vector<LedgerFamily> families;  // of at least two graphs
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

/// The ledger as text, and as graphscope.ledger/1 JSON (ends with a newline).
std::string format_ledger(const Ledger& l);
std::string write_ledger_json(const Ledger& l);

}  // namespace graphscope
