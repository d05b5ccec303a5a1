// PyTorch's own records about its CUDA graphs in an `--exec` run, as the
// Python hook (lib/inject/python-hook/sitecustomize.py) kept them: the log
// records PyTorch emits anyway that name cudagraphs (torch.compile's
// cudagraph trees: "skipping cudagraphs due to mutated inputs", re-recording
// limits, distinct sizes), one JSON object a line, and PyTorch's cudagraph
// counters at exit. Read here into typed events, each tied to what it
// caused: the graph captured next at the place it names, or the eager
// stretch that followed (no graph). No CUDA header.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace graphscope {

struct TorchLogRecord {
  double t_s = 0;  // seconds since the process attached
  std::string level, logger, message;
  std::string file;  // where PyTorch logged it (its own source)
  uint64_t line = 0;
  // The user's code the record names ("Found from: File ..., line N, in F",
  // the first such frame): "" when it names none.
  std::string user_file, user_function;
  uint64_t user_line = 0;
  enum class Kind : uint8_t { skip, rerecord_limit, sizes, other };
  Kind kind = Kind::other;
};

struct TorchLog {
  std::vector<TorchLogRecord> records;           // in time order
  std::map<std::string, uint64_t> counters;      // torch._dynamo.utils.counters["inductor"] cudagraph_*
};

/// Reads the hook's file (text), its times made relative to attached_s (the
/// process's attach instant on the monotonic clock). Throws Error(bad_input)
/// "origin (line N: why)" on a malformed line; at most 100,000 records.
TorchLog read_torch_log(std::string_view text, const std::string& origin, double attached_s);

/// The record's kind by its message.
TorchLogRecord::Kind torch_log_kind(std::string_view message);

/// The message's first line, shortened to `max` bytes.
std::string torch_log_headline(const TorchLogRecord& r, size_t max = 160);

}  // namespace graphscope
