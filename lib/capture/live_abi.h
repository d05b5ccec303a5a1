// The seam between graphscope's CUDA-free programs (the CLI, the C API) and
// the CUDA parts they need only for live work. lib/capture is built into a
// module, libgraphscope_live.so, that links CUDA's runtime and CUPTI; the
// programs load it with dlopen when a live command runs (live_loader.cc), so
// dump, diff, check, report and offline profile start on a machine without
// CUDA's libraries. Free of CUDA headers.
//
// The table passes lib/inspect's C++ types: the module and the loader must
// come from the same build, which the loader checks (abi and version) before
// it calls anything. Errors cross as data, never as exceptions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "capture.h"
#include "replay.h"

namespace graphscope::capture {

inline constexpr uint32_t kLiveAbi = 1;
/// The one symbol the module exports: extern "C" const LiveTable* <name>().
inline constexpr const char* kLiveEntry = "graphscope_live_table";
inline constexpr const char* kLiveModule = "libgraphscope_live.so";

struct LiveError {
  int code = 0;  // an ExitCode
  std::string subject, reason;
};

struct LiveTable {
  uint32_t abi;
  const char* version;  // GRAPHSCOPE_VERSION of the module
  // Each returns false and fills the error instead of throwing.
  bool (*capture)(const CaptureOptions& options, std::vector<CapturedGraph>& out, LiveError& error);
  bool (*profile)(const ProfileRunOptions& options, std::vector<ProfiledGraph>& out, LiveError& error);
  bool (*walk)(uintptr_t graph, uintptr_t exec, const WalkOptions& options, GraphDocument& out, LiveError& error);
};

}  // namespace graphscope::capture
